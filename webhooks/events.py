"""The webhook event catalogue: what virtflow tells an upgrade controller, and the message id."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

# Version of the body's shape, in the schemas' `$id`: 2 moved the spare's fields under `data`.
EVENT_SCHEMA_VERSION = 2


class EventType(StrEnum):
    RESERVED = "spare.reserved"
    VM_CREATED = "spare.vm_created"
    READY = "spare.ready"
    FAILED = "spare.failed"
    RELEASE_STARTED = "spare.release_started"
    RELEASED = "spare.released"
    UNHEALTHY = "spare.unhealthy"
    REPLACED = "spare.replaced"
    WINDOW_ENDING = "spare.window_ending"
    WARM_POOL_SHORT = "warm_pool.short"
    BOOKING_MOVED = "booking.moved"
    BOOKING_REHEARSAL_FAILED = "booking.rehearsal_failed"


EVENT_DESCRIPTIONS: dict[EventType, str] = {
    EventType.RESERVED: "A host was chosen and reserved; `data.host` and `data.pool` are set, "
    "and `data.topology` when the request named a topology (spread, near, anti-affinity scope).",
    EventType.VM_CREATED: "The VM exists on its host; `data.vm` is set. It has not joined yet.",
    EventType.READY: "The VM joined the cluster as a Ready, schedulable Node; `data.vm` is set.",
    EventType.FAILED: "The spare could not be provided; it was cleaned up. `data.reason` says why.",
    EventType.RELEASE_STARTED: "Release began (request or TTL): cordon, drain, delete, destroy.",
    EventType.RELEASED: (
        "The release finished: the Node is gone, the VM destroyed and the capacity freed, or, "
        "with drain policy `leave`, the Node kept cordoned (`data.drain.left_cordoned`)."
    ),
    EventType.UNHEALTHY: (
        "A held spare's Node has been NotReady, Unknown or unreachable for longer than "
        "`unhealthy_after_seconds`; `data.reason` says what is wrong."
    ),
    EventType.REPLACED: (
        "An unhealthy spare's replacement is Ready on another host (`data.replacement`); "
        "the old spare is released next."
    ),
    EventType.WINDOW_ENDING: (
        "A booked spare's window ends soon (`booking_window_ending_seconds` ahead, or at once "
        "when it is Ready later than that); `data.window` is the window, `data.reason` says "
        "when it ends. Extend the window or let the spare go; sent again for a new end."
    ),
    EventType.WARM_POOL_SHORT: (
        "A warm pool cannot keep its size: no room for another warm spare, or its spares fail "
        "before they are Ready; `data.reason` says which. `data.spare_id` is the pool's "
        "workflow id (`warm-pool-<name>`) and `data.pool` its name. Sent once per shortage."
    ),
    EventType.BOOKING_REHEARSAL_FAILED: (
        "A booking's rehearsal (a spare of its shape made Ready and released on its host ahead "
        "of the lead start) failed; `data.reason` names the rehearsal's spare and says why. The "
        "booking stays: there is time to fix the template or the host before its window."
    ),
    EventType.BOOKING_MOVED: (
        "A booking's host was cordoned, left the inventory or lost its room before the "
        "booking's spare was made: its room is held on another host now (`data.move`, and "
        "`data.host` the new host); `data.reason` says what happened to the old one."
    ),
}


class VmFacts(BaseModel):
    """What the hypervisor says about a VM once it exists; the `vm` of every event.

    Other fields a hypervisor reports (its own size, timestamps) are left out: only these
    travel, in events and in workflow history.
    """

    model_config = ConfigDict(extra="ignore")

    name: str = Field(description="VM name, also the Kubernetes Node name.")
    host: str = Field(description="Bare-metal host the VM runs on.")
    ip: str | None = None
    mac: str | None = None
    vmid: int | None = None


class NearInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    vm: str | None = Field(
        default=None, description="The VM near which the spare was asked for (from the Node)."
    )
    node: str | None = Field(default=None, description="The Node the request named, if any.")
    topology_key: str
    required: bool
    host: str | None = Field(default=None, description="The host of that VM.")
    domain: str | None = Field(
        default=None, description="The domain wanted: that host's under `topology_key`."
    )


class TopologyInfo(BaseModel):
    """Where the spare's host is among the site's failure domains, and what was asked for.

    The shape of virtflow's placement record (`placement.topology.PlacedTopology`), declared
    here because the webhook contract imports nothing of the rest of virtflow.
    """

    model_config = ConfigDict(extra="forbid")

    domains: dict[str, str | None] = Field(
        description="The host's domain under every topology key the request named "
        "(null: the host lacks that key)."
    )
    near: NearInfo | None = None


class BlockingBudget(BaseModel):
    """A PodDisruptionBudget that refused an eviction during the drain."""

    model_config = ConfigDict(extra="forbid")

    namespace: str
    name: str
    disruptions_allowed: int | None = Field(
        default=None, description="The budget's status.disruptionsAllowed when last read."
    )


class DrainInfo(BaseModel):
    """How the release's drain went, and what the drain policy did about what remained."""

    model_config = ConfigDict(extra="forbid")

    outcome: Literal["drained", "forced", "blocked"] = Field(
        description="drained: every pod gone; forced: the rest deleted past their budgets; "
        "blocked: pods remained at the drain timeout."
    )
    policy: Literal["fail", "force", "leave"]
    evicted: list[str] = Field(default_factory=list, description="namespace/name, evicted and gone")
    deleted: list[str] = Field(
        default_factory=list,
        description="Deleted past their budgets (policy force, as `kubectl drain "
        "--disable-eviction` would)",
    )
    not_evicted: list[str] = Field(default_factory=list)
    blocked_by: list[BlockingBudget] = Field(default_factory=list)
    left_cordoned: bool = Field(
        default=False, description="policy leave: the VM was kept and its Node left cordoned"
    )


class Replacement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    old: str = Field(description="The unhealthy spare's id.")
    new: str = Field(description="The replacement spare's id (its own events follow).")
    new_host: str | None = None


class BookingWindow(BaseModel):
    """A booked spare's window: Ready from `start`, released at `end`."""

    model_config = ConfigDict(extra="forbid")

    start: AwareDatetime
    end: AwareDatetime


class HostMove(BaseModel):
    model_config = ConfigDict(extra="forbid")

    from_host: str = Field(description="The host the booking held its room on.")
    to_host: str = Field(description="The host that holds it now.")


class SpareEventData(BaseModel):
    """What happened to which spare: the `data` object of every event."""

    model_config = ConfigDict(extra="forbid")

    spare_id: str = Field(min_length=1, max_length=200)
    cluster: str = Field(min_length=1, max_length=200)
    pool: str | None = None
    host: str | None = None
    vm: VmFacts | None = None
    reason: str | None = Field(default=None, max_length=4000)
    topology: TopologyInfo | None = Field(
        default=None, description="On spare.reserved, when the request named a topology."
    )
    drain: DrainInfo | None = None
    replacement: Replacement | None = None
    window: BookingWindow | None = Field(
        default=None, description="On spare.window_ending: the booking's window."
    )
    move: HostMove | None = Field(default=None, description="On booking.moved.")


class SpareEvent(BaseModel):
    """The JSON body of every webhook, in the Standard Webhooks shape `{type, timestamp, data}`.

    `type` and `timestamp` stay at the top so a receiver can route and age an event without
    knowing its fields; everything about the spare is under `data`.
    """

    model_config = ConfigDict(extra="forbid")

    type: EventType
    timestamp: AwareDatetime = Field(description="When the event happened (UTC).")
    data: SpareEventData

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        # One time zone on the wire, so equal events produce equal bytes.
        return value.astimezone(UTC)

    def to_body(self) -> bytes:
        """Compact JSON with sorted keys: the exact bytes that are signed and sent."""
        return json.dumps(
            self.model_dump(mode="json"),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        ).encode("utf-8")


def webhook_id(spare_id: str, run_id: str, event: EventType, occurrence: int = 0) -> str:
    """Deterministic per (spare, run, event), so every retry carries the same idempotency key.

    An event that can happen more than once per run (spare.unhealthy after a recovery) counts
    its occurrences from 0; the first keeps the key every other event has.
    """
    parts: list[str | int] = [spare_id, run_id, str(event)]
    key = json.dumps([*parts, occurrence] if occurrence else parts, separators=(",", ":"))
    return "msg_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
