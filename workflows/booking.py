"""A booked spare's part of PrepareSpare: its lead, the durable sleep to its lead start, the
end of its hold at its window's end with `spare.window_ending` ahead of it, and the
create-to-Ready times every spare tells its inventory's ledger (the leads of later bookings
are measured from them).

Plain deterministic code with no module state: passed through the sandbox (worker/worker.py).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import FailureError

with workflow.unsafe.imports_passed_through():
    from activities.ledger import LedgerActivities
    from contracts import metrics
    from contracts.booking import (
        READY_TIME_SIGNAL,
        BookingInfo,
        BookingLeadInput,
        BookingLeadResult,
        ReadyTime,
        Window,
        template_key,
    )
    from contracts.ledger import Hold, Reservation, ledger_workflow_id
    from contracts.spare import Phase, SpareRequest
    from contracts.vm import VmFacts
    from webhooks.events import BookingWindow, EventType

from .notifier import Notifier
from .progress import Progress

# The lead is one query of the ledger: a few tries, then the configured default is no worse.
LEAD_RETRY = RetryPolicy(maximum_attempts=5, maximum_interval=timedelta(seconds=10))


class Booking:
    """The window of one booked spare, from its lead to its end."""

    def __init__(self, req: SpareRequest, window: Window, progress: Progress) -> None:
        self.req = req
        self.window = window
        self.progress = progress
        self.measured = 0
        self.lead_seconds = 0
        self.window_ending_seconds = 0

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
        return self.req.hold(workflow.now(), lead.lead_seconds)

    async def wait_for_lead_start(self, reservation: Reservation) -> None:
        """`booked` until the lead start the reservation holds from: a durable timer, so a
        worker may stop and start meanwhile; a cancel ends it (compensation frees the room)."""
        start = reservation.hold.start or workflow.now()
        self.lead_seconds = max(0, int((self.window.start - start).total_seconds()))
        self.progress.status.booking = BookingInfo(
            window=self.window,
            lead_seconds=self.lead_seconds,
            lead_start=start,
            measured=self.measured,
        )
        self.progress.enter(
            Phase.BOOKED,
            f"booked on {reservation.host} for {self.window.start.isoformat()} to "
            f"{self.window.end.isoformat()}; made from {start.isoformat()}",
        )
        metrics.booking(workflow.metric_meter(), "booked")
        wait = start - workflow.now()
        if wait > timedelta(0):
            await workflow.sleep(wait, summary=f"until the lead start {start.isoformat()}")

    def ready(self) -> None:
        """Ready: in time for the window, or a missed start."""
        in_time = workflow.now() <= self.window.start
        metrics.booking(workflow.metric_meter(), "ready_in_time" if in_time else "missed_start")

    def failed_before_start(self) -> None:
        if workflow.now() <= self.window.start:
            metrics.booking(workflow.metric_meter(), "missed_start")

    def ends(self) -> tuple[datetime, str]:
        """When the hold ends, and the release's reason then (asked anew: the end may move)."""
        return self.window.end, f"its window ended at {self.window.end.isoformat()}"

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
