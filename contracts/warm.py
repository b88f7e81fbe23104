"""The contract of warm pools: spares kept Ready ahead of demand and handed to a request.

One `WarmPool` workflow per configured pool keeps `size` warm spares, each a PrepareSpare of
its own (placed through the ledger like any spare), its Node labelled and tainted
`virtflow.io/warm=<pool>` so nothing lands on it before it is claimed. A request's
PrepareSpare claims one through the pool's `claim` Update: the pool checks the request
against each warm spare's host with the placement engine, then hands the spare over (the
warm spare's `hand_over` Update, its one atomic step) and moves its reservation to the request
in the ledger. The request's spare then owns the VM and the Node, under the warm spare's name.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from placement.models import VmRequest, VmShape

from .kubernetes import NodeNameInput
from .ledger import LedgerCall, Reservation
from .timeouts import ActivityTimeouts
from .vm import VmFacts

WARM_POOL = "WarmPool"
CLAIM_UPDATE = "claim"
CONFIGURE_SIGNAL = "configure"
POOL_QUERY = "pool"
# From a warm spare to its pool: it became warm, or it ended.
WARM_SPARE_REPORT_SIGNAL = "warm_spare_report"
# On a warm spare (PrepareSpare): end as handed over to the request that claimed it.
HAND_OVER_UPDATE = "hand_over"
# On a request's spare (PrepareSpare): answered once it knows whether a warm pool serves it
# (its status, `warm` set on a hit); the API's POST answers with it.
WARM_ANSWER_UPDATE = "warm_answer"
# On the ledger: the warm spare's room becomes the claiming spare's.
TRANSFER_UPDATE = "transfer"

# Label and NoSchedule taint of a warm spare's Node (value: the pool's name).
WARM_LABEL = "virtflow.io/warm"
# A warm spare's request id: `warm-<pool>-<n>`.
WARM_REQUEST_PREFIX = "warm-"
DNS_LABEL = r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"
# Pool names end up in request ids (at most 40 characters) with a counter after them.
POOL_NAME_MAX = 24


def warm_pool_workflow_id(name: str) -> str:
    return f"warm-pool-{name}"


class WarmPoolSpec(VmShape):
    """One warm pool of the settings (`warm_pools`): what its spares are, and how many."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=POOL_NAME_MAX, pattern=DNS_LABEL)
    cluster: str = Field(min_length=1, max_length=40, pattern=DNS_LABEL)
    inventory: str = "default"
    pool: str | None = None
    template: str | None = None
    size: int = Field(default=0, ge=0, le=100, description="Warm spares to keep Ready; 0 drains")
    max_age_seconds: int = Field(default=24 * 3600, ge=60, le=30 * 24 * 3600)
    # How soon a dead worker's activity is tried again elsewhere, for the pool and its spares.
    timeouts: ActivityTimeouts = Field(default_factory=ActivityTimeouts)

    def generation(self) -> str:
        """What a warm spare was made from: a spare of another generation no longer matches."""
        fields = self.model_dump(exclude={"size", "max_age_seconds", "timeouts"})
        return "/".join(f"{k}={fields[k]}" for k in sorted(fields))


WarmPhase = Literal["coming_up", "warm", "claimed", "leaving"]


class WarmSpare(BaseModel):
    """One spare of a pool, as the pool sees it."""

    spare_id: str
    phase: WarmPhase = "coming_up"
    generation: str
    # The worker build it runs on (pinned there: the pool's build when it was started); None
    # without worker versioning.
    build_id: str | None = None
    started_at: datetime
    ready_since: datetime | None = None
    reservation: Reservation | None = None
    vm: VmFacts | None = None
    claimed_by: str | None = None


class WarmSpareReport(BaseModel):
    """A warm spare tells its pool it is warm (Ready, tainted) or that it ended."""

    spare_id: str
    phase: Literal["warm", "ended"]
    at: datetime
    reservation: Reservation | None = None
    vm: VmFacts | None = None
    # Why it ended before it was ever warm (the pool counts those as failures).
    error: str | None = None


class WarmInfo(BaseModel):
    """On a spare that came from a warm pool: which, and since when it was Ready."""

    pool: str
    ready_since: datetime
    warm_spare_id: str = Field(description="The warm spare whose VM and Node this spare took")


class WarmAnswer(BaseModel):
    """A request's spare's answer to `warm_answer`: how it is served, and who asked for it."""

    warm: WarmInfo | None = None
    # The request hash in the spare's memo: a POST of another body under its id is refused.
    request_hash: str | None = None


class ClaimInput(BaseModel):
    """A request's spare asks a pool for a warm spare its request is satisfied by."""

    spare_id: str
    request: VmRequest
    inventory: str
    timeouts: ActivityTimeouts = Field(default_factory=ActivityTimeouts)


class ClaimResult(BaseModel):
    """A hit carries what the claiming spare now owns; a miss says why not."""

    hit: bool
    reason: str | None = None
    warm: WarmInfo | None = None
    reservation: Reservation | None = None
    vm: VmFacts | None = None


class WarmPoolState(BaseModel):
    """Everything a pool knows; handed whole to continue-as-new."""

    spec: WarmPoolSpec
    spares: dict[str, WarmSpare] = Field(default_factory=dict)
    seq: int = 0
    # Claims answered, by claiming spare (a repeated claim gets the same answer); the latest few.
    claims: dict[str, ClaimResult] = Field(default_factory=dict)
    claimed_total: int = 0
    hits: int = 0
    misses: int = 0
    # Spares that ended before they were warm, in a row (no room, failed creates).
    failures_in_a_row: int = 0
    last_failure: str | None = None
    # No new spare is started before this (after a failure: a backoff).
    retry_at: datetime | None = None
    # A shortage told by `warm_pool.short` and not over yet; how many were told in this run.
    short_open: bool = False
    short_told: int = 0
    # A versioned pool looks this often whether another build became current: a roll-back
    # sends it no message, and it must not stay on a build that is being drained.
    version_check_seconds: int = Field(default=300, ge=1, le=24 * 3600)


class WarmPoolView(BaseModel):
    """`GET /v1/warm-pools/{name}` and the pool's query: its size and where its spares are."""

    name: str
    cluster: str
    inventory: str
    pool: str | None = None
    template: str | None = None
    cpu: int
    memory_mb: int
    gpu: int = 0
    size: int
    ready: int = Field(description="Warm spares Ready to be claimed")
    coming_up: int = Field(description="Warm spares being prepared")
    claimed: int = Field(description="Spares handed to requests so far")
    hits: int = 0
    misses: int = 0
    spares: list[WarmSpare] = Field(default_factory=list)
    short_reason: str | None = Field(
        default=None, description="Why the pool is below its size, when it is"
    )


class HandOverInput(BaseModel):
    """Body of a warm spare's `hand_over` Update: the spare that claimed it."""

    spare_id: str


class HandOverRequest(BaseModel):
    """The pool's activity input: hand `warm_spare_id` over to `spare_id`."""

    warm_spare_id: str
    spare_id: str


class HandOverResult(BaseModel):
    accepted: bool
    reason: str | None = None
    vm: VmFacts | None = None


class TransferInput(LedgerCall):
    """The ledger moves the warm spare's reservation to the spare that claimed it."""

    from_spare_id: str
    to_spare_id: str
    # The claiming request's group: anti-affinity counts the VM as its member now.
    anti_affinity_group: str | None = None
    # The pool's (and so the claimant's) cluster: the claimed spare counts against its
    # surge budget from now on.
    cluster: str | None = None


class TransferResult(BaseModel):
    reservation: Reservation | None = None
    # The claiming spare had ended: nothing was moved, the room stays the warm spare's.
    claimant_ended: bool = False


class FitWarmInput(BaseModel):
    """Which of these warm spares' hosts the request fits on, its own room counted free."""

    inventory: str
    request: VmRequest
    candidates: list[Reservation]


class FitWarmResult(BaseModel):
    fits: list[str] = Field(default_factory=list, description="Warm spare ids, in the given order")
    reason: str | None = None
    already_reserved: bool = False


class GiveWayInput(BaseModel):
    """Which warm spares to take back so that `request` fits: `warm` oldest first."""

    inventory: str
    request: VmRequest
    reservations: list[Reservation]
    warm: list[Reservation]


class GiveWayResult(BaseModel):
    take_back: list[str] = Field(default_factory=list, description="Warm spare ids; none: no use")
    host: str | None = None


class WarmNodeInput(NodeNameInput):
    """Mark a Node warm (label and taint), or take the mark off and give it its spare's labels."""

    pool: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)


class WarmCandidatesInput(BaseModel):
    request: VmRequest
    cluster: str
    inventory: str
    template: str | None = None


class WarmCandidatesResult(BaseModel):
    pools: list[str] = Field(default_factory=list)


class ClaimWarmInput(BaseModel):
    """Ask these pools in order; the first hit wins."""

    pools: list[str]
    claim: ClaimInput
