"""SIGTERM (a rolling update, a drained node) while a playbook creates a VM: the worker stops
polling, says so on `/readyz`, lets the playbook finish, exits 0, and the spare goes on with
the next worker, without the VM being created twice."""

from __future__ import annotations

import asyncio
import signal
import socket

import httpx
from temporalio.api.enums.v1 import EventType

from contracts.spare import Phase, ReleaseRequest
from tests.chaos.conftest import Chaos
from tests.chaos.evidence import activity_attempts, running_activities
from tests.helpers import assert_eventually
from tests.stack import wait_phase
from workflows.prepare_spare import PrepareSpare

GRACE_SECONDS = 120


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def _readyz(port: int) -> int:
    async with httpx.AsyncClient() as http:
        return (await http.get(f"http://127.0.0.1:{port}/readyz", timeout=5)).status_code


async def test_a_running_playbook_finishes_after_sigterm_and_the_spare_goes_on(
    chaos: Chaos,
) -> None:
    stack, lab = chaos.stack, chaos.stack.lab
    health_port = _free_port()
    chaos.env["VIRTFLOW_GRACEFUL_SHUTDOWN_SECONDS"] = str(GRACE_SECONDS)
    chaos.env["VIRTFLOW_HEALTH_PORT"] = str(health_port)
    chaos.env["VIRTFLOW_METRICS_HOST"] = "127.0.0.1"
    first = await chaos.start_worker()

    async def ready() -> None:
        assert await _readyz(health_port) == 200

    await assert_eventually(ready, timeout=30, interval=0.2)

    lab.hypervisor.hold_creates()
    req = chaos.request()
    handle = await stack.start(req)

    async def playbook_in_flight() -> None:
        assert req.spare_id in lab.hypervisor.vms
        assert "create_vm" in await running_activities(handle)

    await assert_eventually(playbook_in_flight, timeout=60, interval=0.2)

    first.signal(signal.SIGTERM)

    async def stopping() -> None:
        assert await _readyz(health_port) == 503

    await assert_eventually(stopping, timeout=30, interval=0.2)
    # The create is held: the worker can only be waiting for it, not gone.
    assert first.returncode is None
    lab.hypervisor.release_creates()
    assert await asyncio.wait_for(first.wait(), GRACE_SECONDS) == 0

    # The playbook's result reached Temporal from the stopping worker: one attempt, no retry.
    assert (await activity_attempts(handle))["create_vm"] == 1
    completed_by = [
        e.activity_task_completed_event_attributes.identity
        async for e in handle.fetch_history_events()
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
    ]
    assert any(identity.startswith(f"{first.pid}@") for identity in completed_by)

    await chaos.start_worker()
    await wait_phase(handle, Phase.READY, timeout=90)
    await handle.execute_update(PrepareSpare.release, ReleaseRequest())
    result = await handle.result()
    assert result.phase == Phase.RELEASED
    assert lab.hypervisor.created == [req.spare_id]
