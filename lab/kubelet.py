"""A simulated kubelet: turns a started lab VM into a Node that becomes Ready after a delay,
with a couple of pods on it so drains have something to evict.

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

from lab.kube_api import KubeApiServer
from lab.kube_store import KubeError, Obj

NOT_READY_TAINT = "node.kubernetes.io/not-ready"


@dataclass(frozen=True)
class Behaviour:
    """How VMs whose name matches `name_glob` misbehave (the last matching rule wins)."""

    name_glob: str
    never_ready: bool = False
    late_taint_seconds: float | None = None
    network_unavailable: bool = False
    # Seconds from registration to Ready; None: the kubelet's `ready_delay`.
    ready_delay: float | None = None


def _condition(kind: str, status: bool, reason: str, message: str) -> Obj:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "type": kind,
        "status": "True" if status else "False",
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
        "kubeProxyVersion": "v1.31.0",
        "kubeletVersion": "v1.31.0",
        "machineID": uuid.uuid5(uuid.NAMESPACE_DNS, name).hex,
        "operatingSystem": "linux",
        "osImage": "virtflow lab",
        "systemUUID": str(uuid.uuid5(uuid.NAMESPACE_DNS, name)),
    }


def _pod(namespace: str, name: str, node: str, owner_kind: str, owner: str) -> Obj:
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": owner},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": owner_kind, "name": owner, "uid": owner}
            ],
        },
        "spec": {"nodeName": node, "containers": [{"name": "main", "image": f"lab/{owner}"}]},
        "status": {"phase": "Running"},
    }


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

    async def vm_started(self, name: str, ip: str | None, labels: dict[str, str]) -> None:
        await self.api.run_in_loop(lambda: self._register(name, ip, labels))

    async def vm_stopped(self, name: str) -> None:
        await self.api.run_in_loop(lambda: self._unregister(name))

    async def _register(self, name: str, ip: str | None, labels: dict[str, str]) -> None:
        rule = self.behaviour(name)
        store = self.api.store
        node = self._node(name, ip, labels, rule)
        if store.get("nodes", "", name) is None:
            store.create("nodes", "", node)
        else:  # a restarted VM re-registers, as a kubelet would
            store.replace("nodes", "", name, node)
        for pod in (
            _pod("kube-system", f"kube-proxy-{name}", name, "DaemonSet", "kube-proxy"),
            _pod("default", f"workload-{name}", name, "ReplicaSet", "workload"),
        ):
            meta = pod["metadata"]
            if store.get("pods", meta["namespace"], meta["name"]) is None:
                store.create("pods", meta["namespace"], pod)
        self._cancel_timer(name)
        if not rule.never_ready:
            self._timers[name] = asyncio.create_task(self._become_ready(name, rule))

    def _node(self, name: str, ip: str | None, labels: dict[str, str], rule: Behaviour) -> Obj:
        conditions = [_condition("Ready", False, "KubeletNotReady", "container runtime starting")]
        if rule.network_unavailable:
            conditions.append(
                _condition("NetworkUnavailable", True, "NoRouteCreated", "lab: no CNI route")
            )
        status: dict[str, Any] = {
            "conditions": conditions,
            "nodeInfo": _node_info(name),
        }
        if ip:
            status["addresses"] = [
                {"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": name},
            ]
        return {
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, **labels},
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
        store = self.api.store
        node = store.get("nodes", "", name)
        if node is None:
            return
        conditions = [c for c in node["status"]["conditions"] if c["type"] != "Ready"]
        conditions.insert(0, _condition("Ready", True, "KubeletReady", "kubelet is posting ready"))
        node["status"]["conditions"] = conditions
        if drop_taint:
            taints = [t for t in node["spec"].get("taints", []) if t["key"] != NOT_READY_TAINT]
            node["spec"]["taints"] = taints
        node["metadata"].pop("resourceVersion", None)  # last writer wins, like a status update
        store.replace("nodes", "", name, node)

    async def _unregister(self, name: str) -> None:
        self._cancel_timer(name)
        store = self.api.store
        for pod in store.list("pods", where=lambda p: p["spec"].get("nodeName") == name):
            meta = pod["metadata"]
            with contextlib.suppress(KubeError):  # evicted meanwhile
                store.delete("pods", meta["namespace"], meta["name"])
        with contextlib.suppress(KubeError):  # deleted by a release: vm_stopped is idempotent
            store.delete("nodes", "", name)

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
