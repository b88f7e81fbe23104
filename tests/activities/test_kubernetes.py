"""Kubernetes activities against the lab API and kubelet, run in an ActivityEnvironment."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from lightkube.resources.core_v1 import Node
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.kubernetes import KubernetesActivities
from activities.node_conditions import health_problems, readiness_gaps
from contracts.drain import DrainNodeInput, DrainOutcome, DrainPolicy
from contracts.kubernetes import (
    CheckNodeReadyInput,
    ClusterSparesInput,
    NodeNameInput,
    WaitNodeReadyInput,
    WatchNodeHealthInput,
)
from contracts.spare import CLUSTER_LABEL, SPARE_ID_LABEL, SPARE_LABEL
from lab.kube_pods import SHUTDOWN_ANNOTATION
from lab.kube_testing import KubeLab, eventually, kube_lab

NOT_READY = ["Ready=False (KubeletNotReady)", "taint node.kubernetes.io/not-ready"]


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[KubeLab]:
    async with kube_lab(tmp_path, ready_delay=0.3) as running:
        yield running


@pytest.fixture
async def acts(lab: KubeLab) -> AsyncIterator[KubernetesActivities]:
    activities = KubernetesActivities(lab.kubeconfig)
    yield activities
    await activities.close()


class Heartbeats:
    """An ActivityEnvironment whose heartbeats are kept for assertions."""

    def __init__(self) -> None:
        self.env = ActivityEnvironment()
        self.seen: list[Any] = []
        self.env.on_heartbeat = lambda *details: self.seen.append(details[0] if details else None)

    def saw(self, details: Any) -> bool:
        return details in self.seen

    def saw_unreachable(self, gaps: list[str], error: str) -> bool:
        """A heartbeat with these gaps and the API unreachable for `error` (since some time)."""
        pattern = re.compile(
            r"the Kubernetes API unreachable since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: "
            + re.escape(error)
        )
        return any(
            isinstance(seen, list) and seen[:-1] == gaps and pattern.match(seen[-1])
            for seen in self.seen
        )


def _cond(kind: str, status: str, reason: str | None = None) -> dict[str, str]:
    return {"type": kind, "status": status, **({"reason": reason} if reason else {})}


READY = _cond("Ready", "True", "KubeletReady")
CASES: list[tuple[str, dict[str, Any] | None, list[str]]] = [
    ("an absent node is not registered", None, ["node not registered"]),
    ("a ready untainted node has no gaps", {"status": {"conditions": [READY]}}, []),
    (
        "a fresh node names its condition reason and startup taint",
        {
            "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
            "status": {"conditions": [_cond("Ready", "False", "KubeletNotReady")]},
        },
        NOT_READY,
    ),
    ("a node without a Ready condition says so", {"status": {}}, ["Ready condition not reported"]),
    (
        "unreachable and uninitialized taints both count",
        {
            "spec": {
                "taints": [
                    {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
                    {"key": "node.kubernetes.io/uninitialized", "effect": "NoSchedule"},
                    {"key": "example.com/dedicated", "effect": "NoSchedule"},
                ]
            },
            "status": {"conditions": [READY]},
        },
        ["taint node.kubernetes.io/unreachable", "taint node.kubernetes.io/uninitialized"],
    ),
    (
        "network unavailable blocks readiness",
        {"status": {"conditions": [READY, _cond("NetworkUnavailable", "True", "NoRoute")]}},
        ["NetworkUnavailable=True (NoRoute)"],
    ),
    (
        "network available is fine",
        {"status": {"conditions": [READY, _cond("NetworkUnavailable", "False")]}},
        [],
    ),
    (
        "a cordoned node is not a usable spare",
        {"spec": {"unschedulable": True}, "status": {"conditions": [READY]}},
        ["cordoned"],
    ),
]


@pytest.mark.parametrize(("case", "node", "gaps"), CASES, ids=[c[0] for c in CASES])
def test_readiness_gaps(case: str, node: dict[str, Any] | None, gaps: list[str]) -> None:
    assert readiness_gaps(node) == gaps
    if node is not None:
        model = Node.from_dict({"metadata": {"name": "n"}, **node})
        assert readiness_gaps(model) == gaps  # type: ignore[arg-type]


async def test_a_node_ready_at_once_is_waited_for_without_a_heartbeat(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    await lab.kubelet.vm_started("vm1", None, {})
    await eventually(lambda: readiness_gaps(lab.api.store.get("nodes", "", "vm1")) == [])
    beats = Heartbeats()
    result = await beats.env.run(acts.wait_node_ready, WaitNodeReadyInput(node_name="vm1"))
    assert result.ready
    assert beats.seen == []  # done within the quiet period: no heartbeat RPC


async def test_one_look_tells_absent_not_ready_and_ready_apart_without_waiting(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    env = ActivityEnvironment()
    look = CheckNodeReadyInput(node_name="vm1")
    absent = await env.run(acts.check_node_ready, look)
    assert not absent.ready and absent.missing == ["node not registered"]

    lab.kubelet.set_behaviour("vm1", never_ready=True)
    await lab.kubelet.vm_started("vm1", None, {})
    starting = await env.run(acts.check_node_ready, look)
    assert not starting.ready and starting.missing == NOT_READY

    await lab.kubelet.mark_ready("vm1")
    ready = await env.run(acts.check_node_ready, look)
    assert ready.ready and ready.missing == []


async def test_wait_returns_ready_after_the_kubelet_delay(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    beats = Heartbeats()
    waiting = asyncio.create_task(
        beats.env.run(acts.wait_node_ready, WaitNodeReadyInput(node_name="vm1"))
    )
    await eventually(lambda: beats.saw(["node not registered"]))
    await lab.kubelet.vm_started("vm1", "10.0.0.9", {SPARE_LABEL: "true"})
    result = await asyncio.wait_for(waiting, 10)
    assert (result.node_name, result.ready, result.missing) == ("vm1", True, [])
    assert beats.saw(NOT_READY)
    assert beats.seen[-1] == []


async def test_never_ready_wait_is_cancelled_promptly_naming_what_is_missing(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    lab.kubelet.set_behaviour("vm1", never_ready=True)
    await lab.kubelet.vm_started("vm1", None, {})
    beats = Heartbeats()
    waiting = asyncio.create_task(
        beats.env.run(
            acts.wait_node_ready, WaitNodeReadyInput(node_name="vm1", poll_hint_seconds=0.1)
        )
    )
    await eventually(lambda: beats.saw(NOT_READY))
    beats.env.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(waiting, 5)
    assert beats.seen[-1] == NOT_READY


async def test_bounded_probe_reports_not_ready_with_gaps(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    lab.kubelet.set_behaviour("vm1", network_unavailable=True)
    await lab.kubelet.vm_started("vm1", None, {})
    await eventually(lambda: lab.api.store.get("nodes", "", "vm1") is not None)
    probe = WaitNodeReadyInput(node_name="vm1", max_wait_seconds=1.0)
    result = await Heartbeats().env.run(acts.wait_node_ready, probe)
    assert not result.ready
    assert result.missing == ["NetworkUnavailable=True (NoRouteCreated)"]


async def test_wait_survives_server_errors_and_dropped_watches(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    lab.kubelet.ready_delay = 0.5
    beats = Heartbeats()
    inp = WaitNodeReadyInput(node_name="vm1", poll_hint_seconds=0.2)
    waiting = asyncio.create_task(beats.env.run(acts.wait_node_ready, inp))
    # The first heartbeat ends the quiet period: from then on every state is reported.
    await eventually(lambda: beats.saw(["node not registered"]))
    await lab.kubelet.vm_started("vm1", None, {})
    await eventually(lambda: beats.saw(NOT_READY))
    lab.api.fail_next(3, status=500)
    lab.api.drop_watches()
    result = await asyncio.wait_for(waiting, 10)
    assert result.ready
    assert beats.saw_unreachable(NOT_READY, "RemoteProtocolError")
    assert beats.saw_unreachable(NOT_READY, "HTTP 500")
    node = lab.api.store.get("nodes", "", "vm1")
    assert node is not None and not node["spec"]["taints"]


async def test_a_bounded_probe_ends_once_the_api_stops_answering_and_once_it_answers_again(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    """So the spare's status says at once that its cluster's API is unreachable (and since
    when), and at once that it answers again, not at the end of a probe round."""
    lab.kubelet.set_behaviour("vm1", never_ready=True)
    await lab.kubelet.vm_started("vm1", None, {})
    await eventually(lambda: lab.api.store.get("nodes", "", "vm1") is not None)
    port = lab.api.port
    await lab.api.stop()
    probe = WaitNodeReadyInput(node_name="vm1", max_wait_seconds=3600, poll_hint_seconds=0.2)
    # Bounded only so that a probe that never ends fails here instead of hanging.
    down = await asyncio.wait_for(Heartbeats().env.run(acts.wait_node_ready, probe), 60)
    assert not down.ready and down.api_error is not None
    assert re.match(
        r"the Kubernetes API unreachable since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: ConnectError",
        down.api_error,
    )
    assert down.missing[-1] == down.api_error

    await lab.api.start(port=port)
    shown = probe.model_copy(update={"api_down_shown": True})
    up = await asyncio.wait_for(Heartbeats().env.run(acts.wait_node_ready, shown), 60)
    assert (up.ready, up.api_error, up.missing) == (False, None, NOT_READY)


async def test_wait_relists_after_410_gone(lab: KubeLab, acts: KubernetesActivities) -> None:
    lab.kubelet.set_behaviour("vm1", late_taint_seconds=0.3)
    beats = Heartbeats()
    waiting = asyncio.create_task(
        beats.env.run(acts.wait_node_ready, WaitNodeReadyInput(node_name="vm1"))
    )
    await eventually(lambda: beats.saw(["node not registered"]))  # past the quiet period
    await lab.kubelet.vm_started("vm1", None, {})
    await eventually(lambda: beats.saw(NOT_READY))
    lab.api.compact_history()
    lab.api.drop_watches(abrupt=False)  # the client resumes from its version: now too old
    result = await asyncio.wait_for(waiting, 10)
    assert result.ready
    assert beats.saw(["taint node.kubernetes.io/not-ready"])  # Ready, but the taint lingered


async def test_drain_evicts_and_names_the_budget_that_blocks_a_pod(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    await lab.kubelet.vm_started("vm1", None, {})
    lab.api.block_eviction("default", "workload-vm1")
    lab.api.store.create("pods", "default", _pod("free", "vm1"))
    lab.api.store.create("pods", "kube-system", _pod("static", "vm1", mirror=True))
    inp = DrainNodeInput(node_name="vm1", timeout_seconds=1, retry_interval_seconds=0.1)
    result = await Heartbeats().env.run(acts.drain_node, inp)
    assert (result.outcome, result.policy) == (DrainOutcome.BLOCKED, DrainPolicy.FAIL)
    assert result.evicted == ["default/free"]
    assert result.skipped == ["default/workload-vm1"]
    assert result.ignored == ["kube-system/kube-proxy-vm1", "kube-system/static"]
    [budget] = result.blocked_by
    assert (budget.namespace, budget.name, budget.disruptions_allowed) == (
        "default",
        "lab-block-workload-vm1",
        0,
    )
    assert budget.pods == ["default/workload-vm1"]
    assert "needs 1 healthy pods and has 1 currently" in budget.message
    assert lab.api.store.get("pods", "default", "free") is None
    assert lab.api.store.get("pods", "default", "workload-vm1") is not None
    reasons = {e["reason"]: e for e in lab.api.store.list("events", "default")}
    assert "lab-block-workload-vm1" in reasons["DrainBlocked"]["message"]
    assert reasons["DrainBlocked"]["source"]["component"] == "virtflow"


async def test_drain_waits_until_an_evicted_pod_is_gone(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    """Accepted is not gone: the pod takes its 3 s grace period, and the drain waits it out."""
    await lab.kubelet.vm_started("vm1", None, {})
    slow = _pod("slow", "vm1")
    slow["metadata"]["annotations"] = {SHUTDOWN_ANNOTATION: "600"}
    slow["spec"]["terminationGracePeriodSeconds"] = 3
    lab.api.store.create("pods", "default", slow)
    beats = Heartbeats()
    inp = DrainNodeInput(node_name="vm1", timeout_seconds=30, retry_interval_seconds=0.1)
    result = await beats.env.run(acts.drain_node, inp)
    assert result.outcome == DrainOutcome.DRAINED
    assert result.evicted == ["default/slow", "default/workload-vm1"]
    assert lab.api.store.get("pods", "default", "slow") is None  # gone, not just accepted
    assert any(b and b["terminating"] == ["default/slow"] for b in beats.seen)


async def test_a_pod_still_terminating_at_the_timeout_is_not_counted_as_gone(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    await lab.kubelet.vm_started("vm1", None, {})
    slow = _pod("slow", "vm1")
    slow["metadata"]["annotations"] = {SHUTDOWN_ANNOTATION: "600"}
    slow["spec"]["terminationGracePeriodSeconds"] = 600
    lab.api.store.create("pods", "default", slow)
    inp = DrainNodeInput(node_name="vm1", timeout_seconds=1, retry_interval_seconds=0.1)
    result = await Heartbeats().env.run(acts.drain_node, inp)
    assert (result.outcome, result.skipped) == (DrainOutcome.BLOCKED, ["default/slow"])
    assert result.blocked_by == []


async def test_drain_retries_429_until_the_budget_allows(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    await lab.kubelet.vm_started("vm1", None, {})
    lab.api.block_eviction("default", "workload-vm1")
    beats = Heartbeats()
    inp = DrainNodeInput(node_name="vm1", timeout_seconds=30, retry_interval_seconds=0.05)
    draining = asyncio.create_task(beats.env.run(acts.drain_node, inp))

    def blocked() -> bool:
        return any(
            b and b["pending"] == ["default/workload-vm1"] and b["blocked_by"] for b in beats.seen
        )

    await eventually(blocked)
    lab.api.unblock_eviction("default", "workload-vm1")
    result = await asyncio.wait_for(draining, 10)
    assert (result.evicted, result.skipped, result.blocked_by) == (["default/workload-vm1"], [], [])


@pytest.mark.parametrize("workload", [True, False], ids=["evicted at once", "nothing to evict"])
async def test_a_drain_done_in_one_round_sends_no_heartbeat(
    lab: KubeLab, acts: KubernetesActivities, workload: bool
) -> None:
    await lab.kubelet.vm_started("vm1", None, {})
    if not workload:
        lab.api.store.delete("pods", "default", "workload-vm1")
    beats = Heartbeats()
    result = await beats.env.run(
        acts.drain_node, DrainNodeInput(node_name="vm1", timeout_seconds=30)
    )
    assert result.evicted == (["default/workload-vm1"] if workload else [])
    assert result.ignored == ["kube-system/kube-proxy-vm1"]
    assert beats.seen == []


async def test_force_deletes_what_the_budget_holds_and_says_so(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    await lab.kubelet.vm_started("vm1", None, {})
    lab.api.block_eviction("default", "workload-vm1")
    inp = DrainNodeInput(
        node_name="vm1", timeout_seconds=0, policy=DrainPolicy.FORCE, retry_interval_seconds=0.05
    )
    result = await Heartbeats().env.run(acts.drain_node, inp)
    assert result.outcome == DrainOutcome.FORCED
    assert (result.evicted, result.deleted, result.skipped) == ([], ["default/workload-vm1"], [])
    assert [b.name for b in result.blocked_by] == ["lab-block-workload-vm1"]
    assert "deleted past their budgets: default/workload-vm1" in result.summary()
    assert lab.api.store.get("pods", "default", "workload-vm1") is None


async def test_cordon_and_delete_are_idempotent(lab: KubeLab, acts: KubernetesActivities) -> None:
    await lab.kubelet.vm_started("vm1", None, {})
    env = ActivityEnvironment()
    for _ in range(2):
        await env.run(acts.cordon_node, NodeNameInput(node_name="vm1"))
    node = lab.api.store.get("nodes", "", "vm1")
    assert node is not None and node["spec"]["unschedulable"] is True
    for _ in range(2):
        await env.run(acts.delete_node, NodeNameInput(node_name="vm1"))
    await env.run(acts.cordon_node, NodeNameInput(node_name="vm1"))
    assert lab.api.store.get("nodes", "", "vm1") is None


async def test_list_spare_nodes_only_lists_labelled_nodes(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    await lab.kubelet.vm_started("spare-b", None, {SPARE_LABEL: "true"})
    await lab.kubelet.vm_started("spare-a", None, {SPARE_LABEL: "true"})
    await lab.kubelet.vm_started("worker-1", None, {})
    assert await ActivityEnvironment().run(acts.list_spare_nodes) == ["spare-a", "spare-b"]


async def test_a_rejected_token_is_a_non_retryable_error(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    lab.api.token = "rotated"
    with pytest.raises(ApplicationError) as failed:
        await ActivityEnvironment().run(acts.cordon_node, NodeNameInput(node_name="vm1"))
    assert (failed.value.type, failed.value.non_retryable) == ("KubernetesUnauthorized", True)


async def test_an_unreachable_api_is_a_retryable_error(tmp_path: Path) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    acts = KubernetesActivities(path)
    try:
        with pytest.raises(Exception) as failed:
            await ActivityEnvironment().run(acts.delete_node, NodeNameInput(node_name="vm1"))
    finally:
        await acts.close()
    assert not isinstance(failed.value, ApplicationError)


def _pod(name: str, node: str, mirror: bool = False) -> dict[str, Any]:
    annotations = {"kubernetes.io/config.mirror": "abc"} if mirror else {}
    return {
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "lab/c"}]},
    }


HEALTH_CASES: list[tuple[str, dict[str, Any] | None, list[str]]] = [
    ("a ready node is healthy", {"status": {"conditions": [READY]}}, []),
    (
        "a cordoned ready node is healthy: the upgrade controller may cordon it",
        {"spec": {"unschedulable": True}, "status": {"conditions": [READY]}},
        [],
    ),
    (
        "not ready names the kubelet's reason",
        {"status": {"conditions": [_cond("Ready", "False", "KubeletNotReady")]}},
        ["Ready=False (KubeletNotReady)"],
    ),
    (
        "unreachable is Ready=Unknown and its taint",
        {
            "spec": {"taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]},
            "status": {"conditions": [_cond("Ready", "Unknown", "NodeStatusUnknown")]},
        },
        ["Ready=Unknown (NodeStatusUnknown)", "taint node.kubernetes.io/unreachable"],
    ),
    ("a deleted node is not found", None, ["node not found"]),
]


@pytest.mark.parametrize(
    ("node", "problems"), [c[1:] for c in HEALTH_CASES], ids=[c[0] for c in HEALTH_CASES]
)
def test_health_problems(node: dict[str, Any] | None, problems: list[str]) -> None:
    assert health_problems(node) == problems


async def _ready_node(lab: KubeLab, name: str = "vm1", **labels: str) -> None:
    """A Ready spare Node (the health watch follows the Nodes labelled as spares)."""
    lab.kubelet.set_behaviour(name, ready_delay=0)
    await lab.kubelet.vm_started(name, None, {SPARE_LABEL: "true", **labels})
    await eventually(lambda: not health_problems(lab.api.store.get("nodes", "", name)))


async def test_watch_reports_a_node_unhealthy_past_the_deadline(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    await _ready_node(lab)
    beats = Heartbeats()
    inp = WatchNodeHealthInput(node_name="vm1", unhealthy_after_seconds=1, poll_hint_seconds=0.2)
    watching = asyncio.create_task(beats.env.run(acts.watch_node_health, inp))
    await lab.kubelet.mark_unreachable("vm1")
    result = await asyncio.wait_for(watching, 20)
    assert not result.healthy
    assert (
        result.reason == "Ready=Unknown (NodeStatusUnknown), taint node.kubernetes.io/unreachable"
    )
    assert result.since is not None
    reasons = {e["reason"] for e in lab.api.store.list("events", "default")}
    assert "SpareUnhealthy" in reasons


async def test_watch_ignores_a_blip_shorter_than_the_deadline(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    await _ready_node(lab)
    beats = Heartbeats()
    inp = WatchNodeHealthInput(node_name="vm1", unhealthy_after_seconds=30, poll_hint_seconds=0.2)
    watching = asyncio.create_task(beats.env.run(acts.watch_node_health, inp))
    await eventually(
        lambda: beats.saw({"problems": [], "unhealthy_since": None, "api_error": None})
    )
    await lab.kubelet.mark_not_ready("vm1")
    await eventually(
        lambda: any(b and b["problems"] == ["Ready=False (KubeletNotReady)"] for b in beats.seen)
    )
    await lab.kubelet.mark_ready("vm1")
    count = len(beats.seen)
    await eventually(lambda: any(b and b["problems"] == [] for b in beats.seen[count:]), timeout=10)
    assert not watching.done()
    beats.env.cancel()
    with pytest.raises(asyncio.CancelledError):
        await watching


async def test_watch_until_healthy_returns_when_the_node_recovers(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    await _ready_node(lab)
    await lab.kubelet.mark_not_ready("vm1")
    inp = WatchNodeHealthInput(node_name="vm1", until="healthy", poll_hint_seconds=0.2)
    watching = asyncio.create_task(Heartbeats().env.run(acts.watch_node_health, inp))
    await lab.kubelet.mark_ready("vm1")
    assert (await asyncio.wait_for(watching, 10)).healthy


async def test_a_warm_watch_ends_when_another_spare_takes_its_node_over(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    await _ready_node(lab, **{SPARE_ID_LABEL: "warm-1"})
    beats = Heartbeats()
    inp = WatchNodeHealthInput(node_name="vm1", owner="warm-1", poll_hint_seconds=0.2)
    watching = asyncio.create_task(beats.env.run(acts.watch_node_health, inp))
    await eventually(
        lambda: beats.saw({"problems": [], "unhealthy_since": None, "api_error": None})
    )
    assert not watching.done()  # its own label: it keeps watching
    node = lab.api.store.get("nodes", "", "vm1")
    assert node is not None
    node["metadata"]["labels"][SPARE_ID_LABEL] = "claimant-1"
    lab.api.store.replace("nodes", "", "vm1", node)
    result = await asyncio.wait_for(watching, 10)
    assert result.releasing and result.healthy


async def test_count_unhealthy_spares_of_one_cluster(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    for name, cluster in (("a1", "a"), ("a2", "a"), ("b1", "b")):
        await _ready_node(lab, name, **{SPARE_LABEL: "true", CLUSTER_LABEL: cluster})
    await lab.kubelet.mark_not_ready("a2")
    await lab.kubelet.mark_unreachable("b1")
    counted = await ActivityEnvironment().run(
        acts.count_unhealthy_spares, ClusterSparesInput(cluster="a")
    )
    assert (counted.total, counted.unhealthy) == (2, ["a2"])


async def test_health_watches_of_one_worker_share_one_watch(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    """Hundreds of held spares must not take a connection each from the client's pool."""
    for name in ("vm1", "vm2", "vm3"):
        await _ready_node(lab, name)
    beats = [Heartbeats() for _ in range(3)]
    watches = [
        asyncio.create_task(
            b.env.run(
                acts.watch_node_health,
                WatchNodeHealthInput(node_name=n, unhealthy_after_seconds=1, poll_hint_seconds=0.2),
            )
        )
        for b, n in zip(beats, ("vm1", "vm2", "vm3"), strict=True)
    ]
    await eventually(lambda: all(b.seen for b in beats))
    assert lab.api.store.watch_count == 1
    await lab.kubelet.mark_not_ready("vm2")
    done, _ = await asyncio.wait(watches, timeout=20, return_when=asyncio.FIRST_COMPLETED)
    assert [t.result().node_name for t in done] == ["vm2"]
    for b in (beats[0], beats[2]):
        b.env.cancel()
    await asyncio.gather(*watches, return_exceptions=True)
    await eventually(lambda: lab.api.store.watch_count == 0)


async def test_a_rejected_token_ends_a_health_watch_for_good(
    lab: KubeLab, acts: KubernetesActivities
) -> None:
    await _ready_node(lab)
    lab.api.token = "rotated"
    inp = WatchNodeHealthInput(node_name="vm1", poll_hint_seconds=0.2)
    with pytest.raises(ApplicationError) as failed:
        await asyncio.wait_for(Heartbeats().env.run(acts.watch_node_health, inp), 10)
    assert failed.value.non_retryable
