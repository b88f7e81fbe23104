"""GET /v1/bookings: each host's bookings over `[from, to)` from the ledgers, with cluster and
phase from visibility, only the caller's clusters'; bad times are 422 naming the parameter."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from temporalio.client import Client

from api import inventory_view
from api.bookings import booked_within
from contracts.ledger import (
    INVENTORY_LEDGER,
    Hold,
    LedgerState,
    Reservation,
    ledger_workflow_id,
)
from runtime.clusters import ClusterConfig
from runtime.settings import Settings, TokenGrant
from tests.api.api_helpers import LiveStack, live_stack, spare_body
from tests.helpers import assert_eventually

OTHER = "lab-x"
TOKENS = {
    "op-all-61c0f2aa": TokenGrant(role="operator"),
    "ctl-lab-0b9e3d71": TokenGrant(role="upgrade-controller", clusters=["lab"]),
    "ctl-x-a84f2c06": TokenGrant(role="upgrade-controller", clusters=[OTHER]),
}


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def on_host(host: str) -> dict[str, Any]:
    return {"annotations": {"node.qemu-scheduler/regex": f"^{host}$"}}


def _two_clusters_and_tokens(settings: Settings) -> Settings:
    lab = ClusterConfig(kubeconfig=settings.kubeconfig)
    return settings.model_copy(
        update={
            "kubeconfig": None,
            "clusters": {"lab": lab, OTHER: lab},
            "api_tokens": {SecretStr(token): grant for token, grant in TOKENS.items()},
        }
    )


@pytest.fixture
async def tenants_live(client: Client, task_queue: str, tmp_path: Path) -> AsyncIterator[LiveStack]:
    async with live_stack(client, task_queue, tmp_path, _two_clusters_and_tokens) as stack:
        yield stack


async def book(live: LiveStack, token: str, cluster: str, host: str, start: datetime) -> str:
    body = spare_body(
        cluster=cluster,
        inventory=live.stack.inventory,
        window={"start": start.isoformat(), "end": (start + timedelta(hours=3)).isoformat()},
        **on_host(host),
    )
    answer = await live.api.post("/v1/spares", json=body, headers=bearer(token))
    assert answer.status_code == 202, answer.text
    assert answer.json()["phase"] == "booked"
    spare_id: str = answer.json()["spare_id"]
    return spare_id


def by_spare(view: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    return {b["spare_id"]: (h["host"], b) for h in view["hosts"] for b in h["bookings"]}


async def test_each_host_shows_its_bookings_and_a_scoped_token_only_its_clusters(
    tenants_live: LiveStack,
) -> None:
    live = tenants_live
    day2 = datetime.now(UTC).replace(microsecond=0) + timedelta(days=2)
    mine = await book(live, "ctl-lab-0b9e3d71", "lab", "bm-gen-03", day2)
    theirs = await book(live, "ctl-x-a84f2c06", OTHER, "bm-gen-02", day2 + timedelta(hours=1))

    async def everything() -> dict[str, Any]:
        answer = await live.api.get("/v1/bookings", headers=bearer("op-all-61c0f2aa"))
        assert answer.status_code == 200, answer.text
        found = by_spare(answer.json())
        assert {found[s][1]["phase"] for s in (mine, theirs) if s in found} == {"booked"}, found
        return found

    seen = await assert_eventually(everything, timeout=30)
    host, booking = seen[mine]
    assert (host, booking["cluster"]) == ("bm-gen-03", "lab")
    assert datetime.fromisoformat(booking["window_start"]) == day2
    assert datetime.fromisoformat(booking["window_end"]) == day2 + timedelta(hours=3)
    # No create-to-Ready time measured in this inventory yet: the default lead, 15 minutes.
    assert datetime.fromisoformat(booking["lead_start"]) == day2 - timedelta(minutes=15)
    assert (seen[theirs][0], seen[theirs][1]["cluster"]) == ("bm-gen-02", OTHER)

    scoped = await live.api.get("/v1/bookings", headers=bearer("ctl-lab-0b9e3d71"))
    assert scoped.status_code == 200, scoped.text
    assert mine in by_spare(scoped.json())
    assert theirs not in scoped.text and OTHER not in scoped.text

    # The span: one that ends before the first lead start, one from the second window's end.
    for params in (
        {"to": (day2 - timedelta(minutes=16)).isoformat()},
        {"from": (day2 + timedelta(hours=4)).isoformat()},
    ):
        outside = await live.api.get(
            "/v1/bookings", params=params, headers=bearer("op-all-61c0f2aa")
        )
        assert outside.status_code == 200, outside.text
        assert {mine, theirs}.isdisjoint(by_spare(outside.json())), params
    within = await live.api.get(
        "/v1/bookings",
        params={"from": day2.isoformat(), "to": (day2 + timedelta(minutes=50)).isoformat()},
        headers=bearer("op-all-61c0f2aa"),
    )
    assert {mine, theirs} <= set(by_spare(within.json())), within.text

    # A spare that ended without giving its room back (terminated): the ledger still holds
    # the room, and the view says whose workflow ended.
    assert booking["workflow_status"] == "running"
    await live.stack.client.get_workflow_handle(theirs).terminate("gone without a release")

    async def ended() -> None:
        answer = await live.api.get("/v1/bookings", headers=bearer("op-all-61c0f2aa"))
        assert by_spare(answer.json())[theirs][1]["workflow_status"] == "terminated"

    await assert_eventually(ended, timeout=30)
    await live.stack.client.get_workflow_handle(mine).terminate("test over")


async def test_bad_times_are_422_naming_the_parameter(api: httpx.AsyncClient) -> None:
    now = datetime.now(UTC)
    cases = [
        ({"from": "tomorrow"}, "from", "invalid_request"),
        ({"from": "2030-01-01T00:00:00"}, "from", "invalid_request"),
        ({"to": "1700000000"}, "to", "invalid_request"),
        ({"from": "2030-02-30T00:00:00Z"}, "from", "invalid_request"),
        ({"from": now.isoformat(), "to": now.isoformat()}, "to", "invalid_request"),
        (
            {"from": now.isoformat(), "to": (now + timedelta(days=62)).isoformat()},
            "to",
            "range_too_long",
        ),
        ({"from": "x" * 41}, "from", "invalid_request"),
    ]
    for params, field, code in cases:
        answer = await api.get("/v1/bookings", params=params)
        assert answer.status_code == 422, (params, answer.text)
        problem = answer.json()
        assert problem["code"] == code, (params, problem)
        assert [(e["field"], e["loc"][0]) for e in problem["errors"]] == [(field, "query")], problem


def test_only_bookings_whose_hold_meets_the_span_are_listed() -> None:
    t0 = datetime(2030, 1, 1, tzinfo=UTC)
    hour = timedelta(hours=1)

    def held(spare_id: str, hold: Hold) -> Reservation:
        shape = {"cpu": 1, "memory_mb": 512}
        return Reservation(spare_id=spare_id, vm_name=spare_id, host="h", hold=hold, **shape)

    reservations = [
        held("ordinary", Hold(end=t0 + 5 * hour)),
        held("warm", Hold()),
        held("before", Hold(start=t0 - 3 * hour, end=t0, window_start=t0 - 2 * hour)),
        held("across", Hold(start=t0 - hour, end=t0 + hour, window_start=t0)),
        held("inside", Hold(start=t0 + hour, end=t0 + 2 * hour, window_start=t0 + hour)),
        held("after", Hold(start=t0 + 3 * hour, end=t0 + 4 * hour, window_start=t0 + 3 * hour)),
    ]
    found = booked_within(reservations, t0, t0 + 3 * hour)
    assert [r.spare_id for r in found] == ["across", "inside"]


async def test_a_ledger_no_worker_answers_for_leaves_out_only_its_inventory_and_says_so(
    client: Client, task_queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Shorter than the default, so that each read gives up on the far ledger quickly.
    monkeypatch.setattr(inventory_view, "LEDGER_QUERY_TIMEOUT", timedelta(seconds=1))
    far = f"far-{uuid.uuid4().hex[:8]}"

    def with_a_far_inventory(settings: Settings) -> Settings:
        settings = _two_clusters_and_tokens(settings)
        (own,) = settings.inventories
        # OTHER may use the stack's own inventory only: it never hears of the far one.
        other = ClusterConfig(kubeconfig=settings.clusters["lab"].kubeconfig, inventories=[own])
        return settings.model_copy(
            update={
                "inventories": {**settings.inventories, far: settings.inventories[own]},
                "clusters": {**settings.clusters, OTHER: other},
            }
        )

    async with live_stack(client, task_queue, tmp_path, with_a_far_inventory) as live:
        # The far inventory's ledger runs on a task queue no worker polls.
        await client.start_workflow(
            INVENTORY_LEDGER,
            LedgerState(inventory=far),
            id=ledger_workflow_id(far),
            task_queue=f"nobody-{far}",
        )
        day2 = datetime.now(UTC).replace(microsecond=0) + timedelta(days=2)
        mine = await book(live, "ctl-lab-0b9e3d71", "lab", "bm-gen-03", day2)

        async def listed(token: str) -> dict[str, Any]:
            answer = await live.api.get("/v1/bookings", headers=bearer(token))
            assert answer.status_code == 200, answer.text
            view: dict[str, Any] = answer.json()
            assert mine in by_spare(view) or token == "ctl-x-a84f2c06", view
            return view

        everything = await assert_eventually(lambda: listed("op-all-61c0f2aa"), timeout=30)
        (missing,) = everything["unanswered"]
        assert missing["inventory"] == far
        assert "is one running?" in missing["detail"]
        scoped = await listed("ctl-lab-0b9e3d71")
        assert [u["inventory"] for u in scoped["unanswered"]] == [far]
        # A tenant whose clusters may not use the far inventory is not told of it.
        theirs = await listed("ctl-x-a84f2c06")
        assert theirs["unanswered"] == [] and far not in str(theirs)

        await client.get_workflow_handle(ledger_workflow_id(far)).terminate("test over")
        await live.stack.client.get_workflow_handle(mine).terminate("test over")
