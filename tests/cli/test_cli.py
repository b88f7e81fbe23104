"""The `virtflow` command: one readable line on error, and exit codes that mean something."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from temporalio.client import Client

from contracts.spare import PREPARE_SPARE
from tests.api.api_helpers import LiveStack
from tests.api.test_api_errors import closed_port
from tests.api.test_api_explain import HOSTS

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Run:
    code: int
    out: str
    err: str


async def virtflow(*args: str, env: dict[str, str] | None = None) -> Run:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("VIRTFLOW_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cli",
        *args,
        cwd=REPO,
        env={**clean, "COLUMNS": "200", **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    except TimeoutError:
        # SIGTERM first: virtflow stops its own children before it exits.
        proc.terminate()
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode is not None
    return Run(proc.returncode, out.decode(), err.decode())


@pytest.fixture
def temporal_env_vars(client: Client, task_queue: str) -> dict[str, str]:
    return {
        "VIRTFLOW_TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "VIRTFLOW_TASK_QUEUE": task_queue,
        "VIRTFLOW_INVENTORIES": json.dumps({"default": str(REPO / "lab" / "inventory.yaml")}),
    }


async def test_a_bad_request_exits_2_with_one_line() -> None:
    run = await virtflow("prepare", "--cluster", "lab", "--request-id", "r1", "--cpu", "0")
    assert run.code == 2
    assert run.err.strip().splitlines() == [
        "error: bad request: cpu: Input should be greater than 0 (and 1 more)"
    ]


async def test_the_api_unreachable_exits_1() -> None:
    env = {"VIRTFLOW_API_URL": f"http://127.0.0.1:{closed_port()}"}
    run = await virtflow("status", "spare-lab-x", env=env)
    assert run.code == 1
    assert run.err.startswith("error: the API did not answer")
    assert "Traceback" not in run.err


async def test_a_missing_config_file_exits_2() -> None:
    run = await virtflow("--config", "/nonexistent.yaml", "status", "spare-lab-x")
    assert run.code == 2
    assert "VIRTFLOW_CONFIG=/nonexistent.yaml: no such file" in run.err


async def test_prepare_no_wait_starts_the_workflow_and_status_of_unknown_exits_2(
    client: Client, live: LiveStack
) -> None:
    temporal_env_vars = {"VIRTFLOW_API_URL": live.url}
    request_id = f"r{uuid.uuid4().hex[:8]}"
    run = await virtflow(
        "prepare",
        "--cluster",
        "lab",
        "--request-id",
        request_id,
        "--cpu",
        "2",
        "--memory-mb",
        "2048",
        "--inventory",
        live.stack.inventory,
        "--no-wait",
        env=temporal_env_vars,
    )
    assert run.code == 0, run.err
    assert f"spare-lab-{request_id}" in run.out
    handle = client.get_workflow_handle(f"spare-lab-{request_id}")
    assert (await handle.describe()).workflow_type == PREPARE_SPARE
    await handle.terminate("test over")

    unknown = await virtflow("status", f"spare-lab-{uuid.uuid4().hex[:8]}", env=temporal_env_vars)
    assert unknown.code == 2
    assert unknown.err.startswith("error: no spare 'spare-lab-")


async def test_explain_prints_the_table_and_exits_1_when_nothing_fits(tmp_path: Path) -> None:
    fits = tmp_path / "fits.json"
    fits.write_text(
        json.dumps({"hosts": HOSTS, "request": {"name": "v", "cpu": 4, "memory_mb": 1}})
    )
    run = await virtflow("explain", str(fits))
    assert run.code == 0, run.err
    assert "insufficient_cpu" in run.out

    too_big = tmp_path / "too_big.json"
    too_big.write_text(
        json.dumps({"hosts": HOSTS, "request": {"name": "v", "cpu": 500, "memory_mb": 1}})
    )
    run = await virtflow("explain", "--json", str(too_big))
    assert run.code == 1
    assert json.loads(run.out)["summary"] == "no host fits: 2 insufficient_cpu"


async def test_prepare_follows_until_ready_then_status_and_release(
    live: LiveStack, task_queue: str
) -> None:
    stack = live.stack
    # The spare commands need only the API (and its token, when it has tokens).
    env = {"VIRTFLOW_API_URL": live.url}
    request_id = f"r{uuid.uuid4().hex[:8]}"
    args = ["--cluster", "lab", "--request-id", request_id, "--inventory", stack.inventory]
    run = await virtflow("prepare", *args, "--cpu", "2", "--memory-mb", "2048", env=env)
    assert run.code == 0, run.err
    phases = [line.split()[0] for line in run.out.splitlines() if line.startswith("  ")]
    assert phases[:2] == ["validating", "reserving"]
    assert phases[-1] == "ready"

    spare_id = f"spare-lab-{request_id}"
    status = await virtflow("status", "--json", spare_id, env=env)
    assert status.code == 0, status.err
    assert json.loads(status.out)["phase"] == "ready"

    watched = await virtflow("status", "--watch", spare_id, env=env)
    assert watched.code == 0, watched.err
    assert "phase" in watched.out and "ready (workflow running)" in watched.out

    released = await virtflow("release", spare_id, "--reason", "upgrade done", "--wait", env=env)
    assert released.code == 0, released.err
    assert "released (workflow completed)" in released.out
    await live.phase_becomes(spare_id, "released")
    again = await virtflow("release", spare_id, env=env)
    assert again.code == 2
    assert again.err.strip().endswith("(already_released)")
