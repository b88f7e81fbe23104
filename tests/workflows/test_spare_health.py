"""Held spares stay watched: a Node unhealthy past `unhealthy_after_seconds` is reported, and
replaced on another host when asked, unless too many of the cluster's spares are unhealthy."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.client import Client

from contracts.spare import Phase, ReleaseRequest, SpareStatus
from runtime.settings import Settings
from tests.helpers import assert_ended_quietly, assert_eventually
from tests.stack import Provisioner, Stack, running_stack, wait_phase
from workflows.prepare_spare import PrepareSpare


@pytest.fixture
def provisioner() -> Provisioner:
    """The lab hypervisor's API: making the VM is not the point here (the playbook's own
    tests cover it)."""
    return "http"


async def ready_spare(stack: Stack, **fields: Any) -> tuple[Any, Any]:
    req = stack.request(**fields)
    stack.lab.kubelet.set_behaviour(req.spare_id, ready_delay=0)
    handle = await stack.start(req)
    await wait_phase(handle, Phase.READY)
    return req, handle


async def events_of(stack: Stack, spare_id: str, event_type: str, count: int = 1) -> list[Any]:
    async def arrived() -> list[Any]:
        found = [e["event"] for e in await stack.events(spare_id) if e["type"] == event_type]
        assert len(found) >= count, f"{len(found)} {event_type} so far"
        return found

    return await assert_eventually(arrived, timeout=60)


async def status(handle: Any) -> SpareStatus:
    found: SpareStatus = await handle.query(PrepareSpare.status)
    return found


async def test_a_node_unhealthy_past_the_deadline_is_reported_and_clears_on_recovery(
    stack: Stack,
) -> None:
    req, handle = await ready_spare(stack, unhealthy_after_seconds=1)
    await stack.lab.kubelet.mark_not_ready(req.spare_id)
    [event] = await events_of(stack, req.spare_id, "spare.unhealthy")
    assert event["data"]["reason"] == "Ready=False (KubeletNotReady) for over 1 s"
    seen = await status(handle)
    assert (seen.phase, seen.unhealthy) == (Phase.READY, "Ready=False (KubeletNotReady)")

    await stack.lab.kubelet.mark_ready(req.spare_id)

    async def cleared() -> None:
        assert (await status(handle)).unhealthy is None

    await assert_eventually(cleared)
    await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
    assert (await handle.result()).phase == Phase.RELEASED
    assert (await stack.event_types(req.spare_id)).count("spare.unhealthy") == 1


async def test_a_short_blip_sends_nothing_and_the_clock_restarts(stack: Stack) -> None:
    req, handle = await ready_spare(stack, unhealthy_after_seconds=2)
    kubelet = stack.lab.kubelet
    await kubelet.mark_not_ready(req.spare_id)
    await kubelet.mark_ready(req.spare_id)  # a blip, far shorter than 2 s
    second_episode = datetime.now(UTC).replace(microsecond=0)
    await kubelet.mark_unreachable(req.spare_id)
    [event] = await events_of(stack, req.spare_id, "spare.unhealthy")
    assert event["data"]["reason"].startswith("Ready=Unknown (NodeStatusUnknown)")
    since = (await status(handle)).unhealthy_since
    # Counted from the second episode: the blip before it reset the clock.
    assert since is not None and since >= second_episode
    await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
    await handle.result()
    assert (await stack.event_types(req.spare_id)).count("spare.unhealthy") == 1


async def test_replace_makes_a_ready_replacement_on_another_host_before_releasing(
    stack: Stack,
) -> None:
    req, handle = await ready_spare(stack, unhealthy_after_seconds=1, on_unhealthy="replace")
    old_host = (await status(handle)).host
    await stack.lab.kubelet.mark_not_ready(req.spare_id)

    result = await handle.result()
    assert result.phase == Phase.RELEASED
    assert result.reason is not None and result.reason.startswith("replaced by ")
    [replaced] = await events_of(stack, req.spare_id, "spare.replaced")
    replacement = replaced["data"]["replacement"]
    new_id = replacement["new"]
    assert (replacement["old"], new_id) == (req.spare_id, f"spare-lab-{req.request_id}-r1")
    assert replacement["new_host"] not in (None, old_host)

    new = stack.client.get_workflow_handle(new_id)
    new_status = await status(new)
    # Ready before the old one went, and on another host.
    assert new_status.phase == Phase.READY and new_status.host == replacement["new_host"]
    assert new_id in stack.lab.hypervisor.vms and req.spare_id not in stack.lab.hypervisor.vms
    types = await stack.event_types(req.spare_id)
    assert types.count("spare.unhealthy") == 1 and "spare.released" in types
    await new.execute_update(PrepareSpare.release, ReleaseRequest(reason="test over"))
    await new.result()


async def test_no_replacement_when_more_than_max_unhealthy_spares_are_unhealthy(
    stack: Stack,
) -> None:
    fields = {"unhealthy_after_seconds": 1, "on_unhealthy": "replace", "max_unhealthy": 1}
    spares = [await ready_spare(stack, **fields) for _ in range(2)]
    for req, _ in spares:
        await stack.lab.kubelet.mark_not_ready(req.spare_id)
    for req, handle in spares:
        [event] = await events_of(stack, req.spare_id, "spare.unhealthy")
        assert event["data"]["reason"] == (
            "Ready=False (KubeletNotReady) for over 1 s; replacement withheld: 2 of the "
            "cluster's 2 spares are unhealthy (max_unhealthy 1)"
        )
        seen = await status(handle)
        assert (seen.phase, seen.replaced_by) == (Phase.READY, None)
    assert sorted(stack.lab.hypervisor.vms) == sorted(req.spare_id for req, _ in spares)
    for _, handle in spares:
        await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
        await handle.result()


async def test_a_released_spares_watch_ends_before_the_spare_and_logs_nothing(
    stack: Stack, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO)
    _, handle = await ready_spare(stack)

    async def watched() -> None:
        pending = (await handle.describe()).raw_description.pending_activities
        assert [a.activity_type.name for a in pending] == ["watch_node_health"]
        assert pending[0].state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED

    await assert_eventually(watched)
    await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
    assert (await handle.result()).phase == Phase.RELEASED

    # The watch was asked to stop and its end is in the spare's history, before it closed.
    history = await handle.fetch_history()
    kinds = [e.WhichOneof("attributes") for e in history.events]
    assert "activity_task_cancel_requested_event_attributes" in kinds
    await assert_ended_quietly(handle, caplog, capfd)


async def test_held_spares_evicted_from_a_full_cache_are_released_quietly(
    client: Client,
    task_queue: str,
    tmp_path: Path,
    inventory_doc: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """With `max_cached_workflows` below the spares held, a held spare leaves the worker's
    memory (its watch keeps running) and is rebuilt from its history when released."""
    caplog.set_level(logging.DEBUG, logger="temporalio.worker._workflow")

    def one_cached(settings: Settings) -> Settings:
        return settings.model_copy(update={"max_cached_workflows": 1})

    async with running_stack(
        client, task_queue, tmp_path, inventory_doc, one_cached, "http"
    ) as stack:
        held = [await ready_spare(stack) for _ in range(2)]
        run_ids = {(await handle.describe()).run_id for _, handle in held}

        def evicted() -> set[str]:
            return {
                str(r.args[0])
                for r in caplog.records
                if r.msg.startswith("Evicting workflow") and isinstance(r.args, tuple)
            }

        async def some_held_spare_evicted() -> None:
            assert run_ids & evicted()

        await assert_eventually(some_held_spare_evicted)
        for _, handle in held:
            await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="done"))
            assert (await handle.result()).phase == Phase.RELEASED
        for _, handle in held:
            await assert_ended_quietly(handle, caplog, capfd)
