"""Tenants kept apart: a token scoped to one cluster never reaches another cluster's spares.

The matrix runs every `/v1` operation the app serves with the tokens of cluster prod-a
against what belongs to prod-b; a new operation fails the matrix until it has a case.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from temporalio.client import Client

from contracts.warm import WarmPoolSpec
from runtime.clusters import ClusterConfig
from runtime.receivers import ReceiverConfig
from runtime.settings import Settings, TokenGrant
from tests.api.api_helpers import asgi_client, spare_body
from tests.known_secrets import WEBHOOK_SECRET

TOKENS = {
    "ctl-a-5f0c2e9b": TokenGrant(role="upgrade-controller", clusters=["prod-a"]),
    "op-a-7d1e4c0a": TokenGrant(role="operator", clusters=["prod-a"]),
    "ctl-b-93ab61d4": TokenGrant(role="upgrade-controller", clusters=["prod-b"]),
    "op-all-2c8e5b71": TokenGrant(role="operator"),
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


@pytest.fixture
async def scoped(tenants: Settings, client: Client) -> AsyncIterator[Tenants]:
    async with asgi_client(tenants, client) as api:
        # prod-b's spare: started (no worker runs it here; the API's answers need none).
        body = spare_body(cluster="prod-b", inventory="default")
        started = await api.post("/v1/spares", json=body, headers=bearer("ctl-b-93ab61d4"))
        assert started.status_code == 202, started.text
        spare_id = started.json()["spare_id"]
        try:
            yield Tenants(api, spare_id)
        finally:
            await client.get_workflow_handle(spare_id).terminate("test over")


def _cases(b_spare: str) -> dict[tuple[str, str], tuple[str, dict[str, Any] | None, Any]]:
    """(method, path) -> (the path filled in, the body, what prod-a's tokens must get)."""
    prepare = spare_body(cluster="prod-b", inventory="default")
    explain = {"request": {"name": "x", "cpu": 1, "memory_mb": 512}, "inventory": "default"}
    return {
        ("post", "/v1/spares"): ("/v1/spares", prepare, (403, "cluster_forbidden")),
        ("get", "/v1/spares"): ("/v1/spares?cluster=prod-b", None, (200, "no prod-b")),
        ("get", "/v1/spares/{spare_id}"): (f"/v1/spares/{b_spare}", None, (404, "spare_not_found")),
        ("post", "/v1/spares/{spare_id}/release"): (
            f"/v1/spares/{b_spare}/release",
            {},
            (404, "spare_not_found"),
        ),
        ("delete", "/v1/spares/{spare_id}"): (
            f"/v1/spares/{b_spare}",
            None,
            (404, "spare_not_found"),
        ),
        ("post", "/v1/placement/explain"): (
            "/v1/placement/explain",
            explain,
            (422, "not_allowed_for_cluster"),
        ),
        ("get", "/v1/warm-pools"): ("/v1/warm-pools", None, (200, "no prod-b")),
        ("get", "/v1/warm-pools/{name}"): (
            "/v1/warm-pools/warm-b",
            None,
            (404, "warm_pool_not_found"),
        ),
        ("get", "/v1/clusters"): ("/v1/clusters", None, (200, "no prod-b")),
    }


def v1_operations(api: httpx.AsyncClient) -> list[tuple[str, str]]:
    app = api._transport.app  # type: ignore[attr-defined]
    paths: dict[str, dict[str, Any]] = app.openapi()["paths"]
    return sorted(
        (method, path)
        for path, operations in paths.items()
        if path.startswith("/v1/")
        for method in operations
    )


async def test_every_v1_operation_keeps_prod_b_from_prod_a_tokens(scoped: Tenants) -> None:
    cases = _cases(scoped.b_spare)
    operations = v1_operations(scoped.api)
    assert ("get", "/v1/spares/{spare_id}") in operations
    missing = [op for op in operations if op not in cases]
    assert not missing, f"operations without a tenant case (add one to _cases): {missing}"
    for method, template in operations:
        path, body, (status, code) = cases[(method, template)]
        for token in A_TOKENS:
            answer = await scoped.api.request(
                method.upper(), path, json=body, headers=bearer(token)
            )
            where = f"{method.upper()} {path} as {token[:5]}"
            if answer.status_code == 403 and answer.json()["code"] == "forbidden":
                continue  # the role may not call it at all: refused before any lookup
            assert answer.status_code == status, (where, answer.text)
            if code == "no prod-b":
                for of_b in (scoped.b_spare, "warm-b", "prod-b"):
                    assert of_b not in answer.text, where
                continue
            assert answer.json()["code"] == code, where
            if status == 404:
                # Word for word what a name that never existed gets: nothing is revealed.
                never = path.replace(scoped.b_spare, NEVER_SPARE).replace("warm-b", "warm-z")
                other = await scoped.api.request(
                    method.upper(), never, json=body, headers=bearer(token)
                )
                seen = answer.json()["detail"].replace(scoped.b_spare, NEVER_SPARE)
                assert seen.replace("warm-b", "warm-z") == other.json()["detail"], where


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


def test_a_token_scoped_to_an_unregistered_cluster_is_refused(api_settings: Settings) -> None:
    with pytest.raises(ValueError, match=r"api_tokens \(entry 1\)\.clusters: unknown cluster 'x'"):
        Settings.model_validate(
            {
                **api_settings.model_dump(exclude_unset=True),
                "api_tokens": {"tok-1f2e3d4c": {"role": "operator", "clusters": ["x"]}},
            }
        )
