"""Durable, de-duplicating storage of received webhooks in one SQLite file.

A webhook id seen again within the de-duplication window is a retry of a delivery already
stored: it is counted, not stored twice. The window should cover the sender's whole retry
schedule (virtflow's default schedule ends after about 28 hours; the default window is a
week).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from pydantic import BaseModel

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id TEXT NOT NULL,
    type TEXT NOT NULL,
    spare_id TEXT NOT NULL,
    received_at REAL NOT NULL,
    deliveries INTEGER NOT NULL DEFAULT 1,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_id ON events (webhook_id, received_at);
CREATE INDEX IF NOT EXISTS events_by_spare ON events (spare_id, type);
"""


class StoredEvent(BaseModel):
    seq: int
    webhook_id: str
    type: str
    spare_id: str
    received_at: float
    deliveries: int
    event: dict[str, Any]


# A StoredEvent's columns in the order of its fields: its `event` is stored as JSON in `body`.
_COLUMNS = ", ".join("body" if name == "event" else name for name in StoredEvent.model_fields)


def _stored(row: tuple[Any, ...]) -> StoredEvent:
    values = dict(zip(StoredEvent.model_fields, row, strict=True))
    return StoredEvent.model_validate({**values, "event": json.loads(values["event"])})


class EventStore:
    """Usable from any thread or process: each thread keeps its own connection.

    Opening a connection costs about three times the insert it is for, and the receiver
    stores every delivery from a pool of threads.
    """

    def __init__(self, db_path: Path, dedup_window_seconds: int = 7 * 24 * 3600) -> None:
        self.db_path = db_path
        self.dedup_window_seconds = dedup_window_seconds
        self._local = threading.local()
        db_path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._open()) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)

    def _open(self) -> sqlite3.Connection:
        return sqlite3.connect(self.db_path, timeout=30, isolation_level=None)

    def _connect(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use; closed when the store is freed."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = self._open()
        return db

    def record(
        self, webhook_id: str, event_type: str, spare_id: str, body: bytes, now: float | None = None
    ) -> bool:
        """Store the event; False (and a delivery counted) when this id is a retry."""
        received_at = time.time() if now is None else now
        db = self._connect()
        # IMMEDIATE takes the write lock first, so two concurrent retries of one id
        # cannot both see "new" and both insert.
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute(
                "SELECT seq FROM events WHERE webhook_id = ? AND received_at >= ? "
                "ORDER BY seq DESC LIMIT 1",
                (webhook_id, received_at - self.dedup_window_seconds),
            ).fetchone()
            if row is not None:
                db.execute("UPDATE events SET deliveries = deliveries + 1 WHERE seq = ?", (row[0],))
            else:
                db.execute(
                    "INSERT INTO events (webhook_id, type, spare_id, received_at, body) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (webhook_id, event_type, spare_id, received_at, body.decode("utf-8")),
                )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return row is None

    def query(
        self, spare_id: str | None = None, event_type: str | None = None, limit: int = 1000
    ) -> list[StoredEvent]:
        """Matching events, oldest first (the newest `limit` of them)."""
        clauses, params = [], []
        if spare_id is not None:
            clauses.append("spare_id = ?")
            params.append(spare_id)
        if event_type is not None:
            clauses.append("type = ?")
            params.append(event_type)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        query = f"SELECT {_COLUMNS} FROM events {where} ORDER BY seq DESC LIMIT ?"
        rows = self._connect().execute(query, [*params, limit]).fetchall()
        return [_stored(row) for row in reversed(rows)]
