"""A spare's release as a child workflow: the one way its input and id are built and it starts.

PrepareSpare releases its own spare (at the end, or to compensate), CompensateSpare the spare
of a terminated run, ReconcileSpares an orphan no run owns. The child id names the release:
`release-<spare>-<run[:8]>` for a run's own (a terminated run's compensation takes the id the
run's release had, so the two never both run), `release-<spare>` for an orphan.

ReleaseSpare is started by name: importing its module here would rebuild it in the sandbox
for every spare.

Plain deterministic code with no state: passed through the sandbox (worker/worker.py).
"""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple

from temporalio import workflow
from temporalio.exceptions import ChildWorkflowError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from contracts.drain import DrainNodeResult
    from contracts.failures import Failure
    from contracts.release import (
        RELEASE_SPARE,
        ReleaseInput,
        ReleaseResult,
        release_workflow_id,
    )
    from contracts.spare import SpareRequest
    from webhooks.events import DrainInfo

from . import step_failure
from .event_shapes import drain_info


class SpareRelease(NamedTuple):
    input: ReleaseInput
    workflow_id: str
    summary: str
    # An orphan's release belongs to no run: it finishes even if the sweep that started it
    # ends first. A run's own release ends with the run.
    orphan: bool


def spare_release(
    spare_id: str,
    reason: str,
    *,
    host: str | None,
    request: SpareRequest | None = None,
    run_id: str | None = None,
    vm_name: str | None = None,
    vmid: int | None = None,
    inventory: str | None = None,
    drain_timeout_seconds: int | None = None,
) -> SpareRelease:
    """The release of `spare_id`. A run's own (`request` and `run_id` given) drains and times
    out as the request asked; an orphan's (neither) uses `inventory` and
    `drain_timeout_seconds`, and ReleaseInput's defaults for the rest."""
    settings: dict[str, Any] = {
        k: v
        for k, v in (("inventory", inventory), ("drain_timeout_seconds", drain_timeout_seconds))
        if v is not None
    }
    if request is not None:
        settings = {
            "cluster": request.cluster,
            "inventory": request.inventory,
            "drain_timeout_seconds": request.drain_timeout_seconds,
            "drain_policy": request.drain_policy,
            "timeouts": request.timeouts,
        }
    inp = ReleaseInput(
        spare_id=spare_id,
        vm_name=vm_name or spare_id,
        host=host,
        vmid=vmid,
        reason=reason,
        **settings,
    )
    if run_id is None:
        return SpareRelease(inp, release_workflow_id(spare_id), f"Release orphan {spare_id}", True)
    summary = f"Release {spare_id}: {reason}"[:200]
    return SpareRelease(inp, release_workflow_id(spare_id) + f"-{run_id[:8]}", summary, False)


async def start_release(
    release: SpareRelease,
) -> workflow.ChildWorkflowHandle[Any, ReleaseResult]:
    """Start the release; raises WorkflowAlreadyStartedError if one of its id runs."""
    return await workflow.start_child_workflow(
        RELEASE_SPARE,
        release.input,
        id=release.workflow_id,
        static_summary=release.summary,
        result_type=ReleaseResult,
        parent_close_policy=(
            ParentClosePolicy.ABANDON if release.orphan else ParentClosePolicy.TERMINATE
        ),
    )


async def release_to_the_end(release: SpareRelease) -> ReleaseResult:
    """Run the release to its end, even through a cancel of the caller.

    A cancel asks for exactly this clean-up: cutting the release short would leave the VM,
    Node and reservation behind. Shielded, it runs to its end, once.
    """
    starting = asyncio.ensure_future(start_release(release))
    try:
        return await asyncio.shield(await asyncio.shield(starting))
    except asyncio.CancelledError:
        workflow.logger.info(
            "cancel requested while releasing %s: finishing the release", release.input.spare_id
        )
        return await (await starting)


class ReleaseOutcome(NamedTuple):
    """How a spare's own release ended: `released`, or stopped with the reason (a drain its
    policy blocked, or a VM the hypervisor would not destroy) and the failure type."""

    released: ReleaseResult | None
    error: str = ""
    failure: str = ""
    blocked: DrainNodeResult | None = None

    @property
    def drain(self) -> DrainInfo | None:
        """The drain, as the spare's events tell it."""
        if self.released is not None and self.released.drain is not None:
            return drain_info(self.released.drain, self.released.left_cordoned)
        return drain_info(self.blocked) if self.blocked is not None else None


async def release_outcome(release: SpareRelease) -> ReleaseOutcome:
    """Run a spare's own release to its end (release_to_the_end) and say how it ended."""
    try:
        return ReleaseOutcome(await release_to_the_end(release))
    except ChildWorkflowError as err:
        blocked = step_failure.drain_blocked(err)
        failure = Failure.DRAIN_BLOCKED if blocked is not None else step_failure.kind(err)
        return ReleaseOutcome(None, step_failure.reason(err), failure, blocked)
