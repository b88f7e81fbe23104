"""Workflow-side fan-out: one delivery activity per (event, receiver), one publish per event.

Deliveries run beside the workflow's progress, so a slow or dead receiver delays nobody.
The workflow waits for them only before it closes, so nothing is lost. A receiver that
answers 410 Gone is disabled for the rest of the spare: its pending deliveries are cancelled,
later events skip it, and the spare's status names it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from activities.event_bus import EventBusActivities
    from activities.notify import NotifyActivities
    from contracts.failures import Failure
    from contracts.notify import (
        DeliverWebhookInput,
        DeliveryResult,
        EventBusRoute,
        PlanNotificationsInput,
        PublishEventInput,
        ReceiverRoute,
        RetryPolicySpec,
    )
    from webhooks.events import (
        EventType,
        SpareEvent,
        SpareEventData,
        webhook_id,
    )

PUBLISH_TIMEOUT = timedelta(seconds=30)


def _retry(spec: RetryPolicySpec) -> RetryPolicy:
    return RetryPolicy(
        initial_interval=timedelta(seconds=spec.initial_seconds),
        backoff_coefficient=spec.backoff,
        maximum_interval=timedelta(seconds=spec.max_interval_seconds),
        maximum_attempts=spec.max_attempts,
        # A receiver that refuses the event (4xx) will refuse it again; so would a worker
        # without a bus.
        non_retryable_error_types=[Failure.WEBHOOK_REJECTED, Failure.EVENT_BUS_NOT_CONFIGURED],
    )


def _nothing() -> None:
    """No one to tell that the receivers changed."""


@dataclass
class Notifier:
    """A spare's events, each delivered to its receivers (and its event bus) by an activity of
    its own, in the background; the spare goes on meanwhile."""

    spare_id: str
    cluster: str
    pool: str | None
    on_change: Callable[[], None] = _nothing
    # The spare's run the webhook ids are keyed by: this run's, unless it speaks for
    # another (the compensation of a terminated run).
    run_id: str | None = None
    routes: list[ReceiverRoute] = field(default_factory=list, init=False)
    event_bus: EventBusRoute | None = field(default=None, init=False)
    # The spare's cluster's surge budget, looked up with the receivers.
    max_spares: int | None = field(default=None, init=False)
    # Receivers that answered 410, in the order they did: nothing more is sent to them.
    gone: list[str] = field(default_factory=list, init=False)
    failed: list[str] = field(default_factory=list, init=False)
    _pending: list[asyncio.Task[None]] = field(default_factory=list, init=False)
    _by_receiver: dict[str, list[asyncio.Task[None]]] = field(default_factory=dict, init=False)

    async def plan(
        self,
        receivers: list[str] | None,
        timeout: timedelta,
        cluster: str | None = None,
        inventory: str | None = None,
        pool: str | None = None,
        made: bool = False,
    ) -> None:
        """Which receivers get which events: a lookup in the worker's configuration. A local
        activity: it records its answer like any activity, without a round trip through the
        server's task queue; its failure arrives as is, not inside an ActivityError. With the
        spare's `cluster` (and its inventory and pool), the cluster's own receivers, and its
        refusal of a spare it does not register or allow (`made`: a spare made already is not
        refused, its events still go only to its cluster's receivers)."""
        plan = await workflow.execute_local_activity_method(
            NotifyActivities.plan_notifications,
            PlanNotificationsInput(
                receivers=receivers, cluster=cluster, inventory=inventory, pool=pool, made=made
            ),
            start_to_close_timeout=timeout,
        )
        self.routes, self.event_bus = plan.routes, plan.event_bus
        self.max_spares = plan.max_spares

    def send(self, event_type: EventType, *, occurrence: int = 0, **details: Any) -> None:
        """`details`: the event's fields of SpareEventData beyond the spare's own (host, vm,
        reason, ...), checked by it. `occurrence` counts an event type's repeats within this
        run (its webhook id)."""
        event = SpareEvent(
            type=event_type,
            timestamp=workflow.now(),
            data=SpareEventData(
                spare_id=self.spare_id, cluster=self.cluster, pool=self.pool, **details
            ),
        )
        run_id = self.run_id or workflow.info().run_id
        msg_id = webhook_id(self.spare_id, run_id, event_type, occurrence)
        for route in self.routes:
            if route.name in self.gone:
                continue
            if route.events is not None and event_type.value not in route.events:
                continue
            task = asyncio.create_task(self._deliver(route, msg_id, event))
            self._pending.append(task)
            self._by_receiver.setdefault(route.name, []).append(task)
        if self.event_bus is not None:
            self._pending.append(asyncio.create_task(self._publish(self.event_bus, msg_id, event)))

    async def _deliver(self, route: ReceiverRoute, msg_id: str, event: SpareEvent) -> None:
        try:
            result: DeliveryResult = await workflow.execute_activity_method(
                NotifyActivities.deliver_webhook,
                DeliverWebhookInput(receiver=route.name, webhook_id=msg_id, event=event),
                # One attempt lasts the receiver's HTTP timeout plus a margin, so a worker that
                # dies mid-delivery is replaced within that, not a minute later.
                start_to_close_timeout=timedelta(seconds=route.attempt_timeout_seconds),
                retry_policy=_retry(route.retry),
                summary=f"{event.type.value} -> {route.name}",
            )
        except (ActivityError, asyncio.CancelledError) as err:
            if route.name in self.gone and is_cancelled_exception(err):
                return  # cancelled here because the receiver is gone; already recorded
            if isinstance(err, asyncio.CancelledError):
                raise
            # Retries are exhausted or the receiver refused: record it, the spare goes on.
            self.failed.append(f"{event.type.value} -> {route.name}: {err.cause or err}")
            workflow.logger.warning("webhook %s to %s failed: %s", event.type, route.name, err)
            self.on_change()
            return
        if result.outcome == "gone" and route.name not in self.gone:
            self._disable(route.name)

    def _disable(self, name: str) -> None:
        """410 Gone: stop sending to this receiver for the rest of the spare, and say so."""
        self.gone.append(name)
        workflow.logger.warning("webhook receiver %s answered 410 Gone: disabled", name)
        current = asyncio.current_task()
        for task in self._by_receiver.get(name, []):
            if task is not current and not task.done():
                task.cancel()
        self.on_change()

    async def _publish(self, bus: EventBusRoute, msg_id: str, event: SpareEvent) -> None:
        try:
            await workflow.execute_activity_method(
                EventBusActivities.publish_event,
                PublishEventInput(webhook_id=msg_id, event=event),
                start_to_close_timeout=PUBLISH_TIMEOUT,
                retry_policy=_retry(bus.retry),
                summary=f"{event.type.value} -> event bus",
            )
        except ActivityError as err:
            self.failed.append(f"{event.type.value} -> event bus: {err.cause or err}")
            workflow.logger.warning("publishing %s failed: %s", event.type, err)
            self.on_change()

    async def drain(self) -> None:
        """Wait for every delivery started so far (called before the workflow closes)."""
        while self._pending:
            pending, self._pending = self._pending, []
            # A delivery cancelled because its receiver answered 410 may not have started at
            # all (then it never reached its own handler): its cancellation is no failure.
            for outcome in await asyncio.gather(*pending, return_exceptions=True):
                if isinstance(outcome, BaseException) and not isinstance(
                    outcome, asyncio.CancelledError
                ):
                    raise outcome
