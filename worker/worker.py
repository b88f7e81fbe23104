"""The Temporal worker: every workflow and activity of virtflow on one task queue.

Activities get their dependencies (inventory sources, clients, secrets) here, from the
settings; workflows never see configuration, so history never holds a secret.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker

from activities.inventory import inventory_source
from activities.kubernetes import KubernetesActivities
from activities.ledger import LedgerActivities
from activities.notify import NotifyActivities
from activities.placement import PlacementActivities
from activities.provisioning import AnsibleProvisioner, ProvisioningActivities
from placement.policy import load_policy
from workflows.ledger import InventoryLedger
from workflows.prepare_spare import PrepareSpare
from workflows.release_spare import ReleaseSpare

from .activity_metrics import ActivityMetrics
from .settings import Settings

WORKFLOWS = [PrepareSpare, ReleaseSpare, InventoryLedger]


def build_activities(settings: Settings, client: Client) -> list[Callable[..., Any]]:
    """The activity callables, each bound to the dependencies it needs."""
    placement = PlacementActivities(
        inventories={name: inventory_source(spec) for name, spec in settings.inventories.items()},
        policy=load_policy(settings.policy_path) if settings.policy_path else None,
    )
    provisioning = ProvisioningActivities(
        AnsibleProvisioner(
            playbook_dir=settings.playbook_dir,
            provider=settings.ansible_provider,
            extravars=settings.ansible_extravars,
            artifacts_root=settings.state_dir / "ansible",
        )
    )
    kube = KubernetesActivities(settings.kubeconfig)
    notify = NotifyActivities(settings.receivers)
    ledger = LedgerActivities(client)
    return [
        placement.place_vm,
        ledger.reserve_capacity,
        ledger.free_capacity,
        provisioning.create_vm,
        provisioning.destroy_vm,
        provisioning.describe_vm,
        kube.wait_node_ready,
        kube.cordon_node,
        kube.drain_node,
        kube.delete_node,
        kube.list_spare_nodes,
        notify.plan_notifications,
        notify.deliver_webhook,
    ]


def build_worker(settings: Settings, client: Client, task_queue: str | None = None) -> Worker:
    return Worker(
        client,
        task_queue=task_queue or settings.task_queue,
        workflows=WORKFLOWS,
        activities=build_activities(settings, client),
        interceptors=[ActivityMetrics()],
    )


async def run_worker(settings: Settings, client: Client, stop: asyncio.Event) -> None:
    """Run until `stop` is set, then finish in-flight tasks and return."""
    worker = build_worker(settings, client)
    async with worker:
        await stop.wait()
