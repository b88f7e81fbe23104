"""How long a workflow waits on a silent activity before the engine tries it again.

A worker that dies mid-activity is only noticed when a timeout fires: the heartbeat timeout
for long activities (create, Ready wait, drain, destroy), the start-to-close timeout for short
calls. The defaults suit production; tests and impatient sites shorten them so a crashed
worker's work moves to another worker within seconds. Carried in workflow inputs (no secret).
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field


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
