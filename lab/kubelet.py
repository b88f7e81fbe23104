"""A simulated kubelet: turns a started lab VM into a Node that becomes Ready after a delay,
with its Lease, its events and a couple of pods on it so drains have something to evict.

The Node carries what a kubelet reports (capacity and allocatable from the VM's size,
addresses, nodeInfo); its pods are a kube-proxy owned by the `kube-proxy` DaemonSet and a
workload owned by a ReplicaSet (with an emptyDir, as real workloads often have), both with
controller owner references, so `kubectl drain --ignore-daemonsets` accepts them.

It writes to the lab API's store directly (it is part of the lab, not a client), so the API's
chaos knobs never hit it. Its methods hop to the API's loop, so any loop may call them.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lab.kube_api import POD_NAME_LABEL, KubeApiServer
from lab.kube_store import KubeError, KubeStore, Obj

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
KUBELET_VERSION = "v1.31.0"
LEASE_NAMESPACE = "kube-node-lease"
LEASE_SECONDS = 40
MAX_PODS = 110
# What a kubelet keeps back for the system (kube-reserved + system-reserved, roughly).
RESERVED_MILLICPU = 100
RESERVED_MEMORY_MB = 256


@dataclass(frozen=True)
class Behaviour:
    """How VMs whose name matches `name_glob` misbehave (the last matching rule wins)."""

    name_glob: str
    never_ready: bool = False
    late_taint_seconds: float | None = None
    network_unavailable: bool = False
    # Seconds from registration to Ready; None: the kubelet's `ready_delay`.
    ready_delay: float | None = None


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _micro_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _condition(kind: str, status: str, reason: str, message: str) -> Obj:
    now = _now()
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastHeartbeatTime": now,
        "lastTransitionTime": now,
    }


def _node_info(name: str) -> Obj:
    """Every field is required by the API schema, so typed clients can decode the Node."""
    return {
        "architecture": "amd64",
        "bootID": str(uuid.uuid5(uuid.NAMESPACE_DNS, f"boot.{name}")),
        "containerRuntimeVersion": "containerd://1.7.0",
        "kernelVersion": "6.1.0-lab",
        "kubeProxyVersion": KUBELET_VERSION,
        "kubeletVersion": KUBELET_VERSION,
        "machineID": uuid.uuid5(uuid.NAMESPACE_DNS, name).hex,
        "operatingSystem": "linux",
        "osImage": "virtflow lab",
        "systemUUID": str(uuid.uuid5(uuid.NAMESPACE_DNS, name)),
    }


def _resources(cpu: int, memory_mb: int) -> tuple[Obj, Obj]:
    """(capacity, allocatable) of a VM of this size, in the units a kubelet reports."""
    capacity = {
        "cpu": str(cpu),
        "memory": f"{memory_mb * 1024}Ki",
        "pods": str(MAX_PODS),
        "ephemeral-storage": "20Gi",
        "hugepages-2Mi": "0",
    }
    allocatable = {
        **capacity,
        "cpu": f"{max(0, cpu * 1000 - RESERVED_MILLICPU)}m",
        "memory": f"{max(0, memory_mb - RESERVED_MEMORY_MB) * 1024}Ki",
        "ephemeral-storage": "18Gi",
    }
    return capacity, allocatable


def _owner(kind: str, obj: Obj) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _controller(namespace: str, name: str, app: str, extra_spec: Obj | None = None) -> Obj:
    return {
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": app}},
        "spec": {
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": {"app": app}},
                "spec": {"containers": [{"name": "main", "image": f"lab/{app}"}]},
            },
            **(extra_spec or {}),
        },
        "status": {},
    }


def _pod(name: str, node: str, ip: str | None, owner_kind: str, owner: Obj) -> Obj:
    meta = owner["metadata"]
    app = meta["labels"]["app"]
    spec: Obj = {
        "nodeName": node,
        "containers": [{"name": "main", "image": f"lab/{app}"}],
        "terminationGracePeriodSeconds": 30,
    }
    if owner_kind == "ReplicaSet":
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
        spec["containers"][0]["volumeMounts"] = [{"name": "scratch", "mountPath": "/scratch"}]
    started = _now()
    return {
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "labels": {"app": app, POD_NAME_LABEL: name},
            "ownerReferences": [_owner(owner_kind, owner)],
        },
        "spec": spec,
        "status": {
            "phase": "Running",
            "hostIP": ip,
            "podIP": ip,
            "startTime": started,
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": started}
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "containerStatuses": [
                {
                    "name": "main",
                    "image": f"lab/{app}",
                    "imageID": "",
                    "ready": True,
                    "started": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": started}},
                }
            ],
        },
    }


def _ensure(store: KubeStore, resource: str, obj: Obj) -> Obj:
    meta = obj["metadata"]
    namespace = meta.get("namespace", "")
    found = store.get(resource, namespace, meta["name"])
    return found if found is not None else store.create(resource, namespace, obj)


class Kubelet:
    def __init__(self, api: KubeApiServer, ready_delay: float = 1.0) -> None:
        self.api = api
        self.ready_delay = ready_delay
        self._rules: list[Behaviour] = []
        self._timers: dict[str, asyncio.Task[None]] = {}

    def set_behaviour(
        self,
        name_glob: str,
        never_ready: bool = False,
        late_taint_seconds: float | None = None,
        network_unavailable: bool = False,
        ready_delay: float | None = None,
    ) -> None:
        """never_ready: stays NotReady. late_taint_seconds: Ready, but the not-ready taint
        lingers that much longer. network_unavailable: NetworkUnavailable=True forever.
        ready_delay: Ready that many seconds after registering (0: as it registers)."""
        self._rules.append(
            Behaviour(name_glob, never_ready, late_taint_seconds, network_unavailable, ready_delay)
        )

    def behaviour(self, name: str) -> Behaviour:
        for rule in reversed(self._rules):
            if fnmatch.fnmatchcase(name, rule.name_glob):
                return rule
        return Behaviour("*")

    async def mark_ready(self, name: str) -> None:
        """Make a registered Node Ready now, whatever its behaviour rule said (a late fix)."""

        async def ready() -> None:
            self._cancel_timer(name)
            self._update(name, drop_taint=True)

        await self.api.run_in_loop(ready)

    async def mark_not_ready(self, name: str, reason: str = "KubeletNotReady") -> None:
        """The kubelet reports Ready=False (a runtime or network failure on the VM)."""

        async def not_ready() -> None:
            self._cancel_timer(name)
            self._set_ready(name, "False", reason, "lab: the kubelet reports NotReady")

        await self.api.run_in_loop(not_ready)

    async def mark_unreachable(self, name: str) -> None:
        """The kubelet stopped posting: Ready=Unknown and the unreachable taints, as the node
        lifecycle controller writes them after its grace period."""

        async def unreachable() -> None:
            self._cancel_timer(name)
            self._set_ready(
                name, "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."
            )

        await self.api.run_in_loop(unreachable)

    async def vm_started(
        self,
        name: str,
        ip: str | None,
        labels: dict[str, str],
        cpu: int = 2,
        memory_mb: int = 2048,
        taints: list[Obj] | None = None,
    ) -> None:
        """The VM's kubelet starts and registers its Node, with `labels` (`--node-labels`)
        and `taints` (`--register-with-taints`) as its join configured them."""
        await self.api.run_in_loop(
            lambda: self._register(name, ip, labels, cpu, memory_mb, taints or [])
        )

    async def vm_stopped(self, name: str) -> None:
        await self.api.run_in_loop(lambda: self._unregister(name))

    async def _register(
        self,
        name: str,
        ip: str | None,
        labels: dict[str, str],
        cpu: int,
        memory_mb: int,
        taints: list[Obj],
    ) -> None:
        rule = self.behaviour(name)
        store = self.api.store
        node = self._node(name, ip, labels, rule, cpu, memory_mb)
        existing = store.get("nodes", "", name)
        if existing is None:
            # Registration taints are in the Node from its creation, as a kubelet's are.
            node["spec"]["taints"] += [dict(t) for t in taints]
            created = store.create("nodes", "", node)
            self._event(name, "Starting", "Starting kubelet.")
            self._event(name, "RegisteredNode", f"Node {name} event: Registered Node {name}")
        else:
            # A restarted VM re-registers, as a kubelet would: the Node exists, so its
            # registration taints are not applied again; the taints others set stay.
            kept = [t for t in existing["spec"].get("taints") or [] if t["key"] != NOT_READY_TAINT]
            node["spec"]["taints"] += kept
            created = store.replace("nodes", "", name, node)
        self._renew_lease(name, created["metadata"]["uid"])
        proxy = _ensure(store, "daemonsets", _controller("kube-system", "kube-proxy", "kube-proxy"))
        workload = _ensure(
            store,
            "replicasets",
            _controller("default", "workload-5d8f7c9b6d", "workload", {"replicas": 1}),
        )
        for pod in (
            _pod(f"kube-proxy-{name}", name, ip, "DaemonSet", proxy),
            _pod(f"workload-{name}", name, ip, "ReplicaSet", workload),
        ):
            _ensure(store, "pods", pod)
        self._cancel_timer(name)
        if not rule.never_ready:
            self._timers[name] = asyncio.create_task(self._become_ready(name, rule))

    def _node(
        self,
        name: str,
        ip: str | None,
        labels: dict[str, str],
        rule: Behaviour,
        cpu: int,
        memory_mb: int,
    ) -> Obj:
        conditions = [
            _condition("Ready", "False", "KubeletNotReady", "container runtime starting"),
            _condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "ok"),
            _condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "ok"),
            _condition("PIDPressure", "False", "KubeletHasSufficientPID", "ok"),
        ]
        if rule.network_unavailable:
            conditions.append(
                _condition("NetworkUnavailable", "True", "NoRouteCreated", "lab: no CNI route")
            )
        capacity, allocatable = _resources(cpu, memory_mb)
        addresses = [{"type": "Hostname", "address": name}]
        if ip:
            addresses.insert(0, {"type": "InternalIP", "address": ip})
        status: dict[str, Any] = {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": conditions,
            "addresses": addresses,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": _node_info(name),
        }
        return {
            "metadata": {
                "name": name,
                "labels": {
                    "kubernetes.io/hostname": name,
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    **labels,
                },
            },
            "spec": {"taints": [{"key": NOT_READY_TAINT, "effect": "NoSchedule"}]},
            "status": status,
        }

    async def _become_ready(self, name: str, rule: Behaviour) -> None:
        await asyncio.sleep(self.ready_delay if rule.ready_delay is None else rule.ready_delay)
        self._update(name, drop_taint=rule.late_taint_seconds is None)
        if rule.late_taint_seconds is not None:
            await asyncio.sleep(rule.late_taint_seconds)
            self._update(name, drop_taint=True)
        self._timers.pop(name, None)

    def _update(self, name: str, drop_taint: bool) -> None:
        """Ready=True; with drop_taint, the not-ready and unreachable taints go too."""
        store = self.api.store
        node = store.get("nodes", "", name)
        if node is None:
            return
        was_ready = self._ready_status(node) == "True"
        self._write_ready(node, "True", "KubeletReady", "kubelet is posting ready status")
        if drop_taint:
            gone = (NOT_READY_TAINT, UNREACHABLE_TAINT)
            node["spec"]["taints"] = [
                t for t in node["spec"].get("taints", []) if t["key"] not in gone
            ]
        node["metadata"].pop("resourceVersion", None)  # last writer wins, like a status update
        store.replace("nodes", "", name, node)
        self._renew_lease(name, node["metadata"]["uid"])
        if not was_ready:
            self._event(name, "NodeReady", f"Node {name} status is now: NodeReady")

    def _set_ready(self, name: str, status: str, reason: str, message: str) -> None:
        store = self.api.store
        node = store.get("nodes", "", name)
        if node is None:
            return
        self._write_ready(node, status, reason, message)
        taints = [
            t
            for t in node["spec"].get("taints", [])
            if t["key"] not in (NOT_READY_TAINT, UNREACHABLE_TAINT)
        ]
        taint_key = UNREACHABLE_TAINT if status == "Unknown" else NOT_READY_TAINT
        taints += [
            {"key": taint_key, "effect": effect, "timeAdded": _now()}
            for effect in ("NoSchedule", "NoExecute")
        ]
        node["spec"]["taints"] = taints
        node["metadata"].pop("resourceVersion", None)
        store.replace("nodes", "", name, node)
        event = "NodeNotReady"
        self._event(name, event, f"Node {name} status is now: {event}", kind="Normal")

    @staticmethod
    def _ready_status(node: Obj) -> str | None:
        for condition in node["status"].get("conditions", []):
            if condition["type"] == "Ready":
                return str(condition["status"])
        return None

    @staticmethod
    def _write_ready(node: Obj, status: str, reason: str, message: str) -> None:
        conditions = [c for c in node["status"]["conditions"] if c["type"] != "Ready"]
        conditions.insert(0, _condition("Ready", status, reason, message))
        node["status"]["conditions"] = conditions

    def _renew_lease(self, name: str, node_uid: str) -> None:
        store = self.api.store
        lease = {
            "metadata": {
                "name": name,
                "namespace": LEASE_NAMESPACE,
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Node", "name": name, "uid": node_uid}
                ],
            },
            "spec": {
                "holderIdentity": name,
                "leaseDurationSeconds": LEASE_SECONDS,
                "renewTime": _micro_now(),
            },
        }
        if store.get("leases", LEASE_NAMESPACE, name) is None:
            store.create("leases", LEASE_NAMESPACE, lease)
        else:
            store.replace("leases", LEASE_NAMESPACE, name, lease)

    def _event(self, node: str, reason: str, message: str, kind: str = "Normal") -> None:
        """An Event about the Node in `default`, as a kubelet records it (uid = node name)."""
        now = _now()
        self.api.store.create(
            "events",
            "default",
            {
                "metadata": {"name": f"{node}.{uuid.uuid4().hex[:16]}", "namespace": "default"},
                "involvedObject": {"kind": "Node", "name": node, "uid": node, "apiVersion": "v1"},
                "reason": reason,
                "message": message,
                "type": kind,
                "source": {"component": "kubelet", "host": node},
                "firstTimestamp": now,
                "lastTimestamp": now,
                "count": 1,
                "reportingComponent": "kubelet",
                "reportingInstance": node,
            },
        )

    async def _unregister(self, name: str) -> None:
        self._cancel_timer(name)
        store = self.api.store
        for pod in store.list("pods", where=lambda p: p["spec"].get("nodeName") == name):
            meta = pod["metadata"]
            with contextlib.suppress(KubeError):  # evicted meanwhile
                store.delete("pods", meta["namespace"], meta["name"])
        with contextlib.suppress(KubeError):  # deleted by a release: vm_stopped is idempotent
            store.delete("nodes", "", name)
        with contextlib.suppress(KubeError):
            store.delete("leases", LEASE_NAMESPACE, name)

    def _cancel_timer(self, name: str) -> None:
        timer = self._timers.pop(name, None)
        if timer is not None:
            timer.cancel()

    async def stop(self) -> None:
        """Stop pending readiness timers (the lab is shutting down)."""

        async def cancel_all() -> None:
            for name in list(self._timers):
                self._cancel_timer(name)

        if self._timers:
            await self.api.run_in_loop(cancel_all)
