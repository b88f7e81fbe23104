"""The contract of ReconcileSpares, the orphan sweep a Temporal Schedule runs
(worker/schedules.py): its input and result."""

from __future__ import annotations

from pydantic import BaseModel, Field

RECONCILE_SPARES = "ReconcileSpares"
RECONCILE_SCHEDULE_ID = "virtflow-reconcile-spares"


class ReconcileInput(BaseModel):
    grace_seconds: int = Field(default=300, ge=0, le=24 * 3600)
    drain_timeout_seconds: int = Field(default=600, ge=1, le=24 * 3600)


class OrphanRelease(BaseModel):
    name: str
    host: str | None = None
    inventory: str
    had_vm: bool
    had_node: bool
    released: bool
    error: str | None = None


class ReconcileResult(BaseModel):
    vms_seen: int
    nodes_seen: int
    suspects: list[str] = Field(default_factory=list)
    released: list[OrphanRelease] = Field(default_factory=list)
