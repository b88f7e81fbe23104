"""`/v1/clusters`: each registered cluster, its API server, whether it answers (the last error
and since when), its spares in use and its surge budget. Shared with `virtflow clusters`.

The API probes each cluster itself, with its own client per cluster (a `get` of a Node that
does not exist: any answer, 404 included, means the API server answers), and counts the
cluster's spares in Temporal visibility: its running spares not yet released, warm ones not
counted (the budget's own measure).
"""

from __future__ import annotations

import asyncio
from datetime import datetime

import httpx2
from fastapi import APIRouter, Depends, Request
from lightkube import ApiError
from lightkube.resources.core_v1 import Node
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
from .errors import Code
from .problems import responses
from .spare import AppSettings, TemporalClient
from .spare_ops import temporal_errors

router = APIRouter(prefix="/v1", tags=["clusters"])
# A probe that takes longer than this is as good as no answer.
PROBE_SECONDS = 5.0
# The Node a probe asks for: never there, so the answer is a cheap 404.
PROBE_NODE = "virtflow-probe-absent"


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
    """The cluster's running spares not yet released, its warm pools' spares left out."""
    running = (
        f"WorkflowType = '{PREPARE_SPARE}' AND ExecutionStatus = 'Running' AND "
        f"{CLUSTER.name} = '{cluster}' AND {PHASE.name} != '{Phase.RELEASED.value}'"
    )
    warm = spare_workflow_id(cluster, WARM_REQUEST_PREFIX)
    with temporal_errors(cluster):
        every = (await client.count_workflows(running)).count
        warm_ones = (
            await client.count_workflows(f"{running} AND WorkflowId STARTS_WITH '{warm}'")
        ).count
    return every - warm_ones


async def probe(clients: ClusterClients, cluster: str) -> str | None:
    """None when the cluster's API server answers; why not otherwise."""
    try:
        kube = await clients.client(cluster)
        async with asyncio.timeout(PROBE_SECONDS):
            await kube.get(Node, PROBE_NODE)
    except ApiError as err:
        if err.status.code == 404:
            clients.reached(cluster)
            return None
        return clients.unreachable(
            cluster, f"HTTP {err.status.code}: {err.status.message}"
        ).last_error
    except TimeoutError:
        return clients.unreachable(cluster, f"no answer within {PROBE_SECONDS:g} s").last_error
    except (httpx2.HTTPError, OSError, ApplicationError) as err:
        text = err.message if isinstance(err, ApplicationError) else str(err) or type(err).__name__
        return clients.unreachable(cluster, f"{type(err).__name__}: {text}"[:300]).last_error
    clients.reached(cluster)
    return None


async def cluster_view(
    settings: Settings, clients: ClusterClients, client: Client, name: str
) -> ClusterView:
    config = settings.cluster_registry.get(name)
    await probe(clients, name)
    seen = clients.reachability(name)
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
    responses=responses(
        Code.TEMPORAL_ERROR, Code.TEMPORAL_UNAVAILABLE, Code.UNAUTHENTICATED, Code.FORBIDDEN
    ),
    dependencies=[Depends(ANY_ROLE)],
)
async def get_clusters(
    request: Request, settings: AppSettings, client: TemporalClient, caller: CurrentCaller
) -> ClusterList:
    clients: ClusterClients = request.app.state.cluster_clients
    return await list_clusters(settings, clients, client, caller.clusters)
