"""POST /v1/spares with a `window`: a booking, answered at once (202 `booked`, or 409
`no_capacity` naming the bookings in the way), its window checked (422 with a stable code)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from tests.api.api_helpers import LiveStack, spare_body
from tests.helpers import assert_eventually

# One host of 96 effective CPUs: one spare of 64 at a time.
PINNED = {"annotations": {"node.qemu-scheduler/regex": "^bm-gen-03$"}, "cpu": 64}


def window(start: datetime, hours: float) -> dict[str, Any]:
    # Not rehearsed: a rehearsal's room on the pinned host is not what these tests count.
    end = start + timedelta(hours=hours)
    return {"start": start.isoformat(), "end": end.isoformat(), "rehearsal": False}


async def booked(live: LiveStack, body: dict[str, Any]) -> httpx.Response:
    return await live.api.post("/v1/spares", json={"inventory": live.stack.inventory, **body})


async def test_a_booking_holds_its_window_against_overlaps_and_cancel_gives_it_back(
    live: LiveStack,
) -> None:
    day2 = datetime.now(UTC).replace(microsecond=0) + timedelta(days=2)
    first = await booked(live, spare_body(window=window(day2, 4), **PINNED))
    assert first.status_code == 202, first.text
    accepted = first.json()
    spare_id = accepted["spare_id"]
    assert accepted["phase"] == "booked"
    # No create-to-Ready time measured yet for this inventory: the default lead (15 minutes).
    assert accepted["booking"]["lead_seconds"] == 900
    assert datetime.fromisoformat(accepted["booking"]["lead_start"]) == day2 - timedelta(minutes=15)
    status = await live.phase_becomes(spare_id, "booked")
    assert status["booking"]["lead_seconds"] == 900 and status["vm"] is None

    overlapping = await booked(
        live, spare_body(window=window(day2 + timedelta(hours=1), 4), **PINNED)
    )
    assert overlapping.status_code == 409, overlapping.text
    problem = overlapping.json()
    assert (problem["code"], problem["held_by"]) == ("no_capacity", [spare_id])
    assert spare_id in problem["detail"]

    # Right after the first window, lead included: the room is free then.
    later = await booked(live, spare_body(window=window(day2 + timedelta(hours=5), 2), **PINNED))
    assert later.status_code == 202, later.text

    cancelled = await live.api.delete(f"/v1/spares/{spare_id}")
    assert cancelled.status_code == 202
    # Asked once the cancel is done: the same body again would find the first answer.
    await live.phase_becomes(spare_id, "cancelled")
    again = spare_body(window=window(day2 + timedelta(hours=1), 3), **PINNED)

    async def room_given_back() -> None:
        answer = await booked(live, again)
        assert answer.status_code == 202, answer.text

    await assert_eventually(room_given_back)
    client = live.stack.client
    for other in (later.json()["spare_id"], f"spare-lab-{again['request_id']}"):
        await client.get_workflow_handle(other).terminate("test over")


async def test_a_window_that_started_ends_first_or_starts_too_far_is_422(
    live: LiveStack,
) -> None:
    now = datetime.now(UTC)
    cases = [
        (window(now - timedelta(minutes=1), 1), "window_started", "window.start"),
        (window(now + timedelta(days=31), 1), "window_too_far", "window.start"),
        (
            {"start": (now + timedelta(days=1)).isoformat(), "end": now.isoformat()},
            "invalid_request",
            "window",
        ),
        (
            {"start": "2030-01-01T00:00:00", "end": "2030-01-02T00:00:00Z"},
            "invalid_request",
            "window.start",
        ),
    ]
    for body_window, code, field in cases:
        answer = await booked(live, spare_body(window=body_window))
        assert answer.status_code == 422, answer.text
        problem = answer.json()
        assert problem["code"] == code, problem
        assert [e["field"] for e in problem["errors"]] == [field], problem


async def window_end(live: LiveStack, spare_id: str, end: datetime) -> httpx.Response:
    return await live.api.patch(f"/v1/spares/{spare_id}/window", json={"end": end.isoformat()})


async def test_a_window_grows_into_free_room_not_into_a_later_booking_and_shrinks_at_once(
    live: LiveStack,
) -> None:
    day2 = datetime.now(UTC).replace(microsecond=0) + timedelta(days=2)
    first = await booked(live, spare_body(window=window(day2, 4), **PINNED))
    assert first.status_code == 202, first.text
    spare_id = first.json()["spare_id"]
    later = await booked(live, spare_body(window=window(day2 + timedelta(hours=6), 2), **PINNED))
    assert later.status_code == 202, later.text
    later_id = later.json()["spare_id"]
    later_start = datetime.fromisoformat(later.json()["booking"]["lead_start"])
    await live.phase_becomes(spare_id, "booked")

    into_later = await window_end(live, spare_id, day2 + timedelta(hours=7))
    assert into_later.status_code == 409, into_later.text
    problem = into_later.json()
    assert (problem["code"], problem["held_by"]) == ("no_capacity", [later_id])
    assert datetime.fromisoformat(problem["free_until"]) == later_start
    assert datetime.fromisoformat(problem["free_again_at"]) == day2 + timedelta(hours=8)
    status = (await live.api.get(f"/v1/spares/{spare_id}")).json()
    assert datetime.fromisoformat(status["booking"]["window"]["end"]) == day2 + timedelta(hours=4)

    up_to_later = await window_end(live, spare_id, later_start)
    assert up_to_later.status_code == 200, up_to_later.text
    assert datetime.fromisoformat(up_to_later.json()["window"]["end"]) == later_start

    # Asked again once the later booking is cancelled, the same end is taken.
    assert (await live.api.delete(f"/v1/spares/{later_id}")).status_code == 202

    async def taken_once_free() -> None:
        again = await window_end(live, spare_id, day2 + timedelta(hours=7))
        assert again.status_code == 200, again.text

    await assert_eventually(taken_once_free)

    shorter = await window_end(live, spare_id, day2 + timedelta(hours=1))
    assert shorter.status_code == 200, shorter.text
    # The room after the new end is free at once: a booking there is taken.
    after = await booked(live, spare_body(window=window(day2 + timedelta(hours=2), 2), **PINNED))
    assert after.status_code == 202, after.text

    now = datetime.now(UTC)
    for end, code in [
        (now - timedelta(minutes=1), "window_end_passed"),
        (day2, "invalid_request"),
        (now + timedelta(days=31), "window_too_far"),
    ]:
        refused = await window_end(live, spare_id, end)
        assert refused.status_code == 422, refused.text
        assert refused.json()["code"] == code
        assert [e["field"] for e in refused.json()["errors"]] == ["end"]

    client = live.stack.client
    for other in (spare_id, after.json()["spare_id"]):
        await client.get_workflow_handle(other).terminate("test over")


async def test_an_ordinary_spare_over_a_booking_is_409_naming_it_one_over_before_takes_it(
    live: LiveStack,
) -> None:
    day2 = datetime.now(UTC).replace(microsecond=0) + timedelta(days=2)
    booking = await booked(live, spare_body(window=window(day2, 4), **PINNED))
    assert booking.status_code == 202, booking.text
    booking_id = booking.json()["spare_id"]

    # Held until its TTL can have ended, three days on: across the booking's window.
    overlapping = await booked(live, spare_body(ttl_seconds=3 * 24 * 3600, **PINNED))
    assert overlapping.status_code == 409, overlapping.text
    problem = overlapping.json()
    assert (problem["code"], problem["held_by"]) == ("no_capacity", [booking_id])
    assert booking_id in problem["detail"]

    # Held for an hour (and its creation, readiness and drain): over long before the lead start.
    before = await booked(live, spare_body(ttl_seconds=3600, **PINNED))
    assert before.status_code == 202, before.text
    status = await live.phase_becomes(before.json()["spare_id"], "ready", timeout=120)
    assert status["host"] == "bm-gen-03"

    client = live.stack.client
    for spare_id in (booking_id, before.json()["spare_id"]):
        await client.get_workflow_handle(spare_id).terminate("test over")


async def test_a_request_posing_as_a_bookings_rehearsal_is_422(live: LiveStack) -> None:
    begins = datetime.now(UTC) + timedelta(days=1)
    answer = await booked(
        live, spare_body(window=window(begins, 1), rehearsal_of="spare-lab-someone")
    )
    assert answer.status_code == 422, answer.text
    problem = answer.json()
    assert problem["code"] == "invalid_request"
    assert [e["field"] for e in problem["errors"]] == ["rehearsal_of"]
