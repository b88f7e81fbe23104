"""A host's room as `virtflow inventory` shows it: effective capacity less what the inventory
allocates and what the ledger promised to spares the inventory does not show yet."""

from __future__ import annotations

from api.inventory_view import host_room
from contracts.ledger import Reservation
from placement.models import AllocationRatios, Host


def test_room_is_effective_capacity_less_allocated_and_reserved_and_never_below_zero() -> None:
    host = Host(
        name="bm-1",
        cpu_capacity=8,
        cpu_allocated=4,
        cpu_allocation_ratio=2.0,
        memory_mb_capacity=4096,
        memory_mb_allocated=4000,
        gpu_capacity=2,
        gpu_allocated=1,
        disk_gb_capacity=100,
        disk_gb_allocated=10,
    )
    pending = [
        Reservation(spare_id="s-1", vm_name="s-1", host="bm-1", cpu=2, memory_mb=512, disk_gb=5),
        Reservation(spare_id="s-2", vm_name="s-2", host="bm-2", cpu=8, memory_mb=8192),
    ]
    room = host_room(host, AllocationRatios(), pending)
    assert [room.free(r) for r in ("cpu", "memory_mb", "gpu", "disk_gb")] == [10, 0, 1, 85]
    assert [room.room(r) for r in ("cpu", "memory_mb", "gpu", "disk_gb")] == [
        "10/16",
        "0/4096",  # 4000 allocated + 512 promised: over-committed, so nothing is free
        "1/2",
        "85/100",
    ]
    assert room.reserved_for == ["s-1"]
