"""What a failed step says: the reason a person can act on, its failure type, a drain's report.

A workflow step fails either with `StepFailed` (the workflow's own judgement: no room, not
Ready in time) or with an error from an activity or child workflow, whose innermost cause is
the one that names the problem. Both end as one non-retryable workflow failure.

Plain deterministic code with no state: passed through the sandbox (worker/worker.py).
"""

from __future__ import annotations

import asyncio
from typing import NamedTuple

from temporalio import workflow
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    ChildWorkflowError,
    is_cancelled_exception,
)
from temporalio.exceptions import TimeoutError as TemporalTimeout

with workflow.unsafe.imports_passed_through():
    from contracts.drain import DrainNodeResult
    from contracts.failures import Failure
    from contracts.spare import Phase


class StepFailed(Exception):
    """A step failed for a reason a person can act on; carries that reason and its type."""

    def __init__(self, reason: str, kind: str, held_by: list[str] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind
        # A refusal for want of room: who holds the room in the spare's time.
        self.held_by = held_by or []

    def failure(self) -> ApplicationError:
        """The workflow's failure: retrying the workflow would meet the same reason."""
        return ApplicationError(self.reason, type=self.kind, non_retryable=True)


def drain_blocked(err: BaseException) -> DrainNodeResult | None:
    """The drain's report, when a release stopped because its drain could not finish."""
    cause: BaseException | None = err
    while cause is not None:
        if (
            isinstance(cause, ApplicationError)
            and cause.type == Failure.DRAIN_BLOCKED
            and cause.details
        ):
            return DrainNodeResult.model_validate(cause.details[0])
        cause = cause.__cause__
    return None


def reason(err: BaseException) -> str:
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


def kind(err: BaseException) -> str:
    """The innermost failure type that has one."""
    cause: BaseException | None = err
    while cause is not None:
        if isinstance(cause, ApplicationError) and cause.type:
            return cause.type
        cause = cause.__cause__
    return Failure.STEP_FAILED


class Ending(NamedTuple):
    """How a failed or cancelled step ends the spare."""

    reason: str
    phase: Phase
    # The workflow's failure type; None: a cancel, which goes on as a cancel.
    kind: str | None


def ending(err: BaseException) -> Ending | None:
    """How `err` ends the spare; None: not a step's failure (nothing to compensate)."""
    if isinstance(err, StepFailed):
        return Ending(err.reason, Phase.FAILED, err.kind)
    if isinstance(err, asyncio.CancelledError):
        return Ending("cancelled", Phase.CANCELLED, None)
    if isinstance(err, ActivityError | ChildWorkflowError):
        if is_cancelled_exception(err):
            return Ending("cancelled", Phase.CANCELLED, None)
        return Ending(reason(err), Phase.FAILED, kind(err))
    return None
