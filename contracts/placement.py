"""The contract of the placement activity (`activities/placement.py`): the requests to place
against one inventory, and a small answer per request (the host list never enters history)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from placement.holds import Hold
from placement.models import VmRequest
from placement.topology_record import PlacedTopology

from .ledger import Reservation


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
    # No host: the reservations that hold room on the hosts refused for want of room, within
    # the request's hold (spare ids, bookings among them).
    held_by: list[str] = Field(default_factory=list)


class PlaceVmsInput(BaseModel):
    """Requests placed in order, each counting the reservations of those placed before it."""

    inventory: str
    # Each VM is named after the spare (or task) it is for.
    requests: list[VmRequest]
    reservations: list[Reservation] = Field(default_factory=list)
    # Each request's hold, in the same order; none: every reservation counts, whenever it holds.
    holds: list[Hold] = Field(default_factory=list)
    # The ledger's clock: a reservation not freed yet holds at least until then.
    now: datetime | None = None

    def hold_of(self, k: int) -> Hold | None:
        return self.holds[k] if self.holds else None


class PlaceVmsResult(BaseModel):
    decisions: list[PlaceVmResult]


class RoomToExtendInput(BaseModel):
    """Whether `reservation`'s host keeps room for it until `end`, counting the others."""

    inventory: str
    reservation: Reservation
    # The ledger's other reservations on the same host.
    reservations: list[Reservation] = Field(default_factory=list)
    end: datetime
    now: datetime


class RoomToExtendResult(BaseModel):
    fits: bool
    summary: str
    held_by: list[str] = Field(default_factory=list)
    free_until: datetime | None = None
    free_again_at: datetime | None = None
