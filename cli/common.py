"""What every `virtflow` command shares: its consoles, exit codes, settings and one way to
turn the domain's errors into one readable line and an exit code.

Exit codes: 0 ok, 1 a failed spare or a runtime error (Temporal down, worker died), 2 bad
input (invalid request, unknown spare, bad settings).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import httpx
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from temporalio.client import Client

from api.errors import (
    InvalidInput,
    InventoryUnavailable,
    SpareConflict,
    SpareNotFound,
    TemporalUnavailable,
)
from api.temporal_client import ClientProvider
from placement.errors import field_path
from runtime.settings import Settings, get_settings
from runtime.temporal_profile import TemporalProfileError
from virtflow_client import AuthenticatedClient

from .spare_api import ApiProblem, api_client

console = Console()
err_console = Console(stderr=True)
T = TypeVar("T")

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def fail(message: str, code: int) -> NoReturn:
    # The message may hold any text (a key, a name): printed as it is, never read as markup.
    err_console.print(f"[red]error:[/] {escape(message)}", highlight=False)
    raise typer.Exit(code)


def one_line(err: ValidationError) -> str:
    first = err.errors(include_url=False)[0]
    where = field_path(first["loc"]) or "input"
    more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


def settings() -> Settings:
    try:
        return get_settings()
    except ValidationError as err:
        fail(f"bad settings: {one_line(err)}", EXIT_BAD_INPUT)
    except (FileNotFoundError, TemporalProfileError) as err:
        fail(str(err), EXIT_BAD_INPUT)


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine, mapping the domain's errors to one line and an exit code."""
    try:
        return asyncio.run(coro)
    except TemporalUnavailable as err:
        fail(f"Temporal unavailable: {err}", EXIT_FAILED)
    except InventoryUnavailable as err:
        fail(str(err), EXIT_FAILED)
    except SpareNotFound as err:
        fail(f"no spare '{err}'", EXIT_BAD_INPUT)
    except (SpareConflict, InvalidInput) as err:
        fail(str(err), EXIT_BAD_INPUT)
    except ApiProblem as err:
        # The API's own words and code; its 5xx are outages (exit 1), 4xx the caller's (2).
        fail(f"{err} ({err.code})", EXIT_FAILED if err.status >= 500 else EXIT_BAD_INPUT)
    except httpx.TransportError as err:
        fail(f"the API did not answer ({type(err).__name__}): is `virtflow api` running?", 1)
    except ValidationError as err:
        fail(one_line(err), EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        # Only this command stops: a spare lives in Temporal, not in this process.
        fail("interrupted (the spare, if started, carries on)", EXIT_FAILED)


def call_api(action: Callable[[AuthenticatedClient], Coroutine[Any, Any, T]]) -> T:
    """Run a command's calls of the HTTP API: the settings read first (bad ones exit 2), then
    `action` with a client that carries the API token, its errors as one line (`run`)."""
    config = settings()

    async def with_client() -> T:
        return await action(api_client(config))

    return run(with_client())


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        fail(f"{path}: {err}", EXIT_BAD_INPUT)
    if not isinstance(data, dict):
        fail(f"{path}: expected a JSON object", EXIT_BAD_INPUT)
    return data


def command_connection(config: Settings) -> ClientProvider:
    """The connection of an operator command: the worker's settings, none of its servers (the
    process runtime's Prometheus endpoint would bind the `metrics_port` a worker in the same
    Pod already holds)."""
    from runtime.connect import connect
    from runtime.telemetry import command_runtime

    async def factory() -> Client:
        return await connect(config, command_runtime())

    return ClientProvider(factory)


async def command_client(config: Settings) -> Client:
    return await command_connection(config).get()
