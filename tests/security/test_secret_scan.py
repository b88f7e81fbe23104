"""The secret scan finds what it looks for: in a payload (base64 in the history) and in a log."""

from __future__ import annotations

import base64
import json
import logging

from tests.security.secret_scan import SecretWatch, secrets_in_history

# A secret of its own: the session-end scan must not find the canary in the real suite.
CANARY = {"canary": "whsec_Y2FuYXJ5LWNhbmFyeS1jYW5hcnktY2FuYXJ5"}


def _history(payload: dict[str, str]) -> str:
    data = base64.b64encode(json.dumps(payload).encode()).decode()
    event = {"workflowExecutionStartedEventAttributes": {"input": {"payloads": [{"data": data}]}}}
    return json.dumps({"events": [event]})


def test_a_secret_inside_an_encoded_payload_is_found() -> None:
    assert secrets_in_history(_history({"token": CANARY["canary"]}), CANARY) == ["canary"]
    assert secrets_in_history(_history({"token": "nothing here"}), CANARY) == []


def test_a_secret_in_a_log_line_or_its_arguments_is_found() -> None:
    watch = SecretWatch(CANARY)
    log = logging.getLogger("virtflow.test.canary")
    log.addHandler(watch)
    try:
        log.warning("delivering with %s", CANARY["canary"])
        log.warning("nothing secret")
    finally:
        log.removeHandler(watch)
    assert watch.leaks == ["log virtflow.test.canary: canary"]
