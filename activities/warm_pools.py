"""The activities of warm pools (contract: `contracts/warm.py`).

Which configured pools could serve a request (configuration stays in the worker), the claim
sent to a pool's workflow, the placement check of a request against warm spares' hosts, the
hand-over sent to a warm spare, and the warm mark on a Node. Workflows cannot send Updates to
other workflows, so the claim and the hand-over go through the Temporal client here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from lightkube.resources.core_v1 import Node
from lightkube.types import PatchType
from temporalio import activity
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowUpdateFailedError,
)
from temporalio.service import RPCError, RPCStatusCode

from contracts.ledger import Reservation
from contracts.spare import SpareResult, SpareStatus
from contracts.warm import (
    CLAIM_UPDATE,
    HAND_OVER_UPDATE,
    WARM_LABEL,
    ClaimResult,
    ClaimWarmInput,
    FitWarmInput,
    FitWarmResult,
    GiveWayInput,
    GiveWayResult,
    HandOverInput,
    HandOverRequest,
    HandOverResult,
    WarmCandidatesInput,
    WarmCandidatesResult,
    WarmNodeInput,
    WarmPoolSpec,
    warm_pool_workflow_id,
)
from placement.models import PlacementInput
from runtime.vm_templates import SiteTemplates

from .heartbeats import heartbeating
from .kubernetes import KubernetesActivities
from .ledger import ledger_reservations
from .placement import PlacementActivities, decide


def without_vm(snapshot: PlacementInput, warm: Reservation) -> PlacementInput:
    """The snapshot with the warm spare's own VM taken off its host: its room is the room a
    claim reuses. (A VM the inventory does not report yet was counted by its reservation,
    which the caller leaves out.)"""
    if not any(vm.name == warm.vm_name for vm in snapshot.existing_vms):
        return snapshot
    hosts = []
    for host in snapshot.hosts:
        if host.name == warm.host:
            host = host.model_copy(
                update={
                    "cpu_allocated": max(0, host.cpu_allocated - warm.cpu),
                    "memory_mb_allocated": max(0, host.memory_mb_allocated - warm.memory_mb),
                    "gpu_allocated": max(0, host.gpu_allocated - warm.gpu),
                    "disk_gb_allocated": max(0, host.disk_gb_allocated - warm.disk_gb),
                    "devices_allocated": {
                        name: max(0, count - warm.devices.get(name, 0))
                        for name, count in host.devices_allocated.items()
                    },
                    "vm_count": max(0, host.vm_count - 1),
                }
            )
        hosts.append(host)
    existing = [vm for vm in snapshot.existing_vms if vm.name != warm.vm_name]
    return snapshot.model_copy(update={"hosts": hosts, "existing_vms": existing})


def matching_pools(
    pools: Sequence[WarmPoolSpec], inp: WarmCandidatesInput, templates: SiteTemplates
) -> list[str]:
    """Pools whose spares are what the request asks for: cluster, inventory, the exact shape,
    pool and template. Everything else about the request is the placement engine's to judge
    on the warm spare's host."""

    def template_of(name: str | None, pool: str | None) -> str | None:
        chosen = templates.choose(name, pool) if templates.templates else None
        return chosen[0] if chosen else name

    request = inp.request
    wanted = template_of(inp.template, request.pool)
    return [
        spec.name
        for spec in pools
        if spec.size > 0
        and spec.cluster == inp.cluster
        and spec.inventory == inp.inventory
        and spec.shape() == request.shape()
        and request.pool in (None, spec.pool)
        and template_of(spec.template, spec.pool) == wanted
    ]


class WarmActivities:
    def __init__(
        self,
        client: Client,
        pools: Sequence[WarmPoolSpec],
        templates: SiteTemplates,
        placement: PlacementActivities,
        kube: KubernetesActivities,
    ) -> None:
        self._client = client
        self._pools = list(pools)
        self._templates = templates
        self._placement = placement
        self._kube = kube

    @activity.defn
    async def warm_candidates(self, inp: WarmCandidatesInput) -> WarmCandidatesResult:
        """A lookup in the worker's configuration (a local activity): no pool, no claim."""
        return WarmCandidatesResult(pools=matching_pools(self._pools, inp, self._templates))

    @activity.defn
    async def claim_warm_spare(self, inp: ClaimWarmInput) -> ClaimResult:
        """The pool's `claim` Update; its id makes a retried activity join the same claim."""
        reasons = []
        for name in inp.pools:
            handle = self._client.get_workflow_handle(warm_pool_workflow_id(name))
            update = asyncio.ensure_future(
                handle.execute_update(
                    CLAIM_UPDATE,
                    inp.claim,
                    id=f"claim-{inp.claim.spare_id}",
                    result_type=ClaimResult,
                )
            )
            try:
                try:
                    result = await heartbeating(asyncio.shield(update))
                except asyncio.CancelledError:
                    # A claim in flight is waited for, not abandoned: the spare that asked
                    # gives back what it got (the workflow waits for this answer).
                    result = await update
            except RPCError as err:
                if err.status != RPCStatusCode.NOT_FOUND:
                    raise
                reasons.append(f"{name}: not running")
                continue
            if result.hit:
                return result
            reasons.append(f"{name}: {result.reason}")
        return ClaimResult(hit=False, reason="; ".join(reasons) or "no warm pool matches")

    @activity.defn
    async def fit_warm_hosts(self, inp: FitWarmInput) -> FitWarmResult:
        """Each candidate's host judged by the placement engine, as the ledger would judge the
        request there with the warm spare's room given back."""
        reservations = await ledger_reservations(self._client, inp.inventory)
        if any(r.spare_id == inp.request.name for r in reservations):
            # Reserved already (a member of a `count` request): it has its room.
            return FitWarmResult(already_reserved=True, reason="the spare holds a reservation")
        fits: list[str] = []
        reason = None
        document: dict[str, Any] | None = None  # read once, for every candidate, if any
        for warm in inp.candidates:
            if inp.request.node_name not in (None, warm.host):
                reason = f"the request wants host {inp.request.node_name}"
                continue
            request = inp.request.model_copy(update={"node_name": warm.host})
            others = [r for r in reservations if r.spare_id != warm.spare_id]
            if document is None:
                document = await self._placement.document(inp.inventory)
            snapshot = self._placement.snapshot_of(document, request, others)
            decision = decide(without_vm(snapshot, warm))
            if decision.host == warm.host:
                fits.append(warm.spare_id)
            else:
                reason = f"{warm.host}: {decision.summary}"
        return FitWarmResult(fits=fits, reason=None if fits else reason)

    @activity.defn
    async def give_way(self, inp: GiveWayInput) -> GiveWayResult:
        """The fewest warm spares (the oldest among equals) whose room makes the request fit:
        per host, its warm spares taken off oldest first until the engine places it there."""
        by_host: dict[str, list[Reservation]] = {}
        for warm in inp.warm:
            by_host.setdefault(warm.host, []).append(warm)
        best: GiveWayResult | None = None
        document: dict[str, Any] | None = None  # read once, for every host, if any
        for host, spares in by_host.items():
            if inp.request.node_name not in (None, host):
                continue
            request = inp.request.model_copy(update={"node_name": host})
            for k in range(1, len(spares) + 1):
                if best is not None and k >= len(best.take_back):
                    break
                gone = spares[:k]
                others = [r for r in inp.reservations if r not in gone]
                if document is None:
                    document = await self._placement.document(inp.inventory)
                snapshot = self._placement.snapshot_of(document, request, others)
                for warm in gone:
                    snapshot = without_vm(snapshot, warm)
                if decide(snapshot).host == host:
                    best = GiveWayResult(take_back=[w.spare_id for w in gone], host=host)
                    break
        return best or GiveWayResult()

    @activity.defn
    async def hand_over_spare(self, inp: HandOverRequest) -> HandOverResult:
        """The warm spare's `hand_over` Update: accepted, it ends handed over; refused, it was
        not warm any more (released, unhealthy, handed to another). A retry after the spare
        ended handed over to this same request gets the same answer: accepted."""
        handle = self._client.get_workflow_handle(inp.warm_spare_id)
        try:
            status = await heartbeating(
                handle.execute_update(
                    HAND_OVER_UPDATE,
                    HandOverInput(spare_id=inp.spare_id),
                    id=f"hand-over-{inp.spare_id}",
                    result_type=SpareStatus,
                )
            )
        except WorkflowUpdateFailedError as err:
            return await self._handed_already(inp) or HandOverResult(
                accepted=False, reason=str(err.cause or err)
            )
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
            return await self._handed_already(inp) or HandOverResult(
                accepted=False, reason=f"{inp.warm_spare_id} has ended"
            )
        return HandOverResult(accepted=True, vm=status.vm)

    async def _handed_already(self, inp: HandOverRequest) -> HandOverResult | None:
        """The warm spare's end, when it ended handed over to this request."""
        handle = self._client.get_workflow_handle(inp.warm_spare_id, result_type=SpareResult)
        try:
            description = await handle.describe()
            if description.status != WorkflowExecutionStatus.COMPLETED:
                return None
            ended = await handle.result()
        except (RPCError, WorkflowFailureError):
            return None
        if ended.handed_to != inp.spare_id:
            return None
        return HandOverResult(accepted=True, vm=ended.vm)

    @activity.defn
    async def mark_warm_node(self, inp: WarmNodeInput) -> None:
        """Label and taint the Node `virtflow.io/warm=<pool>` (NoSchedule): nothing lands on
        it before a request claims it."""
        kube = await self._kube.client(self._kube.cluster_of(inp.cluster, inp.node_name))
        node = await kube.get(Node, inp.node_name)
        taints = [t.to_dict() for t in (node.spec.taints if node.spec and node.spec.taints else [])]
        if not any(t.get("key") == WARM_LABEL for t in taints):
            taints.append({"key": WARM_LABEL, "value": inp.pool, "effect": "NoSchedule"})
        patch = {"metadata": {"labels": {WARM_LABEL: inp.pool}}, "spec": {"taints": taints}}
        await kube.patch(Node, inp.node_name, patch, patch_type=PatchType.MERGE)

    @activity.defn
    async def claim_warm_node(self, inp: WarmNodeInput) -> None:
        """The warm mark off, the claiming spare's labels on: the Node is its spare's now."""
        kube = await self._kube.client(self._kube.cluster_of(inp.cluster, inp.node_name))
        node = await kube.get(Node, inp.node_name)
        have = node.spec.taints if node.spec and node.spec.taints else []
        taints = [t.to_dict() for t in have if t.key != WARM_LABEL]
        labels: dict[str, str | None] = {**inp.labels, WARM_LABEL: None}
        patch = {"metadata": {"labels": labels}, "spec": {"taints": taints}}
        await kube.patch(Node, inp.node_name, patch, patch_type=PatchType.MERGE)
