"""Reservations the ledger holds but the inventory may not show yet.

Applying them makes the engine see what is promised: resources, VM counts, anti-affinity
members and VM ids. A reservation whose VM the inventory already reports is already counted in
the host's allocations and is skipped, so nothing counts twice. Its VM id is still kept as used:
marking an id used twice is harmless, handing it out twice is not.
"""

from __future__ import annotations

from collections.abc import Sequence

from .models import ExistingVm, PlacementInput, VmRequest, VmShape
from .topology_record import PlacedTopology


class Reservation(VmShape):
    """Room the ledger promised to a spare on a host, until the inventory shows its VM."""

    spare_id: str
    vm_name: str
    host: str
    anti_affinity_group: str | None = None
    vmid: int | None = None
    # Where the host is under the keys the request named, and what `near` wanted.
    topology: PlacedTopology | None = None

    @classmethod
    def of(
        cls,
        request: VmRequest,
        host: str,
        vmid: int | None,
        spare_id: str,
        topology: PlacedTopology | None = None,
    ) -> Reservation:
        """The reservation a placement decision for `request` makes."""
        return cls(
            spare_id=spare_id,
            vm_name=request.name,
            host=host,
            anti_affinity_group=request.anti_affinity_group,
            vmid=vmid,
            topology=topology,
            **request.shape(),
        )


def apply_reservations(inp: PlacementInput, reservations: Sequence[Reservation]) -> PlacementInput:
    """A copy of `inp` with every pending reservation counted on its host."""
    hosts = {h.name: h.model_copy() for h in inp.hosts}
    existing = list(inp.existing_vms)
    known_vms = {vm.name for vm in existing}
    used = list(inp.used_vmids)
    used_set = set(used)
    for r in reservations:
        if r.vmid is not None and r.vmid not in used_set:
            used.append(r.vmid)
            used_set.add(r.vmid)
        host = hosts.get(r.host)
        # Absent host: it left the inventory, its capacity no longer matters.
        if host is None or r.vm_name in known_vms:
            continue
        host.cpu_allocated += r.cpu
        host.memory_mb_allocated += r.memory_mb
        host.gpu_allocated += r.gpu
        host.disk_gb_allocated += r.disk_gb
        if r.devices:
            devices = dict(host.devices_allocated)
            for name, count in r.devices.items():
                devices[name] = devices.get(name, 0) + count
            host.devices_allocated = devices
        host.vm_count += 1
        existing.append(ExistingVm(name=r.vm_name, host=r.host, group=r.anti_affinity_group))
        known_vms.add(r.vm_name)
    return inp.model_copy(
        update={
            "hosts": [hosts[h.name] for h in inp.hosts],
            "existing_vms": existing,
            "used_vmids": used,
        }
    )
