"""A booked host is judged by what can change under a booking: presence, cordon, and room
over the booking's hold with the other reservations counted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from placement.booked_hosts import why_unfit
from placement.holds import Hold
from placement.models import Taint
from placement.reservations import Reservation
from tests.placement.factories import host, placement_input, request

NOW = datetime(2026, 3, 1, tzinfo=UTC)
WINDOW = Hold(start=NOW + timedelta(days=2), end=NOW + timedelta(days=2, hours=4))


def booked(cpu: int = 16, on: str = "h1", hold: Hold = WINDOW, name: str = "b-1") -> Reservation:
    return Reservation.of(request(name=name, cpu=cpu), on, None, name, hold=hold)


def test_a_host_that_still_has_room_for_the_booking_is_fit() -> None:
    inventory = placement_input([host("h1"), host("h2")])
    assert why_unfit(inventory, booked(), [booked()], NOW) is None


def test_a_cordoned_host_is_unfit() -> None:
    inventory = placement_input([host("h1", unschedulable=True)])
    assert why_unfit(inventory, booked(), [], NOW) == "host h1 is cordoned"


def test_a_host_gone_from_the_inventory_is_unfit() -> None:
    inventory = placement_input([host("h2")])
    assert why_unfit(inventory, booked(), [], NOW) == "host h1 is no longer in the inventory"


def test_a_host_whose_capacity_shrank_below_the_booking_is_unfit() -> None:
    inventory = placement_input([host("h1", cpu_capacity=8)])
    why = why_unfit(inventory, booked(cpu=16), [], NOW)
    assert why is not None and why.startswith("host h1 has no room for it from ")
    assert why.endswith(": insufficient_cpu")


def test_room_taken_over_the_hold_is_counted_and_room_taken_only_outside_it_is_not() -> None:
    inventory = placement_input([host("h1", cpu_capacity=24)])
    during = Reservation.of(request(name="o-1", cpu=16), "h1", None, "o-1", hold=Hold())
    before = Reservation.of(
        request(name="o-2", cpu=16), "h1", None, "o-2", hold=Hold(end=WINDOW.start)
    )
    assert why_unfit(inventory, booked(), [booked(), before], NOW) is None
    why = why_unfit(inventory, booked(), [booked(), during], NOW)
    assert why is not None and why.endswith("insufficient_cpu")


@pytest.mark.parametrize(
    "fields",
    [
        {"taints": [Taint(key="dedicated", value="gpu", effect="NoSchedule")]},
        {"pool": "other"},
        {"labels": {"zone": "b"}},
    ],
)
def test_what_the_request_itself_asked_for_is_not_judged_again(fields: dict[str, object]) -> None:
    # The reservation keeps no tolerations, pool or selectors: those held when it was placed.
    inventory = placement_input([host("h1", **fields)])
    assert why_unfit(inventory, booked(), [], NOW) is None
