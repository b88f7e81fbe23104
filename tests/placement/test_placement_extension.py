"""A booking's longer window: its host keeps room for it over the extension, or the answer
says until when the room is free, when it is free again and who holds it then."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from factories import host, placement_input, request

from placement.extension import room_to_extend
from placement.holds import Hold
from placement.models import ExistingVm
from placement.reservations import Reservation

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def booking(vm: str, start: float, end: float, on: str = "h1", cpu: int = 24) -> Reservation:
    return Reservation.model_validate(
        {
            "spare_id": f"spare-{vm}",
            "vm_name": vm,
            "host": on,
            "cpu": cpu,
            "memory_mb": 1024,
            "hold": Hold(start=at(start), end=at(end)),
        }
    )


# One host of 32 CPUs: one booking of 24 at a time.
BASE = placement_input([host("h1"), host("h2")], request())
OWN = booking("own", 0, 4)


def test_an_extension_into_free_room_fits() -> None:
    later = booking("later", 6, 8)
    elsewhere = booking("elsewhere", 4, 8, on="h2")
    answer = room_to_extend(BASE, OWN, [OWN, later, elsewhere], at(6), now=at(1))
    assert answer.fits, answer.summary


def test_an_extension_into_a_later_booking_says_until_when_and_when_again() -> None:
    later = booking("later", 6, 8)
    answer = room_to_extend(BASE, OWN, [OWN, later], at(7), now=at(1))
    assert not answer.fits
    assert (answer.free_until, answer.free_again_at) == (at(6), at(8))
    assert answer.held_by == ["spare-later"]
    assert "insufficient_cpu" in answer.summary


def test_bookings_that_follow_each_other_leave_no_room_until_the_last_ends() -> None:
    chain = [booking("b1", 5, 7), booking("b2", 7, 9)]
    answer = room_to_extend(BASE, OWN, [OWN, *chain], at(10), now=at(1))
    assert (answer.free_until, answer.free_again_at) == (at(5), at(9))
    assert answer.held_by == ["spare-b1", "spare-b2"]


def test_a_vm_the_inventory_reports_is_counted_once() -> None:
    # The booking's VM exists: the inventory counts its 24 CPUs now; its reservation says
    # until when. Extending it into free room must not count it twice.
    made = BASE.model_copy(
        update={
            "hosts": [host("h1", cpu_allocated=24, vm_count=1), host("h2")],
            "existing_vms": [ExistingVm(name="own", host="h1")],
        }
    )
    assert room_to_extend(made, OWN, [OWN], at(8), now=at(2)).fits


def test_a_shorter_or_equal_end_needs_no_room_and_a_host_that_left_has_none() -> None:
    assert room_to_extend(BASE, OWN, [OWN, booking("x", 1, 9)], at(3), now=at(1)).fits
    gone = booking("own", 0, 4, on="h9")
    answer = room_to_extend(BASE, gone, [gone], at(6), now=at(1))
    assert not answer.fits and "no longer in the inventory" in answer.summary
