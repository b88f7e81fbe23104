"""The activities that talk to an inventory's ledger (its contract: `contracts/ledger.py`).

Workflows cannot send Updates to other workflows, so a spare reaches its inventory's ledger
through these activities, which use the Temporal client (update-with-start: the first spare
of an inventory starts its ledger).
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.client import Client, WithStartWorkflowOperation, WorkflowExecutionStatus
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from contracts.booking import (
    READY_TIMES_QUERY,
    BookingLeadInput,
    BookingLeadResult,
    LeadPolicy,
    template_key,
)
from contracts.ledger import (
    CHANGE_HOLD_UPDATE,
    FREE_UPDATE,
    HAS_BOOKINGS_QUERY,
    INVENTORY_LEDGER,
    RESERVATIONS_QUERY,
    RESERVE_GROUP_UPDATE,
    RESERVE_UPDATE,
    ChangeHoldInput,
    ChangeHoldResult,
    FreeInput,
    FreeResult,
    LedgerState,
    Reservation,
    ReserveGroupInput,
    ReserveGroupResult,
    ReserveInput,
    ReserveResult,
    SpareRunsInput,
    SpareRunsResult,
    ledger_workflow_id,
)
from contracts.warm import TRANSFER_UPDATE, TransferInput, TransferResult

from .heartbeats import heartbeating

# The ledger's workflow task timeout (kept by its continue-as-new runs); the server's most is 120 s.
LEDGER_TASK_TIMEOUT = timedelta(seconds=60)


def ledger_start(
    inp: ReserveInput | ReserveGroupInput | FreeInput | TransferInput | ChangeHoldInput,
) -> WithStartWorkflowOperation:
    """Start the inventory's ledger with the update when it is not running yet."""
    return WithStartWorkflowOperation(
        INVENTORY_LEDGER,
        LedgerState(inventory=inp.inventory, timeouts=inp.timeouts),
        id=inp.ledger_id,
        task_queue=inp.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        static_summary=f"Reservation ledger of inventory {inp.inventory}",
        # One workflow task may carry hundreds of Updates (a burst of releases), and a worker
        # that lost the ledger from its cache replays its history in it: 10 s (the default)
        # was too short for both on a busy 2-core machine, and every retry timed out again.
        task_timeout=LEDGER_TASK_TIMEOUT,
    )


async def ledger_reservations(
    client: Client, inventory: str, rpc_timeout: timedelta | None = None
) -> list[Reservation]:
    """The inventory's ledger's reservations; none when no spare has used the inventory yet.
    (A query: only a worker answers it.)"""
    try:
        reservations: list[Reservation] = await client.get_workflow_handle(
            ledger_workflow_id(inventory)
        ).query(RESERVATIONS_QUERY, result_type=list[Reservation], rpc_timeout=rpc_timeout)
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return []
        raise
    return reservations


async def ledger_has_bookings(
    client: Client, inventory: str, rpc_timeout: timedelta | None = None
) -> bool:
    """Whether the inventory's ledger holds any booking (False when it cannot say: no ledger
    yet, or no worker answered in time)."""
    try:
        answer: bool = await client.get_workflow_handle(ledger_workflow_id(inventory)).query(
            HAS_BOOKINGS_QUERY, result_type=bool, rpc_timeout=rpc_timeout
        )
    except RPCError:
        return False
    return answer


async def booking_lead(
    client: Client, policy: LeadPolicy, inventory: str, template: str | None
) -> BookingLeadResult:
    """How long before its window a booking's spare is made: from the create-to-Ready times
    the inventory's ledger keeps for the template (none yet: the policy's default)."""
    try:
        times: list[float] = await client.get_workflow_handle(ledger_workflow_id(inventory)).query(
            READY_TIMES_QUERY, template_key(template), result_type=list[float]
        )
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        times = []
    return BookingLeadResult(
        lead_seconds=policy.lead(times),
        measured=len(times),
        window_ending_seconds=policy.window_ending_seconds,
        rehearsal_ahead_seconds=policy.rehearsal_ahead_seconds,
    )


async def reserve_group(client: Client, inp: ReserveGroupInput) -> ReserveGroupResult:
    """Reserve every member in one ledger update, or none (called by the API before it starts
    the members, which then find their reservations: the ledger is idempotent per spare)."""
    result: ReserveGroupResult = await client.execute_update_with_start_workflow(
        RESERVE_GROUP_UPDATE,
        inp,
        start_workflow_operation=ledger_start(inp),
        # One update per ask: the server answers a repeated update id with the first answer,
        # so a request refused while the room was held would be refused again once it is free.
        id=f"reserve-group-{inp.members[0].spare_id}-{uuid.uuid4().hex[:12]}",
        result_type=ReserveGroupResult,
    )
    return result


async def free_group(client: Client, inp: ReserveGroupInput) -> None:
    """Give back what `reserve_group` reserved (members that could not be started)."""
    for member in inp.members:
        free = FreeInput(
            inventory=inp.inventory,
            task_queue=inp.task_queue,
            spare_id=member.spare_id,
            timeouts=inp.timeouts,
        )
        await client.execute_update_with_start_workflow(
            FREE_UPDATE,
            free,
            start_workflow_operation=ledger_start(free),
            id=f"free-{member.spare_id}-unstarted",
            result_type=FreeResult,
        )


class LedgerActivities:
    def __init__(self, client: Client, lead: LeadPolicy | None = None) -> None:
        self._client = client
        self._lead = lead or LeadPolicy()

    @activity.defn
    async def booking_lead(self, inp: BookingLeadInput) -> BookingLeadResult:
        """The lead of a booking started without the API (the CLI, `temporal workflow start`)."""
        return await booking_lead(self._client, self._lead, inp.inventory, inp.template)

    def _start(self, inp: ReserveInput | FreeInput | TransferInput) -> WithStartWorkflowOperation:
        return ledger_start(inp)

    async def _update(self, update: str, inp: ReserveInput | FreeInput, update_id: str) -> Any:
        """Send an Update to the ledger, starting the ledger first if it is not running."""
        return await heartbeating(
            self._client.execute_update_with_start_workflow(
                update,
                inp,
                start_workflow_operation=self._start(inp),
                id=update_id,
                result_type=ReserveResult if isinstance(inp, ReserveInput) else FreeResult,
            )
        )

    @activity.defn
    async def reserve_capacity(self, inp: ReserveInput) -> ReserveResult:
        # The update id makes a retried activity land on the same update within a run; the
        # ledger's own idempotency check covers retries across continue-as-new.
        result: ReserveResult = await self._update(RESERVE_UPDATE, inp, inp.update_id)
        return result

    @activity.defn
    async def free_capacity(self, inp: FreeInput) -> FreeResult:
        update_id = f"free-{inp.spare_id}-{activity.info().workflow_run_id}"
        result: FreeResult = await self._update(FREE_UPDATE, inp, update_id)
        return result

    @activity.defn
    async def transfer_capacity(self, inp: TransferInput) -> TransferResult:
        """Move a claimed warm spare's reservation to the spare that claimed it."""
        result: TransferResult = await heartbeating(
            self._client.execute_update_with_start_workflow(
                TRANSFER_UPDATE,
                inp,
                start_workflow_operation=self._start(inp),
                id=f"transfer-{inp.from_spare_id}-{inp.to_spare_id}",
                result_type=TransferResult,
            )
        )
        return result

    @activity.defn
    async def change_hold(self, inp: ChangeHoldInput) -> ChangeHoldResult:
        """Ask the ledger to hold a booking's room until a new end (it decides under its lock)."""
        info = activity.info()
        result: ChangeHoldResult = await heartbeating(
            self._client.execute_update_with_start_workflow(
                CHANGE_HOLD_UPDATE,
                inp,
                start_workflow_operation=ledger_start(inp),
                # One update per ask (a retry of this activity lands on the same one): the
                # server answers a repeated update id with its first answer, so an end asked
                # again once the room is free would meet the old refusal.
                id=f"change-hold-{inp.spare_id}-{info.workflow_run_id}-{info.activity_id}",
                result_type=ChangeHoldResult,
            )
        )
        return result

    @activity.defn
    async def spare_runs(self, inp: SpareRunsInput) -> SpareRunsResult:
        """Whether the spare's workflow still runs (the ledger asks before it moves room to
        it: a spare terminated mid-claim was compensated already and would hold it for good)."""
        try:
            description = await self._client.get_workflow_handle(inp.spare_id).describe()
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
            return SpareRunsResult(running=False, status="not found")
        status = description.status
        if status == WorkflowExecutionStatus.RUNNING:
            return SpareRunsResult(running=True)
        return SpareRunsResult(running=False, status=status.name.lower() if status else None)
