"""Heartbeats of long activities: often enough for the heartbeat timeout in
`contracts.timeouts.ActivityTimeouts`, and none at all for an activity done in a moment."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from temporalio import activity

T = TypeVar("T")
# An activity that ends within this many seconds sends no heartbeat at all (QuietHeartbeat).
QUIET_SECONDS = 1.0


def heartbeat_interval(preferred: float) -> float:
    """`preferred`, or less when this activity's heartbeat timeout needs beats more often."""
    timeout = activity.info().heartbeat_timeout
    if not timeout:
        return preferred
    return min(preferred, timeout.total_seconds() / 3)


class QuietHeartbeat:
    """An activity's heartbeats, held back while the activity is young.

    The SDK sends an activity's first heartbeat to the server at once (only later ones are
    throttled), and each is a server-side write: an activity done in milliseconds would pay
    for progress nobody can see. `beat` only holds its details during the quiet period
    (QUIET_SECONDS, or a third of a shorter heartbeat timeout, so the server never times out a
    quiet activity); `flush_after_quiet`, run beside the work, sends the latest held details
    when it ends. From then on every beat goes out, so a long wait still shows what it lacks.
    """

    def __init__(self) -> None:
        self._clock = asyncio.get_running_loop().time
        self._quiet_until = self._clock() + heartbeat_interval(QUIET_SECONDS)
        self._held: tuple[Any, ...] | None = None

    def beat(self, *details: Any) -> None:
        self._held = details
        if self._clock() >= self._quiet_until:
            self._send()

    async def flush_after_quiet(self) -> None:
        await asyncio.sleep(self._quiet_until - self._clock())
        self._quiet_until = self._clock()  # a timer may fire a tick early: the quiet is over
        self._send()

    async def keep_beating(self, interval: float, details: Callable[[], Any]) -> None:
        """Flush after the quiet period, then beat `details()` every `interval` seconds."""
        await self.flush_after_quiet()
        while True:
            await asyncio.sleep(interval)
            self.beat(details())

    def _send(self) -> None:
        if self._held is not None:
            activity.heartbeat(*self._held)
            self._held = None


async def heartbeating(call: Awaitable[T], preferred: float = 5.0) -> T:
    """Await `call` inside an activity, heartbeating meanwhile: a wait on another service
    (the ledger) then shows a dead worker at the heartbeat timeout, not the call timeout."""
    task = asyncio.ensure_future(call)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=heartbeat_interval(preferred))
            if done:
                return task.result()
            activity.heartbeat()
    finally:
        task.cancel()
