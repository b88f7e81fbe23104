"""ReleaseSpare: give a spare back. Runs as PrepareSpare's child, or alone to clean an orphan.

Every step is idempotent (a missing Node or VM is already released), so compensation after a
partial failure and a repeated release both converge on "nothing left". A drain that cannot
finish in time follows the drain policy: `fail` stops the release here (DrainBlocked, the
Node stays cordoned, the VM and reservation stay), `leave` ends it here as a success that
reports the VM kept, `force` has already deleted what was left.

The release is done only once the VM is gone: a destroy the hypervisor refuses for now (a
backup's lock, lost quorum, a task slower than the playbook's wait) is tried again, a bounded
number of times and further apart each time, each refusal shown in the step and told to the
parent spare; after the last, the release fails (`DestroyRefused`) with the hypervisor's
reason, leaving the VM and the reservation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, FailureError

with workflow.unsafe.imports_passed_through():
    from activities.kubernetes import DrainNodeInput, DrainNodeResult, KubernetesActivities
    from activities.provisioning import ProvisioningActivities
    from contracts.drain import DrainOutcome, DrainPolicy
    from contracts.failures import Failure
    from contracts.kubernetes import NodeNameInput
    from contracts.release import (
        RELEASE_SPARE,
        RELEASE_STEP_SIGNAL,
        STEP_QUERY,
        ReleaseInput,
        ReleaseResult,
    )
    from contracts.vm import DestroyVmInput


from .ledger_calls import UNTIL_DONE, free_reservation

DESTROY_TIMEOUT = timedelta(minutes=20)
# A refused destroy is tried this many times in all, 5 s after the first refusal, then twice
# as long each time up to 5 min apart (about 40 min in all).
DESTROY_TRIES = 12
DESTROY_FIRST_WAIT = timedelta(seconds=5)
DESTROY_LONGEST_WAIT = timedelta(minutes=5)
# Each try is one attempt: the workflow sees the refusal and says it.
ONE_ATTEMPT = RetryPolicy(maximum_attempts=1)


@workflow.defn(name=RELEASE_SPARE)
class ReleaseSpare:
    def __init__(self) -> None:
        self._step = "starting"

    @workflow.query(name=STEP_QUERY)
    def step(self) -> str:
        return self._step

    def _at(self, step: str) -> None:
        self._step = step
        workflow.set_current_details(f"**Releasing** {workflow.info().workflow_id}: {step}")

    @workflow.run
    async def run(self, inp: ReleaseInput) -> ReleaseResult:
        node = NodeNameInput(node_name=inp.vm_name, cluster=inp.cluster)
        self._at("cordoning the node")
        await self._node_call(KubernetesActivities.cordon_node, node, inp)
        self._at(f"draining the node (at most {inp.drain_timeout_seconds} s)")
        drain = DrainNodeInput(
            node_name=inp.vm_name,
            cluster=inp.cluster,
            timeout_seconds=inp.drain_timeout_seconds,
            policy=inp.drain_policy,
        )
        drained: DrainNodeResult = await workflow.execute_activity_method(
            KubernetesActivities.drain_node,
            drain,
            # With `force`, deleted pods get their own wait after the drain timeout.
            start_to_close_timeout=timedelta(
                seconds=inp.drain_timeout_seconds + drain.delete_wait_seconds + 60
            ),
            heartbeat_timeout=inp.timeouts.heartbeat,
            retry_policy=UNTIL_DONE,
        )
        self._at(drained.summary())
        if drained.outcome == DrainOutcome.BLOCKED and drained.policy == DrainPolicy.FAIL:
            # Deleting the Node now would kill what the budgets protect: a person decides.
            raise ApplicationError(
                f"drain of {inp.vm_name} did not finish in {inp.drain_timeout_seconds} s "
                f"(policy fail; the Node stays cordoned): {drained.summary()}",
                drained.model_dump(mode="json"),
                type=Failure.DRAIN_BLOCKED,
                non_retryable=True,
            )
        if drained.outcome == DrainOutcome.BLOCKED and drained.policy == DrainPolicy.LEAVE:
            self._at(f"left cordoned (policy leave): {drained.summary()}")
            return ReleaseResult(
                spare_id=inp.spare_id,
                evicted=drained.evicted,
                not_evicted=drained.skipped,
                drain=drained,
                left_cordoned=True,
            )
        self._at("deleting the node")
        await self._node_call(KubernetesActivities.delete_node, node, inp)
        await self._destroy(inp)
        self._at("freeing the reservation")
        freed = await free_reservation(inp.spare_id, inp.inventory, inp.timeouts)
        self._at("released")
        return ReleaseResult(
            spare_id=inp.spare_id,
            evicted=drained.evicted,
            not_evicted=drained.skipped,
            freed=freed.freed,
            drain=drained,
        )

    async def _node_call(
        self,
        call: Callable[[KubernetesActivities, NodeNameInput], Awaitable[None]],
        node: NodeNameInput,
        inp: ReleaseInput,
    ) -> None:
        # Cordon and delete are one idempotent API call each: local activities, run by this
        # worker within the workflow task, without a round trip through the task queue.
        await workflow.execute_local_activity_method(
            call, node, start_to_close_timeout=inp.timeouts.call, retry_policy=UNTIL_DONE
        )

    async def _destroy(self, inp: ReleaseInput) -> None:
        """Destroy the VM; a refusal that may heal is tried again, a bounded number of times."""
        wait = DESTROY_FIRST_WAIT
        for attempt in range(1, DESTROY_TRIES + 1):
            self._at("destroying the VM" if attempt == 1 else f"destroying the VM (try {attempt})")
            try:
                await workflow.execute_activity_method(
                    ProvisioningActivities.destroy_vm,
                    DestroyVmInput(name=inp.vm_name, host=inp.host, vmid=inp.vmid),
                    start_to_close_timeout=DESTROY_TIMEOUT,
                    heartbeat_timeout=inp.timeouts.heartbeat,
                    retry_policy=ONE_ATTEMPT,
                )
                return
            except ActivityError as err:
                cause = err.cause
                if isinstance(cause, ApplicationError) and cause.non_retryable:
                    raise
                reason = cause.message if isinstance(cause, ApplicationError) else str(cause)
                if attempt == DESTROY_TRIES:
                    raise ApplicationError(
                        f"VM {inp.vm_name} was not destroyed in {DESTROY_TRIES} tries; it stays, "
                        f"and so does its reservation: {reason}",
                        type=Failure.DESTROY_REFUSED,
                        non_retryable=True,
                    ) from None
                seconds = int(wait.total_seconds())
                await self._tell(
                    f"destroying the VM: refused ({reason}); trying again in {seconds} s "
                    f"(try {attempt} of {DESTROY_TRIES})"
                )
                await workflow.sleep(wait)
                wait = min(wait * 2, DESTROY_LONGEST_WAIT)

    async def _tell(self, step: str) -> None:
        """Show the step, and tell the spare this release runs for (its phase detail)."""
        self._at(step)
        parent = workflow.info().parent
        if parent is None:
            return
        try:
            await workflow.get_external_workflow_handle(
                parent.workflow_id, run_id=parent.run_id
            ).signal(RELEASE_STEP_SIGNAL, step)
        except FailureError as err:
            # The parent has ended (terminated): the release goes on all the same.
            workflow.logger.info("%s could not be told: %s", parent.workflow_id, err)
