"""The event body is stable bytes, the webhook id is stable per event, the schemas are current."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from pydantic import ValidationError

from webhooks.events import (
    EVENT_SCHEMA_VERSION,
    EventType,
    SpareEvent,
    SpareEventData,
    VmFacts,
    webhook_id,
)
from webhooks.schemas import ENVELOPE_FILE, event_schemas, render

DOCS = Path(__file__).resolve().parents[2] / "docs" / "webhooks"
AT = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


def _event(reason: str | None = None, **override: object) -> SpareEvent:
    fields: dict[str, object] = {
        "type": EventType.READY,
        "timestamp": AT,
        "data": SpareEventData(
            spare_id="spare-c1-r1",
            cluster="c1",
            pool="general",
            host="hv-07",
            vm=VmFacts(name="spare-c1-r1", host="hv-07", ip="10.0.0.7", vmid=107),
            reason=reason,
        ),
    }
    fields.update(override)
    return SpareEvent.model_validate(fields)


def test_the_body_is_compact_json_with_sorted_keys() -> None:
    body = _event().to_body()
    assert body == (
        b'{"data":{"cluster":"c1","drain":null,"host":"hv-07","move":null,"pool":"general",'
        b'"reason":null,'
        b'"replacement":null,"spare_id":"spare-c1-r1","topology":null,"vm":{"host":"hv-07",'
        b'"ip":"10.0.0.7","mac":null,"name":"spare-c1-r1","vmid":107},"window":null},'
        b'"timestamp":"2025-03-01T12:00:00Z",'
        b'"type":"spare.ready"}'
    )


def test_the_body_has_the_standard_webhooks_shape() -> None:
    # Standard Webhooks: `type` and `timestamp` at the top, the event's own fields in `data`.
    body = json.loads(_event().to_body())
    assert set(body) == {"type", "timestamp", "data"}
    assert body["data"]["spare_id"] == "spare-c1-r1" and body["data"]["host"] == "hv-07"


def test_the_body_round_trips_into_an_equal_event() -> None:
    event = _event(reason="ünïcode ✓")
    assert SpareEvent.model_validate_json(event.to_body()) == event


def test_equal_instants_in_other_time_zones_give_the_same_bytes() -> None:
    paris = AT.astimezone(timezone(timedelta(hours=1)))
    assert _event(timestamp=paris).to_body() == _event().to_body()


def test_naive_timestamps_and_unknown_types_are_refused() -> None:
    with pytest.raises(ValidationError):
        _event(timestamp=datetime(2025, 3, 1, 12, 0, 0))
    with pytest.raises(ValidationError):
        _event(type="spare.exploded")


def test_webhook_ids_are_stable_and_distinct_per_spare_run_and_event() -> None:
    first = webhook_id("spare-c1-r1", "run-1", EventType.READY)
    assert first == webhook_id("spare-c1-r1", "run-1", EventType.READY)
    assert first.startswith("msg_") and len(first) == 36
    others = {
        webhook_id("spare-c1-r2", "run-1", EventType.READY),
        webhook_id("spare-c1-r1", "run-2", EventType.READY),
        webhook_id("spare-c1-r1", "run-1", EventType.RELEASED),
    }
    assert first not in others and len(others) == 3


def test_webhook_ids_cannot_collide_by_shifting_text_between_fields() -> None:
    assert webhook_id("a.b", "c", EventType.READY) != webhook_id("a", "b.c", EventType.READY)


def test_there_is_one_schema_per_event_type_plus_the_envelope() -> None:
    schemas = event_schemas()
    assert set(schemas) == {ENVELOPE_FILE} | {f"{e.value}.schema.json" for e in EventType}
    assert schemas["spare.failed.schema.json"]["properties"]["type"] == {"const": "spare.failed"}


def test_every_schema_names_the_body_shape_version() -> None:
    assert EVENT_SCHEMA_VERSION == 2
    for name, schema in event_schemas().items():
        assert schema["$id"] == f"urn:virtflow:webhooks:v2:{name.removesuffix('.schema.json')}"


@pytest.mark.parametrize("name", sorted(event_schemas()))
def test_the_checked_in_schema_is_current(name: str) -> None:
    path = DOCS / name
    assert path.exists(), f"missing {path}: run python -m webhooks.schemas docs/webhooks"
    assert path.read_text(encoding="utf-8") == render(event_schemas()[name]), (
        f"{path} is stale: run python -m webhooks.schemas docs/webhooks"
    )


def test_the_schemas_leave_room_for_new_fields() -> None:
    envelope = event_schemas()[ENVELOPE_FILE]
    assert "additionalProperties" not in envelope
    assert "type" in json.loads(render(envelope))["required"]
