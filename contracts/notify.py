"""The contract of webhook and event-bus delivery (`activities/notify.py`,
`activities/event_bus.py`): what a workflow may know of a receiver (its name, its event filter,
its retry bounds: never its URL or secrets) and the inputs and results of the activities."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from webhooks.events import EventType, SpareEvent

# The activity's attempt timeout is the HTTP timeout plus this, so the HTTP client gives up
# first and the failure is a clear "timed out" rather than an activity timeout.
ATTEMPT_MARGIN_SECONDS = 5.0


class RetryPolicySpec(BaseModel):
    """Retry bounds in plain numbers the workflow turns into a RetryPolicy.

    For deliveries the exact waits come from the receiver's schedule (the activity sets each
    one); the geometric part only applies when an attempt dies without answering (a worker
    crash that ends in an activity timeout).
    """

    initial_seconds: float = Field(gt=0)
    backoff: float = Field(ge=1)
    max_interval_seconds: float = Field(gt=0)
    max_attempts: int = Field(ge=1)

    @classmethod
    def from_schedule(cls, waits: list[float]) -> RetryPolicySpec:
        return cls(
            initial_seconds=waits[0],
            backoff=2.0,
            max_interval_seconds=max(waits),
            max_attempts=len(waits) + 1,
        )


class ReceiverRoute(BaseModel):
    """The non-secret part of a receiver, safe to keep in workflow history."""

    name: str
    events: list[str] | None = None
    retry: RetryPolicySpec
    attempt_timeout_seconds: float = Field(
        default=10 + ATTEMPT_MARGIN_SECONDS,
        description="A start-to-close timeout for one delivery attempt.",
    )

    def wants(self, event: EventType) -> bool:
        return self.events is None or event.value in self.events


class EventBusRoute(BaseModel):
    """The non-secret part of the optional event bus: it is on, and how to retry a publish."""

    retry: RetryPolicySpec


class PlanNotificationsInput(BaseModel):
    receivers: list[str] | None = None
    # The spare's cluster, checked against the registry with what it may use (its inventory,
    # pool and receivers); None means any receiver (a spare from before the registry).
    cluster: str | None = None
    inventory: str | None = None
    pool: str | None = None
    # The spare was made already (a compensation speaks for it): its events still go only to
    # its cluster's receivers as configured now, but nothing is refused any more; a receiver
    # no longer its (or no longer configured) is left out, and so is every receiver of a
    # cluster no longer registered.
    made: bool = False


class PlanNotificationsResult(BaseModel):
    routes: list[ReceiverRoute]
    # None when no event bus is configured (and in histories from before it existed).
    event_bus: EventBusRoute | None = None
    # The spare's cluster's surge budget (`max_spares`); None: none.
    max_spares: int | None = None


class DeliverWebhookInput(BaseModel):
    receiver: str
    webhook_id: str = Field(min_length=1, max_length=256)
    event: SpareEvent


class DeliveryResult(BaseModel):
    receiver: str
    webhook_id: str
    status_code: int
    outcome: Literal["delivered", "gone"]


class PublishEventInput(BaseModel):
    webhook_id: str = Field(min_length=1, max_length=256)
    event: SpareEvent


class PublishEventResult(BaseModel):
    subject: str
    stream: str | None = None
    sequence: int | None = None
    duplicate: bool = False
