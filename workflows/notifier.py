"""Workflow-side webhook fan-out: one delivery activity per (event, receiver).

Deliveries run beside the workflow's progress, so a slow or dead receiver delays nobody.
The workflow waits for them only before it closes, so nothing is lost.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.notify import (
        DeliverWebhookInput,
        DeliveryResult,
        NotifyActivities,
        ReceiverRoute,
    )
    from webhooks.events import EventType, SpareEvent, VmInfo, webhook_id

def _retry(route: ReceiverRoute) -> RetryPolicy:
    spec = route.retry
    return RetryPolicy(
        initial_interval=timedelta(seconds=spec.initial_seconds),
        backoff_coefficient=spec.backoff,
        maximum_interval=timedelta(seconds=spec.max_interval_seconds),
        maximum_attempts=spec.max_attempts,
        # A receiver that refuses the event (4xx) will refuse it again.
        non_retryable_error_types=["WebhookRejected"],
    )


class Notifier:
    def __init__(self, spare_id: str, cluster: str, pool: str | None) -> None:
        self.spare_id = spare_id
        self.cluster = cluster
        self.pool = pool
        self.routes: list[ReceiverRoute] = []
        self.gone: set[str] = set()
        self.failed: list[str] = []
        self._pending: list[asyncio.Task[None]] = []

    def send(
        self,
        event_type: EventType,
        *,
        host: str | None = None,
        vm: VmInfo | None = None,
        reason: str | None = None,
    ) -> None:
        event = SpareEvent(
            type=event_type,
            spare_id=self.spare_id,
            cluster=self.cluster,
            pool=self.pool,
            host=host,
            vm=vm,
            reason=reason,
            timestamp=workflow.now(),
        )
        msg_id = webhook_id(self.spare_id, workflow.info().run_id, event_type)
        for route in self.routes:
            if route.name in self.gone:
                continue
            if route.events is not None and event_type.value not in route.events:
                continue
            self._pending.append(asyncio.create_task(self._deliver(route, msg_id, event)))

    async def _deliver(self, route: ReceiverRoute, msg_id: str, event: SpareEvent) -> None:
        try:
            result: DeliveryResult = await workflow.execute_activity_method(
                NotifyActivities.deliver_webhook,
                DeliverWebhookInput(receiver=route.name, webhook_id=msg_id, event=event),
                # One attempt lasts the receiver's HTTP timeout plus a margin, so a worker that
                # dies mid-delivery is replaced within that, not a minute later.
                start_to_close_timeout=timedelta(seconds=route.attempt_timeout_seconds),
                retry_policy=_retry(route),
                summary=f"{event.type.value} -> {route.name}",
            )
        except ActivityError as err:
            # Retries are exhausted or the receiver refused: record it, the spare goes on.
            self.failed.append(f"{event.type.value} -> {route.name}: {err.cause or err}")
            workflow.logger.warning("webhook %s to %s failed: %s", event.type, route.name, err)
            return
        if result.outcome == "gone":
            self.gone.add(route.name)

    async def drain(self) -> None:
        """Wait for every delivery started so far (called before the workflow closes)."""
        while self._pending:
            pending, self._pending = self._pending, []
            await asyncio.gather(*pending)
