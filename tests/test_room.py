"""The surveillance room: the incident store, ingest over a real Mosquitto (shared subscription,
duplicates, gaps), the shift report, retention, and the review UI in a real headless Chromium."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from html import escape as html_escape
from pathlib import Path

import cv2
import httpx
import numpy as np
import pytest
import sqlalchemy
import uvicorn
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

from room.ingest import Ingest, check_envelope
from room.report import chi2_sf, dice_fairness, write_report
from room.shift import shift_messages, simulate_shift
from room.store import (
    Base,
    MissingRunRow,
    Store,
    StoreError,
    TableHealthRow,
    table_condition,
)
from room.web import create_app
from rules import CATALOGUE
from tests.broker import Broker, free_port, publisher
from tests.postgres import Postgres
from vision.follow.records import Alert
from vision.synth.round import INJECTABLE


def alert_envelope(
    seq: int,
    table: str = "t1",
    kind: str = "house-way-violation",
    message_id: str | None = None,
    confidence: float = 0.9,
) -> dict:  # type: ignore[type-arg]
    alert_id = message_id or str(uuid.uuid4())
    return {
        "message_id": alert_id,
        "seq": seq,
        "table_id": table,
        "kind": "alert",
        "produced_at": 0.0,
        "body": {
            "id": alert_id,
            "kind": kind,
            "severity": "high",
            "table_id": table,
            "round_id": f"{table}:r1",
            "position": 1,
            "rules": "nz-1998",
            "clause": "App. 4 2.2",
            "expected": "1-4 2-3 / 1-3 5-5",
            "observed": "1-3 1-4 / 5-5 2-3",
            "confidence": confidence,
            "evidence_time_s": 16.3,
            "raised_time_s": 16.6,
        },
    }


@pytest.fixture(scope="module")
def postgres():  # type: ignore[no-untyped-def]
    server = Postgres()
    url = server.start()
    yield url
    server.stop()


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    store = Store.open(f"sqlite:///{tmp_path / 'room.sqlite'}")
    yield store
    store.engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The same store code on the embedded SQLite and on a real PostgreSQL."""
    if request.param == "sqlite":
        store = Store.open(f"sqlite:///{tmp_path / 'room.sqlite'}")
        yield store
        store.engine.dispose()
        return
    url = request.getfixturevalue("postgres")
    store = Store.open(url)
    with store.engine.begin() as connection:  # a clean slate for each test
        connection.execute(sqlalchemy.text("ALTER TABLE audit DISABLE TRIGGER audit_no_change"))
        every_table = ", ".join(table.name for table in Base.metadata.sorted_tables)
        connection.execute(sqlalchemy.text(f"TRUNCATE {every_table}"))
        connection.execute(sqlalchemy.text("ALTER TABLE audit ENABLE TRIGGER audit_no_change"))
    yield store
    store.engine.dispose()


def test_ingest_is_idempotent_and_notices_gaps(any_store: Store) -> None:
    store = any_store
    first = alert_envelope(1)
    assert store.ingest(first).stored
    assert not store.ingest(first).stored  # a redelivery
    assert store.ingest(alert_envelope(5)).gap == (2, 4)
    store.ingest(alert_envelope(3))  # late, from another worker: not missing after all
    assert store.raise_gaps(60) == []  # still within the grace period
    assert store.raise_gaps(60, now=time.time() + 61) == [("t1", 2, 2), ("t1", 4, 4)]
    assert store.raise_gaps(0, now=time.time() + 61) == []  # raised once
    kinds = sorted(a.kind for a in store.alerts())
    assert kinds == ["house-way-violation"] * 3 + ["sequence-gap"] * 2
    with pytest.raises(StoreError, match="not a paigow envelope"):
        store.ingest({"hello": 1})


def test_a_huge_sequence_jump_costs_one_row_and_late_numbers_split_it(any_store: Store) -> None:
    store = any_store
    store.ingest(alert_envelope(1))
    started = time.perf_counter()
    assert store.ingest(alert_envelope(300_001)).gap == (2, 300_000)
    assert time.perf_counter() - started < 2.0  # one run, not 300,000 rows (was 6 s)
    assert store.count(MissingRunRow) == 1
    store.ingest(alert_envelope(1_000))  # late: the run splits around it
    store.ingest(alert_envelope(2))  # late, at the run's start
    assert store.count(MissingRunRow) == 2
    later = time.time() + 61
    assert store.raise_gaps(60, now=later) == [("t1", 3, 999), ("t1", 1_001, 300_000)]


def test_the_migrations_build_exactly_the_models_tables(store: Store) -> None:
    """A model changed without its migration (a column, an index) would exist in tests that
    build from the models and be missing from every real store, built by the migrations."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from room.store import Base

    with store.engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []


def test_missing_numbers_of_an_older_store_become_runs(tmp_path: Path) -> None:
    """A store written before missing numbers were kept as runs (migration 0005) keeps them."""
    from alembic import command
    from alembic.config import Config as AlembicConfig

    from room.store import MIGRATIONS

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    engine = sqlalchemy.create_engine(url)
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0004")
        rows = [("t1", 2, 0), ("t1", 3, 0), ("t1", 4, 0), ("t1", 7, 0), ("t1", 8, 1), ("t2", 5, 0)]
        connection.execute(
            sqlalchemy.text("INSERT INTO missing (table_id, seq, noticed_at, raised) "
                            "VALUES (:t, :s, 0, :r)"),
            [{"t": t, "s": s, "r": r} for t, s, r in rows],
        )  # fmt: skip
    engine.dispose()
    store = Store.open(url)
    with store.session() as s:
        query = sqlalchemy.select(MissingRunRow).order_by(
            MissingRunRow.table_id, MissingRunRow.first
        )
        runs = [(r.table_id, r.first, r.last, r.raised) for r in s.scalars(query)]
    assert runs == [("t1", 2, 4, False), ("t1", 7, 7, False), ("t1", 8, 8, True),
                    ("t2", 5, 5, False)]  # fmt: skip


def test_the_least_sure_alerts_can_come_first(any_store: Store) -> None:
    for seq, sure in enumerate((0.95, 0.52, 1.0, 0.8), start=1):
        any_store.ingest(alert_envelope(seq, message_id=f"a{seq}", confidence=sure))
    assert [a.id for a in any_store.alerts()] == ["a4", "a3", "a2", "a1"]
    assert [a.id for a in any_store.alerts(least_sure_first=True)] == ["a2", "a4", "a1", "a3"]


def test_the_audit_log_is_append_only(any_store: Store) -> None:
    store = any_store
    store.ingest(alert_envelope(1, message_id="a1"))
    store.add_user("ann", "password-1", "reviewer")
    store.act("a1", "acknowledge", "ann", "seen it")
    assert store.alert("a1").status == "acknowledged"
    for statement in ("UPDATE audit SET note = 'x'", "DELETE FROM audit"):
        with (
            pytest.raises(sqlalchemy.exc.DatabaseError, match="append-only"),
            store.engine.begin() as connection,
        ):
            connection.execute(sqlalchemy.text(statement))
    assert [e.action for e in store.audit("a1")] == ["acknowledge"]


@pytest.mark.parametrize(
    ("role", "password", "error"),
    [
        ("boss", "password-1", "role must be one of"),
        ("viewer", "short", "at least 8"),
    ],
)
def test_users_are_checked(store: Store, role: str, password: str, error: str) -> None:
    with pytest.raises(StoreError, match=error):
        store.add_user("x", password, role)


def test_passwords_are_hashed(any_store: Store) -> None:
    store = any_store
    store.add_user("ann", "password-1", "viewer")
    with store.engine.connect() as connection:
        stored = connection.execute(sqlalchemy.text("SELECT password_hash FROM users")).scalar()
    assert stored.startswith("$argon2") and "password-1" not in stored
    assert store.check_login("ann", "password-1") == "viewer"
    assert store.check_login("ann", "wrong") is None and store.check_login("bob", "x") is None


def test_retention_deletes_old_evidence_only(any_store: Store) -> None:
    store = any_store
    envelope = alert_envelope(1, message_id="a1") | {"evidence_jpeg": "/9j/2wBD"}
    store.ingest_many([envelope], at=time.time() - 40 * 86400)
    store.ingest(alert_envelope(2, message_id="a2") | {"evidence_jpeg": "/9j/2wBD"})
    assert store.expire_evidence(30) == 1
    assert store.evidence("a1") is None and store.evidence("a2") is not None
    assert store.alert("a1").kind == "house-way-violation"  # the incident itself stays


@pytest.mark.parametrize(
    ("x", "k", "p"),
    [
        (3.841, 1, 0.05),
        (5.991, 2, 0.05),
        (15.507, 8, 0.05),
        (22.362, 13, 0.05),
        (30.578, 15, 0.01),
        (0.0, 4, 1.0),
    ],
)
def test_chi_square_tail(x: float, k: int, p: float) -> None:
    assert chi2_sf(x, k) == pytest.approx(p, abs=2e-4)


def test_dice_fairness_pools_and_counts_degrees_of_freedom_as_pearson_does() -> None:
    """A worked example. 216 throws, one of each outcome of three dice, expect 1, 3, 6, 10, 15,
    21, 25, 27, 27, 25, 21, 15, 10, 6, 3, 1 of totals 3..18. Pooling neighbours until a bin
    expects at least 5 (the usual rule for Pearson's test) gives 3-5 (10), 6 .. 15 alone and
    16-18 (10: the 17-18 rest, 4, joins the last bin): 12 bins, 11 degrees of freedom (bins less
    one: the fair distribution has no fitted parameter). Ten throws moved from 10 to 11 give a
    statistic of 10^2/27 + 10^2/27 = 200/27; a chi-square table's 11-d.f. row puts 6.989 at an
    upper tail of 0.80 and 7.584 at 0.75, so the p-value lies between."""
    import itertools

    totals = [sum(d) for d in itertools.product(range(1, 7), repeat=3)]
    moved = totals.copy()
    for _ in range(10):
        moved[moved.index(10)] = 11
    test = dice_fairness(moved)
    assert test is not None
    labels = [label for label, _, _ in test.bins]
    assert labels == ["3-5", *map(str, range(6, 16)), "16-18"]
    assert [e for _, _, e in test.bins] == pytest.approx(
        [10, 10, 15, 21, 25, 27, 27, 25, 21, 15, 10, 10]
    )
    assert test.dof == 11
    assert test.statistic == pytest.approx(200 / 27)
    assert 0.75 < test.p_value < 0.80


def test_dice_fairness_tells_fair_from_loaded() -> None:
    import itertools

    fair = [sum(d) for d in itertools.product(range(1, 7), repeat=3)] * 3
    assert dice_fairness(fair).p_value > 0.99  # type: ignore[union-attr]
    loaded = fair + [18] * 40 + [17] * 40
    assert dice_fairness(loaded).p_value < 1e-6  # type: ignore[union-attr]
    assert dice_fairness([10, 11]) is None


def test_the_shift_report_renders(any_store: Store, tmp_path: Path) -> None:
    store = any_store
    start = time.time() - 3600
    simulate_shift(store, tables=3, rounds=20, start=start)
    store.ingest(alert_envelope(1, table="t9", message_id="unsure", confidence=0.6))
    html, pdf, picture = write_report(store, start - 60, time.time() + 60, None, tmp_path / "r")
    text = html.read_text()
    assert "Rounds played: 60" in text and "chi-square" in text
    unsure = sum(a.confidence < 0.85 for a in store.alerts(limit=10_000))
    assert unsure >= 1  # the simulated shift's spread and the one added above
    assert f"Alerts less than 85% sure (look twice): {unsure}, {unsure} not yet reviewed" in text
    assert pdf.read_bytes().startswith(b"%PDF") and picture.stat().st_size > 20_000
    # every incident listed with what happened and its decision; each table's line
    store.act("unsure", "dismiss", "rita", "a shadow, not a tile")
    html, pdf, _ = write_report(store, start - 60, time.time() + 60, None, tmp_path / "r2")
    text = html.read_text()
    alerts = store.alerts(limit=10_000)
    incidents = text.split('id="report-incidents"')[1].split("</table>")[0]
    assert incidents.count("<tr><td>") == len(alerts)
    assert all(html_escape(a.summary or a.observed or "") in incidents for a in alerts)
    assert "rita: a shadow, not a tile" in incidents
    tables = text.split('id="report-tables"')[1].split("</table>")[0]
    assert tables.count("<tr><td>") == 4  # the three simulated tables and t9
    assert "yat-dong-dong x" in tables or "x20" in tables  # the cuts dealt, counted
    assert pdf.read_bytes().count(b"/Type /Page\n") + pdf.read_bytes().count(b"/Type /Page ") >= 3


def test_review_serves_https_itself_with_a_secure_cookie(tmp_path: Path) -> None:
    """`paigow review --tls-cert --tls-key`: TLS without a proxy; the cookie is `Secure` and
    browsers are told to keep to HTTPS."""
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", "key.pem", "-out", "cert.pem"],
        cwd=tmp_path, check=True, capture_output=True,
    )  # fmt: skip
    store = Store.open(f"sqlite:///{tmp_path / 'room.sqlite'}")
    store.add_user("ann", "ann-password-1", "reviewer")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "paigow.cli", "review", "--store", str(tmp_path / "room.sqlite"),
         "--port", str(port), "--tls-cert", str(tmp_path / "cert.pem"),
         "--tls-key", str(tmp_path / "key.pem")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        trust = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))
        with httpx.Client(verify=trust, base_url=f"https://127.0.0.1:{port}") as web:
            deadline = time.monotonic() + 20
            while True:
                try:
                    page = web.get("/login")
                    break
                except httpx.ConnectError:
                    assert time.monotonic() < deadline and server.poll() is None
                    time.sleep(0.2)
            assert page.status_code == 200
            assert "max-age" in page.headers["strict-transport-security"]
            token = re.search(r'name="csrf" value="([^"]+)"', page.text)
            form = {"username": "ann", "password": "ann-password-1"}
            if token:
                form["csrf"] = token.group(1)
            login = web.post("/login", data=form)
            assert login.status_code == 303 and "login" not in login.headers["location"]
            cookie = login.headers.get("set-cookie", "")
            assert "secure" in cookie.lower() and "httponly" in cookie.lower(), cookie
        with pytest.raises(httpx.HTTPError):  # no plain HTTP on the TLS port
            httpx.get(f"http://127.0.0.1:{port}/login", timeout=5)
    finally:
        server.terminate()
        server.wait(10)


def test_cli_report_and_retention_errors(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "paigow.cli", *args],
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp_path,
        )

    bad = run("report", "--from", "yesterday", "--to", "2026-11-22")
    assert bad.returncode == 2 and "write times as" in bad.stderr
    backwards = run("report", "--from", "2026-11-22", "--to", "2026-11-21")
    assert backwards.returncode == 2 and "after" in backwards.stderr
    Store.open(f"sqlite:///{tmp_path / 'paigow-room.sqlite'}")
    done = run("retention", "--days", "30", "--json")
    assert done.returncode == 0 and json.loads(done.stdout) == {"deleted": 0}


def test_shared_ingest_stores_each_message_once(store: Store, tmp_path: Path) -> None:
    broker = Broker(tmp_path).start()
    stop = threading.Event()
    workers = [
        Ingest(store, host="127.0.0.1", port=broker.port, client_id=f"ingest-{k}", gap_grace_s=1.0)
        for k in range(2)
    ]
    threads = [threading.Thread(target=w.run, args=(stop,), daemon=True) for w in workers]
    for thread in threads:
        thread.start()
    for worker in workers:
        assert worker.ready.wait(10)
    sender = publisher(broker.port, "tables")
    sent = 0
    try:
        for table in ("t1", "t2", "t3"):
            messages = shift_messages(table, "mbs-2020", 20, seed=len(table) + ord(table[1]))
            for message in messages:
                if message["seq"] == 7 and table == "t2":
                    continue  # lost on the way: a gap the room must notice
                for _ in range(2 if message["seq"] % 5 == 0 else 1):  # some redelivered
                    sender.publish(
                        f"paigow/s1/{table}/{message['kind']}", json.dumps(message), qos=1
                    ).wait_for_publish(5)
                sent += 1
        deadline = time.monotonic() + 20
        while sum(w.stats.stored for w in workers) < sent and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(2.5)  # past the gap grace period
    finally:
        stop.set()
        for thread in threads:
            thread.join(5)
        sender.loop_stop()
        broker.stop()
    stored = sum(w.stats.stored for w in workers)
    assert stored == sent  # every message once, duplicates dropped
    assert sum(w.stats.duplicates for w in workers) > 0
    assert all(w.stats.stored > 0 for w in workers)  # the shared subscription split the load
    gaps = [a for a in store.alerts() if a.kind == "sequence-gap"]
    assert [(g.table_id, g.observed) for g in gaps] == [("t2", "message 7 never arrived")]


def health(table: str, at: float, alarms: list[str] | None = None, camera: str = "ok",
           enrolment: str | None = "e1") -> dict:  # type: ignore[type-arg]  # fmt: skip
    """A box's health report as `edge.messages.Health` writes it."""
    return {"table_id": table, "at": at, "camera": camera, "broker_connected": True,
            "outbox_depth": 0, "free_mb": 900.0, "analysis_fps": 10.0,
            "alarms": alarms or [], "enrolment": enrolment}  # fmt: skip


@pytest.mark.parametrize(
    ("state", "heard", "alarms", "level", "text"),
    [
        ("online", 95.0, [], "ok", "camera ok, 10.0 frames/s"),
        (
            "online",
            95.0,
            None,
            "warning",
            "camera ok, 10.0 frames/s; no accepted enrolment of its tiles",
        ),
        ("online", None, [], "ok", "online, no health report yet"),
        ("online", 95.0, ["camera-lost"], "alarm", "camera-lost"),
        ("online", 50.0, [], "silent", "silent for 50 s"),
        (None, None, [], "silent", "never reported"),
        ("offline", 95.0, ["camera-lost"], "offline", "offline: the box left the broker"),
    ],
    ids=[
        "reporting",
        "not enrolled",
        "no report yet",
        "an alarm",
        "silent",
        "never heard",
        "its last will",
    ],
)
def test_a_tables_condition_is_its_worst_news(
    state: str | None, heard: float | None, alarms: list[str] | None, level: str, text: str
) -> None:
    row = TableHealthRow(table_id="t1", state=state, state_at=(heard or 95.0) if state else None,
                         received_at=heard, camera="ok", analysis_fps=10.0, alarms=alarms or [],
                         enrolment=None if alarms is None else "e1")  # fmt: skip
    condition = table_condition(row, now=100.0)
    assert (condition.level, condition.text) == (level, text)


def test_each_table_keeps_its_newest_health_report(any_store: Store) -> None:
    any_store.note_health("s1", health("t1", 100.0), now=100.5)
    any_store.note_health("s1", health("t1", 90.0, ["disk-low"]), now=101.0)  # late, older
    any_store.note_health("s1", health("t2", 100.0, ["camera-lost"], "lost"), now=100.5)
    any_store.note_status("s1", "t3", "offline", now=100.0)
    found = {c.table_id: c.level for c in any_store.table_conditions(now=105.0)}
    assert found == {"t1": "ok", "t2": "alarm", "t3": "offline"}
    assert [c.table_id for c in any_store.table_conditions(now=105.0)] == ["t3", "t2", "t1"]
    assert {c.level for c in any_store.table_conditions(now=200.0)} == {"offline", "silent"}


def found(store: Store) -> dict[str, tuple[str, str]]:
    return {c.table_id: (c.level, c.text) for c in store.table_conditions()}


def test_ingest_keeps_each_boxs_status_and_health(store: Store, tmp_path: Path) -> None:
    """The status is retained and published before the room starts; a malformed report is
    dropped and counted, not a stop."""
    broker = Broker(tmp_path).start()
    sender = publisher(broker.port, "boxes")
    stop = threading.Event()
    worker = Ingest(store, host="127.0.0.1", port=broker.port)
    thread = threading.Thread(target=worker.run, args=(stop,), daemon=True)
    try:
        for table, state in (("t1", "online"), ("t3", "offline")):
            sender.publish(f"paigow/s1/{table}/status", json.dumps({"state": state}), qos=1,
                           retain=True).wait_for_publish(5)  # fmt: skip
        thread.start()
        assert worker.ready.wait(10)
        now = time.time()
        for table, report in (("t1", health("t1", now, ["camera-lost"], "lost")),
                              ("t2", {"table_id": "t2", "at": "soon"})):  # fmt: skip
            sender.publish(f"paigow/s1/{table}/health", json.dumps(report), qos=1).wait_for_publish(
                5
            )
        expected = {"t1": ("alarm", "camera-lost"),
                    "t3": ("offline", "offline: the box left the broker")}  # fmt: skip
        deadline = time.monotonic() + 20
        while worker.stats.rejected < 1 or found(store) != expected:
            assert time.monotonic() < deadline, found(store)
            time.sleep(0.1)
    finally:
        stop.set()
        thread.join(5)
        sender.loop_stop()
        broker.stop()
    assert worker.stats.rejected == 1


# -- the review UI in a real browser -----------------------------------------------------------


@pytest.fixture
def server(store: Store):  # type: ignore[no-untyped-def]
    store.add_user("rita", "reviewer-pw", "reviewer")
    store.add_user("vince", "viewer-pw1", "viewer")
    store.ingest(alert_envelope(1, message_id="old-alert"))
    app = create_app(store, "test-secret-" + "x" * 20, poll_s=0.2, tables_every_s=0.2,
                     secure_cookie=False)  # fmt: skip
    with serving(app) as url:
        yield url


@contextlib.contextmanager
def serving(app):  # type: ignore[no-untyped-def]
    """The app served by uvicorn on a free loopback port, as `paigow review` serves it."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(5)


@pytest.fixture
def browser():  # type: ignore[no-untyped-def]
    """Headless Chromium, its scratch files (profile lock sockets, left in /tmp after every
    run otherwise) in a folder removed afterwards."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    with tempfile.TemporaryDirectory(prefix="chromium-") as scratch:
        service = Service("/usr/bin/chromedriver", env={**os.environ, "TMPDIR": scratch})
        driver = webdriver.Chrome(options=options, service=service)
        driver.implicitly_wait(2)
        yield driver
        driver.quit()


def click_through(browser, element) -> None:  # type: ignore[no-untyped-def]
    """Click what leads to another page and wait until the old page is gone: a wait that starts
    on the old page can find an element there and read it as the browser swaps documents, which
    Chromium answers with an error rather than a stale element."""
    element.click()
    WebDriverWait(browser, 10, ignored_exceptions=(WebDriverException,)).until(
        expected_conditions.staleness_of(element)
    )


def log_in(browser, url: str, name: str, password: str) -> None:  # type: ignore[no-untyped-def]
    browser.get(url + "/")
    browser.find_element(By.ID, "username").send_keys(name)
    browser.find_element(By.ID, "password").send_keys(password)
    click_through(browser, browser.find_element(By.ID, "login"))
    WebDriverWait(browser, 10).until(
        expected_conditions.presence_of_element_located((By.ID, "board"))
    )


def test_reviewer_sees_a_new_alert_live_and_acknowledges_it(server, browser, store: Store) -> None:  # type: ignore[no-untyped-def]
    log_in(browser, server, "rita", "reviewer-pw")
    WebDriverWait(browser, 10).until(
        expected_conditions.text_to_be_present_in_element((By.ID, "live"), "live")
    )
    store.ingest(alert_envelope(2, table="pgt-07", kind="foreign-tile", message_id="new-alert",
                                confidence=0.75))  # fmt: skip
    link = WebDriverWait(browser, 10).until(
        expected_conditions.element_to_be_clickable((By.LINK_TEXT, "foreign-tile"))
    )
    fresh = browser.find_element(By.CSS_SELECTOR, "#board tbody tr")
    assert fresh.find_element(By.CSS_SELECTOR, ".confidence").text == "75%"
    click_through(browser, link)  # arrived without a reload
    WebDriverWait(browser, 10).until(
        expected_conditions.presence_of_element_located((By.ID, "audit"))  # the page's end
    )
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.tile")) == 8  # both hands drawn
    # a box that sent no sentence: what the kind means, at the box it names
    summary = browser.find_element(By.ID, "summary").text
    assert summary.startswith("Box ") and "face seen more often" in summary
    browser.find_element(By.ID, "note").send_keys("third 5-5 seen, pit boss called")
    click_through(browser, browser.find_element(By.ID, "acknowledge"))
    WebDriverWait(browser, 10).until(
        expected_conditions.text_to_be_present_in_element((By.ID, "status"), "acknowledged")
    )
    assert "pit boss called" in browser.find_element(By.ID, "audit").text
    browser.get(server + "/audit")
    log = browser.find_element(By.ID, "audit-log").text
    assert "rita acknowledge" in log and "pit boss called" in log
    assert store.alert("new-alert").status == "acknowledged"


def test_the_board_shows_each_tables_health_live(server, browser, store: Store) -> None:  # type: ignore[no-untyped-def]
    log_in(browser, server, "vince", "viewer-pw1")
    time.sleep(0.5)  # two refreshes of an empty list
    assert browser.find_element(By.ID, "tables").text == "no table has reported yet"
    store.note_health("s1", health("pgt-07", time.time()))
    store.note_health("s1", health("pgt-09", time.time(), ["camera-lost"], "lost"))
    WebDriverWait(browser, 10).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "#tables .table-alarm"))
    )
    shown = browser.execute_script(  # at once: the list is redrawn five times a second
        "return [...document.querySelectorAll('#tables li')]"
        ".map(li => [li.className, li.textContent])"
    )
    assert shown == [["table-alarm", "pgt-09 camera-lost"],
                     ["table-ok", "pgt-07 camera ok, 10.0 frames/s"]]  # fmt: skip
    assert httpx.get(server + "/tables").status_code == 401  # not without logging in


def enrolment_envelope(seq: int, table: str, enrolment_id: str, by: str | None) -> dict:  # type: ignore[type-arg]
    """`paigow enrol`'s message as the box's outbox sends it (`edge.messages.Enrolment`)."""
    _, jpeg = cv2.imencode(".jpg", np.full((40, 60, 3), 200, np.uint8))
    return {
        "message_id": enrolment_id, "seq": seq, "table_id": table, "kind": "enrolment",
        "produced_at": 0.0, "evidence_jpeg": base64.b64encode(jpeg.tobytes()).decode(),
        "body": {"id": enrolment_id, "table_id": table, "at": 1_790_000_000.0 + seq,
                 "whole": by is not None, "in_order": True, "accepted_by": by,
                 "problems": [] if by else ["31 tiles face up, a set has 32"],
                 "tiles": [{"place": 1, "face": "6-6", "read": "6-6", "sure": 0.99}],
                 "dice": ["die-1", "die-2", "die-3"]},
    }  # fmt: skip


def test_enrolments_are_kept_and_a_table_without_one_is_a_warning(any_store: Store) -> None:
    refused_at_the_table = json.dumps(enrolment_envelope(1, "t1", "e0", None)).encode()
    check_envelope("paigow/s1/t1/enrolment", refused_at_the_table, 0.0)  # the room takes it
    any_store.ingest(enrolment_envelope(1, "t1", "e0", None))  # refused at the table: kept too
    any_store.ingest(enrolment_envelope(2, "t1", "e1", "ann"))
    assert [(e.id, e.whole, e.accepted_by) for e in any_store.enrolments("t1")] == [
        ("e1", True, "ann"), ("e0", False, None)]  # fmt: skip
    assert any_store.enrolment_picture("e1")[:2] == b"\xff\xd8"  # type: ignore[index]
    any_store.note_health("s1", health("t1", 100.0, enrolment="e1"), now=100.5)
    any_store.note_health("s1", health("t2", 100.0, enrolment=None), now=100.5)
    found = {c.table_id: c for c in any_store.table_conditions(now=105.0)}
    assert (found["t1"].level, found["t2"].level) == ("ok", "warning")
    assert found["t1"].enrolled.startswith("enrolled ") and found["t1"].enrolled.endswith(" by ann")
    assert found["t2"].text.endswith("no accepted enrolment of its tiles")
    assert [c.table_id for c in any_store.table_conditions(now=105.0)] == ["t2", "t1"]


def test_the_board_links_each_tables_enrolment_picture(server, browser, store: Store) -> None:  # type: ignore[no-untyped-def]
    store.ingest(enrolment_envelope(1, "pgt-07", "e7", "ann"))
    store.note_health("s1", health("pgt-07", time.time(), enrolment="e7"))
    store.note_health("s1", health("pgt-09", time.time(), enrolment=None))
    log_in(browser, server, "vince", "viewer-pw1")
    WebDriverWait(browser, 10).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "#tables a.enrolled"))
    )
    link_text, link_href, warned = browser.execute_script(  # at once: the list is redrawn
        "const link = document.querySelector('#tables a.enrolled');"
        "return [link.textContent, link.href,"
        " document.querySelector('#tables .table-warning').textContent]"
    )
    assert link_text.endswith("by ann") and link_href.endswith("/enrolments/e7.jpg")
    assert warned.startswith("pgt-09") and "no accepted enrolment" in warned
    browser.get(server + "/enrolments/e7.jpg")
    width = browser.execute_script("return document.images[0] && document.images[0].naturalWidth")
    assert width == 60
    assert httpx.get(server + "/enrolments/e7.jpg").status_code == 303  # to the login page first


def test_a_reviewer_takes_the_least_sure_incidents_first(server, browser, store: Store) -> None:  # type: ignore[no-untyped-def]
    store.ingest(alert_envelope(2, kind="wrong-cut-order", message_id="unsure", confidence=0.52))
    store.ingest(alert_envelope(3, kind="foreign-tile", message_id="sure", confidence=1.0))
    log_in(browser, server, "rita", "reviewer-pw")
    browser.get(server + "/incidents")
    rows = browser.find_elements(By.CSS_SELECTOR, "#incidents tbody tr")
    assert [r.find_element(By.CSS_SELECTOR, ".confidence").text for r in rows] == [
        "100%", "52%", "90%"
    ]  # fmt: skip
    Select(browser.find_element(By.ID, "order")).select_by_visible_text("least sure first")
    click_through(browser, browser.find_element(By.CSS_SELECTOR, "form.card button"))
    WebDriverWait(browser, 10).until(expected_conditions.url_contains("order=least-sure"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#incidents tbody tr a")
    assert [r.text for r in rows] == ["wrong-cut-order", "house-way-violation", "foreign-tile"]


def test_a_viewer_cannot_acknowledge(server, browser) -> None:  # type: ignore[no-untyped-def]
    log_in(browser, server, "vince", "viewer-pw1")
    browser.get(server + "/incidents/old-alert")
    assert browser.find_element(By.ID, "read-only")
    assert not browser.find_elements(By.ID, "acknowledge")
    with httpx.Client(base_url=server) as client:  # the same, without the browser's help
        page = client.get("/login").text
        token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        client.post("/login", data={"username": "vince", "password": "viewer-pw1", "csrf": token})
        refused = client.post(
            "/incidents/old-alert/act", data={"action": "acknowledge", "note": "", "csrf": token}
        )
        assert refused.status_code == 403
        forged = client.post(
            "/incidents/old-alert/act", data={"action": "dismiss", "note": "", "csrf": "forged"}
        )
        assert forged.status_code == 403


@pytest.mark.parametrize(
    ("token", "acted"),
    [("forged", False), ("", False), ("the session's", True)],
    ids=["forged", "empty", "real"],
)
def test_a_reviewer_who_may_act_is_refused_without_the_form_token(
    server: str, store: Store, token: str, acted: bool
) -> None:
    """A reviewer may act, so only the CSRF check stands between a forged form and the
    incident: a forged or empty token is refused and changes nothing, the real one acts."""
    with httpx.Client(base_url=server) as client:
        page = client.get("/login").text
        real = re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        client.post("/login", data={"username": "rita", "password": "reviewer-pw", "csrf": real})
        page = client.get("/incidents/old-alert").text  # a new session, a new token, on login
        real = re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        sent = real if token == "the session's" else token
        answer = client.post(
            "/incidents/old-alert/act", data={"action": "escalate", "note": "", "csrf": sent}
        )
    assert answer.status_code == 303 if acted else answer.status_code in (403, 422)
    status = {a.id: a.status for a in store.alerts(limit=10)}["old-alert"]
    assert (status == "escalated") == acted


def test_a_login_form_without_its_token_is_refused(server: str) -> None:
    with httpx.Client(base_url=server) as client:
        client.get("/login")
        answer = client.post(
            "/login", data={"username": "rita", "password": "reviewer-pw", "csrf": "forged"}
        )
        assert answer.status_code == 403
        assert client.get("/incidents", follow_redirects=False).status_code == 303  # not in


def logged_in(client: httpx.Client, username: str, password: str, next: str = "/") -> str:
    """Log in over plain HTTP; the CSRF token of the new session."""
    page = client.get("/login").text
    token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    client.post("/login", data={"username": username, "password": password, "csrf": token,
                                "next": next})  # fmt: skip
    page = client.get("/incidents").text
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("target", "goes_to"),
    [
        ("/incidents?day=2026-11-26", "/incidents?day=2026-11-26"),
        ("//evil.example/", "/"),
        ("/\\evil.example/", "/"),
        ("https://evil.example/", "/"),
        ("evil.example", "/"),
        ("/%0d%0aSet-Cookie:x", "/%0d%0aSet-Cookie:x"),
    ],
)
def test_after_login_the_user_stays_on_this_site(server: str, target: str, goes_to: str) -> None:
    with httpx.Client(base_url=server) as client:
        page = client.get("/login").text
        token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        answer = client.post("/login", data={"username": "rita", "password": "reviewer-pw",
                                             "csrf": token, "next": target})  # fmt: skip
    assert answer.status_code == 303 and answer.headers["location"] == goes_to


def test_a_cookie_copied_before_logout_is_worth_nothing_after(server: str) -> None:
    with httpx.Client(base_url=server) as client:
        token = logged_in(client, "rita", "reviewer-pw")
        copied = dict(client.cookies)
        assert client.get("/audit").status_code == 200
        client.post("/logout", data={"csrf": token})
    with httpx.Client(base_url=server, cookies=copied) as thief:
        assert thief.get("/audit", follow_redirects=False).status_code == 303  # to the login
        assert thief.get("/events").status_code == 401


def test_a_demoted_user_loses_the_old_role_at_once(server: str, store: Store) -> None:
    with httpx.Client(base_url=server) as client:
        logged_in(client, "rita", "reviewer-pw")
        assert client.get("/audit").status_code == 200
        store.add_user("rita", "reviewer-pw", "viewer", by="admin")  # also ends her sessions
        assert client.get("/audit", follow_redirects=False).status_code == 303
        logged_in(client, "rita", "reviewer-pw")
        assert client.get("/audit").status_code == 403  # a viewer now


def test_password_guessing_is_refused_after_a_few_tries(server: str, store: Store) -> None:
    from room.web import FAILED_LOGINS_ALLOWED

    with httpx.Client(base_url=server) as client:
        page = client.get("/login").text
        token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        answers = [
            client.post(
                "/login", data={"username": "rita", "password": f"guess-{n}", "csrf": token}
            ).status_code
            for n in range(FAILED_LOGINS_ALLOWED + 3)
        ]
        right = client.post("/login", data={"username": "rita", "password": "reviewer-pw",
                                            "csrf": token})  # fmt: skip
        assert right.status_code == 429  # even the right password waits out the lock
        other = client.post("/login", data={"username": "vince", "password": "viewer-pw1",
                                            "csrf": token})  # fmt: skip
        assert other.status_code == 303  # another user is not locked out
    assert answers == [303] * FAILED_LOGINS_ALLOWED + [429] * 3
    failed = [e for e in store.audit(limit=50) if e.action == "login-failed"]
    assert len(failed) == FAILED_LOGINS_ALLOWED  # refused tries write nothing more
    assert all(e.note == "from 127.0.0.1" for e in failed)
    locked = [e for e in store.audit(limit=50) if e.action == "login-locked"]
    assert [(e.username, e.note) for e in locked] == [("rita", "this user, from 127.0.0.1")]


def test_one_address_guessing_many_names_is_refused(server: str, store: Store) -> None:
    from room.web import ADDRESS_FAILED_LOGINS_ALLOWED, FAILED_LOGINS_ALLOWED

    with httpx.Client(base_url=server) as client:
        page = client.get("/login").text
        token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]

        def attempt(username: str, password: str) -> int:
            data = {"username": username, "password": password, "csrf": token}
            return client.post("/login", data=data).status_code

        names = [f"user-{n}" for n in range(ADDRESS_FAILED_LOGINS_ALLOWED)]
        assert FAILED_LOGINS_ALLOWED > 1  # so no single name is locked below
        answers = [attempt(name, "guess") for name in names]
        assert answers == [303] * ADDRESS_FAILED_LOGINS_ALLOWED
        assert attempt("vince", "viewer-pw1") == 429  # a right password, but from this address
    locked = [e for e in store.audit(limit=100) if e.action == "login-locked"]
    assert [e.note for e in locked] == ["address 127.0.0.1"]


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/incidents?day=9999-12-31&shift=night", 400),
        ("/incidents?day=0001-01-01", 400),
        ("/incidents?day=26-11-2026", 400),
        (f"/events?after={10**30}", 422),
        ("/events?after=-1", 422),
        ("/openapi.json", 404),
        ("/docs", 404),
    ],
)
def test_bad_requests_get_a_clear_refusal(server: str, path: str, status: int) -> None:
    with httpx.Client(base_url=server) as client:
        logged_in(client, "rita", "reviewer-pw")
        assert client.get(path).status_code == status


def test_pages_carry_security_headers_and_an_https_only_cookie(store: Store) -> None:
    store.add_user("rita", "reviewer-pw", "reviewer")
    app = create_app(store, "test-secret-" + "x" * 20)  # as `paigow review` serves it
    with serving(app) as url, httpx.Client(base_url=url) as client:
        page = client.get("/login")  # the session (its CSRF token) starts here
        token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        answer = client.post("/login", data={"username": "rita", "password": "reviewer-pw",
                                             "csrf": token})  # fmt: skip
    assert answer.status_code == 403  # over plain HTTP the cookie never came back
    cookie = page.headers["set-cookie"].lower()
    assert "secure" in cookie and "httponly" in cookie and "samesite=strict" in cookie
    for name in ("content-security-policy", "x-frame-options", "x-content-type-options",
                 "strict-transport-security"):  # fmt: skip
        assert name in page.headers, name
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]


def test_logged_out_users_are_refused(server, browser) -> None:  # type: ignore[no-untyped-def]
    browser.get(server + "/incidents/old-alert")
    assert "/login" in browser.current_url and browser.find_element(By.ID, "login")
    with httpx.Client(base_url=server) as client:
        assert client.get("/events").status_code == 401
        assert client.get("/evidence/old-alert.jpg").status_code == 401
        assert client.get("/incidents", follow_redirects=False).status_code == 303
    log_in(browser, server, "rita", "reviewer-pw")
    click_through(browser, browser.find_element(By.ID, "logout"))
    browser.get(server + "/incidents")
    assert "/login" in browser.current_url


def test_demo_runs_end_to_end_without_serving(
    tmp_path: Path, demo_round_folders: list[Path]
) -> None:
    """The demo as the README runs it, on rounds the module has rendered once (the demo keeps
    its rendered rounds, so this is its second run)."""
    rendered = demo_round_folders[-1].parent
    shutil.copytree(rendered, tmp_path / "demo" / "rounds")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "paigow.cli",
            "demo",
            "--no-serve",
            "--speed",
            "25",
            "--dir",
            str(tmp_path / "demo"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "demo-1: wrong-first-position" in run.stdout
    assert "demo-1: house-way-violation" in run.stdout
    store = Store.open(f"sqlite:///{tmp_path / 'demo' / 'room.sqlite'}")
    demo_alerts = store.alerts(table="demo-1")
    assert {a.kind for a in demo_alerts} == {"wrong-first-position", "house-way-violation"}
    assert all(store.evidence(a.id) for a in demo_alerts)
    assert all(a.summary and a.summary.startswith(("Box ", "The first group")) for a in demo_alerts)
    for alert in demo_alerts:  # each round's record stored, the clean one's too
        assert store.round(alert.round_id) is not None
    tables = [f"demo-{k}" for k in range(1, 6)]
    assert set(tables) <= {c.table_id for c in store.table_conditions()}
    assert all(len(store.rounds(table=table)) == 1 for table in tables)
    raised = {a.kind for table in tables for a in store.alerts(table=table)}
    assert raised == {kind.value for kind in CATALOGUE}  # every kind, each with its clip
    assert all(store.clip(str(a.id)) for table in tables for a in store.alerts(table=table))
    assert not store.alerts(table="demo-2")  # the clean round stays clean
    assert (tmp_path / "demo" / "report" / "report.pdf").exists()
    conditions = {c.table_id: c for c in store.table_conditions()}
    for table in tables:  # each table's set enrolled and accepted, the board says by whom
        (enrolled,) = store.enrolments(table)
        assert enrolled.whole and enrolled.accepted_by == "supervisor"
        assert conditions[table].enrolment == enrolled.id
        assert conditions[table].enrolled.endswith("by supervisor")


def test_a_conflicting_message_does_not_stop_its_batch(store: Store) -> None:
    store.ingest(alert_envelope(1, message_id="a1"))
    clash = alert_envelope(2, message_id="m2")
    clash["body"]["id"] = "a1"  # a new message claiming an alert id already stored
    results = store.ingest_many(
        [alert_envelope(3, message_id="a3"), clash, alert_envelope(4, message_id="a4")]
    )
    assert isinstance(results[1], StoreError) and "conflicts" in str(results[1])
    assert [getattr(r, "stored", None) for r in (results[0], results[2])] == [True, True]
    assert {a.id for a in store.alerts()} == {"a1", "a3", "a4"}


@pytest.mark.parametrize(
    ("text", "tiles", "boxes", "dice", "backs"),
    [
        ("1-3 1-4 / 5-5 2-3", 4, 0, 0, 0),  # a setting: both hands drawn
        ("position 8 first (dice 3 5 6)", 0, 1, 3, 0),
        ("box 3: 3 tiles, box 7: 5 tiles", 0, 2, 0, 8),  # each hand's size as its backs
        ("3 x 6-6", 1, 0, 0, 0),
        ("3 tiles", 0, 0, 0, 3),
        ("2 dice", 0, 0, 2, 0),
        ("die 1 not flat", 0, 0, 1, 0),
        ("a face-up tile (4-4) on the table", 1, 0, 0, 0),
        ("32 tiles", 0, 0, 0, 0),  # a whole set is a number, not 32 drawings
        ("position 9 first", 0, 0, 0, 0),  # no such box: left as words
        ("7-1 <script>", 0, 0, 0, 0),  # not a tile; escaped
    ],
)
def test_expected_and_observed_are_drawn(
    text: str, tiles: int, boxes: int, dice: int, backs: int
) -> None:
    from room.tiles import facts_html

    html = facts_html(text)
    assert html.count('class="tile"') == tiles
    assert html.count('class="box"') == boxes
    assert html.count('class="die"') == dice
    assert html.count('class="back"') == backs
    assert "<script>" not in html


def test_every_simulated_alert_is_worded_as_the_box_words_it() -> None:
    """The demo's simulated shift: a sentence for every kind, expected and observed in words
    (never a Python dict), each box it names a box of the table."""
    messages = shift_messages("pgt-01", "nz-1998", 400, seed=5, irregular=1.0)
    alerts = [m["body"] for m in messages if m["kind"] == "alert"]
    assert {a["kind"] for a in alerts} == {kind.value for kind in INJECTABLE}
    for alert in alerts:
        assert alert["summary"].endswith(".") and not alert["summary"][0].islower()
        for field in ("expected", "observed", "summary"):
            assert "{" not in alert[field] and "[" not in alert[field], alert
        assert Alert.model_validate(alert).position in (None, *range(1, 9))


@pytest.fixture(scope="module")
def demo_round_folders(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    from room.demo import demo_rounds

    return demo_rounds(tmp_path_factory.mktemp("demo"), lambda line: None)


def test_each_demo_incident_has_its_sentence_tiles_and_a_playable_clip(
    store: Store, browser, demo_round_folders: list[Path]
) -> None:  # type: ignore[no-untyped-def]
    """The demo's five tables followed into the store as the demo follows them (labels for
    the models): an incident of every kind in the catalogue says what happened, draws what it
    names, quotes its clauses and plays the seconds around it in Chromium (the video element
    reports a duration)."""
    from edge.messages import Health
    from room.demo import DEMO_SITE, follow_round
    from rules.clauses import split_refs

    store.add_user("rita", "reviewer-pw", "reviewer")
    for k, folder in enumerate(demo_round_folders):
        follow_round(folder, store, 100.0, f"demo-{k + 1}", lambda line: None)
    reported = {c.table_id: c.text for c in store.table_conditions(silent_after_s=float("inf"))}
    assert all("camera ok" in reported[f"demo-{k}"] for k in range(1, 6)), reported
    # their boxes go on reporting while the board is read (on a busy machine the first table
    # was followed more than SILENT_AFTER_S before it)
    for table_id in reported:
        store.note_status(DEMO_SITE, table_id, "online")
        store.note_health(DEMO_SITE, Health(
            table_id=table_id, at=time.time(), camera="ok", broker_connected=True,
            outbox_depth=0, free_mb=0.0, analysis_fps=10.0).model_dump())  # fmt: skip
    first_of_kind = {a.kind: a for a in reversed(store.alerts())}
    assert set(first_of_kind) == {kind.value for kind in CATALOGUE}
    app = create_app(store, "test-secret-" + "x" * 20, secure_cookie=False)
    with serving(app) as url:
        log_in(browser, url, "rita", "reviewer-pw")
        browser.get(url + "/")  # the live board: every demo table's status and health
        shown = dict(
            browser.execute_script(  # at once: the list is redrawn five times a second
                "return [...document.querySelectorAll('#tables li[data-table]')]"
                ".map(li => [li.dataset.table, li.textContent])"
            )
        )
        assert all("camera ok" in shown.get(f"demo-{k}", "") for k in range(1, 6)), shown
        for alert in first_of_kind.values():
            browser.get(f"{url}/incidents/{alert.id}")
            assert browser.find_element(By.ID, "summary").text == alert.summary
            drawn = browser.find_elements(
                By.CSS_SELECTOR, "#expected svg, #expected .box, #observed svg, #observed .box"
            )
            assert drawn, alert.kind  # the tiles, dice or boxes it names
            if alert.kind == "off-box-played":  # the round's line names the box out of play
                bank = browser.find_element(By.ID, "bank").text
                assert f"Box {alert.position} out of play" in bank, bank
            if alert.kind == "wrong-cut-order":  # one incident: the round names every box
                line = browser.find_element(By.ID, "round-line").text
                assert "dealt out of its order to box" in line and str(alert.position) in line
            quoted = browser.find_elements(By.CSS_SELECTOR, "#clauses dd")
            assert len(quoted) >= len(split_refs(alert.clause)) > 0 or not split_refs(
                alert.clause
            ), alert.kind
            duration = WebDriverWait(browser, 10).until(
                lambda b: b.execute_script(
                    "const v = document.getElementById('clip');"
                    "return v.readyState >= 1 && v.duration > 0 ? v.duration : null;"
                )
            )
            clip = store.clip(str(alert.id))
            assert clip is not None and clip.from_s <= alert.evidence_time_s <= clip.to_s
            assert abs(duration - (clip.to_s - clip.from_s)) < 1.0
            frame = browser.find_element(By.ID, "frame")
            width = WebDriverWait(browser, 10).until(
                lambda b: b.execute_script("return arguments[0].naturalWidth || null", frame)  # noqa: B023
            )
            assert width == 960  # the whole frame, not a crop
        click_through(
            browser, browser.find_element(By.ID, "report-link")
        )  # the shift report, from the UI
        title = WebDriverWait(browser, 30).until(
            expected_conditions.presence_of_element_located((By.ID, "report-title"))
        )
        assert title.text.startswith("Shift report")
        listed = browser.find_element(By.ID, "report-incidents").text
        assert all(str(a.summary) in listed for a in first_of_kind.values())


def test_a_shift_without_a_day_is_todays() -> None:
    from room.web import shift_window

    since, until = shift_window("", "night")
    today = dt.datetime.combine(dt.date.today(), dt.time())
    assert since == (today + dt.timedelta(hours=22)).timestamp()
    assert until == (today + dt.timedelta(hours=30)).timestamp()
    assert shift_window("", "") == (None, None)  # no filter at all


MBS_CHECKABLE = ("yat-dong-dong", "cup-say", "chee-yee", "dai-pin", "jung-quat", "foot-say",
                 "tower", "china-bank", "gum-un-que", "pong-jun")  # fmt: skip


@pytest.mark.parametrize(
    ("cuts", "random"),
    [
        (["cup-say", "dai-pin", "tower", "foot-say"] * 15, False),  # only four of ten
        (["yat-dong-dong"] * 40, False),
        ([c for c in MBS_CHECKABLE for _ in range(3)], True),  # every cut alike: random
    ],
)
def test_a_shifts_cuts_are_tested_for_a_random_draw(cuts: list[str], random: bool) -> None:
    from room.report import SIGNIFICANCE, cut_randomness

    test = cut_randomness(cuts, MBS_CHECKABLE)
    assert test is not None and test.throws == len(cuts)
    assert (test.p_value >= SIGNIFICANCE) is random
    assert cut_randomness(["no-such-cut"] * 50 + ["tower"] * 5, MBS_CHECKABLE) is None  # too few


def test_the_report_says_per_table_where_the_bank_was_and_whether_cuts_look_random(
    store: Store,
) -> None:
    from room.report import gather, report_body

    simulate_shift(store, tables=4, rounds=40, start=1_000_000.0)  # one table per rule book
    shift = gather(store, 0, 2e9, None)
    by_table = {t.table_id: t for t in shift.tables}
    mbs = next(t for t in shift.tables if t.cut_drawn)
    assert sum(1 for t in shift.tables if t.cut_drawn) == 1  # MBS 3.9 only
    assert mbs.cut_test is not None and mbs.cut_test.p_value >= 0.01  # the sim draws at random
    assert all(sum(t.bankers.values()) == t.rounds for t in by_table.values())
    body = report_body(shift, [])
    assert "looks random" in body and "not drawn at random under this rule book" in body
    for line in by_table.values():  # players bank at their boxes now and then (the sim's draw)
        box, times = line.bankers.most_common(1)[0]
        assert f"box {box} x{times}" in body and len(line.bankers) > 1
