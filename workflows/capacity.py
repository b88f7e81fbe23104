"""A spare's request for room in its inventory's ledger: reserved at once, or waited for.

The ledger answers at once when a host fits. Without one, a spare with `wait_for_capacity`
waits in the ledger's queue until the ledger signals the grant (PrepareSpare's signal handler
passes it to `granted`) or its capacity deadline passes; then it withdraws. A booking is
answered at once, for its window, or refused: it never waits in the queue.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field
from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts.failures import Failure
    from contracts.ledger import Budget, Reservation, ReserveInput
    from contracts.spare import Phase, RoomAnswer, SpareRequest

from .booking import Booking
from .ledger_calls import free_reservation, reserve
from .progress import Progress
from .step_failure import StepFailed


@dataclass
class CapacityRequest:
    """One spare's ask for room, from the first call to the ledger to the reservation."""

    spare_id: str
    req: SpareRequest
    progress: Progress
    booking: Booking | None
    max_spares: InitVar[int | None] = None
    # The cluster's surge budget; warm spares are not counted against it.
    budget: Budget | None = field(default=None, init=False)
    _grant: Reservation | None = field(default=None, init=False)
    # The ledger's first answer, for the spare's `room_answer` Update.
    answer: RoomAnswer | None = field(default=None, init=False)

    def __post_init__(self, max_spares: int | None) -> None:
        if max_spares is not None and self.req.warm_pool is None:
            self.budget = Budget(cluster=self.req.cluster, max_spares=max_spares)

    def granted(self, reservation: Reservation) -> None:
        """The ledger's signal: room freed up for this waiting spare."""
        self._grant = reservation

    async def reserve(self) -> Reservation:
        """The spare's reservation, or StepFailed (NoCapacity) when no room comes in time."""
        req, booking = self.req, self.booking
        self.progress.enter(Phase.RESERVING, "asking the ledger for a host")
        hold = await booking.hold() if booking is not None else req.hold(workflow.now())
        try:
            result = await reserve(
                ReserveInput(
                    inventory=req.inventory,
                    task_queue=workflow.info().task_queue,
                    request=req.vm_request(self.spare_id),
                    # A booking is answered at once: held for its window, or refused.
                    wait_for_capacity=req.wait_for_capacity and booking is None,
                    priority=req.priority,
                    timeouts=req.timeouts,
                    warm_pool=req.warm_pool,
                    hold=hold,
                    budget=self.budget,
                    cluster=req.cluster,
                )
            )
        except StepFailed as refused:
            self.answer = RoomAnswer(
                status="refused",
                reason=refused.reason,
                failure=refused.kind,
                held_by=refused.held_by,
            )
            raise
        if result.status == "reserved" and result.reservation is not None:
            self.answer = RoomAnswer(status="reserved")
            return result.reservation
        self.answer = RoomAnswer(status="queued", reason=result.reason)
        if booking is not None:
            raise StepFailed(f"no_capacity: {result.reason}", Failure.NO_CAPACITY)
        return await self._wait_for_grant(result.reason)

    async def _wait_for_grant(self, why: str | None) -> Reservation:
        deadline = self.req.capacity_deadline_seconds
        self.progress.enter(
            Phase.WAITING_CAPACITY, f"no room yet ({why}); waiting up to {deadline} s"
        )
        try:
            await workflow.wait_condition(
                lambda: self._grant is not None, timeout=timedelta(seconds=deadline)
            )
        except TimeoutError:
            # Withdraw; if the ledger granted room at the last moment, this frees it too.
            await free_reservation(self.spare_id, self.req.inventory, self.req.timeouts)
            raise StepFailed(
                f"no_capacity: no room within {deadline} s", Failure.NO_CAPACITY
            ) from None
        assert self._grant is not None
        return self._grant
