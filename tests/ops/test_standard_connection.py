"""A `virtflow worker` given only TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE (what the Temporal
Worker Controller and the CLI's users set) connects and polls there."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf.duration_pb2 import Duration
from temporalio.api.workflowservice.v1 import RegisterNamespaceRequest
from temporalio.client import Client

from contracts.common import TASK_QUEUE
from contracts.reconcile import RECONCILE_SCHEDULE_ID
from runtime.settings import REPO_ROOT
from tests.helpers import assert_eventually, describe_queue


@pytest.fixture
async def namespace(client: Client) -> str:
    """A namespace of its own, so the default task queue is this worker's alone."""
    name = f"std-{uuid.uuid4().hex[:8]}"
    await client.workflow_service.register_namespace(
        RegisterNamespaceRequest(
            namespace=name, workflow_execution_retention_period=Duration(seconds=86400)
        )
    )
    return name


@pytest.fixture
def worker(client: Client, namespace: str, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    env = {
        "PATH": str(Path(sys.executable).parent),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(REPO_ROOT),
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "TEMPORAL_NAMESPACE": namespace,
    }
    log = (tmp_path / "worker.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", "worker"],
        cwd=tmp_path,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


async def test_the_worker_starts_with_only_the_standard_address_and_namespace(
    client: Client, namespace: str, worker: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    other = await Client.connect(client.service_client.config.target_host, namespace=namespace)

    async def polling() -> None:
        assert worker.poll() is None, (tmp_path / "worker.log").read_text()
        answer = await describe_queue(other, TASK_QUEUE)
        assert answer.pollers, "no worker polls the namespace's task queue yet"

    await assert_eventually(polling, timeout=60, interval=0.5)
    # It wrote there too: the orphan sweep's schedule exists in that namespace.
    description = await other.get_schedule_handle(RECONCILE_SCHEDULE_ID).describe()
    assert description.id == RECONCILE_SCHEDULE_ID
    worker.terminate()
    assert worker.wait(timeout=30) == 0
