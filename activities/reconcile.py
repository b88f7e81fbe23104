"""The orphan sweep's look at the world: spare VMs and Nodes whose spare workflow is gone.

A spare's VM and Node are named after its PrepareSpare workflow id (`spare-...`), so "is
anyone looking after this VM?" is one describe call (two for a warm spare that was handed
over: the spare that claimed it looks after it). The VMs come from the inventories (the
provisioner's own view: the same snapshot placement reads), the Nodes from the Kubernetes
activity `list_spare_nodes`, passed in by the workflow.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from pydantic import BaseModel, Field
from temporalio import activity
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from activities.inventory import InventorySource
from contracts.spare import SPARE_ID_PREFIX, SpareResult

_DESCRIBE_CONCURRENCY = 16


class FindOrphansInput(BaseModel):
    # Nodes labelled as virtflow spares (KubernetesActivities.list_spare_nodes).
    nodes: list[str] = Field(default_factory=list)


class OrphanSpare(BaseModel):
    name: str
    host: str | None = None
    # The inventory whose VM this is; for a Node without a VM, the first configured one.
    inventory: str
    has_vm: bool
    has_node: bool


class FindOrphansResult(BaseModel):
    vms_seen: int
    nodes_seen: int
    orphans: list[OrphanSpare] = Field(default_factory=list)


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
