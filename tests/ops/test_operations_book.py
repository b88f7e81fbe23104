"""docs/OPERATIONS.md, "Deploying a new build", followed word for word on the dev server: its
`temporal` commands are read out of the page and run as written (with `D`, `S` and the
`TEMPORAL_*` connection variables set, as an operator's shell would have them). A first deploy,
a ramp, a promote, a roll-back, a move of one spare and a retire each leave the deployment as
the page says, and a worker's `/readyz` tells whether any build takes new workflows.

Both builds run in this process as two versioned workers with stand-in activities, as in
test_worker_versioning.py.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import uuid
from typing import Any

import httpx
from temporalio.api.deployment.v1 import WorkerDeploymentVersion
from temporalio.api.enums.v1 import VersionDrainageStatus
from temporalio.api.workflowservice.v1 import (
    DescribeWorkerDeploymentRequest,
    DescribeWorkerDeploymentVersionRequest,
)
from temporalio.client import Client, WorkflowHandle

from contracts.spare import Phase, ReleaseRequest
from runtime.settings import REPO_ROOT, Settings
from runtime.temporal_binaries import temporal_cli
from tests.helpers import answered, assert_eventually, describe_queue
from tests.ops.test_worker_versioning import build, build_of, start_spare
from tests.workflows.standins import StandIns
from worker.health import WorkerHealth, WorkerState, serving_health
from worker.versioning import routing_problem
from workflows.prepare_spare import PrepareSpare

OPERATIONS = REPO_ROOT / "docs" / "OPERATIONS.md"
DRAINING = VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINING
DRAINED = VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED


def book_commands() -> list[str]:
    """The `temporal` commands of the page's deploy section, continuation lines joined."""
    section = OPERATIONS.read_text().partition("\n## Deploying a new build")[2]
    section = section.partition("\n## ")[0]
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S):
        for line in re.sub(r"\\\n\s*", "", block).splitlines():
            if line.startswith("temporal "):
                commands.append(line)
    return commands


def book(*words: str) -> str:
    """The one command of the page holding all these words (a step may recur: the first
    deploy and a roll-back make A current alike)."""
    found = sorted({c for c in book_commands() if all(w in c.split() for w in words)})
    assert len(found) == 1, f"{words}: {found}"
    return found[0]


async def run_book(command: str, env: dict[str, str], retry: bool = False) -> str:
    """Run a command of the page in a shell; with `retry`, until it succeeds (a version is
    refused until the server has seen its pollers)."""

    async def once() -> str:
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        output, _ = await proc.communicate()
        assert proc.returncode == 0, f"{command}\n{output.decode()}"
        return output.decode()

    if retry:
        return await assert_eventually(once, timeout=30, interval=0.5)
    return await once()


def shell(client: Client, deployment: str, **more: str) -> dict[str, str]:
    """The operator's shell: `temporal` on the PATH, the server and the page's variables."""
    return {
        "PATH": f"{temporal_cli().parent}:{os.environ['PATH']}",
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "TEMPORAL_NAMESPACE": client.namespace,
        "D": deployment,
        **more,
    }


async def routing(client: Client, deployment: str) -> tuple[str, str, float]:
    """(current build, ramping build, ramp percentage) of the deployment; "" when none."""
    request = DescribeWorkerDeploymentRequest(
        namespace=client.namespace, deployment_name=deployment
    )
    answer = await assert_eventually(
        lambda: answered(client.workflow_service.describe_worker_deployment(request))
    )
    config = answer.worker_deployment_info.routing_config
    return (
        config.current_deployment_version.build_id,
        config.ramping_deployment_version.build_id,
        round(config.ramping_version_percentage, 1),
    )


async def drainage(client: Client, deployment: str, build_id: str) -> int:
    request = DescribeWorkerDeploymentVersionRequest(
        namespace=client.namespace,
        deployment_version=WorkerDeploymentVersion(deployment_name=deployment, build_id=build_id),
    )
    answer = await assert_eventually(
        lambda: answered(client.workflow_service.describe_worker_deployment_version(request))
    )
    return int(answer.worker_deployment_version_info.drainage_info.status)


async def routed_to(client: Client, task_queue: str, current: str, ramping: str = "") -> None:
    """Wait until the task queue routes as the deployment says (the server propagates it)."""

    async def routed() -> None:
        answer = await describe_queue(client, task_queue)
        info = answer.versioning_info
        seen = (info.current_deployment_version.build_id, info.ramping_deployment_version.build_id)
        assert seen == (current, ramping)

    await assert_eventually(routed, timeout=30, interval=0.2)


async def release(handle: WorkflowHandle[Any, Any]) -> None:
    await handle.execute_update(PrepareSpare.release, ReleaseRequest())
    assert (await handle.result()).phase == Phase.RELEASED


async def readyz(port: int) -> tuple[int, dict[str, Any]]:
    """The probe's answer once Temporal gave one: a busy dev server may cancel the deployment's
    describe, and the probe then says only that Temporal did not answer, so ask again (as the
    kubelet would)."""

    async def probe() -> tuple[int, dict[str, Any]]:
        async with httpx.AsyncClient() as http:
            answer = await http.get(f"http://127.0.0.1:{port}/readyz", timeout=10)
        said = answer.json()
        assert not said.get("detail", "").startswith("Temporal"), said
        return answer.status_code, said

    return await assert_eventually(probe, timeout=30, interval=0.2)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_the_page_has_each_step_and_none_stops_at_a_prompt() -> None:
    for words in (
        ("set-current-version", "A"),
        ("set-current-version", "B"),
        ("set-ramping-version", "--percentage"),
        ("set-ramping-version", "--delete"),
        ("describe-version", "A"),
        ("update-options", "--workflow-id"),
    ):
        book(*words)
    for command in book_commands():
        if command.split()[1:4] == ["worker", "deployment", "set-current-version"] or (
            "set-ramping-version" in command.split()
        ):
            assert "--yes" in command.split(), command


async def test_a_first_deploy_a_promote_and_a_retire_go_as_the_page_says(
    client: Client, task_queue: str
) -> None:
    deployment = f"virtflow-{uuid.uuid4().hex[:8]}"
    env = shell(client, deployment)
    on_a, on_b = StandIns(), StandIns()
    settings = Settings(
        worker_versioning=True,
        worker_deployment_name=deployment,
        worker_build_id="A",
        task_queue=task_queue,
    )
    health = WorkerHealth(client, lambda: routing_problem(client, settings))
    port = free_port()
    a = build(client, task_queue, deployment, "A", on_a)
    async with a, serving_health(health, "127.0.0.1", port):
        health.state = WorkerState.POLLING
        # The first deploy: A polls, but no build is current, and the worker says so.
        status, said = await readyz(port)
        assert status == 503, said
        assert f"--deployment-name {deployment} --build-id A --yes" in said["detail"]

        await run_book(book("set-current-version", "A"), env, retry=True)
        assert await routing(client, deployment) == ("A", "", 0)
        assert await readyz(port) == (200, {"status": "ready"})
        await routed_to(client, task_queue, "A")
        first = await start_spare(client, task_queue)
        assert await build_of(first) == "A"

        async with build(client, task_queue, deployment, "B", on_b):
            # Ramp, then promote: the promote ends the ramp.
            await run_book(book("set-ramping-version", "--percentage"), env, retry=True)
            assert await routing(client, deployment) == ("A", "B", 10.0)
            await run_book(book("set-current-version", "B"), env)
            assert await routing(client, deployment) == ("B", "", 0)
            await routed_to(client, task_queue, "B")
            second = await start_spare(client, task_queue)
            assert await build_of(second) == "B"
            # A still holds its spare: not yet to be retired.
            assert await drainage(client, deployment, "A") == DRAINING

            # Its release runs on A; then nothing is pinned to A, and the page's check says so.
            await release(first)
            assert on_a.asked("destroy_vm") == [first.id]

            async def drained() -> None:
                shown = await run_book(book("describe-version", "A"), env)
                assert re.search(r"DrainageStatus\s+drained", shown), shown

            await assert_eventually(drained, timeout=30, interval=0.5)
            await release(second)
    assert on_b.asked("destroy_vm") == [second.id]
    assert on_a.asked("create_vm") == [first.id]


async def test_a_roll_back_sends_new_spares_to_a_and_lets_b_drain(
    client: Client, task_queue: str
) -> None:
    deployment = f"virtflow-{uuid.uuid4().hex[:8]}"
    env = shell(client, deployment)
    on_a, on_b = StandIns(), StandIns()
    async with build(client, task_queue, deployment, "A", on_a):
        await run_book(book("set-current-version", "A"), env, retry=True)
        async with build(client, task_queue, deployment, "B", on_b):
            await run_book(book("set-ramping-version", "--percentage"), env, retry=True)
            await run_book(book("set-current-version", "B"), env)
            await routed_to(client, task_queue, "B")
            on_b_spare = await start_spare(client, task_queue)
            assert await build_of(on_b_spare) == "B"

            # The page's roll-back: A current, no ramp left, B draining its spare.
            await run_book(book("set-current-version", "A"), env)
            await run_book(book("set-ramping-version", "--delete"), env)
            assert await routing(client, deployment) == ("A", "", 0)
            assert await drainage(client, deployment, "B") == DRAINING
            await routed_to(client, task_queue, "A")
            after = await start_spare(client, task_queue)
            assert await build_of(after) == "A"

            # Moving B's spare to A, as the page writes it.
            moved = shell(client, deployment, S=on_b_spare.id)
            await run_book(book("update-options", "--workflow-id"), moved)
            info = (await on_b_spare.describe()).raw_description.workflow_execution_info
            override = info.versioning_info.versioning_override
            assert override.pinned.version.build_id == "A", override
            await release(on_b_spare)
            assert on_a.asked("destroy_vm") == [on_b_spare.id]

            # Nothing is pinned to B any more: it drains, to be retired.
            async def drained() -> None:
                assert await drainage(client, deployment, "B") == DRAINED

            await assert_eventually(drained, timeout=30, interval=0.5)
            await release(after)
    assert on_b.asked("create_vm") == [on_b_spare.id]
    assert on_b.asked("destroy_vm") == []
