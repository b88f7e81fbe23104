"""The contract of PrepareSpare: its input, result, status query, release update and signal,
and the builders that turn a request into what the ledger and the provisioner take."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from temporalio.common import SearchAttributePair, TypedSearchAttributes

from contracts.booking import BookingInfo, Window
from contracts.drain import DrainNodeResult, DrainPolicy
from contracts.ledger import Hold, Reservation
from placement.models import (
    REGEX,
    VMID_RANGE,
    LabelMap,
    Near,
    NodeAffinity,
    Taint,
    Tolerations,
    TopologyKey,
    TopologySpread,
    VmRequest,
    VmShape,
    checked_vmid_range,
    compiled_regex,
)
from placement.topology_record import PlacedTopology

from .common import ANY_POOL, CLUSTER, PHASE, POOL
from .timeouts import ActivityTimeouts
from .vm import VmFacts, VmSpec
from .warm import WARM_LABEL, WarmInfo

PREPARE_SPARE = "PrepareSpare"
STATUS_QUERY = "status"
RELEASE_UPDATE = "release"
# Update answered once the spare's first ask for room was answered (the API's POST asks it
# when the inventory holds bookings, so a refusal is a 409 naming who holds the room).
ROOM_ANSWER_UPDATE = "room_answer"
# The release that cannot be refused: honoured as soon as the spare is Ready.
REQUEST_RELEASE_SIGNAL = "request_release"
# Signal from a replacement spare, once Ready, to the unhealthy spare it replaces.
REPLACEMENT_READY_SIGNAL = "replacement_ready"

# Labels of a spare's VM and Node: the reconciler finds orphans by SPARE_LABEL.
SPARE_LABEL = "virtflow.io/spare"
SPARE_ID_LABEL = "virtflow.io/spare-id"
CLUSTER_LABEL = "virtflow.io/cluster"
# Set on a spare's Node by the release's cordon: the held spare's watch ends when it sees it.
RELEASING_ANNOTATION = "virtflow.io/releasing"


# The memo key of the request's hash. virtflow's own door (the API, `virtflow prepare`) sets it
# and starts with id reuse policy REJECT_DUPLICATE, so a run that has it is its id's only one.
MEMO_REQUEST_HASH = "virtflow.request_sha256"

# The qemu-scheduler's annotations (CAPPX manifests carry them), honoured in `annotations`.
NODE_REGEX_ANNOTATION = "node.qemu-scheduler/regex"
VMID_RANGE_ANNOTATION = "vmid.qemu-scheduler/range"
VMID_REGEX_ANNOTATION = "vmid.qemu-scheduler/regex"
# Each annotation's check, in the order a request's are checked.
_ANNOTATION_CHECKS = {
    VMID_RANGE_ANNOTATION: checked_vmid_range,
    NODE_REGEX_ANNOTATION: compiled_regex,
    VMID_REGEX_ANNOTATION: compiled_regex,
}

# Every spare workflow id, hence every spare VM and Node name, starts with this.
SPARE_ID_PREFIX = "spare-"


def spare_workflow_id(cluster: str, request_id: str) -> str:
    """Derived from the request so a repeated POST or CLI start finds the same spare."""
    return f"{SPARE_ID_PREFIX}{cluster}-{request_id}"


# A DNS label: the spare id becomes the VM name and the Kubernetes Node name.
DNS_LABEL = r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"
# A Kubernetes label value: pools and groups end up as labels and playbook variables.
LABEL_VALUE = r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
NODE_NAME_MAX = 63


class Phase(StrEnum):
    VALIDATING = "validating"
    RESERVING = "reserving"
    WAITING_CAPACITY = "waiting_capacity"
    CREATING_VM = "creating_vm"
    WAITING_READY = "waiting_ready"
    READY = "ready"
    RELEASING = "releasing"
    RELEASED = "released"
    COMPENSATING = "compensating"
    FAILED = "failed"
    CANCELLED = "cancelled"
    # A warm pool's spare: Ready, tainted `virtflow.io/warm`, waiting to be claimed.
    WARM = "warm"
    # A warm spare claimed by a request: the request's spare owns its VM and Node now.
    HANDED_OVER = "handed_over"
    # A booking: its room is held, its spare is made at the lead start.
    BOOKED = "booked"


class SpareRequest(VmShape):
    """What an upgrade controller asks for. Everything here is safe to keep in history."""

    model_config = ConfigDict(extra="forbid")

    request_id: str = Field(min_length=1, max_length=40, pattern=DNS_LABEL)
    cluster: str = Field(min_length=1, max_length=40, pattern=DNS_LABEL)
    inventory: str = Field(default="default", min_length=1, max_length=63, pattern=DNS_LABEL)
    pool: str | None = Field(default=None, max_length=63, pattern=LABEL_VALUE)
    dedicated: bool = False
    tolerations: Tolerations = Field(default_factory=list, max_length=64)
    node_selector: LabelMap = Field(default_factory=dict, max_length=64)
    node_affinity: NodeAffinity | None = None
    anti_affinity_group: str | None = Field(default=None, max_length=63, pattern=LABEL_VALUE)
    # `host`, `rack` or a host label key such as topology.kubernetes.io/zone.
    anti_affinity_scope: TopologyKey = "host"
    # Kubernetes' PodTopologySpread over the spares of a group (null group: the request's
    # anti_affinity_group), and the domain of the node being replaced (PLACEMENT.md, Topology).
    topology_spread: TopologySpread = Field(default_factory=list, max_length=8)
    near: Near | None = None
    # One of the site's VM templates (`vm_templates`) by name; None: the pool's, or `default`.
    # Never user data: the site writes that.
    template: str | None = Field(default=None, max_length=63, pattern=DNS_LABEL)
    # Timeouts are the engine's; these bound each step (bare metal needs longer: raise them).
    create_timeout_seconds: int = Field(default=1200, ge=1, le=7 * 24 * 3600)
    ready_timeout_seconds: int = Field(default=900, ge=1, le=7 * 24 * 3600)
    drain_timeout_seconds: int = Field(default=600, ge=1, le=24 * 3600)
    # What a drain that cannot finish in time leads to; None: the worker's `drain_policy`.
    drain_policy: DrainPolicy | None = None
    # While held: a Node unhealthy this long is reported (spare.unhealthy), and replaced when
    # on_unhealthy is "replace" and at most max_unhealthy of the cluster's spares are unhealthy.
    unhealthy_after_seconds: int = Field(default=300, ge=1, le=7 * 24 * 3600)
    # `release`: let the spare go (a warm pool's spare: its pool makes a new one).
    on_unhealthy: Literal["notify", "replace", "release"] = "notify"
    max_unhealthy: int = Field(default=1, ge=0, le=10_000)
    # Hosts the VM must not be placed on (a replacement avoids its predecessor's host).
    avoid_hosts: list[str] = Field(default_factory=list, max_length=64)
    # The hypervisor's VM id (Proxmox), as the qemu-scheduler chooses it: the smallest free id
    # in "a-b", or the smallest free id from the cluster's next one whose digits match
    # (unanchored); neither: the hypervisor's next free id.
    # (Each length is checked before the field's validator, as for a plain string.)
    vmid_range: Annotated[str, Field(max_length=32), VMID_RANGE] | None = None
    vmid_regex: Annotated[str, Field(max_length=256), REGEX] | None = None
    # Kubernetes-style annotations. The qemu-scheduler's keys work as in a CAPPX manifest:
    # node.qemu-scheduler/regex (host names, unanchored), vmid.qemu-scheduler/range and
    # vmid.qemu-scheduler/regex (as vmid_range and vmid_regex, which win when both are given).
    annotations: dict[str, str] = Field(default_factory=dict, max_length=64)
    # The spare this one replaces: told when this one is Ready.
    replaces: str | None = Field(default=None, max_length=NODE_NAME_MAX)
    ttl_seconds: int = Field(default=6 * 3600, ge=1, le=30 * 24 * 3600)
    # Receivers are named in the worker's configuration; None means every configured one.
    receivers: list[str] | None = Field(default=None, max_length=32)
    wait_for_capacity: bool = False
    capacity_deadline_seconds: int = Field(default=1800, ge=1, le=7 * 24 * 3600)
    priority: int = Field(default=0, ge=-1000, le=1000)
    # How soon a dead worker's activity is tried again elsewhere (tests shorten these).
    timeouts: ActivityTimeouts = Field(default_factory=ActivityTimeouts)
    # Set by a warm pool on its own spares only: Ready, the spare waits tainted to be claimed.
    warm_pool: str | None = Field(default=None, max_length=63, pattern=LABEL_VALUE)
    # A booking: Ready when the window starts, held until it ends (then `ttl_seconds` is not
    # used); its room is held from the lead start. Never served by a warm pool.
    window: Window | None = None
    # Set by a booking on its rehearsal's spare (the booking's id): never served by a warm pool.
    rehearsal_of: str | None = Field(default=None, max_length=NODE_NAME_MAX)

    @field_validator("cluster")
    @classmethod
    def _spare_id_is_a_node_name(cls, cluster: str, info: ValidationInfo) -> str:
        # The spare id becomes the VM's hostname and Node name: one DNS label at most.
        spare_id = spare_workflow_id(cluster, info.data.get("request_id", ""))
        if "request_id" in info.data and len(spare_id) > NODE_NAME_MAX:
            raise ValueError(
                f"the spare id '{spare_id}' is {len(spare_id)} characters; as a VM and Node "
                f"name it may have at most {NODE_NAME_MAX}: shorten request_id or cluster"
            )
        return cluster

    @field_validator("annotations")
    @classmethod
    def _scheduler_annotations_are_valid(cls, annotations: dict[str, str]) -> dict[str, str]:
        # The qemu-scheduler ignores a bad value (or panics on "100"); a request says so at once.
        for key, check in _ANNOTATION_CHECKS.items():
            if (value := annotations.get(key)) is not None:
                try:
                    check(value)
                except ValueError as exc:
                    raise ValueError(f"{key}: {exc}") from None
        return annotations

    @property
    def spare_id(self) -> str:
        return spare_workflow_id(self.cluster, self.request_id)

    def vm_request(self, spare_id: str) -> VmRequest:
        """What placement is asked: the VM is named after the spare (its workflow id)."""
        return VmRequest.asked_by(
            self,
            name=spare_id,
            node_name_regex=_node_pattern(
                self.annotations.get(NODE_REGEX_ANNOTATION), self.avoid_hosts
            ),
            vmid_range=self.vmid_range or self.annotations.get(VMID_RANGE_ANNOTATION),
            vmid_regex=self.vmid_regex or self.annotations.get(VMID_REGEX_ANNOTATION),
        )

    def hold(self, now: datetime, lead_seconds: int = 0) -> Hold:
        """When the spare holds its room: a booking from its lead start to its window's end;
        an ordinary spare until its TTL can have ended (its creation, readiness and drain
        bounded by their timeouts, then the TTL)."""
        if self.window is not None:
            return self.window.hold(lead_seconds)
        longest = (
            self.create_timeout_seconds
            + self.ready_timeout_seconds
            + self.ttl_seconds
            + self.drain_timeout_seconds
        )
        return Hold(end=now + timedelta(seconds=longest))

    def vm_spec(self, spare_id: str, reservation: Reservation) -> VmSpec:
        """What the provisioner creates, on the host and with the VM id the ledger reserved."""
        return VmSpec(
            name=spare_id,
            host=reservation.host,
            vmid=reservation.vmid,
            anti_affinity_group=self.anti_affinity_group,
            labels=self.spare_labels(spare_id),
            taints=self.registration_taints(),
            template=self.template,
            pool=self.pool,
            **self.shape(),
        )

    def registration_taints(self) -> list[Taint]:
        """A warm spare's Node registers tainted `virtflow.io/warm` (NoSchedule): nothing
        lands on it before a request claims it, not even between Ready and its warm mark."""
        if self.warm_pool is None:
            return []
        return [Taint(key=WARM_LABEL, value=self.warm_pool, effect="NoSchedule")]

    def spare_labels(self, spare_id: str) -> dict[str, str]:
        """The labels of the spare's VM and of its Node."""
        return {SPARE_LABEL: "true", SPARE_ID_LABEL: spare_id, CLUSTER_LABEL: self.cluster}

    def summary(self) -> str:
        """The one line the Temporal UI shows for the spare."""
        extras = [f"{self.gpu} GPU"] if self.gpu else []
        extras += [f"{self.disk_gb} GB disk"] if self.disk_gb else []
        extras += [f"{n} {name}" for name, n in self.devices.items() if n]
        size = ", ".join([f"{self.cpu} CPU", f"{self.memory_mb} MiB", *extras])
        return f"spare for {self.cluster}: {size}"


def _node_pattern(wanted: str | None, avoid: list[str]) -> str | None:
    """A host-name pattern (searched, unanchored) that matches `wanted` and none of `avoid`
    (a replacement's exclusion)."""
    if not avoid:
        return wanted
    pattern = "^(?!(?:" + "|".join(re.escape(h) for h in sorted(set(avoid))) + ")$)"
    return pattern if wanted is None else f"{pattern}(?=.*(?:{wanted}))"


class StepRecord(BaseModel):
    phase: Phase
    at: datetime
    detail: str = ""


class RoomAnswer(BaseModel):
    """The ledger's first answer to a spare's request for room: `reserved` (or a warm spare
    taken), `queued` (it waits for room), `refused` (no room: it fails, `held_by` names who
    holds the room in its time), or `ended` (it ended before it asked)."""

    status: Literal["reserved", "queued", "refused", "ended"]
    reason: str | None = None
    # refused: the failure type (NoCapacity, NeverFits).
    failure: str | None = None
    held_by: list[str] = Field(default_factory=list)


class SpareStatus(BaseModel):
    """The answer of the `status` query, also what `GET /spare/{id}` shows."""

    spare_id: str
    cluster: str
    pool: str | None = None
    phase: Phase = Phase.VALIDATING
    host: str | None = None
    vmid: int | None = None
    # The host's domains under the keys the request named, and what `near` wanted.
    topology: PlacedTopology | None = None
    vm: VmFacts | None = None
    waiting_for: list[str] = Field(default_factory=list)
    error: str | None = None
    # Webhook receivers that answered 410 Gone: nothing more is sent to them for this spare.
    disabled_receivers: list[str] = Field(default_factory=list)
    # Deliveries and publishes that gave up (refused, or retries exhausted), with the reason.
    undelivered: list[str] = Field(default_factory=list)
    steps: list[StepRecord] = Field(default_factory=list)
    # While held: what is wrong with the Node, once that has lasted unhealthy_after_seconds.
    unhealthy: str | None = None
    unhealthy_since: datetime | None = None
    replaced_by: str | None = None
    # How the release's drain went.
    drain: DrainNodeResult | None = None
    # Came from a warm pool: which, since when the VM was Ready, whose VM and Node it took.
    warm: WarmInfo | None = None
    # A warm spare claimed by a request: that request's spare.
    handed_to: str | None = None
    # A booking: its window, its lead and when its spare is made.
    booking: BookingInfo | None = None


class ReplacementReady(BaseModel):
    """Signal from a replacement spare to the spare it replaces: it is Ready."""

    spare_id: str
    host: str | None = None


class SpareResult(BaseModel):
    spare_id: str
    phase: Phase
    host: str | None = None
    vm: VmFacts | None = None
    reason: str | None = None
    # A warm spare that ended handed over: the spare that owns its VM and Node now.
    handed_to: str | None = None


class ReleaseRequest(BaseModel):
    """Body of the `release` update and signal."""

    reason: str = Field(default="released by request", max_length=500)


def start_search_attributes(req: SpareRequest) -> TypedSearchAttributes:
    """What a spare the API starts shows in search from its first moment.

    The API has checked the receivers already, so the first step that can take a while is the
    reservation. Set at start, these cost no upsert: the workflow publishes only values that
    differ (a spare started without them, from the CLI, publishes them itself).
    """
    return TypedSearchAttributes(
        [
            SearchAttributePair(CLUSTER, req.cluster),
            SearchAttributePair(POOL, req.pool or ANY_POOL),
            SearchAttributePair(PHASE, Phase.RESERVING.value),
        ]
    )
