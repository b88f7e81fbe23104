"""The placement activity: fetch the inventory here, decide, return a small answer.

The host list never enters workflow history: only the request, the reservations and the
decision do.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field
from temporalio import activity
from temporalio.exceptions import ApplicationError

from placement.engine import place
from placement.fit import empty_inventory_decision
from placement.models import PlacementInput, Policy, VmRequest
from placement.names import NEAR_UNKNOWN, NOT_NEAR
from placement.reservations import Reservation, apply_reservations
from placement.topology_record import PlacedTopology

from .inventory import InventorySource

TOP_CANDIDATES = 5


class PlaceVmInput(BaseModel):
    inventory: str
    request: VmRequest
    reservations: list[Reservation] = Field(default_factory=list)


class PlaceVmResult(BaseModel):
    host: str | None
    vmid: int | None = None
    error: str | None = None
    never_fits: bool = False
    summary: str
    reason_counts: dict[str, int] = Field(default_factory=dict)
    top_scores: dict[str, dict[str, int]] = Field(default_factory=dict)
    # The chosen host's domains and what `near` wanted; None when the request names no topology.
    topology: PlacedTopology | None = None


class BatchRequest(BaseModel):
    spare_id: str
    request: VmRequest


class PlaceVmsInput(BaseModel):
    """Requests placed in order, each counting the reservations of those placed before it."""

    inventory: str
    requests: list[BatchRequest]
    reservations: list[Reservation] = Field(default_factory=list)


class PlaceVmsResult(BaseModel):
    decisions: list[PlaceVmResult]


def reservation_for(
    spare_id: str,
    request: VmRequest,
    host: str,
    vmid: int | None,
    topology: PlacedTopology | None = None,
) -> Reservation:
    return Reservation(
        spare_id=spare_id,
        vm_name=request.name,
        host=host,
        cpu=request.cpu,
        memory_mb=request.memory_mb,
        gpu=request.gpu,
        group=request.anti_affinity_group,
        vmid=vmid,
        topology=topology,
    )


def decide(snapshot: PlacementInput, reservations: list[Reservation]) -> PlaceVmResult:
    # Reserved VMs count as existing ones: `near` may name a spare the inventory does not
    # show yet, and a group's spread counts its reserved members.
    current = apply_reservations(snapshot, reservations)
    probe = empty_inventory_decision(current)
    if probe.error == NEAR_UNKNOWN:
        # Not a matter of room: no host is near something unknown, now or later.
        return PlaceVmResult(
            host=None,
            error=NEAR_UNKNOWN,
            never_fits=True,
            summary=probe.summary,
            topology=probe.topology,
        )
    if probe.host is None:
        summary = "the request is larger than any host of the inventory could hold"
        if NOT_NEAR in probe.reason_counts:
            summary = f"no host in the domain `near` wants could ever hold it ({probe.summary})"
        return PlaceVmResult(host=None, error="never_fits", never_fits=True, summary=summary)
    decision = place(current)
    return PlaceVmResult(
        host=decision.host,
        vmid=decision.vmid,
        error=decision.error,
        summary=decision.summary,
        reason_counts=decision.reason_counts,
        top_scores=decision.top_scores(TOP_CANDIDATES),
        topology=decision.topology,
    )


class PlacementActivities:
    def __init__(
        self, inventories: Mapping[str, InventorySource], policy: Policy | None = None
    ) -> None:
        # A configured policy wins over one that an inventory document carries.
        self._inventories = inventories
        self._policy = policy

    async def load(self, inventory: str, request: VmRequest) -> PlacementInput:
        source = self._inventories.get(inventory)
        if source is None:
            known = ", ".join(sorted(self._inventories)) or "none"
            raise ApplicationError(
                f"unknown inventory '{inventory}' (configured: {known})",
                type="UnknownInventory",
                non_retryable=True,
            )
        document = await source.load()
        document = {**document, "request": request.model_dump(mode="json")}
        if self._policy is not None:
            document["policy"] = self._policy.model_dump(mode="json")
        return PlacementInput.model_validate(document)

    @activity.defn
    async def place_vm(self, inp: PlaceVmInput) -> PlaceVmResult:
        snapshot = await self.load(inp.inventory, inp.request)
        return decide(snapshot, inp.reservations)

    @activity.defn
    async def place_vms(self, inp: PlaceVmsInput) -> PlaceVmsResult:
        """One inventory read for a whole batch of a ledger's pending reservations."""
        if not inp.requests:
            return PlaceVmsResult(decisions=[])
        snapshot = await self.load(inp.inventory, inp.requests[0].request)
        reservations = list(inp.reservations)
        decisions = []
        for item in inp.requests:
            decision = decide(snapshot.model_copy(update={"request": item.request}), reservations)
            if decision.host is not None:
                reservations.append(
                    reservation_for(
                        item.spare_id, item.request, decision.host, decision.vmid, decision.topology
                    )
                )
            # The ledger reads the host, vmid and summary; the per-host scores of hundreds of
            # decisions would only swell its history (the explain endpoint has them).
            decisions.append(decision.model_copy(update={"top_scores": {}}))
        return PlaceVmsResult(decisions=decisions)
