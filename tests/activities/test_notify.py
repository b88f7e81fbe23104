"""Webhook delivery against the real reference receiver over loopback HTTP."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import socket
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import SecretStr, ValidationError
from temporalio import workflow
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.testing import ActivityEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from activities.notify import NotifyActivities
from contracts.notify import (
    DeliverWebhookInput,
    DeliveryResult,
    PlanNotificationsInput,
    RetryPolicySpec,
)
from runtime.clusters import ClusterConfig, ClusterRegistry
from runtime.receivers import ReceiverConfig
from webhooks.events import EventType, SpareEvent, SpareEventData, VmFacts, webhook_id
from webhooks.receiver import create_receiver_app
from webhooks.serve import serve_app
from webhooks.signing import generate_secret

SECRET = generate_secret()
EVENT = SpareEvent(
    type=EventType.READY,
    timestamp=datetime(2025, 3, 1, 12, 0, tzinfo=UTC),
    data=SpareEventData(
        spare_id="spare-c1-r1",
        cluster="c1",
        host="hv-01",
        vm=VmFacts(name="spare-c1-r1", host="hv-01", ip="10.0.0.9"),
    ),
)
MSG_ID = webhook_id(EVENT.data.spare_id, "run-1", EVENT.type)


@dataclass
class Receiver:
    app: FastAPI
    url: str

    async def stored(self) -> list[dict[str, object]]:
        async with httpx.AsyncClient() as http:
            events: list[dict[str, object]] = (await http.get(f"{self.url}/events")).json()
        return events


@pytest.fixture
async def receiver(tmp_path: Path) -> AsyncIterator[Receiver]:
    app = create_receiver_app([SECRET], tmp_path / "events.sqlite")
    async with serve_app(app) as url:
        yield Receiver(app, url)


def _config(url: str, *secrets: str, **extra: object) -> ReceiverConfig:
    return ReceiverConfig.model_validate(
        {"url": url, "secrets": [SecretStr(s) for s in secrets or (SECRET,)], **extra}
    )


async def _deliver(config: ReceiverConfig) -> DeliveryResult:
    notify = NotifyActivities({"upgradectrl": config})
    try:
        return await ActivityEnvironment().run(
            notify.deliver_webhook,
            DeliverWebhookInput(receiver="upgradectrl", webhook_id=MSG_ID, event=EVENT),
        )
    finally:
        await notify.aclose()


async def _rejection(config: ReceiverConfig) -> ApplicationError:
    with pytest.raises(ApplicationError) as caught:
        await _deliver(config)
    for text in (str(caught.value), repr(caught.value.details)):
        for secret in config.secrets:
            assert secret.get_secret_value() not in text
    return caught.value


# --- configuration -------------------------------------------------------------------------


def test_the_default_retry_schedule_is_the_standard_webhooks_one() -> None:
    config = _config("http://127.0.0.1:9/webhooks")
    assert config.retry_schedule_seconds == [5, 300, 1800, 7200, 18000, 36000, 36000]
    assert config.retry == RetryPolicySpec(
        initial_seconds=5, backoff=2, max_interval_seconds=36000, max_attempts=8
    )
    waits = [config.wait_before_retry(n).total_seconds() for n in range(1, 10)]
    assert waits == [5, 300, 1800, 7200, 18000, 36000, 36000, 36000, 36000]


async def test_each_retry_waits_what_the_schedule_says_for_that_attempt() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = _config(f"http://127.0.0.1:{port}/webhooks", retry_schedule_seconds=[1, 60, 600])
    notify = NotifyActivities({"upgradectrl": config})
    env = ActivityEnvironment()
    delays = []
    for attempt in (1, 2, 3):
        env.info = dataclasses.replace(env.info, attempt=attempt)
        with pytest.raises(ApplicationError) as caught:
            await env.run(
                notify.deliver_webhook,
                DeliverWebhookInput(receiver="upgradectrl", webhook_id=MSG_ID, event=EVENT),
            )
        delays.append(caught.value.next_retry_delay)
    await notify.aclose()
    assert delays == [timedelta(seconds=1), timedelta(seconds=60), timedelta(seconds=600)]


@pytest.mark.parametrize("secret", ["whsec_change-me", "change-me", "whsec_" + "A" * 8])
def test_placeholder_secrets_are_refused_without_echoing_them(secret: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _config("http://127.0.0.1:9/webhooks", secret)
    assert secret not in str(caught.value)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"secrets": []}, "at least 1 item"),
        ({"events": ["spare.ready", "spare.exploded"]}, "unknown event types ['spare.exploded']"),
        ({"url": "ftp://example.org/hook"}, "absolute http(s) URL"),
        ({"url": "/webhooks"}, "absolute http(s) URL"),
        ({"retry_schedule_seconds": []}, "at least 1 item"),
        ({"retry_schedule_seconds": [5, 0]}, "every wait in the retry schedule must be positive"),
    ],
)
def test_invalid_receiver_configuration_fails_at_start_up(
    fields: dict[str, object], message: str
) -> None:
    doc: dict[str, object] = {"url": "http://127.0.0.1:9/webhooks", "secrets": [SECRET], **fields}
    with pytest.raises(ValidationError, match=re.escape(message)):
        ReceiverConfig.model_validate(doc)


async def test_plan_lists_every_receiver_without_secrets_when_none_are_named() -> None:
    notify = NotifyActivities(
        {
            "b": _config(
                "http://127.0.0.1:9/b", events=["spare.ready"], retry_schedule_seconds=[5, 60]
            ),
            "a": _config("http://127.0.0.1:9/a", timeout_seconds=2),
        }
    )
    result = await ActivityEnvironment().run(
        notify.plan_notifications, PlanNotificationsInput(receivers=None)
    )
    assert [r.name for r in result.routes] == ["a", "b"]
    assert result.routes[1].events == ["spare.ready"]
    assert result.routes[1].retry == RetryPolicySpec(
        initial_seconds=5, backoff=2, max_interval_seconds=60, max_attempts=3
    )
    assert result.event_bus is None
    assert result.routes[0].attempt_timeout_seconds == 7
    assert "whsec_" not in result.model_dump_json()
    await notify.aclose()


async def test_plan_keeps_only_the_named_receivers_in_order() -> None:
    notify = NotifyActivities({n: _config(f"http://127.0.0.1:9/{n}") for n in "abc"})
    result = await ActivityEnvironment().run(
        notify.plan_notifications, PlanNotificationsInput(receivers=["c", "a", "c"])
    )
    assert [r.name for r in result.routes] == ["c", "a"]
    await notify.aclose()


async def test_plan_refuses_an_unknown_receiver_by_name_without_retry() -> None:
    notify = NotifyActivities({"upgradectrl": _config("http://127.0.0.1:9/webhooks")})
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(
            notify.plan_notifications, PlanNotificationsInput(receivers=["upgradectrl", "evil"])
        )
    assert caught.value.type == "UnknownReceiver" and caught.value.non_retryable
    assert "'evil'" in str(caught.value)
    await notify.aclose()


# --- delivery against the real receiver ----------------------------------------------------


async def test_a_delivery_is_verified_and_stored_by_the_receiver(receiver: Receiver) -> None:
    result = await _deliver(_config(f"{receiver.url}/webhooks"))
    assert result == DeliveryResult(
        receiver="upgradectrl", webhook_id=MSG_ID, status_code=200, outcome="delivered"
    )
    [stored] = await receiver.stored()
    assert stored["webhook_id"] == MSG_ID
    assert SpareEvent.model_validate(stored["event"]) == EVENT


async def test_rotation_signs_with_every_secret_so_either_side_may_rotate_first(
    receiver: Receiver,
) -> None:
    result = await _deliver(_config(f"{receiver.url}/webhooks", generate_secret(), SECRET))
    assert result.outcome == "delivered"


async def test_a_redelivery_keeps_the_id_and_is_stored_once(receiver: Receiver) -> None:
    config = _config(f"{receiver.url}/webhooks")
    await _deliver(config)
    await _deliver(config)
    [stored] = await receiver.stored()
    assert stored["deliveries"] == 2


async def test_a_4xx_is_a_non_retryable_rejection(receiver: Receiver) -> None:
    error = await _rejection(_config(f"{receiver.url}/webhooks", generate_secret()))
    assert error.type == "WebhookRejected" and error.non_retryable
    assert "HTTP 401" in str(error) and "no matching signature" in str(error)
    assert await receiver.stored() == []


async def test_a_404_is_a_non_retryable_rejection(receiver: Receiver) -> None:
    error = await _rejection(_config(f"{receiver.url}/nowhere"))
    assert error.type == "WebhookRejected" and error.non_retryable
    assert "HTTP 404" in str(error)


async def test_a_5xx_is_retryable(receiver: Receiver) -> None:
    receiver.app.state.fail_next = 1
    error = await _rejection(_config(f"{receiver.url}/webhooks"))
    assert error.type == "WebhookReceiverUnavailable" and not error.non_retryable
    assert "HTTP 503" in str(error)
    assert await receiver.stored() == []


async def test_a_410_means_gone_and_is_not_an_error(receiver: Receiver) -> None:
    receiver.app.state.gone = True
    result = await _deliver(_config(f"{receiver.url}/webhooks"))
    assert (result.outcome, result.status_code) == ("gone", 410)


async def test_a_refused_connection_is_retryable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    error = await _rejection(_config(f"http://127.0.0.1:{port}/webhooks"))
    assert error.type == "WebhookUnreachable" and not error.non_retryable
    assert "cannot connect" in str(error)


async def test_a_receiver_that_never_answers_times_out_retryably() -> None:
    accepted = asyncio.Event()

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.set()
        await reader.read()  # until the client gives up and closes
        writer.close()

    server = await asyncio.start_server(hang, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        error = await _rejection(_config(f"http://127.0.0.1:{port}/w", timeout_seconds=0.3))
    assert accepted.is_set()
    assert error.type == "WebhookUnreachable" and not error.non_retryable
    assert "timed out" in str(error)


async def test_only_the_first_kib_of_a_huge_answer_is_read() -> None:
    # A receiver answering 503 with 128 MiB: the worker keeps 200 characters and drops the
    # connection after MAX_ANSWER_BYTES, so the receiver cannot push the rest into it.
    total = 128 * 1024 * 1024
    written = 0
    finished = asyncio.Event()

    async def flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal written
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        await reader.readexactly(length)
        writer.write(f"HTTP/1.1 503 Busy\r\ncontent-length: {total}\r\n\r\n".encode())
        chunk = b"y" * 65536
        try:
            while written < total:
                writer.write(chunk)
                await writer.drain()
                written += len(chunk)
        except ConnectionError:
            pass  # the worker hung up: what we measure
        finally:
            writer.close()
            finished.set()

    server = await asyncio.start_server(flood, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        error = await _rejection(_config(f"http://127.0.0.1:{port}/w"))
        await finished.wait()
    assert error.type == "WebhookReceiverUnavailable"
    assert "HTTP 503 " + "y" * 200 + "..." in str(error)
    assert written < total // 4


# --- through a real Temporal worker --------------------------------------------------------


@workflow.defn(name="NotifyTestDeliverOnce")
class DeliverOnce:
    """Stands in for PrepareSpare's notifier: one delivery with a fast retry policy."""

    @workflow.run
    async def run(self, input: DeliverWebhookInput) -> DeliveryResult:
        return await workflow.execute_activity_method(
            NotifyActivities.deliver_webhook,
            input,
            start_to_close_timeout=timedelta(seconds=15),
            retry_policy=RetryPolicy(
                initial_interval=timedelta(seconds=0.1),
                backoff_coefficient=1.0,
                maximum_attempts=10,
            ),
        )


async def _run_on_worker(client: Client, task_queue: str, config: ReceiverConfig) -> DeliveryResult:
    notify = NotifyActivities({"upgradectrl": config})
    try:
        async with Worker(
            client,
            task_queue=task_queue,
            workflows=[DeliverOnce],
            activities=[notify.deliver_webhook],
            # The test module imports pytest and uvicorn; the sandbox would re-import them.
            workflow_runner=UnsandboxedWorkflowRunner(),
        ):
            return await client.execute_workflow(
                DeliverOnce.run,
                DeliverWebhookInput(receiver="upgradectrl", webhook_id=MSG_ID, event=EVENT),
                id=f"notify-test-{uuid.uuid4()}",
                task_queue=task_queue,
                execution_timeout=timedelta(seconds=60),
            )
    finally:
        await notify.aclose()


async def test_three_failures_then_success_is_stored_exactly_once(
    client: Client, task_queue: str, receiver: Receiver
) -> None:
    receiver.app.state.fail_next = 3
    config = _config(f"{receiver.url}/webhooks", retry_schedule_seconds=[0.1] * 9)
    result = await _run_on_worker(client, task_queue, config)
    assert result.outcome == "delivered"
    assert receiver.app.state.attempts == 4
    [stored] = await receiver.stored()
    assert stored["webhook_id"] == MSG_ID and stored["deliveries"] == 1


async def test_a_rejection_fails_the_delivery_after_one_attempt(
    client: Client, task_queue: str, receiver: Receiver
) -> None:
    config = _config(f"{receiver.url}/webhooks", generate_secret())
    with pytest.raises(WorkflowFailureError) as caught:
        await _run_on_worker(client, task_queue, config)
    activity_error = caught.value.cause
    assert isinstance(activity_error, ActivityError)
    assert isinstance(activity_error.cause, ApplicationError)
    assert activity_error.cause.type == "WebhookRejected"
    assert receiver.app.state.attempts == 1


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [
        ("7", timedelta(seconds=7)),
        ("999999", timedelta(seconds=36000)),
        ("soon", timedelta(seconds=5)),  # not a number of seconds: the schedule decides
    ],
)
async def test_a_429_is_retryable_and_honours_retry_after_within_the_cap(
    retry_after: str, expected: timedelta
) -> None:
    busy = FastAPI()

    @busy.post("/webhooks")
    async def throttle() -> JSONResponse:
        return JSONResponse({"error": "slow down"}, 429, headers={"retry-after": retry_after})

    async with serve_app(busy) as url:
        error = await _rejection(_config(f"{url}/webhooks"))
    assert error.type == "WebhookReceiverUnavailable" and not error.non_retryable
    assert error.next_retry_delay == expected


def _registry() -> ClusterRegistry:
    return ClusterRegistry(
        {
            "prod-a": ClusterConfig(receivers=["a"], inventories=["dc1"]),
            "prod-b": ClusterConfig(receivers=["b"]),
        }
    )


async def test_a_clusters_events_go_only_to_its_receivers() -> None:
    receivers = {name: _config("http://127.0.0.1:9/x") for name in ("a", "b")}
    acts = NotifyActivities(receivers, clusters=_registry())
    plan = await ActivityEnvironment().run(
        acts.plan_notifications, PlanNotificationsInput(cluster="prod-b")
    )
    assert [route.name for route in plan.routes] == ["b"]
    await acts.aclose()


async def test_a_cluster_naming_no_receivers_hears_none_another_cluster_names() -> None:
    """prod-c names no receivers: it gets every receiver but those prod-a and prod-b name."""
    registry = ClusterRegistry(
        {
            "prod-a": ClusterConfig(receivers=["a"]),
            "prod-b": ClusterConfig(receivers=["b"]),
            "prod-c": ClusterConfig(),
        }
    )
    receivers = {name: _config("http://127.0.0.1:9/x") for name in ("a", "b", "ops")}
    acts = NotifyActivities(receivers, clusters=registry)
    env = ActivityEnvironment()
    for made in (False, True):
        plan = await env.run(
            acts.plan_notifications, PlanNotificationsInput(cluster="prod-c", made=made)
        )
        assert [route.name for route in plan.routes] == ["ops"]
    named = PlanNotificationsInput(cluster="prod-c", receivers=["ops", "a"], made=True)
    assert [r.name for r in (await env.run(acts.plan_notifications, named)).routes] == ["ops"]
    with pytest.raises(ApplicationError) as refused:
        await env.run(
            acts.plan_notifications, PlanNotificationsInput(cluster="prod-c", receivers=["a"])
        )
    assert (refused.value.type, refused.value.message) == (
        "NotAllowedForCluster",
        "receivers: receiver 'a' is cluster 'prod-a''s, not cluster 'prod-c''s",
    )
    await acts.aclose()


@pytest.mark.parametrize(
    ("inp", "heard"),
    [
        (PlanNotificationsInput(cluster="prod-b", made=True), ["b"]),
        # A receiver named when the spare was made, since given to another cluster.
        (PlanNotificationsInput(cluster="prod-a", receivers=["a", "b"], made=True), ["a"]),
        # A receiver since removed from the configuration.
        (PlanNotificationsInput(cluster="prod-b", receivers=["b", "gone"], made=True), ["b"]),
        # A cluster since unregistered has no receivers left: nobody else hears of its spare.
        (PlanNotificationsInput(cluster="prod-c", made=True), []),
    ],
)
async def test_a_made_spares_events_go_only_to_its_clusters_receivers_refusing_nothing(
    inp: PlanNotificationsInput, heard: list[str]
) -> None:
    receivers = {name: _config("http://127.0.0.1:9/x") for name in ("a", "b")}
    acts = NotifyActivities(receivers, clusters=_registry())
    plan = await ActivityEnvironment().run(acts.plan_notifications, inp)
    assert [route.name for route in plan.routes] == heard
    await acts.aclose()


@pytest.mark.parametrize(
    ("inp", "kind", "message"),
    [
        (
            PlanNotificationsInput(cluster="prod-c"),
            "UnknownCluster",
            "cluster: unknown cluster 'prod-c' (registered: prod-a, prod-b)",
        ),
        (
            PlanNotificationsInput(cluster="prod-a", receivers=["b"]),
            "NotAllowedForCluster",
            "receivers: receiver 'b' is not one of cluster 'prod-a''s (its: a)",
        ),
        (
            PlanNotificationsInput(cluster="prod-a", inventory="dc2"),
            "NotAllowedForCluster",
            "inventory: cluster 'prod-a' may not use inventory 'dc2' (allowed: dc1)",
        ),
    ],
)
async def test_a_spare_its_cluster_refuses_fails_for_good(
    inp: PlanNotificationsInput, kind: str, message: str
) -> None:
    acts = NotifyActivities(
        {name: _config("http://127.0.0.1:9/x") for name in ("a", "b")}, clusters=_registry()
    )
    with pytest.raises(ApplicationError) as refused:
        await ActivityEnvironment().run(acts.plan_notifications, inp)
    assert (refused.value.type, refused.value.message, refused.value.non_retryable) == (
        kind,
        message,
        True,
    )
    await acts.aclose()
