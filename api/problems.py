"""Every error as RFC 9457 problem details, mapped from the domain errors in one place.

A problem carries the HTTP `status`, a `type` URI and a `title` per code, the human `detail`,
and the stable `code` of `errors.Code` a program branches on. Field errors (422) list each
offending field in `errors`. Every 503 carries `Retry-After`.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from temporalio.service import RPCError

from placement.errors import field_path

from .errors import ApiError, Code, InvalidInput, NoCapacity, OverBudget, SpareNotFound

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:virtflow:problem:"
RETRY_AFTER_SECONDS = 5

# code -> (HTTP status, title): the title is the same for every occurrence of a code.
PROBLEMS: dict[Code, tuple[int, str]] = {
    Code.BAD_REQUEST: (400, "Malformed request"),
    Code.UNAUTHENTICATED: (401, "Missing or unknown bearer token"),
    Code.FORBIDDEN: (403, "The token's role may not do this"),
    Code.CLUSTER_FORBIDDEN: (403, "The token may not act for this cluster"),
    Code.NOT_FOUND: (404, "No such resource"),
    Code.SPARE_NOT_FOUND: (404, "No such spare"),
    Code.TASK_NOT_FOUND: (404, "No such scheduling task"),
    Code.WARM_POOL_NOT_FOUND: (404, "No such warm pool"),
    Code.METHOD_NOT_ALLOWED: (405, "Method not allowed"),
    Code.REQUEST_CONFLICT: (409, "The request_id is taken by a different request"),
    Code.SPARE_NOT_READY: (409, "The spare is not Ready yet"),
    Code.ALREADY_RELEASED: (409, "The spare is released or being released"),
    Code.SPARE_ENDED: (409, "The spare has ended"),
    Code.TASK_ENDED: (409, "The scheduling task has ended"),
    Code.NO_CAPACITY: (409, "Not every requested spare can be placed"),
    Code.NOT_A_BOOKING: (409, "The spare is not a booking: it has no window"),
    Code.CLUSTER_BUDGET_EXCEEDED: (409, "The cluster's surge budget (max_spares) is used up"),
    Code.REQUEST_TIMEOUT: (408, "Request body not received in time"),
    Code.BODY_TOO_LARGE: (413, "Request body too large"),
    Code.INVALID_REQUEST: (422, "Invalid request"),
    Code.UNKNOWN_CLUSTER: (422, "Unknown cluster"),
    Code.NOT_ALLOWED_FOR_CLUSTER: (422, "Not allowed for this cluster"),
    Code.UNKNOWN_INVENTORY: (422, "Unknown inventory"),
    Code.UNKNOWN_RECEIVER: (422, "Unknown webhook receiver"),
    Code.UNKNOWN_TEMPLATE: (422, "Unknown VM template"),
    Code.UNKNOWN_POOL: (422, "Unknown host pool"),
    Code.NO_MATCHING_HOST: (422, "No host matches the selector"),
    Code.NEAR_UNKNOWN: (422, "The VM or Node that `near` names is not in the inventory"),
    Code.INVALID_PAGE_TOKEN: (422, "Invalid page token"),
    Code.WINDOW_STARTED: (422, "The booking's window starts in the past"),
    Code.WINDOW_TOO_FAR: (422, "The booking's window reaches beyond the booking horizon"),
    Code.WINDOW_END_PASSED: (422, "The booking's window would end in the past"),
    Code.RANGE_TOO_LONG: (422, "The time range is longer than the API answers for"),
    Code.TEMPORAL_ERROR: (502, "Temporal answered with an error"),
    Code.TEMPORAL_UNAVAILABLE: (503, "Temporal unavailable"),
    Code.INVENTORY_UNAVAILABLE: (503, "Inventory unavailable"),
}
# What every route behind a token that asks Temporal can answer: no token or a role that may
# not, Temporal's error or its absence; and, where it takes input, input that is not valid.
TEMPORAL_ROUTE = (
    Code.UNAUTHENTICATED,
    Code.FORBIDDEN,
    Code.TEMPORAL_ERROR,
    Code.TEMPORAL_UNAVAILABLE,
)
TEMPORAL_ROUTE_WITH_INPUT = (Code.INVALID_REQUEST, *TEMPORAL_ROUTE)
_BY_STATUS = {404: Code.NOT_FOUND, 405: Code.METHOD_NOT_ALLOWED, 413: Code.BODY_TOO_LARGE}


class FieldError(BaseModel):
    """One offending field of a 422."""

    field: str = Field(description="Dotted path of the field, e.g. `node_selector.zone`")
    loc: list[str | int] = Field(description="Where it is: `body`/`query`/`path`, then the path")
    message: str
    type: str = Field(description="The validation rule that failed")


class Problem(BaseModel):
    """RFC 9457 problem details; branch on `code`, show `detail` to people."""

    type: str = Field(description=f"`{TYPE_PREFIX}<code>`")
    title: str
    status: int
    detail: str
    code: Code
    instance: str | None = Field(default=None, description="The request path")
    errors: list[FieldError] | None = Field(default=None, description="422: every bad field")
    requested: int | None = Field(default=None, description="no_capacity: spares asked for")
    placeable: int | None = Field(
        default=None, description="no_capacity: how many of them could be placed now"
    )
    held_by: list[str] | None = Field(
        default=None,
        description="no_capacity: the spares of the requester's own cluster (bookings among "
        "them) holding the room in its time; spares of other clusters are only counted, in "
        "the detail",
    )
    free_until: datetime | None = Field(
        default=None,
        description="no_capacity of a longer window: the latest end its room allows now",
    )
    free_again_at: datetime | None = Field(
        default=None,
        description="no_capacity of a longer window: when the room is free again after the "
        "spares in `held_by` (absent: not while anything known holds it)",
    )
    inventories: dict[str, str] | None = Field(
        default=None, description="inventory_unavailable: inventory -> why it is unreadable"
    )
    budget: int | None = Field(
        default=None, description="cluster_budget_exceeded: the cluster's max_spares"
    )
    in_use: int | None = Field(
        default=None, description="cluster_budget_exceeded: its spares not yet released"
    )


def problem(code: Code, detail: str, instance: str | None = None, **extra: Any) -> JSONResponse:
    status, title = PROBLEMS[code]
    body = Problem(
        type=TYPE_PREFIX + code.value,
        title=title,
        status=status,
        detail=detail,
        code=code,
        instance=instance,
        **extra,
    )
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if status == 503 else {}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(
        body.model_dump(mode="json", exclude_none=True),
        status_code=status,
        headers=headers,
        media_type=PROBLEM_JSON,
    )


def field_problem(
    errors: list[FieldError], instance: str | None, code: Code = Code.INVALID_REQUEST
) -> JSONResponse:
    detail = "; ".join(f"{e.field or e.loc[0]}: {e.message}" for e in errors)
    return problem(code, detail, instance, errors=errors)


def _field_errors(errors: list[Any], prefix: tuple[str, ...] = ()) -> list[FieldError]:
    # Never the offending input: it may be huge, or not JSON at all (1e999 is inf).
    found = []
    for error in errors:
        loc = [*prefix, *error["loc"]]
        path = [str(part) for part in loc[1:]] if loc and loc[0] in _SOURCES else loc
        found.append(
            FieldError(
                # A bad dict key reads as its own path (`devices.fpga`); `loc` keeps pydantic's.
                field=field_path(path),
                loc=loc,
                message=error["msg"],
                type=error["type"],
            )
        )
    return found


_SOURCES = {"body", "query", "path", "header", "cookie"}


def install_problem_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, err: ApiError) -> JSONResponse:
        path = request.url.path
        if isinstance(err, InvalidInput):
            field = FieldError(
                field=err.field, loc=[err.source, *err.path], message=err.reason, type="value_error"
            )
            return field_problem([field], path, err.code)
        if isinstance(err, NoCapacity):
            return problem(
                err.code,
                str(err),
                path,
                requested=err.requested,
                placeable=err.placeable,
                held_by=err.held_by,
                free_until=err.free_until,
                free_again_at=err.free_again_at,
            )
        if isinstance(err, OverBudget):
            return problem(err.code, str(err), path, budget=err.budget, in_use=err.in_use)
        if isinstance(err, SpareNotFound):
            return problem(err.code, f"no spare '{err}'", path)
        return problem(err.code, str(err), path)

    @app.exception_handler(RPCError)
    async def rpc_error(request: Request, err: RPCError) -> JSONResponse:
        # Anything the spare operations did not translate is still the engine's, not ours.
        detail = f"Temporal error ({err.status.name}): {err.message}"
        return problem(Code.TEMPORAL_ERROR, detail, request.url.path)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, err: RequestValidationError) -> JSONResponse:
        return field_problem(_field_errors(list(err.errors())), request.url.path)

    @app.exception_handler(ValidationError)
    async def invalid_model(request: Request, err: ValidationError) -> JSONResponse:
        errors = err.errors(include_url=False, include_context=False, include_input=False)
        return field_problem(_field_errors(list(errors), ("body",)), request.url.path)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, err: StarletteHTTPException) -> JSONResponse:
        code = _BY_STATUS.get(err.status_code, Code.BAD_REQUEST)
        return problem(code, str(err.detail), request.url.path)


def responses(*codes: Code) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for an operation: each status it can answer, with its codes."""
    by_status: dict[int, list[Code]] = {}
    for code in codes:
        by_status.setdefault(PROBLEMS[code][0], []).append(code)
    declared: dict[int | str, dict[str, Any]] = {}
    for status, listed in sorted(by_status.items()):
        names = ", ".join(f"`{c.value}`" for c in listed)
        declared[status] = {
            "model": Problem,
            "description": f"Problem details; `code` is one of {names}"
            + (" (with `Retry-After`)" if status == 503 else ""),
            "x-problem-codes": [c.value for c in listed],
        }
    return declared
