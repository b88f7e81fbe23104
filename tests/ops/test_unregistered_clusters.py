"""Removing a cluster is refused while it has spares: `virtflow config check --temporal` names
them before the rollout (exit 3), and a worker started with such a configuration anyway says at
start which spares it orphans, then serves on."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError
from typer.testing import CliRunner, Result

from cli.main import app
from contracts.spare import PREPARE_SPARE, Phase, SpareRequest, start_search_attributes
from lab.hypervisor import load_inventory_file
from lab.stack import LabStack
from runtime.clusters import ClusterConfig
from runtime.settings import CONFIG_ENV, Settings, get_settings
from tests.helpers import assert_eventually, until_polled
from tests.known_secrets import WEBHOOK_SECRET
from tests.stack import (
    LAB_INVENTORY,
    stack_settings,
    wait_phase,
    with_lab_clusters,
    with_lab_hypervisor_api,
)
from tests.workflows.test_webhook_delivery import current_details
from webhooks.receiver import create_receiver_app
from webhooks.serve import serve_app
from worker.worker import running_worker
from workflows.prepare_spare import PrepareSpare


def spare(cluster: str) -> SpareRequest:
    return SpareRequest(
        request_id=f"r{uuid.uuid4().hex[:8]}", cluster=cluster, inventory="default", cpu=1,
        memory_mb=512,
    )  # fmt: skip


@pytest.fixture
async def spares(client: Client, task_queue: str) -> AsyncIterator[dict[str, str]]:
    """A running spare of prod-a and one of prod-c, started on `task_queue` (no worker yet)."""
    started = {}
    for cluster in ("prod-a", "prod-c"):
        req = spare(cluster)
        await client.start_workflow(
            PREPARE_SPARE,
            req,
            id=req.spare_id,
            task_queue=task_queue,
            search_attributes=start_search_attributes(req),
        )
        started[cluster] = req.spare_id
    yield started
    for spare_id in started.values():
        handle = client.get_workflow_handle(spare_id)
        if (await handle.describe()).close_time is None:
            await handle.terminate("test over")


def config_file(tmp_path: Path, client: Client, task_queue: str, *clusters: str) -> Path:
    doc: dict[str, Any] = {
        "temporal_address": client.service_client.config.target_host,
        "task_queue": task_queue,
        "state_dir": str(tmp_path),
        "clusters": {name: {"kubeconfig": str(tmp_path / name)} for name in clusters},
    }
    path = tmp_path / f"virtflow-{'-'.join(clusters)}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


async def config_check(path: Path, monkeypatch: pytest.MonkeyPatch) -> Result:
    monkeypatch.setenv(CONFIG_ENV, str(path))  # the command sets it; the test puts it back

    def invoke() -> Result:
        get_settings.cache_clear()
        return CliRunner().invoke(
            app, ["config", "check", str(path), "--temporal"], env={"COLUMNS": "300"}
        )

    # The command runs its own event loop.
    return await asyncio.to_thread(invoke)


async def test_config_check_refuses_dropping_a_cluster_that_has_spares(
    client: Client,
    task_queue: str,
    tmp_path: Path,
    spares: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    without_c = config_file(tmp_path, client, task_queue, "prod-a")

    async def refused() -> Result:
        result = await config_check(without_c, monkeypatch)
        assert result.exit_code == 3, result.output
        return result

    result = await assert_eventually(refused)
    said = " ".join(result.stderr.split())
    assert (
        f"error: cluster 'prod-c' is not registered but has 1 running spare(s): "
        f"{spares['prod-c']} (reserving)"
    ) in said
    assert "refused: a cluster is removed only once its spares have ended (prod-c)" in said
    assert spares["prod-a"] not in result.output
    assert "# configuration is valid" in result.stdout

    kept = await config_check(
        config_file(tmp_path, client, task_queue, "prod-a", "prod-c"), monkeypatch
    )
    assert kept.exit_code == 0, kept.output
    assert "no running spare of an unregistered cluster" in kept.stdout


async def test_config_check_says_when_temporal_cannot_be_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "virtflow.yaml"
    path.write_text(yaml.safe_dump({"temporal_address": "127.0.0.1:9", "state_dir": str(tmp_path)}))
    result = await config_check(path, monkeypatch)
    assert result.exit_code == 1, result.output
    assert "could not ask Temporal 127.0.0.1:9" in " ".join(result.stderr.split())


async def test_a_worker_started_without_a_cluster_names_the_spares_it_orphans(
    client: Client,
    task_queue: str,
    tmp_path: Path,
    spares: dict[str, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = Settings(
        task_queue=task_queue,
        state_dir=tmp_path,
        clusters={"prod-a": ClusterConfig(kubeconfig=tmp_path / "prod-a")},
        graceful_shutdown_seconds=0,
    )
    # prod-a's spare is the config check's concern; here it would only make a VM.
    await client.get_workflow_handle(spares["prod-a"]).terminate("not this test's")

    async def seen() -> None:
        query = f"TaskQueue = '{task_queue}' AND ExecutionStatus = 'Running'"
        listed = [r.id async for r in client.list_workflows(query)]
        assert listed == [spares["prod-c"]]

    await assert_eventually(seen)  # what the worker looks for is visible
    with caplog.at_level(logging.WARNING, logger="worker.unregistered_clusters"):
        async with running_worker(settings, client, task_queue=task_queue):
            await until_polled(client, task_queue)
            # It serves on: the orphaned spare, never begun, fails as an unknown cluster's.
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(
                    client.get_workflow_handle(spares["prod-c"]).result(), timeout=120
                )
    warnings = [r.getMessage() for r in caplog.records if r.name == "worker.unregistered_clusters"]
    assert warnings == [
        f"cluster 'prod-c' is not registered but has 1 running spare(s): "
        f"{spares['prod-c']} (reserving); every Kubernetes call of theirs (health watch, "
        "cordon, drain, Node deletion) is refused until it is registered again "
        "(docs/OPERATIONS.md, Many clusters)"
    ]
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "UnknownCluster"


async def test_a_held_spare_of_a_cluster_dropped_under_it_holds_on_unwatched(
    client: Client, task_queue: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker restarted without lab-b: it names lab-b's Ready spare, which neither fails nor
    is released; it says its Node is not watched, and lab's spare is watched as before."""
    lab = LabStack(
        inventory_doc=load_inventory_file(LAB_INVENTORY), ready_delay=0.3, extra_clusters=("lab-b",)
    )
    await lab.start(tmp_path / "lab")
    receiver = create_receiver_app([WEBHOOK_SECRET], tmp_path / "receiver.db")
    try:
        async with serve_app(receiver) as receiver_url:
            base = stack_settings(lab, tmp_path, "inv-a", receiver_url, WEBHOOK_SECRET)
            both = with_lab_hypervisor_api(with_lab_clusters(base, lab), lab)
            req = SpareRequest(
                request_id=f"r{uuid.uuid4().hex[:8]}", cluster="lab-b", inventory="inv-a",
                cpu=1, memory_mb=512,
            )  # fmt: skip
            async with running_worker(both, client, task_queue=task_queue):
                handle = await client.start_workflow(
                    PREPARE_SPARE, req, id=req.spare_id, task_queue=task_queue,
                    search_attributes=start_search_attributes(req),
                )  # fmt: skip
                await wait_phase(handle, Phase.READY)

            only_lab = both.model_copy(update={"clusters": {"lab": both.clusters["lab"]}})
            with caplog.at_level(logging.WARNING, logger="worker.unregistered_clusters"):
                async with running_worker(only_lab, client, task_queue=task_queue):

                    async def unwatched() -> None:
                        details = await current_details(handle)
                        assert "held; its Node is not watched" in details, details
                        assert "unknown cluster 'lab-b'" in details, details

                    await assert_eventually(unwatched, timeout=60)
                    status = await handle.query(PrepareSpare.status)
                    assert status.phase == Phase.READY
                    assert (
                        lab.clusters["lab-b"].kube.store.get("nodes", "", req.spare_id) is not None
                    )
                    await handle.terminate("test over")
            (said,) = [r.getMessage() for r in caplog.records if r.name.startswith("worker.")]
            assert said.startswith(
                f"cluster 'lab-b' is not registered but has 1 running spare(s): "
                f"{req.spare_id} (ready)"
            )
    finally:
        await lab.stop()
