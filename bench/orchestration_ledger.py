"""Ledger throughput: concurrent reservations straight into one inventory's ledger.

The requests go the way the `reserve_capacity` activity sends them (update-with-start), on an
inventory with less room than asked for, so the answer also proves the ledger never hands a
host more than it holds.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from typing import Any

from orchestration_stack import TASK_QUEUE, TIGHT_INVENTORY, BenchStack
from temporalio.client import WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy

from contracts.ledger import (
    FREE_UPDATE,
    INVENTORY_LEDGER,
    RESERVE_UPDATE,
    FreeInput,
    FreeResult,
    LedgerState,
    Reservation,
    ReserveInput,
    ReserveResult,
    ledger_workflow_id,
)
from placement.models import VmRequest
from workflows.ledger import InventoryLedger

LEDGER_ID = ledger_workflow_id(TIGHT_INVENTORY)


@dataclass
class LedgerRun:
    asked: int
    reserved: int
    refused: int
    reserve_wall: float
    free_wall: float
    overcommitted: list[str]


def _start() -> WithStartWorkflowOperation[Any, Any]:
    return WithStartWorkflowOperation(
        INVENTORY_LEDGER,
        LedgerState(inventory=TIGHT_INVENTORY),
        id=LEDGER_ID,
        task_queue=TASK_QUEUE,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )


async def reserve(stack: BenchStack, spare_id: str) -> ReserveResult:
    result: ReserveResult = await stack.client.execute_update_with_start_workflow(
        RESERVE_UPDATE,
        ReserveInput(
            inventory=TIGHT_INVENTORY,
            task_queue=TASK_QUEUE,
            request=VmRequest(name=spare_id, cpu=2, memory_mb=2048),
        ),
        start_workflow_operation=_start(),
        id=f"reserve-{spare_id}",
        result_type=ReserveResult,
    )
    return result


async def free(stack: BenchStack, spare_id: str, run: str) -> FreeResult:
    result: FreeResult = await stack.client.execute_update_with_start_workflow(
        FREE_UPDATE,
        FreeInput(inventory=TIGHT_INVENTORY, task_queue=TASK_QUEUE, spare_id=spare_id),
        start_workflow_operation=_start(),
        id=f"free-{spare_id}-{run}",
        result_type=FreeResult,
    )
    return result


def overcommitted(hosts: list[dict[str, Any]], reservations: list[Reservation]) -> list[str]:
    """Hosts whose reservations exceed CPU, memory (times the allocation ratio) or VM quota."""
    used: dict[str, list[int]] = {}
    for r in reservations:
        cpu, memory, count = used.setdefault(r.host, [0, 0, 0])
        used[r.host] = [cpu + r.cpu, memory + r.memory_mb, count + 1]
    over = []
    for host in hosts:
        cpu, memory, count = used.get(host["name"], [0, 0, 0])
        cpu_room = math.floor(host["cpu_capacity"] * host["cpu_allocation_ratio"])
        memory_room = math.floor(host["memory_mb_capacity"] * host["memory_allocation_ratio"])
        if cpu > cpu_room or memory > memory_room or count > host["vm_quota"]:
            over.append(f"{host['name']}: {cpu}/{cpu_room} CPU, {count}/{host['vm_quota']} VMs")
    return over


async def ledger_burst(stack: BenchStack, count: int, run: str) -> LedgerRun:
    # Warm the ledger (its start is not what is measured), then leave it empty.
    warm = f"spare-warm-{run}"
    await reserve(stack, warm)
    await free(stack, warm, run)

    spare_ids = [f"spare-ledger-{run}-{i}" for i in range(count)]
    t0 = time.perf_counter()
    answers = await asyncio.gather(*(reserve(stack, s) for s in spare_ids))
    reserve_wall = time.perf_counter() - t0

    handle = stack.client.get_workflow_handle(LEDGER_ID)
    reservations = await handle.query(InventoryLedger.reservations)
    over = overcommitted(stack.tight_doc["hosts"], reservations)

    t0 = time.perf_counter()
    await asyncio.gather(*(free(stack, s, run) for s in spare_ids))
    free_wall = time.perf_counter() - t0
    return LedgerRun(
        asked=count,
        reserved=sum(a.status == "reserved" for a in answers),
        refused=sum(a.status == "no_capacity" for a in answers),
        reserve_wall=reserve_wall,
        free_wall=free_wall,
        overcommitted=over,
    )
