"""Topology keys: the failure domain a host belongs to, by any key (PLACEMENT.md, Topology).

`host` is the host's own name, `rack` its `rack` field, any other key the host's label of that
key, e.g. `topology.kubernetes.io/zone`. A host without the field or label lacks the key
(None): anti-affinity then falls back to host scope, spread and near reject or score it lowest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .models import ExistingVm, Host, Near, VmRequest
from .names import TOPOLOGY_HOST, TOPOLOGY_RACK
from .table import HostTable
from .topology_record import NearRecord, PlacedTopology


@dataclass(frozen=True)
class NearDomain:
    """The VM that `near` names, its host and domain; `problem` says why the domain is unknown."""

    vm: str | None
    host: str | None
    domain: str | None
    problem: str


def domain_of(host: Host, key: str) -> str | None:
    """The host's domain under `key`, None when the host lacks the key."""
    if key == TOPOLOGY_HOST:
        return host.name
    if key == TOPOLOGY_RACK:
        return host.rack
    return host.labels.get(key)


def find_near_vm(existing_vms: Sequence[ExistingVm], near: Near) -> ExistingVm | None:
    """The first existing VM that `near` names: by VM name, or by the Node it runs as (its
    `node`, else its name: virtflow names a VM after its Node). A repeat is the same VM."""
    if near.vm is not None:
        return next((vm for vm in existing_vms if vm.name == near.vm), None)
    return next((vm for vm in existing_vms if vm.node_name == near.node), None)


def near_domain(near: Near, existing_vms: Sequence[ExistingVm], table: HostTable) -> NearDomain:
    """The domain `near` asks for, or why it is unknown (then no host can be judged near)."""
    vm = find_near_vm(existing_vms, near)
    key = near.topology_key
    if vm is None:
        return NearDomain(None, None, None, f"{near.target} is not among the existing VMs")
    where = f"host {vm.host!r} of vm {vm.name!r}"
    i = table.index.get(vm.host)
    if i is None:
        return NearDomain(vm.name, vm.host, None, f"{where} is not in the inventory")
    domain = domain_of(table.hosts[i], key)
    if domain is None:
        return NearDomain(vm.name, vm.host, None, f"{where} has no {key}")
    return NearDomain(vm.name, vm.host, domain, "")


def chosen_topology(
    request: VmRequest, host: Host | None, wanted: NearDomain | None
) -> PlacedTopology | None:
    """The record of what the request asked of the topology and where the chosen host is.
    None when the request names no topology beyond plain host anti-affinity."""
    keys = [c.topology_key for c in request.topology_spread]
    if request.anti_affinity_group is not None and request.anti_affinity_scope != TOPOLOGY_HOST:
        keys.append(request.anti_affinity_scope)
    near = request.near
    if near is not None:
        keys.append(near.topology_key)
    if not keys:
        return None
    domains = {k: None if host is None else domain_of(host, k) for k in dict.fromkeys(keys)}
    record = None
    if near is not None:
        record = NearRecord(
            vm=None if wanted is None else wanted.vm,
            node=near.node,
            topology_key=near.topology_key,
            required=near.required,
            host=None if wanted is None else wanted.host,
            domain=None if wanted is None else wanted.domain,
        )
    return PlacedTopology(domains=domains, near=record)
