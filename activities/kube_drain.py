"""Draining a Node as `kubectl drain` does, and honestly: a pod counts as gone when it is gone.

Every pod but DaemonSet-owned and mirror pods is evicted through the eviction API; an
accepted eviction only starts the pod's termination, so the drain then waits until the pod
(that uid) has left the Node. Refusals (429 from a PodDisruptionBudget) are retried until the
drain timeout; each blocking budget is named with its `disruptionsAllowed`. What happens to
what is left at the timeout is the caller's policy:

- `fail`: stop; the release goes no further (the Node stays cordoned, the VM stays).
- `force`: delete the remaining pods as `kubectl drain --disable-eviction` would (budgets
  bypassed, each pod still gets its grace period) and wait for them to go.
- `leave`: stop; the caller keeps the VM cordoned and reports it.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx2
from lightkube import ApiError, AsyncClient
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Pod
from lightkube.resources.policy_v1 import PodDisruptionBudget
from temporalio.exceptions import ApplicationError

from contracts.drain import (
    BudgetRefusal,
    DrainNodeInput,
    DrainNodeResult,
    DrainOutcome,
    DrainPolicy,
)
from contracts.failures import kubernetes_refusal

from .heartbeats import QuietHeartbeat, heartbeat_interval

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
# The API server's cause for a refused eviction: "The disruption budget NAME needs ...".
_BUDGET_CAUSE = re.compile(r"^The disruption budget (\S+) ")


def pod_key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}" if pod.metadata else "?"


def left_alone(pod: Pod) -> bool:
    meta = pod.metadata
    if meta is None:
        return False
    if MIRROR_ANNOTATION in (meta.annotations or {}):
        return True
    return any(ref.kind == "DaemonSet" for ref in meta.ownerReferences or [])


def _uid(pod: Pod) -> str:
    return (pod.metadata.uid if pod.metadata else None) or ""


def blocking_budget_name(exc: ApiError) -> str | None:
    """The budget a 429 names in its causes, as a real API server words it."""
    details = exc.status.details if exc.status else None
    for cause in (details.causes if details else None) or []:
        if cause.reason == "DisruptionBudget" and (
            found := _BUDGET_CAUSE.match(cause.message or "")
        ):
            return found.group(1)
    return None


class _Drain:
    """One drain's state: pods to evict, pods terminating (by uid), budgets in the way."""

    def __init__(self, client: AsyncClient, inp: DrainNodeInput, policy: DrainPolicy) -> None:
        self.client = client
        self.inp = inp
        self.policy = policy
        self.to_evict: dict[str, Pod] = {}
        self.terminating: dict[str, str] = {}  # key -> uid of the pod we asked to go
        self.forced: set[str] = set()
        self.gone: list[str] = []
        self.ignored: list[str] = []
        self.budgets: dict[tuple[str, str], BudgetRefusal] = {}

    async def pods_on_node(self) -> list[Pod]:
        listing = self.client.list(Pod, namespace="*", fields={"spec.nodeName": self.inp.node_name})
        return [p async for p in listing]

    async def start(self) -> None:
        pods = await self.pods_on_node()
        self.ignored = sorted(pod_key(p) for p in pods if left_alone(p))
        for pod in pods:
            if left_alone(pod):
                continue
            if pod.metadata and pod.metadata.deletionTimestamp:
                self.terminating[pod_key(pod)] = _uid(pod)  # going already: just wait
            else:
                self.to_evict[pod_key(pod)] = pod

    async def evict_round(self) -> None:
        for key, pod in list(self.to_evict.items()):
            if await self._evict(key, pod):
                del self.to_evict[key]
                self.terminating[key] = _uid(pod)
                for budget in self.budgets.values():
                    if key in budget.pods:
                        budget.pods.remove(key)

    async def _evict(self, key: str, pod: Pod) -> bool:
        """True when the eviction was accepted (or the pod is gone already)."""
        assert pod.metadata is not None and pod.metadata.name is not None
        name, namespace = pod.metadata.name, pod.metadata.namespace
        eviction = Pod.Eviction(metadata=ObjectMeta(name=name, namespace=namespace))
        try:
            await self.client.create(eviction, name, namespace=namespace)
        except ApiError as exc:
            code = exc.status.code if exc.status else None
            if code == 404:
                return True
            if code == 429 and (budget := blocking_budget_name(exc)) is not None:
                await self._note_budget(namespace or "", budget, key, exc)
            elif code is not None and 400 <= code < 500 and code not in (409, 429):
                raise ApplicationError(
                    f"eviction of {key} refused ({code}): {exc.status.message}",
                    type=kubernetes_refusal(exc.status.reason or code),
                    non_retryable=True,
                ) from exc
            return False
        except (httpx2.HTTPError, OSError):
            return False  # transient: next round
        return True

    async def _note_budget(self, namespace: str, name: str, key: str, exc: ApiError) -> None:
        budget = self.budgets.setdefault(
            (namespace, name), BudgetRefusal(namespace=namespace, name=name)
        )
        causes = exc.status.details.causes if exc.status and exc.status.details else None
        budget.message = next(
            (c.message or "" for c in causes or [] if c.reason == "DisruptionBudget"), ""
        )
        if key not in budget.pods:
            budget.pods.append(key)
        try:
            found = await self.client.get(PodDisruptionBudget, name, namespace=namespace)
        except (ApiError, httpx2.HTTPError, OSError):
            return  # the refusal's message still names it
        if found.status is not None:
            budget.disruptions_allowed = found.status.disruptionsAllowed

    async def force_round(self) -> None:
        """Delete what evictions could not move (their grace periods still apply)."""
        for key, pod in list(self.to_evict.items()):
            assert pod.metadata is not None and pod.metadata.name is not None
            try:
                await self.client.delete(Pod, pod.metadata.name, namespace=pod.metadata.namespace)
            except ApiError as exc:
                if not exc.status or exc.status.code != 404:
                    continue
            except (httpx2.HTTPError, OSError):
                continue
            del self.to_evict[key]
            self.terminating[key] = _uid(pod)
            self.forced.add(key)

    async def reap(self) -> None:
        """Forget pods that have left the Node (or were replaced by a new pod of that name)."""
        if not self.terminating:
            return
        present = {pod_key(p): _uid(p) for p in await self.pods_on_node()}
        for key, uid in list(self.terminating.items()):
            if present.get(key) != uid:
                del self.terminating[key]
                self.gone.append(key)

    @property
    def done(self) -> bool:
        return not self.to_evict and not self.terminating

    def blocked_by(self) -> list[BudgetRefusal]:
        return [b for _, b in sorted(self.budgets.items()) if b.pods]

    def progress(self) -> dict[str, Any]:
        return {
            "evicted": sorted(k for k in self.gone if k not in self.forced),
            "terminating": sorted(self.terminating),
            "pending": sorted(self.to_evict),
            "blocked_by": [b.model_dump() for b in self.blocked_by()],
        }

    def result(self, outcome: DrainOutcome) -> DrainNodeResult:
        return DrainNodeResult(
            outcome=outcome,
            policy=self.policy,
            evicted=sorted(k for k in self.gone if k not in self.forced),
            deleted=sorted(k for k in self.gone if k in self.forced),
            skipped=sorted([*self.to_evict, *self.terminating]),
            ignored=self.ignored,
            blocked_by=self.blocked_by(),
        )


async def drain_node(
    client: AsyncClient, inp: DrainNodeInput, default_policy: DrainPolicy = DrainPolicy.FAIL
) -> DrainNodeResult:
    """Evict, wait for the pods to be gone, and apply the policy to what the timeout leaves."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + inp.timeout_seconds
    policy = inp.policy or default_policy
    drain = _Drain(client, inp, policy)
    await drain.start()
    beats = QuietHeartbeat()
    flush = asyncio.create_task(beats.flush_after_quiet())
    forcing = False
    try:
        while True:
            if forcing:
                await drain.force_round()
            else:
                await drain.evict_round()
            await drain.reap()
            if drain.done:
                break  # the result says the rest: no heartbeat
            remaining = deadline - loop.time()
            if remaining <= 0:
                if policy != DrainPolicy.FORCE or forcing:
                    break
                forcing = True
                deadline = loop.time() + inp.delete_wait_seconds
                continue
            beats.beat(drain.progress())
            await asyncio.sleep(min(inp.retry_interval_seconds, remaining, heartbeat_interval(5)))
    finally:
        flush.cancel()
    if drain.done:
        return drain.result(DrainOutcome.FORCED if drain.forced else DrainOutcome.DRAINED)
    return drain.result(DrainOutcome.BLOCKED)
