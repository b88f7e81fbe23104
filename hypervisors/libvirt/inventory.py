"""An inventory read from the hypervisors themselves: libvirt hosts, their capacity and load.

Placement on a real site must not work from hand-kept numbers. This source asks each host's
libvirtd for its CPUs and memory, for its running domains' vCPUs and memory, and for the
capacity and allocation of its storage pools (the disk the VMs' volumes take); what libvirt
cannot know (pool, labels, taints, rack, allocation ratios, quota) comes from a small YAML
file, the site description:

    uri_template: qemu+ssh://root@{host}/system   # optional, this is the default
    disk_pools: [default]                         # optional: the storage pools of VM disks
    hosts:
      - name: kvm-01
        uri: qemu:///system                       # optional, overrides uri_template
        disk_pools: [default, fast]               # optional, overrides the site's
        pool: general
        rack: r1
        labels: {topology.kubernetes.io/zone: a}
        taints: []
        cpu_allocation_ratio: 4.0
        memory_allocation_ratio: 1.0
        disk_allocation_ratio: 1.0
        vm_quota: 20

Disk: `disk_gb_capacity` is the sum of the chosen pools' capacity (GiB, rounded down) and
`disk_gb_allocated` the sum of their allocation (GiB, rounded up): what the pools' storage
holds now, as libvirt last measured it (when it started the pool, and at each volume change
made through libvirt or a `virsh pool-refresh`). Thin volumes (the qcow2 overlays the libvirt
playbook makes) count what they have written; a new VM's `disk_gb` counts through its
reservation until the inventory sees the VM. Without `disk_pools`, every active pool counts:
name the pools when several share one filesystem, or it is counted once per pool.

A domain is virtflow's when its XML carries virtflow's metadata element (the libvirt playbook
writes it): those are the `existing_vms`, with their anti-affinity group and VM id, and the
orphan sweep's view of the VMs. Settings name it `libvirt:/path/to/site.yaml`.
"""

from __future__ import annotations

import asyncio
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from temporalio.exceptions import ApplicationError

from contracts.failures import Failure
from hypervisors.site import SiteHost, inventory_unavailable, read_site

SCHEME = "libvirt:"
# The namespace of the <metadata> element the domain template writes.
VM_XMLNS = "https://virtflow.dev/xmlns/vm/1"
DEFAULT_URI_TEMPLATE = "qemu+ssh://root@{host}/system"
# Libvirt's domain state "running" and the ones that still hold their memory and vCPUs.
_HOLDING_STATES = frozenset({1, 2, 3, 7})  # running, blocked, paused, pmsuspended
GIB = 1024**3


class LibvirtHost(SiteHost):
    uri: str | None = None
    """This host's libvirt URI, when `uri_template` does not make it."""
    disk_pools: list[str] | None = None
    """The storage pools that hold this host's VM disks, when not the site's `disk_pools`."""


class Site(BaseModel):
    model_config = ConfigDict(extra="forbid")

    uri_template: str = DEFAULT_URI_TEMPLATE
    disk_pools: list[str] | None = None
    """The storage pools that hold VM disks, by name; None: every active pool."""
    hosts: list[LibvirtHost] = Field(min_length=1)

    def uri(self, host: LibvirtHost) -> str:
        return host.uri or self.uri_template.replace("{host}", host.name)

    def pools(self, host: LibvirtHost) -> list[str] | None:
        return host.disk_pools if host.disk_pools is not None else self.disk_pools


def _libvirt() -> Any:
    try:
        import libvirt
    except ImportError:
        libvirt = None
    if libvirt is None or not hasattr(libvirt, "open"):
        raise ApplicationError(
            "inventory libvirt: the Python module 'libvirt' is missing: install it into the "
            "worker's environment (apt-get install libvirt-dev pkg-config; pip install "
            "libvirt-python)",
            type=Failure.INVENTORY_MISCONFIGURED,
            non_retryable=True,
        )
    return libvirt


def _metadata(domain: Any, libvirt: Any) -> ET.Element | None:
    try:
        text = domain.metadata(libvirt.VIR_DOMAIN_METADATA_ELEMENT, VM_XMLNS)
    except libvirt.libvirtError:
        return None  # not virtflow's
    return ET.fromstring(text)


def _child_text(element: ET.Element, tag: str) -> str | None:
    child = element.find(f"{{{VM_XMLNS}}}{tag}")
    if child is None:
        child = element.find(tag)  # libvirt may hand the element back without its prefix
    return child.text if child is not None and child.text else None


def _disk_gb(conn: Any, names: list[str] | None) -> tuple[int, int]:
    """(capacity, allocation) in GiB of the named active pools (all active ones for None); a
    named pool that is absent or stopped holds nothing placement may use."""
    capacity = allocation = 0
    for pool in conn.listAllStoragePools():
        if not pool.isActive() or (names is not None and pool.name() not in names):
            continue
        _state, pool_capacity, pool_allocation, _available = pool.info()
        capacity += pool_capacity
        allocation += pool_allocation
    return capacity // GIB, -(-allocation // GIB)


def read_host(site: Site, host: LibvirtHost) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One host in the placement form, and virtflow's domains on it. Blocking (libvirt)."""
    libvirt = _libvirt()
    uri = site.uri(host)
    try:
        conn = libvirt.openReadOnly(uri)
    except libvirt.libvirtError as err:
        raise inventory_unavailable(
            "libvirt", f"host {host.name} ({uri}) does not answer: {err.get_error_message()}"
        ) from None
    try:
        _model, memory_mb, cpus, *_ = conn.getInfo()
        disk_capacity, disk_allocated = _disk_gb(conn, site.pools(host))
        cpu_allocated = memory_allocated = running = 0
        vms: list[dict[str, Any]] = []
        for domain in conn.listAllDomains():
            state, max_kib, _mem, vcpus, _time = domain.info()
            holds = state in _HOLDING_STATES
            if holds:
                running += 1
                cpu_allocated += vcpus
                memory_allocated += max_kib // 1024
            meta = _metadata(domain, libvirt)
            if meta is not None:
                vmid = _child_text(meta, "vmid")
                vms.append(
                    {
                        "name": domain.name(),
                        "host": host.name,
                        "group": _child_text(meta, "group"),
                        "vmid": int(vmid) if vmid else None,
                        "running": holds,
                    }
                )
    finally:
        conn.close()
    placed = host.model_dump(exclude={"uri", "disk_pools"}, exclude_none=True)
    placed.update(
        cpu_capacity=cpus,
        cpu_allocated=cpu_allocated,
        memory_mb_capacity=memory_mb,
        memory_mb_allocated=memory_allocated,
        disk_gb_capacity=disk_capacity,
        disk_gb_allocated=disk_allocated,
        vm_count=running,
    )
    return placed, vms


class LibvirtInventory:
    """The placement JSON form of a site of libvirt hosts, read live on every load."""

    def __init__(self, site_file: Path) -> None:
        self.site_file = site_file

    async def load(self) -> dict[str, Any]:
        site = read_site(self.site_file, Site, f"{SCHEME}{self.site_file}")
        # One thread per host: a slow host does not hold up the others.
        read = await asyncio.gather(
            *(asyncio.to_thread(read_host, site, host) for host in site.hosts)
        )
        hosts = [placed for placed, _ in read]
        vms = [vm for _, host_vms in read for vm in host_vms]
        return {
            "hosts": hosts,
            "existing_vms": [{k: vm[k] for k in ("name", "host", "group")} for vm in vms],
            "used_vmids": sorted({vm["vmid"] for vm in vms if vm["vmid"] is not None}),
        }
