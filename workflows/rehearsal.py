"""A booking's rehearsal: one spare of the booking's shape made, made Ready and released on
the booked host ahead of the lead start, so a broken template or host path shows while there
is still time to fix it. A failed rehearsal sends `booking.rehearsal_failed`; the booking stays.

The rehearsal is a child PrepareSpare (it shows in the Temporal UI under its booking, with its
whole history): the booking's request on the booked host (`node.qemu-scheduler/regex`), with
no window, no receivers (the upgrade controller hears only of the booking) and `rehearsal_of`
set (no warm pool serves it). Its room is its own reservation on that host, held by the
ledger as any spare's (from now until its short TTL can have ended), so it takes nothing from
the booking and nothing is over-committed. It is released as soon as it is Ready (its release
is asked for at its start: a spare honours that once Ready), and its create-to-Ready time
feeds the inventory's ledger like any spare's. A rehearsal still running at the lead start is
cancelled (its own compensation cleans up) and counts as failed.
"""

from __future__ import annotations

import asyncio
import re
from datetime import datetime

from temporalio import workflow
from temporalio.exceptions import ChildWorkflowError, WorkflowAlreadyStartedError
from temporalio.workflow import ChildWorkflowCancellationType, ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from contracts.booking import BookingInfo, RehearsalInfo
    from contracts.spare import (
        NODE_NAME_MAX,
        NODE_REGEX_ANNOTATION,
        PREPARE_SPARE,
        REQUEST_RELEASE_SIGNAL,
        ReleaseRequest,
        SpareRequest,
        SpareResult,
        spare_workflow_id,
    )
    from webhooks.events import EventType

from . import step_failure
from .notifier import Notifier

REQUEST_ID_MAX = 40
SUFFIX = "-rh"
# The rehearsal is released once Ready: its TTL only bounds its hold, kept short.
REHEARSAL_TTL_SECONDS = 60


def rehearsal_request(req: SpareRequest, spare_id: str, host: str) -> SpareRequest:
    """The booking's request, as its rehearsal on `host`: request id `<request_id>-rh`
    (shortened to stay a Node name)."""
    room = min(REQUEST_ID_MAX, NODE_NAME_MAX - len(spare_workflow_id(req.cluster, ""))) - 1
    request_id = req.request_id[: room - len(SUFFIX)] + SUFFIX
    return req.model_copy(
        update={
            "request_id": request_id,
            "window": None,
            "receivers": [],
            "rehearsal_of": spare_id,
            "annotations": {**req.annotations, NODE_REGEX_ANNOTATION: f"^{re.escape(host)}$"},
            # Placed on the booked host only: the booking's group and spread counted it there.
            "anti_affinity_group": None,
            "topology_spread": [],
            "near": None,
            "replaces": None,
            "wait_for_capacity": False,
            "ttl_seconds": REHEARSAL_TTL_SECONDS,
        }
    )


class Rehearsal:
    """One booking's rehearsal, run beside its wait for the lead start."""

    def __init__(self, req: SpareRequest, booking: BookingInfo, notifier: Notifier) -> None:
        self.req = req
        self.booking = booking
        self.notifier = notifier

    async def run(self, spare_id: str, host: str, by: datetime) -> None:
        """Make, make Ready and release the rehearsal by `by`; its outcome goes to the
        booking's status and, failed, to `booking.rehearsal_failed`. Never raises but a
        cancel."""
        child = rehearsal_request(self.req, spare_id, host)
        info = self.booking.rehearsal = RehearsalInfo(spare_id=child.spare_id, host=host)
        try:
            handle = await workflow.start_child_workflow(
                PREPARE_SPARE,
                child,
                id=child.spare_id,
                result_type=SpareResult,
                # Not waited for at the lead start: the booking's own spare is made then.
                cancellation_type=ChildWorkflowCancellationType.TRY_CANCEL,
                parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
                static_summary=f"Rehearsal of booking {spare_id} on {host}",
            )
            await handle.signal(REQUEST_RELEASE_SIGNAL, ReleaseRequest(reason="rehearsal over"))
            # At the lead start the rehearsal is cancelled (a cancel of the booking cancels it
            # too): its own compensation undoes what it made.
            wait = max(0.0, (by - workflow.now()).total_seconds())
            await asyncio.wait_for(handle, timeout=wait)
        except TimeoutError:
            self._failed(info, f"not Ready and released by the lead start {by.isoformat()}")
        except ChildWorkflowError as err:
            self._failed(info, step_failure.reason(err))
        except WorkflowAlreadyStartedError:
            self._failed(info, f"{child.spare_id} is another spare's id")
        else:
            info.outcome = "passed"

    def _failed(self, info: RehearsalInfo, reason: str) -> None:
        info.outcome, info.reason = "failed", reason
        self.notifier.send(
            EventType.BOOKING_REHEARSAL_FAILED,
            host=info.host,
            reason=f"rehearsal {info.spare_id} on {info.host}: {reason}",
        )
