"""`/spare` routes: thin calls into the spare operations; errors are mapped in `api.py`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends, Request, status
from pydantic import BaseModel
from temporalio.client import Client

from runtime.settings import Settings
from workflows.spare_models import ReleaseRequest, SpareStatus

from .auth import ANY_ROLE, OPERATOR, UPGRADE_CONTROLLER, app_settings
from .spare_ops import (
    PrepareAccepted,
    PrepareBody,
    SpareView,
    cancel_spare,
    release_spare,
    spare_status,
    start_spares,
)

router = APIRouter(prefix="/spare", tags=["spare"])


async def temporal_client(request: Request) -> Client:
    client: Client = await request.app.state.clients.get()
    return client


TemporalClient = Annotated[Client, Depends(temporal_client)]
AppSettings = Annotated[Settings, Depends(app_settings)]


class CancelAccepted(BaseModel):
    spare_id: str
    cancel_requested: bool = True
    ui_url: str


@router.post(
    "/prepare",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=PrepareAccepted,
    summary="Ask for a spare node",
    description=(
        "Starts the PrepareSpare workflow with id `spare-<cluster>-<request_id>`. Idempotent: "
        "the same body again answers with the same spare (id conflict policy USE_EXISTING); "
        "a different body reusing the request_id answers 409. With `count` > 1 the spares "
        "have ids `spare-<cluster>-<request_id>-<i>` and are spread by anti-affinity."
    ),
    dependencies=[Depends(UPGRADE_CONTROLLER)],
)
async def prepare(
    request: PrepareBody,
    settings: AppSettings,
    client: TemporalClient,
) -> PrepareAccepted:
    return await start_spares(client, settings, request)


@router.get(
    "/{spare_id}",
    response_model=SpareView,
    summary="Status of a spare, with its Temporal UI link",
    dependencies=[Depends(ANY_ROLE)],
)
async def get_spare(
    spare_id: str,
    settings: AppSettings,
    client: TemporalClient,
) -> SpareView:
    return await spare_status(client, settings, spare_id)


@router.post(
    "/{spare_id}/release",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=SpareStatus,
    summary="Release a spare (drain, delete the Node, destroy the VM)",
    dependencies=[Depends(UPGRADE_CONTROLLER)],
)
async def release(
    spare_id: str,
    client: TemporalClient,
    body: Annotated[ReleaseRequest | None, Body()] = None,
) -> SpareStatus:
    return await release_spare(client, spare_id, body or ReleaseRequest())


@router.delete(
    "/{spare_id}",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=CancelAccepted,
    summary="Cancel a spare: the workflow compensates what it already did",
    dependencies=[Depends(OPERATOR)],
)
async def cancel(
    spare_id: str,
    settings: AppSettings,
    client: TemporalClient,
) -> CancelAccepted:
    await cancel_spare(client, spare_id)
    return CancelAccepted(spare_id=spare_id, ui_url=settings.workflow_ui_url(spare_id))
