"""Webhook delivery semantics through whole PrepareSpare runs on the lab.

Each test runs a real spare with extra receivers beside the stack's upgrade controller: one
that fails three times, one that refuses (400), one that retires (410), one that is down.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client, WorkflowHandle

from contracts.release import release_workflow_id
from contracts.spare import Phase, ReleaseRequest
from runtime.receivers import ReceiverConfig
from runtime.settings import Settings
from tests.helpers import assert_eventually
from tests.stack import Stack, running_stack, wait_phase
from tests.webhooks.receivers import Recorder, answering, receiver_config, refused_url
from webhooks.events import EventType, webhook_id
from webhooks.receiver import create_receiver_app
from webhooks.serve import EmbeddedServer, serve_app
from webhooks.signing import generate_secret
from workflows.prepare_spare import PrepareSpare

ALL_EVENTS = [
    "spare.reserved",
    "spare.vm_created",
    "spare.ready",
    "spare.release_started",
    "spare.released",
]
FAST = [0.2] * 10


def with_receivers(receivers: Mapping[str, ReceiverConfig]) -> Callable[[Settings], Settings]:
    def configure(settings: Settings) -> Settings:
        return settings.model_copy(update={"receivers": {**settings.receivers, **receivers}})

    return configure


@contextlib.asynccontextmanager
async def stack_with(
    receivers: Mapping[str, ReceiverConfig],
    client: Client,
    task_queue: str,
    tmp_path: Path,
    inventory_doc: dict[str, Any],
) -> AsyncIterator[Stack]:
    configure = with_receivers(receivers)
    async with running_stack(
        client, task_queue, tmp_path, inventory_doc, configure, "http"
    ) as stack:
        yield stack


async def current_details(handle: WorkflowHandle[Any, Any]) -> str:
    metadata = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    return metadata.current_details


def msg_id(spare_id: str, run_id: str, event: str) -> str:
    return webhook_id(spare_id, run_id, EventType(event))


@dataclass
class Misbehaving:
    flaky: Recorder
    picky: Recorder
    retired: Recorder
    retiring: Recorder
    flaky_app: Any
    configs: dict[str, ReceiverConfig]


@pytest.fixture
async def misbehaving(tmp_path: Path) -> AsyncIterator[Misbehaving]:
    secret = generate_secret()
    flaky_app = create_receiver_app([secret], tmp_path / "flaky.db")
    flaky_app.state.fail_next = 3
    flaky = Recorder(flaky_app)
    picky = Recorder(answering({}, default=400))
    retired = Recorder(answering({}, default=410))
    # Busy for the first event (so that delivery waits in its backoff), then retired.
    retiring = Recorder(answering({"spare.reserved": 503, "spare.vm_created": 410}, default=200))
    async with (
        serve_app(flaky) as flaky_url,
        serve_app(picky) as picky_url,
        serve_app(retired) as retired_url,
        serve_app(retiring) as retiring_url,
    ):
        configs = {
            "flaky": receiver_config(flaky_url, FAST, secret, events=["spare.ready"]),
            "picky": receiver_config(picky_url, FAST),
            "retired": receiver_config(retired_url, FAST),
            # A minute before the retry: only a cancelled delivery ends sooner.
            "retiring": receiver_config(retiring_url, [60, 60]),
        }
        yield Misbehaving(flaky, picky, retired, retiring, flaky_app, configs)


async def test_each_receiver_gets_what_its_answers_call_for(
    client: Client,
    task_queue: str,
    tmp_path: Path,
    inventory_doc: dict[str, Any],
    misbehaving: Misbehaving,
) -> None:
    m = misbehaving
    async with stack_with(m.configs, client, task_queue, tmp_path, inventory_doc) as stack:
        req = stack.request()
        handle = await stack.start(req)
        await wait_phase(handle, Phase.READY)
        run_id = (await handle.describe()).run_id
        ids = {event: msg_id(req.spare_id, run_id, event) for event in ALL_EVENTS}

        # 410: disabled and recorded while the spare is still held. Deliveries run beside the
        # spare and beside each other: the 410 to vm_created may land just after the spare is
        # Ready, and even before the 410 to reserved.
        async def both_disabled_while_held() -> None:
            status = await handle.query(PrepareSpare.status)
            assert status.phase == Phase.READY
            assert sorted(status.disabled_receivers) == ["retired", "retiring"]

        await assert_eventually(both_disabled_while_held, timeout=30)
        details = await current_details(handle)
        [stopped] = [
            line for line in details.splitlines() if "Webhooks stopped (410 Gone)**" in line
        ]
        assert sorted(stopped.split("**")[-1].strip().split(", ")) == ["retired", "retiring"]

        await handle.execute_update(PrepareSpare.release, ReleaseRequest(reason="upgrade done"))
        result = await handle.result()
        assert result.phase == Phase.RELEASED
        status = await handle.query(PrepareSpare.status)

    # The upgrade controller is not held back by the others (in whatever order they came).
    assert sorted(stored_types(stack, req.spare_id)) == sorted(ALL_EVENTS)

    # Fails 3 times, then succeeds: four attempts, one id, stored once.
    assert m.flaky.seen == [(ids["spare.ready"], s) for s in (503, 503, 503, 200)]
    [stored] = m.flaky_app.state.store.query(req.spare_id)
    assert (stored.type, stored.webhook_id, stored.deliveries) == (
        "spare.ready",
        ids["spare.ready"],
        1,
    )

    # 400: every event tried exactly once, and each refusal recorded.
    assert sorted(m.picky.seen) == sorted((ids[e], 400) for e in ALL_EVENTS)
    picky_failures = [f for f in status.undelivered if "-> picky" in f]
    assert len(picky_failures) == len(ALL_EVENTS)
    assert all("HTTP 400" in f for f in picky_failures)

    # 410: nothing later is sent, and a delivery waiting to retry is cancelled. An event sent
    # while the 410 to reserved was still on its way (vm_created, ready) may reach the retired
    # receiver once; nothing sent after the 410 was recorded does.
    retired_ids = [seen_id for seen_id, _ in m.retired.seen]
    assert {code for _, code in m.retired.seen} == {410}
    assert ids["spare.reserved"] in retired_ids
    assert len(retired_ids) == len(set(retired_ids))
    assert set(retired_ids) <= {
        ids[e] for e in ("spare.reserved", "spare.vm_created", "spare.ready")
    }
    assert m.retiring.statuses(ids["spare.reserved"]) == [503]
    assert m.retiring.statuses(ids["spare.vm_created"]) == [410]
    assert not m.retiring.statuses(ids["spare.release_started"])
    assert not m.retiring.statuses(ids["spare.released"])
    assert sorted(status.disabled_receivers) == ["retired", "retiring"]
    assert not [f for f in status.undelivered if "retir" in f]

    # Secrets stay in the worker: not in this spare's history nor its release's.
    child = stack.client.get_workflow_handle(f"{release_workflow_id(req.spare_id)}-{run_id[:8]}")
    histories = [await handle.fetch_history(), await child.fetch_history()]
    secrets = [
        s.get_secret_value() for config in stack.settings.receivers.values() for s in config.secrets
    ]
    for history in histories:
        text = history.to_json()
        assert "whsec_" not in text
        for secret in secrets:
            assert secret.removeprefix("whsec_") not in text


def stored_types(stack: Stack, spare_id: str) -> list[str]:
    store = stack.receiver_app.state.store
    return [e.type for e in store.query(spare_id)]


async def test_a_spare_becomes_ready_while_a_receiver_refuses_connections(
    client: Client, task_queue: str, tmp_path: Path, inventory_doc: dict[str, Any]
) -> None:
    down = {"down": receiver_config(refused_url(), [30, 30, 30])}
    async with stack_with(down, client, task_queue, tmp_path, inventory_doc) as stack:
        req = stack.request()
        handle = await stack.start(req)
        await wait_phase(handle, Phase.READY)

        async def ready_told_and_down_still_retrying() -> None:
            assert "spare.ready" in stored_types(stack, req.spare_id)
            pending = (await handle.describe()).raw_description.pending_activities
            retrying = [
                p
                for p in pending
                if p.activity_type.name == "deliver_webhook"
                and p.state == PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
                and p.last_failure.application_failure_info.type == "WebhookUnreachable"
            ]
            # reserved, vm_created and ready, each waiting for its next attempt.
            assert len(retrying) == 3, pending

        await assert_eventually(ready_told_and_down_still_retrying)
        status = await handle.query(PrepareSpare.status)
        assert status.phase == Phase.READY and status.undelivered == []
        await handle.terminate("test over")


async def test_a_receiver_down_for_a_while_gets_every_event_once_when_back(
    client: Client, task_queue: str, tmp_path: Path, inventory_doc: dict[str, Any]
) -> None:
    secret = generate_secret()
    app = create_receiver_app([secret], tmp_path / "ctl.db")
    server = EmbeddedServer(app)
    url = await server.start()
    config = receiver_config(url, [0.2, 0.5, *[1.0] * 60], secret)
    store = app.state.store
    try:
        async with stack_with(
            {"ctl": config}, client, task_queue, tmp_path, inventory_doc
        ) as stack:
            req = stack.request()
            # The VM's create is answered only once the receiver is down, so the events after
            # spare.reserved all meet the outage.
            stack.lab.hypervisor.hold_creates()
            handle = await stack.start(req)

            async def reserved_stored() -> None:
                assert [e.type for e in store.query(req.spare_id)] == ["spare.reserved"]

            await assert_eventually(reserved_stored)
            await server.stop()  # the controller goes away mid-spare
            stack.lab.hypervisor.release_creates()

            await wait_phase(handle, Phase.READY)
            assert [e.type for e in store.query(req.spare_id)] == ["spare.reserved"]

            server = EmbeddedServer(app, port=int(url.rsplit(":", 1)[1]))
            await server.start()  # ... and comes back on the same address

            async def caught_up() -> None:
                # Retries race each other after the outage: any order, each event once.
                stored = store.query(req.spare_id)
                assert sorted(e.type for e in stored) == sorted(ALL_EVENTS[:3])

            await assert_eventually(caught_up)
            await handle.execute_update(PrepareSpare.release, ReleaseRequest())
            await handle.result()
    finally:
        await server.stop()

    stored = store.query(req.spare_id)
    assert sorted(e.type for e in stored) == sorted(ALL_EVENTS)
    assert len({e.webhook_id for e in stored}) == len(ALL_EVENTS)
