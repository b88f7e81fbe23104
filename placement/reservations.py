"""Reservations the ledger holds but the inventory may not show yet.

Applying them makes the engine see what is promised: resources, VM counts, anti-affinity
members and VM ids. A reservation whose VM the inventory already reports is already counted in
the host's allocations and is skipped, so nothing counts twice. Its VM id is still kept as used:
marking an id used twice is harmless, handing it out twice is not.

Over an interval (`over`, holds.py), only the reservations whose hold overlaps it count, each
host by the most they hold at once. A VM the inventory reports counts there through its
reservation only: the inventory shows it now, the reservation says until when. VM ids stay
used whatever the interval: an id is cheap, and a release running late must not meet its twin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from pydantic import Field

from .holds import Hold, peak
from .models import ExistingVm, Host, PlacementInput, VmRequest, VmShape
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
    # When it holds its room; the default (always) is what a reservation made before holds
    # existed keeps.
    hold: Hold = Field(default_factory=Hold)

    @classmethod
    def of(
        cls,
        request: VmRequest,
        host: str,
        vmid: int | None,
        spare_id: str,
        topology: PlacedTopology | None = None,
        hold: Hold | None = None,
    ) -> Reservation:
        """The reservation a placement decision for `request` makes."""
        return cls(
            spare_id=spare_id,
            vm_name=request.name,
            host=host,
            anti_affinity_group=request.anti_affinity_group,
            vmid=vmid,
            topology=topology,
            hold=hold or Hold(),
            **request.shape(),
        )


def apply_reservations(
    inp: PlacementInput,
    reservations: Sequence[Reservation],
    over: Hold | None = None,
    now: datetime | None = None,
    positions: Mapping[str, int] | None = None,
) -> PlacementInput:
    """A copy of `inp` with every pending reservation counted on its host; with `over`, only
    those that hold room within it, each host by the most they hold at once (`now` keeps a
    reservation that is not freed yet from ending before now). `positions`: where each host
    sits in `inp.hosts`, when the caller keeps it for many inputs with the same hosts' order.
    Hosts no reservation changes stay the input's very objects."""
    if positions is None:
        positions = {h.name: k for k, h in enumerate(inp.hosts)}
    if over is None:
        return _apply_all(inp, reservations, positions)
    return _apply_over(inp, reservations, over, now, positions)


def holding_over(
    reservations: Sequence[Reservation], over: Hold, now: datetime | None = None
) -> list[Reservation]:
    """The reservations that hold room at some instant of `over`."""
    return [r for r in reservations if r.hold.at_least_until(now).overlaps(over)]


def _apply_all(
    inp: PlacementInput, reservations: Sequence[Reservation], index: Mapping[str, int]
) -> PlacementInput:
    hosts = list(inp.hosts)
    changed: dict[str, Host] = {}
    existing = list(inp.existing_vms)
    known_vms = {vm.name for vm in existing}
    used = _used_vmids(inp, reservations)
    for r in reservations:
        # Absent host: it left the inventory, its capacity no longer matters.
        if r.host not in index or r.vm_name in known_vms:
            continue
        host = _changed_host(hosts, index, changed, r.host)
        _add(host, r, 1)
        host.vm_count += 1
        existing.append(ExistingVm(name=r.vm_name, host=r.host, group=r.anti_affinity_group))
        known_vms.add(r.vm_name)
    return inp.model_copy(update={"hosts": hosts, "existing_vms": existing, "used_vmids": used})


def _changed_host(
    hosts: list[Host], index: Mapping[str, int], changed: dict[str, Host], name: str
) -> Host:
    """Host `name`, copied into `hosts` on its first change only: thousands of hosts, a few
    with reservations, and the hosts left as they were stay the input's very objects (a
    caller that kept the input's table rebuilds only the rows of hosts that changed)."""
    if name not in changed:
        changed[name] = hosts[index[name]].model_copy()
        hosts[index[name]] = changed[name]
    return changed[name]


def _apply_over(
    inp: PlacementInput,
    reservations: Sequence[Reservation],
    over: Hold,
    now: datetime | None,
    index: Mapping[str, int],
) -> PlacementInput:
    hosts = list(inp.hosts)
    changed: dict[str, Host] = {}

    def host_at(name: str) -> Host:
        return _changed_host(hosts, index, changed, name)

    known_vms = {vm.name for vm in inp.existing_vms}
    leaving: set[str] = set()
    held: dict[str, list[tuple[Hold, VmShape]]] = {}
    joining: list[ExistingVm] = []
    for r in reservations:
        if r.host not in index:
            continue  # it left the inventory: its capacity no longer matters
        hold = r.hold.at_least_until(now)
        if r.vm_name in known_vms:
            # Counted by the inventory today: take it out, the reservation says when it holds.
            host = host_at(r.host)
            _add(host, r, -1)
            host.vm_count = max(0, host.vm_count - 1)
            if not hold.overlaps(over):
                leaving.add(r.vm_name)
        if hold.overlaps(over):
            held.setdefault(r.host, []).append((hold, r))
            if r.vm_name not in known_vms:
                joining.append(ExistingVm(name=r.vm_name, host=r.host, group=r.anti_affinity_group))
    for name, on_host in held.items():
        most = peak(on_host, over)
        host = host_at(name)
        host.cpu_allocated += most.cpu
        host.memory_mb_allocated += most.memory_mb
        host.gpu_allocated += most.gpu
        host.disk_gb_allocated += most.disk_gb
        host.vm_count += most.vm_count
        if most.devices:
            devices = dict(host.devices_allocated)
            for device, count in most.devices.items():
                devices[device] = devices.get(device, 0) + count
            host.devices_allocated = devices
    existing = [vm for vm in inp.existing_vms if vm.name not in leaving] + joining
    return inp.model_copy(
        update={
            "hosts": hosts,
            "existing_vms": existing,
            "used_vmids": _used_vmids(inp, reservations),
        }
    )


def _add(host: Host, shape: VmShape, sign: int) -> None:
    """Add (or, with -1, take out, never below zero) one VM's amounts on `host`."""
    host.cpu_allocated = max(0, host.cpu_allocated + sign * shape.cpu)
    host.memory_mb_allocated = max(0, host.memory_mb_allocated + sign * shape.memory_mb)
    host.gpu_allocated = max(0, host.gpu_allocated + sign * shape.gpu)
    host.disk_gb_allocated = max(0, host.disk_gb_allocated + sign * shape.disk_gb)
    if shape.devices:
        devices = dict(host.devices_allocated)
        for name, count in shape.devices.items():
            devices[name] = max(0, devices.get(name, 0) + sign * count)
        host.devices_allocated = devices


def _used_vmids(inp: PlacementInput, reservations: Sequence[Reservation]) -> list[int]:
    used = list(inp.used_vmids)
    used_set = set(used)
    for r in reservations:
        if r.vmid is not None and r.vmid not in used_set:
            used.append(r.vmid)
            used_set.add(r.vmid)
    return used
