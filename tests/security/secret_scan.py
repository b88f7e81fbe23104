"""Find configured secrets in workflow histories and log lines.

Wired into tests/conftest.py: a logging handler watches every record of the session, and
before the session's Temporal server stops, every workflow history on it is fetched and
searched. Payloads are base64 in a history's JSON form, so they are decoded first.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
from collections.abc import Iterator, Mapping
from typing import Any

from temporalio.client import Client


def _texts(node: Any) -> Iterator[str]:
    """Every string of a history's JSON form, with base64 payload `data` decoded too."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == "data" and isinstance(value, str):
                yield _decoded(value)
            yield from _texts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _texts(item)
    elif isinstance(node, str):
        yield node


def _decoded(value: str) -> str:
    try:
        return base64.b64decode(value, validate=True).decode(errors="replace")
    except (binascii.Error, ValueError):
        return ""


def secrets_in(text: str, secrets: Mapping[str, str]) -> list[str]:
    return [name for name, value in secrets.items() if value in text]


def secrets_in_history(history_json: str, secrets: Mapping[str, str]) -> list[str]:
    found: set[str] = set()
    for text in _texts(json.loads(history_json)):
        found.update(secrets_in(text, secrets))
    return sorted(found)


async def scan_histories(
    client: Client, secrets: Mapping[str, str], concurrency: int = 8
) -> tuple[int, list[str]]:
    """(workflows scanned, "<workflow id>: <secret name>" for every leak)."""
    ids = [(wf.id, wf.run_id) async for wf in client.list_workflows()]
    gate = asyncio.Semaphore(concurrency)

    async def scan(workflow_id: str, run_id: str) -> list[str]:
        async with gate:
            handle = client.get_workflow_handle(workflow_id, run_id=run_id)
            history = await handle.fetch_history()
        return [f"{workflow_id}: {name}" for name in secrets_in_history(history.to_json(), secrets)]

    found = await asyncio.gather(*(scan(wid, rid) for wid, rid in ids))
    return len(ids), [leak for leaks in found for leak in leaks]


class SecretWatch(logging.Handler):
    """Remembers every log record that shows a secret (logger name and which secret)."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        super().__init__(logging.DEBUG)
        self.secrets = dict(secrets)
        self.leaks: list[str] = []
        self.records = 0
        self.setFormatter(logging.Formatter("%(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.records += 1
        try:
            text = self.format(record)
        except Exception:  # a broken record must not break the test that logged it
            text = str(record.msg)
        for name in secrets_in(text, self.secrets):
            self.leaks.append(f"log {record.name}: {name}")


class SecretScan:
    """The session's scan: the log watch, then the histories, with counts for the summary."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self.secrets = dict(secrets)
        self.watch = SecretWatch(secrets)
        self.histories = 0
        self.others: list[dict[str, int]] = []

    def add(self, name: str, secret: str) -> None:
        """A secret made during the session (a bootstrap token): scanned like the others."""
        self.secrets[name] = secret
        self.watch.secrets[name] = secret

    def install(self) -> None:
        root = logging.getLogger()
        root.addHandler(self.watch)
        # INFO and up is what a deployment logs; lower levels are noise for this purpose.
        if root.level > logging.INFO or root.level == logging.NOTSET:
            root.setLevel(logging.INFO)

    async def check(self, client: Client) -> None:
        self.histories, leaks = await scan_histories(client, self.secrets)
        leaks += self.watch.leaks
        assert not leaks, "configured secrets leaked:\n" + "\n".join(sorted(set(leaks)))

    def counts(self) -> dict[str, int]:
        """What this process scanned; a parallel run's workers send theirs to the summary."""
        return {
            "histories": self.histories,
            "records": self.watch.records,
            "leaks": len(self.watch.leaks),
        }

    def add_counts(self, counts: Mapping[str, int]) -> None:
        """Another process's counts (a pytest-xdist worker's), for the summary."""
        self.others.append(dict(counts))

    def summary(self) -> str:
        every = [self.counts(), *self.others]
        total = {key: sum(c[key] for c in every) for key in every[0]}
        return (
            f"secret scan: {total['histories']} workflow histories, {total['records']} log "
            f"records, {total['leaks']} leaks in logs"
        )
