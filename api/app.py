"""The HTTP trigger API (FastAPI; OpenAPI at /docs).

Routers stay thin; every domain error (`errors.py`) becomes a status code and a problem
document in one place, `problems.py`, which this app installs, so a caller never sees a 500 for
"Temporal is down" or "no such spare".
"""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from temporalio.service import RPCError

from activities.kube_clusters import ClusterClients
from runtime.settings import Settings
from runtime.telemetry import instrument_api
from webhooks.bounded import BodyDeadline

from .admission import Admission
from .auth import ANY_ROLE, CurrentCaller, app_settings
from .bookings import router as bookings_router
from .clusters import router as clusters_router
from .compat import router as compat_router
from .errors import Code, TemporalUnavailable
from .explain import ExplainBody, ExplainResult, explain
from .inventory_view import unreadable_inventories
from .limits import BodySizeLimit
from .openapi import install_openapi
from .problems import install_problem_handlers, problem, responses
from .spare import router as spare_router
from .spare_list import router as list_router
from .spare_start import check_cluster_use
from .temporal_client import ClientFactory, ClientProvider, connect_factory
from .versions import legacy_aliases
from .warm_pools import router as warm_router

log = logging.getLogger(__name__)
API_VERSION = "1.0.0"


def create_app(settings: Settings, client_factory: ClientFactory | None = None) -> FastAPI:
    """The API app. `client_factory` defaults to connecting to `settings.temporal_address`;
    the client is made on first use and kept for the life of the process."""
    app = FastAPI(
        title="virtflow",
        version=API_VERSION,
        description=(
            "Spare-node provisioning on Temporal: prepare, follow, release. Paths under `/v1` "
            "are the stable API; the unversioned `/spare...` paths are deprecated aliases for "
            "one release. The original scheduler's `/schedule` and `/result/{task_id}` stay "
            "unversioned. Every error is an RFC 9457 problem (`application/problem+json`) "
            "with a stable `code`; every 503 carries `Retry-After`."
        ),
    )
    app.state.settings = settings
    app.state.clients = ClientProvider(client_factory or connect_factory(settings))
    app.state.admission = Admission()
    # The API's own client per cluster, for /v1/clusters' probes; built on first use.
    app.state.cluster_clients = ClusterClients.from_registry(
        settings.cluster_registry, settings.seed_kubeconfig
    )
    if not settings.api_tokens:
        log.warning("API authentication disabled: no api_tokens configured (lab mode)")
    install_problem_handlers(app)
    instrument_api(app, settings)
    app.add_middleware(BodySizeLimit)
    # Outermost: a body that trickles in is cut off before anything else waits on it.
    app.add_middleware(
        BodyDeadline,
        seconds=settings.http_body_timeout_seconds,
        timeout_response=lambda detail: problem(Code.REQUEST_TIMEOUT, detail),
    )
    app.include_router(spare_router)
    app.include_router(list_router)
    app.include_router(compat_router)
    app.include_router(warm_router)
    app.include_router(clusters_router)
    app.include_router(bookings_router)

    @app.get("/healthz", tags=["health"], operation_id="healthz", summary="The process is up")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(
        "/readyz",
        tags=["health"],
        operation_id="readyz",
        summary="Temporal is reachable, inventories readable",
        responses=responses(Code.TEMPORAL_UNAVAILABLE, Code.INVENTORY_UNAVAILABLE),
    )
    async def readyz(request: Request) -> JSONResponse:
        path = request.url.path
        try:
            client = await request.app.state.clients.get()
            healthy = await client.service_client.check_health()
        except (TemporalUnavailable, RPCError, RuntimeError) as err:
            return problem(Code.TEMPORAL_UNAVAILABLE, str(err), path)
        if not healthy:
            return problem(Code.TEMPORAL_UNAVAILABLE, "Temporal reports itself unhealthy", path)
        unreadable = await unreadable_inventories(request.app.state.settings)
        if unreadable:
            detail = "; ".join(f"{name}: {why}" for name, why in unreadable.items())
            return problem(Code.INVENTORY_UNAVAILABLE, detail, path, inventories=unreadable)
        return JSONResponse({"status": "ready"})

    @app.post(
        "/v1/placement/explain",
        tags=["placement"],
        operation_id="explainPlacement",
        response_model=ExplainResult,
        summary="Where would this VM go, and why not elsewhere? Creates nothing.",
        responses=responses(
            Code.INVALID_REQUEST,
            Code.UNKNOWN_INVENTORY,
            Code.UNKNOWN_CLUSTER,
            Code.NOT_ALLOWED_FOR_CLUSTER,
            Code.UNAUTHENTICATED,
            Code.FORBIDDEN,
            Code.CLUSTER_FORBIDDEN,
            Code.INVENTORY_UNAVAILABLE,
            Code.BODY_TOO_LARGE,
        ),
        dependencies=[Depends(ANY_ROLE)],
    )
    async def placement_explain(
        body: ExplainBody,
        request: Request,
        app_config: Annotated[Settings, Depends(app_settings)],
        caller: CurrentCaller,
    ) -> ExplainResult:
        if body.cluster is not None:
            caller.require_cluster(body.cluster)
            inventory = None if body.hosts is not None else body.inventory or "default"
            check_cluster_use(app_config, body.cluster, inventory)
        # The client connects only when a configured inventory's ledger is asked.
        return await explain(app_config, body, request.app.state.clients, caller.clusters)

    app.include_router(legacy_aliases([spare_router, list_router, app.router]))
    install_openapi(app)
    return app
