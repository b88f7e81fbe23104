"""The reservation ledger's wire contract, and the activities that talk to it.

Workflows cannot send Updates to other workflows, so a spare reaches its inventory's ledger
through these activities, which use the Temporal client (update-with-start: the first spare
of an inventory starts its ledger).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field
from temporalio import activity
from temporalio.client import Client, WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy

from placement.models import VmRequest
from placement.reservations import Reservation

from .timeouts import ActivityTimeouts, heartbeating

LEDGER_WORKFLOW_TYPE = "InventoryLedger"
RESERVE_UPDATE = "reserve"
RESERVE_GROUP_UPDATE = "reserve_group"
FREE_UPDATE = "free"
CAPACITY_GRANTED_SIGNAL = "capacity_granted"


class Waiter(BaseModel):
    """A spare waiting for room; served by priority (high first), then arrival."""

    spare_id: str
    request: VmRequest
    priority: int = 0
    seq: int


class LedgerState(BaseModel):
    """Everything the ledger knows; handed whole to continue-as-new."""

    inventory: str
    reservations: dict[str, Reservation] = Field(default_factory=dict)
    waiters: list[Waiter] = Field(default_factory=list)
    seq: int = 0
    # Set by the spare that starts the ledger; bounds the ledger's own placement calls.
    timeouts: ActivityTimeouts = Field(default_factory=ActivityTimeouts)


class ReserveInput(BaseModel):
    ledger_id: str
    task_queue: str
    inventory: str
    spare_id: str
    request: VmRequest
    wait_for_capacity: bool = False
    priority: int = 0
    timeouts: ActivityTimeouts = Field(default_factory=ActivityTimeouts)


class ReserveResult(BaseModel):
    status: Literal["reserved", "queued", "no_capacity", "never_fits"]
    reservation: Reservation | None = None
    reason: str | None = None


class GroupMember(BaseModel):
    spare_id: str
    request: VmRequest


class ReserveGroupInput(BaseModel):
    """All members of one request (`count: N`), reserved together or not at all."""

    ledger_id: str
    task_queue: str
    inventory: str
    members: list[GroupMember] = Field(min_length=1)
    timeouts: ActivityTimeouts = Field(default_factory=ActivityTimeouts)


class ReserveGroupResult(BaseModel):
    """`reserved` (every member holds a reservation) or nothing reserved, with why."""

    status: Literal["reserved", "no_capacity", "never_fits"]
    reservations: list[Reservation] = Field(default_factory=list)
    placeable: int = Field(description="How many members could be placed together now")
    reason: str | None = None


class FreeInput(BaseModel):
    ledger_id: str
    task_queue: str
    inventory: str
    spare_id: str
    timeouts: ActivityTimeouts = Field(default_factory=ActivityTimeouts)


class FreeResult(BaseModel):
    freed: bool


def ledger_start(inp: ReserveInput | ReserveGroupInput | FreeInput) -> WithStartWorkflowOperation:
    """Start the inventory's ledger with the update when it is not running yet."""
    return WithStartWorkflowOperation(
        LEDGER_WORKFLOW_TYPE,
        LedgerState(inventory=inp.inventory, timeouts=inp.timeouts),
        id=inp.ledger_id,
        task_queue=inp.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        static_summary=f"Reservation ledger of inventory {inp.inventory}",
    )


async def reserve_group(client: Client, inp: ReserveGroupInput) -> ReserveGroupResult:
    """Reserve every member in one ledger update, or none (called by the API before it starts
    the members, which then find their reservations: the ledger is idempotent per spare)."""
    result: ReserveGroupResult = await client.execute_update_with_start_workflow(
        RESERVE_GROUP_UPDATE,
        inp,
        start_workflow_operation=ledger_start(inp),
        id=f"reserve-group-{inp.members[0].spare_id}",
        result_type=ReserveGroupResult,
    )
    return result


async def free_group(client: Client, inp: ReserveGroupInput) -> None:
    """Give back what `reserve_group` reserved (members that could not be started)."""
    for member in inp.members:
        free = FreeInput(
            ledger_id=inp.ledger_id,
            task_queue=inp.task_queue,
            inventory=inp.inventory,
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
    def __init__(self, client: Client) -> None:
        self._client = client

    def _start(self, inp: ReserveInput | FreeInput) -> WithStartWorkflowOperation:
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
        result: ReserveResult = await self._update(RESERVE_UPDATE, inp, f"reserve-{inp.spare_id}")
        return result

    @activity.defn
    async def free_capacity(self, inp: FreeInput) -> FreeResult:
        update_id = f"free-{inp.spare_id}-{activity.info().workflow_run_id}"
        result: FreeResult = await self._update(FREE_UPDATE, inp, update_id)
        return result
