"""JSON Schemas of the webhook events, generated from the models and checked in under docs/.

Regenerate after changing webhooks/events.py:  python -m webhooks.schemas docs/webhooks
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

from .events import EVENT_DESCRIPTIONS, EVENT_SCHEMA_VERSION, EventType, SpareEvent

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
ENVELOPE_FILE = "spare-event.schema.json"


def schema_id(file_name: str) -> str:
    """The schema's `$id`: names the body's shape version, so a receiver can pin one."""
    return f"urn:virtflow:webhooks:v{EVENT_SCHEMA_VERSION}:{file_name.removesuffix('.schema.json')}"


def _open(schema: dict[str, Any]) -> None:
    # The sender forbids unknown fields; receivers must not, so new fields can be added.
    schema.pop("additionalProperties", None)
    for sub in schema.get("$defs", {}).values():
        sub.pop("additionalProperties", None)


def _envelope() -> dict[str, Any]:
    schema = SpareEvent.model_json_schema(mode="serialization")
    _open(schema)
    schema["$schema"] = JSON_SCHEMA_DIALECT
    schema["$id"] = schema_id(ENVELOPE_FILE)
    schema["title"] = "SpareEvent"
    return schema


def event_schemas() -> dict[str, dict[str, Any]]:
    """File name -> schema: the shared envelope, then one schema per event type."""
    envelope = _envelope()
    schemas = {ENVELOPE_FILE: envelope}
    for event in EventType:
        schema = copy.deepcopy(envelope)
        schema["$id"] = schema_id(f"{event.value}.schema.json")
        schema["title"] = event.value
        schema["description"] = EVENT_DESCRIPTIONS[event]
        schema["properties"]["type"] = {"const": event.value}
        schemas[f"{event.value}.schema.json"] = schema
    return schemas


def render(schema: dict[str, Any]) -> str:
    """Stable text, so a regenerated file only differs when the model changed."""
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def export_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in event_schemas().items():
        path = directory / name
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else Path("docs/webhooks")
    for path in export_schemas(target):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
