"""Publishing spare events to a real nats-server with JetStream, on loopback."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import nats
import pytest
from pydantic import SecretStr, ValidationError
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.event_bus import EventBusActivities
from contracts.notify import PublishEventInput, PublishEventResult
from runtime.event_bus import EventBusConfig
from runtime.settings import Settings
from tests.webhooks.nats_server import nats_server
from tests.webhooks.receivers import refused_url
from webhooks.events import EventType, SpareEvent, SpareEventData, VmFacts, webhook_id

PASSWORD = "nats-test-password-3b9f1c"
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


@pytest.fixture
async def nats_url(tmp_path: Path) -> AsyncIterator[str]:
    async with nats_server(tmp_path / "nats", "--user", "virtflow", "--pass", PASSWORD) as url:
        yield url


def bus_config(url: str, **extra: object) -> EventBusConfig:
    return EventBusConfig.model_validate(
        {"url": url, "user": "virtflow", "password": SecretStr(PASSWORD), **extra}
    )


async def publish(config: EventBusConfig | None, msg_id: str = MSG_ID) -> PublishEventResult:
    bus = EventBusActivities(config)
    return await ActivityEnvironment().run(
        bus.publish_event, PublishEventInput(webhook_id=msg_id, event=EVENT)
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"url": "http://127.0.0.1:4222"}, "nats://, tls://, ws:// or wss://"),
        ({"password": "x"}, "password given without a user"),
        ({"user": "u", "token": "t"}, "either a token or a user"),
        ({"subject_prefix": "virtflow.>"}, "subject_prefix"),
        ({"stream": "a.b"}, "stream"),
    ],
)
def test_invalid_event_bus_settings_fail_at_start_up(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)) as caught:
        EventBusConfig.model_validate({"url": "nats://127.0.0.1:4222", **fields})
    assert "'x'" not in str(caught.value)


async def test_an_event_is_stored_once_in_jetstream_with_the_webhook_id(nats_url: str) -> None:
    config = bus_config(nats_url)
    first = await publish(config)
    again = await publish(config)  # a retried publish: same id

    assert first.model_dump() == {
        "subject": "virtflow.c1.spare.ready",
        "stream": "VIRTFLOW",
        "sequence": 1,
        "duplicate": False,
    }
    assert again.duplicate is True
    nc = await nats.connect(nats_url, user="virtflow", password=PASSWORD)
    try:
        js = nc.jetstream()
        info = await js.stream_info("VIRTFLOW")
        assert info.state.messages == 1
        assert info.config.subjects == ["virtflow.>"]
        stored = await js.get_msg("VIRTFLOW", 1)
        assert stored.subject == "virtflow.c1.spare.ready"
        assert stored.data == EVENT.to_body()
        assert stored.headers is not None
        assert stored.headers["Nats-Msg-Id"] == MSG_ID
        assert stored.headers["webhook-id"] == MSG_ID
    finally:
        await nc.close()


async def test_core_nats_publishing_reaches_a_live_subscriber(nats_url: str) -> None:
    nc = await nats.connect(nats_url, user="virtflow", password=PASSWORD)
    try:
        sub = await nc.subscribe("site.events.>")
        await nc.flush()
        result = await publish(bus_config(nats_url, stream=None, subject_prefix="site.events"))
        msg = await sub.next_msg(timeout=5)
    finally:
        await nc.close()
    assert result.stream is None
    assert msg.subject == "site.events.c1.spare.ready"
    assert msg.data == EVENT.to_body()
    assert msg.headers is not None and msg.headers["Nats-Msg-Id"] == MSG_ID


async def test_an_unreachable_bus_is_retryable_and_says_nothing_secret() -> None:
    url = refused_url().replace("http://", "nats://")
    with pytest.raises(ApplicationError) as caught:
        await publish(bus_config(url))
    assert caught.value.type == "EventBusUnavailable" and not caught.value.non_retryable
    assert "virtflow.c1.spare.ready" in str(caught.value)
    assert PASSWORD not in str(caught.value)


async def test_a_wrong_password_is_retryable_and_not_echoed(nats_url: str) -> None:
    config = bus_config(nats_url, password=SecretStr("wrong-password-5e1d"))
    with pytest.raises(ApplicationError) as caught:
        await publish(config)
    assert caught.value.type == "EventBusUnavailable"
    assert "wrong-password-5e1d" not in str(caught.value) and PASSWORD not in str(caught.value)


async def test_a_worker_without_a_bus_refuses_for_good() -> None:
    with pytest.raises(ApplicationError) as caught:
        await publish(None)
    assert caught.value.type == "EventBusNotConfigured" and caught.value.non_retryable


def test_the_bus_is_off_by_default_and_set_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().event_bus is None
    monkeypatch.setenv("VIRTFLOW_EVENT_BUS__URL", "nats://nats.example:4222")
    monkeypatch.setenv("VIRTFLOW_EVENT_BUS__TOKEN", "nats-env-token-71c2")
    settings = Settings()
    assert settings.event_bus is not None
    assert settings.event_bus.subject(EVENT) == "virtflow.c1.spare.ready"
    assert settings.event_bus.connect_options()["token"] == "nats-env-token-71c2"
    assert "nats-env-token-71c2" not in repr(settings)
