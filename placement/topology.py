"""Topology keys: the failure domain a host belongs to, by any key (PLACEMENT.md, Topology).

`host` is the host's own name, `rack` its `rack` field, any other key the host's label of that
key, e.g. `topology.kubernetes.io/zone`. A host without the field or label lacks the key
(None): anti-affinity then falls back to host scope, spread and near reject or score it lowest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .models import ExistingVm, Host, Near, VmRequest
from .names import TOPOLOGY_HOST, TOPOLOGY_RACK
from .table import HostTable


@dataclass(frozen=True)
class NearDomain:
    """The host of the VM that `near` names and its domain; `problem` says why it is unknown."""

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


def find_vm(existing_vms: Sequence[ExistingVm], name: str) -> ExistingVm | None:
    """The first existing VM of that name (names identify VMs; a repeat is the same VM)."""
    return next((vm for vm in existing_vms if vm.name == name), None)


def describe_domain(key: str, domain: str | None) -> str:
    """`zone=z1` for the explanation; `no zone` for a host lacking the key."""
    return f"no {key}" if domain is None else f"{key}={domain}"


def near_domain(near: Near, existing_vms: Sequence[ExistingVm], table: HostTable) -> NearDomain:
    """The domain `near` asks for, or why it is unknown (then no host can be judged near)."""
    vm = find_vm(existing_vms, near.vm)
    key = near.topology_key
    if vm is None:
        return NearDomain(None, None, f"vm {near.vm!r} is not among the existing VMs")
    i = table.index.get(vm.host)
    if i is None:
        return NearDomain(
            vm.host, None, f"host {vm.host!r} of vm {near.vm!r} is not in the inventory"
        )
    domain = domain_of(table.hosts[i], key)
    if domain is None:
        return NearDomain(
            vm.host, None, f"host {vm.host!r} of vm {near.vm!r} has no {near.topology_key}"
        )
    return NearDomain(vm.host, domain, "")


def chosen_topology(
    request: VmRequest, host: Host | None, wanted: NearDomain | None
) -> dict[str, Any] | None:
    """What the request asked of the topology and where the chosen host is, for the record:
    the chosen host's domain under every key the request names, and the domain `near` wanted.
    None when the request names no topology beyond plain host anti-affinity."""
    keys = [c.topology_key for c in request.topology_spread]
    if request.anti_affinity_group is not None and request.anti_affinity_scope != TOPOLOGY_HOST:
        keys.append(request.anti_affinity_scope)
    if request.near is not None:
        keys.append(request.near.topology_key)
    if not keys:
        return None
    out: dict[str, Any] = {
        "domains": {k: None if host is None else domain_of(host, k) for k in dict.fromkeys(keys)}
    }
    if request.near is not None:
        out["near"] = {
            **request.near.model_dump(),
            "host": None if wanted is None else wanted.host,
            "domain": None if wanted is None else wanted.domain,
        }
    return out
