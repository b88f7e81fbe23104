"""Bearer-token roles and cluster scopes for the HTTP API.

Tokens come from settings (`api_tokens`: token -> role, or role and clusters). With none
configured, as in the lab, every caller is an operator of every cluster; `create_app` logs
that authentication is off. A caller scoped to some clusters never learns of another's
spares: they are 404 to it (as Nova scopes by project), and lists show only its own.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from runtime.settings import Role, Settings, TokenGrant

from .errors import ApiError, Code

_bearer = HTTPBearer(auto_error=False)


def app_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


@dataclass(frozen=True)
class Caller:
    """Who is asking: a role, and the clusters it acts for (None: every cluster)."""

    role: Role
    clusters: frozenset[str] | None = None
    # Authentication off (the lab): every route is open to it.
    unchecked: bool = False

    def sees(self, cluster: str | None) -> bool:
        return self.clusters is None or cluster in self.clusters

    def visible(self, clusters: Iterable[str]) -> list[str]:
        return [c for c in clusters if self.sees(c)]

    def require_cluster(self, cluster: str) -> None:
        """403 for a request on behalf of a cluster the caller does not act for."""
        if not self.sees(cluster):
            own = ", ".join(sorted(self.clusters or ()))
            raise ApiError(
                f"this token acts for cluster(s) {own}, not '{cluster}'", Code.CLUSTER_FORBIDDEN
            )


LAB_CALLER = Caller(role="operator", unchecked=True)


def grant_of(settings: Settings, token: str) -> TokenGrant | None:
    """The grant of a token, compared in constant time against every configured token."""
    found: TokenGrant | None = None
    for candidate, grant in settings.api_tokens.items():
        if hmac.compare_digest(candidate.get_secret_value().encode(), token.encode()):
            found = grant if isinstance(grant, TokenGrant) else TokenGrant(role=grant)
    return found


async def current_caller(
    settings: Annotated[Settings, Depends(app_settings)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller:
    """The authenticated caller (once per request: FastAPI caches the dependency)."""
    if not settings.api_tokens:
        return LAB_CALLER
    if credentials is None:
        raise ApiError("a bearer token is required", Code.UNAUTHENTICATED)
    grant = grant_of(settings, credentials.credentials)
    if grant is None:
        raise ApiError("unknown token", Code.UNAUTHENTICATED)
    clusters = frozenset(grant.clusters) if grant.clusters is not None else None
    return Caller(role=grant.role, clusters=clusters)


CurrentCaller = Annotated[Caller, Depends(current_caller)]


def require(*roles: Role) -> Callable[..., Awaitable[Caller]]:
    """A dependency that lets through callers holding one of `roles`."""

    async def check(caller: CurrentCaller) -> Caller:
        if not caller.unchecked and caller.role not in roles:
            raise ApiError(f"role '{caller.role}' may not do this", Code.FORBIDDEN)
        return caller

    return check


# Who may do what: the upgrade controller asks for spares and gives them back; an operator
# looks, explains and, in an emergency, cancels. Both may read.
ANY_ROLE = require("operator", "upgrade-controller")
OPERATOR = require("operator")
UPGRADE_CONTROLLER = require("upgrade-controller")
