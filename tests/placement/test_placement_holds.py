"""Reservations over time: a request over an interval counts only the reservations that hold
room within it, each host by the most they hold at once (PLACEMENT.md, Reservations over
time)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from factories import decide, host, placement_input, request
from pydantic import ValidationError

from placement.holds import Hold, peak
from placement.models import VmShape
from placement.reservations import Reservation, apply_reservations, holding_over

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def hold(start: float | None, end: float | None) -> Hold:
    return Hold(start=None if start is None else at(start), end=None if end is None else at(end))


def reservation(vm: str, held: Hold, on: str = "h1", cpu: int = 4, **fields: object) -> Reservation:
    base = {"spare_id": f"spare-{vm}", "vm_name": vm, "host": on, "hold": held}
    return Reservation.model_validate({"cpu": cpu, "memory_mb": 1024, **base, **fields})


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ((0, 2), (1, 3), True),
        ((0, 2), (2, 3), False),  # half-open: one ends as the next starts
        ((None, 2), (1, 3), True),
        ((None, 1), (1, 3), False),  # an ordinary spare whose TTL ends at the lead start
        ((0, None), (5, 6), True),  # held until freed
        ((None, None), (5, 6), True),
        ((3, 4), (None, 3), False),
    ],
)
def test_holds_overlap_where_both_hold_at_some_instant(
    a: tuple[float | None, float | None], b: tuple[float | None, float | None], overlap: bool
) -> None:
    assert hold(*a).overlaps(hold(*b)) is overlap
    assert hold(*b).overlaps(hold(*a)) is overlap


def test_a_hold_must_end_after_it_starts() -> None:
    with pytest.raises(ValidationError, match="must end after it starts"):
        hold(2, 2)


def test_a_reservation_not_freed_yet_holds_at_least_until_now() -> None:
    late = hold(None, 1)
    assert late.at_least_until(at(0)) == late
    assert late.at_least_until(at(5)) == Hold(start=None, end=None)
    assert late.at_least_until(at(5)).overlaps(hold(5, 6))


def shape(cpu: int, **fields: object) -> VmShape:
    return VmShape.model_validate({"cpu": cpu, "memory_mb": 1024, **fields})


def test_the_peak_is_the_most_held_at_one_instant_not_the_sum() -> None:
    held = [(hold(0, 2), shape(4)), (hold(2, 4), shape(4)), (hold(1, 3), shape(2, gpu=1))]
    most = peak(held, hold(0, 4))
    assert (most.cpu, most.gpu, most.vm_count, most.memory_mb) == (6, 1, 2, 2048)
    # Clipped to the interval: within [3, 4) only the second holds.
    assert (peak(held, hold(3, 4)).cpu, peak(held, hold(0, 1)).cpu) == (4, 4)


def test_devices_peak_by_name() -> None:
    held = [
        (hold(0, 2), shape(1, devices={"x.io/fpga": 1})),
        (hold(1, 3), shape(1, devices={"x.io/fpga": 1, "x.io/nic": 1})),
        (hold(3, 4), shape(1, devices={"x.io/nic": 2})),
    ]
    assert peak(held, hold(None, None)).devices == {"x.io/fpga": 2, "x.io/nic": 2}


def test_bookings_that_follow_each_other_share_the_room() -> None:
    inp = placement_input([host("h1", cpu_capacity=8)], request(cpu=4))
    held = [reservation("b1", hold(10, 20), cpu=4), reservation("b2", hold(20, 30), cpu=4)]
    over = apply_reservations(inp, held, hold(5, 35))
    assert (over.hosts[0].cpu_allocated, over.hosts[0].vm_count) == (4, 1)
    assert decide(over).host == "h1"
    # The plain sum, what a reservation without holds sees, would refuse it.
    assert decide(apply_reservations(inp, held)).host is None


def test_an_overlapping_request_is_refused_and_one_before_the_lead_start_fits() -> None:
    inp = placement_input([host("h1", cpu_capacity=8)], request(cpu=6))
    booked = [reservation("b1", hold(24, 48), cpu=6)]
    assert decide(apply_reservations(inp, booked, hold(None, 30), now=at(0))).host is None
    assert decide(apply_reservations(inp, booked, hold(None, 24), now=at(0))).host == "h1"
    assert holding_over(booked, hold(None, 30)) == booked
    assert holding_over(booked, hold(None, 24)) == []


def test_a_vm_the_inventory_shows_counts_only_while_its_reservation_holds() -> None:
    # The inventory counts the ordinary spare's VM today; its TTL ends before the window.
    existing = [{"name": "vm-a", "host": "h1", "group": "db"}]
    inp = placement_input(
        [host("h1", cpu_capacity=8, cpu_allocated=6, vm_count=1, vm_quota=1)],
        request(cpu=6, anti_affinity_group="db"),
        existing_vms=existing,
    )
    ordinary = [reservation("vm-a", hold(None, 2), cpu=6, anti_affinity_group="db")]
    later = apply_reservations(inp, ordinary, hold(24, 48), now=at(0))
    assert (later.hosts[0].cpu_allocated, later.hosts[0].vm_count, later.existing_vms) == (0, 0, [])
    assert decide(later).host == "h1"
    now = apply_reservations(inp, ordinary, hold(None, 4), now=at(0))
    assert (now.hosts[0].cpu_allocated, now.hosts[0].vm_count) == (6, 1)
    assert [vm.name for vm in now.existing_vms] == ["vm-a"]
    assert decide(now).host is None


def test_vm_ids_stay_used_whatever_the_interval() -> None:
    inp = placement_input([host("h1")], request(vmid_range="100-101"))
    held = [reservation("b1", hold(10, 20), vmid=100)]
    decision = decide(apply_reservations(inp, held, hold(None, 5), now=at(0)))
    assert (decision.host, decision.vmid) == ("h1", 101)


def test_only_the_changed_hosts_are_copied() -> None:
    inp = placement_input([host("h1"), host("h2")])
    out = apply_reservations(inp, [reservation("b1", hold(0, 1), on="h2")], hold(None, None))
    assert out.hosts[0] is inp.hosts[0]
    assert out.hosts[1].cpu_allocated == 4 and inp.hosts[1].cpu_allocated == 0
