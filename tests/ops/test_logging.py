"""Log lines carry the spare and workflow ids, in JSON or console form."""

from __future__ import annotations

import json
import logging

import pytest

from runtime.logging_setup import ConsoleFormatter, JsonFormatter, SpareContext, spare_id_of


@pytest.mark.parametrize(
    ("workflow_id", "spare"),
    [
        ("spare-lab-r1", "spare-lab-r1"),
        ("release-spare-lab-r1-0a1b2c3d", "spare-lab-r1"),
        ("release-spare-lab-r1", "spare-lab-r1"),
        ("ledger-default", None),
    ],
)
def test_the_spare_is_read_from_the_workflow_id(workflow_id: str, spare: str | None) -> None:
    assert spare_id_of(workflow_id) == spare


def record(**extra: object) -> logging.LogRecord:
    rec = logging.makeLogRecord(
        {"name": "t", "levelname": "INFO", "msg": "hello %s", "args": ("x",)}
    )
    rec.__dict__.update(extra)
    SpareContext().filter(rec)
    return rec


def test_a_json_line_lifts_the_ids_out_of_the_sdk_context() -> None:
    rec = record(
        temporal_activity={
            "workflow_id": "release-spare-lab-r1-0a1b2c3d",
            "activity_type": "drain_node",
        }
    )
    line = json.loads(JsonFormatter().format(rec))
    assert line["message"] == "hello x"
    assert line["spare_id"] == "spare-lab-r1"
    assert line["workflow_id"] == "release-spare-lab-r1-0a1b2c3d"
    assert line["activity_type"] == "drain_node"
    assert "temporal_activity" not in line


def test_an_explicit_spare_wins_and_console_lines_name_it() -> None:
    rec = record(spare_id="spare-lab-r9", temporal_workflow={"workflow_id": "ledger-default"})
    text = ConsoleFormatter().format(rec)
    assert "[spare=spare-lab-r9 workflow=ledger-default] hello x" in text
    assert "[" not in ConsoleFormatter().format(record())
