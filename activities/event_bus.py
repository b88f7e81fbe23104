"""Publish spare events to NATS, for sites that outgrow webhooks.

Off unless `event_bus` is configured. Each event goes to `<prefix>.<cluster>.<event type>`
(for example `virtflow.lab.spare.ready`) with the same JSON body as the webhook, and the
webhook id both as `webhook-id` and as `Nats-Msg-Id`: JetStream then stores a retried publish
once within the stream's duplicate window. Events are few (six per spare at most), so each
publish opens its own connection and closes it: nothing outlives the activity.

The NATS client is imported on the first publish, not with this module: every worker and the
API read `EventBusConfig` from their settings, and most sites never configure a bus.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from temporalio import activity
from temporalio.exceptions import ApplicationError

from webhooks.events import SpareEvent

from .notify import EventBusRoute, RetryPolicySpec

# NATS subject tokens: no spaces, no wildcards, no empty tokens.
SUBJECT_PREFIX = r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$"
# A publish that fails is retried with these bounds: about a day and a half in all.
DEFAULT_PUBLISH_RETRY = RetryPolicySpec(
    initial_seconds=1, backoff=2, max_interval_seconds=600, max_attempts=200
)


class EventBusConfig(BaseModel):
    """The worker's NATS settings (`event_bus` in Settings). Never enters workflow history."""

    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    url: str = Field(description="NATS server URL(s), comma-separated, nats:// or tls://.")
    subject_prefix: str = Field(default="virtflow", pattern=SUBJECT_PREFIX)
    user: str | None = None
    password: SecretStr | None = None
    token: SecretStr | None = None
    creds_file: Path | None = Field(default=None, description="A NATS .creds file (JWT + nkey).")
    # JetStream stream that stores the events; None publishes on core NATS (no ack, no de-dup).
    stream: str | None = Field(default="VIRTFLOW", pattern=r"^[A-Za-z0-9_-]+$")
    # Create the stream (subjects `<prefix>.>`) when it does not exist yet.
    create_stream: bool = True
    # JetStream forgets a Nats-Msg-Id after this long; it should cover the publish retries.
    duplicate_window_seconds: float = Field(default=2 * 24 * 3600, gt=0)
    timeout_seconds: float = Field(default=5, gt=0, le=120)
    retry: RetryPolicySpec = DEFAULT_PUBLISH_RETRY

    @field_validator("url")
    @classmethod
    def _nats_urls(cls, value: str) -> str:
        for server in value.split(","):
            scheme, _, rest = server.strip().partition("://")
            if scheme not in {"nats", "tls", "ws", "wss"} or not rest:
                raise ValueError("the event bus url must be nats://, tls://, ws:// or wss://")
        return value

    @model_validator(mode="after")
    def _one_way_to_authenticate(self) -> EventBusConfig:
        if self.password is not None and self.user is None:
            raise ValueError("event bus password given without a user")
        if self.token is not None and self.user is not None:
            raise ValueError("give the event bus either a token or a user, not both")
        return self

    @property
    def route(self) -> EventBusRoute:
        return EventBusRoute(retry=self.retry)

    def subject(self, event: SpareEvent) -> str:
        return f"{self.subject_prefix}.{event.data.cluster}.{event.type.value}"

    def connect_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "servers": [s.strip() for s in self.url.split(",")],
            "name": "virtflow-worker",
            "connect_timeout": self.timeout_seconds,
            # One try per attempt (0 would mean "forever"): the activity's retries do the rest.
            "allow_reconnect": False,
            "max_reconnect_attempts": 1,
            "reconnect_time_wait": 0.1,
        }
        if self.user is not None:
            options["user"] = self.user
        if self.password is not None:
            options["password"] = self.password.get_secret_value()
        if self.token is not None:
            options["token"] = self.token.get_secret_value()
        if self.creds_file is not None:
            options["user_credentials"] = str(self.creds_file)
        return options


class PublishEventInput(BaseModel):
    webhook_id: str = Field(min_length=1, max_length=256)
    event: SpareEvent


class PublishEventResult(BaseModel):
    subject: str
    stream: str | None = None
    sequence: int | None = None
    duplicate: bool = False


async def _silent(_: Exception) -> None:
    # Failures surface as the activity's error; the client's own logging would repeat them.
    return None


class EventBusActivities:
    """Holds the bus configuration; `None` means the site has no event bus."""

    def __init__(self, config: EventBusConfig | None) -> None:
        self._config = config
        self._stream_ready = False

    @activity.defn
    async def publish_event(self, input: PublishEventInput) -> PublishEventResult:
        config = self._config
        if config is None:
            # Workers disagree about the bus: a configuration problem no retry can fix.
            raise ApplicationError(
                "this worker has no event bus configured",
                type="EventBusNotConfigured",
                non_retryable=True,
            )
        import nats.errors

        subject = config.subject(input.event)
        headers = {
            "Nats-Msg-Id": input.webhook_id,
            "webhook-id": input.webhook_id,
            "content-type": "application/json",
        }
        try:
            # A bound on the whole exchange, whatever the client library does inside.
            async with asyncio.timeout(config.timeout_seconds * 3):
                return await self._publish(config, subject, input.event.to_body(), headers)
        except (nats.errors.Error, OSError, TimeoutError) as exc:
            # nats errors carry fixed texts; others only their type, never a URL or password.
            detail = str(exc) if isinstance(exc, nats.errors.Error) else ""
            raise ApplicationError(
                f"publishing {input.event.type.value} {input.webhook_id} to {subject}: "
                f"{type(exc).__name__} {detail}".rstrip(),
                type="EventBusUnavailable",
            ) from None

    async def _publish(
        self, config: EventBusConfig, subject: str, body: bytes, headers: dict[str, str]
    ) -> PublishEventResult:
        import nats

        nc = await nats.connect(**config.connect_options(), error_cb=_silent)
        try:
            if config.stream is None:
                await nc.publish(subject, body, headers=headers)
                await nc.flush(timeout=int(config.timeout_seconds) or 1)
                return PublishEventResult(subject=subject)
            js = nc.jetstream(timeout=config.timeout_seconds)
            if not self._stream_ready and config.create_stream:
                await self._ensure_stream(js, config)
            ack = await js.publish(subject, body, stream=config.stream, headers=headers)
            activity.logger.info(
                "published %s to %s (stream %s seq %d%s)",
                headers["webhook-id"],
                subject,
                ack.stream,
                ack.seq,
                ", duplicate" if ack.duplicate else "",
            )
            return PublishEventResult(
                subject=subject, stream=ack.stream, sequence=ack.seq, duplicate=bool(ack.duplicate)
            )
        finally:
            await asyncio.shield(nc.close())

    async def _ensure_stream(self, js: Any, config: EventBusConfig) -> None:
        import nats.js.errors

        try:
            await js.stream_info(config.stream)
        except nats.js.errors.NotFoundError:
            await js.add_stream(
                name=config.stream,
                subjects=[f"{config.subject_prefix}.>"],
                duplicate_window=config.duplicate_window_seconds,
            )
        self._stream_ready = True
