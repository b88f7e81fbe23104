"""How long a workflow waits on a silent activity before the engine tries it again.

A worker that dies mid-activity is only noticed when a timeout fires: the heartbeat timeout
for long activities (create, Ready wait, drain, destroy), the start-to-close timeout for short
calls. The defaults suit production; tests and impatient sites shorten them so a crashed
worker's work moves to another worker within seconds. Carried in workflow inputs (no secret).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import timedelta
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field
from temporalio import activity

T = TypeVar("T")


class ActivityTimeouts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    heartbeat_seconds: float = Field(default=30, ge=1, le=3600)
    call_seconds: float = Field(default=60, ge=1, le=3600)
    ledger_seconds: float = Field(default=120, ge=1, le=3600)

    @property
    def heartbeat(self) -> timedelta:
        """Heartbeat timeout of the long-running activities."""
        return timedelta(seconds=self.heartbeat_seconds)

    @property
    def call(self) -> timedelta:
        """Start-to-close timeout of one short call (placement, Kubernetes, planning)."""
        return timedelta(seconds=self.call_seconds)

    @property
    def ledger(self) -> timedelta:
        """Start-to-close timeout of a reservation or release sent to the ledger."""
        return timedelta(seconds=self.ledger_seconds)


def heartbeat_interval(preferred: float) -> float:
    """`preferred`, or less when this activity's heartbeat timeout needs beats more often."""
    timeout = activity.info().heartbeat_timeout
    if not timeout:
        return preferred
    return min(preferred, timeout.total_seconds() / 3)


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
