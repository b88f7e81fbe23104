"""The contract of a booking: a spare with a window. Its window, how its lead is decided, and
the ledger's messages that keep the create-to-Ready times the lead is measured from.

A booking holds its room from its lead start (`start - lead`) to its window's end; its spare
sleeps on a durable timer until the lead start, is created then, and is Ready by `start`.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from placement.holds import Hold
from placement.reservations import Reservation

from .ledger import HeldRoom

# Signal to an inventory's ledger: a spare's create-to-Ready time, for the leads of bookings.
READY_TIME_SIGNAL = "ready_time"
# Query of an inventory's ledger: the recent create-to-Ready times of a template.
READY_TIMES_QUERY = "ready_times"
# The ledger keeps this many recent times per template; the lead is their p90.
READY_TIMES_KEPT = 50
# The key of spares that name no template (the pool's, or the default).
ANY_TEMPLATE = "-"
# Update of a booked spare: its window's new end (PrepareSpare).
CHANGE_WINDOW_UPDATE = "change_window"
# `spare.window_ending` goes out this long before a window's end unless configured.
WINDOW_ENDING_SECONDS = 1800
# Signal from an inventory's ledger to a booking whose host can no longer hold it.
BOOKED_HOST_UNFIT_SIGNAL = "booked_host_unfit"
# A booking is rehearsed, unless its request says otherwise, when its window starts more than
# this far ahead (unless configured).
REHEARSAL_AHEAD_SECONDS = 3600


class Window(BaseModel):
    """When the spare must be Ready and until when it is held (RFC 3339, with an offset)."""

    model_config = ConfigDict(extra="forbid")

    start: AwareDatetime
    end: AwareDatetime
    # A spare of the booking's shape made Ready and released on its host ahead of the lead
    # start, so a broken template or host path shows in time; None: when the window starts
    # more than `booking_rehearsal_ahead_seconds` ahead.
    rehearsal: bool | None = None

    @model_validator(mode="after")
    def _ends_after_start(self) -> Window:
        if self.end <= self.start:
            raise ValueError("window.end must be after window.start")
        return self

    def hold(self, lead_seconds: int) -> Hold:
        """The room a booking holds: from its lead start to its window's end."""
        return Hold(
            start=self.start - timedelta(seconds=lead_seconds),
            end=self.end,
            window_start=self.start,
        )

    def seconds(self) -> int:
        return math.ceil((self.end - self.start).total_seconds())


class LeadPolicy(BaseModel):
    """How much earlier than its window a booking's spare is made, and how long before its
    window's end `spare.window_ending` is sent (from the settings)."""

    default_seconds: int = Field(default=900, ge=0)
    floor_seconds: int = Field(default=60, ge=0)
    margin_seconds: int = Field(default=120, ge=0)
    window_ending_seconds: int = Field(default=WINDOW_ENDING_SECONDS, ge=0)
    rehearsal_ahead_seconds: int = Field(default=REHEARSAL_AHEAD_SECONDS, ge=0)

    def lead(self, ready_times: list[float]) -> int:
        """p90 of the recent create-to-Ready times plus the margin, never under the floor;
        the default before any time was measured."""
        if not ready_times:
            return max(self.default_seconds, self.floor_seconds)
        return max(self.floor_seconds, math.ceil(p90(ready_times)) + self.margin_seconds)


def p90(values: list[float]) -> float:
    """The nearest-rank 90th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def template_key(template: str | None) -> str:
    return template or ANY_TEMPLATE


class ReadyTime(BaseModel):
    """One spare's create-to-Ready time, told to its inventory's ledger."""

    template: str = ANY_TEMPLATE
    seconds: float = Field(ge=0)


class BookingLeadInput(BaseModel):
    inventory: str
    template: str | None = None


class BookingLeadResult(BaseModel):
    lead_seconds: int
    # How many measured times the lead comes from (0: the configured default).
    measured: int = 0
    # How long before the window's end `spare.window_ending` goes out (0: never).
    window_ending_seconds: int = WINDOW_ENDING_SECONDS
    # A window starting more than this far ahead is rehearsed unless its request says not.
    rehearsal_ahead_seconds: int = REHEARSAL_AHEAD_SECONDS


class BookingInfo(BaseModel):
    """What a booked spare shows: its window, its lead and when its spare is made."""

    window: Window
    lead_seconds: int
    lead_start: datetime
    measured: int = 0
    # The hosts it was moved from while it waited, first to last (cordoned, gone, no room).
    moved_from: list[str] = Field(default_factory=list)
    rehearsal: RehearsalInfo | None = None


class RehearsalInfo(BaseModel):
    """A booking's rehearsal: its own spare (a child workflow) on the booked host."""

    spare_id: str
    host: str
    outcome: Literal["running", "passed", "failed"] = "running"
    reason: str | None = None


class HostUnfit(BaseModel):
    """A booked host that can no longer hold its booking: cordoned, gone from the
    inventory, or without room over the booking's hold any more."""

    host: str
    reason: str


class UnfitBooking(HostUnfit):
    spare_id: str


class CheckBookedHostsInput(BaseModel):
    """The ledger's look at the hosts of the bookings that have not started yet."""

    inventory: str
    # Every reservation of the ledger: a booked host's room is judged with all of them.
    reservations: list[Reservation]
    # The bookings to judge (their holds start later).
    booked: list[str]
    now: datetime


class CheckBookedHostsResult(BaseModel):
    unfit: list[UnfitBooking] = Field(default_factory=list)
    # When the ledger looks again (the worker's `booking_check_seconds`).
    next_check_seconds: int = Field(default=300, ge=1)


class WindowChange(BaseModel):
    """A booked spare's window to end at `end` instead: later (if its host keeps room for
    it) or sooner. Its start stays."""

    model_config = ConfigDict(extra="forbid")

    end: AwareDatetime


class WindowChangeResult(HeldRoom):
    """`changed`: the window (and the room it holds) ends at the new end; `no_capacity`:
    nothing changed, the room is held by `held_by` (its own cluster's spares) and
    `held_by_others` spares of other clusters from `free_until`, free again from
    `free_again_at`."""

    status: Literal["changed", "no_capacity"]
    window: Window
