"""Webhook delivery activities: plan who hears about a spare, and deliver one signed event.

Secrets stay in the worker: workflows only ever see a receiver's name, its event filter and
its retry bounds (`ReceiverRoute`). The wait before each retry comes from the receiver's
`retry_schedule_seconds`, which the activity applies itself (Temporal's own policy can only
grow geometrically). The default follows the common Standard Webhooks schedule: 5 s, 5 min,
30 min, 2 h, 5 h, 10 h, 10 h, about 28 h in all. Receivers should de-duplicate webhook ids
over at least that long.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from temporalio import activity
from temporalio.exceptions import ApplicationError

from webhooks.events import EventType, SpareEvent
from webhooks.signing import secret_key, signed_headers

from .http_client import HttpClient, HttpUnreachable, Reply

USER_AGENT = "virtflow-webhooks/1"
# The activity's attempt timeout is the HTTP timeout plus this, so the HTTP client gives up
# first and the failure is a clear "timed out" rather than an activity timeout.
ATTEMPT_MARGIN_SECONDS = 5.0
_RETRYABLE_STATUS = {408, 429}
# A receiver's answer is read this far and no further: 200 characters of it are kept.
MAX_ANSWER_BYTES = 4096


DEFAULT_RETRY_SCHEDULE_SECONDS = [5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0, 36000.0]


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


class ReceiverConfig(BaseModel):
    """One configured receiver (worker settings). Never enters workflow history."""

    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    url: str
    secrets: list[SecretStr] = Field(min_length=1)
    events: list[str] | None = None
    timeout_seconds: float = Field(default=10, gt=0, le=300)
    # The wait before each retry, in order; its length is the number of retries.
    retry_schedule_seconds: list[float] = Field(
        default_factory=lambda: list(DEFAULT_RETRY_SCHEDULE_SECONDS), min_length=1, max_length=100
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        url = urlsplit(value)
        if url.scheme not in {"http", "https"} or not url.hostname:
            raise ValueError("a receiver url must be an absolute http(s) URL")
        return value

    @field_validator("secrets")
    @classmethod
    def _real_secrets(cls, value: list[SecretStr]) -> list[SecretStr]:
        # Rejects placeholders such as whsec_change-me: they are not base64 of 24-64 bytes.
        for secret in value:
            secret_key(secret.get_secret_value())
        return value

    @field_validator("events")
    @classmethod
    def _known_events(cls, value: list[str] | None) -> list[str] | None:
        if value is not None:
            known = {e.value for e in EventType}
            unknown = sorted(set(value) - known)
            if unknown:
                raise ValueError(f"unknown event types {unknown}; known: {sorted(known)}")
        return value

    @field_validator("retry_schedule_seconds")
    @classmethod
    def _positive_waits(cls, value: list[float]) -> list[float]:
        if any(wait <= 0 for wait in value):
            raise ValueError("every wait in the retry schedule must be positive")
        return value

    @property
    def retry(self) -> RetryPolicySpec:
        return RetryPolicySpec.from_schedule(self.retry_schedule_seconds)

    def wait_before_retry(self, attempt: int) -> timedelta:
        """The scheduled wait after failed attempt number `attempt` (1-based)."""
        waits = self.retry_schedule_seconds
        return timedelta(seconds=waits[min(attempt, len(waits)) - 1])


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


class PlanNotificationsResult(BaseModel):
    routes: list[ReceiverRoute]
    # None when no event bus is configured (and in histories from before it existed).
    event_bus: EventBusRoute | None = None


class DeliverWebhookInput(BaseModel):
    receiver: str
    webhook_id: str = Field(min_length=1, max_length=256)
    event: SpareEvent


class DeliveryResult(BaseModel):
    receiver: str
    webhook_id: str
    status_code: int
    outcome: Literal["delivered", "gone"]


def _retry_after(response: Reply, cap_seconds: float) -> timedelta | None:
    """Honour a receiver's `Retry-After: <seconds>` on 429/503, within the schedule's cap."""
    raw = response.headers.get("retry-after", "").strip()
    if not raw.isdigit():
        return None
    return timedelta(seconds=min(float(raw), cap_seconds))


def _next_wait(config: ReceiverConfig) -> timedelta:
    return config.wait_before_retry(activity.info().attempt)


def _snippet(response: Reply) -> str:
    text = " ".join(response.text.split())
    return text[:200] + ("..." if response.truncated or len(text) > 200 else "")


class NotifyActivities:
    """Holds the receivers' configuration and one long-lived HTTP client for the worker."""

    def __init__(
        self,
        receivers: Mapping[str, ReceiverConfig],
        http: HttpClient | None = None,
        event_bus: EventBusRoute | None = None,
    ) -> None:
        self._receivers = dict(receivers)
        self._event_bus = event_bus
        self._owns_http = http is None
        self._http = http or HttpClient()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    def _config(self, name: str) -> ReceiverConfig:
        config = self._receivers.get(name)
        if config is None:
            # Configuration, not the network: retrying cannot make the name appear.
            raise ApplicationError(
                f"unknown webhook receiver {name!r}; configured: {sorted(self._receivers)}",
                type="UnknownReceiver",
                non_retryable=True,
            )
        return config

    @activity.defn
    async def plan_notifications(self, input: PlanNotificationsInput) -> PlanNotificationsResult:
        names = sorted(self._receivers) if input.receivers is None else input.receivers
        routes = []
        for name in dict.fromkeys(names):
            config = self._config(name)
            routes.append(
                ReceiverRoute(
                    name=name,
                    events=config.events,
                    retry=config.retry,
                    attempt_timeout_seconds=config.timeout_seconds + ATTEMPT_MARGIN_SECONDS,
                )
            )
        return PlanNotificationsResult(routes=routes, event_bus=self._event_bus)

    @activity.defn
    async def deliver_webhook(self, input: DeliverWebhookInput) -> DeliveryResult:
        name, msg_id = input.receiver, input.webhook_id
        config = self._config(name)
        body = input.event.to_body()
        # A fresh timestamp per attempt (receivers reject old ones), the same id every time.
        headers = signed_headers([s.get_secret_value() for s in config.secrets], msg_id, body)
        headers.update({"content-type": "application/json", "user-agent": USER_AGENT})
        what = f"{input.event.type.value} {msg_id} to receiver {name!r}"
        try:
            response = await self._http.request(
                "POST",
                config.url,
                content=body,
                headers=headers,
                timeout_seconds=config.timeout_seconds,
                max_body_bytes=MAX_ANSWER_BYTES,
            )
        except HttpUnreachable as exc:
            # Only the cause's type is reported: its text could carry the URL.
            cause = f"timed out after {config.timeout_seconds} s" if exc.timed_out else str(exc)
            raise ApplicationError(
                f"{what}: {cause}",
                type="WebhookUnreachable",
                next_retry_delay=_next_wait(config),
            ) from None
        status = response.status
        activity.logger.info("webhook %s: HTTP %d", what, status)
        if 200 <= status < 300:
            return DeliveryResult(
                receiver=name, webhook_id=msg_id, status_code=status, outcome="delivered"
            )
        if status == 410:
            # Standard Webhooks: 410 Gone means "stop sending to this endpoint".
            return DeliveryResult(
                receiver=name, webhook_id=msg_id, status_code=status, outcome="gone"
            )
        if status in _RETRYABLE_STATUS or status >= 500:
            raise ApplicationError(
                f"{what}: HTTP {status} {_snippet(response)}".rstrip(),
                type="WebhookReceiverUnavailable",
                next_retry_delay=_retry_after(response, max(config.retry_schedule_seconds))
                or _next_wait(config),
            )
        # 3xx and other 4xx: the receiver refuses this event and would refuse it again.
        raise ApplicationError(
            f"{what}: HTTP {status} {_snippet(response)}".rstrip(),
            type="WebhookRejected",
            non_retryable=True,
        )
