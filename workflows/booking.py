"""A booked spare's part of PrepareSpare: its lead, the durable sleep to its lead start (left
for another host when its ledger says its host can no longer hold it: booked_hosts.py), the
end of its hold at its window's end with `spare.window_ending` ahead of it, and the
create-to-Ready times every spare tells its inventory's ledger (the leads of later bookings
are measured from them).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, FailureError

with workflow.unsafe.imports_passed_through():
    from activities.ledger import LedgerActivities
    from contracts import metrics
    from contracts.booking import (
        READY_TIME_SIGNAL,
        BookingInfo,
        BookingLeadInput,
        BookingLeadResult,
        HostUnfit,
        ReadyTime,
        Window,
        WindowChangeResult,
        template_key,
    )
    from contracts.failures import Failure
    from contracts.ledger import (
        LEDGER_RETRY,
        ChangeHoldInput,
        ChangeHoldResult,
        HeldRoom,
        Hold,
        Leaving,
        Reservation,
        ReserveInput,
        ledger_workflow_id,
    )
    from contracts.spare import Phase, SpareRequest
    from contracts.vm import VmFacts
    from webhooks.events import BookingWindow, EventType, HostMove

from .held_spare import HeldSpare
from .ledger_calls import reserve
from .notifier import Notifier
from .progress import Progress
from .rehearsal import Rehearsal
from .step_failure import StepFailed

# The lead is one query of the ledger: a few tries, then the configured default is no worse.
LEAD_RETRY = RetryPolicy(maximum_attempts=5, maximum_interval=timedelta(seconds=10))

# Where a booking holds its room and its window can still move.
WINDOWED = (Phase.BOOKED, Phase.CREATING_VM, Phase.WAITING_READY, Phase.READY)


@dataclass
class Booking:
    """The window of one booked spare, from its lead to its end."""

    req: SpareRequest
    window: Window
    progress: Progress
    notifier: Notifier
    measured: int = 0
    lead_seconds: int = 0
    window_ending_seconds: int = 0
    rehearsal_ahead_seconds: int = 0
    # The ledger's word that the booked host can no longer hold the booking.
    _unfit: HostUnfit | None = field(default=None, init=False)
    _waiting: bool = field(default=False, init=False)
    # One change of the window at a time: each asks the ledger, which may wait.
    _changing: asyncio.Lock = field(default_factory=asyncio.Lock, init=False)

    def host_unfit(self, unfit: HostUnfit) -> None:
        """The ledger's signal; heard only while the booking waits for its lead start."""
        if self._waiting:
            self._unfit = unfit

    async def hold(self) -> Hold:
        """The room to ask the ledger for: from the lead start to the window's end. (A booking
        the API made is reserved already; the ledger answers with that reservation.)"""
        lead: BookingLeadResult = await workflow.execute_activity_method(
            LedgerActivities.booking_lead,
            BookingLeadInput(inventory=self.req.inventory, template=self.req.template),
            start_to_close_timeout=self.req.timeouts.call,
            retry_policy=LEAD_RETRY,
        )
        self.measured = lead.measured
        self.window_ending_seconds = lead.window_ending_seconds
        self.rehearsal_ahead_seconds = lead.rehearsal_ahead_seconds
        return self.req.hold(workflow.now(), lead.lead_seconds)

    async def wait_for_lead_start(self, reservation: Reservation) -> Reservation:
        """`booked` until the lead start the reservation holds from: a durable timer, so a
        worker may stop and start meanwhile; a cancel ends it (compensation frees the room).
        A host that can no longer hold the booking is left for another at once; none: the
        booking fails now, saying why. Answers the reservation it holds at the lead start."""
        start = reservation.hold.start or workflow.now()
        self.lead_seconds = max(0, int((self.window.start - start).total_seconds()))
        self.progress.status.booking = BookingInfo(
            window=self.window,
            lead_seconds=self.lead_seconds,
            lead_start=start,
            measured=self.measured,
        )
        self.progress.enter(Phase.BOOKED, self._booked_on(reservation.host, start))
        metrics.booking(workflow.metric_meter(), "booked", self.progress.metric_cluster)
        self._waiting = True
        rehearsing = self._rehearse(reservation, start)
        try:
            while (wait := start - workflow.now()) > timedelta(0):
                try:
                    await workflow.wait_condition(
                        lambda: self._unfit is not None,
                        timeout=wait,
                        timeout_summary=f"until the lead start {start.isoformat()}",
                    )
                except TimeoutError:
                    break
                reservation = await self._move(reservation, start)
            if rehearsing is not None:
                await rehearsing  # done by now, or ends at this instant (bounded by the start)
        finally:
            self._waiting = False
            if rehearsing is not None and not rehearsing.done():
                rehearsing.cancel()  # the booking failed or was cancelled meanwhile
        return reservation

    def _rehearse(self, reservation: Reservation, start: datetime) -> asyncio.Task[None] | None:
        """The rehearsal, beside the wait, if the request asks for one (by default: when the
        window starts more than `rehearsal_ahead_seconds` ahead)."""
        wanted = self.window.rehearsal
        if wanted is None:
            ahead = self.window.start - workflow.now()
            wanted = ahead > timedelta(seconds=self.rehearsal_ahead_seconds)
        booking = self.progress.status.booking
        if not wanted or booking is None or start <= workflow.now():
            return None
        rehearsal = Rehearsal(self.req, booking, self.notifier)
        return asyncio.create_task(rehearsal.run(reservation.spare_id, reservation.host, start))

    def _booked_on(self, host: str, start: datetime) -> str:
        return (
            f"booked on {host} for {self.window.start.isoformat()} to "
            f"{self.window.end.isoformat()}; made from {start.isoformat()}"
        )

    async def _move(self, reservation: Reservation, start: datetime) -> Reservation:
        """Leave the unfit host for another over the same hold, through the ledger."""
        unfit, self._unfit = self._unfit, None
        assert unfit is not None
        if unfit.host != reservation.host:
            return reservation  # about a host it has left already
        booking = self.progress.status.booking
        assert booking is not None
        moves = len(booking.moved_from) + 1
        self.progress.amend_phase(f"{unfit.reason}: looking for another host")
        try:
            result = await reserve(
                ReserveInput(
                    inventory=self.req.inventory,
                    task_queue=workflow.info().task_queue,
                    request=self.req.vm_request(reservation.spare_id),
                    timeouts=self.req.timeouts,
                    hold=reservation.hold,
                    leaving=Leaving(host=unfit.host, move=moves),
                    cluster=self.req.cluster,
                )
            )
        except StepFailed as refused:
            raise StepFailed(
                f"{unfit.reason}, and no other host can hold the booking: {refused.reason}",
                refused.kind,
            ) from None
        moved = result.reservation
        assert moved is not None
        if moved.host == unfit.host:
            return moved  # it fits there after all (uncordoned meanwhile)
        booking.moved_from.append(unfit.host)
        self.progress.reserved(moved)
        self.progress.enter(
            Phase.BOOKED,
            f"moved from {unfit.host} ({unfit.reason}); {self._booked_on(moved.host, start)}",
        )
        self.notifier.send(
            EventType.BOOKING_MOVED,
            host=moved.host,
            reason=unfit.reason,
            move=HostMove(from_host=unfit.host, to_host=moved.host),
            occurrence=moves - 1,
        )
        return moved

    def refuse_change(self, end: datetime, phase: Phase, holding: bool) -> None:
        """The change_window Update's validator: a ValueError saying why `end` is refused."""
        if not holding or phase not in WINDOWED:
            raise ValueError(
                f"a window can be changed while the spare is booked or held (it is {phase.value})"
            )
        if end <= workflow.now():
            raise ValueError(f"end {end.isoformat()} is not in the future")
        if end <= self.window.start:
            raise ValueError(
                f"end {end.isoformat()} is not after the window's start "
                f"{self.window.start.isoformat()}"
            )

    async def change_end(self, end: datetime) -> tuple[WindowChangeResult, Reservation | None]:
        """Ask the ledger to hold the room until `end`: it decides under its lock whether the
        host keeps room for a longer window. Changed, the window ends then (the hold's timer
        and `spare.window_ending` follow it); refused, nothing changes. Answers the change and
        the reservation as the ledger holds it now."""
        async with self._changing:
            return await self._change_end(end)

    async def _change_end(self, end: datetime) -> tuple[WindowChangeResult, Reservation | None]:
        try:
            answer: ChangeHoldResult = await workflow.execute_activity_method(
                LedgerActivities.change_hold,
                ChangeHoldInput(
                    inventory=self.req.inventory,
                    task_queue=workflow.info().task_queue,
                    spare_id=workflow.info().workflow_id,
                    end=end,
                    timeouts=self.req.timeouts,
                ),
                start_to_close_timeout=self.req.timeouts.ledger,
                heartbeat_timeout=self.req.timeouts.heartbeat,
                retry_policy=LEDGER_RETRY,
            )
        except ActivityError as err:
            # The ledger did not answer in time: nothing changed, the caller may ask again
            # (an Update's failure fails the Update only, never the spare).
            raise ApplicationError(
                f"the window could not be changed: {err.cause or err}",
                type=Failure.LEDGER_INCONSISTENT,
            ) from None
        if answer.status == "not_held":
            raise ApplicationError(
                answer.reason or "the ledger holds no room for this spare",
                type=Failure.LEDGER_INCONSISTENT,
            )
        if answer.status == "no_capacity":
            return (
                WindowChangeResult(
                    status="no_capacity",
                    window=self.window,
                    **answer.model_dump(include=set(HeldRoom.model_fields)),
                ),
                answer.reservation,
            )
        before = self.window.end
        self.window = Window(start=self.window.start, end=end)
        if self.progress.status.booking is not None:
            self.progress.status.booking.window = self.window
        self.progress.amend_phase(
            f"its window ends at {end.isoformat()} (was {before.isoformat()})"
        )
        return WindowChangeResult(status="changed", window=self.window), answer.reservation

    def ready(self) -> None:
        """Ready: in time for the window, or a missed start."""
        in_time = workflow.now() <= self.window.start
        outcome = "ready_in_time" if in_time else "missed_start"
        metrics.booking(workflow.metric_meter(), outcome, self.progress.metric_cluster)

    def failed_before_start(self) -> None:
        if workflow.now() <= self.window.start:
            metrics.booking(workflow.metric_meter(), "missed_start", self.progress.metric_cluster)

    def ends(self) -> tuple[datetime, str]:
        """When the hold ends, and the release's reason then (asked anew: the end may move)."""
        return self.window.end, f"its window ended at {self.window.end.isoformat()}"

    async def held_to_the_end(self, held: HeldSpare, vm: VmFacts) -> str:
        """The hold (why it ended), with `spare.window_ending` told beside it."""
        ending = asyncio.ensure_future(self.tell_window_ending(self.notifier, vm))
        try:
            return await held.hold()
        finally:
            ending.cancel()

    async def tell_window_ending(self, notifier: Notifier, vm: VmFacts) -> None:
        """`spare.window_ending` once the end is `window_ending_seconds` away (at once when
        Ready later than that), and again for each new end a change of the window sets. Runs
        beside the hold; cancelled when the hold ends."""
        if self.window_ending_seconds <= 0:
            return
        told = 0
        while True:
            end = self.window.end
            notice_at = end - timedelta(seconds=self.window_ending_seconds)
            wait = notice_at - workflow.now()
            if wait > timedelta(0):
                try:
                    await workflow.wait_condition(
                        lambda: self.window.end != end,  # noqa: B023
                        timeout=wait,
                        timeout_summary=f"spare.window_ending at {notice_at.isoformat()}",
                    )
                    continue  # the end moved: its notice is counted from the new end
                except TimeoutError:
                    pass
            notifier.send(
                EventType.WINDOW_ENDING,
                host=vm.host,
                vm=vm,
                reason=f"its window ends at {end.isoformat()}",
                window=BookingWindow(start=self.window.start, end=end),
                occurrence=told,
            )
            told += 1
            await workflow.wait_condition(lambda: self.window.end != end)  # noqa: B023


async def tell_ready_time(req: SpareRequest, created_at: datetime) -> None:
    """Tell the inventory's ledger how long this spare took from its creation to Ready."""
    measured = ReadyTime(
        template=template_key(req.template),
        seconds=max(0.0, (workflow.now() - created_at).total_seconds()),
    )
    try:
        await workflow.get_external_workflow_handle(ledger_workflow_id(req.inventory)).signal(
            READY_TIME_SIGNAL, measured
        )
    except FailureError as err:
        # The ledger is between runs or gone: one time fewer to measure from, nothing more.
        workflow.logger.info("ready time not told to the ledger: %s", err)
