"""Bearer-token roles for the HTTP API.

Tokens come from settings (`api_tokens`: token -> role). With none configured, as in the lab,
every caller is an operator; `create_app` logs that authentication is off.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from runtime.settings import Role, Settings

from .errors import ApiError, Code

_bearer = HTTPBearer(auto_error=False)


def app_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def role_of(settings: Settings, token: str) -> Role | None:
    """The role of a token, compared in constant time against every configured token."""
    found: Role | None = None
    for candidate, role in settings.api_tokens.items():
        if hmac.compare_digest(candidate.get_secret_value().encode(), token.encode()):
            found = role
    return found


def require(*roles: Role) -> Callable[..., Awaitable[Role]]:
    """A dependency that lets through callers holding one of `roles`."""

    async def check(
        settings: Annotated[Settings, Depends(app_settings)],
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ) -> Role:
        if not settings.api_tokens:
            return "operator"
        if credentials is None:
            raise ApiError("a bearer token is required", Code.UNAUTHENTICATED)
        role = role_of(settings, credentials.credentials)
        if role is None:
            raise ApiError("unknown token", Code.UNAUTHENTICATED)
        if role not in roles:
            raise ApiError(f"role '{role}' may not do this", Code.FORBIDDEN)
        return role

    return check


# Who may do what: the upgrade controller asks for spares and gives them back; an operator
# looks, explains and, in an emergency, cancels. Both may read.
ANY_ROLE = require("operator", "upgrade-controller")
OPERATOR = require("operator")
UPGRADE_CONTROLLER = require("upgrade-controller")
