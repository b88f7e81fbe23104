"""A spare's first step: what the worker's configuration says of its request.

Two lookups (local activities): the receivers' plan (which receivers hear the spare, refused
if the request names one its cluster may not use) and the warm pools that could serve it.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ApplicationError
from temporalio.exceptions import TimeoutError as TemporalTimeout

with workflow.unsafe.imports_passed_through():
    from contracts.spare import SpareRequest

from . import step_failure
from .notifier import Notifier
from .progress import Progress
from .step_failure import StepFailed
from .warm_claim import WarmClaim


async def look_up_configuration(
    req: SpareRequest, progress: Progress, notifier: Notifier, warm: WarmClaim
) -> list[str]:
    """Plan the receivers and answer the warm pools that could serve the request. Both are
    asked at once, so the worker answers both in one round instead of one after the other.
    Both are answered within this workflow task, so the search attributes wait for them:
    what they say before, nobody could see."""
    with progress.answered_within_task():
        # Both are awaited even when one fails: a lookup still running when the workflow
        # fails would complete after the failure, a command sequence the server refuses.
        plan, pools = await asyncio.gather(
            _plan_notifications(req, notifier), warm.candidates(), return_exceptions=True
        )
    for outcome in (plan, pools):
        if isinstance(outcome, BaseException):
            raise outcome
    assert isinstance(pools, list)
    return pools


async def _plan_notifications(req: SpareRequest, notifier: Notifier) -> None:
    try:
        await notifier.plan(req.receivers, req.timeouts.call, req.cluster, req.inventory, req.pool)
    except (ApplicationError, TemporalTimeout) as err:
        raise StepFailed(step_failure.reason(err), step_failure.kind(err)) from None
