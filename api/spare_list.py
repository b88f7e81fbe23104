"""Listing spares through Temporal visibility: the search attributes every spare carries.

Shared by `GET /spares` and `virtflow list`. Filters are matched against a strict pattern
before they reach the visibility query, so a value can never change the query's meaning.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field
from temporalio.client import Client, WorkflowExecution
from temporalio.service import RPCError, RPCStatusCode

from contracts.common import CLUSTER, HOST, PHASE, POOL
from contracts.spare import PREPARE_SPARE, Phase
from runtime.settings import Settings

from .auth import OPERATOR, CurrentCaller
from .errors import Code, InvalidInput
from .problems import TEMPORAL_ROUTE_WITH_INPUT, responses
from .spare import AppSettings, TemporalClient
from .temporal_calls import temporal_errors

# Cluster, pool and host names: DNS-like words, never quotes or operators.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$"
MAX_PAGE_SIZE = 500
TOKEN_PREFIX = "vt1."


class SpareFilter(BaseModel):
    cluster: str | None = Field(default=None, pattern=NAME_PATTERN)
    pool: str | None = Field(default=None, pattern=NAME_PATTERN)
    host: str | None = Field(default=None, pattern=NAME_PATTERN)
    phase: Phase | None = None

    def query(self, scope: frozenset[str] | None = None) -> str:
        """The visibility query; values are safe to quote after the pattern check (and
        `scope`'s are registered cluster names, DNS labels)."""
        clauses = [f"WorkflowType = '{PREPARE_SPARE}'"]
        if scope is not None:
            clauses.append(f"{CLUSTER.name} IN ({', '.join(repr(c) for c in sorted(scope))})")
        for key, value in (
            (CLUSTER, self.cluster),
            (POOL, self.pool),
            (HOST, self.host),
            (PHASE, self.phase.value if self.phase else None),
        ):
            if value is not None:
                clauses.append(f"{key.name} = '{value}'")
        return " AND ".join(clauses)


class SpareSummary(BaseModel):
    spare_id: str
    cluster: str | None = None
    pool: str | None = None
    host: str | None = None
    phase: str | None = None
    workflow_status: str
    started_at: datetime | None = None
    ui_url: str


class SparePage(BaseModel):
    spares: list[SpareSummary]
    next_page_token: str | None = Field(
        default=None, description="Pass as `page_token` for the next page; absent on the last"
    )


def summarise(execution: WorkflowExecution, settings: Settings) -> SpareSummary:
    attributes = execution.typed_search_attributes
    status = execution.status
    return SpareSummary(
        spare_id=execution.id,
        cluster=attributes.get(CLUSTER),
        pool=attributes.get(POOL),
        host=attributes.get(HOST),
        phase=attributes.get(PHASE),
        workflow_status=status.name.lower() if status else "running",
        started_at=execution.start_time,
        ui_url=settings.workflow_ui_url(execution.id),
    )


def _encode_token(raw: bytes | None) -> str | None:
    return TOKEN_PREFIX + base64.urlsafe_b64encode(raw).decode() if raw else None


def _decode_token(token: str | None) -> bytes | None:
    """The marker turns a mangled token into a 422 at once, not a server error after retries."""
    if not token:
        return None
    raw = b""
    if token.startswith(TOKEN_PREFIX):
        with contextlib.suppress(binascii.Error, ValueError):
            raw = base64.b64decode(token[len(TOKEN_PREFIX) :], altchars=b"-_", validate=True)
    if not raw:
        raise InvalidInput("page_token", "not a token this API handed out", Code.INVALID_PAGE_TOKEN)
    return raw


async def list_spares(
    client: Client,
    settings: Settings,
    spare_filter: SpareFilter,
    page_size: int = 100,
    page_token: str | None = None,
    scope: frozenset[str] | None = None,
) -> SparePage:
    """One page of spares, newest first (the visibility store's order); with `scope`, only
    the spares of those clusters."""
    if scope is not None and spare_filter.cluster is not None and spare_filter.cluster not in scope:
        _decode_token(page_token)
        return SparePage(spares=[])
    iterator = client.list_workflows(
        spare_filter.query(scope),
        page_size=page_size,
        next_page_token=_decode_token(page_token),
    )
    with temporal_errors("spares"):
        try:
            await iterator.fetch_next_page(page_size=page_size)
        except RPCError as err:
            # The server's page tokens are opaque; one it cannot read is the caller's error.
            if page_token and err.status in {RPCStatusCode.INVALID_ARGUMENT, RPCStatusCode.UNKNOWN}:
                raise InvalidInput("page_token", err.message, Code.INVALID_PAGE_TOKEN) from err
            raise
    executions = iterator.current_page or []
    return SparePage(
        spares=[summarise(e, settings) for e in executions],
        next_page_token=_encode_token(iterator.next_page_token),
    )


router = APIRouter(prefix="/v1", tags=["spares"])


@router.get(
    "/spares",
    operation_id="listSpares",
    response_model=SparePage,
    responses=responses(*TEMPORAL_ROUTE_WITH_INPUT, Code.INVALID_PAGE_TOKEN),
    summary="List spares by cluster, pool, host and phase (Temporal visibility), newest first",
    dependencies=[Depends(OPERATOR)],
)
async def get_spares(
    filters: Annotated[SpareFilter, Query()],
    settings: AppSettings,
    client: TemporalClient,
    caller: CurrentCaller,
    page_size: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = 100,
    page_token: Annotated[str | None, Query(max_length=4096)] = None,
) -> SparePage:
    return await list_spares(client, settings, filters, page_size, page_token, caller.clusters)
