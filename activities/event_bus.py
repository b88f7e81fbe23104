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
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts.failures import Failure
from contracts.notify import PublishEventInput, PublishEventResult
from runtime.event_bus import EventBusConfig


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
                type=Failure.EVENT_BUS_NOT_CONFIGURED,
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
                type=Failure.EVENT_BUS_UNAVAILABLE,
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
