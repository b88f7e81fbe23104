"""The worker's Prometheus endpoint serves the SDK's metrics and virtflow's own."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
from temporalio.testing import WorkflowEnvironment

from activities import metrics
from contracts.spare import Phase, ReleaseRequest
from lab.hypervisor import load_inventory_file
from runtime.connect import connect
from runtime.settings import Settings
from tests.stack import LAB_INVENTORY, running_stack, wait_phase
from workflows.prepare_spare import PrepareSpare


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_metrics_list_virtflow_series_after_a_spare_runs(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path
) -> None:
    port = free_port()
    settings = Settings(
        temporal_address=temporal_env.client.service_client.config.target_host,
        metrics_host="127.0.0.1",
        metrics_port=port,
    )
    client = await connect(settings)
    inventory = load_inventory_file(LAB_INVENTORY)
    async with running_stack(client, task_queue, tmp_path, inventory) as stack:
        handle = await stack.start(stack.request())
        await wait_phase(handle, Phase.READY)
        await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
        assert (await handle.result()).phase == Phase.RELEASED

    async with httpx.AsyncClient() as http:
        answer = await http.get(f"http://127.0.0.1:{port}/metrics")
    answer.raise_for_status()
    lines = answer.text.splitlines()
    samples = [line for line in lines if line and not line.startswith("#")]

    def series(name: str, *labels: str) -> list[str]:
        return [
            s for s in samples if s.split("{")[0].startswith(name) and all(x in s for x in labels)
        ]

    assert series(metrics.SPARE_PHASE, 'phase="ready"', 'transition="entered"')
    assert series(metrics.SPARE_PHASE, 'phase="released"', 'transition="entered"')
    assert series(metrics.TIME_TO_READY + "_count")
    assert series(metrics.PLACEMENT_LATENCY + "_count", 'outcome="placed"')
    assert series(metrics.WEBHOOK_DELIVERIES, 'result="delivered"', 'receiver="upgradectrl"')
    ledger = series(metrics.LEDGER_RESERVATIONS, f'inventory="{stack.inventory}"')
    assert ledger and ledger[0].endswith(" 0"), ledger  # the one reservation was freed
    # The SDK's own series share the endpoint.
    assert series("temporal_workflow_completed", f'task_queue="{task_queue}"')
