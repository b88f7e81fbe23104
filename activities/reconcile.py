"""The orphan sweep's look at the world: spare VMs, Nodes and reservations whose spare
workflow is gone.

A spare's VM and Node are named after its PrepareSpare workflow id (`spare-...`), so "is
anyone looking after this VM?" is one describe call (two for a warm spare that was handed
over: the spare that claimed it looks after it). The VMs come from the inventories (the
provisioner's own view: the same snapshot placement reads), the Nodes from the Kubernetes
activity `list_spare_nodes`, passed in by the workflow.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from temporalio import activity
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from activities.ledger import ledger_reservations
from contracts.common import HOST
from contracts.ledger import Reservation
from contracts.reconcile import (
    FindOrphansInput,
    FindOrphansResult,
    FindStaleReservationsResult,
    FindTerminatedInput,
    FindTerminatedResult,
    OrphanSpare,
    StaleReservation,
    TerminatedSpare,
    compensation_id,
)
from contracts.spare import PREPARE_SPARE, SPARE_ID_PREFIX, SpareRequest, SpareResult
from hypervisors.inventory import InventorySource

_DESCRIBE_CONCURRENCY = 16


class ReconcileActivities:
    def __init__(self, client: Client, inventories: Mapping[str, InventorySource]) -> None:
        self.client = client
        self.inventories = dict(inventories)

    @activity.defn
    async def find_orphans(self, input: FindOrphansInput) -> FindOrphansResult:
        """Spare VMs and Nodes with no running PrepareSpare of the same id."""
        vms: dict[str, tuple[str, str | None]] = {}
        for inventory, source in self.inventories.items():
            snapshot = await source.load()
            for vm in snapshot.get("existing_vms", []):
                name = str(vm.get("name", ""))
                if name.startswith(SPARE_ID_PREFIX):
                    vms.setdefault(name, (inventory, vm.get("host")))
        nodes = set(input.nodes)
        fallback = next(iter(self.inventories), "default")
        gate = asyncio.Semaphore(_DESCRIBE_CONCURRENCY)

        async def unattended(name: str) -> bool:
            async with gate:
                return not await self._running(name)

        names = sorted(set(vms) | nodes)
        verdicts = await asyncio.gather(*(unattended(n) for n in names))
        orphans = [
            OrphanSpare(
                name=name,
                inventory=vms.get(name, (fallback, None))[0],
                host=vms.get(name, (fallback, None))[1],
                has_vm=name in vms,
                has_node=name in nodes,
            )
            for name, orphaned in zip(names, verdicts, strict=True)
            if orphaned
        ]
        return FindOrphansResult(vms_seen=len(vms), nodes_seen=len(nodes), orphans=orphans)

    async def _running(self, workflow_id: str) -> bool:
        handle = self.client.get_workflow_handle(workflow_id, result_type=SpareResult)
        try:
            description = await handle.describe()
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                return False
            raise  # the engine is unreachable: the activity's retry policy decides
        if description.status == WorkflowExecutionStatus.COMPLETED:
            # A warm spare handed over: its VM and Node are the claiming spare's now.
            result = await handle.result()
            if result.handed_to is not None:
                return await self._running(result.handed_to)
        return description.status == WorkflowExecutionStatus.RUNNING

    @activity.defn
    async def find_stale_reservations(self) -> FindStaleReservationsResult:
        """Reservations of the configured inventories whose spare's workflow has closed (or
        never started): room nobody will ever give back by itself."""
        gate = asyncio.Semaphore(_DESCRIBE_CONCURRENCY)

        async def ended(spare_id: str) -> str | None:
            async with gate:
                try:
                    described = await self.client.get_workflow_handle(spare_id).describe()
                except RPCError as err:
                    if err.status == RPCStatusCode.NOT_FOUND:
                        return "not found"
                    raise
            status = described.status
            if status == WorkflowExecutionStatus.RUNNING:
                return None
            return status.name.lower() if status else "closed"

        stale: list[StaleReservation] = []
        for inventory in self.inventories:
            held = await ledger_reservations(self.client, inventory)
            verdicts = await asyncio.gather(*(ended(r.spare_id) for r in held))
            stale += [
                StaleReservation(spare_id=r.spare_id, inventory=inventory, status=verdict)
                for r, verdict in zip(held, verdicts, strict=True)
                if verdict is not None
            ]
        return FindStaleReservationsResult(reservations=stale)

    @activity.defn
    async def find_terminated(self, input: FindTerminatedInput) -> FindTerminatedResult:
        """PrepareSpare runs terminated since `closed_after` that nobody compensated yet."""
        since = input.closed_after.strftime("%Y-%m-%dT%H:%M:%SZ")
        query = (
            f"WorkflowType = '{PREPARE_SPARE}' AND ExecutionStatus = 'Terminated' "
            f"AND TaskQueue = '{input.task_queue}' AND CloseTime > '{since}'"
        )
        found: list[TerminatedSpare] = []
        reserved: dict[str, dict[str, Reservation]] = {}  # by inventory, then spare id
        async for run in self.client.list_workflows(query):
            if await self._compensated(run.id, run.run_id):
                continue
            request = await self._request_of(run.id, run.run_id)
            if request.inventory not in reserved:
                held = await ledger_reservations(self.client, request.inventory)
                reserved[request.inventory] = {r.spare_id: r for r in held}
            # A terminated run never gave its reservation back: the ledger still holds it. Its
            # VM id is taken for the spare's own VM only (a claimed warm spare's VM keeps its
            # own name, which the orphan sweep looks after).
            reservation = reserved[request.inventory].get(run.id)
            own = reservation if reservation and reservation.vm_name == run.id else None
            found.append(
                TerminatedSpare(
                    spare_id=run.id,
                    run_id=run.run_id,
                    request=request,
                    host=run.typed_search_attributes.get(HOST),
                    vmid=own.vmid if own else None,
                )
            )
        return FindTerminatedResult(spares=found)

    async def _compensated(self, spare_id: str, run_id: str) -> bool:
        """A compensation that runs or ran to its end; a failed one is tried again."""
        try:
            handle = self.client.get_workflow_handle(compensation_id(spare_id, run_id))
            description = await handle.describe()
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                return False
            raise
        return description.status in (
            WorkflowExecutionStatus.RUNNING,
            WorkflowExecutionStatus.COMPLETED,
        )

    async def _request_of(self, spare_id: str, run_id: str) -> SpareRequest:
        """The request the run started with: the first event of its history."""
        handle = self.client.get_workflow_handle(spare_id, run_id=run_id)
        async for event in handle.fetch_history_events():
            started = event.workflow_execution_started_event_attributes
            (request,) = await self.client.data_converter.decode(
                started.input.payloads, [SpareRequest]
            )
            assert isinstance(request, SpareRequest)
            return request
        raise RuntimeError(f"{spare_id} run {run_id} has no history")
