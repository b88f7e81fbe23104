"""`PATCH /v1/spares/{id}/window`: a booking's window ends later or sooner.

The end is checked here (422: in the past, not after the window's start, beyond the booking
horizon); the spare's `change_window` Update asks its inventory's ledger, which decides under
its lock whether the host keeps room for a longer window: 409 `no_capacity` with who holds the
room, until when it is free and when it is free again, or the changed window.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import FailureError

from contracts.booking import CHANGE_WINDOW_UPDATE, Window, WindowChange, WindowChangeResult
from contracts.ledger import holders
from contracts.spare import Phase, SpareStatus
from runtime.settings import Settings

from .errors import ApiError, Code, InvalidInput, NoCapacity, SpareConflict, TemporalUnavailable
from .spare_actions import ended_spare, ending_meanwhile
from .spare_runs import Scope, describe_spare, query_status
from .workers import require_worker

# Where a booking's window can still move (the spare's validator says the same).
WINDOWED = (Phase.BOOKED, Phase.CREATING_VM, Phase.WAITING_READY, Phase.READY)
# The ledger may run a placement for a longer window: longer than a plain update.
CHANGE_ANSWER_TIMEOUT = timedelta(seconds=60)


class WindowBody(BaseModel):
    """The window's new end (RFC 3339 with an offset); its start stays."""

    model_config = ConfigDict(extra="forbid")

    end: AwareDatetime = Field(description="When the booking ends now (its spare is released)")


class WindowChanged(BaseModel):
    spare_id: str
    window: Window


async def change_window(
    client: Client, settings: Settings, spare_id: str, body: WindowBody, scope: Scope = None
) -> WindowChanged:
    handle, run_status, task_queue = await describe_spare(client, spare_id, scope)
    if run_status != WorkflowExecutionStatus.RUNNING:
        raise ended_spare(spare_id, run_status, "change")
    await require_worker(client, task_queue)
    status = await query_status(handle, spare_id)
    window = _window_of(status)
    _check_end(settings, body.end, window, datetime.now(UTC))
    _check_phase(status)
    async with ending_meanwhile(client, spare_id, "change"):
        result = await _ask(settings, handle, spare_id, body.end)
    if result.status == "no_capacity":
        free = result.free_until.isoformat() if result.free_until else "now"
        again = (
            f"; free again from {result.free_again_at.isoformat()}" if result.free_again_at else ""
        )
        held = (
            f" by {holders(result.held_by, result.held_by_others)}"
            if result.held_by or result.held_by_others
            else f" ({result.reason})"
        )
        raise NoCapacity(
            f"the window of {spare_id} cannot end at {body.end.isoformat()}: its host's room is "
            f"held from {free}{held}{again}. Nothing changed",
            requested=1,
            placeable=0,
            held_by=result.held_by,
            free_until=result.free_until,
            free_again_at=result.free_again_at,
        )
    return WindowChanged(spare_id=spare_id, window=result.window)


def _window_of(status: SpareStatus) -> Window:
    if status.booking is None:
        raise SpareConflict(
            f"spare {status.spare_id} is not a booking: it has no window", Code.NOT_A_BOOKING
        )
    return status.booking.window


def _check_end(settings: Settings, end: datetime, window: Window, now: datetime) -> None:
    if end <= now:
        raise InvalidInput(
            "end",
            f"{end.isoformat()} is not in the future (now {now.isoformat()})",
            Code.WINDOW_END_PASSED,
        )
    if end <= window.start:
        raise InvalidInput(
            "end", f"{end.isoformat()} is not after the window's start {window.start.isoformat()}"
        )
    horizon = now + timedelta(days=settings.booking_horizon_days)
    if end > horizon:
        raise InvalidInput(
            "end",
            f"{end.isoformat()} is more than {settings.booking_horizon_days} days ahead "
            "(booking_horizon_days)",
            Code.WINDOW_TOO_FAR,
        )


def _check_phase(status: SpareStatus) -> None:
    if status.phase in WINDOWED:
        return
    if status.phase in (Phase.RELEASING, Phase.RELEASED):
        raise SpareConflict(
            f"spare {status.spare_id} is already {status.phase.value}: its window is over",
            Code.ALREADY_RELEASED,
        )
    raise SpareConflict(
        f"spare {status.spare_id} is {status.phase.value}: its window can be changed once it "
        "is booked",
        Code.SPARE_NOT_READY,
    )


async def _ask(
    settings: Settings, handle: WorkflowHandle[object, object], spare_id: str, end: datetime
) -> WindowChangeResult:
    try:
        result: WindowChangeResult = await handle.execute_update(
            CHANGE_WINDOW_UPDATE,
            WindowChange(end=end),
            result_type=WindowChangeResult,
            rpc_timeout=CHANGE_ANSWER_TIMEOUT,
        )
    except WorkflowUpdateFailedError as err:
        # Refused by the spare: its phase (or the clock) moved since we looked, say how; or
        # its ledger could not answer, somebody else's outage: say why.
        status = await query_status(handle, spare_id)
        _check_phase(status)
        if status.booking is not None:
            _check_end(settings, end, status.booking.window, datetime.now(UTC))
        cause = err.cause
        reason = cause.message if isinstance(cause, FailureError) else str(err)
        raise ApiError(
            f"the window of {spare_id} was not changed: {reason}", Code.TEMPORAL_ERROR
        ) from err
    except WorkflowUpdateRPCTimeoutOrCancelledError as err:
        raise TemporalUnavailable(
            f"no virtflow worker answered the change of {spare_id}'s window within "
            f"{CHANGE_ANSWER_TIMEOUT.total_seconds():g} s; read the spare before retrying"
        ) from err
    return result
