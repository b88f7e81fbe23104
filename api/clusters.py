"""`/v1/clusters`: each registered cluster, its API server, whether it answers (the last error
and since when), its spares in use and its surge budget. Shared with `virtflow clusters`.

The API probes each cluster itself, with its own client per cluster (ClusterClients.probe),
and counts the
cluster's spares in Temporal visibility: its running spares not yet released, warm ones not
counted, nor those waiting for room (the budget's own measure).
"""

from __future__ import annotations

import asyncio
from datetime import datetime

import httpx2
from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from activities.kube_clusters import ClusterClients
from activities.vm_join import cluster_join_endpoint
from contracts.common import CLUSTER, PHASE
from contracts.spare import PREPARE_SPARE, Phase, spare_workflow_id
from contracts.warm import WARM_REQUEST_PREFIX
from runtime.settings import Settings

from .auth import ANY_ROLE, CurrentCaller
from .problems import TEMPORAL_ROUTE, responses
from .spare import AppSettings, TemporalClient
from .temporal_calls import temporal_errors

router = APIRouter(prefix="/v1", tags=["clusters"])


class ClusterView(BaseModel):
    name: str
    api_server: str | None = Field(description="The API server spares join (None: unreadable)")
    reachable: bool
    last_error: str | None = None
    since: datetime | None = Field(
        default=None, description="Unreachable: since when; reachable: when it last answered"
    )
    spares_in_use: int = Field(description="Its spares not yet released, warm ones not counted")
    max_spares: int | None = Field(default=None, description="Its surge budget (None: none)")


class ClusterList(BaseModel):
    clusters: list[ClusterView]


async def spares_in_use(client: Client, cluster: str) -> int:
    """The cluster's running spares not yet released, its warm pools' spares and the spares
    still waiting for room (or for the budget) left out: what the ledger counts."""
    running = (
        f"WorkflowType = '{PREPARE_SPARE}' AND ExecutionStatus = 'Running' AND "
        f"{CLUSTER.name} = '{cluster}' AND {PHASE.name} != '{Phase.RELEASED.value}' AND "
        f"{PHASE.name} != '{Phase.WAITING_CAPACITY.value}'"
    )
    warm = spare_workflow_id(cluster, WARM_REQUEST_PREFIX)
    with temporal_errors(cluster):
        every = (await client.count_workflows(running)).count
        warm_ones = (
            await client.count_workflows(f"{running} AND WorkflowId STARTS_WITH '{warm}'")
        ).count
    return every - warm_ones


async def cluster_view(
    settings: Settings, clients: ClusterClients, client: Client, name: str
) -> ClusterView:
    config = settings.cluster_registry.get(name)
    seen = await clients.probe(name)
    try:
        server: str | None = (await cluster_join_endpoint(clients, name)).server
    except (ApplicationError, ValueError, OSError, httpx2.HTTPError):
        server = config.join_api_server
    return ClusterView(
        name=name,
        api_server=server,
        reachable=seen.reachable,
        last_error=seen.last_error,
        since=seen.since,
        spares_in_use=await spares_in_use(client, name),
        max_spares=config.max_spares,
    )


async def list_clusters(
    settings: Settings, clients: ClusterClients, client: Client, scope: frozenset[str] | None
) -> ClusterList:
    names = [n for n in settings.cluster_registry.names if scope is None or n in scope]
    views = await asyncio.gather(*(cluster_view(settings, clients, client, n) for n in names))
    return ClusterList(clusters=list(views))


@router.get(
    "/clusters",
    operation_id="listClusters",
    response_model=ClusterList,
    summary="Registered clusters: API server, reachable or not (since when), spares, budget",
    responses=responses(*TEMPORAL_ROUTE),
    dependencies=[Depends(ANY_ROLE)],
)
async def get_clusters(
    request: Request, settings: AppSettings, client: TemporalClient, caller: CurrentCaller
) -> ClusterList:
    clients: ClusterClients = request.app.state.cluster_clients
    return await list_clusters(settings, clients, client, caller.clusters)
