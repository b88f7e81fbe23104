"""Ledger reservations counted on top of the inventory, never twice."""

from __future__ import annotations

from factories import decide, host, placement_input, request

from placement.reservations import Reservation, apply_reservations


def reservation(vm: str, on: str = "h1", **fields: object) -> Reservation:
    base: dict[str, object] = {"spare_id": f"spare-{vm}", "vm_name": vm, "host": on}
    return Reservation.model_validate({"cpu": 4, "memory_mb": 8192, **base, **fields})


def test_a_reservation_adds_its_resources_count_group_and_vmid() -> None:
    inp = placement_input([host("h1", cpu_allocated=2), host("h2")], used_vmids=[100])
    out = apply_reservations(inp, [reservation("vm-a", gpu=1, anti_affinity_group="db", vmid=101)])
    h1 = out.hosts[0]
    assert (h1.cpu_allocated, h1.memory_mb_allocated, h1.gpu_allocated, h1.vm_count) == (
        6,
        8192,
        1,
        1,
    )
    assert out.hosts[1] == inp.hosts[1]
    assert [(v.name, v.host, v.group) for v in out.existing_vms] == [("vm-a", "h1", "db")]
    assert out.used_vmids == [100, 101]
    assert inp.hosts[0].cpu_allocated == 2  # the input is not changed


def test_a_vm_the_inventory_already_reports_is_not_counted_twice() -> None:
    existing = [{"name": "vm-a", "host": "h1", "group": "db"}]
    inp = placement_input([host("h1", cpu_allocated=4, vm_count=1)], existing_vms=existing)
    out = apply_reservations(inp, [reservation("vm-a", vmid=101)])
    assert out.hosts[0].cpu_allocated == 4 and out.hosts[0].vm_count == 1
    assert len(out.existing_vms) == 1
    assert out.used_vmids == [101]  # keeping an id used twice is harmless


def test_a_reservation_on_a_host_gone_from_the_inventory_is_ignored() -> None:
    inp = placement_input([host("h1")])
    out = apply_reservations(inp, [reservation("vm-a", on="gone")])
    assert out.hosts == inp.hosts and out.existing_vms == []


def test_reservations_steer_the_engine() -> None:
    inp = placement_input(
        [host("h1", cpu_capacity=8), host("h2", cpu_capacity=8)],
        request(cpu=4, anti_affinity_group="db", vmid_range="100-101"),
    )
    assert decide(inp).host == "h1"
    first = apply_reservations(
        inp, [reservation("vm-a", on="h1", anti_affinity_group="db", vmid=100)]
    )
    decision = decide(first)
    assert (decision.host, decision.vmid) == ("h2", 101)
    assert decision.rejected == {"h1": "anti_affinity_conflict"}
    both = apply_reservations(first, [reservation("vm-b", on="h2", cpu=8, vmid=101)])
    assert decide(both).summary == "no host fits: 1 anti_affinity_conflict, 1 insufficient_cpu"
