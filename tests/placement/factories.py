"""Fake hosts and requests for the placement tests, and a decide() that checks both paths."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from placement.decision import Decision
from placement.engine import Engine
from placement.models import ExistingVm, Host, PlacementInput, Policy, VmRequest
from placement.registry import PluginRegistry
from placement.table import HostTable


def host(name: str = "h1", **fields: Any) -> Host:
    """A schedulable shared host with 32 CPUs and 128 GiB, nothing allocated."""
    base: dict[str, Any] = {"cpu_capacity": 32, "memory_mb_capacity": 131072}
    return Host.model_validate({"name": name, **base, **fields})


def request(**fields: Any) -> VmRequest:
    return VmRequest.model_validate({"name": "vm-1", "cpu": 4, "memory_mb": 8192, **fields})


def placement_input(
    hosts: Sequence[Host],
    req: VmRequest | None = None,
    policy: Policy | dict[str, Any] | None = None,
    existing_vms: Sequence[ExistingVm | dict[str, Any]] = (),
    **fields: Any,
) -> PlacementInput:
    return PlacementInput.model_validate(
        {
            "hosts": list(hosts),
            "request": req or request(),
            "policy": policy or Policy(),
            "existing_vms": list(existing_vms),
            **fields,
        }
    )


def decide(inp: PlacementInput, registry: PluginRegistry | None = None) -> Decision:
    """The vectorised decision, after checking that the host-by-host path agrees exactly."""
    table = HostTable.build(inp.hosts)
    args = (table, inp.request, inp.existing_vms, inp.used_vmids, inp.next_vmid)
    fast = Engine(inp.policy, registry).decide(*args)
    slow = Engine(inp.policy, registry, vectorised=False).decide(*args)
    assert fast.to_json() == slow.to_json()
    assert (fast.summary, fast.reason_counts) == (slow.summary, slow.reason_counts)
    return fast


def rejection(
    h: Host,
    req: VmRequest | None = None,
    policy: Policy | dict[str, Any] | None = None,
    existing_vms: Sequence[ExistingVm | dict[str, Any]] = (),
) -> str | None:
    """The keyword that rejects `h` for the request, None when it passes every filter."""
    decision = decide(placement_input([h], req, policy, existing_vms))
    return decision.rejected.get(h.name)
