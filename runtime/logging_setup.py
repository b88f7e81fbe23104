"""Structured logs: console lines for people or one JSON object per line, each with the spare
id and workflow id when the line comes from (or names) a spare.

The SDK's `workflow.logger` and `activity.logger` put the workflow's details in the record's
extras (and skip workflow lines during replay); the filter here lifts the ids out of them.
A line can also name its spare itself: `log.info(..., extra={"spare_id": ...})`.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace
from temporalio import activity, workflow

from .settings import Settings

_CONTEXT_KEYS = ("temporal_workflow", "temporal_activity")
# Standard LogRecord attributes; anything else on a record is an extra worth keeping.
_RECORD_FIELDS = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}
_LIFTED = {"spare_id", "workflow_id", *_CONTEXT_KEYS}
# contracts/spare.py: a spare's id is `spare-...`; PrepareSpare names its release child
# `release-<spare id>-<first 8 of its run id>`, a standalone release `release-<spare id>`.
_RELEASE_ID = re.compile(r"^release-(?P<spare>spare-.+?)(?:-[0-9a-f]{8})?$")


def spare_id_of(workflow_id: str) -> str | None:
    """The spare a workflow works for, read from its id; None for the ledgers."""
    if workflow_id.startswith("spare-"):
        return workflow_id
    match = _RELEASE_ID.match(workflow_id)
    return match["spare"] if match else None


class SpareContext(logging.Filter):
    """Adds `workflow_id` and `spare_id` (None when unknown) to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        details: dict[str, Any] = {}
        for key in _CONTEXT_KEYS:
            details.update(getattr(record, key, None) or {})
        workflow_id = getattr(record, "workflow_id", None) or details.get("workflow_id")
        record.workflow_id = workflow_id
        spare = getattr(record, "spare_id", None)
        record.spare_id = spare or (spare_id_of(workflow_id) if workflow_id else None)
        record.temporal = {k: v for k, v in details.items() if k != "workflow_id"}
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "spare_id": getattr(record, "spare_id", None),
            "workflow_id": getattr(record, "workflow_id", None),
        }
        for key, value in getattr(record, "temporal", {}).items():
            line.setdefault(key, value)
        for key, value in record.__dict__.items():
            if key not in _RECORD_FIELDS and key not in _LIFTED and key != "temporal":
                line.setdefault(key, value)
        span = trace.get_current_span().get_span_context()
        if span.is_valid:
            # The ids of the span this line was logged in: a log search finds the trace.
            line["trace_id"] = trace.format_trace_id(span.trace_id)
            line["span_id"] = trace.format_span_id(span.span_id)
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


class ConsoleFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s%(where)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        spare = record.__dict__.get("spare_id")
        workflow_id = record.__dict__.get("workflow_id")
        ids = [f"spare={spare}"] if spare else []
        if workflow_id and workflow_id != spare:
            ids.append(f"workflow={workflow_id}")
        record.where = f" [{' '.join(ids)}]" if ids else ""
        return super().format(record)


def configure_logging(settings: Settings) -> None:
    """Route every logger (SDK, uvicorn, virtflow) through one handler in the chosen format."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(SpareContext())
    handler.setFormatter(JsonFormatter() if settings.log_format == "json" else ConsoleFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level)
    # The ids are fields of their own; the SDK need not also append them to each message.
    workflow.logger.workflow_info_on_message = False
    activity.logger.activity_info_on_message = False
    for name in ("uvicorn", "uvicorn.access", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
