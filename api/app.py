"""The HTTP trigger API (FastAPI; OpenAPI at /docs).

Routers stay thin; every domain error becomes a status code here, in one place, so a caller
never sees a 500 for "Temporal is down" or "no such spare".
"""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import Depends, FastAPI, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from temporalio.service import RPCError

from runtime.settings import Settings
from runtime.telemetry import instrument_api

from .auth import ANY_ROLE, app_settings
from .compat import router as compat_router
from .errors import (
    InvalidInput,
    InventoryUnavailable,
    SpareConflict,
    SpareNotFound,
    TemporalUnavailable,
)
from .explain import ExplainBody, ExplainResult, explain
from .inventory_view import unreadable_inventories
from .limits import BodySizeLimit
from .spare import router as spare_router
from .spare_list import router as list_router
from .temporal_client import ClientFactory, ClientProvider, connect_factory

log = logging.getLogger(__name__)


def _field_error(field: str, reason: str) -> JSONResponse:
    """Same shape as FastAPI's own validation errors, so clients parse one format."""
    detail = [{"loc": ["body", field], "msg": reason, "type": "value_error"}]
    return JSONResponse({"detail": detail}, status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)


def _install_error_mapping(app: FastAPI) -> None:
    @app.exception_handler(TemporalUnavailable)
    async def unavailable(_: Request, err: TemporalUnavailable) -> JSONResponse:
        return JSONResponse(
            {"detail": f"Temporal unavailable: {err}"},
            status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": "5"},
        )

    @app.exception_handler(InventoryUnavailable)
    async def no_inventory(_: Request, err: InventoryUnavailable) -> JSONResponse:
        return JSONResponse({"detail": str(err)}, status_code=status.HTTP_503_SERVICE_UNAVAILABLE)

    @app.exception_handler(RPCError)
    async def rpc_error(_: Request, err: RPCError) -> JSONResponse:
        # Anything the spare operations did not translate is still the engine's, not ours.
        return JSONResponse(
            {"detail": f"Temporal error ({err.status.name}): {err.message}"},
            status_code=status.HTTP_502_BAD_GATEWAY,
        )

    @app.exception_handler(SpareNotFound)
    async def not_found(_: Request, err: SpareNotFound) -> JSONResponse:
        return JSONResponse({"detail": f"no spare '{err}'"}, status_code=404)

    @app.exception_handler(SpareConflict)
    async def conflict(_: Request, err: SpareConflict) -> JSONResponse:
        return JSONResponse({"detail": str(err)}, status_code=status.HTTP_409_CONFLICT)

    @app.exception_handler(InvalidInput)
    async def invalid_input(_: Request, err: InvalidInput) -> JSONResponse:
        return _field_error(err.field, err.reason)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, err: RequestValidationError) -> JSONResponse:
        # Without the offending input: it may be huge, or not JSON at all (1e999 is inf).
        detail = [{"loc": e["loc"], "msg": e["msg"], "type": e["type"]} for e in err.errors()]
        return JSONResponse({"detail": detail}, status_code=422)

    @app.exception_handler(ValidationError)
    async def invalid_model(_: Request, err: ValidationError) -> JSONResponse:
        detail = [
            {"loc": ["body", *e["loc"]], "msg": e["msg"], "type": e["type"]}
            for e in err.errors(include_url=False, include_context=False, include_input=False)
        ]
        return JSONResponse({"detail": detail}, status_code=422)


def create_app(settings: Settings, client_factory: ClientFactory | None = None) -> FastAPI:
    """The API app. `client_factory` defaults to connecting to `settings.temporal_address`;
    the client is made on first use and kept for the life of the process."""
    app = FastAPI(
        title="virtflow",
        version="0.1.0",
        description="Spare-node provisioning on Temporal: prepare, follow, release.",
    )
    app.state.settings = settings
    app.state.clients = ClientProvider(client_factory or connect_factory(settings))
    if not settings.api_tokens:
        log.warning("API authentication disabled: no api_tokens configured (lab mode)")
    _install_error_mapping(app)
    instrument_api(app, settings)
    app.add_middleware(BodySizeLimit)
    app.include_router(spare_router)
    app.include_router(compat_router)
    app.include_router(list_router)

    @app.get("/healthz", tags=["health"], summary="The process is up")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], summary="Temporal is reachable, inventories readable")
    async def readyz(request: Request) -> JSONResponse:
        try:
            client = await request.app.state.clients.get()
            healthy = await client.service_client.check_health()
        except (TemporalUnavailable, RPCError, RuntimeError) as err:
            return JSONResponse(
                {"status": "unavailable", "detail": str(err)},
                status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
            )
        if not healthy:
            return JSONResponse({"status": "unavailable"}, status_code=503)
        unreadable = await unreadable_inventories(request.app.state.settings)
        if unreadable:
            detail = "; ".join(f"{name}: {why}" for name, why in unreadable.items())
            return JSONResponse(
                {"status": "unavailable", "detail": detail, "inventories": unreadable},
                status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
            )
        return JSONResponse({"status": "ready"})

    @app.post(
        "/placement/explain",
        tags=["placement"],
        response_model=ExplainResult,
        summary="Where would this VM go, and why not elsewhere? Creates nothing.",
        dependencies=[Depends(ANY_ROLE)],
    )
    async def placement_explain(
        body: ExplainBody, app_config: Annotated[Settings, Depends(app_settings)]
    ) -> ExplainResult:
        return await explain(app_config, body)

    return app
