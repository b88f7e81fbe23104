"""`virtflow replay` replays a namespace's histories against the installed code: it prints the
one that diverges and exits 1, and exits 0 when everything replays."""

from __future__ import annotations

import asyncio
import uuid
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
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    """The command in this process, on a thread of its own (it runs its own event loop)."""
    monkeypatch.setenv("VIRTFLOW_TEMPORAL_ADDRESS", client.service_client.config.target_host)
    monkeypatch.setenv("VIRTFLOW_TEMPORAL_NAMESPACE", client.namespace)
    monkeypatch.setenv("VIRTFLOW_TASK_QUEUE", task_queue)
    get_settings.cache_clear()
    try:
        result = await asyncio.to_thread(CliRunner().invoke, app, ["replay", "--since-hours", "1"])
    finally:
        get_settings.cache_clear()
    return result.exit_code, " ".join(result.stdout.split())


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
