"""The placement activity: fetch the inventory here, decide, return a small answer; and the
one builder of the engine's input, which explain uses too.

The host list never enters workflow history: only the request, the reservations and the
decision do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts.booking import CheckBookedHostsInput, CheckBookedHostsResult, UnfitBooking
from contracts.failures import Failure
from contracts.ledger import Reservation
from contracts.placement import (
    PlaceVmResult,
    PlaceVmsInput,
    PlaceVmsResult,
    RoomToExtendInput,
    RoomToExtendResult,
)
from hypervisors.inventory import InventorySource, read_if_changed, source_named
from placement.booked_hosts import why_unfit
from placement.decision import Decision
from placement.engine import place
from placement.extension import room_to_extend
from placement.fit import empty_inventory_decision
from placement.holds import Hold
from placement.models import PlacementInput, Policy, VmRequest
from placement.names import NEAR_UNKNOWN, NOT_NEAR
from placement.reservations import apply_reservations, holding_over
from placement.table import HostTable

from .prepared_inventory import PreparedInventory

TOP_CANDIDATES = 5
# Rejections that more room (fewer reservations) would have cured.
ROOM_REASONS = frozenset(
    {
        "insufficient_cpu",
        "insufficient_memory",
        "insufficient_gpu",
        "insufficient_disk",
        "insufficient_device",
        "vm_quota_exceeded",
    }
)


def placement_input(
    document: Mapping[str, Any],
    request: VmRequest | Mapping[str, Any],
    reservations: Sequence[Reservation] = (),
    policy: Policy | Mapping[str, Any] | None = None,
) -> PlacementInput:
    """The engine's input, built one way for the ledger's placement and for explain.

    The inventory document (hosts, existing VMs, VM ids, and a policy it may carry), the
    request, `policy` over the document's own when given (the configured one, or an explain
    body's), and the ledger's pending reservations counted on their hosts.
    """
    data = {**document, "request": _as_json(request)}
    if policy is not None:
        data["policy"] = _as_json(policy)
    return apply_reservations(PlacementInput.model_validate(data), reservations)


def _as_json(value: BaseModel | Mapping[str, Any]) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else dict(value)


def decide(
    snapshot: PlacementInput,
    empty_table: HostTable | None = None,
    prepared: PreparedInventory | None = None,
) -> PlaceVmResult:
    """The ledger's answer for a snapshot that already counts the pending reservations
    (reserved VMs count as existing ones: `near` may name a spare the inventory does not show
    yet, and a group's spread counts its reserved members). `empty_table`: the emptied
    inventory's table, when the caller decides several requests over one inventory read;
    `prepared`: the inventory read the snapshot was made from, with its tables and engines."""
    if prepared is not None:
        empty_table = prepared.empty_table
    probe = empty_inventory_decision(
        snapshot, table=empty_table, engine=prepared.empty_engine if prepared else None
    )
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
        summary = f"no host of the inventory could ever hold it ({probe.summary})"
        if NOT_NEAR in probe.reason_counts:
            summary = f"no host in the domain `near` wants could ever hold it ({probe.summary})"
        return PlaceVmResult(host=None, error="never_fits", never_fits=True, summary=summary)
    decision = _placed(snapshot, prepared)
    return PlaceVmResult(
        host=decision.host,
        vmid=decision.vmid,
        error=decision.error,
        summary=decision.summary,
        reason_counts=decision.reason_counts,
        top_scores=decision.top_scores(TOP_CANDIDATES),
        topology=decision.topology,
    )


def _placed(snapshot: PlacementInput, prepared: PreparedInventory | None) -> Decision:
    if prepared is None:
        return place(snapshot)
    return prepared.engine.decide(
        prepared.table_of(snapshot),
        snapshot.request,
        snapshot.existing_vms,
        snapshot.used_vmids,
        snapshot.next_vmid,
    )


class PlacementActivities:
    def __init__(
        self,
        inventories: Mapping[str, InventorySource],
        policy: Policy | None = None,
        booking_check_seconds: int = 300,
    ) -> None:
        # A configured policy wins over one that an inventory document carries.
        self._inventories = inventories
        self._policy = policy
        self._booking_check_seconds = booking_check_seconds
        # Per inventory, its latest read made ready for placement (sources with a version).
        self._prepared: dict[str, PreparedInventory] = {}

    async def document(self, inventory: str) -> dict[str, Any]:
        return await source_named(self._inventories, inventory).load()

    async def prepared(self, inventory: str, request: VmRequest) -> PreparedInventory:
        """The inventory read now, validated and tabled unless its content is the one kept."""
        kept = self._prepared.get(inventory)
        source = source_named(self._inventories, inventory)
        read = await read_if_changed(source, kept.version if kept else None)
        if read is None:
            assert kept is not None  # only a version given can be answered "unchanged"
            return kept
        bare = placement_input(read.document, request, (), self._policy)
        prepared = PreparedInventory.of(bare, read.version)
        if read.version is not None:
            self._prepared[inventory] = prepared
        return prepared

    async def snapshot(
        self, inventory: str, request: VmRequest, reservations: Sequence[Reservation] = ()
    ) -> PlacementInput:
        """The engine's input for one request, as the ledger's placement builds it."""
        return self.snapshot_of(await self.document(inventory), request, reservations)

    def snapshot_of(
        self,
        document: dict[str, Any],
        request: VmRequest,
        reservations: Sequence[Reservation] = (),
    ) -> PlacementInput:
        """The same from an inventory read already made: one read serves several questions."""
        return placement_input(document, request, reservations, self._policy)

    @activity.defn
    async def place_vms(self, inp: PlaceVmsInput) -> PlaceVmsResult:
        """One inventory read for a whole batch of a ledger's pending reservations."""
        if not inp.requests:
            return PlaceVmsResult(decisions=[])
        if inp.holds and len(inp.holds) != len(inp.requests):
            raise ApplicationError(
                f"{len(inp.holds)} holds for {len(inp.requests)} requests",
                type=Failure.PLACEMENT_INPUT_INVALID,
                non_retryable=True,
            )
        prepared = await self.prepared(inp.inventory, inp.requests[0])
        bare = prepared.bare
        # Without holds every reservation counts whenever it holds: applied once for the batch.
        positions = prepared.positions
        base = bare
        if not inp.holds:
            base = apply_reservations(bare, inp.reservations, positions=positions)
        # Each decision counts the ones placed before it in this batch.
        placed: list[Reservation] = []
        decisions = []
        for k, request in enumerate(inp.requests):
            hold = inp.hold_of(k)
            counted = [*inp.reservations, *placed] if hold is not None else placed
            snapshot = apply_reservations(
                base.model_copy(update={"request": request}), counted, hold, inp.now, positions
            )
            # The emptied table is this inventory read's: the reservations change what is
            # allocated only, which the emptied inventory does not look at.
            decision = decide(snapshot, prepared=prepared)
            if decision.host is not None:
                placed.append(
                    Reservation.of(
                        request,
                        decision.host,
                        decision.vmid,
                        request.name,
                        decision.topology,
                        hold=hold,
                    )
                )
            elif hold is not None:
                decision.held_by = _held_by(snapshot, decision, counted, hold, inp.now, prepared)
            # The ledger reads the host, vmid and summary; the per-host scores of hundreds of
            # decisions would only swell its history (the explain endpoint has them).
            decisions.append(decision.model_copy(update={"top_scores": {}}))
        return PlaceVmsResult(decisions=decisions)

    @activity.defn
    async def check_booked_hosts(self, inp: CheckBookedHostsInput) -> CheckBookedHostsResult:
        """The bookings whose hosts can no longer hold them (one inventory read for all), and
        when the ledger looks again."""
        result = CheckBookedHostsResult(next_check_seconds=self._booking_check_seconds)
        if not inp.booked:
            return result
        held = {r.spare_id: r for r in inp.reservations}
        booked = [held[spare_id] for spare_id in inp.booked if spare_id in held]
        if not booked:
            return result
        first = booked[0]
        document = await self.document(inp.inventory)
        request = VmRequest(name=first.vm_name, **first.shape())
        inventory = placement_input(document, request, (), self._policy)
        for reservation in booked:
            why = why_unfit(inventory, reservation, inp.reservations, inp.now)
            if why is not None:
                result.unfit.append(
                    UnfitBooking(spare_id=reservation.spare_id, host=reservation.host, reason=why)
                )
        return result

    @activity.defn
    async def room_to_extend(self, inp: RoomToExtendInput) -> RoomToExtendResult:
        """Whether a booking's host keeps room for it until a later end (the ledger asks,
        under its lock, before it lets the window grow)."""
        own = inp.reservation
        base = placement_input(
            await self.document(inp.inventory),
            VmRequest(name=own.vm_name, **own.shape()),
            (),
            self._policy,
        )
        answer = room_to_extend(base, own, inp.reservations, inp.end, inp.now)
        return RoomToExtendResult(**asdict(answer))


def _held_by(
    snapshot: PlacementInput,
    decision: PlaceVmResult,
    reservations: Sequence[Reservation],
    hold: Hold,
    now: datetime | None,
    prepared: PreparedInventory | None = None,
) -> list[str]:
    """The reservations in the way: those holding room within `hold` on hosts the request was
    refused for want of room (in the order they were made). All of them, never more than the
    input carried: the ledger, which knows each one's cluster, chooses whom to name."""
    if not ROOM_REASONS & decision.reason_counts.keys():
        return []
    rejected = _placed(snapshot, prepared).rejected
    refused = {host for host, why in rejected.items() if why.split(":")[0] in ROOM_REASONS}
    return [r.spare_id for r in holding_over(reservations, hold, now) if r.host in refused]
