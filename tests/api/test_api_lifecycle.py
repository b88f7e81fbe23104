"""A spare's whole life through the HTTP API, on a real worker, lab and receiver."""

from __future__ import annotations

from tests.api.api_helpers import LiveStack, spare_body
from tests.helpers import assert_eventually


async def test_prepare_follow_release_over_http(live: LiveStack) -> None:
    inventory = live.stack.inventory
    body = spare_body(inventory=inventory, receivers=["upgradectrl"])
    accepted = await live.api.post("/v1/spares", json=body)
    assert accepted.status_code == 202, accepted.text
    spare_id = accepted.json()["spare_id"]
    location = accepted.headers["location"]
    assert location == f"/v1/spares/{spare_id}"
    assert (await live.api.get(location)).json()["spare_id"] == spare_id

    ready = await live.phase_becomes(spare_id, "ready")
    assert ready["host"]
    assert ready["workflow_status"] == "running"
    assert ready["ui_url"].endswith(f"/workflows/{spare_id}")
    assert [step["phase"] for step in ready["steps"]][-1] == "ready"

    async def ready_event() -> None:
        assert "spare.ready" in await live.stack.event_types(spare_id)

    await assert_eventually(ready_event)

    released = await live.api.post(f"{location}/release", json={"reason": "upgrade done"})
    assert released.status_code == 202, released.text
    assert released.headers["location"] == location
    assert released.json()["spare_id"] == spare_id
    again = await live.api.post(f"{location}/release", json={"reason": "twice"})
    assert (again.status_code, again.json()["code"]) == (409, "already_released"), again.text
    await live.phase_becomes(spare_id, "released")
    for late in (
        await live.api.post(f"{location}/release", json={}),
        await live.api.delete(location),
    ):
        assert (late.status_code, late.json()["code"]) == (409, "already_released"), late.text

    async def released_event() -> None:
        assert "spare.released" in await live.stack.event_types(spare_id)

    await assert_eventually(released_event)


async def test_release_before_ready_is_409_with_the_reason(live: LiveStack) -> None:
    inventory = live.stack.inventory
    # The lab's GPU host has 4 GPUs, 2 in use: 4 fit the host but not now, so the spare waits.
    body = spare_body(
        inventory=inventory,
        pool="gpu",
        gpu=4,
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}],
        wait_for_capacity=True,
        receivers=[],
    )
    spare_id = (await live.api.post("/spare/prepare", json=body)).json()["spare_id"]
    await live.phase_becomes(spare_id, "waiting_capacity")
    answer = await live.api.post(f"/spare/{spare_id}/release", json={})
    assert (answer.status_code, answer.json()["code"]) == (409, "spare_not_ready")
    assert "waiting_capacity" in answer.json()["detail"]

    cancel = await live.api.delete(f"/spare/{spare_id}")
    assert cancel.status_code == 202
    await live.phase_becomes(spare_id, "cancelled")
