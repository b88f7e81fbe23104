"""The placement activity: fetch the inventory here, decide, return a small answer.

The host list never enters workflow history: only the request, the reservations and the
decision do.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field
from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts.ledger import Reservation
from placement.engine import place
from placement.fit import largest_fit_possible
from placement.models import PlacementInput, Policy, VmRequest
from placement.reservations import apply_reservations

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


class PlaceVmsInput(BaseModel):
    """Requests placed in order, each counting the reservations of those placed before it."""

    inventory: str
    # Each VM is named after the spare (or task) it is for.
    requests: list[VmRequest]
    reservations: list[Reservation] = Field(default_factory=list)


class PlaceVmsResult(BaseModel):
    decisions: list[PlaceVmResult]


def decide(snapshot: PlacementInput, reservations: list[Reservation]) -> PlaceVmResult:
    if not largest_fit_possible(snapshot):
        return PlaceVmResult(
            host=None,
            error="never_fits",
            never_fits=True,
            summary="the request is larger than any host of the inventory could hold",
        )
    decision = place(apply_reservations(snapshot, reservations))
    return PlaceVmResult(
        host=decision.host,
        vmid=decision.vmid,
        error=decision.error,
        summary=decision.summary,
        reason_counts=decision.reason_counts,
        top_scores=decision.top_scores(TOP_CANDIDATES),
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
        snapshot = await self.load(inp.inventory, inp.requests[0])
        reservations = list(inp.reservations)
        decisions = []
        for request in inp.requests:
            decision = decide(snapshot.model_copy(update={"request": request}), reservations)
            if decision.host is not None:
                reservations.append(
                    Reservation.of(request, decision.host, decision.vmid, spare_id=request.name)
                )
            # The ledger reads the host, vmid and summary; the per-host scores of hundreds of
            # decisions would only swell its history (the explain endpoint has them).
            decisions.append(decision.model_copy(update={"top_scores": {}}))
        return PlaceVmsResult(decisions=decisions)
