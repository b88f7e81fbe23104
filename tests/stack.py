"""A whole virtflow stack for a test: lab, reference receiver, and a worker on its own queue."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import SecretStr
from temporalio.client import Client, WorkflowHandle

from contracts.ledger import Reservation, ledger_workflow_id
from contracts.spare import Phase, SpareRequest, spare_workflow_id
from lab.stack import DEFAULT_INVENTORY, LabStack
from runtime.clusters import ClusterConfig
from runtime.receivers import ReceiverConfig
from runtime.settings import Settings
from tests.helpers import assert_eventually, until_polled
from tests.known_secrets import WEBHOOK_SECRET
from webhooks.receiver import create_receiver_app
from webhooks.serve import serve_app
from worker.worker import running_worker
from workflows.ledger import InventoryLedger
from workflows.prepare_spare import PrepareSpare

LAB_INVENTORY = DEFAULT_INVENTORY


@dataclass
class Stack:
    client: Client
    lab: LabStack
    settings: Settings
    task_queue: str
    inventory: str
    receiver_url: str
    receiver_app: Any

    def request(self, **fields: Any) -> SpareRequest:
        base: dict[str, Any] = {
            "request_id": f"r{uuid.uuid4().hex[:10]}",
            "cluster": "lab",
            "inventory": self.inventory,
            "cpu": 2,
            "memory_mb": 2048,
            "ttl_seconds": 3600,
        }
        return SpareRequest.model_validate({**base, **fields})

    async def start(self, req: SpareRequest) -> WorkflowHandle[PrepareSpare, Any]:
        return await self.client.start_workflow(
            PrepareSpare.run,
            req,
            id=spare_workflow_id(req.cluster, req.request_id),
            task_queue=self.task_queue,
        )

    async def events(self, spare_id: str) -> list[dict[str, Any]]:
        async with httpx.AsyncClient() as http:
            answer = await http.get(f"{self.receiver_url}/events", params={"spare_id": spare_id})
        answer.raise_for_status()
        events: list[dict[str, Any]] = answer.json()
        return events

    async def event_types(self, spare_id: str) -> list[str]:
        return [e["type"] for e in await self.events(spare_id)]


Provisioner = Literal["ansible", "gitlab", "http"]


def stack_settings(
    lab: LabStack, state_dir: Path, inventory: str, receiver_url: str, secret: str
) -> Settings:
    return Settings(
        state_dir=state_dir,
        inventories={inventory: f"{lab.hypervisor_url}/inventory"},
        kubeconfig=lab.kubeconfig,
        ansible_extravars={"lab_hypervisor_url": lab.hypervisor_url},
        # A test that ends with an activity in flight (a Ready wait that never ends) does not
        # wait for it: shutting down cancels it at once.
        graceful_shutdown_seconds=0,
        receivers={
            "upgradectrl": ReceiverConfig(
                url=f"{receiver_url}/webhooks",
                secrets=[SecretStr(secret)],
                retry_schedule_seconds=[0.2, 0.4, 0.8, 1.6, *[2.0] * 26],
            )
        },
    )


def with_lab_gitlab(settings: Settings, lab: LabStack) -> Settings:
    """Provision through the lab GitLab's pipeline instead of running the playbook here."""
    assert lab.gitlab is not None
    return settings.model_copy(
        update={
            "provisioner": "gitlab",
            "gitlab_url": lab.gitlab.url,
            "gitlab_trigger_token": SecretStr(lab.gitlab.trigger_token),
            "gitlab_api_token": SecretStr(lab.gitlab.api_token),
            "gitlab_user_data_key": SecretStr(lab.gitlab.user_data_key),
            "gitlab_poll_seconds": 0.2,
        }
    )


def with_lab_clusters(settings: Settings, lab: LabStack) -> Settings:
    """Every lab cluster registered under its name, on its own kubeconfig."""
    clusters = {name: ClusterConfig(kubeconfig=c.kubeconfig) for name, c in lab.clusters.items()}
    return settings.model_copy(update={"kubeconfig": None, "clusters": clusters})


def with_lab_hypervisor_api(settings: Settings, lab: LabStack) -> Settings:
    """Provision through the lab hypervisor's HTTP API: for tests whose point is not Ansible
    (each playbook run costs seconds; the Ansible path has its own tests)."""
    return settings.model_copy(
        update={"provisioner": "http", "hypervisor_api_url": lab.hypervisor_url}
    )


def uniform_site(hosts: int, cpu_each: int) -> dict[str, Any]:
    """An inventory of identical empty hosts with `cpu_each` CPUs: room is easy to count."""
    return {
        "hosts": [
            {
                "name": f"bm-{i:02d}",
                "pool": "general",
                "cpu_capacity": cpu_each,
                "cpu_allocated": 0,
                "cpu_allocation_ratio": 1.0,
                "memory_mb_capacity": 65536,
                "memory_mb_allocated": 0,
                "memory_allocation_ratio": 1.0,
            }
            for i in range(hosts)
        ]
    }


async def wait_phase(handle: WorkflowHandle[Any, Any], phase: Phase, timeout: float = 60) -> None:
    async def reached() -> None:
        status = await handle.query(PrepareSpare.status)
        assert status.phase == phase, f"still {status.phase}: {status.waiting_for}"

    await assert_eventually(reached, timeout=timeout)


async def ledger_reservations(stack: Stack) -> list[Reservation]:
    handle = stack.client.get_workflow_handle(ledger_workflow_id(stack.inventory))
    return await handle.query(InventoryLedger.reservations)


@contextlib.asynccontextmanager
async def running_stack(
    client: Client,
    task_queue: str,
    tmp_path: Path,
    inventory_doc: dict[str, Any],
    configure: Callable[[Settings], Settings] | None = None,
    provisioner: Provisioner = "ansible",
    extra_clusters: tuple[str, ...] = (),
) -> AsyncIterator[Stack]:
    """`configure` adjusts the worker's settings (more receivers, an event bus) before it starts;
    `provisioner` picks the real playbook (default), the lab GitLab or the lab hypervisor's API;
    `extra_clusters` are lab clusters beside `lab`, each registered with its own kubeconfig."""
    inventory = f"inv-{uuid.uuid4().hex[:10]}"
    secret = WEBHOOK_SECRET
    lab = LabStack(inventory_doc=inventory_doc, ready_delay=0.3, extra_clusters=extra_clusters)
    await lab.start(tmp_path / "lab")
    app = create_receiver_app([secret], tmp_path / "receiver.db")
    try:
        async with serve_app(app) as receiver_url:
            settings = stack_settings(lab, tmp_path, inventory, receiver_url, secret)
            if extra_clusters:
                settings = with_lab_clusters(settings, lab)
            if provisioner == "gitlab":
                settings = with_lab_gitlab(settings, lab)
            elif provisioner == "http":
                settings = with_lab_hypervisor_api(settings, lab)
            if configure is not None:
                settings = configure(settings)
            async with running_worker(settings, client, task_queue=task_queue):
                await until_polled(client, task_queue)
                yield Stack(client, lab, settings, task_queue, inventory, receiver_url, app)
    finally:
        await lab.stop()
