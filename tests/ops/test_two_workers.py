"""Two `virtflow worker` processes on one task queue share 20 spares with no change of results,
and their JSON logs carry spare and workflow ids but none of the configured secrets."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from temporalio.api.enums.v1 import EventType, TaskQueueType
from temporalio.client import Client

from contracts.spare import Phase, ReleaseRequest, SpareRequest, SpareResult, spare_workflow_id
from lab.stack import LabStack
from runtime.settings import REPO_ROOT
from tests.helpers import assert_eventually, describe_queue
from tests.stack import uniform_site
from webhooks.receiver import create_receiver_app
from webhooks.serve import serve_app
from webhooks.signing import generate_secret
from workflows.prepare_spare import PrepareSpare

SPARES = 20
WORKERS = 2


class Secrets:
    """Values that must never appear in a log line."""

    def __init__(self) -> None:
        self.webhook = generate_secret()
        self.api_token = f"tok-{uuid.uuid4().hex}"
        self.temporal_api_key = f"key-{uuid.uuid4().hex}"

    def all(self) -> list[str]:
        # The whsec_ secret's key part too, in case something logs it decoded or re-encoded.
        return [
            self.webhook,
            self.webhook.removeprefix("whsec_"),
            self.api_token,
            self.temporal_api_key,
        ]


def write_config(
    tmp: Path, client: Client, task_queue: str, lab: LabStack, receiver_url: str, secrets: Secrets
) -> tuple[Path, Path]:
    """The YAML file and the secrets directory, as a deployment would have them."""
    config = tmp / "virtflow.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "temporal_address": client.service_client.config.target_host,
                # The dev server has no TLS; the key is still sent and must not be logged.
                "temporal_tls": False,
                "task_queue": task_queue,
                "inventories": {"site": f"{lab.hypervisor_url}/inventory"},
                "kubeconfig": str(lab.kubeconfig),
                # The work-sharing is under test, not Ansible: forty playbook runs would only
                # make the test slow (Ansible is covered by the workflow and chaos tests).
                "provisioner": "http",
                "hypervisor_api_url": lab.hypervisor_url,
                "receivers": {
                    "upgradectrl": {
                        "url": f"{receiver_url}/webhooks",
                        "retry_schedule_seconds": [0.2, 0.5, 1.0, 2.0, 2.0, 2.0],
                    }
                },
                "log_format": "json",
                "log_level": "INFO",
            }
        )
    )
    secret_dir = tmp / "secrets"
    secret_dir.mkdir()
    files = {
        "virtflow_receivers__upgradectrl__secrets": json.dumps([secrets.webhook]),
        "virtflow_api_tokens": json.dumps({secrets.api_token: "operator"}),
        "virtflow_temporal_api_key": secrets.temporal_api_key,
    }
    for name, text in files.items():
        (secret_dir / name).write_text(text)
    return config, secret_dir


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def start_worker(tmp: Path, n: int, config: Path, secret_dir: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIRTFLOW_")}
    env.update(
        VIRTFLOW_CONFIG=str(config),
        VIRTFLOW_SECRETS_DIR=str(secret_dir),
        VIRTFLOW_STATE_DIR=str(tmp / f"worker-{n}"),
        PYTHONPATH=str(REPO_ROOT),
    )
    log = (tmp / f"worker-{n}.log").open("wb")
    return subprocess.Popen(
        [sys.executable, "-m", "cli", "worker"],
        cwd=REPO_ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


async def pollers(client: Client, task_queue: str) -> set[str]:
    answer = await describe_queue(client, task_queue, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)
    return {p.identity for p in answer.pollers}


async def activity_identities(client: Client, workflow_id: str) -> set[str]:
    identities = set()
    async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            identities.add(event.activity_task_started_event_attributes.identity)
    return identities


@pytest.mark.slow
async def test_two_worker_processes_share_twenty_spares(
    client: Client, task_queue: str, tmp_path: Path, workers: list[subprocess.Popen[bytes]]
) -> None:
    secrets = Secrets()
    lab = LabStack(inventory_doc=uniform_site(hosts=10, cpu_each=8), ready_delay=0.3)
    await lab.start(tmp_path / "lab")
    receiver = create_receiver_app([secrets.webhook], tmp_path / "receiver.db")
    try:
        async with serve_app(receiver) as receiver_url:
            config, secret_dir = write_config(
                tmp_path, client, task_queue, lab, receiver_url, secrets
            )
            workers += [start_worker(tmp_path, n, config, secret_dir) for n in range(WORKERS)]

            async def both_polling() -> None:
                assert all(w.poll() is None for w in workers), "a worker exited"
                assert len(await pollers(client, task_queue)) == WORKERS

            await assert_eventually(both_polling, timeout=60)
            results = await run_spares(client, task_queue, receiver_url)
    finally:
        await lab.stop()

    for proc in workers:
        proc.send_signal(signal.SIGTERM)
    for proc in workers:
        assert proc.wait(timeout=60) == 0

    assert len(results) == SPARES
    assert {r.phase for r in results} == {Phase.RELEASED}
    assert all(r.host and r.vm and r.vm.name == r.spare_id for r in results)
    assert not lab.hypervisor.vms, "every VM was destroyed"
    identities = set()
    for result in results:
        identities |= await activity_identities(client, result.spare_id)
    assert len(identities) == WORKERS, f"activities ran on {identities}"

    check_logs(tmp_path, secrets, {r.spare_id for r in results})


async def ready_at_receiver(receiver_url: str, spare_ids: list[str]) -> None:
    """Waits on the receiver, not on 20 queries a tick, to keep the dev server's load low."""

    async def all_ready() -> None:
        async with httpx.AsyncClient() as http:
            answer = await http.get(f"{receiver_url}/events", params={"type": "spare.ready"})
        ready = {e["spare_id"] for e in answer.json()}
        assert ready >= set(spare_ids), f"{len(ready & set(spare_ids))} of {len(spare_ids)}"

    await assert_eventually(all_ready, timeout=300, interval=1.0)


async def run_spares(client: Client, task_queue: str, receiver_url: str) -> list[SpareResult]:
    requests = [
        SpareRequest.model_validate(
            {
                "request_id": f"two-{uuid.uuid4().hex[:8]}",
                "cluster": "lab",
                "inventory": "site",
                "cpu": 2,
                "memory_mb": 2048,
                "receivers": ["upgradectrl"],
            }
        )
        for _ in range(SPARES)
    ]
    handles = [
        await client.start_workflow(
            PrepareSpare.run,
            req,
            id=spare_workflow_id(req.cluster, req.request_id),
            task_queue=task_queue,
        )
        for req in requests
    ]
    await ready_at_receiver(receiver_url, [h.id for h in handles])
    for handle in handles:
        await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="upgrade done"))
    return list(await asyncio.gather(*(h.result() for h in handles)))


def check_logs(tmp: Path, secrets: Secrets, spare_ids: set[str]) -> None:
    logged_spares = set()
    for n in range(WORKERS):
        text = (tmp / f"worker-{n}.log").read_text()
        for secret in secrets.all():
            assert secret not in text, f"worker {n} logged a secret"
        for line in text.splitlines():
            record = json.loads(line)  # every line is one JSON object
            assert {"time", "level", "logger", "message"} <= set(record)
            if record.get("spare_id"):
                assert record["workflow_id"], record
                logged_spares.add(record["spare_id"])
    # Activity lines (webhook deliveries at least) name their spare for every spare.
    assert spare_ids <= logged_spares
