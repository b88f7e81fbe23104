"""The lab Kubernetes API, driven by the real lightkube client and by raw HTTP for wire details."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from lightkube import ApiError, AsyncClient, KubeConfig
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Node, Pod
from lightkube.types import PatchType

from lab.kube_api import KubeApiServer
from lab.kube_pods import SHUTDOWN_ANNOTATION
from lab.kube_store import Obj
from lab.kube_testing import KubeLab, eventually, kube_lab


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[KubeLab]:
    async with kube_lab(tmp_path) as running:
        yield running


@pytest.fixture
async def kube(lab: KubeLab) -> AsyncIterator[AsyncClient]:
    client = AsyncClient(config=KubeConfig.from_file(lab.kubeconfig))
    yield client
    await client.close()


@pytest.fixture
async def raw(lab: KubeLab) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": f"Bearer {lab.api.token}"}
    async with httpx.AsyncClient(
        base_url=lab.api.url,
        headers=headers,
        timeout=10,
        verify=lab.api.certificates.client_context(),
    ) as client:
        yield client


def node(name: str, **labels: str) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels=labels or None))


def pod(namespace: str, name: str, node_name: str, **labels: str) -> Pod:
    return Pod.from_dict(  # type: ignore[return-value]
        {
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "lab/c"}]},
        }
    )


async def test_create_get_list_with_label_and_field_selectors(kube: AsyncClient) -> None:
    created = await kube.create(node("n1", pool="a"))
    await kube.create(node("n2", pool="b"))
    assert created.metadata and created.metadata.resourceVersion and created.metadata.uid

    fetched = await kube.get(Node, "n1")
    assert fetched.metadata and fetched.metadata.labels == {"pool": "a"}
    by_label = [n.metadata.name async for n in kube.list(Node, labels={"pool": "b"}) if n.metadata]
    by_field = [
        n.metadata.name async for n in kube.list(Node, fields={"metadata.name": "n1"}) if n.metadata
    ]
    assert (by_label, by_field) == (["n2"], ["n1"])


async def test_duplicate_create_is_409_and_missing_get_is_404(kube: AsyncClient) -> None:
    await kube.create(node("n1"))
    with pytest.raises(ApiError) as dup:
        await kube.create(node("n1"))
    with pytest.raises(ApiError) as missing:
        await kube.get(Node, "nope")
    assert (dup.value.status.code, dup.value.status.reason) == (409, "AlreadyExists")
    assert (missing.value.status.code, missing.value.status.reason) == (404, "NotFound")


async def test_error_is_a_status_with_exact_json_content_type(raw: httpx.AsyncClient) -> None:
    response = await raw.get("/api/v1/nodes/nope")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'nodes "nope" not found',
        "reason": "NotFound",
        "code": 404,
    }


async def test_requests_without_the_kubeconfig_token_are_unauthorized(lab: KubeLab) -> None:
    verify = lab.api.certificates.client_context()
    async with httpx.AsyncClient(base_url=lab.api.url, verify=verify) as anonymous:
        response = await anonymous.get("/api/v1/nodes")
    assert (response.status_code, response.json()["reason"]) == (401, "Unauthorized")


async def test_merge_patch_sets_and_removes_fields(kube: AsyncClient) -> None:
    await kube.create(node("n1", keep="1", drop="1"))
    patched = await kube.patch(
        Node,
        "n1",
        {"metadata": {"labels": {"drop": None, "new": "2"}}, "spec": {"unschedulable": True}},
        patch_type=PatchType.MERGE,
    )
    assert patched.metadata and patched.metadata.labels == {"keep": "1", "new": "2"}
    assert patched.spec and patched.spec.unschedulable is True


async def test_strategic_patch_replaces_taint_lists_wholesale(kube: AsyncClient) -> None:
    await kube.create(node("n1"))
    taints = [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoSchedule"}]
    await kube.patch(Node, "n1", {"spec": {"taints": taints}}, patch_type=PatchType.STRATEGIC)
    patched = await kube.patch(
        Node, "n1", {"spec": {"taints": [taints[1]]}}, patch_type=PatchType.STRATEGIC
    )
    assert patched.spec and [t.key for t in patched.spec.taints or []] == ["b"]


async def test_json_patch_applies_operations_and_rejects_a_failed_test(kube: AsyncClient) -> None:
    await kube.create(node("n1", a="1"))
    ops = [
        {"op": "add", "path": "/metadata/labels/b", "value": "2"},
        {"op": "remove", "path": "/metadata/labels/a"},
    ]
    patched = await kube.patch(Node, "n1", ops, patch_type=PatchType.JSON)
    assert patched.metadata and patched.metadata.labels == {"b": "2"}
    with pytest.raises(ApiError) as failed:
        await kube.patch(
            Node,
            "n1",
            [{"op": "test", "path": "/metadata/labels/b", "value": "9"}],
            patch_type=PatchType.JSON,
        )
    assert failed.value.status.code == 422


async def test_put_with_a_stale_resource_version_conflicts(kube: AsyncClient) -> None:
    first = await kube.create(node("n1"))
    await kube.patch(Node, "n1", {"metadata": {"labels": {"x": "1"}}}, patch_type=PatchType.MERGE)
    with pytest.raises(ApiError) as stale:
        await kube.replace(first)
    assert (stale.value.status.code, stale.value.status.reason) == (409, "Conflict")


async def test_patches_that_overlap_both_apply(lab: KubeLab, kube: AsyncClient) -> None:
    # kube-apiserver applies a patch to the object as it is when the patch lands: a patch whose
    # body is still arriving while another one lands is not refused with a 409. Driven through
    # the app itself, so the first patch is known to be inside its handler, reading its body.
    await kube.create(node("n1"))
    reading, release = asyncio.Event(), asyncio.Event()

    async def slow_body() -> AsyncIterator[bytes]:
        yield b'{"metadata": {"labels": '
        reading.set()  # the handler asks for the rest: it has looked the object up
        await release.wait()
        yield b'{"first": "1"}}}'

    headers = {
        "Authorization": f"Bearer {lab.api.token}",
        "Content-Type": "application/merge-patch+json",
    }
    transport = httpx.ASGITransport(app=lab.api.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://lab") as app:
        first = asyncio.create_task(
            app.patch("/api/v1/nodes/n1", content=slow_body(), headers=headers)
        )
        await reading.wait()
        second = {"metadata": {"labels": {"second": "2"}}}
        assert (await app.patch("/api/v1/nodes/n1", json=second, headers=headers)).is_success
        release.set()
        assert (await first).status_code == 200
        patched = (await kube.get(Node, "n1")).metadata
        assert patched is not None and patched.labels == {"first": "1", "second": "2"}

        # A patch that names a resourceVersion makes it a precondition.
        stale = {"metadata": {"resourceVersion": "1", "labels": {"third": "3"}}}
        refused = await app.patch("/api/v1/nodes/n1", json=stale, headers=headers)
        assert (refused.status_code, refused.json()["reason"]) == (409, "Conflict")


async def test_delete_returns_the_object(kube: AsyncClient, raw: httpx.AsyncClient) -> None:
    await kube.create(node("n1", pool="a"))
    response = await raw.delete("/api/v1/nodes/n1")
    assert response.status_code == 200
    assert response.json()["metadata"]["labels"] == {"pool": "a"}
    assert [n async for n in kube.list(Node)] == []


async def collect(
    stream: Any, count: int, after_first: Callable[[], Awaitable[None]] | None = None
) -> list[tuple[str, str]]:
    """Read `count` events; `after_first` runs once the watch is known to be established."""
    events: list[tuple[str, str]] = []
    async with asyncio.timeout(10), contextlib.aclosing(stream):
        async for kind, obj in stream:
            events.append((kind, obj.metadata.name))
            if len(events) == 1 and after_first is not None:
                await after_first()
            if len(events) == count:
                break
    return events


async def test_watch_without_version_starts_with_added_for_existing(kube: AsyncClient) -> None:
    await kube.create(node("old"))

    async def churn() -> None:
        await kube.create(node("new"))
        merge = PatchType.MERGE
        await kube.patch(Node, "new", {"spec": {"unschedulable": True}}, patch_type=merge)
        await kube.delete(Node, "new")

    assert await collect(kube.watch(Node), 4, after_first=churn) == [
        ("ADDED", "old"),
        ("ADDED", "new"),
        ("MODIFIED", "new"),
        ("DELETED", "new"),
    ]


async def test_watch_from_a_version_replays_only_later_events(kube: AsyncClient) -> None:
    await kube.create(node("before"))
    listing = kube.list(Node)
    assert [n async for n in listing]
    await kube.create(node("after"))
    stream = kube.watch(Node, resource_version=listing.resourceVersion)
    assert await collect(stream, 1) == [("ADDED", "after")]


async def test_watch_true_capitalised_streams_ndjson_and_honours_timeout(
    kube: AsyncClient, raw: httpx.AsyncClient
) -> None:
    await kube.create(node("n1"))
    params = {"watch": "True", "timeoutSeconds": "1"}
    async with raw.stream("GET", "/api/v1/nodes", params=params) as response:
        assert response.headers["content-type"] == "application/json"
        lines = [json.loads(line) async for line in response.aiter_lines() if line]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines] == [("ADDED", "n1")]


async def test_watch_from_a_compacted_version_gets_410(
    lab: KubeLab, kube: AsyncClient, raw: httpx.AsyncClient
) -> None:
    created = await kube.create(node("n1"))
    await kube.create(node("n2"))
    lab.api.compact_history()
    assert created.metadata and created.metadata.resourceVersion
    params = {"watch": "1", "resourceVersion": str(int(created.metadata.resourceVersion) - 1)}
    async with raw.stream("GET", "/api/v1/nodes", params=params) as response:
        lines = [json.loads(line) async for line in response.aiter_lines() if line]
    assert [(e["type"], e["object"]["code"], e["object"]["reason"]) for e in lines] == [
        ("ERROR", 410, "Expired")
    ]


async def test_drop_watches_cuts_open_streams(lab: KubeLab, raw: httpx.AsyncClient) -> None:
    async with raw.stream("GET", "/api/v1/nodes", params={"watch": "true"}) as response:
        assert response.status_code == 200
        lab.api.drop_watches()
        with pytest.raises(httpx.RemoteProtocolError):
            async for _ in response.aiter_lines():
                pass


async def test_fail_next_injects_server_errors(lab: KubeLab, kube: AsyncClient) -> None:
    lab.api.fail_next(2, status=503)
    for _ in range(2):
        with pytest.raises(ApiError) as failed:
            await kube.get(Node, "x")
        assert (failed.value.status.code, failed.value.status.reason) == (503, "ServiceUnavailable")
    with pytest.raises(ApiError) as healed:
        await kube.get(Node, "x")
    assert healed.value.status.code == 404


async def test_pods_by_node_across_namespaces(kube: AsyncClient) -> None:
    await kube.create(pod("a", "p1", "n1"))
    await kube.create(pod("b", "p2", "n1"))
    await kube.create(pod("a", "p3", "n2"))
    on_n1 = [p async for p in kube.list(Pod, namespace="*", fields={"spec.nodeName": "n1"})]
    in_a = [p async for p in kube.list(Pod, namespace="a")]
    assert sorted(f"{p.metadata.namespace}/{p.metadata.name}" for p in on_n1 if p.metadata) == [
        "a/p1",
        "b/p2",
    ]
    assert sorted(str(p.metadata.name) for p in in_a if p.metadata) == ["p1", "p3"]


async def test_eviction_deletes_the_pod_with_201(kube: AsyncClient, raw: httpx.AsyncClient) -> None:
    await kube.create(pod("default", "p1", "n1"))
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p1"}}
    response = await raw.post("/api/v1/namespaces/default/pods/p1/eviction", json=body)
    assert response.status_code == 201
    assert [p async for p in kube.list(Pod, namespace="default")] == []


def running_pod(namespace: str, name: str, node_name: str, **labels: str) -> Obj:
    """A Running, Ready pod (what a budget counts as healthy)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "lab/c"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


async def budget(raw: httpx.AsyncClient, name: str, **spec: Any) -> None:
    body = {
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }
    response = await raw.post(f"{PDBS}/namespaces/default/poddisruptionbudgets", json=body)
    assert response.status_code == 201, response.text


PDBS = "/apis/policy/v1"


async def test_a_budget_reports_disruptions_allowed_from_its_healthy_pods(
    raw: httpx.AsyncClient,
) -> None:
    for i in range(3):
        await raw.post(
            "/api/v1/namespaces/default/pods", json=running_pod("default", f"w{i}", "n1", app="web")
        )
    await budget(raw, "web-min2", minAvailable=2)
    status = (await raw.get(f"{PDBS}/namespaces/default/poddisruptionbudgets/web-min2")).json()[
        "status"
    ]
    assert (status["expectedPods"], status["currentHealthy"], status["desiredHealthy"]) == (3, 3, 2)
    assert status["disruptionsAllowed"] == 1


async def test_an_eviction_a_budget_forbids_is_429_naming_the_budget(
    kube: AsyncClient, raw: httpx.AsyncClient
) -> None:
    await raw.post(
        "/api/v1/namespaces/default/pods", json=running_pod("default", "w0", "n1", app="web")
    )
    await budget(raw, "web-pdb", minAvailable=1)
    response = await raw.post("/api/v1/namespaces/default/pods/w0/eviction", json={})
    assert response.status_code == 429
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert (body["reason"], body["message"]) == (
        "TooManyRequests",
        "Cannot evict pod as it would violate the pod's disruption budget.",
    )
    assert body["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget web-pdb needs 1 healthy pods and has 1 currently",
        }
    ]
    with pytest.raises(ApiError) as refused:
        await kube.create(
            Pod.Eviction(metadata=ObjectMeta(name="w0", namespace="default")),
            "w0",
            namespace="default",
        )
    assert refused.value.status.code == 429
    assert len([p async for p in kube.list(Pod, namespace="default")]) == 1


async def test_block_eviction_is_a_budget_on_that_one_pod(
    lab: KubeLab, raw: httpx.AsyncClient
) -> None:
    await lab.kubelet.vm_started("vm1", "10.0.0.5", {})
    lab.api.block_eviction("default", "workload-vm1")
    refused = await raw.post("/api/v1/namespaces/default/pods/workload-vm1/eviction", json={})
    assert refused.status_code == 429
    assert "lab-block-workload-vm1" in refused.json()["details"]["causes"][0]["message"]
    lab.api.unblock_eviction("default", "workload-vm1")
    accepted = await raw.post("/api/v1/namespaces/default/pods/workload-vm1/eviction", json={})
    assert accepted.status_code == 201


async def test_an_evicted_pod_terminates_through_its_grace_period(
    lab: KubeLab, raw: httpx.AsyncClient
) -> None:
    slow = running_pod("default", "slow", "n1")
    slow["metadata"]["annotations"] = {SHUTDOWN_ANNOTATION: "60"}
    slow["spec"]["terminationGracePeriodSeconds"] = 1
    await raw.post("/api/v1/namespaces/default/pods", json=slow)
    assert (
        await raw.post("/api/v1/namespaces/default/pods/slow/eviction", json={})
    ).status_code == 201
    terminating = (await raw.get("/api/v1/namespaces/default/pods/slow")).json()
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 1
    assert terminating["metadata"]["deletionTimestamp"]

    async def gone() -> bool:
        return (await raw.get("/api/v1/namespaces/default/pods/slow")).status_code == 404

    await eventually(gone, timeout=10)


async def test_delete_with_grace_zero_removes_the_pod_at_once(raw: httpx.AsyncClient) -> None:
    slow = running_pod("default", "slow", "n1")
    slow["metadata"]["annotations"] = {SHUTDOWN_ANNOTATION: "60"}
    await raw.post("/api/v1/namespaces/default/pods", json=slow)
    deleted = await raw.delete(
        "/api/v1/namespaces/default/pods/slow", params={"gracePeriodSeconds": "0"}
    )
    assert deleted.status_code == 200
    assert (await raw.get("/api/v1/namespaces/default/pods/slow")).status_code == 404


def test_server_runs_in_a_thread_for_synchronous_callers(tmp_path: Path) -> None:
    server = KubeApiServer()
    url = server.start_in_thread()
    try:
        headers = {"Authorization": f"Bearer {server.token}"}
        verify = server.certificates.client_context()
        with httpx.Client(base_url=url, headers=headers, verify=verify) as client:
            created = client.post("/api/v1/nodes", json={"metadata": {"name": "n1"}})
            listed = client.get("/api/v1/nodes").json()
        assert created.status_code == 201
        assert listed["kind"] == "NodeList"
        assert [i["metadata"]["name"] for i in listed["items"]] == ["n1"]
        assert int(listed["metadata"]["resourceVersion"]) >= int(
            created.json()["metadata"]["resourceVersion"]
        )
    finally:
        server.stop_thread()


async def test_discovery_endpoints_answer(raw: httpx.AsyncClient) -> None:
    assert (await raw.get("/version")).json()["major"] == "1"
    assert (await raw.get("/api")).json()["versions"] == ["v1"]
    names = {r["name"] for r in (await raw.get("/api/v1")).json()["resources"]}
    assert {"nodes", "pods", "pods/eviction", "namespaces", "events", "secrets"} <= names


async def test_every_advertised_group_version_lists_its_resources(raw: httpx.AsyncClient) -> None:
    groups = (await raw.get("/apis")).json()["groups"]
    served: dict[str, set[str]] = {}
    for group in groups:
        for version in group["versions"]:
            listing = await raw.get(f"/apis/{version['groupVersion']}")
            assert listing.status_code == 200, version
            served[version["groupVersion"]] = {r["name"] for r in listing.json()["resources"]}
    assert served["policy/v1"] == {"poddisruptionbudgets", "poddisruptionbudgets/status"}
    assert "leases" in served["coordination.k8s.io/v1"]
    assert {"daemonsets", "replicasets"} <= served["apps/v1"]
    assert (await raw.get("/apis/nope/v1")).status_code == 404


async def test_health_endpoints_answer_without_a_token(lab: KubeLab) -> None:
    verify = lab.api.certificates.client_context()
    async with httpx.AsyncClient(base_url=lab.api.url, verify=verify) as anonymous:
        for path in ("/healthz", "/livez", "/readyz"):
            response = await anonymous.get(path)
            assert (response.status_code, response.text) == (200, "ok")


TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


async def test_nodes_answer_as_a_table_with_kubectl_columns(
    lab: KubeLab, raw: httpx.AsyncClient
) -> None:
    lab.kubelet.ready_delay = 0
    await lab.kubelet.vm_started("vm1", "10.0.0.5", {}, cpu=4, memory_mb=8192)

    async def ready() -> bool:
        table = (await raw.get("/api/v1/nodes", headers={"Accept": TABLE})).json()
        return table["rows"][0]["cells"][1] == "Ready"

    await eventually(ready)
    table = (await raw.get("/api/v1/nodes", headers={"Accept": TABLE})).json()
    assert table["kind"] == "Table"
    columns = [c["name"] for c in table["columnDefinitions"]]
    assert columns[:6] == ["Name", "Status", "Roles", "Age", "Version", "Internal-IP"]
    row = dict(zip(columns, table["rows"][0]["cells"], strict=True))
    assert (row["Name"], row["Version"], row["Internal-IP"]) == ("vm1", "v1.31.0", "10.0.0.5")
    assert table["rows"][0]["object"]["metadata"]["name"] == "vm1"
    node = (await raw.get("/api/v1/nodes/vm1")).json()
    assert node["status"]["capacity"]["cpu"] == "4"
    assert node["status"]["capacity"]["memory"] == f"{8192 * 1024}Ki"
    assert node["status"]["allocatable"]["cpu"] == "3900m"
    lease = await raw.get("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/vm1")
    assert lease.json()["spec"]["holderIdentity"] == "vm1"
    events = (await raw.get("/api/v1/namespaces/default/events")).json()["items"]
    assert "NodeReady" in {e["reason"] for e in events}


async def test_kubelet_pods_can_be_awaited(lab: KubeLab, kube: AsyncClient) -> None:
    await lab.kubelet.vm_started("vm1", "10.0.0.5", {"virtflow.io/spare": "true"})

    async def has_pods() -> bool:
        return len([p async for p in kube.list(Pod, namespace="*")]) == 2

    await eventually(has_pods)
