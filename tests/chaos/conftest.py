"""A lab stack whose worker is a separate `virtflow worker` process the test can kill."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from contracts.spare import SpareRequest
from contracts.timeouts import ActivityTimeouts
from lab.hypervisor import load_inventory_file
from lab.stack import LabStack
from tests.chaos.receiver_gate import ReceiverGate
from tests.chaos.worker_process import WorkerProcess, worker_env
from tests.stack import LAB_INVENTORY, Stack, stack_settings
from webhooks.receiver import create_receiver_app
from webhooks.serve import serve_app
from webhooks.signing import generate_secret

# A dead worker's activities move to the next worker within seconds, not minutes; still
# loose enough that a live worker on a loaded 2-core machine is never taken for dead.
FAST = ActivityTimeouts(heartbeat_seconds=10, call_seconds=15, ledger_seconds=60)
# One webhook attempt lasts this plus the activity's margin.
RECEIVER_TIMEOUT_SECONDS = 2.0


@dataclass
class Chaos:
    stack: Stack
    gate: ReceiverGate
    env: dict[str, str]
    tmp_path: Path
    workers: list[WorkerProcess] = field(default_factory=list)

    def request(self, **fields: Any) -> SpareRequest:
        return self.stack.request(**{"timeouts": FAST, **fields})

    def use_http_provisioner(self) -> None:
        """Workers started from now on call the lab hypervisor's API instead of Ansible."""
        self.env["VIRTFLOW_PROVISIONER"] = "http"
        self.env["VIRTFLOW_HYPERVISOR_API_URL"] = self.stack.lab.hypervisor_url

    async def start_worker(self, module: str | None = None) -> WorkerProcess:
        """`virtflow worker`, or a test's own entry point `python -m <module> worker`."""
        log = self.tmp_path / f"worker-{len(self.workers) + 1}.log"
        env = dict(self.env)  # this worker's: later changes are for the next one
        process = WorkerProcess(self.stack.client, self.stack.task_queue, env, log, module)
        self.workers.append(process)
        return await process.start()


@pytest.fixture
def inventory_doc() -> dict[str, Any]:
    """The lab site; a test module may override this fixture with its own hosts."""
    return load_inventory_file(LAB_INVENTORY)


@pytest.fixture
async def chaos(
    client: Client,
    temporal_env: WorkflowEnvironment,
    task_queue: str,
    tmp_path: Path,
    inventory_doc: dict[str, Any],
) -> AsyncIterator[Chaos]:
    inventory = f"inv-{uuid.uuid4().hex[:10]}"
    secret = generate_secret()
    lab = LabStack(inventory_doc=inventory_doc, ready_delay=0.3)
    await lab.start(tmp_path / "lab")
    gate = ReceiverGate(create_receiver_app([secret], tmp_path / "receiver.db"))
    chaos: Chaos | None = None
    try:
        async with serve_app(gate) as receiver_url:
            settings = stack_settings(lab, tmp_path, inventory, receiver_url, secret)
            receiver = settings.receivers["upgradectrl"]
            settings.receivers["upgradectrl"] = receiver.model_copy(
                update={"timeout_seconds": RECEIVER_TIMEOUT_SECONDS}
            )
            address = client.service_client.config.target_host
            stack = Stack(client, lab, settings, task_queue, inventory, receiver_url, gate.app)
            chaos = Chaos(stack, gate, worker_env(settings, address, task_queue), tmp_path)
            try:
                yield chaos
            finally:
                gate.open()  # the server waits for held requests on stop
                for process in chaos.workers:
                    await process.stop()
    finally:
        await lab.stop()
