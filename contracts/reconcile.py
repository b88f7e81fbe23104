"""The contract of ReconcileSpares, the orphan sweep a Temporal Schedule runs
(worker/schedules.py): its input and result; and of CompensateSpare, which it starts for a
spare whose run was terminated from outside."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from .spare import SpareRequest

RECONCILE_SPARES = "ReconcileSpares"
RECONCILE_SCHEDULE_ID = "virtflow-reconcile-spares"
COMPENSATE_SPARE = "CompensateSpare"


def compensation_id(spare_id: str, run_id: str) -> str:
    """One compensation per terminated run, ever: the id says which run it makes up for."""
    return f"compensate-{spare_id}-{run_id[:8]}"


class ReconcileInput(BaseModel):
    grace_seconds: int = Field(default=300, ge=0, le=24 * 3600)
    drain_timeout_seconds: int = Field(default=600, ge=1, le=24 * 3600)
    # Terminated spares closed within this long are looked at (each is compensated once).
    terminated_lookback_seconds: int = Field(default=24 * 3600, ge=60, le=30 * 24 * 3600)


class TerminatedSpare(BaseModel):
    """A PrepareSpare run terminated from outside: what it asked for and where it was."""

    spare_id: str
    run_id: str
    request: SpareRequest
    host: str | None = None
    # The VM id its reservation holds: a Proxmox clone still in flight has no name yet, and
    # the release finds it by this id.
    vmid: int | None = None


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
    # Spares whose terminated run this sweep started compensating.
    compensated: list[str] = Field(default_factory=list)
    # Reservations freed because their workflow had ended (in both scans).
    freed_reservations: list[str] = Field(default_factory=list)


class FindOrphansInput(BaseModel):
    # Nodes labelled as virtflow spares (KubernetesActivities.list_spare_nodes).
    nodes: list[str] = Field(default_factory=list)


class OrphanSpare(BaseModel):
    name: str
    host: str | None = None
    # The inventory whose VM this is; for a Node without a VM, the first configured one.
    inventory: str
    has_vm: bool
    has_node: bool


class FindOrphansResult(BaseModel):
    vms_seen: int
    nodes_seen: int
    orphans: list[OrphanSpare] = Field(default_factory=list)


class FindTerminatedInput(BaseModel):
    closed_after: datetime
    # The spares of this task queue: the ones this deployment's workers run.
    task_queue: str


class FindTerminatedResult(BaseModel):
    spares: list[TerminatedSpare] = Field(default_factory=list)


class StaleReservation(BaseModel):
    """A reservation in an inventory's ledger whose spare's workflow does not run."""

    spare_id: str
    inventory: str
    # How its workflow ended (`completed`, `terminated`, ..., `not found`).
    status: str


class FindStaleReservationsResult(BaseModel):
    reservations: list[StaleReservation] = Field(default_factory=list)
