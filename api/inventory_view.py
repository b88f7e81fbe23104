"""What an inventory holds right now: each host's room and the ledger's pending reservations.

For `virtflow inventory`. The inventory says what is allocated; the ledger says what is
promised to spares whose VMs the inventory does not show yet. Free room is the effective
capacity (capacity x allocation ratio) minus both.
"""

from __future__ import annotations

import asyncio
import math
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from activities.ledger import ledger_reservations as reservations_of
from contracts.ledger import Reservation, ledger_workflow_id
from hypervisors.inventory import read_inventory
from placement.models import AllocationRatios, Host
from placement.policy import load_policy
from runtime.settings import Settings

from .errors import InvalidInput, InventoryUnavailable
from .inventory_check import inventory_spec
from .temporal_calls import temporal_errors

LEDGER_QUERY_TIMEOUT = timedelta(seconds=5)  # only a worker answers (api/workers.py)
# A readiness probe must answer quickly; a slower inventory counts as unreadable.
READINESS_TIMEOUT_SECONDS = 5.0
# The resources a host has `<resource>_used` and `<resource>_capacity` of.
Scalar = Literal["cpu", "memory_mb", "gpu", "disk_gb"]


class HostRoom(BaseModel):
    name: str
    pool: str | None
    rack: str | None
    schedulable: bool
    dedicated: bool
    cpu_used: int
    cpu_capacity: int
    memory_mb_used: int
    memory_mb_capacity: int
    gpu_used: int
    gpu_capacity: int
    disk_gb_used: int = 0
    disk_gb_capacity: int = 0
    # Per device name: free of capacity, e.g. {"xilinx.com/u250": [1, 2]}.
    devices_free: dict[str, tuple[int, int]] = {}
    vm_count: int
    vm_quota: int | None
    reserved_for: list[str]

    def free(self, resource: Scalar) -> int:
        """What is left of `resource` (an over-committed host has none, never less)."""
        return max(getattr(self, f"{resource}_capacity") - getattr(self, f"{resource}_used"), 0)

    def room(self, resource: Scalar) -> str:
        """`free/capacity` of `resource`, as people read it."""
        return f"{self.free(resource)}/{getattr(self, f'{resource}_capacity')}"


class InventoryView(BaseModel):
    inventory: str
    hosts: list[HostRoom]
    reservations: list[Reservation]


async def ledger_reservations(client: Client, inventory: str) -> list[Reservation]:
    """The ledger's reservations (none before any spare used the inventory), with the
    engine's faults in the API's words."""
    with temporal_errors(ledger_workflow_id(inventory)):
        return await reservations_of(client, inventory, rpc_timeout=LEDGER_QUERY_TIMEOUT)


def host_room(host: Host, ratios: AllocationRatios, pending: list[Reservation]) -> HostRoom:
    mine = [r for r in pending if r.host == host.name]

    def used(device: str) -> int:
        return host.devices_allocated.get(device, 0) + sum(r.devices.get(device, 0) for r in mine)

    cpu_ratio = host.cpu_allocation_ratio or ratios.cpu
    mem_ratio = host.memory_allocation_ratio or ratios.memory_mb
    return HostRoom(
        name=host.name,
        pool=host.pool,
        rack=host.rack,
        schedulable=not host.unschedulable,
        dedicated=host.dedicated,
        cpu_used=host.cpu_allocated + sum(r.cpu for r in mine),
        cpu_capacity=math.floor(host.cpu_capacity * cpu_ratio),
        memory_mb_used=host.memory_mb_allocated + sum(r.memory_mb for r in mine),
        memory_mb_capacity=math.floor(host.memory_mb_capacity * mem_ratio),
        gpu_used=host.gpu_allocated + sum(r.gpu for r in mine),
        gpu_capacity=host.gpu_capacity,
        disk_gb_used=host.disk_gb_allocated + sum(r.disk_gb for r in mine),
        disk_gb_capacity=math.floor(host.disk_gb_capacity * host.disk_allocation_ratio),
        devices_free={
            name: (max(cap - used(name), 0), cap)
            for name, cap in sorted(host.devices_capacity.items())
        },
        vm_count=host.vm_count + len(mine),
        vm_quota=host.vm_quota,
        reserved_for=[r.spare_id for r in mine],
    )


async def inventory_document(settings: Settings, name: str) -> dict[str, Any]:
    """Inventory `name` as read now, its faults in the API's words: a broken document is the
    caller's input (422), an outage is 503."""
    spec = inventory_spec(settings, name)
    try:
        return await read_inventory(spec)
    except ApplicationError as err:
        # The source's own retry decision tells a broken document from an outage.
        if err.non_retryable:
            raise InvalidInput("inventory", str(err)) from err
        raise InventoryUnavailable(str(err)) from err


async def inventory_view(client: Client, settings: Settings, name: str) -> InventoryView:
    document = await inventory_document(settings, name)
    try:
        hosts = [Host.model_validate(h) for h in document["hosts"]]
    except ValidationError as err:
        where = inventory_spec(settings, name)
        raise InvalidInput("inventory", f"{where}: {err.errors()[0]['msg']}") from err
    ratios = load_policy(settings.policy_path).allocation_ratios if settings.policy_path else None
    reservations = await ledger_reservations(client, name)
    # A reservation whose VM the inventory already reports is counted in its allocations.
    reported = {vm.get("name") for vm in document.get("existing_vms") or [] if isinstance(vm, dict)}
    pending = [r for r in reservations if r.vm_name not in reported]
    return InventoryView(
        inventory=name,
        hosts=[host_room(h, ratios or AllocationRatios(), pending) for h in hosts],
        reservations=reservations,
    )


async def unreadable_inventories(settings: Settings) -> dict[str, str]:
    """Configured inventories that cannot be read right now, with the reason (for /readyz)."""

    async def problem(spec: str) -> str | None:
        try:
            await asyncio.wait_for(read_inventory(spec), READINESS_TIMEOUT_SECONDS)
        except ApplicationError as err:
            return err.message
        except TimeoutError:
            return f"inventory {spec}: no answer within {READINESS_TIMEOUT_SECONDS:g} s"
        return None

    names = sorted(settings.inventories)
    found = await asyncio.gather(*(problem(settings.inventories[n]) for n in names))
    return {name: reason for name, reason in zip(names, found, strict=True) if reason}
