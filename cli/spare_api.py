"""The spare commands' way in: the HTTP API through the generated client, with a token.

The command line holds no Temporal credentials and gets no more rights than its token's role:
what the API refuses, it refuses with the same problem `code` and `detail`.
"""

from __future__ import annotations

from typing import Any, TypeVar

import httpx

from runtime.settings import Settings
from virtflow_client import AuthenticatedClient
from virtflow_client.models.problem import Problem
from virtflow_client.types import Response

T = TypeVar("T")


class ApiProblem(Exception):
    """The API answered with a problem (4xx: the caller's; 5xx: somebody else's outage)."""

    def __init__(self, status: int, code: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code


class ApiUnreachable(Exception):
    """No answer from the API at all."""


def api_client(config: Settings) -> AuthenticatedClient:
    token = config.api_token.get_secret_value() if config.api_token else ""
    # Without a token (a lab API with authentication off) no credentials are sent at all.
    return AuthenticatedClient(
        base_url=config.api_base_url,
        token=token,
        prefix="Bearer" if token else "",
        timeout=httpx.Timeout(30),
    )


def answer(response: Response[Any], expected: type[T]) -> T:
    """The parsed answer, or ApiProblem with the API's own code and words."""
    parsed = response.parsed
    if isinstance(parsed, expected):
        return parsed
    if isinstance(parsed, Problem):
        raise ApiProblem(parsed.status, str(parsed.code), parsed.detail)
    text = response.content.decode("utf-8", errors="replace")[:300]
    raise ApiProblem(
        int(response.status_code), "unexpected", f"HTTP {response.status_code}: {text}"
    )
