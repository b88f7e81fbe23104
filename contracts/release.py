"""The contract of ReleaseSpare: its input, result, `step` query and what it tells its parent.

Run as PrepareSpare's child, by the reconciler for an orphan, or alone by an operator.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from .drain import DrainNodeResult, DrainPolicy
from .timeouts import ActivityTimeouts

RELEASE_SPARE = "ReleaseSpare"
STEP_QUERY = "step"
# Signalled to the parent (PrepareSpare) while the release waits on a refusal (a destroy the
# hypervisor refuses for now): the step, with the hypervisor's reason, for its phase detail.
RELEASE_STEP_SIGNAL = "release_step"
# The release gave up on a VM the hypervisor kept refusing to destroy: the VM and the
# reservation stay, for a person or the orphan sweep.


def release_workflow_id(spare_id: str) -> str:
    return f"release-{spare_id}"


class ReleaseInput(BaseModel):
    spare_id: str
    vm_name: str
    host: str | None = None
    # The VM id placement chose (None: the hypervisor picks one, or it is not known).
    vmid: int | None = None
    inventory: str = "default"
    # The spare's cluster, whose API its Node is cordoned, drained and deleted in; None: the
    # one its Node's name (the spare id) names (an orphan's).
    cluster: str | None = None
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
