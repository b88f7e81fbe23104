"""ReconcileSpares: release spare VMs and Nodes that no spare workflow looks after any more.

Run by a Temporal Schedule (worker/schedules.py). A VM or Node counts as an orphan only if
it is seen without a running PrepareSpare of its name in two scans `grace_seconds` apart:
a spare that is just starting, or a scan that raced a workflow's start, is never touched.
Each orphan is released by ReleaseSpare (id `release-<name>`), and the result lists them:
that result, the log line per orphan and this workflow's history are the audit trail.

A spare whose run was terminated from outside (`temporal workflow terminate`, a start with
`--id-conflict-policy TerminateExisting`) compensated nothing and told no one. Each such run
gets a CompensateSpare (id `compensate-<spare>-<run>`: once per run) in the first sweep after
it, with no grace: termination is final. Its VM is left to that compensation, not released
as an orphan as well.

A reservation in a ledger whose workflow is not running in both scans is freed: room that a
run which ended without giving it back (terminated after its compensation, or handed a warm
spare's room as it ended) would otherwise hold for good.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ChildWorkflowError, WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from activities.kubernetes import KubernetesActivities
    from activities.reconcile import ReconcileActivities
    from contracts.reconcile import (
        RECONCILE_SPARES,
        FindOrphansInput,
        FindOrphansResult,
        FindStaleReservationsResult,
        FindTerminatedInput,
        FindTerminatedResult,
        OrphanRelease,
        OrphanSpare,
        ReconcileInput,
        ReconcileResult,
        StaleReservation,
        compensation_id,
    )


from .compensate_spare import CompensateSpare
from .ledger_calls import free_reservation
from .spare_release import spare_release, start_release

SCAN_TIMEOUT = timedelta(minutes=2)
# A scan that cannot reach Kubernetes or Temporal fails this run; the next run tries again.
SCAN_RETRY = RetryPolicy(maximum_attempts=5, maximum_interval=timedelta(seconds=30))


@workflow.defn(name=RECONCILE_SPARES)
class ReconcileSpares:
    @workflow.run
    async def run(self, inp: ReconcileInput) -> ReconcileResult:
        compensating = await self._compensate_terminated(inp)
        first = await self._scan()
        suspects = {o.name: o for o in first.orphans if o.name not in compensating}
        # Freed by their compensation (a reservation first seen then is not stale yet).
        stale = {
            r.spare_id: r
            for r in (await self._stale_reservations()).reservations
            if r.spare_id not in compensating
        }
        confirmed: list[OrphanSpare] = []
        still_stale: list[StaleReservation] = []
        if suspects or stale:
            workflow.set_current_details(
                f"{len(suspects)} suspected orphans, {len(stale)} reservations of ended "
                f"spares; looking again in {inp.grace_seconds} s"
            )
            await workflow.sleep(timedelta(seconds=inp.grace_seconds))
            if suspects:
                second = await self._scan()
                confirmed = [o for o in second.orphans if o.name in suspects]
            if stale:
                again = await self._stale_reservations()
                still_stale = [r for r in again.reservations if r.spare_id in stale]
        released = await asyncio.gather(*(self._release(o, inp) for o in confirmed))
        # An orphan's release frees its reservation itself, after its VM is gone.
        releasing = {o.name for o in confirmed}
        freed = [await self._free(r) for r in still_stale if r.spare_id not in releasing]
        workflow.set_current_details(
            f"released {sum(r.released for r in released)} orphans; "
            f"freed {len(freed)} reservations of ended spares"
        )
        return ReconcileResult(
            vms_seen=first.vms_seen,
            nodes_seen=first.nodes_seen,
            suspects=sorted(suspects),
            released=list(released),
            compensated=compensating,
            freed_reservations=freed,
        )

    async def _stale_reservations(self) -> FindStaleReservationsResult:
        return await workflow.execute_activity_method(
            ReconcileActivities.find_stale_reservations,
            start_to_close_timeout=SCAN_TIMEOUT,
            retry_policy=SCAN_RETRY,
        )

    async def _free(self, stale: StaleReservation) -> str:
        workflow.logger.warning(
            "freeing %s's reservation in inventory %s: its workflow is %s",
            stale.spare_id,
            stale.inventory,
            stale.status,
        )
        await free_reservation(stale.spare_id, stale.inventory)
        return stale.spare_id

    async def _compensate_terminated(self, inp: ReconcileInput) -> list[str]:
        """Start a CompensateSpare for each terminated run not compensated yet."""
        closed_after = workflow.now() - timedelta(seconds=inp.terminated_lookback_seconds)
        found: FindTerminatedResult = await workflow.execute_activity_method(
            ReconcileActivities.find_terminated,
            FindTerminatedInput(closed_after=closed_after, task_queue=workflow.info().task_queue),
            start_to_close_timeout=SCAN_TIMEOUT,
            retry_policy=SCAN_RETRY,
        )
        started: list[str] = []
        for spare in found.spares:
            workflow.logger.warning(
                "compensating %s: its run %s was terminated", spare.spare_id, spare.run_id
            )
            try:
                await workflow.start_child_workflow(
                    CompensateSpare.run,
                    spare,
                    id=compensation_id(spare.spare_id, spare.run_id),
                    # Once per run: only a compensation that failed is tried again.
                    id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
                    # It finishes even if this run ends first.
                    parent_close_policy=ParentClosePolicy.ABANDON,
                    static_summary=f"Compensate {spare.spare_id} (terminated run)",
                )
            except WorkflowAlreadyStartedError:
                continue  # a compensation of this run runs already
            started.append(spare.spare_id)
        return started

    async def _scan(self) -> FindOrphansResult:
        nodes: list[str] = await workflow.execute_activity_method(
            KubernetesActivities.list_spare_nodes,
            start_to_close_timeout=SCAN_TIMEOUT,
            retry_policy=SCAN_RETRY,
        )
        return await workflow.execute_activity_method(
            ReconcileActivities.find_orphans,
            FindOrphansInput(nodes=nodes),
            start_to_close_timeout=SCAN_TIMEOUT,
            retry_policy=SCAN_RETRY,
        )

    async def _release(self, orphan: OrphanSpare, inp: ReconcileInput) -> OrphanRelease:
        workflow.logger.warning(
            "releasing orphaned spare %s (vm: %s, node: %s, host: %s)",
            orphan.name,
            orphan.has_vm,
            orphan.has_node,
            orphan.host,
        )
        outcome = OrphanRelease(
            name=orphan.name,
            host=orphan.host,
            inventory=orphan.inventory,
            had_vm=orphan.has_vm,
            had_node=orphan.has_node,
            released=False,
        )
        try:
            # An orphan's release: one that started finishes even if this run is terminated.
            release = spare_release(
                orphan.name,
                "orphan: no spare workflow looks after it",
                host=orphan.host,
                inventory=orphan.inventory,
                drain_timeout_seconds=inp.drain_timeout_seconds,
            )
            await (await start_release(release))
        except WorkflowAlreadyStartedError:
            outcome.error = "a release of this spare is already running"
            return outcome
        except ChildWorkflowError as err:
            outcome.error = str(err.cause or err)
            return outcome
        outcome.released = True
        return outcome
