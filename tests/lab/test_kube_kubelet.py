"""The simulated kubelet: registration, readiness after a delay, misbehaviour knobs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest
from lightkube.resources.core_v1 import Node, Pod

from lab.kube_api import KubeApiServer
from lab.kube_testing import KubeLab, eventually, kube_lab
from lab.kubelet import NOT_READY_TAINT, UNREACHABLE_TAINT, Kubelet
from tests.kubectl import kubectl, kubectl_json, needs_kubectl


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[KubeLab]:
    async with kube_lab(tmp_path, ready_delay=0.1) as running:
        yield running


def conditions(api: KubeApiServer, name: str) -> dict[str, str]:
    found = api.store.get("nodes", "", name)
    assert found is not None
    return {c["type"]: c["status"] for c in found["status"]["conditions"]}


def taints(api: KubeApiServer, name: str) -> list[str]:
    found = api.store.get("nodes", "", name)
    assert found is not None
    return [t["key"] for t in found["spec"].get("taints", [])]


def ready(api: KubeApiServer, name: str) -> bool:
    return conditions(api, name).get("Ready") == "True" and not taints(api, name)


async def test_vm_registers_not_ready_then_becomes_ready(lab: KubeLab) -> None:
    await lab.kubelet.vm_started("vm1", "10.0.0.7", {"virtflow.io/spare": "true"})
    registered = lab.api.store.get("nodes", "", "vm1")
    assert registered is not None
    assert registered["metadata"]["labels"]["virtflow.io/spare"] == "true"
    assert {"type": "InternalIP", "address": "10.0.0.7"} in registered["status"]["addresses"]
    assert conditions(lab.api, "vm1")["Ready"] == "False"
    assert taints(lab.api, "vm1") == [NOT_READY_TAINT]

    await eventually(lambda: ready(lab.api, "vm1"))
    pods = lab.api.store.list("pods")
    owners = sorted(p["metadata"]["ownerReferences"][0]["kind"] for p in pods)
    assert owners == ["DaemonSet", "ReplicaSet"]
    assert {p["spec"]["nodeName"] for p in pods} == {"vm1"}


async def test_never_ready_keeps_the_node_not_ready(lab: KubeLab) -> None:
    lab.kubelet.set_behaviour("stuck-*", never_ready=True)
    await lab.kubelet.vm_started("stuck-1", None, {})
    await lab.kubelet.vm_started("fine-1", None, {})
    await eventually(lambda: ready(lab.api, "fine-1"))
    assert conditions(lab.api, "stuck-1")["Ready"] == "False"
    assert taints(lab.api, "stuck-1") == [NOT_READY_TAINT]


async def test_late_taint_is_ready_before_the_taint_goes(lab: KubeLab) -> None:
    lab.kubelet.set_behaviour("vm1", late_taint_seconds=0.3)
    await lab.kubelet.vm_started("vm1", None, {})
    await eventually(lambda: conditions(lab.api, "vm1")["Ready"] == "True")
    assert taints(lab.api, "vm1") == [NOT_READY_TAINT]
    await eventually(lambda: not taints(lab.api, "vm1"))


async def test_network_unavailable_stays_true(lab: KubeLab) -> None:
    lab.kubelet.set_behaviour("vm1", network_unavailable=True)
    await lab.kubelet.vm_started("vm1", None, {})
    await eventually(lambda: conditions(lab.api, "vm1")["Ready"] == "True")
    assert conditions(lab.api, "vm1")["NetworkUnavailable"] == "True"


async def test_vm_stopped_removes_node_and_pods_and_is_idempotent(lab: KubeLab) -> None:
    await lab.kubelet.vm_started("vm1", None, {})
    await lab.kubelet.vm_stopped("vm1")
    await lab.kubelet.vm_stopped("vm1")
    assert lab.api.store.get("nodes", "", "vm1") is None
    assert lab.api.store.list("pods") == []


def test_kubelet_called_from_another_loop_hops_to_the_api_loop() -> None:
    api = KubeApiServer()
    api.start_in_thread()
    kubelet = Kubelet(api, ready_delay=0.05)
    found: dict[str, Any] = {}

    async def drive() -> None:
        await kubelet.vm_started("vm1", None, {})

        async def node_ready() -> bool:
            node = await api.run_in_loop(lambda: _get(api, "vm1"))
            found["node"] = node
            return node is not None and not node["spec"]["taints"]

        await eventually(node_ready)
        await kubelet.vm_stopped("vm1")

    try:
        asyncio.run(drive())
    finally:
        api.stop_thread()
    assert found["node"]["status"]["conditions"][0]["status"] == "True"


async def _get(api: KubeApiServer, name: str) -> dict[str, Any] | None:
    return api.store.get("nodes", "", name)


async def test_kubelet_objects_decode_as_typed_lightkube_models(lab: KubeLab) -> None:
    await lab.kubelet.vm_started("vm1", "10.0.0.7", {})
    await eventually(lambda: ready(lab.api, "vm1"))
    node = cast(Node, Node.from_dict(lab.api.store.get("nodes", "", "vm1") or {}, lazy=False))
    pods = [cast(Pod, Pod.from_dict(p, lazy=False)) for p in lab.api.store.list("pods")]
    assert node.status is not None and node.status.nodeInfo is not None
    assert node.status.nodeInfo.kubeletVersion
    assert {p.spec.nodeName for p in pods if p.spec} == {"vm1"}


async def test_a_node_turns_not_ready_then_unreachable_then_ready_again(lab: KubeLab) -> None:
    await lab.kubelet.vm_started("vm1", None, {})
    await eventually(lambda: ready(lab.api, "vm1"))
    await lab.kubelet.mark_not_ready("vm1")
    assert conditions(lab.api, "vm1")["Ready"] == "False"
    assert taints(lab.api, "vm1") == [NOT_READY_TAINT, NOT_READY_TAINT]
    await lab.kubelet.mark_unreachable("vm1")
    assert conditions(lab.api, "vm1")["Ready"] == "Unknown"
    assert taints(lab.api, "vm1") == [UNREACHABLE_TAINT, UNREACHABLE_TAINT]
    await lab.kubelet.mark_ready("vm1")
    assert ready(lab.api, "vm1")
    reasons = [e["reason"] for e in lab.api.store.list("events")]
    assert reasons.count("NodeReady") == 2
    assert "NodeNotReady" in reasons


async def test_kubelet_pods_have_controller_owners_that_exist(lab: KubeLab) -> None:
    await lab.kubelet.vm_started("vm1", None, {})
    for pod in lab.api.store.list("pods"):
        owner = pod["metadata"]["ownerReferences"][0]
        assert owner["controller"] is True
        resource = {"DaemonSet": "daemonsets", "ReplicaSet": "replicasets"}[owner["kind"]]
        found = lab.api.store.get(resource, pod["metadata"]["namespace"], owner["name"])
        assert found is not None and found["metadata"]["uid"] == owner["uid"]


def taint_triples(node: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    return [(t["key"], t.get("value"), t["effect"]) for t in node["spec"].get("taints") or []]


@needs_kubectl
async def test_a_node_registers_with_its_registration_taints_once_as_a_kubelet_does(
    lab: KubeLab,
) -> None:
    warm = {"key": "virtflow.io/warm", "value": "p1", "effect": "NoSchedule"}
    lab.kubelet.set_behaviour("vm1", never_ready=True)  # Ready when the test says
    await lab.kubelet.vm_started("vm1", "10.0.0.7", {}, taints=[warm])
    # From the Node's first moment: registered, not patched on later.
    registered = await kubectl_json(lab.kubeconfig, "get", "node", "vm1")
    assert taint_triples(registered) == [
        (NOT_READY_TAINT, None, "NoSchedule"),
        ("virtflow.io/warm", "p1", "NoSchedule"),
    ]
    await lab.kubelet.mark_ready("vm1")
    ready_node = await kubectl_json(lab.kubeconfig, "get", "node", "vm1")
    assert taint_triples(ready_node) == [("virtflow.io/warm", "p1", "NoSchedule")]

    # Taken off (as a claim does), it stays off when the VM restarts: a kubelet applies its
    # registration taints only when it creates the Node.
    await kubectl(lab.kubeconfig, "taint", "node", "vm1", "virtflow.io/warm-")
    await lab.kubelet.vm_started("vm1", "10.0.0.7", {}, taints=[warm])
    assert taint_triples(await kubectl_json(lab.kubeconfig, "get", "node", "vm1")) == [
        (NOT_READY_TAINT, None, "NoSchedule")
    ]
    await lab.kubelet.mark_ready("vm1")
    assert taint_triples(await kubectl_json(lab.kubeconfig, "get", "node", "vm1")) == []
