"""`virtflow replay` replays a namespace's histories against the installed code: it prints the
one that diverges and exits 1, exits 0 when everything replays, and 2 when it could not run;
like every operator command it binds no port, so it runs inside a worker's Pod."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Collection, Iterator
from datetime import timedelta

import pytest
from temporalio.client import Client
from typer.testing import CliRunner

from cli.main import app
from contracts.spare import SpareRequest
from runtime.settings import get_settings
from tests.helpers import new_worker
from tests.ops.incompatible_build import ChangedPrepareSpare


async def virtflow_replay(
    client: Client,
    task_queue: str,
    monkeypatch: pytest.MonkeyPatch,
    overridden: Collection[str] = (),
) -> tuple[int, str]:
    """The command in this process, on a thread of its own (it runs its own event loop);
    the variables in `overridden` are left as the test set them."""
    connection = {
        "VIRTFLOW_TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "VIRTFLOW_TEMPORAL_NAMESPACE": client.namespace,
        "VIRTFLOW_TASK_QUEUE": task_queue,
    }
    for name, value in connection.items():
        if name not in overridden:
            monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    try:
        result = await asyncio.to_thread(CliRunner().invoke, app, ["replay", "--since-hours", "1"])
    finally:
        get_settings.cache_clear()
    return result.exit_code, " ".join(result.output.split())


async def test_a_history_the_installed_code_cannot_replay_fails_the_gate(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = await virtflow_replay(client, task_queue, monkeypatch)
    assert (code, "replayed 0 histories") == (0, out[: len("replayed 0 histories")]), out

    # A spare history written by other workflow code than the code installed here.
    request = SpareRequest(
        request_id=f"r{uuid.uuid4().hex[:10]}", cluster="lab", cpu=1, memory_mb=512
    )
    async with new_worker(client, ChangedPrepareSpare, task_queue=task_queue):
        await client.execute_workflow(
            ChangedPrepareSpare.run,
            request,
            id=request.spare_id,
            task_queue=task_queue,
            execution_timeout=timedelta(seconds=30),
        )
    code, out = await virtflow_replay(client, task_queue, monkeypatch)
    assert code == 1, out
    assert f"non-deterministic PrepareSpare {request.spare_id}" in out
    assert "replayed 1 histories" in out and "1 diverge" in out


async def virtflow_command(*args: str, env: dict[str, str]) -> tuple[int, str]:
    """The installed command in a process of its own, as `kubectl exec` runs it in a Pod."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cli",
        *args,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    output, _ = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, " ".join(output.decode().split())


@pytest.fixture
def worker_metrics_port() -> Iterator[int]:
    """A port held as the worker of the same Pod holds its `metrics_port`."""
    with socket.socket() as held:
        held.bind(("0.0.0.0", 0))
        held.listen()
        yield held.getsockname()[1]


def connection_env(client: Client, task_queue: str, metrics_port: int) -> dict[str, str]:
    return {
        "VIRTFLOW_TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "VIRTFLOW_TEMPORAL_NAMESPACE": client.namespace,
        "VIRTFLOW_TASK_QUEUE": task_queue,
        "VIRTFLOW_METRICS_PORT": str(metrics_port),
    }


async def test_replay_runs_beside_a_worker_that_holds_the_metrics_port(
    client: Client, task_queue: str, worker_metrics_port: int
) -> None:
    code, out = await virtflow_command(
        "replay",
        "--since-hours",
        "1",
        env=connection_env(client, task_queue, worker_metrics_port),
    )
    assert code == 0, out
    assert "replayed 0 histories" in out and "all replay" in out
    assert "Traceback" not in out


async def test_inventory_binds_no_port_either(
    client: Client, task_queue: str, worker_metrics_port: int
) -> None:
    # The inventory is not configured: the command connects first, then says so.
    code, out = await virtflow_command(
        "inventory", "nowhere", env=connection_env(client, task_queue, worker_metrics_port)
    )
    assert (code, "Traceback" in out) == (2, False), out
    assert "nowhere" in out and "Address already in use" not in out


@pytest.mark.parametrize(
    ("case", "env", "reason"),
    [
        (
            "Temporal does not answer",
            {"VIRTFLOW_TEMPORAL_ADDRESS": "127.0.0.1:{closed}"},
            "could not replay: Temporal unavailable",
        ),
        (
            "the namespace does not exist",
            {"VIRTFLOW_TEMPORAL_NAMESPACE": "no-such-namespace"},
            "could not replay: NOT_FOUND",
        ),
    ],
)
async def test_replay_that_could_not_run_exits_2_not_1(
    client: Client,
    task_queue: str,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    env: dict[str, str],
    reason: str,
) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        closed = free.getsockname()[1]
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(closed=closed))
    code, out = await virtflow_replay(client, task_queue, monkeypatch, overridden=set(env))
    assert code == 2, f"{case}: {out}"
    assert reason in out and "Traceback" not in out, out
