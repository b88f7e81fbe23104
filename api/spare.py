"""`/v1/spares` routes: thin calls into starting a spare (`spare_start.py`) and acting on one
(`spare_actions.py`); errors become problem details in `problems.py`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends, Request, Response, status
from pydantic import BaseModel
from temporalio.client import Client

from contracts.spare import ReleaseRequest, SpareStatus
from runtime.settings import Settings

from .auth import ANY_ROLE, OPERATOR, UPGRADE_CONTROLLER, CurrentCaller, app_settings
from .errors import Code
from .problems import TEMPORAL_ROUTE_WITH_INPUT, responses
from .spare_actions import SpareView, cancel_spare, release_spare, spare_status
from .spare_start import PrepareAccepted, PrepareBody, start_spares
from .spare_window import WindowBody, WindowChanged, change_window

router = APIRouter(prefix="/v1", tags=["spares"])


def spare_location(spare_id: str) -> str:
    return f"{router.prefix}/spares/{spare_id}"


def _accepted(description: str) -> dict[int | str, dict[str, object]]:
    return {
        202: {
            "description": description,
            "headers": {
                "Location": {
                    "description": "The spare: `GET` it to follow its phase",
                    "schema": {"type": "string"},
                }
            },
        }
    }


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
    "/spares",
    operation_id="prepareSpare",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=PrepareAccepted,
    summary="Ask for a spare node",
    description=(
        "Starts the PrepareSpare workflow with id `spare-<cluster>-<request_id>`. A request_id "
        "names exactly one spare, ever: the same body again answers with the same spare, "
        "running or ended (id conflict policy USE_EXISTING, id reuse policy REJECT_DUPLICATE: "
        "an ended spare is never started again; ask with a new request_id); a different body "
        "reusing the request_id answers 409 `request_conflict`. With `count` > 1 the spares "
        "have ids `spare-<cluster>-<request_id>-<i>` and form one group (`anti_affinity_group`, "
        "default the request_id): anti-affinity and every `topology_spread` constraint count "
        "them, each member placed with the members before it counted. `near` names the VM or "
        "the Node being replaced; one the inventory does not have is 422 `near_unknown`. "
        "A single spare (without `wait_for_capacity`) whose time meets a booking's room in an "
        "inventory that holds bookings is 409 `no_capacity` with `held_by` naming them."
    ),
    responses={
        **_accepted("Started (or found): `Location` is the (first) spare"),
        **responses(
            *TEMPORAL_ROUTE_WITH_INPUT,
            Code.CLUSTER_FORBIDDEN,
            Code.REQUEST_CONFLICT,
            Code.NO_CAPACITY,
            Code.CLUSTER_BUDGET_EXCEEDED,
            Code.UNKNOWN_CLUSTER,
            Code.NOT_ALLOWED_FOR_CLUSTER,
            Code.UNKNOWN_INVENTORY,
            Code.UNKNOWN_RECEIVER,
            Code.UNKNOWN_TEMPLATE,
            Code.UNKNOWN_POOL,
            Code.NO_MATCHING_HOST,
            Code.NEAR_UNKNOWN,
            Code.INVENTORY_UNAVAILABLE,
            Code.BODY_TOO_LARGE,
        ),
    },
    dependencies=[Depends(UPGRADE_CONTROLLER)],
)
async def prepare(
    request: PrepareBody,
    settings: AppSettings,
    client: TemporalClient,
    response: Response,
    http: Request,
    caller: CurrentCaller,
) -> PrepareAccepted:
    caller.require_cluster(request.cluster)
    accepted = await start_spares(client, settings, request, http.app.state.admission)
    response.headers["Location"] = spare_location(accepted.spare_id)
    return accepted


@router.get(
    "/spares/{spare_id}",
    operation_id="getSpare",
    response_model=SpareView,
    summary="Status of a spare: phase, host, VM, what it waits for, its Temporal UI link",
    responses=responses(*TEMPORAL_ROUTE_WITH_INPUT, Code.SPARE_NOT_FOUND),
    dependencies=[Depends(ANY_ROLE)],
)
async def get_spare(
    spare_id: str,
    settings: AppSettings,
    client: TemporalClient,
    caller: CurrentCaller,
) -> SpareView:
    return await spare_status(client, settings, spare_id, caller.clusters)


@router.post(
    "/spares/{spare_id}/release",
    operation_id="releaseSpare",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=SpareStatus,
    summary="Release a Ready spare (cordon, drain, delete the Node, destroy the VM)",
    description=(
        "Accepted once the spare is Ready; answers its status (release takes a while: follow "
        "`Location` until the phase is `released`). Before Ready: 409 `spare_not_ready`; "
        "released or being released: 409 `already_released`; ended otherwise: 409 "
        "`spare_ended`."
    ),
    responses={
        **_accepted("Release started: `Location` is the spare"),
        **responses(
            *TEMPORAL_ROUTE_WITH_INPUT,
            Code.SPARE_NOT_FOUND,
            Code.SPARE_NOT_READY,
            Code.ALREADY_RELEASED,
            Code.SPARE_ENDED,
        ),
    },
    dependencies=[Depends(UPGRADE_CONTROLLER)],
)
async def release(
    spare_id: str,
    client: TemporalClient,
    response: Response,
    caller: CurrentCaller,
    body: Annotated[ReleaseRequest | None, Body()] = None,
) -> SpareStatus:
    released = await release_spare(client, spare_id, body or ReleaseRequest(), caller.clusters)
    response.headers["Location"] = spare_location(spare_id)
    return released


@router.delete(
    "/spares/{spare_id}",
    operation_id="cancelSpare",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=CancelAccepted,
    summary="Cancel a spare: the workflow compensates what it already did",
    description="The emergency stop. An ended spare: 409 `already_released` or `spare_ended`.",
    responses={
        **_accepted("Cancel requested: `Location` is the spare"),
        **responses(
            *TEMPORAL_ROUTE_WITH_INPUT,
            Code.SPARE_NOT_FOUND,
            Code.ALREADY_RELEASED,
            Code.SPARE_ENDED,
        ),
    },
    dependencies=[Depends(OPERATOR)],
)
async def cancel(
    spare_id: str,
    settings: AppSettings,
    client: TemporalClient,
    response: Response,
    caller: CurrentCaller,
) -> CancelAccepted:
    await cancel_spare(client, spare_id, caller.clusters)
    response.headers["Location"] = spare_location(spare_id)
    return CancelAccepted(spare_id=spare_id, ui_url=settings.workflow_ui_url(spare_id))


@router.patch(
    "/spares/{spare_id}/window",
    operation_id="changeSpareWindow",
    response_model=WindowChanged,
    summary="End a booking's window later or sooner",
    description=(
        "The window's start stays; its end moves, and the room it holds, its hold's timer and "
        "`spare.window_ending` with it. A sooner end is always taken; a later one if the "
        "inventory's ledger, deciding under its lock, finds the host's room free until then: "
        "otherwise 409 `no_capacity` with `held_by` (the spares of its cluster holding the room), "
        "`free_until` (the latest end it allows now) and `free_again_at` (when it is free "
        "again), and nothing changed. 422 naming `end`: `window_end_passed` (not in the "
        "future), `invalid_request` (not after the window's start), `window_too_far` (more "
        "than `booking_horizon_days` ahead). A spare without a window: 409 `not_a_booking`; "
        "released or being released: 409 `already_released`. A release (`POST .../release`) "
        "ends a Ready booking before its end."
    ),
    responses=responses(
        *TEMPORAL_ROUTE_WITH_INPUT,
        Code.SPARE_NOT_FOUND,
        Code.NOT_A_BOOKING,
        Code.NO_CAPACITY,
        Code.SPARE_NOT_READY,
        Code.ALREADY_RELEASED,
        Code.SPARE_ENDED,
        Code.WINDOW_END_PASSED,
        Code.WINDOW_TOO_FAR,
    ),
    dependencies=[Depends(UPGRADE_CONTROLLER)],
)
async def change_spare_window(
    spare_id: str,
    body: WindowBody,
    settings: AppSettings,
    client: TemporalClient,
    caller: CurrentCaller,
) -> WindowChanged:
    return await change_window(client, settings, spare_id, body, caller.clusters)
