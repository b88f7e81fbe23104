"""One VM: its shape (defined with the placement request), the spec a provisioner creates it
from, the facts the hypervisor reports once it exists, and the inputs of the provisioning
activities (`activities/provisioning.py`).

`VmFacts` is the webhook events' model too (`webhooks/` imports nothing of virtflow, so the
one model lives there); the provisioning activities return it and the events carry it as is.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from placement.models import MAX_VMID, Taint, VmShape
from webhooks.events import VmFacts

__all__ = [
    "CreateVmInput",
    "DescribeVmInput",
    "DestroyVmInput",
    "VmFacts",
    "VmShape",
    "VmSpec",
]


class VmSpec(VmShape):
    """What a provisioner creates: the body of the lab's and a site's `POST /vms`, and the
    `vm_*` playbook variables."""

    # A DNS label: the VM name is also the Kubernetes Node name.
    name: str = Field(min_length=1, max_length=63)
    host: str = Field(min_length=1)
    # From placement; None lets the hypervisor pick.
    vmid: int | None = Field(default=None, ge=1, le=MAX_VMID)
    anti_affinity_group: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    # The taints the Node is registered with (a kubelet's `--register-with-taints`): there
    # from the Node's first moment, not patched on once it is Ready.
    taints: list[Taint] = Field(default_factory=list)
    image: str | None = None
    network: str | None = None
    # Filled in by the create activity from the site template, never by a workflow: the user
    # data carries the join token.
    user_data: str | None = None
    # The site template to build the VM from (runtime/vm_templates.py); None: the pool's.
    template: str | None = None
    pool: str | None = None


class CreateVmInput(BaseModel):
    spec: VmSpec


class DestroyVmInput(BaseModel):
    name: str
    host: str | None = None
    # The VM id placement chose, where the hypervisor names a VM only once it is made (a
    # Proxmox clone in flight has no name yet): the destroy then finds it by id.
    vmid: int | None = None


class DescribeVmInput(BaseModel):
    name: str
