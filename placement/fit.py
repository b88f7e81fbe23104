"""Could a request ever fit this inventory? Used to refuse at once what waiting cannot cure.

The request is placed on a copy of the inventory where every host is empty: nothing allocated,
no VM, not cordoned, no taints (cordons and taints come and go). What stays are the properties
that waiting does not change: capacities and ratios, pools, dedicated hosts, labels, names,
the policy's minimum free resources and the domain `near` asks for (the existing VMs are kept
to find it). Anti-affinity and spread are left out: they depend on VMs that come and go. The
VM id is not asked for.
"""

from __future__ import annotations

from collections.abc import Sequence

from .decision import Decision
from .engine import Engine
from .models import Host, PlacementInput, Policy
from .names import ANTI_AFFINITY, POD_TOPOLOGY_SPREAD
from .registry import PluginRegistry
from .table import HostTable

# What waiting can change, as an emptied host has it.
_EMPTY = {
    "cpu_allocated": 0,
    "memory_mb_allocated": 0,
    "gpu_allocated": 0,
    "disk_gb_allocated": 0,
    "devices_allocated": {},
    "vm_count": 0,
    "unschedulable": False,
    "taints": [],
}


def empty_inventory_table(hosts: Sequence[Host]) -> HostTable:
    """The table of the emptied hosts. It depends only on what `_EMPTY` leaves (capacities,
    pools, labels, names), not on allocations, so inputs that differ only in what is allocated
    (one inventory read with different reservations counted) share one."""
    return HostTable.build([h.model_copy(update=_EMPTY) for h in hosts])


def empty_inventory_engine(policy: Policy, registry: PluginRegistry | None = None) -> Engine:
    """The engine that judges the emptied inventory: `policy` without the plugins that
    depend on VMs that come and go."""
    disabled = [*policy.disabled_plugins, ANTI_AFFINITY, POD_TOPOLOGY_SPREAD]
    return Engine(policy.model_copy(update={"disabled_plugins": disabled}), registry)


def empty_inventory_decision(
    inp: PlacementInput,
    registry: PluginRegistry | None = None,
    table: HostTable | None = None,
    engine: Engine | None = None,
) -> Decision:
    """`inp`'s request placed on its emptied inventory; `table` is `empty_inventory_table` of
    `inp.hosts` (or of hosts differing only in allocations) and `engine` is
    `empty_inventory_engine` of `inp.policy`, when the caller keeps them."""
    request = inp.request.model_copy(update={"vmid_range": None, "vmid_regex": None})
    if table is None:
        table = empty_inventory_table(inp.hosts)
    if engine is None:
        engine = empty_inventory_engine(inp.policy, registry)
    return engine.decide(table, request, inp.existing_vms)


def largest_fit_possible(inp: PlacementInput, registry: PluginRegistry | None = None) -> bool:
    """True when some host of the inventory could take the request once emptied."""
    return empty_inventory_decision(inp, registry).host is not None
