"""PrepareSpare: one spare node from request to release.

validate -> reserve -> create VM -> wait Ready -> notify ready -> hold -> release -> notify.
On failure or cancellation after any step the work done so far is undone in reverse
(release the VM and Node if creation was attempted, free the reservation) and
`spare.failed` tells the receivers why.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from pydantic import ValidationError
from temporalio import workflow
from temporalio.common import RetryPolicy, SearchAttributeUpdate
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    ChildWorkflowError,
    FailureError,
    is_cancelled_exception,
)
from temporalio.exceptions import (
    TimeoutError as TemporalTimeout,
)

with workflow.unsafe.imports_passed_through():
    from activities.kubernetes import KubernetesActivities
    from activities.ledger import LedgerActivities
    from activities.notify import NotifyActivities
    from activities.provisioning import ProvisioningActivities
    from activities.spare_ids import SpareIdActivities
    from activities.warm_pools import WarmActivities
    from contracts import metrics
    from contracts.common import ANY_POOL, CLUSTER, HOST, PHASE, POOL
    from contracts.drain import DRAIN_BLOCKED, DrainNodeResult
    from contracts.kubernetes import (
        CheckNodeReadyInput,
        NodeAdoption,
        NodeReadyResult,
        WaitNodeReadyInput,
    )
    from contracts.ledger import (
        CAPACITY_GRANTED_SIGNAL,
        LEDGER_RETRY,
        Reservation,
        ReserveInput,
        ReserveResult,
    )
    from contracts.notify import PlanNotificationsInput, PlanNotificationsResult
    from contracts.release import RELEASE_SPARE, RELEASE_STEP_SIGNAL, ReleaseInput, ReleaseResult
    from contracts.release import release_workflow_id as release_id
    from contracts.spare import (
        MEMO_REQUEST_HASH,
        PREPARE_SPARE,
        REPLACEMENT_READY_SIGNAL,
        REQUEST_RELEASE_SIGNAL,
        STATUS_QUERY,
        Phase,
        ReleaseRequest,
        ReplacementReady,
        SpareRequest,
        SpareResult,
        SpareStatus,
        StepRecord,
    )
    from contracts.spare_ids import SPARE_ID_USED, EarlierRunInput, EarlierRunResult
    from contracts.vm import CreateVmInput, VmFacts
    from contracts.warm import (
        HAND_OVER_UPDATE,
        WARM_SPARE_REPORT_SIGNAL,
        ClaimInput,
        ClaimResult,
        ClaimWarmInput,
        HandOverInput,
        WarmCandidatesInput,
        WarmCandidatesResult,
        WarmNodeInput,
        WarmSpareReport,
        warm_pool_workflow_id,
    )
    from webhooks.events import BlockingBudget, DrainInfo, EventType, TopologyInfo


from .held_spare import HeldSpare
from .ledger_calls import free_reservation
from .notifier import Notifier
from .side_effects import STOP_FIRST, until_stopped

# A create that failed for a reason the playbook reports is final; others get a few tries.
CREATE_RETRY = RetryPolicy(
    maximum_attempts=3,
    initial_interval=timedelta(seconds=5),
    non_retryable_error_types=["ProvisioningFailed"],
)
# One readiness probe waits at most this long, then the workflow records what is missing.
READY_PROBE = 30
# The Node is looked at once (a local activity) as soon as the VM exists: one that is Ready
# by then skips the readiness probe and the `waiting_ready` phase. That look is one API call;
# longer means the API is struggling, and the probes handle that.
READY_CHECK_TIMEOUT = timedelta(seconds=10)
# A Node's warm mark: a few tries (the API may blink), then the spare fails and is cleaned up.
NODE_RETRY = RetryPolicy(maximum_attempts=10, maximum_interval=timedelta(seconds=10))


class SpareFailed(Exception):
    """A step failed for a reason a person can act on; carries that reason."""

    def __init__(self, reason: str, kind: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


@workflow.defn(name=PREPARE_SPARE, failure_exception_types=[ValidationError])
class PrepareSpare:
    def __init__(self) -> None:
        self._status: SpareStatus | None = None
        self._release: ReleaseRequest | None = None
        self._grant: Reservation | None = None
        self._vm_attempted = False
        self._detail = ""
        # The detail the current phase was entered with (a release's word is added to it).
        self._entered = ""
        self._pending_attributes: dict[str, SearchAttributeUpdate] = {}
        self._publishing: asyncio.Future[None] | None = None
        self._attributes_wait = False
        self._held: HeldSpare | None = None
        # A warm spare: the request that claimed it. A claiming spare: the VM it took over.
        self._handed_to: str | None = None
        self._claim: ClaimResult | None = None

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
        self._grant = reservation

    @workflow.signal(name=RELEASE_STEP_SIGNAL)
    def release_step(self, step: str) -> None:
        """The release's word while the hypervisor refuses the destroy: in the phase detail."""
        s = self._status
        if s is None or not s.steps or s.phase not in (Phase.RELEASING, Phase.COMPENSATING):
            return
        detail = f"{self._entered}: {step}"
        s.steps[-1].detail = detail
        self._show(detail)

    # --- the lifecycle ----------------------------------------------------------------------

    @workflow.run
    async def run(self, req: SpareRequest) -> SpareResult:
        spare_id = workflow.info().workflow_id
        self._status = SpareStatus(spare_id=spare_id, cluster=req.cluster, pool=req.pool)
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
        # Whatever way the spare ends, the search attributes show where it ended.
        self._publish_attributes()
        if req.warm_pool is not None:
            await self._report_to_pool(req.warm_pool, "ended")

    async def _lifecycle(self, spare_id: str, req: SpareRequest) -> SpareResult:
        assert self._status is not None
        self._set_attributes(CLUSTER.value_set(req.cluster), POOL.value_set(req.pool or ANY_POOL))
        self._notifier = Notifier(
            spare_id, req.cluster, req.pool, on_change=self._notifications_changed
        )
        self._enter(Phase.VALIDATING, "checking receivers")
        await self._refuse_a_used_id(spare_id)
        reservation: Reservation | None = None
        vm: VmFacts | None = None
        try:
            plan, pools = await self._look_up_configuration(spare_id, req)
            self._notifier.routes = plan.routes
            self._notifier.event_bus = plan.event_bus
            self._claim = await self._claim_warm(spare_id, req, pools)
            if self._claim is not None:
                reservation, vm = await self._take_warm(spare_id, req, self._claim)
            else:
                reservation = await self._reserve(spare_id, req)
                self._status.host, self._status.vmid = reservation.host, reservation.vmid
                self._status.topology = reservation.topology
                self._set_attributes(HOST.value_set(reservation.host))
                self._notifier.send(
                    EventType.RESERVED, host=reservation.host, topology=_topology_info(reservation)
                )

                self._enter(Phase.CREATING_VM, f"creating {spare_id} on {reservation.host}")
                self._vm_attempted = True
                vm = await self._create_vm(spare_id, req, reservation)
                self._status.vm = vm
                self._status.vmid = vm.vmid
                self._notifier.send(EventType.VM_CREATED, host=vm.host, vm=vm)

                await self._wait_ready(spare_id, req)
            if req.warm_pool is not None:
                await self._become_warm(req.warm_pool, reservation, vm)
            else:
                self._enter(Phase.READY, "ready; held until released or the TTL expires")
                self._notifier.send(EventType.READY, host=vm.host, vm=vm)
            if req.replaces:
                await self._tell_replaced(req.replaces, spare_id, vm.host)

            reason = await self._hold(req)
        except SpareFailed as failure:
            await self._compensate(spare_id, req, reservation, vm, failure.reason)
            await self._notifier.drain()
            raise ApplicationError(failure.reason, type=failure.kind, non_retryable=True) from None
        except asyncio.CancelledError:
            await self._compensate(spare_id, req, reservation, vm, "cancelled", Phase.CANCELLED)
            await self._notifier.drain()
            raise
        except (ActivityError, ChildWorkflowError) as err:
            if is_cancelled_exception(err):
                await self._compensate(spare_id, req, reservation, vm, "cancelled", Phase.CANCELLED)
                await self._notifier.drain()
                raise
            reason = _reason(err)
            await self._compensate(spare_id, req, reservation, vm, reason)
            await self._notifier.drain()
            raise ApplicationError(reason, type=_kind(err), non_retryable=True) from None

        if self._handed_to is not None:
            # The claiming spare owns the VM, the Node and the reservation now.
            self._status.handed_to = self._handed_to
            self._enter(Phase.HANDED_OVER, f"handed over to {self._handed_to}")
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
        self._enter(Phase.RELEASING, reason)
        self._notifier.send(EventType.RELEASE_STARTED, host=vm.host, vm=vm, reason=reason)
        try:
            released = await self._run_release(spare_id, req, reservation.host, reason)
        except ChildWorkflowError as err:
            # Policy fail (the Node stays cordoned), or a VM the hypervisor would not destroy:
            # the VM stays (and its reservation), for a person or the orphan sweep. The spare
            # ends failed with the reason, never stays `releasing`.
            blocked = _drain_blocked(err)
            self._status.drain = blocked
            self._status.error = _reason(err)
            self._enter(Phase.FAILED, self._status.error)
            self._notifier.send(
                EventType.FAILED,
                host=vm.host,
                vm=vm,
                reason=self._status.error,
                drain=_drain_info(blocked) if blocked is not None else None,
            )
            await self._notifier.drain()
            raise ApplicationError(
                self._status.error,
                type=DRAIN_BLOCKED if blocked is not None else _kind(err),
                non_retryable=True,
            ) from None
        self._status.drain = released.drain
        self._enter(Phase.RELEASED, _released_detail(released))
        self._notifier.send(
            EventType.RELEASED,
            host=vm.host,
            vm=vm,
            reason=reason,
            drain=_drain_info(released.drain, released.left_cordoned) if released.drain else None,
        )
        await self._notifier.drain()
        return SpareResult(
            spare_id=spare_id, phase=Phase.RELEASED, host=vm.host, vm=vm, reason=reason
        )

    # --- warm pools ---------------------------------------------------------------------------

    def _vm_name(self, spare_id: str) -> str:
        """The VM's and Node's name: the spare's id, or the warm spare's it took over."""
        if self._claim is not None and self._claim.vm is not None:
            return self._claim.vm.name
        return spare_id

    async def _look_up_configuration(
        self, spare_id: str, req: SpareRequest
    ) -> tuple[PlanNotificationsResult, list[str]]:
        """The receivers' plan and the warm pools that could serve the request: two lookups in
        the worker's configuration (local activities), asked at once so the worker answers
        both in one round instead of one after the other. Both are answered within this
        workflow task, so the search attributes wait for them: what they say before, nobody
        could see."""
        self._attributes_wait = True
        try:
            plan, pools = await asyncio.gather(
                self._plan_notifications(req), self._warm_candidates(spare_id, req)
            )
        finally:
            self._attributes_wait = False
        return plan, pools

    async def _warm_candidates(self, spare_id: str, req: SpareRequest) -> list[str]:
        """The warm pools whose spares would satisfy the whole request (usually none)."""
        if req.warm_pool is not None:
            return []  # a warm spare itself never claims one
        candidates: WarmCandidatesResult = await workflow.execute_local_activity_method(
            WarmActivities.warm_candidates,
            WarmCandidatesInput(
                request=req.vm_request(spare_id),
                cluster=req.cluster,
                inventory=req.inventory,
                template=req.template,
            ),
            start_to_close_timeout=req.timeouts.call,
        )
        return candidates.pools

    async def _claim_warm(
        self, spare_id: str, req: SpareRequest, pools: list[str]
    ) -> ClaimResult | None:
        """A warm spare of `pools` the whole request is satisfied by, claimed; None: the usual
        path (no matching pool, the common case, costs no round trip)."""
        if not pools:
            return None
        self._enter(Phase.RESERVING, f"asking warm pool {', '.join(pools)}")
        claim = ClaimInput(
            spare_id=spare_id,
            request=req.vm_request(spare_id),
            inventory=req.inventory,
            timeouts=req.timeouts,
        )
        claiming = workflow.start_activity_method(
            WarmActivities.claim_warm_spare,
            ClaimWarmInput(pools=pools, claim=claim),
            start_to_close_timeout=req.timeouts.ledger,
            heartbeat_timeout=req.timeouts.heartbeat,
            retry_policy=LEDGER_RETRY,
            cancellation_type=STOP_FIRST,
        )
        try:
            result: ClaimResult = await until_stopped(claiming)
        except asyncio.CancelledError:
            # A claim the pool answered despite the cancel is this spare's to give back:
            # compensation releases the VM it took.
            if claiming.done() and not claiming.cancelled() and claiming.exception() is None:
                answered = claiming.result()
                if answered.hit:
                    self._claim, self._vm_attempted = answered, True
            raise
        if not result.hit:
            self._show(f"no warm spare: {result.reason}")
            return None
        return result

    async def _take_warm(
        self, spare_id: str, req: SpareRequest, claim: ClaimResult
    ) -> tuple[Reservation, VmFacts]:
        """The claimed spare's VM and Node are this spare's: its labels on, the warm mark off."""
        assert self._status is not None and claim.reservation and claim.vm and claim.warm
        reservation, vm = claim.reservation, claim.vm
        self._vm_attempted = True  # from here a failure or cancel releases the VM
        self._status.warm = claim.warm
        self._status.host, self._status.vmid, self._status.vm = vm.host, vm.vmid, vm
        self._status.topology = reservation.topology
        self._set_attributes(HOST.value_set(vm.host))
        self._notifier.send(EventType.RESERVED, host=vm.host, topology=_topology_info(reservation))
        # One patch of the Node, answered within this workflow task.
        await workflow.execute_local_activity_method(
            WarmActivities.claim_warm_node,
            WarmNodeInput(node_name=vm.name, labels=req.spare_labels(spare_id)),
            start_to_close_timeout=req.timeouts.call,
            retry_policy=NODE_RETRY,
        )
        return reservation, vm

    async def _become_warm(self, pool: str, reservation: Reservation, vm: VmFacts) -> None:
        """Tainted first, then announced: nothing lands on a warm spare before its claim."""
        await workflow.execute_activity_method(
            WarmActivities.mark_warm_node,
            WarmNodeInput(node_name=vm.name, pool=pool),
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=NODE_RETRY,
        )
        self._enter(Phase.WARM, f"warm in pool {pool}; waiting to be claimed")
        await self._report_to_pool(pool, "warm", reservation, vm)

    async def _report_to_pool(
        self,
        pool: str,
        phase: str,
        reservation: Reservation | None = None,
        vm: VmFacts | None = None,
    ) -> None:
        assert self._status is not None
        report = WarmSpareReport(
            spare_id=self._status.spare_id,
            phase="warm" if phase == "warm" else "ended",
            at=workflow.now(),
            reservation=reservation,
            vm=vm,
            error=self._status.error,
        )
        try:
            await workflow.get_external_workflow_handle(warm_pool_workflow_id(pool)).signal(
                WARM_SPARE_REPORT_SIGNAL, report
            )
        except FailureError as err:
            # No pool any more: a warm spare then lives until its TTL or a release.
            workflow.logger.info("warm pool %s not told: %s", pool, err)

    async def _refuse_a_used_id(self, spare_id: str) -> None:
        """A spare id names one spare, ever: a run for an id that ran before stops here, before
        anything is reserved or announced (the first run's receivers heard all of it)."""
        if workflow.memo_value(MEMO_REQUEST_HASH, None) is not None:
            # Started by virtflow's own door with REJECT_DUPLICATE: the server has refused any
            # second run of this id already, so there is nothing to ask visibility.
            return
        # Answered within this workflow task, like the receivers' plan after it: the search
        # attributes wait for both.
        self._attributes_wait = True
        try:
            earlier: EarlierRunResult = await workflow.execute_local_activity_method(
                SpareIdActivities.earlier_run,
                EarlierRunInput(workflow_id=spare_id, run_id=workflow.info().run_id),
                start_to_close_timeout=timedelta(seconds=30),
                retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=10)),
            )
        finally:
            self._attributes_wait = False
        if earlier.run_id is None:
            return
        reason = (
            f"spare id {spare_id} was already used by run {earlier.run_id} ({earlier.status}); "
            "a request_id names one spare, ever: ask again with a new request_id"
        )
        assert self._status is not None
        self._status.error = reason
        self._enter(Phase.FAILED, reason)
        # Non-retryable: the id stays used. The details name the run that owns the id.
        raise ApplicationError(reason, earlier.run_id, type=SPARE_ID_USED, non_retryable=True)

    async def _plan_notifications(self, req: SpareRequest) -> PlanNotificationsResult:
        """Which receivers get which events: a lookup in the worker's configuration."""
        # A local activity: it records its answer like any activity, without a round trip
        # through the server's task queue.
        try:
            return await workflow.execute_local_activity_method(
                NotifyActivities.plan_notifications,
                PlanNotificationsInput(receivers=req.receivers),
                start_to_close_timeout=req.timeouts.call,
            )
        except (ApplicationError, TemporalTimeout) as err:
            # A local activity's failure arrives as is, not inside an ActivityError.
            raise SpareFailed(_reason(err), _kind(err)) from None

    async def _reserve(self, spare_id: str, req: SpareRequest) -> Reservation:
        self._enter(Phase.RESERVING, "asking the ledger for a host")
        # Stopped before compensation frees: a reserve still in flight could land after it.
        reserving = workflow.start_activity_method(
            LedgerActivities.reserve_capacity,
            ReserveInput(
                inventory=req.inventory,
                task_queue=workflow.info().task_queue,
                request=req.vm_request(spare_id),
                wait_for_capacity=req.wait_for_capacity,
                priority=req.priority,
                timeouts=req.timeouts,
                warm_pool=req.warm_pool,
            ),
            start_to_close_timeout=req.timeouts.ledger,
            heartbeat_timeout=req.timeouts.heartbeat,
            retry_policy=LEDGER_RETRY,
            cancellation_type=STOP_FIRST,
        )
        result: ReserveResult = await until_stopped(reserving)
        if result.status == "reserved" and result.reservation is not None:
            return result.reservation
        if result.status == "never_fits":
            raise SpareFailed(f"never_fits: {result.reason}", "NeverFits")
        if result.status == "no_capacity":
            raise SpareFailed(f"no_capacity: {result.reason}", "NoCapacity")
        self._enter(
            Phase.WAITING_CAPACITY,
            f"no room yet ({result.reason}); waiting up to {req.capacity_deadline_seconds} s",
        )
        try:
            await workflow.wait_condition(
                lambda: self._grant is not None,
                timeout=timedelta(seconds=req.capacity_deadline_seconds),
            )
        except TimeoutError:
            # Withdraw; if the ledger granted room at the last moment, this frees it too.
            await free_reservation(spare_id, req.inventory, req.timeouts)
            raise SpareFailed(
                f"no_capacity: no room within {req.capacity_deadline_seconds} s", "NoCapacity"
            ) from None
        assert self._grant is not None
        return self._grant

    async def _create_vm(
        self, spare_id: str, req: SpareRequest, reservation: Reservation
    ) -> VmFacts:
        # Stopped before compensation destroys: a create still running would make the VM
        # after the destroy.
        creating = workflow.start_activity_method(
            ProvisioningActivities.create_vm,
            CreateVmInput(spec=req.vm_spec(spare_id, reservation)),
            start_to_close_timeout=timedelta(seconds=req.create_timeout_seconds),
            heartbeat_timeout=req.timeouts.heartbeat,
            retry_policy=CREATE_RETRY,
            cancellation_type=STOP_FIRST,
        )
        return await until_stopped(creating)

    async def _wait_ready(self, spare_id: str, req: SpareRequest) -> None:
        """Probe in bounded rounds so the UI shows what is still missing between rounds."""
        deadline = workflow.now() + timedelta(seconds=req.ready_timeout_seconds)
        first = await self._check_ready_now(spare_id, req)
        if first is not None and first.ready:
            return
        missing = first.missing if first is not None else ["node not registered"]
        self._enter(Phase.WAITING_READY, "waiting for the Node to register")
        self._waiting(missing)
        while True:
            remaining = (deadline - workflow.now()).total_seconds()
            if remaining <= 0:
                raise SpareFailed(
                    f"{spare_id} did not become Ready within {req.ready_timeout_seconds} s; "
                    f"still missing: {', '.join(missing)}",
                    "NotReady",
                )
            probe: NodeReadyResult = await workflow.execute_activity_method(
                KubernetesActivities.wait_node_ready,
                WaitNodeReadyInput(
                    node_name=spare_id,
                    max_wait_seconds=min(READY_PROBE, remaining),
                    adopt=_adoption(spare_id, req),
                ),
                start_to_close_timeout=timedelta(seconds=min(READY_PROBE, remaining) + 30),
                heartbeat_timeout=req.timeouts.heartbeat,
                retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=10)),
            )
            if probe.ready:
                return
            if probe.missing != missing:
                missing = probe.missing
                self._waiting(missing)

    async def _check_ready_now(self, spare_id: str, req: SpareRequest) -> NodeReadyResult | None:
        """One look at the Node, answered within this workflow task. None when the look
        failed: that only means "not known yet", and the probes retry it properly."""
        self._attributes_wait = True  # the phase to publish depends on the answer
        try:
            return await workflow.execute_local_activity_method(
                KubernetesActivities.check_node_ready,
                CheckNodeReadyInput(node_name=spare_id, adopt=_adoption(spare_id, req)),
                start_to_close_timeout=READY_CHECK_TIMEOUT,
                retry_policy=RetryPolicy(maximum_attempts=1),
            )
        except (ActivityError, ApplicationError, TemporalTimeout):
            return None
        finally:
            self._attributes_wait = False

    async def _hold(self, req: SpareRequest) -> str:
        assert self._status is not None
        if self._release is not None:
            return self._release.reason  # asked for before Ready: nothing to wait for
        self._held = HeldSpare(req, self._status, self._notifier, lambda: self._release, self._show)
        return await self._held.hold()

    async def _tell_replaced(self, old: str, spare_id: str, host: str) -> None:
        """A replacement tells the spare it replaces that it is Ready (that one then goes)."""
        try:
            await workflow.get_external_workflow_handle(old).signal(
                REPLACEMENT_READY_SIGNAL, ReplacementReady(spare_id=spare_id, host=host)
            )
        except FailureError as err:
            # The old spare is gone already (released meanwhile): nothing to hand over.
            workflow.logger.info("%s could not be told %s is ready: %s", old, spare_id, err)

    async def _run_release(
        self, spare_id: str, req: SpareRequest, host: str | None, reason: str
    ) -> ReleaseResult:
        try:
            return await self._release_child(spare_id, req, host, reason)
        finally:
            # The release's cordon ended the held spare's watch: wait for its activity to be
            # done, so it neither outlives the spare nor completes against a closed one.
            if self._held is not None:
                await self._held.stopped()

    async def _release_child(
        self, spare_id: str, req: SpareRequest, host: str | None, reason: str
    ) -> ReleaseResult:
        # Started by name: importing ReleaseSpare's module here would rebuild it in the sandbox
        # for every spare.
        start = workflow.start_child_workflow(
            RELEASE_SPARE,
            ReleaseInput(
                spare_id=spare_id,
                vm_name=self._vm_name(spare_id),
                host=host,
                vmid=self._status.vmid if self._status else None,
                inventory=req.inventory,
                drain_timeout_seconds=req.drain_timeout_seconds,
                drain_policy=req.drain_policy,
                reason=reason,
                timeouts=req.timeouts,
            ),
            id=release_id(spare_id) + f"-{workflow.info().run_id[:8]}",
            static_summary=f"Release {spare_id}: {reason}"[:200],
            result_type=ReleaseResult,
        )
        # A cancel asks for exactly this clean-up: cutting the release short would leave the
        # VM, Node and reservation behind. Shielded, it runs to its end, once.
        starting = asyncio.ensure_future(start)
        try:
            return await asyncio.shield(await asyncio.shield(starting))
        except asyncio.CancelledError:
            workflow.logger.info(
                "cancel requested while releasing %s: finishing the release", spare_id
            )
            return await (await starting)

    async def _compensate(
        self,
        spare_id: str,
        req: SpareRequest,
        reservation: Reservation | None,
        vm: VmFacts | None,
        reason: str,
        final: Phase = Phase.FAILED,
    ) -> None:
        """Undo in reverse: VM and Node if creation was attempted, then the reservation."""
        assert self._status is not None
        if reservation is None and self._claim is not None:
            reservation = self._claim.reservation  # a warm spare taken, then cancelled
        self._status.error = reason
        self._enter(Phase.COMPENSATING, reason)
        drain: DrainInfo | None = None
        if self._vm_attempted and reservation is not None:
            # ReleaseSpare frees the reservation as its last step.
            try:
                released = await self._run_release(
                    spare_id, req, reservation.host, f"compensating: {reason}"
                )
                if released.drain is not None:
                    drain = _drain_info(released.drain, released.left_cordoned)
            except ChildWorkflowError as err:
                # A blocked drain, or a VM the hypervisor would not destroy: the spare still
                # ends (failed), saying so; what stays is for a person or the orphan sweep.
                blocked = _drain_blocked(err)
                if blocked is not None:
                    self._status.drain = blocked
                    drain = _drain_info(blocked)
                reason = f"{reason}; {_reason(err)}"
                self._status.error = reason
        else:
            await free_reservation(spare_id, req.inventory, req.timeouts)
        self._enter(final, reason)
        host = vm.host if vm else (reservation.host if reservation else None)
        self._notifier.send(
            EventType.FAILED,
            host=host,
            vm=vm,
            reason=reason,
            drain=drain,
        )

    # --- visibility -------------------------------------------------------------------------

    def _enter(self, phase: Phase, detail: str) -> None:
        assert self._status is not None
        left = self._status.phase.value if self._status.steps else None
        metrics.spare_entered_phase(workflow.metric_meter(), phase.value, left)
        if phase == Phase.READY:
            ready_after = workflow.now() - workflow.info().start_time
            metrics.spare_ready(workflow.metric_meter(), ready_after)
        self._status.phase = phase
        self._status.waiting_for = []
        self._status.steps.append(StepRecord(phase=phase, at=workflow.now(), detail=detail))
        self._entered = detail
        self._set_attributes(PHASE.value_set(phase.value))
        self._show(detail)

    def _set_attributes(self, *updates: SearchAttributeUpdate) -> None:
        """Upsert search attributes once per workflow task, with only the values that changed.

        Phases often follow each other within one task (ready, then releasing at once when
        the release was already asked for), and each upsert is a history event and a
        visibility write on the server; visibility only changes when the task completes, so
        publishing the last value is all anyone could see anyway.
        """
        for update in updates:
            self._pending_attributes[update.key.name] = update
        if self._publishing is None or self._publishing.done():
            # Runs once the workflow's code waits, still inside this workflow task.
            self._publishing = asyncio.ensure_future(self._publish_when_idle())

    async def _publish_when_idle(self) -> None:
        if not self._attributes_wait:  # else published with the next change or at the end
            self._publish_attributes()

    def _publish_attributes(self) -> None:
        current = workflow.info().typed_search_attributes
        changed = [u for u in self._pending_attributes.values() if current.get(u.key) != u.value]
        self._pending_attributes.clear()
        if changed:
            workflow.upsert_search_attributes(changed)

    def _waiting(self, missing: list[str]) -> None:
        assert self._status is not None
        self._status.waiting_for = missing
        self._show("waiting for: " + ", ".join(missing))

    def _show(self, detail: str) -> None:
        assert self._status is not None
        s = self._status
        self._detail = detail
        stopped = ", ".join(s.disabled_receivers)
        gone = f"  \n**Webhooks stopped (410 Gone)** {stopped}" if stopped else ""
        # Requested and actual domain side by side, so an unmet preference is seen, not hidden.
        where = f"  \n**Topology** {s.topology.describe()}" if s.topology else ""
        workflow.set_current_details(
            f"**Phase** {s.phase.value}  \n**Host** {s.host or '-'}{where}  \n{detail}{gone}"
        )

    def _notifications_changed(self) -> None:
        assert self._status is not None
        self._status.disabled_receivers = list(self._notifier.gone)
        self._status.undelivered = list(self._notifier.failed)
        self._show(self._detail)


def _adoption(spare_id: str, req: SpareRequest) -> NodeAdoption:
    """What the Node must carry once Ready: virtflow applies it, whatever the guest did."""
    return NodeAdoption(labels=req.spare_labels(spare_id), template=req.template, pool=req.pool)


def _topology_info(reservation: Reservation) -> TopologyInfo | None:
    placed = reservation.topology
    return None if placed is None else TopologyInfo.model_validate(placed.model_dump())


def _released_detail(released: ReleaseResult) -> str:
    if released.drain is None:
        not_evicted = ", ".join(released.not_evicted)
        return f"evicted {len(released.evicted)} pods" + (
            f"; not evicted in time: {not_evicted}" if not_evicted else ""
        )
    left = "; VM kept, Node left cordoned (policy leave)" if released.left_cordoned else ""
    return released.drain.summary() + left


def _drain_info(drain: DrainNodeResult, left_cordoned: bool = False) -> DrainInfo:
    return DrainInfo(
        outcome=drain.outcome.value,
        policy=drain.policy.value,
        evicted=drain.evicted,
        deleted=drain.deleted,
        not_evicted=drain.skipped,
        blocked_by=[
            BlockingBudget(
                namespace=b.namespace, name=b.name, disruptions_allowed=b.disruptions_allowed
            )
            for b in drain.blocked_by
        ],
        left_cordoned=left_cordoned,
    )


def _drain_blocked(err: BaseException) -> DrainNodeResult | None:
    """The drain's report, when a release stopped because its drain could not finish."""
    cause: BaseException | None = err
    while cause is not None:
        if isinstance(cause, ApplicationError) and cause.type == DRAIN_BLOCKED and cause.details:
            return DrainNodeResult.model_validate(cause.details[0])
        cause = cause.__cause__
    return None


def _reason(err: BaseException) -> str:
    """The innermost message, which is the one a person can act on: an application error's
    own words (the hypervisor's), without its type (`ProvisioningTransient: ...`)."""
    cause: BaseException | None = err
    message = str(err)
    while cause is not None:
        if isinstance(cause, ApplicationError):
            message = cause.message
        elif isinstance(cause, TemporalTimeout):
            message = str(cause)
        cause = cause.__cause__
    return message


def _kind(err: BaseException) -> str:
    cause: BaseException | None = err
    while cause is not None:
        if isinstance(cause, ApplicationError) and cause.type:
            return cause.type
        cause = cause.__cause__
    return "StepFailed"
