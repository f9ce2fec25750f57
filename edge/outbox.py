"""The durable outbox: every alert and round record is committed here before it is published and
removed only when the broker acknowledged it. A `kill -9`, a power cut or a broker that is down
for hours loses nothing; after a restart delivery resumes in order from the oldest message.

The row number is the table's sequence number: SQLite's AUTOINCREMENT never reuses one, even
after rows are deleted, so consumers can spot gaps and de-duplicate.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge.messages import Envelope, MessageKind

SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    topic TEXT NOT NULL,
    payload TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS refused (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    topic TEXT NOT NULL,
    payload TEXT NOT NULL,
    reason TEXT NOT NULL,
    at REAL NOT NULL
);
"""


class OutboxError(RuntimeError):
    """The outbox could not store a message (disk full, file unwritable)."""


@dataclass(frozen=True)
class Message:
    seq: int
    id: str
    topic: str
    payload: bytes


class Outbox:
    """A SQLite (WAL) queue shared by the analysis thread and the publisher thread."""

    def __init__(self, path: Path, min_free_mb: float = 200.0) -> None:
        self.path = path
        self.min_free_mb = min_free_mb
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")  # committed means on disk
            self._db.executescript(SCHEMA)
        except OSError as error:
            raise OutboxError(
                f"cannot make the outbox's folder {path.parent}: {error.strerror}"
            ) from None
        except sqlite3.Error as error:
            raise OutboxError(f"cannot open the outbox {path}: {error}") from None

    def put(
        self,
        topic: str,
        body: dict[str, Any],
        *,
        table_id: str,
        kind: MessageKind,
        evidence_jpeg: str | None = None,
        clip_webm: str | None = None,
    ) -> Message:
        """Commit one message; returns it with its sequence number and id (the stored one when a
        message of that id is held already)."""
        message_id = str(body.get("id") or uuid.uuid4())
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                cursor = self._db.execute(
                    "INSERT INTO outbox (id, topic, payload, created) VALUES (?, ?, '', ?)",
                    (message_id, topic, time.time()),
                )
                seq = int(cursor.lastrowid or 0)
                payload = Envelope(
                    message_id=message_id,
                    seq=seq,
                    table_id=table_id,
                    kind=kind,
                    produced_at=time.time(),
                    body=body,
                    evidence_jpeg=evidence_jpeg,
                    clip_webm=clip_webm,
                ).model_dump_json()
                self._db.execute("UPDATE outbox SET payload = ? WHERE seq = ?", (payload, seq))
                self._db.execute("COMMIT")
            except sqlite3.IntegrityError:  # stored already (a retry after an error): keep that
                self._rollback()
                row = self._db.execute(
                    "SELECT seq, payload FROM outbox WHERE id = ?", (message_id,)
                ).fetchone()
                return Message(int(row[0]), message_id, topic, str(row[1]).encode())
            except sqlite3.Error as error:
                self._rollback()
                raise OutboxError(f"outbox {self.path}: {error}") from None
        return Message(seq, message_id, topic, payload.encode())

    def pending(self, after: int = 0, limit: int = 100) -> list[Message]:
        """Messages not yet acknowledged, oldest first, after sequence number `after`."""
        rows = self._query(
            "SELECT seq, id, topic, payload FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?",
            (after, limit),
        )
        return [Message(int(s), str(i), str(t), str(p).encode()) for s, i, t, p in rows]

    def ack(self, seq: int) -> None:
        """The broker has it: forget it."""
        self._transaction(("DELETE FROM outbox WHERE seq = ?", (seq,)))

    def refuse(self, seq: int, reason: str) -> None:
        """The broker refused it (not authorised, say): keep it aside for an operator."""
        self._transaction(
            (
                "INSERT OR REPLACE INTO refused SELECT seq, id, topic, payload, ?, ? "
                "FROM outbox WHERE seq = ?",
                (reason, time.time(), seq),
            ),
            ("DELETE FROM outbox WHERE seq = ?", (seq,)),
        )

    def depth(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM outbox", ())[0][0])

    def refused_count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM refused", ())[0][0])

    def free_mb(self) -> float:
        return shutil.disk_usage(self.path.parent).free / 2**20

    def disk_low(self) -> bool:
        return self.free_mb() < self.min_free_mb

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _query(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as error:
                raise OutboxError(f"outbox {self.path}: {error}") from None

    def _transaction(self, *statements: tuple[str, tuple[Any, ...]]) -> None:
        """All or nothing; a store error (disk full) leaves the outbox as it was."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                for sql, params in statements:
                    self._db.execute(sql, params)
                self._db.execute("COMMIT")
            except sqlite3.Error as error:
                self._rollback()
                raise OutboxError(f"outbox {self.path}: {error}") from None

    def _rollback(self) -> None:
        with contextlib.suppress(sqlite3.Error):  # no transaction was open
            self._db.execute("ROLLBACK")
