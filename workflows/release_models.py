"""The data contract of the ReleaseSpare workflow: its input and result.

Kept apart from the workflow so the worker can pass it through the sandbox: the sandbox
re-imports a workflow's module for every workflow it runs, and rebuilding these pydantic
classes twice per spare (PrepareSpare imports them too) was a measurable share of the
worker's CPU.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from activities.drain_models import DrainNodeResult, DrainPolicy
from activities.timeouts import ActivityTimeouts


class ReleaseInput(BaseModel):
    spare_id: str
    vm_name: str
    host: str | None = None
    inventory: str = "default"
    drain_timeout_seconds: int = Field(default=600, ge=1)
    # None: the worker's `drain_policy` (the drain activity applies it).
    drain_policy: DrainPolicy | None = None
    reason: str = "released"
    timeouts: ActivityTimeouts = Field(default_factory=ActivityTimeouts)


class ReleaseResult(BaseModel):
    spare_id: str
    evicted: list[str] = Field(default_factory=list)
    not_evicted: list[str] = Field(default_factory=list)
    freed: bool = False
    drain: DrainNodeResult | None = None
    # Drain policy `leave`: the VM was kept and its Node left cordoned.
    left_cordoned: bool = False
