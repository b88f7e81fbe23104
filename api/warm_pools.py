"""`/v1/warm-pools`: each configured warm pool's size, Ready spares, spares coming up and
claims, from its workflow's query. Shared with `virtflow warm list`."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from pydantic import BaseModel
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from contracts.warm import POOL_QUERY, WarmPoolSpec, WarmPoolView, warm_pool_workflow_id
from runtime.settings import Settings

from .auth import ANY_ROLE, CurrentCaller
from .errors import Code, WarmPoolNotFound
from .problems import TEMPORAL_ROUTE, responses
from .spare import AppSettings, TemporalClient
from .temporal_calls import QUERY_TIMEOUT, temporal_errors

router = APIRouter(prefix="/v1", tags=["warm pools"])


class WarmPoolList(BaseModel):
    warm_pools: list[WarmPoolView]


async def pool_view(client: Client, spec: WarmPoolSpec) -> WarmPoolView:
    """The pool's own account; a pool no worker has started yet shows empty, and says so."""
    handle = client.get_workflow_handle(warm_pool_workflow_id(spec.name))
    with temporal_errors(spec.name):
        try:
            view: WarmPoolView = await handle.query(
                POOL_QUERY, result_type=WarmPoolView, rpc_timeout=QUERY_TIMEOUT
            )
            return view
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
    return WarmPoolView(
        **spec.model_dump(include={"name", "cluster", "inventory", "pool", "template", "size"}),
        **spec.shape(),
        ready=0,
        coming_up=0,
        claimed=0,
        short_reason="not started: a worker starts its configured warm pools when it starts",
    )


async def list_pools(
    client: Client, settings: Settings, scope: frozenset[str] | None = None
) -> list[WarmPoolView]:
    """The configured pools; with `scope`, only those of its clusters."""
    return [
        await pool_view(client, spec)
        for spec in settings.warm_pools
        if scope is None or spec.cluster in scope
    ]


async def get_pool(
    client: Client, settings: Settings, name: str, scope: frozenset[str] | None = None
) -> WarmPoolView:
    for spec in settings.warm_pools:
        if spec.name == name and (scope is None or spec.cluster in scope):
            return await pool_view(client, spec)
    raise WarmPoolNotFound(f"no warm pool '{name}' is configured")


@router.get(
    "/warm-pools",
    operation_id="listWarmPools",
    response_model=WarmPoolList,
    summary="Warm pools: size, Ready spares, spares coming up, claims so far",
    responses=responses(*TEMPORAL_ROUTE),
    dependencies=[Depends(ANY_ROLE)],
)
async def list_warm_pools(
    settings: AppSettings, client: TemporalClient, caller: CurrentCaller
) -> WarmPoolList:
    return WarmPoolList(warm_pools=await list_pools(client, settings, caller.clusters))


@router.get(
    "/warm-pools/{name}",
    operation_id="getWarmPool",
    response_model=WarmPoolView,
    summary="One warm pool and each of its spares",
    responses=responses(*TEMPORAL_ROUTE, Code.WARM_POOL_NOT_FOUND),
    dependencies=[Depends(ANY_ROLE)],
)
async def get_warm_pool(
    name: str, settings: AppSettings, client: TemporalClient, caller: CurrentCaller
) -> WarmPoolView:
    return await get_pool(client, settings, name, caller.clusters)
