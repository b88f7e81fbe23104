"""Tenants kept apart: a token scoped to one cluster never reaches another cluster's spares.

The matrix runs every route the app serves (read from its route table: `/v1`, the deprecated
aliases, the original scheduler's `/schedule`, the probes and the schema pages) with the
tokens of cluster prod-a against what belongs to prod-b; a new route fails the matrix until it
has a case.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from pydantic import SecretStr
from temporalio.client import Client

from api.versions import LEGACY_PATHS
from contracts.warm import WarmPoolSpec
from runtime.clusters import ClusterConfig
from runtime.receivers import ReceiverConfig
from runtime.settings import Settings, TokenGrant
from tests.api.api_helpers import asgi_client, live_stack, spare_body
from tests.helpers import assert_eventually
from tests.known_secrets import WEBHOOK_SECRET

TOKENS = {
    "ctl-a-5f0c2e9b": TokenGrant(role="upgrade-controller", clusters=["prod-a"]),
    "op-a-7d1e4c0a": TokenGrant(role="operator", clusters=["prod-a"]),
    "ctl-b-93ab61d4": TokenGrant(role="upgrade-controller", clusters=["prod-b"]),
    "op-all-2c8e5b71": TokenGrant(role="operator"),
    "ctl-ab-4e7f0a12": TokenGrant(role="upgrade-controller", clusters=["prod-a", "prod-b"]),
}
A_TOKENS = ("ctl-a-5f0c2e9b", "op-a-7d1e4c0a")
NEVER_SPARE = "spare-prod-b-never-was"


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@pytest.fixture
def tenants(api_settings: Settings, tmp_path: Path) -> Settings:
    receiver = ReceiverConfig(url="http://127.0.0.1:9/b", secrets=[SecretStr(WEBHOOK_SECRET)])
    return Settings.model_validate(
        {
            **api_settings.model_dump(exclude_unset=True),
            "receivers": {**api_settings.receivers, "ctrl-b": receiver},
            "clusters": {
                "prod-a": ClusterConfig(receivers=["upgradectrl"], inventories=["only-a"]),
                "prod-b": ClusterConfig(receivers=["ctrl-b"], inventories=["default"]),
            },
            "inventories": {
                **api_settings.inventories,
                "only-a": api_settings.inventories["default"],
            },
            "warm_pools": [
                WarmPoolSpec(name="warm-b", cluster="prod-b", cpu=1, memory_mb=512, size=0),
                WarmPoolSpec(
                    name="warm-a",
                    cluster="prod-a",
                    cpu=1,
                    memory_mb=512,
                    size=0,
                    inventory="only-a",
                ),
            ],
            "api_tokens": {SecretStr(token): grant for token, grant in TOKENS.items()},
        }
    )


@dataclass
class Tenants:
    api: httpx.AsyncClient
    b_spare: str
    # prod-b's task of the original scheduler's API.
    b_task: str


@pytest.fixture
async def scoped(tenants: Settings, client: Client) -> AsyncIterator[Tenants]:
    async with asgi_client(tenants, client) as api:
        # prod-b's spare: started (no worker runs it here; the API's answers need none).
        body = spare_body(cluster="prod-b", inventory="default")
        started = await api.post("/v1/spares", json=body, headers=bearer("ctl-b-93ab61d4"))
        assert started.status_code == 202, started.text
        spare_id = started.json()["spare_id"]
        # Its token acts for prod-b alone: the task is prod-b's without naming it.
        schedule = {"requested_cpu": 1, "requested_memory": 512}
        task = await api.post("/schedule", json=schedule, headers=bearer("ctl-b-93ab61d4"))
        assert task.status_code == 200, task.text
        task_id = task.json()["task_id"]
        try:
            yield Tenants(api, spare_id, task_id)
        finally:
            await client.get_workflow_handle(spare_id).terminate("test over")
            await client.get_workflow_handle(f"schedule-{task_id}").terminate("test over")


@dataclass(frozen=True)
class Case:
    """What prod-a's tokens must get from one route: `path` filled in with prod-b's objects."""

    path: str
    status: int
    # A problem code; "no prod-b": an answer that names nothing of prod-b.
    code: str
    body: dict[str, Any] | None = None


NOTHING_OF_B = "no prod-b"


def _cases(of_b: Tenants) -> dict[tuple[str, str], Case]:
    """(method, route path) -> its case; the deprecated aliases take their `/v1` route's."""
    prepare = spare_body(cluster="prod-b", inventory="default")
    explain = {
        "request": {"name": "x", "cpu": 1, "memory_mb": 512},
        "inventory": "default",
        "cluster": "prod-b",
    }
    schedule = {"requested_cpu": 1, "requested_memory": 512, "cluster": "prod-b"}
    spare, task = f"/v1/spares/{of_b.b_spare}", of_b.b_task
    v1 = {
        ("POST", "/v1/spares"): Case("/v1/spares", 403, "cluster_forbidden", prepare),
        ("GET", "/v1/spares"): Case("/v1/spares?cluster=prod-b", 200, NOTHING_OF_B),
        ("GET", "/v1/spares/{spare_id}"): Case(spare, 404, "spare_not_found"),
        ("POST", "/v1/spares/{spare_id}/release"): Case(
            f"{spare}/release", 404, "spare_not_found", {}
        ),
        ("DELETE", "/v1/spares/{spare_id}"): Case(spare, 404, "spare_not_found"),
        ("PATCH", "/v1/spares/{spare_id}/window"): Case(
            f"{spare}/window", 404, "spare_not_found", {"end": "2030-01-01T00:00:00Z"}
        ),
        ("POST", "/v1/placement/explain"): Case(
            "/v1/placement/explain", 403, "cluster_forbidden", explain
        ),
        ("GET", "/v1/warm-pools"): Case("/v1/warm-pools", 200, NOTHING_OF_B),
        ("GET", "/v1/warm-pools/{name}"): Case("/v1/warm-pools/warm-b", 404, "warm_pool_not_found"),
        ("GET", "/v1/clusters"): Case("/v1/clusters", 200, NOTHING_OF_B),
        ("GET", "/v1/bookings"): Case("/v1/bookings", 200, NOTHING_OF_B),
        # The page carries no data: it asks /v1/bookings with the caller's token.
        ("GET", "/v1/bookings.html"): Case("/v1/bookings.html", 200, NOTHING_OF_B),
    }
    legacy = {
        (method, old): Case(
            v1[(method, new)].path.replace(new.split("{")[0], old.split("{")[0], 1),
            v1[(method, new)].status,
            v1[(method, new)].code,
            v1[(method, new)].body,
        )
        for (method, new), old in LEGACY_PATHS.items()
        if (method, new) in v1
    }
    original = {
        ("POST", "/schedule"): Case("/schedule", 403, "cluster_forbidden", schedule),
        ("GET", "/result/{task_id}"): Case(f"/result/{task}", 404, "task_not_found"),
        ("DELETE", "/schedule/{task_id}"): Case(f"/schedule/{task}", 404, "task_not_found"),
    }
    # Open to anyone, and about no cluster: they must not carry prod-b's objects either.
    open_routes = {
        ("GET", path): Case(path, 200, NOTHING_OF_B)
        for path in ("/healthz", "/readyz", "/openapi.json", "/docs", "/docs/oauth2-redirect")
    }
    open_routes[("GET", "/redoc")] = Case("/redoc", 200, NOTHING_OF_B)
    return {**v1, **legacy, **original, **open_routes}


def served_routes(api: httpx.AsyncClient) -> list[tuple[str, str]]:
    """Every (method, path) in the app's route table, whether the schema lists it or not."""
    app: FastAPI = api._transport.app  # type: ignore[attr-defined]
    routes: set[tuple[str, str]] = set()
    for route in iter_route_contexts(app.routes):
        path = getattr(route, "path", None) or repr(route)
        methods = getattr(route, "methods", None) or {"(not HTTP)"}
        routes.update((method, path) for method in methods if method != "HEAD")
    return sorted(routes)


def _never(path: str, of_b: Tenants) -> str:
    """The same path naming objects that never existed."""
    return (
        path.replace(of_b.b_spare, NEVER_SPARE)
        .replace("warm-b", "warm-z")
        .replace(of_b.b_task, "0" * len(of_b.b_task))
    )


async def test_every_route_keeps_prod_b_from_prod_a_tokens(scoped: Tenants) -> None:
    cases = _cases(scoped)
    routes = served_routes(scoped.api)
    for known in (("GET", "/v1/spares/{spare_id}"), ("GET", "/spare/{spare_id}"), ("GET", "/docs")):
        assert known in routes, f"the route table misses {known}: {routes}"
    missing = [route for route in routes if route not in cases]
    assert not missing, f"routes without a tenant case (add one to _cases): {missing}"
    stale = [route for route in cases if route not in routes]
    assert not stale, f"cases for routes the app no longer serves: {stale}"
    for method, template in routes:
        case = cases[(method, template)]
        for token in A_TOKENS:
            answer = await scoped.api.request(
                method, case.path, json=case.body, headers=bearer(token)
            )
            where = f"{method} {case.path} as {token[:5]}"
            if answer.status_code == 403 and answer.json()["code"] == "forbidden":
                continue  # the role may not call it at all: refused before any lookup
            assert answer.status_code == case.status, (where, answer.text)
            if case.code == NOTHING_OF_B:
                for of_b in (scoped.b_spare, "warm-b", "prod-b", scoped.b_task):
                    assert of_b not in answer.text, (where, of_b)
                continue
            assert answer.json()["code"] == case.code, where
            if case.status == 404:
                # Word for word what a name that never existed gets: nothing is revealed.
                never = _never(case.path, scoped)
                other = await scoped.api.request(
                    method, never, json=case.body, headers=bearer(token)
                )
                assert _never(answer.json()["detail"], scoped) == other.json()["detail"], where


async def test_the_owner_and_an_unscoped_operator_still_see_the_spare(scoped: Tenants) -> None:
    listing = await scoped.api.get(
        "/v1/spares", params={"cluster": "prod-b"}, headers=bearer("op-all-2c8e5b71")
    )
    assert listing.status_code == 200
    assert scoped.b_spare in [s["spare_id"] for s in listing.json()["spares"]]
    pools = await scoped.api.get("/v1/warm-pools", headers=bearer("op-all-2c8e5b71"))
    assert {p["name"] for p in pools.json()["warm_pools"]} == {"warm-a", "warm-b"}
    own = await scoped.api.get("/v1/warm-pools", headers=bearer("op-a-7d1e4c0a"))
    assert [p["name"] for p in own.json()["warm_pools"]] == ["warm-a"]
    # prod-b's controller reaches its spare: past the scope, the next answer is the worker's.
    mine = await scoped.api.get(f"/v1/spares/{scoped.b_spare}", headers=bearer("ctl-b-93ab61d4"))
    assert mine.status_code == 503 and mine.json()["code"] == "temporal_unavailable"
    task = await scoped.api.get(f"/result/{scoped.b_task}", headers=bearer("ctl-b-93ab61d4"))
    assert task.status_code == 503 and task.json()["code"] == "temporal_unavailable"
    every = await scoped.api.get(f"/result/{scoped.b_task}", headers=bearer("op-all-2c8e5b71"))
    assert every.status_code == 503, every.text


async def test_a_scoped_list_shows_only_its_clusters(scoped: Tenants, client: Client) -> None:
    mine = spare_body(cluster="prod-a", inventory="only-a", request_id=f"a{uuid.uuid4().hex[:8]}")
    started = await scoped.api.post("/v1/spares", json=mine, headers=bearer("ctl-a-5f0c2e9b"))
    assert started.status_code == 202, started.text
    a_spare = started.json()["spare_id"]
    try:
        listing = await scoped.api.get("/v1/spares", headers=bearer("op-a-7d1e4c0a"))
        assert listing.status_code == 200
        clusters = {s["cluster"] for s in listing.json()["spares"]}
        assert clusters == {"prod-a"}
        assert a_spare in [s["spare_id"] for s in listing.json()["spares"]]
    finally:
        await client.get_workflow_handle(a_spare).terminate("test over")


@pytest.mark.parametrize(
    ("path", "body", "token", "field", "code"),
    [
        # Which cluster a task is for must be said when the token acts for several.
        (
            "/schedule",
            {"requested_cpu": 1, "requested_memory": 512},
            "ctl-ab-4e7f0a12",
            "cluster",
            "invalid_request",
        ),
        (
            "/schedule",
            {"requested_cpu": 1, "requested_memory": 512, "cluster": "prod-a"},
            "ctl-a-5f0c2e9b",
            "inventory",
            "not_allowed_for_cluster",
        ),
        # Without a cluster, explain reads only an inventory the token's clusters may use.
        (
            "/v1/placement/explain",
            {"request": {"name": "x", "cpu": 1, "memory_mb": 512}, "inventory": "default"},
            "op-a-7d1e4c0a",
            "inventory",
            "not_allowed_for_cluster",
        ),
        (
            "/v1/placement/explain",
            {
                "request": {"name": "x", "cpu": 1, "memory_mb": 512},
                "inventory": "default",
                "cluster": "prod-a",
            },
            "op-a-7d1e4c0a",
            "inventory",
            "not_allowed_for_cluster",
        ),
    ],
)
async def test_what_a_cluster_may_not_use_is_422_naming_the_field(
    scoped: Tenants, path: str, body: dict[str, Any], token: str, field: str, code: str
) -> None:
    answer = await scoped.api.post(path, json=body, headers=bearer(token))
    assert answer.status_code == 422, answer.text
    problem = answer.json()
    assert (problem["code"], [e["field"] for e in problem["errors"]]) == (code, [field])


def test_a_token_scoped_to_an_unregistered_cluster_is_refused(api_settings: Settings) -> None:
    with pytest.raises(ValueError, match=r"api_tokens \(entry 1\)\.clusters: unknown cluster 'x'"):
        Settings.model_validate(
            {
                **api_settings.model_dump(exclude_unset=True),
                "api_tokens": {"tok-1f2e3d4c": {"role": "operator", "clusters": ["x"]}},
            }
        )


async def test_a_refusal_for_room_names_no_spare_of_another_cluster(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    """lab and lab-b share an inventory: lab-b's booking holds a host's room; lab's request
    for that room is refused without naming lab-b's spare (the 409, the refused spare's status
    and its spare.failed event, even to a token of both clusters), lab-b's own is told its
    name. The ledger words the refusal: no API rewrites it."""

    def two_tenants(settings: Settings) -> Settings:
        assert settings.kubeconfig is not None
        one = ClusterConfig(kubeconfig=settings.kubeconfig)
        return settings.model_copy(
            update={
                "kubeconfig": None,
                "clusters": {"lab": one, "lab-b": one},
                "api_tokens": {
                    SecretStr("ctl-lab-61c0d2"): TokenGrant(
                        role="upgrade-controller", clusters=["lab"]
                    ),
                    SecretStr("ctl-lab-b-9e4a7f"): TokenGrant(
                        role="upgrade-controller", clusters=["lab-b"]
                    ),
                    SecretStr("op-all-30d8e1"): TokenGrant(role="operator"),
                },
            }
        )

    day2 = datetime.now(UTC).replace(microsecond=0) + timedelta(days=2)
    window = {"start": day2.isoformat(), "end": (day2 + timedelta(hours=4)).isoformat()}
    pinned = {"annotations": {"node.qemu-scheduler/regex": "^bm-gen-03$"}, "cpu": 64}
    async with live_stack(client, task_queue, tmp_path, two_tenants) as live:

        async def ask(cluster: str, token: str, **fields: Any) -> tuple[str, httpx.Response]:
            body = {**spare_body(cluster=cluster, inventory=live.stack.inventory), **pinned}
            answer = await live.api.post(
                "/v1/spares", json={**body, **fields}, headers=bearer(token)
            )
            return f"spare-{cluster}-{body['request_id']}", answer

        b_spare, held = await ask("lab-b", "ctl-lab-b-9e4a7f", window=window)
        assert held.status_code == 202, held.text
        try:
            _, refused = await ask("lab", "ctl-lab-61c0d2", window=window)
            assert refused.status_code == 409, refused.text
            problem = refused.json()
            assert (problem["code"], problem["held_by"]) == ("no_capacity", [])
            assert b_spare not in refused.text
            assert "the room is held then by 1 spare of another cluster" in problem["detail"]

            # An ordinary spare whose time meets the booking: started, refused, ended. Its own
            # record says the same, to its token and to every token.
            a_spare, refused = await ask("lab", "ctl-lab-61c0d2", ttl_seconds=3 * 24 * 3600)
            assert refused.status_code == 409, refused.text
            assert refused.json()["held_by"] == []
            assert b_spare not in refused.text
            for token in ("ctl-lab-61c0d2", "op-all-30d8e1"):
                status = await live.api.get(f"/v1/spares/{a_spare}", headers=bearer(token))
                assert status.status_code == 200, status.text
                error = status.json()["error"]
                assert error is not None and "1 spare of another cluster" in error
                assert b_spare not in status.text

            async def failed_event() -> dict[str, Any]:
                events = await live.stack.events(a_spare)
                found = [e for e in events if e["type"] == "spare.failed"]
                assert found, "no spare.failed yet"
                data: dict[str, Any] = found[0]["event"]["data"]
                return data

            failed = await assert_eventually(failed_event)
            assert "1 spare of another cluster" in str(failed)
            assert b_spare not in str(failed)

            _, own = await ask("lab-b", "ctl-lab-b-9e4a7f", window=window)
            assert own.status_code == 409, own.text
            assert own.json()["held_by"] == [b_spare]
            assert f"the room is held then by {b_spare}" in own.json()["detail"]
        finally:
            await client.get_workflow_handle(b_spare).terminate("test over")
