"""`POST /v1/spares`: the request's body and answer, everything refused before a workflow
starts, and the start itself (one spare, or `count` of them reserved together).

Idempotent: a request_id names one spare ever; the same body again finds the same spare,
another body is refused (409). The spare alone decides whether a warm pool serves it, and the
answer says what it decided.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator
from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from activities.ledger import booking_lead, free_group, ledger_has_bookings, reserve_group
from contracts.booking import BookingInfo, Window
from contracts.failures import Failure
from contracts.ledger import Budget, GroupMember, Hold, ReserveGroupInput
from contracts.spare import (
    MEMO_REQUEST_HASH,
    NODE_REGEX_ANNOTATION,
    PREPARE_SPARE,
    ROOM_ANSWER_UPDATE,
    Phase,
    RoomAnswer,
    SpareRequest,
    start_search_attributes,
)
from contracts.warm import WARM_ANSWER_UPDATE, WarmAnswer, WarmInfo
from placement.models import ExistingVm, Host
from runtime.clusters import NotAllowed
from runtime.settings import Settings

from .admission import Admission, Started
from .errors import (
    Code,
    InvalidInput,
    NoCapacity,
    OverBudget,
    SpareConflict,
    TemporalUnavailable,
)
from .inventory_check import check_hosts_exist, check_near_known, inventory_snapshot, inventory_spec
from .spare_runs import describe_owner, query_status
from .temporal_calls import temporal_errors
from .workers import require_worker

MAX_COUNT = 20


# How long a POST waits for the spare to say whether a warm pool serves it (a claim takes
# well under a second, and a request no pool matches is answered in the spare's first workflow
# task); a spare that says nothing in time is answered as not (yet) warm.
WARM_ANSWER_WAIT_SECONDS = 5.0
# How long a POST asks whether its inventory's ledger holds bookings (asked beside the start,
# so it adds nothing unless the start is quicker), and waits for the ledger's first answer
# to a new spare when it does.
HAS_BOOKINGS_WAIT = timedelta(seconds=2)
ROOM_ANSWER_WAIT = timedelta(seconds=5)


class PrepareAccepted(BaseModel):
    spare_id: str = Field(description="The (first) spare")
    workflow_id: str
    ui_url: str
    spares: list[str] = Field(default_factory=list, description="Every spare of the request")
    warm: WarmInfo | None = Field(
        default=None,
        description="Set when the spare took a warm pool's Ready spare: it is Ready already",
    )
    phase: Phase | None = Field(
        default=None, description="A booking: `booked` (its room is held for its window)"
    )
    booking: BookingInfo | None = Field(
        default=None, description="A booking: its window, its lead and when its spare is made"
    )


class PrepareBody(SpareRequest):
    """The request of `POST /spare/prepare`: a spare request, `count` times."""

    count: int = Field(
        default=1,
        ge=1,
        le=MAX_COUNT,
        description="How many spares; more than one form a group (`anti_affinity_group`, "
        "default the request_id, scope host) that anti-affinity and `topology_spread` count",
    )
    partial: bool = Field(
        default=False,
        description="With `count` > 1: false (default) reserves all N spares together or "
        "none (409 `no_capacity` saying how many could be placed); true starts all N and each "
        "takes a host if one is free, so some may fail with no_capacity",
    )

    @model_validator(mode="before")
    @classmethod
    def _members_form_a_group(cls, data: Any) -> Any:
        # Said here rather than left to members(): a spread constraint without a group of its
        # own counts this one, so it must exist when the constraints are checked.
        if isinstance(data, dict):
            count, request_id = data.get("count"), data.get("request_id")
            if isinstance(count, int) and count > 1 and data.get("anti_affinity_group") is None:
                data = {**data, "anti_affinity_group": request_id}
        return data

    @field_validator("count")
    @classmethod
    def _constraints_count_the_members(cls, count: int, info: ValidationInfo) -> int:
        group = info.data.get("anti_affinity_group")
        for i, constraint in enumerate(info.data.get("topology_spread") or []):
            if count > 1 and constraint.group not in (None, group):
                raise ValueError(
                    f"the {count} spares form group '{group}', but topology_spread.{i} counts "
                    f"group '{constraint.group}' and would not spread them: name no group, or "
                    f"set anti_affinity_group to '{constraint.group}'"
                )
        return count

    def members(self) -> list[SpareRequest]:
        """One request per spare; ids `<request_id>-<i>` when there is more than one."""
        fields = self.model_dump(exclude={"count", "partial"}, exclude_unset=True)
        if self.count == 1:
            return [SpareRequest.model_validate(fields)]
        fields["anti_affinity_group"] = self.anti_affinity_group or self.request_id
        return [
            SpareRequest.model_validate({**fields, "request_id": f"{self.request_id}-{i}"})
            for i in range(self.count)
        ]


def request_hash(request: SpareRequest) -> str:
    """Hash of the validated body: defaults spelled out or omitted give the same hash."""
    return hashlib.sha256(request.model_dump_json().encode()).hexdigest()


def check_names(settings: Settings, request: SpareRequest) -> None:
    """Reject unknown cluster, inventory, receiver or template names, and what the cluster
    may not use, before any workflow exists."""
    check_cluster(settings, request)
    inventory_spec(settings, request.inventory)
    for name in request.receivers or []:
        if name not in settings.receivers:
            known = ", ".join(sorted(settings.receivers)) or "none"
            raise InvalidInput(
                "receivers",
                f"unknown receiver '{name}' (configured: {known})",
                Code.UNKNOWN_RECEIVER,
            )
    if request.warm_pool is not None:
        raise InvalidInput(
            "warm_pool",
            "set by virtflow on a warm pool's own spares; a request takes a warm spare by "
            "matching its pool's cluster, shape, pool and template",
        )
    if request.rehearsal_of is not None:
        raise InvalidInput(
            "rehearsal_of",
            "set by virtflow on a booking's rehearsal; a booking asks for one with "
            "`window.rehearsal`",
        )
    if request.template is not None and request.template not in settings.vm_templates:
        known = ", ".join(sorted(settings.vm_templates)) or "none"
        raise InvalidInput(
            "template",
            f"unknown VM template '{request.template}' (configured: {known})",
            Code.UNKNOWN_TEMPLATE,
        )


def check_cluster(settings: Settings, request: SpareRequest) -> None:
    """The request's cluster is registered and lets it use its inventory, pool, receivers."""
    check_cluster_use(settings, request.cluster, request.inventory, request.pool, request.receivers)


def check_cluster_use(
    settings: Settings,
    cluster: str,
    inventory: str | None = None,
    pool: str | None = None,
    receivers: list[str] | None = None,
) -> None:
    """422 `unknown_cluster`, or `not_allowed_for_cluster` naming the field at fault."""
    try:
        settings.cluster_registry.check(cluster, inventory, pool, receivers)
    except NotAllowed as refused:
        code = Code.UNKNOWN_CLUSTER if refused.unknown_cluster else Code.NOT_ALLOWED_FOR_CLUSTER
        raise InvalidInput(refused.field, refused.reason, code) from None


async def check_request(
    settings: Settings, request: SpareRequest, admission: Admission | None = None
) -> None:
    """Everything that can be refused before a workflow starts: names, then the inventory
    (a pool or node selector no host has). With `admission`, a recent snapshot of the
    inventory is used, and a refusal confirmed on a fresh read."""
    check_names(settings, request)

    async def read() -> tuple[list[Host], list[ExistingVm]]:
        return await inventory_snapshot(settings, request.inventory)

    if admission is None:
        _check_inventory(request, *await read())
        return
    snapshot, fresh = await admission.snapshot(request.inventory, read)
    try:
        _check_inventory(request, *snapshot)
    except InvalidInput:
        if fresh:
            raise
        _check_inventory(request, *(await admission.snapshot(request.inventory, read, True))[0])


def _check_inventory(request: SpareRequest, hosts: list[Host], vms: list[ExistingVm]) -> None:
    check_hosts_exist(
        hosts,
        request.inventory,
        request.pool,
        request.node_selector,
        node_regex=request.annotations.get(NODE_REGEX_ANNOTATION),
    )
    if request.near is not None:
        check_near_known(hosts, vms, request.inventory, request.near)


async def start_spare(
    client: Client, settings: Settings, request: SpareRequest, admission: Admission | None = None
) -> PrepareAccepted:
    """Start PrepareSpare, or find the one this request already started (same id, same body)."""
    await check_request(settings, request, admission)
    digest = request_hash(request)
    repeat = admission is not None and admission.knows(request.spare_id)
    start = _start_one(client, settings, request, digest, admission=admission, ask_warm=True)
    if request.wait_for_capacity or repeat:
        # It waits for room (the ledger's first answer says nothing final), or the request
        # was answered already: its first POST asked.
        return await start
    accepted, bookings = await asyncio.gather(
        start, _ledger_has_bookings(client, settings, request.inventory, admission)
    )
    if bookings and accepted.warm is None:
        await _refuse_if_no_room(client, request)
    return accepted


async def _ledger_has_bookings(
    client: Client, settings: Settings, inventory: str, admission: Admission | None
) -> bool:
    # Only a worker answers the query: without one, the POST does not wait for it.
    if not await _worker_polls(client, settings.task_queue):
        return False

    async def ask() -> bool:
        return await ledger_has_bookings(client, inventory, HAS_BOOKINGS_WAIT)

    return await (admission.has_bookings(inventory, ask) if admission is not None else ask())


async def _refuse_if_no_room(client: Client, request: SpareRequest) -> None:
    """409 `no_capacity` naming who holds the room when the ledger refused the spare room
    (it ends failed, nothing reserved): a booking may hold a host's room in the spare's time
    though the host is empty now. Asked only when the ledger holds bookings, so the usual POST
    does not wait for its reservation; no answer in time, and the POST answers as started."""
    try:
        answer: RoomAnswer = await client.get_workflow_handle(request.spare_id).execute_update(
            ROOM_ANSWER_UPDATE, result_type=RoomAnswer, rpc_timeout=ROOM_ANSWER_WAIT
        )
    except (WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError, RPCError):
        return
    if answer.status == "refused" and answer.failure == Failure.NO_CAPACITY:
        raise NoCapacity(
            f"spare {request.spare_id} cannot be placed for its time: {answer.reason}. "
            "Nothing was reserved and the spare has ended; ask again with a new request_id "
            'once the room is free, or with "wait_for_capacity": true to wait for it',
            requested=1,
            placeable=0,
            held_by=answer.held_by,
        )


async def start_spares(
    client: Client, settings: Settings, body: PrepareBody, admission: Admission | None = None
) -> PrepareAccepted:
    """Start `count` spares spread by anti-affinity; idempotent as a whole.

    Member i has request_id `<request_id>-<i>`; every member carries the hash of the whole
    body, so the same body again finds the same spares and a different one is refused (409)
    before a new member starts.
    """
    members = body.members()
    if body.window is not None:
        return await book_spares(client, settings, body, members, admission)
    if len(members) == 1:
        return await start_spare(client, settings, members[0], admission)
    await check_request(settings, members[0], admission)
    digest = hashlib.sha256(body.model_dump_json().encode()).hexdigest()
    started_before = await _already_started(client, members[0], digest)
    # A repeated request finds its spares; one that waits for room has its members queue.
    all_or_nothing = not (started_before or body.partial or body.wait_for_capacity)
    group = await _reserve_all(client, settings, members) if all_or_nothing else None
    started = await _start_members(client, settings, members, digest, group, admission)
    return PrepareAccepted(
        spare_id=started[0].spare_id,
        workflow_id=started[0].workflow_id,
        ui_url=started[0].ui_url,
        spares=[s.spare_id for s in started],
    )


def check_window(settings: Settings, window: Window, now: datetime) -> None:
    """A booking's window starts in the future, within the booking horizon (422 otherwise)."""
    where = ("window", "start")
    if window.start <= now:
        raise InvalidInput(
            "window.start",
            f"{window.start.isoformat()} is not in the future (now {now.isoformat()})",
            Code.WINDOW_STARTED,
            path=where,
        )
    horizon = now + timedelta(days=settings.booking_horizon_days)
    if window.start > horizon:
        raise InvalidInput(
            "window.start",
            f"{window.start.isoformat()} is more than {settings.booking_horizon_days} days "
            "ahead (booking_horizon_days)",
            Code.WINDOW_TOO_FAR,
            path=where,
        )


async def book_spares(
    client: Client,
    settings: Settings,
    body: PrepareBody,
    members: list[SpareRequest],
    admission: Admission | None = None,
) -> PrepareAccepted:
    """A booking (`window`), answered at once: its room held from its lead start to its
    window's end (202, phase `booked`), or 409 `no_capacity` naming the spares that hold the
    room then. Idempotent as a whole, like any request: the same body finds its spares."""
    assert body.window is not None
    check_window(settings, body.window, datetime.now(UTC))
    first = members[0]
    await check_request(settings, first, admission)
    digest = (
        request_hash(first)
        if len(members) == 1
        else hashlib.sha256(body.model_dump_json().encode()).hexdigest()
    )
    await require_worker(client, settings.task_queue)
    with temporal_errors(first.spare_id):
        lead = await booking_lead(client, settings.booking_lead, first.inventory, first.template)
    hold = body.window.hold(lead.lead_seconds)
    started_before = await _already_started(client, first, digest)
    group = None if started_before else await _reserve_all(client, settings, members, hold)
    started = await _start_members(client, settings, members, digest, group, admission)
    assert hold.start is not None
    return PrepareAccepted(
        spare_id=started[0].spare_id,
        workflow_id=started[0].workflow_id,
        ui_url=started[0].ui_url,
        spares=[s.spare_id for s in started],
        phase=Phase.BOOKED,
        booking=BookingInfo(
            window=body.window,
            lead_seconds=lead.lead_seconds,
            lead_start=hold.start,
            measured=lead.measured,
        ),
    )


async def _start_members(
    client: Client,
    settings: Settings,
    members: list[SpareRequest],
    digest: str,
    group: ReserveGroupInput | None,
    admission: Admission | None,
) -> list[PrepareAccepted]:
    """Every member started; if one fails to start, the room reserved for all is given back."""
    try:
        return await asyncio.gather(
            *(_start_one(client, settings, m, digest, f" ({i + 1}/{len(members)})", admission)
              for i, m in enumerate(members))
        )  # fmt: skip
    except Exception:
        if group is not None:
            # Members that did start will reserve again themselves; none over-commits.
            await free_group(client, group)
        raise


async def _reserve_all(
    client: Client, settings: Settings, members: list[SpareRequest], hold: Hold | None = None
) -> ReserveGroupInput:
    """All members' hosts in one ledger update, or 409 `no_capacity` and nothing reserved.
    With `hold` (a booking), over that time only."""
    first = members[0]
    group = ReserveGroupInput(
        task_queue=settings.task_queue,
        inventory=first.inventory,
        members=[
            GroupMember(spare_id=m.spare_id, request=m.vm_request(m.spare_id), hold=hold)
            for m in members
        ],
        timeouts=first.timeouts,
        budget=_budget(settings, first),
        cluster=first.cluster,
    )
    # Only a worker runs the ledger: without one the update would wait for its deadline.
    await require_worker(client, settings.task_queue)
    with temporal_errors(first.spare_id):
        result = await reserve_group(client, group)
    if result.status == "over_budget" and group.budget is not None:
        raise OverBudget(
            f"{result.reason}. Nothing was reserved; release a spare of the cluster, or send "
            '"wait_for_capacity": true to wait for its budget',
            budget=group.budget.max_spares,
            in_use=result.in_use or 0,
        )
    if result.status != "reserved" and hold is not None:
        raise NoCapacity(
            f"{result.placeable} of {len(members)} spares can be booked for "
            f"{hold.describe()}: {result.reason}. Nothing was reserved",
            requested=len(members),
            placeable=result.placeable,
            held_by=result.held_by,
        )
    if result.status != "reserved":
        raise NoCapacity(
            f"{result.placeable} of {len(members)} spares can be placed now, not all of them: "
            f'{result.reason}. Nothing was reserved; send "partial": true to take what fits, '
            'or "wait_for_capacity": true to wait for room',
            requested=len(members),
            placeable=result.placeable,
        )
    return group


def _budget(settings: Settings, request: SpareRequest) -> Budget | None:
    """The request's cluster's surge budget, kept by its inventory's ledger."""
    limit = settings.cluster_registry.get(request.cluster).max_spares
    return None if limit is None else Budget(cluster=request.cluster, max_spares=limit)


async def _already_started(client: Client, first: SpareRequest, digest: str) -> bool:
    """Whether this request's spares exist; 409 if their request_id was another request's."""
    with temporal_errors(first.spare_id):
        try:
            _, description = await describe_owner(client, first.spare_id)
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                return False
            raise
        existing = await description.memo_value(MEMO_REQUEST_HASH, default=None)
    if existing != digest:
        raise _conflict(first)
    return True


def _conflict(request: SpareRequest) -> SpareConflict:
    return SpareConflict(
        f"request_id '{request.request_id}' of cluster '{request.cluster}' is already used "
        "by a different request"
    )


async def _start_one(
    client: Client,
    settings: Settings,
    request: SpareRequest,
    digest: str,
    of: str = "",
    admission: Admission | None = None,
    ask_warm: bool = False,
) -> PrepareAccepted:
    """Start one spare or find it; with `ask_warm`, the answer says whether a warm pool
    serves it, as the spare decided."""
    workflow_id = request.spare_id

    async def start() -> Started:
        return await _start_or_find(client, settings, request, digest, of, ask_warm)

    if admission is None:
        started = await start()
    else:
        started = await admission.started(workflow_id, start)
    if started.request_hash != digest:
        raise _conflict(request)
    return PrepareAccepted(
        spare_id=workflow_id,
        workflow_id=workflow_id,
        ui_url=settings.workflow_ui_url(workflow_id),
        spares=[workflow_id],
        warm=started.warm,
    )


async def _start_or_find(
    client: Client,
    settings: Settings,
    request: SpareRequest,
    digest: str,
    of: str,
    ask_warm: bool,
) -> Started:
    """Start the spare unless its id exists: the request hash of the run that is the spare,
    and with `ask_warm` the spare's own word on whether a warm pool serves it."""
    workflow_id = request.spare_id
    options: dict[str, Any] = {
        "id": workflow_id,
        "task_queue": settings.task_queue,
        # A repeated POST joins the running spare; a closed one is never restarted under the
        # same id, so a request_id names exactly one spare.
        "id_conflict_policy": WorkflowIDConflictPolicy.USE_EXISTING,
        "id_reuse_policy": WorkflowIDReusePolicy.REJECT_DUPLICATE,
        "memo": {MEMO_REQUEST_HASH: digest},
        "search_attributes": start_search_attributes(request),
        "static_summary": request.summary() + of,
    }
    warm: WarmInfo | None = None
    with temporal_errors(workflow_id):
        try:
            if ask_warm and await _worker_polls(client, settings.task_queue):
                answer = await _start_asking_warm(client, request, options)
                if answer is not None:
                    # The running spare answered: its memo is the one to compare.
                    return Started(answer.request_hash, answer.warm)
            else:
                await client.start_workflow(PREPARE_SPARE, request, **options)
        except WorkflowAlreadyStartedError:
            # An ended spare is found below, never started again; its status says how it
            # was served.
            if ask_warm:
                warm = await _warm_of_ended(client, workflow_id)
        _, description = await describe_owner(client, workflow_id)
        existing: str | None = await description.memo_value(MEMO_REQUEST_HASH, default=None)
    return Started(existing, warm)


async def _worker_polls(client: Client, task_queue: str) -> bool:
    """Whether a worker could answer now: without one the spare still starts, and waits."""
    try:
        await require_worker(client, task_queue)
    except TemporalUnavailable:
        return False
    return True


async def _start_asking_warm(
    client: Client, request: SpareRequest, options: dict[str, Any]
) -> WarmAnswer | None:
    """Start (or join) the spare and ask it, in the same call, whether a warm pool serves it.

    The spare answers once its claim is decided: in its first workflow task when no pool
    matches, once the warm spare is its own on a hit. The spare is the only judge: the worker's
    warm pools, not the API's reading of them. None: the spare did not answer (it ended
    before it knew, or said nothing in time: a busy worker; it is started all the same).
    """
    start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
        PREPARE_SPARE, request, **options
    )
    try:
        answer: WarmAnswer = await client.execute_update_with_start_workflow(
            WARM_ANSWER_UPDATE,
            start_workflow_operation=start,
            result_type=WarmAnswer,
            rpc_timeout=timedelta(seconds=WARM_ANSWER_WAIT_SECONDS),
        )
    except WorkflowUpdateFailedError:
        return None  # the spare ended before it knew (a used id, a refused request)
    except WorkflowUpdateRPCTimeoutOrCancelledError:
        await _read_start_error(start)
        await client.start_workflow(PREPARE_SPARE, request, **options)
        return None
    except Exception:
        await _read_start_error(start)
        raise
    return answer


async def _read_start_error(start: WithStartWorkflowOperation[Any, Any]) -> None:
    """The SDK keeps a failed call's error in its start operation too; unread, asyncio logs
    it with a stack trace once the operation is collected ("Future exception was never
    retrieved"), one per timed-out POST under load."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(start.workflow_handle(), timeout=1)


async def _warm_of_ended(client: Client, spare_id: str) -> WarmInfo | None:
    """How an ended spare was served, as its status says (None if no worker answers)."""
    with contextlib.suppress(TemporalUnavailable):
        status = await query_status(client.get_workflow_handle(spare_id), spare_id)
        return status.warm
    return None
