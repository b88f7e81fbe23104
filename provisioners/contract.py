"""What every provisioner offers the provisioning activities, and how it reports a failure."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from contracts.vm import DestroyVmInput, VmFacts, VmSpec

# A failed task whose message starts with this marker may heal by itself (5xx, connection
# refused): the playbooks use it so the activity can leave the retry to the engine.
TRANSIENT_MARKER = "TRANSIENT:"

# Called with the name of the step a provisioner has reached (an Ansible task, a pipeline's
# status); the activity turns it into a heartbeat.
Progress = Callable[[str], None]


class ProvisioningFailed(Exception):
    """A provisioning step failed; `transient` says whether trying again may help."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.message = message
        self.transient = transient


class Provisioner(Protocol):
    async def create_vm(self, spec: VmSpec, progress: Progress | None = None) -> VmFacts: ...

    async def destroy_vm(self, vm: DestroyVmInput, progress: Progress | None = None) -> None: ...

    async def describe_vm(self, name: str, progress: Progress | None = None) -> VmFacts | None: ...
