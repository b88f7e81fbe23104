"""The drain's data contract: its input, result and policy, beside no client code, so the
workflows that carry them (ReleaseSpare, PrepareSpare's status) import no Kubernetes client."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field


class DrainPolicy(StrEnum):
    FAIL = "fail"
    FORCE = "force"
    LEAVE = "leave"


class BudgetRefusal(BaseModel):
    """A PodDisruptionBudget that refused an eviction, as last seen."""

    namespace: str
    name: str
    disruptions_allowed: int | None = None
    # The API server's words: "The disruption budget X needs 2 healthy pods and has 2 currently".
    message: str = ""
    pods: list[str] = Field(default_factory=list)

    def describe(self) -> str:
        allowed = "?" if self.disruptions_allowed is None else str(self.disruptions_allowed)
        return f"{self.namespace}/{self.name} (disruptionsAllowed={allowed})"


class DrainOutcome(StrEnum):
    DRAINED = "drained"  # every pod evicted and gone
    FORCED = "forced"  # what evictions could not move was deleted
    BLOCKED = "blocked"  # pods remain at the timeout


class DrainNodeInput(BaseModel):
    node_name: str
    # The spare's cluster; None: the one its Node's name (the spare id) names.
    cluster: str | None = None
    timeout_seconds: int = Field(ge=0)
    # None: the worker's default (its `drain_policy` setting).
    policy: DrainPolicy | None = None
    # With `force`: how long deleted pods may take to terminate, beyond the drain timeout.
    delete_wait_seconds: int = Field(default=120, ge=0)
    retry_interval_seconds: float = Field(default=2.0, gt=0)


class DrainNodeResult(BaseModel):
    outcome: DrainOutcome = DrainOutcome.DRAINED
    policy: DrainPolicy = DrainPolicy.FAIL
    # Evicted and gone.
    evicted: list[str] = Field(default_factory=list)
    # Deleted past their budgets (policy force) and gone.
    deleted: list[str] = Field(default_factory=list)
    # Still on the Node at the end: refused, or accepted but still terminating.
    skipped: list[str] = Field(default_factory=list)
    # Left alone on purpose, as `kubectl drain --ignore-daemonsets` does: DaemonSet and mirror.
    ignored: list[str] = Field(default_factory=list)
    blocked_by: list[BudgetRefusal] = Field(default_factory=list)

    def summary(self) -> str:
        """One line for people: what moved, what stayed and which budgets held it."""
        parts = [f"drain {self.outcome.value}: evicted {len(self.evicted)} pods"]
        if self.deleted:
            parts.append(f"deleted past their budgets: {', '.join(self.deleted)}")
        if self.skipped:
            parts.append(f"not evicted: {', '.join(self.skipped)}")
        if self.blocked_by:
            parts.append("blocked by " + ", ".join(b.describe() for b in self.blocked_by))
        return "; ".join(parts)
