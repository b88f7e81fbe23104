"""A new spare's wait for its Node to be Ready, with what is still missing in view.

One look at the Node as soon as the VM exists (a VM that boots fast is Ready by then: no
probe, no `waiting_ready` phase); then probes in bounded rounds, each an activity that waits
for the Node, so the UI shows what is still missing between rounds. virtflow puts the
spare's labels and taints on the Node itself once it registers, whatever the guest did.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.exceptions import TimeoutError as TemporalTimeout

with workflow.unsafe.imports_passed_through():
    from activities.kubernetes import KubernetesActivities
    from contracts.failures import Failure
    from contracts.kubernetes import (
        CheckNodeReadyInput,
        NodeAdoption,
        NodeReadyResult,
        WaitNodeReadyInput,
    )
    from contracts.spare import Phase, SpareRequest

from .progress import Progress
from .step_failure import StepFailed

# One readiness probe waits at most this long, then the workflow records what is missing.
READY_PROBE = 30
# The Node is looked at once (a local activity) as soon as the VM exists: one that is Ready
# by then skips the readiness probe and the `waiting_ready` phase. That look is one API call;
# longer means the API is struggling, and the probes handle that.
READY_CHECK_TIMEOUT = timedelta(seconds=10)


async def wait_ready(spare_id: str, req: SpareRequest, progress: Progress) -> None:
    """Probe in bounded rounds so the UI shows what is still missing between rounds."""
    deadline = workflow.now() + timedelta(seconds=req.ready_timeout_seconds)
    first = await _check_ready_now(spare_id, req, progress)
    if first is not None and first.ready:
        return
    missing = first.missing if first is not None else ["node not registered"]
    progress.enter(Phase.WAITING_READY, "waiting for the Node to register")
    progress.waiting(missing)
    # Whether the status says the cluster's API does not answer: a probe ends as soon as
    # that changes, so the status names an unreachable cluster (and since when) at once.
    api_down = False
    while True:
        remaining = (deadline - workflow.now()).total_seconds()
        if remaining <= 0:
            raise StepFailed(
                f"{spare_id} did not become Ready within {req.ready_timeout_seconds} s; "
                f"still missing: {', '.join(missing)}",
                Failure.NOT_READY,
            )
        probe: NodeReadyResult = await workflow.execute_activity_method(
            KubernetesActivities.wait_node_ready,
            WaitNodeReadyInput(
                node_name=spare_id,
                cluster=req.cluster,
                max_wait_seconds=min(READY_PROBE, remaining),
                adopt=_adoption(spare_id, req),
                api_down_shown=api_down,
            ),
            start_to_close_timeout=timedelta(seconds=min(READY_PROBE, remaining) + 30),
            heartbeat_timeout=req.timeouts.heartbeat,
            retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=10)),
        )
        if probe.ready:
            return
        api_down = probe.api_error is not None
        if probe.missing != missing:
            missing = probe.missing
            progress.waiting(missing)


async def _check_ready_now(
    spare_id: str, req: SpareRequest, progress: Progress
) -> NodeReadyResult | None:
    """One look at the Node, answered within this workflow task. None when the look
    failed: that only means "not known yet", and the probes retry it properly."""
    # The phase to publish depends on the answer.
    with progress.answered_within_task():
        try:
            return await workflow.execute_local_activity_method(
                KubernetesActivities.check_node_ready,
                CheckNodeReadyInput(
                    node_name=spare_id, cluster=req.cluster, adopt=_adoption(spare_id, req)
                ),
                start_to_close_timeout=READY_CHECK_TIMEOUT,
                retry_policy=RetryPolicy(maximum_attempts=1),
            )
        except (ActivityError, ApplicationError, TemporalTimeout):
            return None


def _adoption(spare_id: str, req: SpareRequest) -> NodeAdoption:
    """What the Node must carry once Ready: virtflow applies it, whatever the guest did."""
    return NodeAdoption(labels=req.spare_labels(spare_id), template=req.template, pool=req.pool)
