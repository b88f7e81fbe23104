"""WarmPool: one long-lived workflow per warm pool keeps `size` spares Ready ahead of demand.

Each warm spare is a PrepareSpare of its own, placed through the ledger like any spare, so
nothing is over-committed; it tells the pool when it is warm and when it ends. Claims come in
as Updates and are answered one at a time under a lock: a warm spare is handed to one request
only (its own `hand_over` Update is the atomic step), then its reservation moves to the
request in the ledger. The pool refills behind every claim, retires spares that are too old
or no longer match its definition, and drains to nothing at `size: 0`.

A crash never makes a claim hand out a second spare: which spare goes to which request is in
the pool's history before the hand-over is sent (a regular activity, retried to the same
spare), and a spare handed to a request that ended before taking it is released.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from activities.ledger import LedgerActivities
    from activities.notify import NotifyActivities
    from activities.warm_pools import WarmActivities
    from contracts import metrics
    from contracts.notify import PlanNotificationsInput, PlanNotificationsResult
    from contracts.release import RELEASE_SPARE, ReleaseInput, release_workflow_id
    from contracts.spare import (
        PREPARE_SPARE,
        REQUEST_RELEASE_SIGNAL,
        ReleaseRequest,
        SpareRequest,
        start_search_attributes,
    )
    from contracts.warm import (
        CLAIM_UPDATE,
        CONFIGURE_SIGNAL,
        POOL_QUERY,
        WARM_POOL,
        WARM_REQUEST_PREFIX,
        WARM_SPARE_REPORT_SIGNAL,
        ClaimInput,
        ClaimResult,
        FitWarmInput,
        FitWarmResult,
        HandOverRequest,
        HandOverResult,
        TransferInput,
        TransferResult,
        WarmInfo,
        WarmPoolSpec,
        WarmPoolState,
        WarmPoolView,
        WarmSpare,
        WarmSpareReport,
    )
    from webhooks.events import EventType

from .notifier import Notifier

# Claims remembered for repeats (a claimant's retried activity); older ones are forgotten.
CLAIMS_KEPT = 500
# After a spare that never got warm, wait before the next: no room will not heal at once.
FIRST_BACKOFF_SECONDS = 5
MAX_BACKOFF_SECONDS = 600
# A warm spare outlives a vanished pool by this much at most (its TTL past max_age).
TTL_MARGIN_SECONDS = 3600
MAX_TTL_SECONDS = 30 * 24 * 3600
# The pool's own lookups answer quickly, or the claim is a miss.
CALL_RETRY = RetryPolicy(maximum_attempts=5, maximum_interval=timedelta(seconds=5))
# A hand-over's outcome must be known, and a handed-over spare's room must move: the spare
# is the claimant's already.
UNTIL_MOVED = RetryPolicy(maximum_interval=timedelta(seconds=30))


@workflow.defn(name=WARM_POOL)
class WarmPool:
    @workflow.init
    def __init__(self, state: WarmPoolState) -> None:
        # Set here: with update-with-start the configure Update arrives before run.
        self._state = state
        self._lock = asyncio.Lock()
        self._changed = True
        self._notifier: Notifier | None = None

    @workflow.run
    async def run(self, state: WarmPoolState) -> None:
        while not self._time_to_continue():
            with contextlib.suppress(TimeoutError):  # a timeout is a wake-up like any other
                await workflow.wait_condition(
                    lambda: self._changed or self._time_to_continue(), timeout=self._next_wakeup()
                )
            if self._time_to_continue():
                # Onto the current build first: a spare started now would be pinned to this
                # one, and keep it from draining for as long as the spare lives.
                break
            self._changed = False
            async with self._lock:
                await self._converge()
            self._show()
        # Claims in flight finish first, so their answers survive the continue-as-new.
        await workflow.wait_condition(lambda: not self._lock.locked())
        await workflow.wait_condition(workflow.all_handlers_finished)
        if self._notifier is not None:
            await self._notifier.drain()
        self._state.short_told = 0  # webhook ids count per run
        # Like the ledger, a pool never ends: a new build of the worker deployment takes it
        # over at continue-as-new (worker/versioning.py).
        upgrade = workflow.ContinueAsNewVersioningBehavior.AUTO_UPGRADE
        versioned = workflow.info().get_current_deployment_version() is not None
        workflow.continue_as_new(
            self._state, initial_versioning_behavior=upgrade if versioned else None
        )

    def _time_to_continue(self) -> bool:
        info = workflow.info()
        return (
            info.is_continue_as_new_suggested()
            or info.is_target_worker_deployment_version_changed()
        )

    # --- messages -------------------------------------------------------------------------

    @workflow.query(name=POOL_QUERY)
    def pool(self) -> WarmPoolView:
        spec, spares = self._state.spec, list(self._state.spares.values())
        return WarmPoolView(
            **spec.model_dump(include={"name", "cluster", "inventory", "pool", "template"}),
            **spec.shape(),
            size=spec.size,
            ready=sum(s.phase == "warm" for s in spares),
            coming_up=sum(s.phase == "coming_up" for s in spares),
            claimed=self._state.claimed_total,
            hits=self._state.hits,
            misses=self._state.misses,
            spares=spares,
            short_reason=self._short_reason(),
        )

    @workflow.signal(name=CONFIGURE_SIGNAL)
    def configure(self, spec: WarmPoolSpec) -> None:
        """A worker started with these settings: converge on the definition. (A signal, so a
        worker can send it before it polls: nothing waits for an answer.)"""
        if spec.name != self._state.spec.name:
            workflow.logger.warning(
                "warm pool %s ignores the settings of %s", self._state.spec.name, spec.name
            )
            return
        self._state.spec = spec
        self._state.retry_at = None
        self._changed = True

    @workflow.signal(name=WARM_SPARE_REPORT_SIGNAL)
    def report(self, report: WarmSpareReport) -> None:
        spare = self._state.spares.get(report.spare_id)
        if spare is None:
            return
        self._changed = True
        if report.phase == "warm":
            if spare.phase == "coming_up":
                spare.phase, spare.ready_since = "warm", report.at
                spare.reservation, spare.vm = report.reservation, report.vm
                self._state.failures_in_a_row, self._state.last_failure = 0, None
                metrics.warm_refilled(
                    workflow.metric_meter(), self._state.spec.name, report.at - spare.started_at
                )
            return
        if spare.phase == "coming_up":
            self._failed(report.error or "ended before it was Ready")
        del self._state.spares[report.spare_id]

    @workflow.update(name=CLAIM_UPDATE)
    async def claim(self, inp: ClaimInput) -> ClaimResult:
        """One claim at a time: a warm spare is handed to exactly one request."""
        async with self._lock:
            known = self._state.claims.get(inp.spare_id)
            if known is not None:
                return known  # a repeated claim (the claimant's activity retried)
            result = await self._claim(inp)
            self._state.claims[inp.spare_id] = result
            while len(self._state.claims) > CLAIMS_KEPT:
                del self._state.claims[next(iter(self._state.claims))]
            if result.hit:
                self._state.hits += 1
            else:
                self._state.misses += 1
            metrics.warm_claim(workflow.metric_meter(), self._state.spec.name, result.hit)
            self._changed = True  # refill behind a hit
            return result

    # --- claiming ---------------------------------------------------------------------------

    async def _claim(self, inp: ClaimInput) -> ClaimResult:
        # Only spares of the current definition: a claim may come before the converge that
        # retires the others (a definition changed across a worker restart).
        generation = self._state.spec.generation()
        warm = sorted(
            (
                s
                for s in self._state.spares.values()
                if s.phase == "warm" and s.reservation and s.generation == generation
            ),
            key=lambda s: (s.ready_since or s.started_at, s.spare_id),
        )
        if not warm:
            return ClaimResult(hit=False, reason="no warm spare of its definition is Ready")
        # Local activities: a claim is answered in a few workflow tasks, not a server round
        # trip per step. Claims are serialised by the lock, so a replay meets each answer at
        # the same point.
        fit: FitWarmResult = await workflow.execute_local_activity_method(
            WarmActivities.fit_warm_hosts,
            FitWarmInput(
                inventory=self._state.spec.inventory,
                request=inp.request,
                candidates=[s.reservation for s in warm if s.reservation],
            ),
            start_to_close_timeout=self._state.spec.timeouts.call,
            retry_policy=CALL_RETRY,
        )
        for spare_id in fit.fits:
            spare = self._state.spares.get(spare_id)
            if spare is None or spare.phase != "warm":
                continue
            # Claimed here before the hand-over: no other claim looks at it from now on.
            spare.phase, spare.claimed_by = "claimed", inp.spare_id
            handed = await self._hand_over(spare_id, inp.spare_id)
            if not handed.accepted:
                spare.phase = "leaving"  # it was leaving anyway (released, unhealthy)
                continue
            moved = await self._transfer(spare, inp)
            if moved.claimant_ended:
                # Handed over, never taken: nobody looks after its VM and Node now.
                await self._release_untaken(spare, handed, inp.spare_id)
                return ClaimResult(hit=False, reason=f"{inp.spare_id} has ended")
            self._state.claimed_total += 1
            assert spare.ready_since is not None
            return ClaimResult(
                hit=True,
                warm=WarmInfo(
                    pool=self._state.spec.name,
                    ready_since=spare.ready_since,
                    warm_spare_id=spare_id,
                ),
                reservation=moved.reservation or spare.reservation,
                vm=handed.vm or spare.vm,
            )
        return ClaimResult(hit=False, reason=fit.reason or "no warm spare fits the request")

    async def _transfer(self, spare: WarmSpare, inp: ClaimInput) -> TransferResult:
        moved: TransferResult = await workflow.execute_activity_method(
            LedgerActivities.transfer_capacity,
            TransferInput(
                inventory=self._state.spec.inventory,
                task_queue=workflow.info().task_queue,
                from_spare_id=spare.spare_id,
                to_spare_id=inp.spare_id,
                anti_affinity_group=inp.request.anti_affinity_group,
                timeouts=self._state.spec.timeouts,
                cluster=self._state.spec.cluster,
            ),
            start_to_close_timeout=self._state.spec.timeouts.ledger,
            heartbeat_timeout=self._state.spec.timeouts.heartbeat,
            retry_policy=UNTIL_MOVED,
        )
        return moved

    async def _hand_over(self, spare_id: str, to: str) -> HandOverResult:
        # A regular activity, not a local one: the workflow task that chose this spare for
        # this request is recorded before the hand-over is sent. After a crash the claim
        # replays to the same spare and the retried hand-over gets the same answer; a local
        # activity's hand-over could happen without the choice being recorded, and the
        # retried claim would hand the request a second spare.
        try:
            result: HandOverResult = await workflow.execute_activity_method(
                WarmActivities.hand_over_spare,
                HandOverRequest(warm_spare_id=spare_id, spare_id=to),
                start_to_close_timeout=self._state.spec.timeouts.call,
                heartbeat_timeout=self._state.spec.timeouts.heartbeat,
                # Until answered: a hand-over whose outcome is unknown must not be followed by
                # another spare for the same request (a refusal is an answer, not a failure).
                retry_policy=UNTIL_MOVED,
            )
        except ActivityError as err:
            # Not known to be handed over: the spare is treated as leaving (the orphan sweep
            # follows a hand-over that did happen to its claimant).
            return HandOverResult(accepted=False, reason=str(err.cause or err))
        return result

    async def _release_untaken(self, spare: WarmSpare, handed: HandOverResult, to: str) -> None:
        """Release a spare handed over to a request that ended before it took the spare: its
        reservation stayed with it (the ledger moves none to an ended spare)."""
        vm = handed.vm or spare.vm
        reason = f"handed over to {to}, which ended before taking it"
        workflow.logger.warning("warm spare %s: %s; releasing it", spare.spare_id, reason)
        # Already started: the orphan sweep got there first.
        with contextlib.suppress(WorkflowAlreadyStartedError):
            await workflow.start_child_workflow(
                RELEASE_SPARE,
                ReleaseInput(
                    spare_id=spare.spare_id,
                    vm_name=vm.name if vm else spare.spare_id,
                    host=vm.host if vm else None,
                    vmid=vm.vmid if vm else None,
                    inventory=self._state.spec.inventory,
                    reason=reason,
                    timeouts=self._state.spec.timeouts,
                ),
                id=release_workflow_id(spare.spare_id),
                # It finishes even if the pool continues as new meanwhile.
                parent_close_policy=ParentClosePolicy.ABANDON,
                static_summary=f"Release {spare.spare_id}: {reason}"[:200],
            )

    # --- keeping the pool full ----------------------------------------------------------------

    async def _converge(self) -> None:
        """Retire what is too old, of another definition or beyond the size; start what is
        missing."""
        spec, now = self._state.spec, workflow.now()
        generation, build = spec.generation(), _build_id()
        for spare in list(self._state.spares.values()):
            if spare.phase in ("coming_up", "warm") and spare.build_id != build:
                # Pinned to the build this pool left: replaced, so that build can drain (one
                # coming up is released as soon as it is Ready).
                await self._retire(spare, f"runs on build {spare.build_id}, the pool on {build}")
        live = [s for s in self._state.spares.values() if s.phase in ("coming_up", "warm")]
        surplus = max(0, len(live) - spec.size)
        # Oldest first: a pool that shrinks keeps its freshest spares.
        warm = sorted(
            (s for s in live if s.phase == "warm"), key=lambda s: (s.started_at, s.spare_id)
        )
        for spare in warm:
            age = (now - (spare.ready_since or spare.started_at)).total_seconds()
            reason = None
            if spare.generation != generation:
                reason = "no longer matches its warm pool's definition"
            elif age >= spec.max_age_seconds:
                reason = f"warm for over {spec.max_age_seconds} s"
            elif surplus > 0:
                reason = f"warm pool {spec.name} shrank to {spec.size}"
                surplus -= 1
            if reason is not None:
                await self._retire(spare, reason)
        missing = spec.size - sum(
            s.phase in ("coming_up", "warm") for s in self._state.spares.values()
        )
        if missing > 0 and (self._state.retry_at is None or now >= self._state.retry_at):
            for _ in range(missing):
                await self._start_spare(generation)
        await self._tell_when_short()
        metrics.warm_pool_ready(
            workflow.metric_meter(),
            spec.name,
            sum(s.phase == "warm" for s in self._state.spares.values()),
        )

    async def _retire(self, spare: WarmSpare, reason: str) -> None:
        spare.phase = "leaving"
        handle = workflow.get_external_workflow_handle(spare.spare_id)
        try:
            await handle.signal(REQUEST_RELEASE_SIGNAL, ReleaseRequest(reason=reason))
        except Exception:
            # Gone already: its end report removes it (or came before, and it is forgotten).
            workflow.logger.info("warm spare %s had ended already", spare.spare_id)

    async def _start_spare(self, generation: str) -> None:
        spec = self._state.spec
        self._state.seq += 1
        request = SpareRequest(
            request_id=f"{WARM_REQUEST_PREFIX}{spec.name}-{self._state.seq}",
            cluster=spec.cluster,
            inventory=spec.inventory,
            pool=spec.pool,
            template=spec.template,
            ttl_seconds=min(MAX_TTL_SECONDS, spec.max_age_seconds + TTL_MARGIN_SECONDS),
            # A warm spare tells nobody but its pool; it makes way for any real request.
            receivers=[],
            on_unhealthy="release",
            priority=-1000,
            warm_pool=spec.name,
            timeouts=self._state.spec.timeouts,
            **spec.shape(),
        )
        self._state.spares[request.spare_id] = WarmSpare(
            spare_id=request.spare_id,
            generation=generation,
            build_id=_build_id(),  # a child of a pinned workflow starts on its build
            started_at=workflow.now(),
        )
        # Abandoned, not terminated, when this run continues as new: it reports by signal.
        await workflow.start_child_workflow(
            PREPARE_SPARE,
            request,
            id=request.spare_id,
            parent_close_policy=ParentClosePolicy.ABANDON,
            static_summary=f"Warm spare of pool {spec.name}",
            search_attributes=start_search_attributes(request),
        )

    async def _tell_when_short(self) -> None:
        """`warm_pool.short` once per shortage; a pool full again closes it."""
        reason = self._short_reason()
        if reason is None:
            live = sum(s.phase in ("coming_up", "warm") for s in self._state.spares.values())
            if live >= self._state.spec.size:
                self._state.short_open = False
            return
        if self._state.short_open:
            return
        self._state.short_open = True
        self._state.short_told += 1
        spec = self._state.spec
        if self._notifier is None:
            notifier = Notifier(workflow.info().workflow_id, spec.cluster, spec.name)
            plan: PlanNotificationsResult = await workflow.execute_local_activity_method(
                NotifyActivities.plan_notifications,
                PlanNotificationsInput(receivers=None, cluster=spec.cluster),
                start_to_close_timeout=spec.timeouts.call,
            )
            notifier.routes, notifier.event_bus = plan.routes, plan.event_bus
            self._notifier = notifier
        self._notifier.send(
            EventType.WARM_POOL_SHORT, reason=reason, occurrence=self._state.short_told
        )

    def _failed(self, reason: str) -> None:
        self._state.failures_in_a_row += 1
        self._state.last_failure = reason
        backoff = min(
            MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2 ** (self._state.failures_in_a_row - 1)
        )
        self._state.retry_at = workflow.now() + timedelta(seconds=backoff)

    def _next_wakeup(self) -> timedelta | None:
        """The next moment something changes without a message: a spare's age, a backoff."""
        spec, now = self._state.spec, workflow.now()
        moments: list[datetime] = [
            (s.ready_since or s.started_at) + timedelta(seconds=spec.max_age_seconds)
            for s in self._state.spares.values()
            if s.phase == "warm"
        ]
        if self._state.retry_at is not None and self._state.retry_at > now:
            moments.append(self._state.retry_at)
        if _build_id() is not None:
            moments.append(now + timedelta(seconds=self._state.version_check_seconds))
        if not moments:
            return None
        return max(timedelta(seconds=1), min(moments) - now)

    def _short_reason(self) -> str | None:
        spec = self._state.spec
        live = sum(s.phase in ("coming_up", "warm") for s in self._state.spares.values())
        if live >= spec.size or self._state.last_failure is None:
            return None
        return (
            f"{live} of {spec.size} spares; the last {self._state.failures_in_a_row} "
            f"failed: {self._state.last_failure}"
        )

    def _show(self) -> None:
        view = self.pool()
        lines = [
            f"**Warm pool** {view.name}: {view.ready} warm, {view.coming_up} coming up of "
            f"{view.size}; {view.claimed} claimed ({view.hits} hits, {view.misses} misses)"
        ]
        if view.short_reason:
            lines.append(f"**Short** {view.short_reason}")
        workflow.set_current_details("  \n".join(lines))


def _build_id() -> str | None:
    """The build of the worker deployment this run is pinned to; None on an unversioned
    worker (which reports a build id of its own, a checksum of its code, but no deployment:
    its workflows go to whichever worker polls, so nothing is pinned to it)."""
    version = workflow.info().get_current_deployment_version()
    if version is None or not version.deployment_name:
        return None
    return version.build_id
