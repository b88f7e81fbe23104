"""CompensateSpare: undo a spare whose run was terminated from outside.

A terminated run runs no code of its own: no compensation, no `spare.failed`. The orphan
sweep (ReconcileSpares) finds such a run and starts this, once per run (its id names the
run), to do what the run's own compensation would have done: release the VM and Node, free
the reservation (ReleaseSpare), and tell the spare's receivers `spare.failed`, with the
webhook id the terminated run would have used, so a receiver sees it once.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from contracts.reconcile import COMPENSATE_SPARE, TerminatedSpare
    from webhooks.events import EventType

from .notifier import Notifier
from .spare_release import spare_release, start_release

REASON = "terminated from outside; compensated by the orphan sweep"


@workflow.defn(name=COMPENSATE_SPARE)
class CompensateSpare:
    @workflow.run
    async def run(self, spare: TerminatedSpare) -> str:
        req = spare.request
        notifier = Notifier(spare.spare_id, req.cluster, req.pool, run_id=spare.run_id)
        # The spare's cluster's receivers only, as a spare's own run tells them.
        await notifier.plan(req.receivers, req.timeouts.call, req.cluster, made=True)
        workflow.set_current_details(f"releasing {spare.spare_id} (run {spare.run_id})")
        reason = REASON
        try:
            # Under the id the run's own release had (it was terminated with its parent).
            release = spare_release(
                spare.spare_id,
                REASON,
                host=spare.host,
                request=req,
                run_id=spare.run_id,
                vmid=spare.vmid,
            )
            await (await start_release(release))
        except ChildWorkflowError as err:
            # A drain the policy stops: the Node stays cordoned for a person, as a spare's
            # own compensation leaves it; the receivers still hear that the spare failed.
            reason = f"{REASON}; release stopped: {err.cause or err}"
        notifier.send(EventType.FAILED, host=spare.host, reason=reason)
        await notifier.drain()
        workflow.set_current_details(reason)
        return reason
