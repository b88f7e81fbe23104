"""Graceful pod deletion, as the API server and a kubelet do it together.

A delete (or an accepted eviction) marks the pod with `deletionTimestamp`; the pod goes once
its containers have stopped: after `lab.virtflow.io/shutdown-seconds` (how long the lab's
"process" takes to exit on SIGTERM, default 0), but never later than the grace period
(`terminationGracePeriodSeconds`, default 30, or the caller's `gracePeriodSeconds`), when a
kubelet would kill it. Grace 0 deletes at once.
"""

from __future__ import annotations

import asyncio
import contextlib

from lab.kube_store import KubeError, KubeStore, Obj, not_found

SHUTDOWN_ANNOTATION = "lab.virtflow.io/shutdown-seconds"
DEFAULT_GRACE_SECONDS = 30


def grace_period(pod: Obj, requested: int | None) -> int:
    if requested is not None:
        return max(0, requested)
    return int((pod.get("spec") or {}).get("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS))


def shutdown_seconds(pod: Obj) -> float:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    try:
        return max(0.0, float(annotations.get(SHUTDOWN_ANNOTATION, 0)))
    except ValueError:
        return 0.0


class PodTerminator:
    """Called in the API server's loop; owns the timers that finish terminating pods."""

    def __init__(self, store: KubeStore) -> None:
        self.store = store
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}

    def delete(self, namespace: str, name: str, requested_grace: int | None = None) -> Obj:
        pod = self.store.get("pods", namespace, name)
        if pod is None:
            raise not_found("pods", name)
        grace = grace_period(pod, requested_grace)
        stop_after = min(float(grace), shutdown_seconds(pod))
        if stop_after <= 0:
            self._cancel((namespace, name))
            return self.store.delete("pods", namespace, name)
        terminating = self.store.mark_deleting("pods", namespace, name, grace)
        key = (namespace, name)
        if key not in self._timers:
            uid = pod["metadata"]["uid"]
            loop = asyncio.get_running_loop()
            self._timers[key] = loop.call_later(stop_after, self._finish, key, uid)
        return terminating

    def _finish(self, key: tuple[str, str], uid: str) -> None:
        self._timers.pop(key, None)
        pod = self.store.get("pods", *key)
        if pod is not None and pod["metadata"]["uid"] == uid:
            with contextlib.suppress(KubeError):
                self.store.delete("pods", *key)

    def _cancel(self, key: tuple[str, str]) -> None:
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()

    def stop(self) -> None:
        for key in list(self._timers):
            self._cancel(key)
