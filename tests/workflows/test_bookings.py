"""A booking on stand-in activities, days in seconds of skipped time: it holds its room from its
lead start to its window's end, creates nothing before the lead start, is Ready before the
window opens, held until it ends, and given back at once when cancelled. A booked host that
is cordoned before the lead start is left for another at once, or the booking fails then. A
rehearsal makes, readies and releases a spare of its shape on its host before the lead start;
one that fails is told, and the booking stays."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from contracts.booking import CHANGE_WINDOW_UPDATE, Window, WindowChange, WindowChangeResult
from contracts.ledger import ChangeHoldResult, Hold, LedgerState, Reservation, ledger_workflow_id
from contracts.spare import Phase, ReleaseRequest, SpareRequest, SpareResult, SpareStatus
from tests.helpers import assert_eventually, new_worker
from tests.workflows.standins import StandIns
from webhooks.events import EventType, HostMove
from workflows.ledger import InventoryLedger
from workflows.prepare_spare import PrepareSpare
from workflows.rehearsal import rehearsal_request
from workflows.release_spare import ReleaseSpare

LEAD = 600
RELEASE_STEPS = ["cordon_node", "drain_node", "delete_node", "destroy_vm", "free_capacity"]


def request(**fields: Any) -> SpareRequest:
    base = {"request_id": f"r{uuid.uuid4().hex[:10]}", "cluster": "lab", "cpu": 2}
    return SpareRequest.model_validate({"memory_mb": 2048, **base, **fields})


async def start(client: Client, task_queue: str, req: SpareRequest) -> WorkflowHandle[Any, Any]:
    return await client.start_workflow(
        PrepareSpare.run, req, id=req.spare_id, task_queue=task_queue
    )


async def phase_is(handle: WorkflowHandle[Any, Any], phase: Phase) -> SpareStatus:
    async def reached() -> SpareStatus:
        status: SpareStatus = await handle.query(PrepareSpare.status)
        assert status.phase == phase, status.phase
        return status

    return await assert_eventually(reached)


def at(status: SpareStatus, phase: Phase) -> datetime:
    return next(step.at for step in status.steps if step.phase == phase)


async def two_days_ahead(
    env: WorkflowEnvironment, hours: float = 4, rehearsal: bool | None = False
) -> Window:
    """Not rehearsed unless asked: the tests of rehearsals ask (None: by default)."""
    start = (await env.get_current_time()) + timedelta(days=2)
    return Window(start=start, end=start + timedelta(hours=hours), rehearsal=rehearsal)


async def test_a_booking_two_days_ahead_is_made_at_its_lead_start_and_ready_before_it_opens(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    env, standins = time_skipping_env, StandIns(lead_seconds=LEAD)
    window = await two_days_ahead(env)
    req = request(window=window)
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        booked = await phase_is(handle, Phase.BOOKED)
        assert booked.booking is not None
        assert (booked.booking.lead_seconds, booked.booking.lead_start) == (
            LEAD,
            window.start - timedelta(seconds=LEAD),
        )
        assert standins.holds[req.spare_id] == window.hold(LEAD)

        await env.sleep(timedelta(days=1))
        assert (await handle.query(PrepareSpare.status)).phase == Phase.BOOKED
        assert standins.asked("create_vm") == []

        await env.sleep(timedelta(days=1) - timedelta(seconds=LEAD // 2))
        ready = await phase_is(handle, Phase.READY)
        assert standins.asked("create_vm") == [req.spare_id]
        assert window.start - timedelta(seconds=LEAD) <= at(ready, Phase.CREATING_VM)
        assert at(ready, Phase.READY) < window.start
        result: SpareResult = await handle.result()
        final = await handle.query(PrepareSpare.status)  # a worker answers, even once ended

    assert result.phase == Phase.RELEASED
    assert result.reason == f"its window ended at {window.end.isoformat()}"
    assert [name for name, _ in standins.calls if name in RELEASE_STEPS] == RELEASE_STEPS
    assert at(final, Phase.RELEASING) >= window.end


async def test_a_cancelled_booking_gives_its_room_back_and_creates_nothing(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    env, standins = time_skipping_env, StandIns(lead_seconds=LEAD)
    req = request(window=await two_days_ahead(env))
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        await phase_is(handle, Phase.BOOKED)
        await handle.cancel()
        with pytest.raises(WorkflowFailureError):
            await handle.result()
        assert (await handle.query(PrepareSpare.status)).phase == Phase.CANCELLED
    assert standins.asked("free_capacity") == [req.spare_id]
    assert standins.asked("create_vm") == []


async def test_an_ordinary_spare_holds_its_room_until_its_ttl_can_have_ended(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    env, standins = time_skipping_env, StandIns()
    req = request(ttl_seconds=3600)
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        began = await env.get_current_time()
        handle = await start(env.client, w.task_queue, req)

        async def reserved() -> None:
            assert req.spare_id in standins.holds

        await assert_eventually(reserved)
        await handle.terminate("test over")
    hold = standins.holds[req.spare_id]
    assert hold is not None and hold.start is None and hold.end is not None
    longest = req.create_timeout_seconds + req.ready_timeout_seconds + 3600
    longest += req.drain_timeout_seconds
    assert timedelta(0) <= hold.end - began - timedelta(seconds=longest) < timedelta(minutes=1)
    assert standins.asked("booking_lead") == []


@pytest.mark.parametrize(
    ("hours", "notice", "sent_at"),
    [
        pytest.param(4, 1800, "end - notice", id="the notice before the end"),
        pytest.param(0.5, 3600, "ready", id="a window shorter than the notice: when Ready"),
    ],
)
async def test_a_booking_says_its_window_is_ending_a_set_time_before_its_end(
    time_skipping_env: WorkflowEnvironment, hours: float, notice: int, sent_at: str
) -> None:
    env = time_skipping_env
    standins = StandIns(lead_seconds=LEAD, window_ending_seconds=notice, receiver="ctrl")
    window = await two_days_ahead(env, hours)
    req = request(window=window)
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        result: SpareResult = await handle.result()

    assert result.phase == Phase.RELEASED
    # Deliveries run side by side: events sent in one workflow task may arrive in any order.
    sent = sorted(event.type.value for _, event in standins.events)
    assert sent == [
        "spare.ready",
        "spare.release_started",
        "spare.released",
        "spare.reserved",
        "spare.vm_created",
        "spare.window_ending",
    ]
    events = {e.type.value: e for _, e in standins.events}
    assert events["spare.ready"].timestamp <= events["spare.window_ending"].timestamp
    assert events["spare.window_ending"].timestamp < events["spare.release_started"].timestamp
    ending = events["spare.window_ending"]
    expected = (
        window.end - timedelta(seconds=notice)
        if sent_at == "end - notice"
        else events["spare.ready"].timestamp
    )
    assert timedelta(0) <= ending.timestamp - expected < timedelta(minutes=1)
    assert ending.data.window is not None
    assert (ending.data.window.start, ending.data.window.end) == (window.start, window.end)
    assert ending.data.reason == f"its window ends at {window.end.isoformat()}"
    assert ending.data.host == "bm-1"


async def watching_ledger(
    client: Client, task_queue: str, req: SpareRequest, standins: StandIns
) -> WorkflowHandle[Any, Any]:
    """The booking's inventory's ledger, holding what the stand-in reserved for it: its look at
    the booked hosts (a stand-in too) is what the test is after."""
    hold = standins.holds[req.spare_id]
    reservation = Reservation.of(
        req.vm_request(req.spare_id), standins.host, 101, req.spare_id, hold=hold
    )
    state = LedgerState(inventory=req.inventory, reservations={req.spare_id: reservation})
    return await client.start_workflow(
        InventoryLedger.run, state, id=ledger_workflow_id(req.inventory), task_queue=task_queue
    )


def booked_request(window: Window) -> SpareRequest:
    # An inventory of its own: its ledger is this test's alone.
    return request(window=window, inventory=f"inv-{uuid.uuid4().hex[:8]}")


async def test_a_booked_host_cordoned_a_day_before_is_left_for_another_and_ready_there(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    env = time_skipping_env
    standins = StandIns(lead_seconds=LEAD, other_hosts=["bm-2"], receiver="ctrl")
    window = await two_days_ahead(env)
    req = booked_request(window)
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, InventoryLedger, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        await phase_is(handle, Phase.BOOKED)
        ledger = await watching_ledger(env.client, w.task_queue, req, standins)
        await env.sleep(timedelta(days=1))
        assert standins.asked("check_booked_hosts") != []  # looked, found nothing to move
        assert standins.asked("leaving") == []

        standins.cordoned.add("bm-1")
        await env.sleep(timedelta(minutes=15))

        async def moved() -> SpareStatus:
            status: SpareStatus = await handle.query(PrepareSpare.status)
            assert status.host == "bm-2", status.host
            return status

        status = await assert_eventually(moved)
        assert status.phase == Phase.BOOKED
        assert status.booking is not None and status.booking.moved_from == ["bm-1"]
        assert status.steps[-1].detail.startswith("moved from bm-1 (host bm-1 is cordoned); ")
        assert standins.asked("leaving") == ["bm-1"]
        assert standins.asked("create_vm") == []
        moves = [e.data for _, e in standins.events if e.type == EventType.BOOKING_MOVED]
        assert [(m.move, m.host, m.reason) for m in moves] == [
            (HostMove(from_host="bm-1", to_host="bm-2"), "bm-2", "host bm-1 is cordoned")
        ]

        await env.sleep(timedelta(days=1) - timedelta(minutes=15, seconds=LEAD // 2))
        ready = await phase_is(handle, Phase.READY)
        assert ready.vm is not None and ready.vm.host == "bm-2"
        assert at(ready, Phase.READY) < window.start
        await handle.terminate("test over")
        await ledger.terminate("test over")


async def test_a_booked_host_cordoned_with_no_other_host_fails_the_booking_then_saying_why(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    env = time_skipping_env
    standins = StandIns(lead_seconds=LEAD, receiver="ctrl")
    window = await two_days_ahead(env)
    req = booked_request(window)
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, InventoryLedger, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        await phase_is(handle, Phase.BOOKED)
        ledger = await watching_ledger(env.client, w.task_queue, req, standins)
        await env.sleep(timedelta(days=1))
        standins.cordoned.add("bm-1")
        with pytest.raises(WorkflowFailureError) as failed:
            await handle.result()
        final = await handle.query(PrepareSpare.status)
        await ledger.terminate("test over")

    reason = "host bm-1 is cordoned, and no other host can hold the booking: no_capacity: "
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "NoCapacity"
    assert cause.message.startswith(reason)
    assert final.phase == Phase.FAILED
    assert at(final, Phase.FAILED) < window.start - timedelta(hours=20)
    assert standins.asked("create_vm") == []
    assert standins.asked("free_capacity") == [req.spare_id]
    told = [e.data.reason or "" for _, e in standins.events if e.type == EventType.FAILED]
    assert len(told) == 1 and told[0].startswith(reason)


async def change_window(handle: WorkflowHandle[Any, Any], end: datetime) -> WindowChangeResult:
    result: WindowChangeResult = await handle.execute_update(
        CHANGE_WINDOW_UPDATE, WindowChange(end=end), result_type=WindowChangeResult
    )
    return result


async def test_a_longer_window_moves_the_hold_and_its_end_with_it(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    env = time_skipping_env
    standins = StandIns(lead_seconds=LEAD, window_ending_seconds=1800, receiver="ctrl")
    window = await two_days_ahead(env)
    longer = window.end + timedelta(hours=2)
    req = request(window=window)
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        await phase_is(handle, Phase.BOOKED)
        await env.sleep(window.start - await env.get_current_time())
        await phase_is(handle, Phase.READY)

        changed = await change_window(handle, longer)
        assert (changed.status, changed.window) == (
            "changed",
            Window(start=window.start, end=longer),
        )
        status = await handle.query(PrepareSpare.status)
        assert status.booking is not None and status.booking.window.end == longer
        result: SpareResult = await handle.result()
        final = await handle.query(PrepareSpare.status)

    assert standins.holds[req.spare_id] == Hold(start=window.hold(LEAD).start, end=longer)
    assert result.reason == f"its window ended at {longer.isoformat()}"
    assert at(final, Phase.RELEASING) >= longer
    endings = [e for _, e in standins.events if e.type.value == "spare.window_ending"]
    assert [(e.data.window.end if e.data.window else None) for e in endings] == [longer]
    assert endings[0].timestamp >= longer - timedelta(seconds=1800)


async def test_a_shorter_window_ends_the_booking_sooner(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    env, standins = time_skipping_env, StandIns(lead_seconds=LEAD)
    window = await two_days_ahead(env)
    sooner = window.start + timedelta(hours=1)
    req = request(window=window)
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        await phase_is(handle, Phase.BOOKED)
        changed = await change_window(handle, sooner)
        assert (changed.status, changed.window.end) == ("changed", sooner)
        assert standins.holds[req.spare_id] == Hold(start=window.hold(LEAD).start, end=sooner)
        result: SpareResult = await handle.result()
        final = await handle.query(PrepareSpare.status)

    assert result.reason == f"its window ended at {sooner.isoformat()}"
    assert sooner <= at(final, Phase.RELEASING) < window.end


async def test_a_longer_window_the_ledger_has_no_room_for_changes_nothing(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    env = time_skipping_env
    window = await two_days_ahead(env)
    refusal = ChangeHoldResult(
        status="no_capacity",
        reason="bm-1 has no room",
        held_by=["spare-lab-next"],
        held_by_others=2,
        free_until=window.end + timedelta(minutes=30),
        free_again_at=window.end + timedelta(hours=3),
    )
    standins = StandIns(lead_seconds=LEAD, extension_refused=refusal)
    req = request(window=window)
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        await phase_is(handle, Phase.BOOKED)
        refused = await change_window(handle, window.end + timedelta(hours=2))
        assert refused.model_dump() == {
            "status": "no_capacity",
            "window": window.model_dump(),
            "reason": "bm-1 has no room",
            "held_by": ["spare-lab-next"],
            "held_by_others": 2,
            "free_until": refusal.free_until,
            "free_again_at": refusal.free_again_at,
        }
        result: SpareResult = await handle.result()

    assert standins.holds[req.spare_id] == window.hold(LEAD)
    assert result.reason == f"its window ended at {window.end.isoformat()}"


@pytest.mark.parametrize(
    ("end", "refusal"),
    [
        pytest.param(lambda w, now: now - timedelta(minutes=1), "is not in the future", id="past"),
        pytest.param(lambda w, now: w.start, "is not after the window's start", id="at start"),
    ],
)
async def test_a_window_end_before_now_or_its_start_is_refused_by_the_validator(
    time_skipping_env: WorkflowEnvironment, end: Any, refusal: str
) -> None:
    env, standins = time_skipping_env, StandIns(lead_seconds=LEAD)
    window = await two_days_ahead(env)
    req = request(window=window)
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        await phase_is(handle, Phase.BOOKED)
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await change_window(handle, end(window, await env.get_current_time()))
        assert refusal in str(refused.value.cause)
        await handle.terminate("test over")
    assert standins.asked("change_hold") == []


async def test_an_ordinary_spare_has_no_window_to_change(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    env, standins = time_skipping_env, StandIns()
    req = request(ttl_seconds=3600)
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        await phase_is(handle, Phase.READY)
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await change_window(handle, (await env.get_current_time()) + timedelta(hours=2))
        assert "not a booking" in str(refused.value.cause)
        await handle.terminate("test over")


async def test_a_release_before_the_end_ends_the_booking_early(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    env, standins = time_skipping_env, StandIns(lead_seconds=LEAD)
    window = await two_days_ahead(env)
    req = request(window=window)
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        await phase_is(handle, Phase.BOOKED)
        await env.sleep(window.start + timedelta(hours=1) - await env.get_current_time())
        await phase_is(handle, Phase.READY)
        await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="upgrade done"))
        result: SpareResult = await handle.result()
        final = await handle.query(PrepareSpare.status)

    assert (result.phase, result.reason) == (Phase.RELEASED, "upgrade done")
    assert at(final, Phase.RELEASED) < window.end
    assert [name for name, _ in standins.calls if name in RELEASE_STEPS] == RELEASE_STEPS


async def test_a_worker_stopped_across_the_lead_timer_is_replaced_and_the_spare_is_ready_in_time(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    env, standins = time_skipping_env, StandIns(lead_seconds=LEAD)
    window = await two_days_ahead(env)
    req = request(window=window)
    task_queue = f"tq-{uuid.uuid4()}"
    # Without a cache the first worker keeps no sticky queue: the time-skipping server would
    # route the next task there until a schedule-to-start timeout its stopped clock never
    # reaches. (A real server moves it to the task queue after 5 s.)
    async with new_worker(
        env.client,
        PrepareSpare,
        ReleaseSpare,
        activities=standins.activities(),
        task_queue=task_queue,
        max_cached_workflows=0,
    ):
        handle = await start(env.client, task_queue, req)
        await phase_is(handle, Phase.BOOKED)
    # No worker at all while the booking sleeps through most of its timer.
    await env.sleep(window.start - timedelta(seconds=2 * LEAD) - await env.get_current_time())
    assert standins.asked("create_vm") == []
    # A new worker (its own empty cache: it replays the booking's history) takes over.
    async with new_worker(
        env.client,
        PrepareSpare,
        ReleaseSpare,
        activities=standins.activities(),
        task_queue=task_queue,
    ):
        assert (await handle.query(PrepareSpare.status)).phase == Phase.BOOKED
        await env.sleep(timedelta(seconds=LEAD + LEAD // 2))
        ready = await phase_is(handle, Phase.READY)
        await handle.terminate("test over")

    assert standins.asked("create_vm") == [req.spare_id]
    assert window.start - timedelta(seconds=LEAD) <= at(ready, Phase.CREATING_VM)
    assert at(ready, Phase.READY) < window.start


def rehearsal_id(req: SpareRequest, host: str = "bm-1") -> str:
    return rehearsal_request(req, req.spare_id, host).spare_id


async def test_a_rehearsal_makes_readies_and_releases_a_spare_on_the_host_before_the_lead_start(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    env, standins = time_skipping_env, StandIns(lead_seconds=LEAD, receiver="ctrl")
    window = await two_days_ahead(env, rehearsal=None)  # two days ahead: rehearsed by default
    req = request(window=window)
    rehearsal = rehearsal_id(req)
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        await phase_is(handle, Phase.BOOKED)
        child = env.client.get_workflow_handle(rehearsal, result_type=SpareResult)
        rehearsed = await child.result()
        assert (rehearsed.phase, rehearsed.host, rehearsed.reason) == (
            Phase.RELEASED,
            "bm-1",
            "rehearsal over",
        )
        assert (await child.describe()).parent_id == req.spare_id  # its booking's child
        child_status: SpareStatus = await child.query(PrepareSpare.status)
        assert at(child_status, Phase.READY) < at(child_status, Phase.RELEASED)
        assert at(child_status, Phase.RELEASED) < window.start - timedelta(seconds=LEAD)
        status: SpareStatus = await handle.query(PrepareSpare.status)
        assert status.phase == Phase.BOOKED
        assert status.booking is not None and status.booking.rehearsal is not None
        assert status.booking.rehearsal.model_dump() == {
            "spare_id": rehearsal,
            "host": "bm-1",
            "outcome": "passed",
            "reason": None,
        }
        assert standins.asked("create_vm") == [rehearsal]
        assert rehearsal in standins.asked("destroy_vm")
        assert rehearsal in standins.asked("free_capacity")
        assert standins.requests[rehearsal].node_name_regex == "^bm\\-1$"

        await env.sleep(timedelta(days=2) - timedelta(seconds=LEAD // 2))
        ready = await phase_is(handle, Phase.READY)
        assert standins.asked("create_vm") == [rehearsal, req.spare_id]
        assert at(ready, Phase.READY) < window.start
        await handle.terminate("test over")
    # The upgrade controller hears of the booking only, and of no failed rehearsal.
    assert {e.data.spare_id for _, e in standins.events} == {req.spare_id}
    assert EventType.BOOKING_REHEARSAL_FAILED not in {e.type for _, e in standins.events}


async def test_a_failed_rehearsal_is_told_and_the_booking_stays_and_is_ready_in_time(
    time_skipping_env: WorkflowEnvironment,
) -> None:
    env, standins = time_skipping_env, StandIns(lead_seconds=LEAD, receiver="ctrl")
    window = await two_days_ahead(env, rehearsal=True)
    req = request(window=window)
    rehearsal = rehearsal_id(req)
    standins.create_refusals[rehearsal] = "template debian-12: no such disk image"
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        await phase_is(handle, Phase.BOOKED)
        with pytest.raises(WorkflowFailureError):
            await env.client.get_workflow_handle(rehearsal).result()

        async def told() -> SpareStatus:
            status: SpareStatus = await handle.query(PrepareSpare.status)
            assert status.booking is not None and status.booking.rehearsal is not None
            assert status.booking.rehearsal.outcome == "failed"
            return status

        status = await assert_eventually(told)
        assert status.phase == Phase.BOOKED
        assert status.booking is not None and status.booking.rehearsal is not None
        assert status.booking.rehearsal.reason == "template debian-12: no such disk image"
        failed = [e for _, e in standins.events if e.type == EventType.BOOKING_REHEARSAL_FAILED]
        assert [(e.data.spare_id, e.data.host, e.data.reason) for e in failed] == [
            (
                req.spare_id,
                "bm-1",
                f"rehearsal {rehearsal} on bm-1: template debian-12: no such disk image",
            )
        ]

        await env.sleep(timedelta(days=2) - timedelta(seconds=LEAD // 2))
        ready = await phase_is(handle, Phase.READY)
        assert at(ready, Phase.READY) < window.start
        await handle.terminate("test over")
    assert standins.asked("create_vm") == [rehearsal, req.spare_id]
    assert EventType.FAILED not in {e.type for _, e in standins.events}


@pytest.mark.parametrize(
    ("ahead", "asked", "rehearsed"),
    [
        (timedelta(minutes=50), None, False),  # within the hour: not by default
        (timedelta(minutes=50), True, True),
        (timedelta(days=2), False, False),
    ],
)
async def test_a_booking_is_rehearsed_when_asked_or_by_default_when_more_than_an_hour_ahead(
    time_skipping_env: WorkflowEnvironment, ahead: timedelta, asked: bool | None, rehearsed: bool
) -> None:
    env, standins = time_skipping_env, StandIns(lead_seconds=LEAD)
    begins = (await env.get_current_time()) + ahead
    req = request(window=Window(start=begins, end=begins + timedelta(hours=1), rehearsal=asked))
    async with new_worker(
        env.client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(env.client, w.task_queue, req)
        status = await phase_is(handle, Phase.BOOKED)
        assert status.booking is not None
        assert (status.booking.rehearsal is not None) == rehearsed
        if rehearsed:
            await env.client.get_workflow_handle(rehearsal_id(req)).result()
        await handle.terminate("test over")
    assert standins.asked("create_vm") == ([rehearsal_id(req)] if rehearsed else [])


async def test_a_booking_cancelled_while_it_rehearses_gives_its_room_back_and_ends_it(
    client: Client,
) -> None:
    # On the local server, not the time-skipping one: nothing here waits for time, and an
    # activity cancelled there keeps it from skipping time for the tests after.
    standins = StandIns(lead_seconds=LEAD, create_runs_until_cancelled=True)
    begins = datetime.now(UTC) + timedelta(days=2)
    window = Window(start=begins, end=begins + timedelta(hours=4), rehearsal=True)
    # A cancel reaches the running create with its next heartbeat: soon.
    req = request(window=window, timeouts={"heartbeat_seconds": 1})
    rehearsal = rehearsal_id(req)
    async with new_worker(
        client, PrepareSpare, ReleaseSpare, activities=standins.activities()
    ) as w:
        handle = await start(client, w.task_queue, req)

        async def rehearsing() -> None:
            assert standins.asked("create_vm") == [rehearsal]

        await assert_eventually(rehearsing)
        await handle.cancel()
        with pytest.raises(WorkflowFailureError):
            await handle.result()  # not held up by its rehearsal's own undoing
        assert standins.asked("free_capacity") == [req.spare_id]
        standins.create_may_stop.set()
        child = client.get_workflow_handle(rehearsal)

        async def rehearsal_ended() -> None:
            assert (await child.describe()).status == WorkflowExecutionStatus.CANCELED

        await assert_eventually(rehearsal_ended)
    assert standins.asked("create_vm cancelled") == [rehearsal]
    assert rehearsal in standins.asked("destroy_vm")
    assert rehearsal in standins.asked("free_capacity")
