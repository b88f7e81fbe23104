"""POST /spare/prepare with `count`: several spares, spread by anti-affinity, idempotent."""

from __future__ import annotations

from typing import Any

import httpx

from contracts.ledger import Reservation, ledger_workflow_id
from tests.api.api_helpers import LiveStack, spare_body
from tests.helpers import assert_eventually


async def test_three_spares_land_on_three_hosts_and_the_body_is_idempotent(
    live: LiveStack,
) -> None:
    api = live.api
    body = spare_body(inventory=live.stack.inventory, count=3)
    answer = await api.post("/spare/prepare", json=body)
    assert answer.status_code == 202, answer.text
    ids = [f"spare-lab-{body['request_id']}-{i}" for i in range(3)]
    assert answer.json()["spares"] == ids
    assert answer.json()["spare_id"] == ids[0]

    statuses = [await live.phase_becomes(spare_id, "ready") for spare_id in ids]
    assert len({s["host"] for s in statuses}) == 3

    again = await api.post("/spare/prepare", json=body)
    assert again.status_code == 202
    assert again.json() == answer.json()
    changed = await api.post("/spare/prepare", json={**body, "count": 4})
    assert changed.status_code == 409
    assert "already used by a different request" in changed.json()["detail"]
    client = live.stack.client
    runs = [w async for w in client.list_workflows(f"WorkflowId = '{ids[0][:-2]}-3'")]
    assert runs == []
    for spare_id in ids:
        await client.get_workflow_handle(spare_id).terminate("test over")


async def test_more_spares_than_hosts_is_409_and_nothing_is_reserved_or_started(
    live: LiveStack,
) -> None:
    """Three general hosts take a shared VM (one is cordoned, one dedicated): four cannot all
    be placed, so by default none is."""
    body = spare_body(inventory=live.stack.inventory, count=4, pool="general")
    answer = await live.api.post("/v1/spares", json=body)
    assert answer.status_code == 409, answer.text
    problem = answer.json()
    assert (problem["code"], problem["requested"], problem["placeable"]) == ("no_capacity", 4, 3)
    assert problem["detail"].startswith("3 of 4 spares can be placed now, not all of them: ")
    assert "anti_affinity" in problem["detail"] and '"partial": true' in problem["detail"]
    client = live.stack.client
    runs = [
        w
        async for w in client.list_workflows(
            f"WorkflowId STARTS_WITH 'spare-lab-{body['request_id']}'"
        )
    ]
    assert runs == []
    ledger = client.get_workflow_handle(ledger_workflow_id(live.stack.inventory))
    held = await ledger.query("reservations", result_type=list[Reservation])
    assert not [r for r in held if r.spare_id.startswith(f"spare-lab-{body['request_id']}")]


async def test_with_partial_more_spares_than_hosts_fail_the_extra_one_with_the_reason(
    live: LiveStack,
) -> None:
    """`partial: true` keeps the first behaviour: each member takes a host if one is free."""
    body = spare_body(inventory=live.stack.inventory, count=4, pool="general", partial=True)
    ids = (await live.api.post("/spare/prepare", json=body)).json()["spares"]

    async def settled(spare_id: str) -> dict[str, Any]:
        async def check() -> dict[str, Any]:
            status: dict[str, Any] = (await live.api.get(f"/spare/{spare_id}")).json()
            assert status["phase"] in {"ready", "failed"}, status
            return status

        return await assert_eventually(check, timeout=60)

    statuses = [await settled(spare_id) for spare_id in ids]
    assert sorted(s["phase"] for s in statuses) == ["failed", "ready", "ready", "ready"]
    [failed] = [s for s in statuses if s["phase"] == "failed"]
    assert failed["error"].startswith("no_capacity:")
    assert "anti_affinity" in failed["error"]
    for spare_id in ids:
        handle = live.stack.client.get_workflow_handle(spare_id)
        if spare_id != failed["spare_id"]:
            await handle.terminate("test over")


async def test_count_is_bounded(api: httpx.AsyncClient) -> None:
    too_many = await api.post("/spare/prepare", json=spare_body(count=21))
    assert too_many.status_code == 422
    assert too_many.json()["errors"][0]["loc"] == ["body", "count"]
    zero = await api.post("/spare/prepare", json=spare_body(count=0))
    assert zero.status_code == 422
