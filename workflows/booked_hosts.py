"""The ledger's look at its bookings' hosts before they start: a booked host that is
cordoned, gone from the inventory or out of room is told to its booking, which leaves it at
once for another host through the ledger (or fails then, saying why), never at its start.

Why the ledger looks, on a durable timer, and not each booking: one inventory read per
inventory every `booking_check_seconds` judges every booking in it (a booking's own timer would
add a read and a dozen history events per booking per look, and thousands of looks over a
30-day horizon would outgrow a booking's history); the timer runs only while a booking has not
started. It is deterministic (the look is an activity whose answer is in the history; the
interval comes with it from the worker's settings) and testable with a stand-in activity and
skipped time. The booking moves itself, so a move and its lead start never race: only a
booking still waiting asks the ledger for another host.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.placement import PlacementActivities
    from contracts.booking import (
        BOOKED_HOST_UNFIT_SIGNAL,
        CheckBookedHostsInput,
        CheckBookedHostsResult,
        HostUnfit,
    )
    from contracts.ledger import LedgerState

# A look that fails (the inventory unreachable) is retried a little; the next look comes anyway.
CHECK_RETRY = RetryPolicy(maximum_attempts=5, maximum_interval=timedelta(seconds=30))


class BookedHosts:
    """The bookings of one ledger that have not started, and the looks at their hosts."""

    def __init__(self, state: LedgerState) -> None:
        self.state = state

    def waiting(self) -> list[str]:
        """The bookings whose holds start later."""
        now = workflow.now()
        return [
            r.spare_id
            for r in self.state.reservations.values()
            if r.hold.start is not None and r.hold.start > now
        ]

    async def until_done_or_due(self, done: Callable[[], bool]) -> bool:
        """Wait until `done` (True) or the next look is due (False). No booking waiting: no
        timer, until one comes."""
        await workflow.wait_condition(lambda: done() or bool(self.waiting()))
        if done():
            return True
        checked = self.state.booked_hosts_checked_at
        if checked is None:
            return False  # the first look is at once: it tells the interval too
        due = checked + timedelta(seconds=self.state.booking_check_seconds) - workflow.now()
        if due <= timedelta(0):
            return False
        try:
            await workflow.wait_condition(done, timeout=due, timeout_summary="look at booked hosts")
        except TimeoutError:
            return False
        return True

    async def look(self) -> None:
        """Read the inventory once, and tell each booking whose host can no longer hold it."""
        state = self.state
        state.booked_hosts_checked_at = workflow.now()
        booked = self.waiting()
        if not booked:
            return
        try:
            result: CheckBookedHostsResult = await workflow.execute_activity_method(
                PlacementActivities.check_booked_hosts,
                CheckBookedHostsInput(
                    inventory=state.inventory,
                    reservations=list(state.reservations.values()),
                    booked=booked,
                    now=workflow.now(),
                ),
                start_to_close_timeout=state.timeouts.call,
                retry_policy=CHECK_RETRY,
            )
        except ActivityError as err:
            workflow.logger.warning("booked hosts not looked at: %s", err)
            return
        state.booking_check_seconds = result.next_check_seconds
        for unfit in result.unfit:
            workflow.logger.info("%s: %s", unfit.spare_id, unfit.reason)
            try:
                await workflow.get_external_workflow_handle(unfit.spare_id).signal(
                    BOOKED_HOST_UNFIT_SIGNAL, HostUnfit(host=unfit.host, reason=unfit.reason)
                )
            except Exception:
                # Its spare has not started or has ended: its own end frees the room.
                workflow.logger.info("booking %s was not told: it is not running", unfit.spare_id)
