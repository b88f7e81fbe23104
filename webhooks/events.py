"""The webhook event catalogue: what virtflow tells an upgrade controller, and the message id."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from enum import StrEnum

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator


class EventType(StrEnum):
    RESERVED = "spare.reserved"
    VM_CREATED = "spare.vm_created"
    READY = "spare.ready"
    FAILED = "spare.failed"
    RELEASE_STARTED = "spare.release_started"
    RELEASED = "spare.released"


EVENT_DESCRIPTIONS: dict[EventType, str] = {
    EventType.RESERVED: "A host was chosen and its capacity reserved; `host` and `pool` are set.",
    EventType.VM_CREATED: "The VM exists on its host; `vm` is set. It has not joined yet.",
    EventType.READY: "The VM joined the cluster as a Ready, schedulable Node; `vm` is set.",
    EventType.FAILED: "The spare could not be provided and was cleaned up; `reason` says why.",
    EventType.RELEASE_STARTED: "Release began (request or TTL): cordon, drain, delete, destroy.",
    EventType.RELEASED: "The Node is gone, the VM destroyed and the capacity freed.",
}


class VmInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="VM name, also the Kubernetes Node name.")
    host: str = Field(description="Bare-metal host the VM runs on.")
    ip: str | None = None
    mac: str | None = None
    vmid: int | None = None


class SpareEvent(BaseModel):
    """The JSON body of every webhook; the same shape for every event type."""

    model_config = ConfigDict(extra="forbid")

    type: EventType
    spare_id: str = Field(min_length=1, max_length=200)
    cluster: str = Field(min_length=1, max_length=200)
    pool: str | None = None
    host: str | None = None
    vm: VmInfo | None = None
    reason: str | None = Field(default=None, max_length=4000)
    timestamp: AwareDatetime = Field(description="When the event happened (UTC).")
    data: dict[str, str] = Field(default_factory=dict)

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


def webhook_id(spare_id: str, run_id: str, event: EventType) -> str:
    """Deterministic per (spare, run, event), so every retry carries the same idempotency key."""
    key = json.dumps([spare_id, run_id, str(event)], separators=(",", ":"))
    return "msg_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
