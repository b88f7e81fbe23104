"""The contract of InventoryLedger: one long-lived workflow per inventory that serialises
reservations. Its state, its updates, queries and signal, and the activities' inputs that
carry a spare's request to it (workflows cannot send Updates to other workflows)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator
from temporalio.common import RetryPolicy

from placement.holds import Hold
from placement.models import VmRequest
from placement.reservations import Reservation

from .timeouts import ActivityTimeouts

__all__ = [
    "CAPACITY_GRANTED_SIGNAL",
    "CHANGE_HOLD_UPDATE",
    "FREE_UPDATE",
    "HAS_BOOKINGS_QUERY",
    "INVENTORY_LEDGER",
    "LEDGER_RETRY",
    "RESERVATIONS_QUERY",
    "RESERVE_GROUP_UPDATE",
    "RESERVE_UPDATE",
    "WAITERS_QUERY",
    "Budgeted",
    "ChangeHoldInput",
    "ChangeHoldResult",
    "ClusterCall",
    "FreeInput",
    "FreeResult",
    "GroupMember",
    "HeldRoom",
    "Hold",
    "Leaving",
    "LedgerCall",
    "LedgerState",
    "Refusal",
    "Reservation",
    "ReserveGroupInput",
    "ReserveGroupResult",
    "ReserveInput",
    "ReserveResult",
    "RoomAsk",
    "SpareRunsInput",
    "SpareRunsResult",
    "Waiter",
    "WarmMark",
    "holders",
    "ledger_workflow_id",
]

INVENTORY_LEDGER = "InventoryLedger"
RESERVE_UPDATE = "reserve"
# All members of one request (`count: N`), reserved together or not at all.
RESERVE_GROUP_UPDATE = "reserve_group"
FREE_UPDATE = "free"
# A booking's hold given a new end: shorter at once, longer if its host keeps room for it.
CHANGE_HOLD_UPDATE = "change_hold"
RESERVATIONS_QUERY = "reservations"
WAITERS_QUERY = "waiters"
# Whether the ledger holds any booking (a reservation whose hold starts later than it was made).
HAS_BOOKINGS_QUERY = "has_bookings"
# Sent by the ledger to a waiting spare once room is freed for it (carries its Reservation).
CAPACITY_GRANTED_SIGNAL = "capacity_granted"

# A reservation through the ledger answers quickly unless the inventory is unreachable; then
# retry a while, not forever, so the caller gets an answer.
LEDGER_RETRY = RetryPolicy(maximum_attempts=20, maximum_interval=timedelta(seconds=30))


def ledger_workflow_id(inventory: str) -> str:
    return f"ledger-{inventory}"


# A refusal names at most this many of its requester's own spares that hold the room.
HELD_BY_SHOWN = 10


def holders(named: list[str], others: int) -> str:
    """Who holds the room a refusal wanted: its requester's own cluster's spares by name (the
    first HELD_BY_SHOWN), the other clusters' only counted (whether they exist is not the
    requester's to know)."""
    more = len(named) - HELD_BY_SHOWN
    counted = [f"{more} more of its own"] if more > 0 else []
    if others:
        counted.append(
            "1 spare of another cluster" if others == 1 else f"{others} spares of other clusters"
        )
    return ", ".join([*named[:HELD_BY_SHOWN], *counted])


class Budget(BaseModel):
    """A cluster's surge budget (`max_spares`): its spares held by the ledger, warm ones not
    counted. Kept by the ledger of the cluster's one inventory, under the ledger's lock."""

    cluster: str
    max_spares: int = Field(ge=0)

    def refusal(self, in_use: int, adding: int = 1) -> str | None:
        """Why `adding` more spares do not fit the budget, or None when they do."""
        if in_use + adding <= self.max_spares:
            return None
        return (
            f"cluster '{self.cluster}' is at its surge budget: {in_use} of max_spares "
            f"{self.max_spares} spares in use, {adding} more asked for"
        )


class Budgeted(BaseModel):
    """Room that counts against a cluster (and its surge budget)."""

    # The cluster's surge budget; None: no budget.
    budget: Budget | None = None
    # The cluster (a budget's, when not given); None: a request of no cluster.
    cluster: str | None = None

    @model_validator(mode="after")
    def _cluster_of_budget(self) -> Self:
        if self.cluster is None and self.budget is not None:
            self.cluster = self.budget.cluster
        return self


class RoomAsk(Budgeted):
    """A spare's ask for room, which a spare that waits for room keeps whole. The VM is named
    after the spare (`request.name`)."""

    request: VmRequest
    priority: int = 0
    # When the spare holds its room (an ordinary spare: until its TTL can have ended; a
    # booking: from its lead start to its window's end); None: until freed.
    hold: Hold | None = None

    @property
    def spare_id(self) -> str:
        return self.request.name

    def ask(self) -> dict[str, Any]:
        """Only the ask, as keyword arguments for another model that extends RoomAsk."""
        return {name: getattr(self, name) for name in RoomAsk.model_fields}


class Waiter(RoomAsk):
    """A spare waiting for room (or for its cluster's budget); served by priority (high
    first), then arrival."""

    seq: int


class WarmMark(BaseModel):
    """A reservation held by a warm pool's spare: the lowest priority on the site, given back
    when a real request does not fit otherwise."""

    pool: str
    since: datetime
    # Asked to leave for a request that needs its room.
    taken_back_for: str | None = None


class LedgerState(BaseModel):
    """Everything the ledger knows; handed whole to continue-as-new."""

    inventory: str
    reservations: dict[str, Reservation] = Field(default_factory=dict)
    warm: dict[str, WarmMark] = Field(default_factory=dict)
    waiters: list[Waiter] = Field(default_factory=list)
    seq: int = 0
    # Set by the spare that starts the ledger; bounds the ledger's own placement calls.
    timeouts: ActivityTimeouts = Field(default_factory=ActivityTimeouts)
    # Recent create-to-Ready times by template (contracts/booking.py): bookings' leads.
    ready_times: dict[str, list[float]] = Field(default_factory=dict)
    # The cluster of each reservation whose request named one (by spare id): surge budgets
    # count by it, and a refusal names only the holders of the requester's own cluster.
    clusters: dict[str, str] = Field(default_factory=dict)
    # The hosts of bookings that have not started are looked at this often (the worker's
    # `booking_check_seconds`, told by each look), and were last looked at then.
    booking_check_seconds: int = Field(default=300, ge=1)
    booked_hosts_checked_at: datetime | None = None


class LedgerCall(BaseModel):
    """What every call to an inventory's ledger carries: whose ledger, where the activities
    that carry it run, and their timeouts."""

    model_config = ConfigDict(extra="forbid")

    inventory: str
    task_queue: str
    timeouts: ActivityTimeouts = Field(default_factory=ActivityTimeouts)

    @property
    def ledger_id(self) -> str:
        return ledger_workflow_id(self.inventory)


class ClusterCall(LedgerCall, Budgeted):
    """A ledger call for room that counts against a cluster (and its surge budget)."""


class Leaving(BaseModel):
    """A booking leaving a host that can no longer hold it: its reservation there is placed
    again over the same hold (its `move`-th move, which keeps each move's update apart)."""

    host: str
    move: int = Field(ge=1)


class ReserveInput(LedgerCall, RoomAsk):
    """A spare's request for room, through the ledger's `reserve` Update."""

    wait_for_capacity: bool = False
    # A warm pool's spare: its room is taken back for a real request that needs it.
    warm_pool: str | None = None
    # A booking whose host became unfit: placed again, anywhere but where it cannot be held.
    leaving: Leaving | None = None

    @property
    def update_id(self) -> str:
        """The ledger Update's id: a retried activity lands on the same update within a run."""
        if self.leaving is None:
            return f"reserve-{self.spare_id}"
        return f"reserve-{self.spare_id}-leaving-{self.leaving.host}-{self.leaving.move}"

    @property
    def booking(self) -> bool:
        """A hold that starts later: it neither waits nor takes room back from warm spares."""
        return self.hold is not None and self.hold.start is not None


class Refusal(BaseModel):
    """Why the ledger did not give the room asked for (empty when it did)."""

    reason: str | None = None
    # The reservations of the asker's own cluster holding the room it wanted, within its
    # hold (`reason` counts those of other clusters, unnamed).
    held_by: list[str] = Field(default_factory=list)


class HeldRoom(Refusal):
    """A refusal to hold room longer: who holds it, and when it could be had."""

    # How many spares of other clusters hold it (not named).
    held_by_others: int = 0
    # The latest end the room allows now, and when it is free again after what is in the
    # way (None: not while anything known holds it).
    free_until: datetime | None = None
    free_again_at: datetime | None = None


class ReserveResult(Refusal):
    status: Literal["reserved", "queued", "no_capacity", "never_fits"]
    reservation: Reservation | None = None


class GroupMember(BaseModel):
    spare_id: str
    request: VmRequest
    hold: Hold | None = None


class ReserveGroupInput(ClusterCall):
    """All members of one request (`count: N`), reserved together or not at all."""

    members: list[GroupMember] = Field(min_length=1)


class ReserveGroupResult(Refusal):
    """`reserved` (every member holds a reservation) or nothing reserved, with why."""

    status: Literal["reserved", "no_capacity", "never_fits", "over_budget"]
    reservations: list[Reservation] = Field(default_factory=list)
    placeable: int = Field(description="How many members could be placed together now")
    # over_budget: the cluster's spares in use before this request.
    in_use: int | None = None


class FreeInput(LedgerCall):
    spare_id: str


class FreeResult(BaseModel):
    freed: bool


class ChangeHoldInput(FreeInput):
    """A spare's reservation to hold until `end` instead (a booking's changed window)."""

    end: datetime


class ChangeHoldResult(HeldRoom):
    """`changed` (the reservation holds until the new end), `no_capacity` (its host has no
    room for the extension: nothing changed, the refusal says why), or `not_held` (the
    ledger holds nothing for it)."""

    status: Literal["changed", "no_capacity", "not_held"]
    reservation: Reservation | None = None


class SpareRunsInput(BaseModel):
    """Whether this spare's workflow still runs: the ledger gives room to no spare that ended."""

    spare_id: str


class SpareRunsResult(BaseModel):
    running: bool
    # How it ended, when it did (`terminated`, `completed`, ..., `not found`).
    status: str | None = None
