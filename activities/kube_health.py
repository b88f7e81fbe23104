"""Watching a held spare's Node: one long-running activity per hold, not a timer loop in
history. It lists and watches the Node, and returns only when the Node has been unhealthy
(Ready=False or Unknown, the unreachable taint, or gone) for `unhealthy_after_seconds`
without a break, as a Cluster API MachineHealthCheck judges it; a Node Ready again before
then resets the clock and nothing is reported. With `until="healthy"` it waits for the
opposite: the Node healthy again.

Heartbeats carry the problems and since when they last, so a retry on another worker resumes
the same clock instead of starting over. An unreachable API is not the Node's fault: it is
reported in the heartbeat, and the judgement waits for the API to answer again.

The watch also ends, at once, when the Node carries RELEASING_ANNOTATION (the release's cordon
sets it): a cancel reaches an activity only with its next heartbeat, seconds later, and the
spare waits for its watch to end before it does. A warm spare's watch (given its `owner`)
ends the same way when its Node is labelled with another spare's id: the claiming spare took
the Node over, and the warm spare is ending. When its worker begins to stop, the watch
fails at once (a benign, retried error) so that it resumes on another worker rather than hold
the shutdown for its grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import httpx2
from lightkube import AsyncClient
from lightkube.resources.core_v1 import Node
from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from contracts.failures import Failure
from contracts.kubernetes import NodeHealthResult, WatchNodeHealthInput
from contracts.spare import RELEASING_ANNOTATION, SPARE_ID_LABEL

from .heartbeats import QuietHeartbeat, heartbeat_interval
from .node_conditions import health_problems

FIRST_RETRY_SECONDS = 0.1
RESYNC_SECONDS = 300
RETRY_CAP_SECONDS = 10
# Tells a failure that will not heal (a rejected token) from one that may.
Permanent = Callable[[httpx2.HTTPStatusError], ApplicationError | None]


class _Health:
    """What the watch saw last, and since when (the loop's clock) it has been unhealthy."""

    def __init__(self, resumed_since: datetime | None, owner: str | None = None) -> None:
        self.owner = owner
        self.problems: list[str] = []
        self.known = False
        self.releasing = False
        self.since: datetime | None = None
        self._resumed = resumed_since
        self.api_error: str | None = None
        self.failure: BaseException | None = None
        self.changed = asyncio.Event()

    def observe(self, node: Node | Mapping[str, Any] | None) -> None:
        self.problems = health_problems(node)
        self.releasing = _releasing(node) or _taken_over(node, self.owner)
        self.known = True
        self.api_error = None
        if not self.problems:
            self.since = None
        elif self.since is None:
            # A retry resumes the clock its previous attempt started, if the Node never healed.
            self.since = self._resumed or datetime.now(UTC)
        self._resumed = None
        self.changed.set()

    def details(self) -> dict[str, Any]:
        return {
            "problems": self.problems,
            "unhealthy_since": self.since.isoformat() if self.since else None,
            "api_error": self.api_error,
        }


def _releasing(node: Node | Mapping[str, Any] | None) -> bool:
    if node is None:
        return False
    if isinstance(node, Mapping):
        annotations = (node.get("metadata") or {}).get("annotations") or {}
    else:
        annotations = (node.metadata.annotations if node.metadata else None) or {}
    return RELEASING_ANNOTATION in annotations


def _taken_over(node: Node | Mapping[str, Any] | None, owner: str | None) -> bool:
    """The Node carries another spare's id than `owner`'s. (A missing label says nothing: a
    cached Node may predate its labels.)"""
    if node is None or owner is None:
        return False
    if isinstance(node, Mapping):
        labels = (node.get("metadata") or {}).get("labels") or {}
    else:
        labels = (node.metadata.labels if node.metadata else None) or {}
    holder = labels.get(SPARE_ID_LABEL)
    return holder is not None and holder != owner


def _resumed_since() -> datetime | None:
    """The unhealthy clock of this activity's previous attempt, from its last heartbeat."""
    if not activity.in_activity():
        return None
    details = activity.info().heartbeat_details
    with contextlib.suppress(IndexError, KeyError, TypeError, ValueError):
        raw = details[0]["unhealthy_since"]
        return datetime.fromisoformat(raw) if raw else None
    return None


class NodeWatchHub:
    """One list and watch of every spare Node per worker, shared by all the health watches
    the worker runs: a held spare costs no connection of its own (a client's pool is
    bounded, and hundreds of held spares must not starve the other Kubernetes calls)."""

    def __init__(
        self, client: Callable[[], Awaitable[AsyncClient]], labels: dict[str, str]
    ) -> None:
        self._client = client
        self._labels = labels
        self._subscribers: dict[str, set[_Health]] = {}
        self._nodes: dict[str, Node] = {}
        self._synced = False
        self._task: asyncio.Task[None] | None = None
        self.permanent: Permanent = lambda exc: None
        # What a failure is reported as (the cluster and since when), and who hears an answer.
        self.on_error: Callable[[str], str] = lambda error: error
        self.on_answer: Callable[[], None] = lambda: None

    def subscribe(self, name: str, health: _Health) -> None:
        self._subscribers.setdefault(name, set()).add(health)
        if self._synced:
            health.observe(self._nodes.get(name))
        if self._task is None or self._task.done():
            self._synced = False
            self._task = asyncio.create_task(self._run(), name="virtflow-node-watch")

    def unsubscribe(self, name: str, health: _Health) -> None:
        watchers = self._subscribers.get(name, set())
        watchers.discard(health)
        if not watchers:
            self._subscribers.pop(name, None)
        if not self._subscribers and self._task is not None:
            self._task.cancel()  # nobody is held: no watch
            self._task = None

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def _tell(self, name: str) -> None:
        for health in self._subscribers.get(name, ()):
            health.observe(self._nodes.get(name))

    def _fail(self, error: str | None = None, failure: BaseException | None = None) -> None:
        for watchers in self._subscribers.values():
            for health in watchers:
                health.api_error = error
                health.failure = failure
                health.changed.set()

    async def _run(self) -> None:
        """List, then watch from the list's version; on failure re-list after a backoff."""
        delay = FIRST_RETRY_SECONDS
        while True:
            try:
                client = await self._client()
                listing = client.list(Node, labels=self._labels)  # type: ignore[arg-type]
                self._nodes = {
                    n.metadata.name: n async for n in listing if n.metadata and n.metadata.name
                }
                self.on_answer()
                self._synced = True
                for name in list(self._subscribers):
                    self._tell(name)
                delay = FIRST_RETRY_SECONDS
                watch = cast(
                    AsyncGenerator[tuple[str, Node], None],
                    client.watch(
                        Node,
                        labels=self._labels,  # type: ignore[arg-type]
                        resource_version=listing.resourceVersion,
                        server_timeout=RESYNC_SECONDS,
                    ),
                )
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(RESYNC_SECONDS + 30), contextlib.aclosing(watch):
                        async for event, node in watch:
                            if node.metadata is None or node.metadata.name is None:
                                continue
                            name = node.metadata.name
                            if event == "DELETED":
                                self._nodes.pop(name, None)
                            else:
                                self._nodes[name] = node
                            self._tell(name)
                continue
            except httpx2.HTTPStatusError as exc:
                if (failure := self.permanent(exc)) is not None:
                    self._fail(failure=failure)
                    return
                if exc.response.status_code == 410:
                    continue
                self._fail(self.on_error(f"HTTP {exc.response.status_code}"))
            except (httpx2.HTTPError, OSError, ValueError) as exc:
                self._fail(self.on_error(type(exc).__name__))
            except ApplicationError as exc:
                # The cluster's configuration cannot be read: nothing to watch until it is.
                self._fail(failure=exc)
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_CAP_SECONDS)


async def watch_node_health(hub: NodeWatchHub, inp: WatchNodeHealthInput) -> NodeHealthResult:
    health = _Health(_resumed_since(), inp.owner)
    beats = QuietHeartbeat()
    every = heartbeat_interval(inp.poll_hint_seconds)
    beating = asyncio.create_task(beats.keep_beating(every, health.details))
    stopping = asyncio.ensure_future(_worker_stopping())
    hub.subscribe(inp.node_name, health)
    try:
        while True:
            timeout: float | None = None
            if health.releasing:
                return NodeHealthResult(node_name=inp.node_name, healthy=True, releasing=True)
            if health.known and inp.until == "healthy" and not health.problems:
                return NodeHealthResult(node_name=inp.node_name, healthy=True)
            if health.known and inp.until == "unhealthy" and health.since is not None:
                due = health.since + timedelta(seconds=inp.unhealthy_after_seconds)
                timeout = (due - datetime.now(UTC)).total_seconds()
                if timeout <= 0:
                    return NodeHealthResult(
                        node_name=inp.node_name,
                        healthy=False,
                        reason=", ".join(health.problems),
                        since=health.since,
                    )
            health.changed.clear()
            changed = asyncio.ensure_future(health.changed.wait())
            await asyncio.wait({changed, stopping}, timeout=timeout, return_when="FIRST_COMPLETED")
            changed.cancel()
            if health.failure is not None:
                raise health.failure  # a permanent failure of the shared watch
            if stopping.done():
                # Nothing to finish: the retry resumes the watch (and its clock) on a worker
                # that runs on, instead of this one holding its shutdown for the grace period.
                activity.heartbeat(health.details())
                raise ApplicationError(
                    "the worker is stopping; the watch resumes on another worker",
                    type=Failure.WORKER_STOPPING,
                    category=ApplicationErrorCategory.BENIGN,
                )
    finally:
        beating.cancel()
        stopping.cancel()
        hub.unsubscribe(inp.node_name, health)


async def _worker_stopping() -> None:
    """Returns when this activity's worker begins to shut down (never outside an activity)."""
    if activity.in_activity():
        await activity.wait_for_worker_shutdown()
    else:
        await asyncio.Event().wait()
