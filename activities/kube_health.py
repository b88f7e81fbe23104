"""Watching a held spare's Node: one long-running activity per hold, not a timer loop in
history. It lists and watches the Node, and returns only when the Node has been unhealthy
(Ready=False or Unknown, the unreachable taint, or gone) for `unhealthy_after_seconds`
without a break, as a Cluster API MachineHealthCheck judges it; a Node Ready again before
then resets the clock and nothing is reported. With `until="healthy"` it waits for the
opposite: the Node healthy again.

Heartbeats carry the problems and since when they last, so a retry on another worker resumes
the same clock instead of starting over. An unreachable API is not the Node's fault: it is
reported in the heartbeat, and the judgement waits for the API to answer again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, cast

import httpx2
from lightkube import AsyncClient
from lightkube.resources.core_v1 import Node
from pydantic import BaseModel, Field
from temporalio import activity
from temporalio.exceptions import ApplicationError

from .timeouts import QuietHeartbeat, heartbeat_interval

UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
FIRST_RETRY_SECONDS = 0.1
RESYNC_SECONDS = 300
# Tells a failure that will not heal (a rejected token) from one that may.
Permanent = Callable[[httpx2.HTTPStatusError], ApplicationError | None]


class WatchNodeHealthInput(BaseModel):
    node_name: str
    # How long the Node must stay unhealthy before it is reported (MachineHealthCheck: 300).
    unhealthy_after_seconds: float = Field(default=300, gt=0)
    until: Literal["unhealthy", "healthy"] = "unhealthy"
    poll_hint_seconds: float = Field(default=5, gt=0)


class NodeHealthResult(BaseModel):
    node_name: str
    healthy: bool
    # What is wrong, in words: "Ready=Unknown (NodeStatusUnknown), taint node.kubernetes.io/...".
    reason: str = ""
    since: datetime | None = None


def health_problems(node: Node | Mapping[str, Any] | None) -> list[str]:
    """What makes a held Node unhealthy; empty means healthy. A cordon is not a problem: the
    upgrade controller may cordon its spare on purpose."""
    if node is None:
        return ["node not found"]
    data: Mapping[str, Any] = node if isinstance(node, Mapping) else node.to_dict()
    conditions = {c.get("type"): c for c in (data.get("status") or {}).get("conditions") or []}
    problems: list[str] = []
    ready = conditions.get("Ready")
    if ready is None:
        problems.append("Ready condition not reported")
    elif ready.get("status") != "True":
        reason = f" ({ready['reason']})" if ready.get("reason") else ""
        problems.append(f"Ready={ready.get('status', 'Unknown')}{reason}")
    taints = {t.get("key") for t in (data.get("spec") or {}).get("taints") or []}
    if UNREACHABLE_TAINT in taints:
        problems.append(f"taint {UNREACHABLE_TAINT}")
    return problems


class _Health:
    """What the watch saw last, and since when (the loop's clock) it has been unhealthy."""

    def __init__(self, resumed_since: datetime | None) -> None:
        self.problems: list[str] = []
        self.known = False
        self.since: datetime | None = None
        self._resumed = resumed_since
        self.api_error: str | None = None
        self.changed = asyncio.Event()

    def observe(self, node: Node | None) -> None:
        self.problems = health_problems(node)
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


def _resumed_since() -> datetime | None:
    """The unhealthy clock of this activity's previous attempt, from its last heartbeat."""
    if not activity.in_activity():
        return None
    details = activity.info().heartbeat_details
    with contextlib.suppress(IndexError, KeyError, TypeError, ValueError):
        raw = details[0]["unhealthy_since"]
        return datetime.fromisoformat(raw) if raw else None
    return None


async def _follow(
    client: AsyncClient, name: str, health: _Health, poll: float, permanent: Permanent
) -> None:
    """List, then watch from the list's version; on failure re-list after a backoff."""
    delay = FIRST_RETRY_SECONDS
    while True:
        try:
            listing = client.list(Node, fields={"metadata.name": name})
            nodes = [n async for n in listing]
            health.observe(nodes[0] if nodes else None)
            delay = FIRST_RETRY_SECONDS
            watch = cast(
                AsyncGenerator[tuple[str, Node], None],
                client.watch(
                    Node,
                    fields={"metadata.name": name},
                    resource_version=listing.resourceVersion,
                    server_timeout=RESYNC_SECONDS,
                ),
            )
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(RESYNC_SECONDS + 30), contextlib.aclosing(watch):
                    async for event, node in watch:
                        health.observe(None if event == "DELETED" else node)
            continue
        except httpx2.HTTPStatusError as exc:
            if (failure := permanent(exc)) is not None:
                raise failure from exc
            code = exc.response.status_code
            if code == 410:
                continue
            health.api_error = f"HTTP {code}"
        except (httpx2.HTTPError, OSError, ValueError) as exc:
            health.api_error = type(exc).__name__
        await asyncio.sleep(delay)
        delay = min(delay * 2, poll)


async def watch_node_health(
    client: AsyncClient, inp: WatchNodeHealthInput, permanent: Permanent
) -> NodeHealthResult:
    health = _Health(_resumed_since())
    beats = QuietHeartbeat()
    every = heartbeat_interval(inp.poll_hint_seconds)
    beating = asyncio.create_task(beats.keep_beating(every, health.details))
    following = asyncio.create_task(
        _follow(client, inp.node_name, health, inp.poll_hint_seconds, permanent)
    )
    try:
        while True:
            timeout: float | None = None
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
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(health.changed.wait(), timeout)
            if following.done():
                following.result()  # a permanent failure surfaces here
    finally:
        beating.cancel()
        following.cancel()
