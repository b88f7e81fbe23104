"""Placement latency and webhook deliveries, measured around the activities themselves.

A worker interceptor rather than code in each activity: the activities stay about their
work, and the numbers are taken the same way for every attempt, failed ones included.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from contracts import metrics

# The ledger places a batch of pending reservations in one call (one inventory read).
PLACE_VMS = "place_vms"
DELIVER_WEBHOOK = "deliver_webhook"


def _placement_outcome(result: Any) -> str:
    """placed, no_capacity or never_fits; a batch with some placed and some not: partial."""
    decisions = getattr(result, "decisions", None) or [result]
    outcomes = {
        "placed"
        if getattr(d, "host", None)
        else "never_fits"
        if getattr(d, "never_fits", False)
        else "no_capacity"
        for d in decisions
    }
    return outcomes.pop() if len(outcomes) == 1 else "partial"


class _Inbound(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        kind = activity.info().activity_type
        if kind not in (PLACE_VMS, DELIVER_WEBHOOK):
            return await super().execute_activity(input)
        meter = activity.metric_meter()
        receiver = getattr(input.args[0], "receiver", "unknown") if input.args else "unknown"
        started = time.monotonic()
        try:
            result = await super().execute_activity(input)
        except ApplicationError as err:
            if kind == DELIVER_WEBHOOK:
                result_name = "rejected" if err.non_retryable else "failed"
                metrics.webhook_delivered(meter, receiver, result_name)
            raise
        except Exception:
            if kind == DELIVER_WEBHOOK:
                metrics.webhook_delivered(meter, receiver, "failed")
            raise
        if kind == PLACE_VMS:
            elapsed = timedelta(seconds=time.monotonic() - started)
            metrics.placement_done(meter, elapsed, _placement_outcome(result))
        else:
            metrics.webhook_delivered(meter, receiver, getattr(result, "outcome", "delivered"))
        return result


class ActivityMetrics(Interceptor):
    """Records virtflow's activity-side metrics through the SDK meter (same endpoint)."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Inbound(next)
