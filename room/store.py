"""The surveillance room's incident store: SQLAlchemy 2 over SQLite (embedded default) or
PostgreSQL (by URL), the same code for both; the schema is made by Alembic migrations.

Tables: tables (each box's last sequence number), messages (every message id ever stored, for
idempotent ingest), rounds, hands, alerts, evidence (JPEG, subject to retention), users,
audit (append-only: the store has no way to change or delete an audit row), and table_health
(each box's last status and health report, for the live board).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import datetime as dt
import hashlib
import secrets
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config as AlembicConfig
from argon2 import PasswordHasher
from argon2.exceptions import VerificationError
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    create_engine,
    delete,
    event,
    func,
    insert,
    select,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

ROLES = ("viewer", "reviewer", "admin")
STATUSES = ("new", "acknowledged", "escalated", "dismissed")
ACTIONS = {"acknowledge": "acknowledged", "escalate": "escalated", "dismiss": "dismissed"}
DECISIONS_AT_ONCE = 5000
"""Alert ids a decisions query names at once: well inside SQLite's bound on a statement's
parameters."""
MIGRATIONS = Path(__file__).parent / "migrations"


class StoreError(ValueError):
    """A request the store refuses (unknown alert, bad role, bad message), in one line."""


class Base(DeclarativeBase):
    pass


class TableRow(Base):
    __tablename__ = "tables"
    table_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    site: Mapped[str] = mapped_column(String(64), default="")
    last_seq: Mapped[int] = mapped_column(Integer, default=0)


class MessageRow(Base):
    __tablename__ = "messages"
    message_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    table_id: Mapped[str] = mapped_column(String(64), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    received_at: Mapped[float] = mapped_column(Float)


class MissingRunRow(Base):
    """Sequence numbers first..last of a table not seen yet: one row however long the run."""

    __tablename__ = "missing_runs"
    table_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    first: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    last: Mapped[int] = mapped_column(BigInteger)
    noticed_at: Mapped[float] = mapped_column(Float)
    raised: Mapped[bool] = mapped_column(Boolean, default=False)


class RoundRow(Base):
    __tablename__ = "rounds"
    round_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    table_id: Mapped[str] = mapped_column(String(64), index=True)
    rules: Mapped[str] = mapped_column(String(16))
    banker: Mapped[int] = mapped_column(Integer)
    complete: Mapped[bool] = mapped_column(Boolean)
    dice: Mapped[list[int]] = mapped_column(JSON)
    cut: Mapped[str] = mapped_column(String(64))
    first_position: Mapped[int | None] = mapped_column(Integer, nullable=True)
    required_first_position: Mapped[int | None] = mapped_column(Integer, nullable=True)
    received_at: Mapped[float] = mapped_column(Float, index=True)
    record: Mapped[dict[str, Any]] = mapped_column(JSON)


class HandRow(Base):
    __tablename__ = "hands"
    round_id: Mapped[str] = mapped_column(ForeignKey("rounds.round_id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    tiles: Mapped[list[str]] = mapped_column(JSON)
    high: Mapped[list[str]] = mapped_column(JSON)
    low: Mapped[list[str]] = mapped_column(JSON)
    house_way: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    outcome: Mapped[str | None] = mapped_column(String(8), nullable=True)


class AlertRow(Base):
    __tablename__ = "alerts"
    serial: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    """Arrival order in this store: the live board asks for alerts after the last it showed."""
    id: Mapped[str] = mapped_column(String(64), unique=True)
    table_id: Mapped[str] = mapped_column(String(64), index=True)
    round_id: Mapped[str] = mapped_column(String(128), index=True)
    kind: Mapped[str] = mapped_column(String(32), index=True)
    severity: Mapped[str] = mapped_column(String(16))
    position: Mapped[int | None] = mapped_column(Integer, nullable=True)
    rules: Mapped[str] = mapped_column(String(16))
    clause: Mapped[str] = mapped_column(Text)
    summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    expected: Mapped[str | None] = mapped_column(Text, nullable=True)
    observed: Mapped[str | None] = mapped_column(Text, nullable=True)
    confidence: Mapped[float] = mapped_column(Float)
    evidence_time_s: Mapped[float] = mapped_column(Float)
    received_at: Mapped[float] = mapped_column(Float, index=True)
    status: Mapped[str] = mapped_column(String(16), default="new", index=True)


class EvidenceRow(Base):
    __tablename__ = "evidence"
    alert_id: Mapped[str] = mapped_column(ForeignKey("alerts.id"), primary_key=True)
    jpeg: Mapped[bytes] = mapped_column(LargeBinary)
    stored_at: Mapped[float] = mapped_column(Float, index=True)


class ClipRow(Base):
    """An alert's clip and annotated whole frame, sent by its box a few seconds after the alert
    (`edge/clips.py`). No key to the alert: two ingest workers may store them in either order."""

    __tablename__ = "clips"
    alert_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    frame_jpeg: Mapped[bytes] = mapped_column(LargeBinary)
    clip_webm: Mapped[bytes] = mapped_column(LargeBinary)
    evidence_time_s: Mapped[float] = mapped_column(Float)
    from_s: Mapped[float] = mapped_column(Float)
    to_s: Mapped[float] = mapped_column(Float)
    stored_at: Mapped[float] = mapped_column(Float, index=True)


class EnrolmentRow(Base):
    """One look at a table's opening display (`edge.messages.Enrolment`), accepted or refused,
    with the picture the box drew of it."""

    __tablename__ = "enrolments"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    table_id: Mapped[str] = mapped_column(String(64), index=True)
    at: Mapped[float] = mapped_column(Float)
    whole: Mapped[bool] = mapped_column(Boolean)
    accepted_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    record: Mapped[dict[str, Any]] = mapped_column(JSON)
    picture_jpeg: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    received_at: Mapped[float] = mapped_column(Float)


class UserRow(Base):
    __tablename__ = "users"
    username: Mapped[str] = mapped_column(String(64), primary_key=True)
    password_hash: Mapped[str] = mapped_column(String(256))
    role: Mapped[str] = mapped_column(String(16))


class WebSessionRow(Base):
    """A review UI login; the cookie holds the token, the store only its hash."""

    __tablename__ = "web_sessions"
    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    username: Mapped[str] = mapped_column(String(64), index=True)
    created_at: Mapped[float] = mapped_column(Float)


class AuditRow(Base):
    __tablename__ = "audit"
    __table_args__ = (
        Index("ix_audit_username_action_at", "username", "action", "at"),
        Index("ix_audit_action_at", "action", "at"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[float] = mapped_column(Float)
    username: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(32))
    alert_id: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    note: Mapped[str] = mapped_column(Text, default="")


class DeadLetterRow(Base):
    """A message ingest refused: the topic, why, its size and its first DEAD_LETTER_BYTES."""

    __tablename__ = "dead_letters"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    received_at: Mapped[float] = mapped_column(Float, index=True)
    topic: Mapped[str] = mapped_column(String(256))
    reason: Mapped[str] = mapped_column(String(512))
    size: Mapped[int] = mapped_column(Integer)
    payload: Mapped[bytes] = mapped_column(LargeBinary)


DEAD_LETTER_BYTES = 16_384
"""Enough of a refused payload to see what it was; an 8 MB one must not fill the store."""


class TableHealthRow(Base):
    __tablename__ = "table_health"
    table_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    site: Mapped[str] = mapped_column(String(64), default="")
    state: Mapped[str | None] = mapped_column(String(16), nullable=True)
    """`online`, or `offline`: the broker's last will for a box that went away."""
    state_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    reported_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    """The box's clock when it wrote the newest health report stored."""
    received_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    camera: Mapped[str | None] = mapped_column(String(16), nullable=True)
    broker_connected: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    outbox_depth: Mapped[int | None] = mapped_column(Integer, nullable=True)
    analysis_fps: Mapped[float | None] = mapped_column(Float, nullable=True)
    alarms: Mapped[list[str]] = mapped_column(JSON, default=list)
    enrolment: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """The accepted enrolment its box reads by, as its newest health report says."""


SILENT_AFTER_S = 35.0
"""A box reports its health every 10 s by default: one not heard from for three reports and a
little is silent (its network, its power, or the box itself)."""


@dataclass(frozen=True)
class TableCondition:
    """What the live board says of one table, worst first: offline, silent, alarms, ok."""

    table_id: str
    level: str
    """`offline`, `silent`, `alarm`, `warning` or `ok`."""
    text: str
    enrolment: str = ""
    """The enrolment in force (its id), once the room has it."""
    enrolled: str = ""
    """When and by whom it was accepted, in words."""


def table_condition(
    row: TableHealthRow, now: float, silent_after_s: float = SILENT_AFTER_S
) -> TableCondition:
    """A table's condition from its last status and health report."""
    if row.state == "offline":
        return TableCondition(row.table_id, "offline", "offline: the box left the broker")
    heard = row.received_at if row.received_at is not None else row.state_at
    if heard is None or now - heard > silent_after_s:
        silent = "never reported" if heard is None else f"silent for {now - heard:.0f} s"
        return TableCondition(row.table_id, "silent", silent)
    if row.alarms:
        return TableCondition(row.table_id, "alarm", ", ".join(row.alarms))
    if row.received_at is None:
        return TableCondition(row.table_id, "ok", "online, no health report yet")
    running = f"camera {row.camera}, {row.analysis_fps} frames/s"
    if not row.enrolment:
        return TableCondition(row.table_id, "warning", f"{running}; {NOT_ENROLLED}")
    return TableCondition(row.table_id, "ok", running, row.enrolment)


def _clock(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


NOT_ENROLLED = "no accepted enrolment of its tiles"
"""A box reading without its set's enrolment reads an unfamiliar design as badly as its
training allows (`vision.enrol`): the board warns until `paigow enrol` is accepted."""


@dataclass(frozen=True)
class Ingested:
    stored: bool
    """False when the message id was already stored (a redelivery)."""
    gap: tuple[int, int] | None = None
    """Sequence numbers (first, last) this message jumped over: missing unless they turn up
    (several ingest workers can store a table's messages out of order)."""


class Store:
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine: Engine = create_engine(url, future=True)
        if url.startswith("sqlite"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
            # Writers take the lock when they begin, not halfway: with several ingest workers a
            # transaction that read first could otherwise not write at all (SQLITE_BUSY).
            event.listen(self.engine, "begin", lambda c: c.exec_driver_sql("BEGIN IMMEDIATE"))
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.hasher = PasswordHasher()

    @classmethod
    def open(cls, url: str) -> Store:
        """Open (and create or upgrade the schema of) the store at a SQLAlchemy URL."""
        store = cls(url)
        store.migrate()
        return store

    def migrate(self) -> None:
        config = AlembicConfig()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self.sessions() as session, session.begin():
            yield session

    # -- ingest --------------------------------------------------------------------------------

    def ingest(self, envelope: dict[str, Any]) -> Ingested:
        """Store one published message (an Envelope) exactly once."""
        result = self.ingest_many([envelope])[0]
        if isinstance(result, StoreError):
            raise result
        return result

    def dead_letter(self, topic: str, reason: str, payload: bytes) -> None:
        """Keep a refused message (bounded) with why it was refused."""
        with self.session() as s:
            kept = payload[:DEAD_LETTER_BYTES]
            s.add(DeadLetterRow(received_at=time.time(), topic=topic[:256], reason=reason[:512],
                                size=len(payload), payload=kept))  # fmt: skip

    def dead_letters(self, limit: int = 100) -> list[DeadLetterRow]:
        with self.session() as s:
            newest = select(DeadLetterRow).order_by(DeadLetterRow.id.desc()).limit(limit)
            return list(s.scalars(newest))

    def ingest_many(
        self, envelopes: Sequence[dict[str, Any]], at: float | None = None
    ) -> list[Ingested | StoreError]:
        """Store a batch in one commit: a redelivered id is skipped, a malformed message is
        reported, and neither stops the rest. `at` backdates the arrival (simulated shifts).

        The batch goes in with bulk inserts; if another worker stored one of its messages at
        the same moment, the batch is redone one message at a time, each in a savepoint."""
        now = time.time() if at is None else at
        try:
            return self._ingest_batch(envelopes, now)
        except IntegrityError:
            return self._ingest_each(envelopes, now)

    def _ingest_batch(
        self, envelopes: Sequence[dict[str, Any]], now: float
    ) -> list[Ingested | StoreError]:
        results: list[Ingested | StoreError | None] = [None] * len(envelopes)
        parsed: list[_Parsed] = []
        for index, envelope in enumerate(envelopes):
            try:
                parsed.append(_Parsed.of(index, envelope, now))
            except StoreError as error:
                results[index] = error
        with self.session() as s:
            ids = [p.message_id for p in parsed]
            known = set(
                s.scalars(select(MessageRow.message_id).where(MessageRow.message_id.in_(ids)))
            )
            fresh: list[_Parsed] = []
            for p in parsed:
                if p.message_id in known:
                    results[p.index] = Ingested(False)
                else:
                    known.add(p.message_id)
                    fresh.append(p)
            if fresh:
                gaps = self._insert(s, fresh, now)
                for p in fresh:
                    results[p.index] = Ingested(True, gaps.get(p.index))
        return [r if r is not None else StoreError("not stored") for r in results]

    def _advance_tables(
        self, s: Session, fresh: list[_Parsed], now: float
    ) -> dict[int, tuple[int, int]]:
        """Each table's last sequence number, its missing numbers, and which message jumped."""
        by_table: dict[str, list[_Parsed]] = {}
        for p in fresh:
            by_table.setdefault(p.table_id, []).append(p)
        rows = {
            row.table_id: row
            for row in s.scalars(
                select(TableRow).where(TableRow.table_id.in_(by_table)).with_for_update()
            )
        }
        gaps: dict[int, tuple[int, int]] = {}
        missing: list[MissingRunRow] = []
        late: list[tuple[str, int]] = []
        for table_id, messages in by_table.items():
            row = rows.get(table_id)
            if row is None:
                row = TableRow(table_id=table_id, site="", last_seq=0)
                s.add(row)
            last = row.last_seq
            for p in sorted(messages, key=lambda m: m.seq):
                if p.seq > last + 1:
                    gaps[p.index] = first, until = (last + 1, p.seq - 1)
                    missing.append(MissingRunRow(table_id=table_id, first=first, last=until,
                                                 noticed_at=now, raised=False))  # fmt: skip
                elif p.seq < last:
                    late.append((table_id, p.seq))
                last = max(last, p.seq)
            row.last_seq = last
        s.add_all(missing)
        s.flush()
        for table_id, seq in late:  # no longer missing: its run splits around it
            run = s.scalar(
                select(MissingRunRow).where(
                    MissingRunRow.table_id == table_id,
                    MissingRunRow.first <= seq,
                    MissingRunRow.last >= seq,
                    MissingRunRow.raised.is_(False),
                )
            )
            if run is None:
                continue
            first, last, noticed = run.first, run.last, run.noticed_at
            s.delete(run)
            s.flush()
            s.add_all(
                MissingRunRow(table_id=table_id, first=a, last=b, noticed_at=noticed, raised=False)
                for a, b in ((first, seq - 1), (seq + 1, last))
                if a <= b
            )
            s.flush()
        return gaps

    def _insert_ignore(self, model: type[Base]) -> Any:
        from sqlalchemy.dialects import postgresql, sqlite

        if self.engine.dialect.name == "postgresql":
            return postgresql.insert(model).on_conflict_do_nothing()
        return sqlite.insert(model).on_conflict_do_nothing()

    def _ingest_each(
        self, envelopes: Sequence[dict[str, Any]], now: float
    ) -> list[Ingested | StoreError]:
        results: list[Ingested | StoreError] = []
        with self.session() as s:
            for envelope in envelopes:
                try:
                    with s.begin_nested():
                        results.append(self._ingest_one(s, envelope, now))
                except IntegrityError as error:
                    known = s.get(MessageRow, str(envelope.get("message_id")))
                    results.append(
                        Ingested(False)
                        if known
                        else StoreError(
                            f"message {envelope.get('message_id')} conflicts with stored data: "
                            f"{error.orig}"
                        )
                    )
                except StoreError as error:
                    results.append(error)
        return results

    def _ingest_one(self, s: Session, envelope: dict[str, Any], now: float) -> Ingested:
        parsed = _Parsed.of(0, envelope, now)
        return Ingested(True, self._insert(s, [parsed], now).get(0))

    def _insert(self, s: Session, fresh: list[_Parsed], now: float) -> dict[int, tuple[int, int]]:
        """Messages not stored before: their ids first (a redelivery fails there), then the
        tables' sequence numbers, alerts, evidence, rounds and hands; returns the gaps seen."""
        s.execute(insert(MessageRow), [p.message_row for p in fresh])
        gaps = self._advance_tables(s, fresh, now)
        alerts = [p.alert_row for p in fresh if p.alert_row]
        if alerts:
            s.execute(insert(AlertRow), alerts)
        evidence = [p.evidence_row for p in fresh if p.evidence_row]
        if evidence:
            s.execute(insert(EvidenceRow), evidence)
        clips = [p.clip_row for p in fresh if p.clip_row]
        if clips:
            s.execute(self._insert_ignore(ClipRow), clips)
        enrolments = [p.enrolment_row for p in fresh if p.enrolment_row]
        if enrolments:
            s.execute(self._insert_ignore(EnrolmentRow), enrolments)
        rounds = [p.round_row for p in fresh if p.round_row]
        if rounds:
            s.execute(insert(RoundRow), rounds)
            hands = [h for p in fresh for h in p.hand_rows]
            if hands:
                s.execute(insert(HandRow), hands)
        return gaps

    def raise_gaps(self, grace_s: float, now: float | None = None) -> list[tuple[str, int, int]]:
        """Sequence numbers still missing `grace_s` after they were noticed become
        `sequence-gap` alerts (one per run of numbers); returns (table, first, last) of each."""
        now = time.time() if now is None else now
        raised: list[tuple[str, int, int]] = []
        with self.session() as s:
            overdue = list(
                s.scalars(
                    select(MissingRunRow)
                    .where(
                        MissingRunRow.raised.is_(False), MissingRunRow.noticed_at < now - grace_s
                    )
                    .order_by(MissingRunRow.table_id, MissingRunRow.first)
                )
            )
            for run in overdue:
                table_id, first, last = run.table_id, run.first, run.last
                try:
                    with s.begin_nested():
                        self._add_gap(s, table_id, (first, last), now)
                        s.flush()
                except IntegrityError:
                    pass  # another worker raised it
                run.raised = True
                raised.append((table_id, first, last))
        return raised

    def _add_gap(self, s: Session, table_id: str, gap: tuple[int, int], now: float) -> None:
        first, last = gap
        missing = f"message {first}" if first == last else f"messages {first}-{last}"
        s.add(
            AlertRow(
                id=f"gap:{table_id}:{first}-{last}",
                table_id=table_id,
                round_id="",
                kind="sequence-gap",
                severity="high",
                position=None,
                rules="",
                clause="docs/mqtt.md#delivery",
                summary=f"Table {table_id}'s {missing} never reached the room.",
                expected=f"message {first} next",
                observed=f"{missing} never arrived",
                confidence=1.0,
                evidence_time_s=0.0,
                received_at=now,
                status="new",
            )
        )

    # -- reading -------------------------------------------------------------------------------

    def note_health(self, site: str, report: dict[str, Any], now: float | None = None) -> None:
        """Keep a table's newest health report (`edge.messages.Health`, validated by the
        caller); an older one arriving late is ignored."""
        now = time.time() if now is None else now
        table_id = str(report["table_id"])
        with self.session() as s:
            row = self._health_row(s, site, table_id)
            if row.reported_at is not None and row.reported_at > float(report["at"]):
                return
            row.reported_at, row.received_at = float(report["at"]), now
            row.camera, row.broker_connected = report["camera"], bool(report["broker_connected"])
            row.outbox_depth, row.analysis_fps = int(report["outbox_depth"]), report["analysis_fps"]
            row.alarms = list(report["alarms"])
            row.enrolment = report.get("enrolment")

    def note_status(self, site: str, table_id: str, state: str, now: float | None = None) -> None:
        """Keep a table's retained status: `offline` is the broker's last will for its box."""
        now = time.time() if now is None else now
        with self.session() as s:
            row = self._health_row(s, site, table_id)
            row.state, row.state_at = state, now

    def _health_row(self, s: Session, site: str, table_id: str) -> TableHealthRow:
        """A table's health row, made if new, locked for this transaction (several ingest
        workers note the same reports)."""
        s.execute(self._insert_ignore(TableHealthRow), [{"table_id": table_id, "site": site}])
        row = s.get(TableHealthRow, table_id, with_for_update=True)
        assert row is not None
        return row

    def table_conditions(
        self, now: float | None = None, silent_after_s: float = SILENT_AFTER_S
    ) -> list[TableCondition]:
        """Every table that has reported, worst first."""
        now = time.time() if now is None else now
        with self.session() as s:
            rows = s.scalars(select(TableHealthRow).order_by(TableHealthRow.table_id)).all()
            found = [table_condition(row, now, silent_after_s) for row in rows]
            kept = {e.id: e for e in s.scalars(select(EnrolmentRow).where(
                EnrolmentRow.id.in_([c.enrolment for c in found if c.enrolment])))}  # fmt: skip
        found = [
            dataclasses.replace(c, enrolled=f"enrolled {_clock(kept[c.enrolment].at)} by "
                                f"{kept[c.enrolment].accepted_by}")
            if c.enrolment in kept else c
            for c in found
        ]  # fmt: skip
        order = ("offline", "silent", "alarm", "warning", "ok")
        return sorted(found, key=lambda c: order.index(c.level))

    def enrolments(self, table_id: str | None = None, limit: int = 50) -> list[EnrolmentRow]:
        """Enrolments stored, newest first (one table's, with `table_id`)."""
        with self.session() as s:
            query = select(EnrolmentRow).order_by(EnrolmentRow.at.desc()).limit(limit)
            if table_id is not None:
                query = query.where(EnrolmentRow.table_id == table_id)
            return list(s.scalars(query).all())

    def enrolment_picture(self, enrolment_id: str) -> bytes | None:
        with self.session() as s:
            row = s.get(EnrolmentRow, enrolment_id)
            return row.picture_jpeg if row is not None else None

    def alerts(
        self,
        *,
        since: float | None = None,
        until: float | None = None,
        table: str | None = None,
        kind: str | None = None,
        severity: str | None = None,
        status: str | None = None,
        after_serial: int = 0,
        limit: int = 500,
        least_sure_first: bool = False,
    ) -> list[AlertRow]:
        """Alerts matching the filters, newest first, or the least sure first: an alert's
        confidence is its evidence's, so a reviewer looks twice at the bottom of the pile."""
        query = select(AlertRow).where(AlertRow.serial > after_serial)
        for column, value in (
            (AlertRow.table_id, table),
            (AlertRow.kind, kind),
            (AlertRow.severity, severity),
            (AlertRow.status, status),
        ):
            if value:
                query = query.where(column == value)
        if since is not None:
            query = query.where(AlertRow.received_at >= since)
        if until is not None:
            query = query.where(AlertRow.received_at < until)
        with self.session() as s:
            order = (AlertRow.confidence.asc(),) if least_sure_first else ()
            query = query.order_by(*order, AlertRow.received_at.desc(), AlertRow.serial.desc())
            return list(s.scalars(query.limit(limit)))

    def alert(self, alert_id: str) -> AlertRow:
        with self.session() as s:
            found = s.scalar(select(AlertRow).where(AlertRow.id == alert_id))
        if found is None:
            raise StoreError(f"no alert {alert_id!r}")
        return found

    def evidence(self, alert_id: str) -> bytes | None:
        with self.session() as s:
            found = s.get(EvidenceRow, alert_id)
            return found.jpeg if found else None

    def clip(self, alert_id: str) -> ClipRow | None:
        with self.session() as s:
            return s.get(ClipRow, alert_id)

    def round(self, round_id: str) -> RoundRow | None:
        with self.session() as s:
            return s.get(RoundRow, round_id)

    def rounds(
        self, *, since: float | None = None, until: float | None = None, table: str | None = None
    ) -> list[RoundRow]:
        query = select(RoundRow)
        if since is not None:
            query = query.where(RoundRow.received_at >= since)
        if until is not None:
            query = query.where(RoundRow.received_at < until)
        if table:
            query = query.where(RoundRow.table_id == table)
        with self.session() as s:
            return list(s.scalars(query.order_by(RoundRow.received_at)))

    def hands(self, round_ids: Sequence[str]) -> list[HandRow]:
        if not round_ids:
            return []
        with self.session() as s:
            return list(s.scalars(select(HandRow).where(HandRow.round_id.in_(round_ids))))

    def audit(self, alert_id: str | None = None, limit: int = 200) -> list[AuditRow]:
        query = select(AuditRow)
        if alert_id is not None:
            query = query.where(AuditRow.alert_id == alert_id)
        with self.session() as s:
            return list(s.scalars(query.order_by(AuditRow.id.desc()).limit(limit)))

    def decisions(self, alert_ids: Sequence[str]) -> dict[str, AuditRow]:
        """Each alert's latest decision (acknowledge, escalate, dismiss), for those that have
        one: one query for a shift's alerts, not one per alert."""
        latest: dict[str, AuditRow] = {}
        with self.session() as s:
            for start in range(0, len(alert_ids), DECISIONS_AT_ONCE):
                query = (
                    select(AuditRow)
                    .where(AuditRow.alert_id.in_(alert_ids[start : start + DECISIONS_AT_ONCE]))
                    .where(AuditRow.action.in_(list(ACTIONS)))
                    .order_by(AuditRow.id)
                )
                for row in s.scalars(query):
                    latest[str(row.alert_id)] = row
        return latest

    def count_rounds(self) -> int:
        return self.count(RoundRow)

    def last_seq(self, table_id: str) -> int:
        with self.session() as s:
            table = s.get(TableRow, table_id)
            return table.last_seq if table else 0

    def count(self, row: type[Base]) -> int:
        with self.session() as s:
            return int(s.scalar(select(func.count()).select_from(row)) or 0)

    # -- people --------------------------------------------------------------------------------

    def add_user(self, username: str, password: str, role: str, *, by: str = "setup") -> None:
        if role not in ROLES:
            raise StoreError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        if len(password) < 8:
            raise StoreError("a password needs at least 8 characters")
        with self.session() as s:
            existing = s.get(UserRow, username)
            hashed = self.hasher.hash(password)
            if existing is None:
                s.add(UserRow(username=username, password_hash=hashed, role=role))
            else:
                existing.password_hash, existing.role = hashed, role
                s.execute(delete(WebSessionRow).where(WebSessionRow.username == username))
            _audit(s, by, "user-set", f"{username} as {role}")

    def check_login(self, username: str, password: str) -> str | None:
        """The user's role if the password is right, else None."""
        with self.session() as s:
            user = s.get(UserRow, username)
        if user is None:
            self.hasher.hash(password)  # same time whether or not the user exists
            return None
        try:
            self.hasher.verify(user.password_hash, password)
        except VerificationError:
            return None
        return user.role

    def failed_logins(
        self, within_s: float, *, username: str | None = None, address: str | None = None
    ) -> int:
        """Failed logins in the last `within_s` seconds as this user, or from this address
        (from the audit log, so every worker and a restart see the same count)."""
        query = (
            select(func.count())
            .select_from(AuditRow)
            .where(AuditRow.action == "login-failed")
            .where(AuditRow.at >= time.time() - within_s)
        )
        if username is not None:
            query = query.where(AuditRow.username == username[:64])
        if address is not None:
            query = query.where(AuditRow.note == f"from {address}")
        with self.session() as s:
            return int(s.scalar(query) or 0)

    def open_session(self, username: str) -> str:
        """A new review UI session for the user: the token for their cookie."""
        token = secrets.token_urlsafe(32)
        with self.session() as s:
            s.add(WebSessionRow(token_hash=_token_hash(token), username=username,
                                created_at=time.time()))  # fmt: skip
        return token

    def session_user(self, token: str, max_age_s: float) -> tuple[str, str] | None:
        """(name, role now) of a live session's user; None once it was closed, expired or
        its user removed. The role is read afresh, so a demotion takes effect at once."""
        with self.session() as s:
            row = s.get(WebSessionRow, _token_hash(token))
            if row is None or row.created_at < time.time() - max_age_s:
                return None
            user = s.get(UserRow, row.username)
            return (user.username, user.role) if user is not None else None

    def close_session(self, token: str) -> None:
        with self.session() as s:
            row = s.get(WebSessionRow, _token_hash(token))
            if row is not None:
                s.delete(row)

    def record(self, username: str, action: str, note: str = "") -> None:
        """An entry in the audit log that concerns no alert (a login, say)."""
        with self.session() as s:
            _audit(s, username, action, note)

    def act(self, alert_id: str, action: str, username: str, note: str) -> AlertRow:
        """A reviewer's decision on an alert, written to the audit log in the same commit."""
        if action not in ACTIONS:
            raise StoreError(f"action must be one of {', '.join(ACTIONS)}")
        with self.session() as s:
            alert = s.scalar(select(AlertRow).where(AlertRow.id == alert_id))
            if alert is None:
                raise StoreError(f"no alert {alert_id!r}")
            alert.status = ACTIONS[action]
            _audit(s, username, action, note.strip()[:2000], alert_id)
        return alert

    # -- retention -----------------------------------------------------------------------------

    def expire_evidence(self, days: float, *, by: str = "retention") -> int:
        """Delete evidence images older than `days`; the alerts and the audit log stay."""
        cutoff = time.time() - days * 86400
        with self.session() as s:
            old = list(
                s.scalars(select(EvidenceRow.alert_id).where(EvidenceRow.stored_at < cutoff))
            )
            for alert_id in old:
                s.delete(s.get(EvidenceRow, alert_id))
            expired = select(ClipRow.alert_id).where(ClipRow.stored_at < cutoff)
            clips = len(list(s.scalars(expired)))
            s.execute(delete(ClipRow).where(ClipRow.stored_at < cutoff))
            _audit(
                s, by, "retention", f"deleted {len(old)} evidence images and {clips} clips older "
                f"than {days:g} days",
            )  # fmt: skip
        return len(old)


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _audit(s: Session, username: str, action: str, note: str, alert_id: str | None = None) -> None:
    """One entry in the append-only audit log, in the caller's transaction."""
    s.add(AuditRow(at=time.time(), username=username, action=action, alert_id=alert_id, note=note))


def _sqlite_pragmas(connection: Any, record: Any) -> None:
    connection.isolation_level = None  # transactions are begun by the "begin" listener
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


@dataclass
class _Parsed:
    """One envelope checked and turned into rows, ready for a bulk insert."""

    index: int
    message_id: str
    table_id: str
    seq: int
    message_row: dict[str, Any]
    alert_row: dict[str, Any] | None = None
    evidence_row: dict[str, Any] | None = None
    clip_row: dict[str, Any] | None = None
    enrolment_row: dict[str, Any] | None = None
    round_row: dict[str, Any] | None = None
    hand_rows: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, index: int, envelope: dict[str, Any], now: float) -> _Parsed:
        try:
            message_id = str(envelope["message_id"])
            table_id = str(envelope["table_id"])
            seq = int(envelope["seq"])
            kind = str(envelope["kind"])
            body = dict(envelope["body"])
        except (KeyError, TypeError, ValueError) as error:
            raise StoreError(f"not a paigow envelope: {error}") from None
        if kind not in ("alert", "round", "evidence", "enrolment"):
            raise StoreError(f"unknown message kind {kind!r}")
        parsed = cls(
            index,
            message_id,
            table_id,
            seq,
            {
                "message_id": message_id,
                "table_id": table_id,
                "seq": seq,
                "kind": kind,
                "received_at": now,
            },
        )
        try:
            if kind == "alert":
                parsed.alert_row = {
                    "id": str(body["id"]),
                    "table_id": str(body["table_id"]),
                    "round_id": str(body["round_id"]),
                    "kind": str(body["kind"]),
                    "severity": str(body["severity"]),
                    "position": body.get("position"),
                    "rules": str(body["rules"]),
                    "clause": str(body["clause"]),
                    "summary": body.get("summary"),
                    "expected": body.get("expected"),
                    "observed": body.get("observed"),
                    "confidence": float(body["confidence"]),
                    "evidence_time_s": float(body["evidence_time_s"]),
                    "received_at": now,
                    "status": "new",
                }
                jpeg = envelope.get("evidence_jpeg")
                if isinstance(jpeg, str):
                    with contextlib.suppress(binascii.Error, ValueError):
                        parsed.evidence_row = {
                            "alert_id": str(body["id"]),
                            "jpeg": base64.b64decode(jpeg),
                            "stored_at": now,
                        }
            elif kind == "enrolment":
                jpeg = envelope.get("evidence_jpeg")
                parsed.enrolment_row = {
                    "id": str(body["id"]),
                    "table_id": str(body["table_id"]),
                    "at": float(body["at"]),
                    "whole": bool(body["whole"]),
                    "accepted_by": body.get("accepted_by"),
                    "record": body,
                    "picture_jpeg": base64.b64decode(jpeg) if isinstance(jpeg, str) else None,
                    "received_at": now,
                }
            elif kind == "evidence":
                parsed.clip_row = {
                    "alert_id": str(body["alert_id"]),
                    "frame_jpeg": base64.b64decode(str(envelope.get("evidence_jpeg") or "")),
                    "clip_webm": base64.b64decode(str(envelope.get("clip_webm") or "")),
                    "evidence_time_s": float(body["evidence_time_s"]),
                    "from_s": float(body["from_s"]),
                    "to_s": float(body["to_s"]),
                    "stored_at": now,
                }
            else:
                round_id = str(body["round_id"])
                parsed.round_row = {
                    "round_id": round_id,
                    "table_id": str(body["table_id"]),
                    "rules": str(body["rules"]),
                    "banker": int(body["banker"]),
                    "complete": bool(body.get("complete", True)),
                    "dice": list(body.get("dice", [])),
                    "cut": str(body.get("cut", "")),
                    "first_position": body.get("first_position"),
                    "required_first_position": body.get("required_first_position"),
                    "received_at": now,
                    "record": body,
                }
                outcomes = body.get("outcomes", {})
                parsed.hand_rows = [
                    {
                        "round_id": round_id,
                        "position": int(position),
                        "tiles": hand["tiles"],
                        "high": hand["high"],
                        "low": hand["low"],
                        "house_way": hand.get("house_way"),
                        "outcome": outcomes.get(position),
                    }
                    for position, hand in body.get("hands", {}).items()
                ]
        except (KeyError, TypeError, ValueError) as error:
            raise StoreError(f"message {message_id}: malformed {kind}: {error}") from None
        return parsed
