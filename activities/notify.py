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

from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts.failures import Failure
from contracts.notify import (
    ATTEMPT_MARGIN_SECONDS,
    DeliverWebhookInput,
    DeliveryResult,
    EventBusRoute,
    PlanNotificationsInput,
    PlanNotificationsResult,
    ReceiverRoute,
)
from runtime.clusters import (
    ClusterRegistry,
    NotAllowed,
)
from runtime.http_client import HttpClient, HttpUnreachable, Reply
from runtime.receivers import ReceiverConfig
from webhooks.signing import signed_headers

USER_AGENT = "virtflow-webhooks/1"
_RETRYABLE_STATUS = {408, 429}
# A receiver's answer is read this far and no further: 200 characters of it are kept.
MAX_ANSWER_BYTES = 4096


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
        clusters: ClusterRegistry | None = None,
    ) -> None:
        self._receivers = dict(receivers)
        self._clusters = clusters
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
                type=Failure.UNKNOWN_RECEIVER,
                non_retryable=True,
            )
        return config

    def _cluster_receivers(self, input: PlanNotificationsInput) -> list[str] | None:
        """The receivers of the spare's cluster; refuses a cluster that is not registered, or
        what it may not use, before anything is reserved or created (non-retryable)."""
        if self._clusters is None or input.cluster is None:
            return input.receivers
        if input.made:
            return self._receivers_of_a_made_spare(input.cluster, input.receivers)
        try:
            self._clusters.check(input.cluster, input.inventory, input.pool, input.receivers)
        except NotAllowed as refused:
            raise ApplicationError(
                str(refused),
                type=(
                    Failure.UNKNOWN_CLUSTER
                    if refused.unknown_cluster
                    else Failure.NOT_ALLOWED_FOR_CLUSTER
                ),
                non_retryable=True,
            ) from None
        if input.receivers is not None:
            return input.receivers
        # A cluster's events go only to its receivers.
        return self._clusters.receivers_of(input.cluster, self._receivers)

    def _receivers_of_a_made_spare(self, cluster: str, named: list[str] | None) -> list[str]:
        """What a spare made before this configuration may still tell: its cluster's receivers
        only. Refusing now would stop its compensation, not only its news."""
        assert self._clusters is not None
        if cluster not in self._clusters:
            activity.logger.warning(
                "cluster %r is no longer registered: its spare's events go to no receiver", cluster
            )
            return []
        wanted = self._clusters.receivers_of(cluster, self._receivers) if named is None else named
        return [n for n in wanted if n in self._receivers and self._clusters.may_tell(cluster, n)]

    @activity.defn
    async def plan_notifications(self, input: PlanNotificationsInput) -> PlanNotificationsResult:
        """Which receivers hear of a spare; for a spare of a cluster, also the cluster's word
        that the spare may be made at all."""
        wanted = self._cluster_receivers(input)
        names = sorted(self._receivers) if wanted is None else wanted
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
        budget = (
            self._clusters.get(input.cluster).max_spares
            if self._clusters is not None
            and input.cluster is not None
            and input.cluster in self._clusters
            else None
        )
        return PlanNotificationsResult(routes=routes, event_bus=self._event_bus, max_spares=budget)

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
                type=Failure.WEBHOOK_UNREACHABLE,
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
                type=Failure.WEBHOOK_RECEIVER_UNAVAILABLE,
                next_retry_delay=_retry_after(response, max(config.retry_schedule_seconds))
                or _next_wait(config),
            )
        # 3xx and other 4xx: the receiver refuses this event and would refuse it again.
        raise ApplicationError(
            f"{what}: HTTP {status} {_snippet(response)}".rstrip(),
            type=Failure.WEBHOOK_REJECTED,
            non_retryable=True,
        )
