"""A held spare stays watched: the hold of PrepareSpare, with its Node's health in view.

One long-running activity watches the Node while the spare is held (not a timer loop in
history). It returns only when the Node has been unhealthy for `unhealthy_after_seconds`;
then `spare.unhealthy` goes out, and with `on_unhealthy: replace` a replacement is prepared on
another host first (its own PrepareSpare, which signals back once Ready), `spare.replaced`
tells the receivers, and the hold ends so the old spare is released. No replacement when
more than `max_unhealthy` of the cluster's spares are unhealthy at once: a site failure is
not fixed by making more spares. After a notification the watch waits for the Node to be
healthy again, clears the status, and watches anew.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, FailureError
from temporalio.workflow import ActivityCancellationType, ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from activities.kubernetes import KubernetesActivities
    from contracts.kubernetes import (
        ClusterSparesInput,
        NodeHealthResult,
        UnhealthySparesResult,
        WatchNodeHealthInput,
    )
    from contracts.spare import (
        NODE_NAME_MAX,
        PREPARE_SPARE,
        REPLACEMENT_READY_SIGNAL,
        ReleaseRequest,
        ReplacementReady,
        SpareRequest,
        SpareResult,
        SpareStatus,
        spare_workflow_id,
        start_search_attributes,
    )
    from webhooks.events import EventType, Replacement

from .notifier import Notifier

# The watch heartbeats this often at most: a held spare costs little while nothing happens.
WATCH_POLL_SECONDS = 30
# A watch that fails for good (a rejected token) is retried this often: the spare stays held.
WATCH_RETRY = RetryPolicy(maximum_interval=timedelta(seconds=30))
COUNT_RETRY = RetryPolicy(maximum_attempts=3)


def replacement_request(req: SpareRequest, host: str | None, n: int) -> SpareRequest:
    """The same request under a new id (`<request_id>-r<n>`, shortened to fit a Node name),
    kept off the unhealthy spare's host."""
    suffix = f"-r{n}"
    room = min(40, NODE_NAME_MAX - len(spare_workflow_id(req.cluster, ""))) - len(suffix)
    fields = req.model_dump()
    fields.update(
        request_id=req.request_id[:room].rstrip("-") + suffix,
        avoid_hosts=[*req.avoid_hosts, *([host] if host else [])],
        replaces=req.spare_id,
    )
    return SpareRequest.model_validate(fields)


async def tell_replaced(old: str, spare_id: str, host: str) -> None:
    """A replacement tells the spare it replaces that it is Ready (that one then goes)."""
    try:
        await workflow.get_external_workflow_handle(old).signal(
            REPLACEMENT_READY_SIGNAL, ReplacementReady(spare_id=spare_id, host=host)
        )
    except FailureError as err:
        # The old spare is gone already (released meanwhile): nothing to hand over.
        workflow.logger.info("%s could not be told %s is ready: %s", old, spare_id, err)


@dataclass
class HeldSpare:
    """A Ready spare held for its user: its Node watched, replaced when it cannot recover,
    until a release is asked for (`release_asked`) or its hold ends."""

    req: SpareRequest
    status: SpareStatus
    notifier: Notifier
    release_asked: Callable[[], ReleaseRequest | None]
    show: Callable[[str], None]
    # A booking's hold ends at its window's end (and says so), not after its TTL; asked
    # anew each round, as a change of the window moves it.
    ends: Callable[[], tuple[datetime, str]] | None = None
    _unhealthy_sent: int = field(default=0, init=False)
    _replacements: int = field(default=0, init=False)
    _awaiting: str | None = field(default=None, init=False)
    _ready: ReplacementReady | None = field(default=None, init=False)
    # Every watch started, so none is left pending when the spare ends.
    _watches: list[asyncio.Future[NodeHealthResult]] = field(default_factory=list, init=False)

    def replacement_ready(self, msg: ReplacementReady) -> None:
        """Only the replacement this spare started, while it waits for it, is heard."""
        if msg.spare_id == self._awaiting:
            self._ready = msg

    async def hold(self) -> str:
        """Until released, the TTL expires or a replacement took over: the release reason."""
        req = self.req
        ttl_end = workflow.now() + timedelta(seconds=req.ttl_seconds)
        until = "unhealthy"
        while True:
            deadline, expired = self._deadline(ttl_end)
            remaining = (deadline - workflow.now()).total_seconds()
            if remaining <= 0:
                return expired
            watch = asyncio.ensure_future(self._watch_node(until, remaining))
            self._watches = [w for w in self._watches if not w.done()] + [watch]
            try:
                await workflow.wait_condition(
                    lambda: (
                        self.release_asked() is not None
                        or watch.done()  # noqa: B023
                        or self._deadline(ttl_end)[0] != deadline  # noqa: B023
                    ),
                    timeout=timedelta(seconds=remaining),
                )
            except TimeoutError:
                pass
            finally:
                if not watch.done():
                    # Asked to stop; `stopped` waits for it before the spare ends.
                    watch.cancel()
            released = self.release_asked()
            if released is not None:
                return released.reason
            if not watch.done() or watch.cancelled():
                continue  # the TTL: the next round says so
            try:
                health = watch.result()
            except ActivityError as err:
                # Retries cover transient faults; this one is permanent. The spare is fine
                # as far as anyone knows: keep holding, say that nobody watches it.
                self.show(f"held; its Node is not watched: {err.cause or err}")
                with contextlib.suppress(TimeoutError):
                    await workflow.wait_condition(
                        lambda: (
                            self.release_asked() is not None
                            or self._deadline(ttl_end)[0] != deadline  # noqa: B023
                        ),
                        timeout=timedelta(
                            seconds=max(0.0, (deadline - workflow.now()).total_seconds())
                        ),
                    )
                continue
            if health.releasing:
                # Someone released its Node (ReleaseSpare started alone): the spare is gone.
                return "its Node is being released"
            if health.healthy:
                self.status.unhealthy = self.status.unhealthy_since = None
                self.show("held; its Node is healthy again")
                until = "unhealthy"
                continue
            replaced = await self._unhealthy(health)
            if replaced is not None:
                return replaced
            until = "healthy"

    def _deadline(self, ttl_end: datetime) -> tuple[datetime, str]:
        """When the hold ends, and the release's reason then."""
        if self.ends is not None:
            return self.ends()
        return ttl_end, f"TTL of {self.req.ttl_seconds} s expired"

    async def stopped(self) -> None:
        """Wait until the Node's watch has ended (its cancel is acknowledged, or it saw the
        release cordon the Node): a spare never ends with its watch still pending, and the
        watch never completes against a spare that is gone."""
        for watch in self._watches:
            if not watch.done():
                watch.cancel()
        if self._watches:
            await workflow.wait(self._watches)
        for watch in self._watches:
            if not watch.cancelled():
                watch.exception()  # its outcome no longer matters; retrieved, so not reported lost

    async def _watch_node(self, until: str, remaining: float) -> NodeHealthResult:
        return await workflow.execute_activity_method(
            KubernetesActivities.watch_node_health,
            WatchNodeHealthInput(
                # A spare that took a warm spare over keeps that one's Node name.
                node_name=self.status.vm.name if self.status.vm else self.status.spare_id,
                cluster=self.req.cluster,
                unhealthy_after_seconds=self.req.unhealthy_after_seconds,
                until="healthy" if until == "healthy" else "unhealthy",
                poll_hint_seconds=WATCH_POLL_SECONDS,
                # A warm spare's watch ends when its claimant labels the Node as its own.
                owner=self.status.spare_id if self.req.warm_pool is not None else None,
            ),
            start_to_close_timeout=timedelta(seconds=remaining + 60),
            heartbeat_timeout=self.req.timeouts.heartbeat,
            retry_policy=WATCH_RETRY,
            # A cancel is told to the activity with its next heartbeat (which may be many
            # seconds away); the release's cordon ends it at once (see kube_health).
            cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            summary=f"watch {self.status.spare_id} until {until}",
        )

    async def _unhealthy(self, health: NodeHealthResult) -> str | None:
        """Report it; replace it when asked and the cluster is not failing as a whole."""
        req = self.req
        self.status.unhealthy, self.status.unhealthy_since = health.reason, health.since
        withheld = await self._withheld() if req.on_unhealthy == "replace" else None
        reason = f"{health.reason} for over {req.unhealthy_after_seconds} s"
        if withheld:
            reason += f"; {withheld}"
        self.notifier.send(
            EventType.UNHEALTHY,
            host=self.status.host,
            reason=reason,
            occurrence=self._unhealthy_sent,
        )
        self._unhealthy_sent += 1
        self.show(f"**Unhealthy** {reason}")
        if req.on_unhealthy == "release":
            return f"released: {reason}"
        if req.on_unhealthy != "replace" or withheld:
            return None
        return await self._replace(health)

    async def _withheld(self) -> str | None:
        """Why no replacement now, or None: more than max_unhealthy of the cluster's spares
        are unhealthy (or they cannot be counted)."""
        try:
            counted: UnhealthySparesResult = await workflow.execute_activity_method(
                KubernetesActivities.count_unhealthy_spares,
                ClusterSparesInput(cluster=self.req.cluster),
                start_to_close_timeout=self.req.timeouts.call,
                retry_policy=COUNT_RETRY,
            )
        except ActivityError as err:
            return f"replacement withheld: the cluster's spares could not be counted ({err.cause})"
        if len(counted.unhealthy) > self.req.max_unhealthy:
            return (
                f"replacement withheld: {len(counted.unhealthy)} of the cluster's "
                f"{counted.total} spares are unhealthy (max_unhealthy {self.req.max_unhealthy})"
            )
        return None

    async def _replace(self, health: NodeHealthResult) -> str | None:
        """Start the replacement and wait until it is Ready; None if it never got there."""
        self._replacements += 1
        new_req = replacement_request(self.req, self.status.host, self._replacements)
        new_id = new_req.spare_id
        self._awaiting, self._ready = new_id, None
        self.show(f"**Unhealthy** {health.reason}; preparing {new_id} on another host")
        # The replacement outlives this spare, which is released as soon as it is Ready.
        child = await workflow.start_child_workflow(
            PREPARE_SPARE,
            new_req,
            id=new_id,
            parent_close_policy=ParentClosePolicy.ABANDON,
            static_summary=f"Replaces {self.status.spare_id}",
            search_attributes=start_search_attributes(new_req),
            result_type=SpareResult,
        )
        await workflow.wait_condition(
            lambda: self._ready is not None or child.done() or self.release_asked() is not None
        )
        self._awaiting = None
        ready = self._ready
        if ready is None:
            outcome = "released meanwhile" if self.release_asked() is not None else "failed"
            self.show(f"**Unhealthy** {health.reason}; replacement {new_id} {outcome}")
            return None
        self.status.replaced_by = new_id
        self.notifier.send(
            EventType.REPLACED,
            host=self.status.host,
            reason=f"replaced: {health.reason}",
            replacement=Replacement(old=self.status.spare_id, new=new_id, new_host=ready.host),
        )
        return f"replaced by {new_id} ({health.reason})"
