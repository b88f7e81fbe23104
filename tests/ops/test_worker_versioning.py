"""Worker Versioning on the dev server: spares started on build A stay on A, holding and
releasing there, while new spares go to build B; and `virtflow replay` catches a build whose
workflow code cannot replay A's histories before that build takes any traffic.

Both builds run in this process as two workers with their own build ids; the activities are
stand-ins recording which build ran them (the spare's path, not the VM, is under test). The
versions are made current with the `temporal worker deployment` commands the docs give.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from activities.kubernetes import KubernetesActivities
from activities.warm_pools import WarmActivities
from contracts.kubernetes import NodeHealthResult, WatchNodeHealthInput
from contracts.ledger import FREE_UPDATE, FreeInput, FreeResult, LedgerState, ledger_workflow_id
from contracts.release import RELEASE_SPARE
from contracts.spare import Phase, ReleaseRequest, SpareRequest, SpareResult
from contracts.warm import (
    CONFIGURE_SIGNAL,
    POOL_QUERY,
    WARM_POOL,
    WarmNodeInput,
    WarmPoolSpec,
    WarmPoolState,
    WarmPoolView,
    warm_pool_workflow_id,
)
from runtime.settings import Settings
from runtime.temporal_binaries import temporal_cli
from tests.helpers import assert_eventually, describe_queue
from tests.ops.incompatible_build import ChangedPrepareSpare
from tests.stack import wait_phase
from tests.workflows.standins import StandIns, real_name
from worker.replay import replay_namespace
from worker.versioning import deployment_config
from worker.worker import WORKFLOWS, workflow_runner
from workflows.ledger import InventoryLedger
from workflows.prepare_spare import PrepareSpare


@asynccontextmanager
async def build(
    client: Client,
    task_queue: str,
    deployment: str,
    build_id: str,
    standins: StandIns,
    workflows: Sequence[type] = WORKFLOWS,
    extra: Sequence[Callable[..., Any]] = (),
) -> AsyncIterator[Worker]:
    settings = Settings(
        worker_versioning=True, worker_deployment_name=deployment, worker_build_id=build_id
    )
    worker = Worker(
        client,
        task_queue=task_queue,
        workflows=list(workflows),
        activities=[*standins.activities(), *extra],
        workflow_runner=workflow_runner(),
        deployment_config=deployment_config(settings),
    )
    async with worker:
        yield worker


async def make_current(client: Client, task_queue: str, deployment: str, build_id: str) -> None:
    """`temporal worker deployment set-current-version`, once the version's pollers are seen;
    returns when the task queue routes to it (the server propagates the change)."""
    command = [
        str(temporal_cli()),
        "worker",
        "deployment",
        "set-current-version",
        f"--address={client.service_client.config.target_host}",
        f"--namespace={client.namespace}",
        f"--deployment-name={deployment}",
        f"--build-id={build_id}",
        "--yes",
    ]

    async def done() -> None:
        proc = await asyncio.create_subprocess_exec(
            *command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        output, _ = await proc.communicate()
        assert proc.returncode == 0, output.decode()

    async def routed() -> None:
        answer = await describe_queue(client, task_queue)
        current = answer.versioning_info.current_deployment_version
        assert (current.deployment_name, current.build_id) == (deployment, build_id)

    await assert_eventually(done, timeout=30, interval=0.5)
    await assert_eventually(routed, timeout=30, interval=0.2)


async def build_of(handle: WorkflowHandle[Any, Any]) -> str:
    """The build the workflow is pinned to, as the server records it."""
    description = await handle.describe()
    info = description.raw_description.workflow_execution_info.versioning_info
    return info.deployment_version.build_id


async def start_spare(client: Client, task_queue: str) -> WorkflowHandle[Any, SpareResult]:
    request = SpareRequest(
        request_id=f"r{uuid.uuid4().hex[:10]}", cluster="lab", cpu=2, memory_mb=2048
    )
    handle = await client.start_workflow(
        PrepareSpare.run, request, id=request.spare_id, task_queue=task_queue
    )
    await wait_phase(handle, Phase.READY, timeout=30)
    return handle


async def test_spares_keep_their_build_and_replay_gates_an_incompatible_one(
    client: Client, task_queue: str
) -> None:
    deployment = f"virtflow-{uuid.uuid4().hex[:8]}"
    on_a, on_b = StandIns(), StandIns()
    async with build(client, task_queue, deployment, "A", on_a):
        await make_current(client, task_queue, deployment, "A")
        first = await start_spare(client, task_queue)
        assert await build_of(first) == "A"

        # The gate before B: a B whose PrepareSpare changed incompatibly is caught...
        broken = [ChangedPrepareSpare, *(w for w in WORKFLOWS if w is not PrepareSpare)]
        report = await replay_namespace(
            client, task_queue, timedelta(hours=1), limit=50, workflows=broken
        )
        (diverged,) = report.diverged
        assert diverged.workflow_id == first.id
        assert diverged.nondeterministic, diverged.message
        # ...while the real next build replays everything that runs.
        report = await replay_namespace(client, task_queue, timedelta(hours=1), limit=50)
        assert report.ok, report.diverged
        assert (first.id, "PrepareSpare") in report.replayed

        async with build(client, task_queue, deployment, "B", on_b):
            await make_current(client, task_queue, deployment, "B")
            second = await start_spare(client, task_queue)
            assert await build_of(second) == "B"
            assert await build_of(first) == "A"

            # A's spare is released by A (its ReleaseSpare child pinned there too), B's by B.
            for handle in (first, second):
                await handle.execute_update(PrepareSpare.release, ReleaseRequest())
                assert (await handle.result()).phase == Phase.RELEASED

    assert on_a.asked("create_vm") == [first.id]
    assert on_a.asked("destroy_vm") == [first.id]
    assert on_b.asked("create_vm") == [second.id]
    assert on_b.asked("destroy_vm") == [second.id]
    # Each release ran as a child pinned to its spare's build.
    releases = {}
    async for run in client.list_workflows(
        f"WorkflowType = '{RELEASE_SPARE}' AND TaskQueue = '{task_queue}'"
    ):
        handle = client.get_workflow_handle(run.id, run_id=run.run_id)
        releases[run.parent_id] = await build_of(handle)
    assert releases == {first.id: "A", second.id: "B"}


async def test_the_ledger_moves_to_the_new_build_at_its_next_continue_as_new(
    client: Client, task_queue: str
) -> None:
    deployment = f"virtflow-{uuid.uuid4().hex[:8]}"
    state = LedgerState(inventory=f"inv-{uuid.uuid4().hex[:8]}")
    async with build(client, task_queue, deployment, "A", StandIns()):
        await make_current(client, task_queue, deployment, "A")
        ledger = await client.start_workflow(
            InventoryLedger.run,
            state,
            id=ledger_workflow_id(state.inventory),
            task_queue=task_queue,
        )
        await assert_eventually(lambda: pinned_to(ledger, "A"))
        async with build(client, task_queue, deployment, "B", StandIns()):
            await make_current(client, task_queue, deployment, "B")
            # Its next workflow task after the new target reached the task queue (any
            # message: in service, the next reservation) sees the change and hands over.
            free = FreeInput(inventory=state.inventory, task_queue=task_queue, spare_id="none")
            latest = client.get_workflow_handle(ledger.id)

            async def handed_over() -> None:
                freed = await latest.execute_update(FREE_UPDATE, free, result_type=FreeResult)
                assert not freed.freed
                await pinned_to(latest, "B")

            await assert_eventually(handed_over, interval=0.5)
    first = client.get_workflow_handle(ledger.id, run_id=ledger.result_run_id)
    assert await build_of(first) == "A"
    await latest.terminate()


async def pinned_to(handle: WorkflowHandle[Any, Any], build_id: str) -> None:
    assert await build_of(handle) == build_id


@activity.defn(name=real_name(WarmActivities.mark_warm_node))
async def mark_warm_node(inp: WarmNodeInput) -> None:
    return None


@activity.defn(name=real_name(KubernetesActivities.watch_node_health))
async def watch_node_health(inp: WatchNodeHealthInput) -> NodeHealthResult:
    while True:  # a held spare's watch runs until its hold ends (the cancel comes with a beat)
        activity.heartbeat()
        await asyncio.sleep(0.2)


WARM_STANDINS = (mark_warm_node, watch_node_health)


async def pool_on(client: Client, pool_id: str, build_id: str, size: int) -> None:
    """The pool runs on `build_id` and so do all its spares, `size` of them warm."""
    latest = client.get_workflow_handle(pool_id)
    await pinned_to(latest, build_id)
    view = await latest.query(POOL_QUERY, result_type=WarmPoolView)
    live = [s for s in view.spares if s.phase in ("coming_up", "warm")]
    assert view.ready == size and len(live) == size, view
    for spare in live:
        assert await build_of(client.get_workflow_handle(spare.spare_id)) == build_id, spare


async def test_a_warm_pool_refills_on_the_new_build_and_follows_a_roll_back(
    client: Client, task_queue: str
) -> None:
    deployment = f"virtflow-{uuid.uuid4().hex[:8]}"
    spec = WarmPoolSpec(
        name=f"p{uuid.uuid4().hex[:8]}", cluster="lab", size=1, cpu=1, memory_mb=512
    )
    pool_id = warm_pool_workflow_id(spec.name)
    async with build(client, task_queue, deployment, "A", StandIns(), extra=WARM_STANDINS):
        await make_current(client, task_queue, deployment, "A")
        pool = await client.start_workflow(
            WARM_POOL,
            WarmPoolState(spec=spec, version_check_seconds=1),
            id=pool_id,
            task_queue=task_queue,
        )
        await assert_eventually(lambda: pool_on(client, pool_id, "A", 1), timeout=30)
        async with build(client, task_queue, deployment, "B", StandIns(), extra=WARM_STANDINS):
            # A promote, then the pool refills (here: grows, the same converge as after a
            # claim): every spare it keeps is on B, none left on A.
            await make_current(client, task_queue, deployment, "B")
            await pool.signal(CONFIGURE_SIGNAL, spec.model_copy(update={"size": 2}))
            await assert_eventually(lambda: pool_on(client, pool_id, "B", 2), timeout=30)
            # A roll-back sends the pool no message: it finds its way back to A by itself.
            await make_current(client, task_queue, deployment, "A")
            await assert_eventually(lambda: pool_on(client, pool_id, "A", 2), timeout=30)
            # Nothing of the pool's stays open on B: its spares there were released.
            await assert_eventually(lambda: none_open_on(client, task_queue, "B"), timeout=30)
            async for run in client.list_workflows(running(task_queue)):
                await client.get_workflow_handle(run.id, run_id=run.run_id).terminate()


def running(task_queue: str) -> str:
    return f"TaskQueue = '{task_queue}' AND ExecutionStatus = 'Running'"


async def none_open_on(client: Client, task_queue: str, build_id: str) -> None:
    async for run in client.list_workflows(running(task_queue)):
        handle = client.get_workflow_handle(run.id, run_id=run.run_id)
        assert await build_of(handle) != build_id, f"{run.id} is still open on {build_id}"
