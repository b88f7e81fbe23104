"""InventoryLedger: one long-lived workflow per inventory that serialises reservations.

Every reservation goes through an Update handled under one lock, so two spares can never
be placed on the same free room. The ledger runs the placement activity with the current
reservations and records the answer atomically. Waiting spares are served by priority, then
arrival, whenever room is freed.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from activities.ledger import LedgerActivities
    from activities.placement import PlacementActivities
    from activities.warm_pools import WarmActivities
    from contracts import metrics
    from contracts.booking import (
        READY_TIME_SIGNAL,
        READY_TIMES_KEPT,
        READY_TIMES_QUERY,
        ReadyTime,
    )
    from contracts.failures import Failure
    from contracts.ledger import (
        CAPACITY_GRANTED_SIGNAL,
        CHANGE_HOLD_UPDATE,
        FREE_UPDATE,
        HAS_BOOKINGS_QUERY,
        HELD_BY_SHOWN,
        INVENTORY_LEDGER,
        RESERVATIONS_QUERY,
        RESERVE_GROUP_UPDATE,
        RESERVE_UPDATE,
        WAITERS_QUERY,
        Budget,
        ChangeHoldInput,
        ChangeHoldResult,
        FreeInput,
        FreeResult,
        Hold,
        LedgerState,
        Reservation,
        ReserveGroupInput,
        ReserveGroupResult,
        ReserveInput,
        ReserveResult,
        SpareRunsInput,
        SpareRunsResult,
        Waiter,
        WarmMark,
        holders,
    )
    from contracts.placement import (
        PlaceVmResult,
        PlaceVmsInput,
        PlaceVmsResult,
        RoomToExtendInput,
        RoomToExtendResult,
    )
    from contracts.spare import REQUEST_RELEASE_SIGNAL, ReleaseRequest
    from contracts.warm import (
        TRANSFER_UPDATE,
        GiveWayInput,
        GiveWayResult,
        TransferInput,
        TransferResult,
    )
    from placement.models import VmRequest

from .booked_hosts import BookedHosts

# Inventory reads can fail for a while (an HTTP source restarting): retry, but not forever,
# so a spare waiting on the update gets an answer.
PLACEMENT_RETRY = RetryPolicy(maximum_attempts=10, maximum_interval=timedelta(seconds=10))
DETAILS_LINES = 20
# Continue as new at this history size, long before the server suggests it: each placement's
# input carries the ledger's reservations, so with hundreds held the history grows by about
# 100 KB a placement, and a worker that lost its cached copy under load must replay all of it
# within one workflow task (500 held spares gave 1.3-2.3 MB, and replays that never finished).
CONTINUE_AS_NEW_HISTORY_BYTES = 1024 * 1024


@workflow.defn(name=INVENTORY_LEDGER)
class InventoryLedger:
    @workflow.init
    def __init__(self, state: LedgerState) -> None:
        # Set here, not in run(): with update-with-start the first Update arrives before run.
        self._state = state
        self._lock = asyncio.Lock()
        self._batch: list[ReserveInput] = []
        self._answers: dict[str, ReserveResult | ActivityError] = {}

    @workflow.run
    async def run(self, state: LedgerState) -> None:
        workflow.set_current_details(self._details())
        booked = BookedHosts(self._state)
        while not await booked.until_done_or_due(
            lambda: self._time_to_continue() and not self._lock.locked()
        ):
            await booked.look()
        # Handlers may be mid-flight; let them finish so their results survive the continue-as-new.
        await workflow.wait_condition(workflow.all_handlers_finished)
        # A versioned ledger's next run starts on the deployment's current version
        # (worker/versioning.py); the server refuses the option from an unversioned worker.
        upgrade = workflow.ContinueAsNewVersioningBehavior.AUTO_UPGRADE
        versioned = workflow.info().get_current_deployment_version() is not None
        workflow.continue_as_new(
            self._state, initial_versioning_behavior=upgrade if versioned else None
        )

    def _time_to_continue(self) -> bool:
        """Continue as new before the history grows large, or when a new version of the
        worker deployment became current: the ledger never ends, so it upgrades this way."""
        info = workflow.info()
        return (
            info.is_continue_as_new_suggested()
            or info.get_current_history_size() > CONTINUE_AS_NEW_HISTORY_BYTES
            or info.is_target_worker_deployment_version_changed()
        )

    @workflow.query(name=RESERVATIONS_QUERY)
    def reservations(self) -> list[Reservation]:
        return list(self._state.reservations.values())

    @workflow.query(name=HAS_BOOKINGS_QUERY)
    def has_bookings(self) -> bool:
        """Whether a refusal here may be a booking's doing: the API then waits for a new
        spare's answer from the ledger, to answer 409 naming who holds the room."""
        return any(r.hold.start is not None for r in self._state.reservations.values())

    @workflow.query(name=READY_TIMES_QUERY)
    def ready_times(self, template: str) -> list[float]:
        return list(self._state.ready_times.get(template, []))

    @workflow.signal(name=READY_TIME_SIGNAL)
    def ready_time(self, measured: ReadyTime) -> None:
        """A spare of this inventory became Ready: its time feeds the leads of bookings."""
        kept = [*self._state.ready_times.get(measured.template, []), measured.seconds]
        self._state.ready_times[measured.template] = kept[-READY_TIMES_KEPT:]

    @workflow.query(name=WAITERS_QUERY)
    def waiters(self) -> list[Waiter]:
        return list(self._state.waiters)

    @workflow.update(name=RESERVE_UPDATE)
    async def reserve(self, inp: ReserveInput) -> ReserveResult:
        """Requests wait for the lock together; the first to get it settles them all, in order:
        reservations that arrive while a placement runs are placed in one activity call."""
        self._batch.append(inp)
        async with self._lock:
            if inp.spare_id not in self._answers and self._batch:
                batch, self._batch = self._batch, []
                try:
                    await self._settle(batch)
                except ActivityError as err:
                    # Placement failed after its retries: every request of the batch says so.
                    for item in batch:
                        self._answers.setdefault(item.spare_id, err)
                workflow.set_current_details(self._details())
            answer = self._answers.pop(inp.spare_id, None) or self._known(inp)
        if isinstance(answer, ActivityError):
            raise answer
        if answer is None:
            raise ApplicationError(
                f"no answer for {inp.spare_id}", type=Failure.LEDGER_INCONSISTENT
            )
        return answer

    def _known(self, inp: ReserveInput) -> ReserveResult | None:
        """The answer for a spare the ledger already holds or queues (idempotent retries)."""
        existing = self._state.reservations.get(inp.spare_id)
        if existing is not None:
            return ReserveResult(status="reserved", reservation=existing)
        if any(w.spare_id == inp.spare_id for w in self._state.waiters):
            return ReserveResult(status="queued", reason="already waiting for capacity")
        return None

    def _leave(self, inp: ReserveInput) -> None:
        """A booking leaving its host gives its reservation there up, to be placed again (a
        repeat finds it moved already and keeps where it went)."""
        held = self._state.reservations.get(inp.spare_id)
        if inp.leaving is not None and held is not None and held.host == inp.leaving.host:
            del self._state.reservations[inp.spare_id]

    def _in_use(self, cluster: str) -> int:
        """The cluster's spares this ledger holds under its budget, warm ones not counted."""
        return sum(
            1
            for spare_id, of in self._state.clusters.items()
            if of == cluster
            and spare_id in self._state.reservations
            and spare_id not in self._state.warm
        )

    def _over_budget(self, budget: Budget | None, adding: int = 1) -> str | None:
        return None if budget is None else budget.refusal(self._in_use(budget.cluster), adding)

    def _waiting_for_room(self) -> bool:
        """Waiters that wait for room, not for their cluster's budget, are ahead of newcomers."""
        return any(self._over_budget(w.budget) is None for w in self._state.waiters)

    def _answer_without_placement(self, inp: ReserveInput) -> ReserveResult | None:
        known = self._known(inp)
        over = self._over_budget(inp.budget) if known is None else None
        if over is not None:
            # Past the cluster's surge budget: a request that does not fit.
            if inp.wait_for_capacity and not inp.booking:
                self._enqueue(inp)
                return ReserveResult(status="queued", reason=f"waiting for the budget: {over}")
            return ReserveResult(status="no_capacity", reason=over)
        if known is None and inp.booking:
            # A booking is answered at once by its own window: no queue to wait in or behind.
            return None
        if known is None and inp.warm_pool is not None and self._waiting_for_room():
            # Warm spares come last: room freed now goes to the requests waiting for it.
            return ReserveResult(status="no_capacity", reason="requests are waiting for room")
        if known is None and self._waiting_for_room() and inp.wait_for_capacity:
            # Waiters come first: a newcomer may not jump the queue.
            self._enqueue(inp)
            return ReserveResult(status="queued", reason="waiting behind earlier requests")
        return known

    async def _settle(self, batch: list[ReserveInput]) -> None:
        for inp in batch:
            self._leave(inp)
        rest = batch
        while rest:
            to_place = []
            for inp in rest:
                answer = self._answer_without_placement(inp)
                if answer is None:
                    to_place.append(inp)
                else:
                    self._answers[inp.spare_id] = answer
            rest = await self._place_in_order(to_place) if to_place else []

    async def _place_in_order(self, items: list[ReserveInput]) -> list[ReserveInput]:
        """Record each decision; what is left to place again if one could not be used."""
        result = await self._place_batch([i.request for i in items], [i.hold for i in items])
        for k, (inp, decision) in enumerate(zip(items, result.decisions, strict=True)):
            answer = self._answer_without_placement(inp)
            if answer is not None:
                self._answers[inp.spare_id] = answer
                if decision.host is not None:
                    # Later decisions counted this one's room, which it does not take.
                    return items[k + 1 :]
                continue
            self._answers[inp.spare_id] = await self._outcome(inp, decision)
        return []

    async def _place_batch(
        self, requests: list[VmRequest], holds: list[Hold | None]
    ) -> PlaceVmsResult:
        # A regular activity, not a local one: its input and result are events in history, so a
        # replay hands the answer back at the same point among the updates that arrived. (A local
        # activity's result could come back at another point and find a different batch.)
        # Spares wait for this answer inside their reserve activities, which hold activity
        # slots: the worker's `max_concurrent_activities` leaves room for it.
        return await workflow.execute_activity_method(
            PlacementActivities.place_vms,
            PlaceVmsInput(
                inventory=self._state.inventory,
                requests=requests,
                reservations=list(self._state.reservations.values()),
                # Every request over its hold (none: from now until freed), at the ledger's now.
                holds=[hold or Hold() for hold in holds],
                now=workflow.now(),
            ),
            start_to_close_timeout=self._state.timeouts.call,
            retry_policy=PLACEMENT_RETRY,
        )

    async def _outcome(self, inp: ReserveInput, decision: PlaceVmResult) -> ReserveResult:
        if decision.host is not None:
            reservation = self._record(inp.spare_id, inp.request, decision, inp.hold, show=False)
            self._of_cluster(inp.spare_id, inp.cluster)
            if inp.warm_pool is not None:
                self._state.warm[inp.spare_id] = WarmMark(pool=inp.warm_pool, since=workflow.now())
            return ReserveResult(status="reserved", reservation=reservation)
        if decision.never_fits:
            return ReserveResult(status="never_fits", reason=decision.summary)
        if inp.booking:
            # Room held later is never taken from a spare that holds it now, warm ones included.
            return self._refused(decision, inp.cluster)
        taken_back = await self._take_back_warm(inp) if inp.warm_pool is None else []
        if taken_back:
            # The request waits for the room its warm spares free as they are released.
            self._enqueue(inp)
            return ReserveResult(
                status="queued",
                reason=f"taking back warm spares {', '.join(taken_back)} to make room",
            )
        if inp.wait_for_capacity:
            self._enqueue(inp)
            return ReserveResult(status="queued", reason=decision.summary)
        return self._refused(decision, inp.cluster)

    @reserve.validator
    def validate_reserve(self, inp: ReserveInput) -> None:
        self._check_inventory(inp.inventory)

    def _check_inventory(self, inventory: str) -> None:
        if inventory != self._state.inventory:
            raise ValueError(
                f"this ledger serves inventory '{self._state.inventory}', not '{inventory}'"
            )

    @workflow.update(name=RESERVE_GROUP_UPDATE)
    async def reserve_group(self, inp: ReserveGroupInput) -> ReserveGroupResult:
        """Every member of a request (`count: N`) or none: one placement of all of them, each
        counting the members placed before it, recorded only if every one found a host."""
        async with self._lock:
            missing = [m for m in inp.members if m.spare_id not in self._state.reservations]
            over = self._over_budget(inp.budget, len(missing)) if missing else None
            if over is not None and inp.budget is not None:
                # All or nothing against the budget too: nothing is placed or recorded.
                in_use = self._in_use(inp.budget.cluster)
                return ReserveGroupResult(
                    status="over_budget",
                    placeable=max(0, inp.budget.max_spares - in_use),
                    reason=over,
                    in_use=in_use,
                )
            if missing:
                result = await self._place_batch(
                    [m.request for m in missing], [m.hold for m in missing]
                )
                decisions = result.decisions
                placeable = (
                    len(inp.members) - len(missing) + sum(d.host is not None for d in decisions)
                )
                missed = next((d for d in decisions if d.host is None), None)
                if missed is not None:
                    # All or nothing: nothing new is recorded, so nothing has to be given back.
                    return ReserveGroupResult(
                        status="never_fits" if missed.never_fits else "no_capacity",
                        placeable=placeable,
                        reason=self._with_holders(missed, inp.cluster),
                        held_by=self._own(missed.held_by, inp.cluster)[:HELD_BY_SHOWN],
                    )
                for member, decision in zip(missing, decisions, strict=True):
                    self._record(member.spare_id, member.request, decision, member.hold, show=False)
                    self._of_cluster(member.spare_id, inp.cluster)
                workflow.set_current_details(self._details())
            # Members held already (a repeated request) keep what they were given.
            return ReserveGroupResult(
                status="reserved",
                reservations=[self._state.reservations[m.spare_id] for m in inp.members],
                placeable=len(inp.members),
            )

    @reserve_group.validator
    def validate_reserve_group(self, inp: ReserveGroupInput) -> None:
        self._check_inventory(inp.inventory)

    @workflow.update(name=FREE_UPDATE)
    async def free(self, inp: FreeInput) -> FreeResult:
        async with self._lock:
            freed = self._state.reservations.pop(inp.spare_id, None) is not None
            self._state.warm.pop(inp.spare_id, None)
            self._state.clusters.pop(inp.spare_id, None)
            waiting = [w for w in self._state.waiters if w.spare_id != inp.spare_id]
            freed = freed or len(waiting) != len(self._state.waiters)
            self._state.waiters = waiting
            await self._serve_waiters()
            workflow.set_current_details(self._details())
            return FreeResult(freed=freed)

    @workflow.update(name=CHANGE_HOLD_UPDATE)
    async def change_hold(self, inp: ChangeHoldInput) -> ChangeHoldResult:
        """A booking's hold given a new end, decided under the lock so no reservation slips
        in between: a shorter one at once (and waiters may use the room it frees), a longer
        one only if its host keeps room for it until then."""
        async with self._lock:
            held = self._state.reservations.get(inp.spare_id)
            if held is None:
                return ChangeHoldResult(
                    status="not_held",
                    reason=f"inventory {self._state.inventory} holds no room for {inp.spare_id}",
                )
            longer = held.hold.end is not None and inp.end > held.hold.end
            if longer:
                room = await self._room_to_extend(held, inp)
                if not room.fits:
                    own = self._own(room.held_by, self._state.clusters.get(inp.spare_id))
                    return ChangeHoldResult(
                        status="no_capacity",
                        reservation=held,
                        reason=room.summary,
                        held_by=own[:HELD_BY_SHOWN],
                        held_by_others=len(room.held_by) - len(own),
                        free_until=room.free_until,
                        free_again_at=room.free_again_at,
                    )
            changed = held.model_copy(
                update={"hold": held.hold.model_copy(update={"end": inp.end})}
            )
            self._state.reservations[inp.spare_id] = changed
            if not longer:
                await self._serve_waiters()
            workflow.set_current_details(self._details())
            return ChangeHoldResult(status="changed", reservation=changed)

    @change_hold.validator
    def validate_change_hold(self, inp: ChangeHoldInput) -> None:
        self._check_inventory(inp.inventory)

    async def _room_to_extend(self, held: Reservation, inp: ChangeHoldInput) -> RoomToExtendResult:
        # Only the reservations on its host travel: the answer is about that host alone.
        on_host = [
            r
            for r in self._state.reservations.values()
            if r.host == held.host and r.spare_id != held.spare_id
        ]
        return await workflow.execute_activity_method(
            PlacementActivities.room_to_extend,
            RoomToExtendInput(
                inventory=self._state.inventory,
                reservation=held,
                reservations=on_host,
                end=inp.end,
                now=workflow.now(),
            ),
            start_to_close_timeout=self._state.timeouts.call,
            retry_policy=PLACEMENT_RETRY,
        )

    @workflow.update(name=TRANSFER_UPDATE)
    async def transfer(self, inp: TransferInput) -> TransferResult:
        """A claimed warm spare's room becomes the claiming spare's: the same VM on the same
        host, kept under the new spare's id, so nothing is freed or placed in between. Never
        to a claimant that has ended: its compensation (a terminated run is compensated once)
        may have run already, and nothing would ever free the room again."""
        async with self._lock:
            if inp.from_spare_id in self._state.reservations and not await self._runs(
                inp.to_spare_id
            ):
                workflow.logger.warning(
                    "%s's room stays its own: %s has ended", inp.from_spare_id, inp.to_spare_id
                )
                return TransferResult(claimant_ended=True)
            moved = self._state.reservations.pop(inp.from_spare_id, None)
            self._state.warm.pop(inp.from_spare_id, None)
            self._state.clusters.pop(inp.from_spare_id, None)
            if moved is not None:
                self._state.reservations[inp.to_spare_id] = moved.model_copy(
                    update={
                        "spare_id": inp.to_spare_id,
                        "anti_affinity_group": inp.anti_affinity_group,
                    }
                )
                if inp.cluster is not None:
                    # No longer warm: a spare of its cluster, counted against its budget.
                    self._state.clusters[inp.to_spare_id] = inp.cluster
                workflow.set_current_details(self._details())
            # A repeat finds the reservation moved already.
            return TransferResult(reservation=self._state.reservations.get(inp.to_spare_id))

    @transfer.validator
    def validate_transfer(self, inp: TransferInput) -> None:
        self._check_inventory(inp.inventory)

    async def _runs(self, spare_id: str) -> bool:
        # Asked under the lock: a compensation's `free` of this spare waits for the answer and
        # comes after the move, so the room cannot slip between the two.
        answer: SpareRunsResult = await workflow.execute_activity_method(
            LedgerActivities.spare_runs,
            SpareRunsInput(spare_id=spare_id),
            start_to_close_timeout=self._state.timeouts.call,
            retry_policy=PLACEMENT_RETRY,
        )
        return answer.running

    def _enqueue(self, inp: ReserveInput) -> None:
        self._state.seq += 1
        self._state.waiters.append(Waiter(seq=self._state.seq, **inp.ask()))
        self._state.waiters.sort(key=lambda w: (-w.priority, w.seq))
        workflow.set_current_details(self._details())

    async def _take_back_warm(self, inp: ReserveInput) -> list[str]:
        """Release the fewest warm spares (oldest first among equals) whose room lets this
        request fit; their ids, or none when no warm spare's room would help."""
        marks = self._state.warm
        warm = sorted(
            (
                self._state.reservations[spare_id]
                for spare_id, mark in marks.items()
                if mark.taken_back_for is None and spare_id in self._state.reservations
            ),
            key=lambda r: (marks[r.spare_id].since, r.spare_id),
        )
        if not warm:
            return []
        chosen: GiveWayResult = await workflow.execute_activity_method(
            WarmActivities.give_way,
            GiveWayInput(
                inventory=self._state.inventory,
                request=inp.request,
                reservations=list(self._state.reservations.values()),
                warm=warm,
            ),
            start_to_close_timeout=self._state.timeouts.call,
            retry_policy=PLACEMENT_RETRY,
        )
        for spare_id in chosen.take_back:
            marks[spare_id].taken_back_for = inp.spare_id
            reason = f"taken back from warm pool {marks[spare_id].pool} for {inp.spare_id}"
            workflow.logger.info("%s: %s", spare_id, reason)
            try:
                await workflow.get_external_workflow_handle(spare_id).signal(
                    REQUEST_RELEASE_SIGNAL, ReleaseRequest(reason=reason)
                )
            except Exception:
                # Gone already (claimed or ended): its room comes back through its own end.
                workflow.logger.info("warm spare %s had ended already", spare_id)
        return chosen.take_back

    async def _serve_waiters(self) -> None:
        """Place waiters in order while room allows; the first that does not fit keeps its turn.
        A waiter whose cluster is at its budget is passed over: it waits for its own
        cluster's spares, not for room."""
        k = 0
        while k < len(self._state.waiters):
            waiter = self._state.waiters[k]
            if self._over_budget(waiter.budget) is not None:
                k += 1
                continue
            decision = await self._place(waiter.request, waiter.hold)
            if decision.host is None:
                return
            self._state.waiters.pop(k)
            reservation = self._record(waiter.spare_id, waiter.request, decision, waiter.hold)
            self._of_cluster(waiter.spare_id, waiter.cluster)
            spare = workflow.get_external_workflow_handle(waiter.spare_id)
            try:
                await spare.signal(CAPACITY_GRANTED_SIGNAL, reservation)
            except Exception:
                # The spare is gone (cancelled, timed out): its room goes back to the pool.
                workflow.logger.warning("waiter %s vanished; freeing its room", waiter.spare_id)
                self._state.reservations.pop(waiter.spare_id, None)

    async def _place(self, request: VmRequest, hold: Hold | None) -> PlaceVmResult:
        placed = await self._place_batch([request], [hold])
        return placed.decisions[0]

    def _record(
        self,
        spare_id: str,
        request: VmRequest,
        decision: PlaceVmResult,
        hold: Hold | None,
        show: bool = True,
    ) -> Reservation:
        if decision.host is None:
            raise ApplicationError("cannot record a reservation without a host")
        reservation = Reservation.of(
            request, decision.host, decision.vmid, spare_id, decision.topology, hold=hold
        )
        self._state.reservations[spare_id] = reservation
        if show:
            workflow.set_current_details(self._details())
        return reservation

    def _of_cluster(self, spare_id: str, cluster: str | None) -> None:
        if cluster is not None:
            self._state.clusters[spare_id] = cluster

    def _own(self, held_by: list[str], cluster: str | None) -> list[str]:
        """The holders a requester of `cluster` may be told of: its own cluster's spares (a
        requester of no cluster: those of no cluster)."""
        return [s for s in held_by if self._state.clusters.get(s) == cluster]

    def _refused(self, decision: PlaceVmResult, cluster: str | None) -> ReserveResult:
        return ReserveResult(
            status="no_capacity",
            reason=self._with_holders(decision, cluster),
            held_by=self._own(decision.held_by, cluster)[:HELD_BY_SHOWN],
        )

    def _with_holders(self, decision: PlaceVmResult, cluster: str | None) -> str:
        """The placement's summary, and who holds the room it wanted in that time: the
        requester's own cluster's spares by name, the others counted."""
        if not decision.held_by:
            return decision.summary
        own = self._own(decision.held_by, cluster)
        held = holders(own, len(decision.held_by) - len(own))
        return f"{decision.summary}; the room is held then by {held}"

    def _details(self) -> str:
        # Called after every change of the reservations, so the gauge follows them too.
        held = self._state.reservations.values()
        metrics.ledger_counts(
            workflow.metric_meter(),
            self._state.inventory,
            reservations=len(held),
            waiters=len(self._state.waiters),
            bookings=sum(r.hold.start is not None for r in held),
        )
        lines = [
            f"**Inventory** {self._state.inventory}: {len(self._state.reservations)} reserved, "
            f"{len(self._state.waiters)} waiting"
        ]
        # A few lines, not hundreds: the details travel with every workflow task.
        shown = list(self._state.reservations.values())[:DETAILS_LINES]
        lines += [f"- {r.spare_id} on {r.host}" for r in shown]
        if len(self._state.reservations) > DETAILS_LINES:
            lines.append(f"- and {len(self._state.reservations) - DETAILS_LINES} more")
        return "\n".join(lines)
