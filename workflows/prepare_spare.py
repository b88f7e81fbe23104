"""PrepareSpare: one spare node from request to release.

validate -> reserve -> create VM -> wait Ready -> notify ready -> hold -> release -> notify.
On failure or cancellation after any step the work done so far is undone in reverse
(release the VM and Node if creation was attempted, free the reservation) and
`spare.failed` tells the receivers why. A booking (a request with a window) reserves its room
for its window, sleeps until its lead start, and is held until its window ends.

The lifecycle is this module; its collaborators each carry one concern: `Progress` (status,
search attributes, details), `look_up_configuration` (receivers and warm pools), `Notifier`
(the events), `WarmClaim` (taking a warm spare instead of making one), `CapacityRequest`
(room from the ledger, waited for if need be), `create_vm`, `Booking` (a window's lead, its
changes and its end), `HeldSpare` (the hold), `spare_release` (the release child and how it
ended).
"""

from __future__ import annotations

from pydantic import ValidationError
from temporalio import workflow
from temporalio.exceptions import (
    ApplicationError,
)

with workflow.unsafe.imports_passed_through():
    from contracts import metrics
    from contracts.booking import (
        BOOKED_HOST_UNFIT_SIGNAL,
        CHANGE_WINDOW_UPDATE,
        HostUnfit,
        WindowChange,
        WindowChangeResult,
    )
    from contracts.common import ANY_POOL, CLUSTER, POOL
    from contracts.failures import Failure
    from contracts.ledger import CAPACITY_GRANTED_SIGNAL, Reservation
    from contracts.release import RELEASE_STEP_SIGNAL
    from contracts.spare import (
        MEMO_REQUEST_HASH,
        PREPARE_SPARE,
        REPLACEMENT_READY_SIGNAL,
        REQUEST_RELEASE_SIGNAL,
        ROOM_ANSWER_UPDATE,
        STATUS_QUERY,
        Phase,
        ReleaseRequest,
        ReplacementReady,
        RoomAnswer,
        SpareRequest,
        SpareResult,
        SpareStatus,
    )
    from contracts.vm import VmFacts
    from contracts.warm import HAND_OVER_UPDATE, WARM_ANSWER_UPDATE, HandOverInput, WarmAnswer
    from webhooks.events import DrainInfo, EventType


from . import step_failure
from .booking import Booking, tell_ready_time
from .capacity import CapacityRequest
from .event_shapes import released_detail, topology_info
from .held_spare import HeldSpare, tell_replaced
from .ledger_calls import free_reservation
from .lookups import look_up_configuration
from .notifier import Notifier
from .progress import Progress
from .readiness import wait_ready
from .spare_ids import refuse_a_used_id
from .spare_release import ReleaseOutcome, release_outcome, spare_release
from .vm_create import create_vm
from .warm_claim import WarmClaim, become_warm, report_to_pool


@workflow.defn(name=PREPARE_SPARE, failure_exception_types=[ValidationError])
class PrepareSpare:
    def __init__(self) -> None:
        self._status: SpareStatus | None = None
        self._release: ReleaseRequest | None = None
        self._capacity: CapacityRequest | None = None
        # What the spare holds so far: compensation undoes exactly this.
        self._reservation: Reservation | None = None
        self._vm: VmFacts | None = None
        self._vm_attempted = False
        self._held: HeldSpare | None = None
        # A warm spare: the request that claimed it.
        self._handed_to: str | None = None
        # Whether a warm pool serves this request is known (a claim answered, or none asked).
        self._warm_known = False
        self._booking: Booking | None = None
        # Set as the run ends: a `room_answer` still waiting is answered `ended`.
        self._over = False

    # --- messages -------------------------------------------------------------------------

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> SpareStatus:
        if self._status is None:
            raise ApplicationError("the spare has not started yet")
        return self._status

    # Registered under its method name, RELEASE_UPDATE (the SDK types an update given by
    # name as returning a coroutine); tests/workflows/test_contract_names.py checks it.
    @workflow.update
    async def release(self, req: ReleaseRequest) -> SpareStatus:
        self._release = req
        return self.status()

    @release.validator
    def validate_release(self, req: ReleaseRequest) -> None:
        phase = self._status.phase if self._status else Phase.VALIDATING
        if self._release is not None or phase in (Phase.RELEASING, Phase.RELEASED):
            raise ValueError(f"the spare's release was asked for already (it is {phase.value})")
        if phase not in (Phase.READY, Phase.WARM):
            raise ValueError(
                f"the spare can be released once ready (it is {phase.value}); "
                "cancel it to stop it before then"
            )

    @workflow.update(name=HAND_OVER_UPDATE)
    async def hand_over(self, inp: HandOverInput) -> SpareStatus:
        """A warm spare's one atomic step: from now on it belongs to the claiming request,
        whose spare owns its VM and Node; this workflow ends without releasing them."""
        if self._handed_to is None:
            self._handed_to = inp.spare_id
            self._release = ReleaseRequest(reason=f"handed over to {inp.spare_id}")
        return self.status()

    @hand_over.validator
    def validate_hand_over(self, inp: HandOverInput) -> None:
        if self._handed_to == inp.spare_id:
            return  # a repeat of the hand-over that happened
        phase = self._status.phase if self._status else Phase.VALIDATING
        if self._handed_to is not None or self._release is not None or phase != Phase.WARM:
            raise ValueError(f"the spare is not warm (it is {phase.value})")

    @workflow.update(name=WARM_ANSWER_UPDATE)
    async def warm_answer(self) -> WarmAnswer:
        """Answered once the spare knows whether a warm pool serves it: `warm` set (Ready
        already), or not (the usual way, which the answer does not wait for)."""
        await workflow.wait_condition(lambda: self._warm_known)
        asked = workflow.memo_value(MEMO_REQUEST_HASH, None, type_hint=str)
        return WarmAnswer(warm=self.status().warm, request_hash=asked)

    @workflow.update(name=CHANGE_WINDOW_UPDATE)
    async def change_window(self, change: WindowChange) -> WindowChangeResult:
        """A booking's window ends at `change.end` instead, if its ledger has the room."""
        assert self._booking is not None  # the validator refused anything else
        result, reservation = await self._booking.change_end(change.end)
        if result.status == "changed" and reservation is not None:
            self._reservation = reservation
        return result

    @change_window.validator
    def validate_change_window(self, change: WindowChange) -> None:
        if self._booking is None:
            raise ValueError("the spare is not a booking: it has no window to change")
        phase = self._status.phase if self._status else Phase.VALIDATING
        holding = self._reservation is not None and self._release is None
        self._booking.refuse_change(change.end, phase, holding)

    @workflow.update(name=ROOM_ANSWER_UPDATE)
    async def room_answer(self) -> RoomAnswer:
        """Answered once the ledger first answered the spare's request for room (reserved,
        queued or refused, with who holds the room), a warm spare served it, or it ended
        before it asked."""
        await workflow.wait_condition(lambda: self._room_answer() is not None)
        answer = self._room_answer()
        assert answer is not None
        return answer

    def _room_answer(self) -> RoomAnswer | None:
        if self._capacity is not None and self._capacity.answer is not None:
            return self._capacity.answer
        if self._capacity is None and self._warm_known and self._reservation is not None:
            return RoomAnswer(status="reserved", reason="a warm spare serves it")
        return RoomAnswer(status="ended") if self._over else None

    @workflow.signal(name=REQUEST_RELEASE_SIGNAL)
    def request_release(self, req: ReleaseRequest) -> None:
        # A signal cannot be refused: if it comes early, it is honoured as soon as Ready.
        if self._release is None:
            self._release = req

    @workflow.signal(name=REPLACEMENT_READY_SIGNAL)
    def replacement_ready(self, msg: ReplacementReady) -> None:
        if self._held is not None:
            self._held.replacement_ready(msg)

    @workflow.signal(name=CAPACITY_GRANTED_SIGNAL)
    def capacity_granted(self, reservation: Reservation) -> None:
        if self._capacity is not None:  # sent only to a spare that waits in the ledger
            self._capacity.granted(reservation)

    @workflow.signal(name=BOOKED_HOST_UNFIT_SIGNAL)
    def booked_host_unfit(self, unfit: HostUnfit) -> None:
        if self._booking is not None:  # sent only to a booking, by its ledger
            self._booking.host_unfit(unfit)

    @workflow.signal(name=RELEASE_STEP_SIGNAL)
    def release_step(self, step: str) -> None:
        """The release's word while the hypervisor refuses the destroy: in the phase detail."""
        s = self._status
        if s is None or not s.steps or s.phase not in (Phase.RELEASING, Phase.COMPENSATING):
            return
        self._progress.amend_phase(step)

    # --- the lifecycle ----------------------------------------------------------------------

    @workflow.run
    async def run(self, req: SpareRequest) -> SpareResult:
        spare_id = workflow.info().workflow_id
        self._status = SpareStatus(spare_id=spare_id, cluster=req.cluster, pool=req.pool)
        self._progress = Progress(self._status)
        try:
            result = await self._lifecycle(spare_id, req)
        except GeneratorExit:
            # Closed by the garbage collector after its worker dropped it, outside any
            # workflow task: no workflow call may run (the next worker replays the run).
            raise
        except BaseException:
            await self._ended(req)
            raise
        await self._ended(req)
        return result

    async def _ended(self, req: SpareRequest) -> None:
        self._over = True
        # Whatever way the spare ends, the search attributes show where it ended.
        self._progress.publish()
        self._progress.count_for(metrics.UNCONFIRMED)  # ended before its cluster was confirmed
        if req.warm_pool is not None:
            await report_to_pool(req.warm_pool, self._progress.status, "ended")

    async def _lifecycle(self, spare_id: str, req: SpareRequest) -> SpareResult:
        self._progress.set_attributes(
            CLUSTER.value_set(req.cluster), POOL.value_set(req.pool or ANY_POOL)
        )
        self._notifier = Notifier(
            spare_id, req.cluster, req.pool, on_change=self._receivers_changed
        )
        self._warm = WarmClaim(spare_id, req, self._progress, self._notifier)
        if req.window is not None:
            self._booking = Booking(req, req.window, self._progress, self._notifier)
        self._progress.enter(Phase.VALIDATING, "checking receivers")
        await refuse_a_used_id(spare_id, self._progress)
        try:
            vm, reason = await self._prepare_and_hold(spare_id, req)
        except BaseException as err:
            ending = step_failure.ending(err)
            if ending is None:
                raise
            if ending.kind in (Failure.UNKNOWN_CLUSTER, Failure.NOT_ALLOWED_FOR_CLUSTER):
                # Refused before anything was reserved, made or announced: nothing to undo.
                self._progress.status.error = ending.reason
                self._progress.enter(Phase.FAILED, ending.reason)
                raise ApplicationError(
                    ending.reason, type=ending.kind, non_retryable=True
                ) from None
            if self._booking is not None and self._vm is None:
                self._booking.failed_before_start()
            await self._compensate(spare_id, req, ending.reason, ending.phase)
            await self._notifier.drain()
            if ending.kind is None:
                raise
            raise ApplicationError(ending.reason, type=ending.kind, non_retryable=True) from None
        if self._handed_to is not None:
            return await self._end_handed_over(spare_id, vm, reason)
        return await self._end_released(spare_id, req, vm, reason)

    async def _prepare_and_hold(self, spare_id: str, req: SpareRequest) -> tuple[VmFacts, str]:
        """Everything compensation may have to undo: from the configuration to the hold's end.
        Answers the VM and why the hold ended."""
        pools = await look_up_configuration(req, self._progress, self._notifier, self._warm)
        self._progress.count_for(req.cluster)  # registered: its metrics may name it
        # A warm pool never serves a booking: its room is held for its window already.
        # Nor a rehearsal: it is there to make a VM.
        served = self._booking is None and req.rehearsal_of is None
        claim = await self._warm.claim(pools) if served else None
        if claim is not None:
            self._vm_attempted = True  # from here a failure or cancel releases the VM
            self._reservation, self._vm = await self._warm.take(claim)
            self._warm_known = True
        else:
            self._warm_known = True
            await self._make_vm(spare_id, req)
        vm = self._vm
        assert vm is not None and self._reservation is not None
        if req.warm_pool is not None:
            await become_warm(req.warm_pool, self._progress, self._reservation, vm)
        else:
            until = "its window ends" if self._booking is not None else "the TTL expires"
            self._progress.enter(Phase.READY, f"ready; held until released or {until}")
            self._notifier.send(EventType.READY, host=vm.host, vm=vm)
            if self._booking is not None:
                self._booking.ready()
        if req.replaces:
            await tell_replaced(req.replaces, spare_id, vm.host)
        return vm, await self._hold(req)

    async def _make_vm(self, spare_id: str, req: SpareRequest) -> None:
        """The usual path: a host from the ledger, a VM on it, its Node Ready."""
        status = self._progress.status
        self._capacity = CapacityRequest(
            spare_id, req, self._progress, self._booking, self._notifier.max_spares
        )
        reservation = self._reservation = await self._capacity.reserve()
        self._progress.reserved(reservation)
        self._notifier.send(
            EventType.RESERVED, host=reservation.host, topology=topology_info(reservation)
        )
        if self._booking is not None:
            reservation = await self._booking.wait_for_lead_start(reservation)
            self._reservation = reservation

        self._progress.enter(Phase.CREATING_VM, f"creating {spare_id} on {reservation.host}")
        created_at = workflow.now()
        self._vm_attempted = True
        vm = self._vm = await create_vm(spare_id, req, reservation)
        status.vm = vm
        status.vmid = vm.vmid
        self._notifier.send(EventType.VM_CREATED, host=vm.host, vm=vm)

        await wait_ready(spare_id, req, self._progress)
        await tell_ready_time(req, created_at)

    async def _end_handed_over(self, spare_id: str, vm: VmFacts, reason: str) -> SpareResult:
        """The claiming spare owns the VM, the Node and the reservation now."""
        assert self._handed_to is not None
        self._progress.status.handed_to = self._handed_to
        self._progress.enter(Phase.HANDED_OVER, f"handed over to {self._handed_to}")
        if self._held is not None:
            # Its Node patch ends the watch: wait for that, so no activity outlives this
            # workflow or completes against it once closed.
            await self._held.stopped()
        await self._notifier.drain()
        return SpareResult(
            spare_id=spare_id,
            phase=Phase.HANDED_OVER,
            host=vm.host,
            vm=vm,
            reason=reason,
            handed_to=self._handed_to,
        )

    async def _end_released(
        self, spare_id: str, req: SpareRequest, vm: VmFacts, reason: str
    ) -> SpareResult:
        status = self._progress.status
        assert self._reservation is not None
        self._progress.enter(Phase.RELEASING, reason)
        self._notifier.send(EventType.RELEASE_STARTED, host=vm.host, vm=vm, reason=reason)
        outcome = await self._run_release(spare_id, req, self._reservation.host, reason)
        if outcome.released is None:
            # Policy fail (the Node stays cordoned), or a VM the hypervisor would not destroy:
            # the VM stays (and its reservation), for a person or the orphan sweep. The spare
            # ends failed with the reason, never stays `releasing`.
            status.drain, status.error = outcome.blocked, outcome.error
            self._progress.enter(Phase.FAILED, outcome.error)
            self._notifier.send(
                EventType.FAILED, host=vm.host, vm=vm, reason=outcome.error, drain=outcome.drain
            )
            await self._notifier.drain()
            raise ApplicationError(outcome.error, type=outcome.failure, non_retryable=True)
        status.drain = outcome.released.drain
        self._progress.enter(Phase.RELEASED, released_detail(outcome.released))
        self._notifier.send(
            EventType.RELEASED, host=vm.host, vm=vm, reason=reason, drain=outcome.drain
        )
        await self._notifier.drain()
        return SpareResult(
            spare_id=spare_id, phase=Phase.RELEASED, host=vm.host, vm=vm, reason=reason
        )

    # --- the steps ----------------------------------------------------------------------------

    async def _hold(self, req: SpareRequest) -> str:
        if self._release is not None:
            return self._release.reason  # asked for before Ready: nothing to wait for
        progress = self._progress
        self._held = HeldSpare(
            req,
            progress.status,
            self._notifier,
            lambda: self._release,
            progress.show,
            ends=self._booking.ends if self._booking is not None else None,
        )
        if self._booking is None or self._vm is None:
            return await self._held.hold()
        return await self._booking.held_to_the_end(self._held, self._vm)

    async def _run_release(
        self, spare_id: str, req: SpareRequest, host: str | None, reason: str
    ) -> ReleaseOutcome:
        try:
            release = spare_release(
                spare_id,
                reason,
                host=host,
                request=req,
                run_id=workflow.info().run_id,
                vm_name=self._warm.vm_name(),
                vmid=self._progress.status.vmid,
            )
            return await release_outcome(release)
        finally:
            # The release's cordon ended the held spare's watch: wait for its activity to be
            # done, so it neither outlives the spare nor completes against a closed one.
            if self._held is not None:
                await self._held.stopped()

    async def _compensate(
        self, spare_id: str, req: SpareRequest, reason: str, final: Phase
    ) -> None:
        """Undo in reverse: VM and Node if creation was attempted, then the reservation."""
        status = self._progress.status
        reservation, vm = self._reservation, self._vm
        if reservation is None and self._warm.claimed is not None:
            reservation = self._warm.claimed.reservation  # a warm spare taken, then cancelled
        status.error = reason
        self._progress.enter(Phase.COMPENSATING, reason)
        drain: DrainInfo | None = None
        attempted = self._vm_attempted or self._warm.claimed is not None
        if attempted and reservation is not None:
            # ReleaseSpare frees the reservation as its last step.
            outcome = await self._run_release(
                spare_id, req, reservation.host, f"compensating: {reason}"
            )
            drain = outcome.drain
            if outcome.released is None:
                # A blocked drain, or a VM the hypervisor would not destroy: the spare still
                # ends (failed), saying so; what stays is for a person or the orphan sweep.
                status.drain = outcome.blocked or status.drain
                reason = status.error = f"{reason}; {outcome.error}"
        else:
            await free_reservation(spare_id, req.inventory, req.timeouts)
        self._progress.enter(final, reason)
        host = vm.host if vm else (reservation.host if reservation else None)
        self._notifier.send(EventType.FAILED, host=host, vm=vm, reason=reason, drain=drain)

    def _receivers_changed(self) -> None:
        self._progress.receivers_changed(list(self._notifier.gone), list(self._notifier.failed))
