"""The table box: outbox, courier, config (unit, with the in-memory transport), then against a
real Mosquitto the tests start themselves: broker restarts, `kill -9` of the box, TLS with
passwords and per-table ACLs."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
import yaml
from numpy.typing import NDArray
from prometheus_client import generate_latest

from edge.comms import Courier, MemoryTransport, MqttTransport
from edge.config import ConfigError, EdgeConfig
from edge.outbox import Outbox, OutboxError
from tests.broker import Broker, Subscriber, free_port
from vision.detections import Detections
from vision.replay import frames
from vision.table import calibrate

ROUND = Path(__file__).parent / "fixtures" / "rounds" / "nz-irregular"


def put(outbox: Outbox, n: int, topic: str = "paigow/s/t1/alert") -> list[str]:
    return [outbox.put(topic, {"n": i}, table_id="t1", kind="alert").id for i in range(n)]


# -- unit: outbox and courier ------------------------------------------------------------------


def test_outbox_keeps_order_and_numbers_across_restarts(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path / "o.sqlite")
    first = put(outbox, 3)
    outbox.ack(outbox.pending()[0].seq)
    outbox.ack(outbox.pending()[1].seq)  # acknowledged out of order: fine
    outbox.close()
    again = Outbox(tmp_path / "o.sqlite")
    later = put(again, 2)
    pending = again.pending()
    assert [m.id for m in pending] == [first[1], *later]
    assert [m.seq for m in pending] == [2, 4, 5]  # numbers are never reused
    envelope = json.loads(pending[0].payload)
    assert envelope["seq"] == 2 and envelope["table_id"] == "t1" and envelope["body"] == {"n": 1}


def test_refused_messages_are_kept_aside(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path / "o.sqlite")
    put(outbox, 2)
    outbox.refuse(1, "Not authorized")
    assert outbox.depth() == 1 and outbox.refused_count() == 1


@pytest.mark.parametrize(("window", "first_handed"), [(1, 1), (3, 3), (50, 5)])
def test_courier_keeps_a_window_and_forgets_only_what_was_acknowledged(
    tmp_path: Path, window: int, first_handed: int
) -> None:
    outbox = Outbox(tmp_path / "o.sqlite")
    put(outbox, 5)
    transport = MemoryTransport(auto_ack=False)
    courier = Courier(outbox, transport, window=window)
    assert courier.step() == first_handed
    assert courier.step() == 0 and outbox.depth() == 5  # nothing acknowledged yet
    transport.acks.put((transport.unacked.pop(0), None))
    courier.step()
    assert outbox.depth() == 4
    seqs = [json.loads(p)["seq"] for _, p, _ in transport.published]
    assert seqs == sorted(seqs)


def test_courier_holds_everything_while_disconnected(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path / "o.sqlite")
    transport = MemoryTransport(up=False)
    courier = Courier(outbox, transport)
    put(outbox, 3)
    assert courier.step() == 0 and outbox.depth() == 3
    transport.up = True
    courier.step()
    courier.step()
    assert outbox.depth() == 0 and len(transport.published) == 3


class FullDisk:
    """A fault-injecting SQLite connection: while `full`, every write fails as SQLite fails on a
    full disk; reads go through."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db, self.full = db, False

    def execute(self, sql: str, params: tuple[object, ...] = ()) -> sqlite3.Cursor:
        if self.full and not sql.lstrip().upper().startswith(("SELECT", "ROLLBACK")):
            raise sqlite3.OperationalError("database or disk is full")
        return self.db.execute(sql, params)

    def close(self) -> None:
        self.db.close()


def test_a_really_full_database_refuses_a_message_in_one_error_and_takes_it_later(
    tmp_path: Path,
) -> None:
    outbox = Outbox(tmp_path / "o.sqlite")
    put(outbox, 1)
    pages = outbox._db.execute("PRAGMA page_count").fetchone()[0]
    outbox._db.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own SQLITE_FULL
    big = {"evidence": "x" * 50_000}
    with pytest.raises(OutboxError, match="database or disk is full"):
        outbox.put("paigow/s/t1/alert", big, table_id="t1", kind="alert")
    assert outbox.depth() == 1  # nothing half-written
    outbox._db.execute("PRAGMA max_page_count = 1073741823")
    taken = outbox.put("paigow/s/t1/alert", big | {"id": "a-2"}, table_id="t1", kind="alert")
    again = outbox.put("paigow/s/t1/alert", big | {"id": "a-2"}, table_id="t1", kind="alert")
    assert taken.seq == again.seq == 2 and outbox.depth() == 2  # a retry stores it once


def test_the_courier_outlives_a_full_disk_and_catches_up_by_itself(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path / "o.sqlite")
    disk = FullDisk(outbox._db)
    outbox._db = disk  # type: ignore[assignment]
    put(outbox, 6)
    transport = MemoryTransport()
    courier = Courier(outbox, transport, window=2)
    stop = threading.Event()
    thread = threading.Thread(target=courier.run, args=(stop,), daemon=True)
    disk.full = True  # acknowledgements can no longer be deleted
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while len(transport.published) < 6 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(transport.published) == 6  # kept sending what it holds
        assert courier.store_error is not None and "full" in courier.store_error
        assert thread.is_alive() and outbox.depth() == 6
        disk.full = False  # space again
        deadline = time.monotonic() + 5
        while outbox.depth() and time.monotonic() < deadline:
            courier.wake.set()
            time.sleep(0.01)
        assert outbox.depth() == 0 and courier.store_error is None and courier.delivered == 6
        assert len(transport.published) == 6  # no resend was needed
    finally:
        stop.set()
        thread.join(5)


def test_courier_hands_over_again_when_acknowledgements_never_come(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path / "o.sqlite")
    put(outbox, 2)
    transport = MemoryTransport(auto_ack=False)
    courier = Courier(outbox, transport, resend_after=0.0)
    courier.step()
    time.sleep(0.01)
    courier.step()  # lost by the client: both handed over again, same ids
    ids = [json.loads(p)["message_id"] for _, p, _ in transport.published]
    assert len(ids) == 4 and ids[:2] == ids[2:]


# -- unit: config ------------------------------------------------------------------------------


def write_config(folder: Path, **changes: object) -> Path:
    data: dict[str, object] = {
        "table": "table.yaml",
        "camera": {"source": "round.mp4"},
        "mqtt": {"site": "s1", "port": 1883},
    }
    for key, value in changes.items():
        data[key] = value
    path = folder / "edge.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"camera": {"source": "x", "lopp": True}}, "camera.lopp: unknown setting"),
        ({"mqtt": {"site": "s1", "port": 0}}, "mqtt.port: Input should be greater than"),
        ({"mqtt": {"site": "s", "tls": {"ca_file": "ca", "cert_file": "c"}}}, "both cert_file"),
        ({"extra": 1}, "extra: unknown setting"),
        ({"mqtt": {"site": "#"}}, "mqtt.site: String should match pattern"),
        ({"mqtt": {"site": "a/b"}}, "mqtt.site: String should match pattern"),
    ],
)
def test_bad_config_is_named_in_one_line(tmp_path: Path, changes: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        EdgeConfig.load(write_config(tmp_path, **changes))


def test_environment_overrides_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAIGOW_MQTT__HOST", "broker.internal")
    monkeypatch.setenv("PAIGOW_MQTT_PASSWORD", "from-env")
    config = EdgeConfig.load(write_config(tmp_path))
    assert config.mqtt.host == "broker.internal" and config.mqtt.site == "s1"
    assert config.table == tmp_path / "table.yaml"  # paths are relative to edge.yaml
    assert config.mqtt.password() == "from-env"
    (tmp_path / "pw").write_text("from-file\n")
    changed = config.mqtt.model_copy(update={"password_file": tmp_path / "pw"})
    assert changed.password() == "from-file"
    assert "from-file" not in repr(changed) and "from-env" not in repr(config)


def test_a_user_name_other_than_site_and_table_is_refused(tmp_path: Path) -> None:
    from edge.app import EdgeApp

    config = EdgeConfig.load(edge_config(tmp_path, free_port(), username="s2/t1"))
    with pytest.raises(ConfigError, match="'s2/t1' is not 's1/t1'"):
        EdgeApp(config, transport=MemoryTransport(up=False))


# -- a real broker -----------------------------------------------------------------------------


def test_broker_restart_loses_nothing(tmp_path: Path) -> None:
    broker = Broker(tmp_path).start()
    room = Subscriber(broker.port, "paigow/#")
    outbox = Outbox(tmp_path / "outbox.sqlite")
    transport = MqttTransport(
        host="127.0.0.1", port=broker.port, client_id="edge-t1", status_topic="paigow/s/t1/status"
    )
    courier = Courier(outbox, transport)
    stop = threading.Event()
    transport.start()
    worker = threading.Thread(target=courier.run, args=(stop,), daemon=True)
    worker.start()
    produced = []
    try:
        for i in range(200):
            produced += put(outbox, 1)
            if i == 70:
                broker.stop(kill=False)  # the broker goes away mid-stream...
            if i == 140:
                broker.start()  # ...and comes back: everything queued goes out in order
            time.sleep(0.01)
        got = room.wait_for(200, timeout=30, topic_end="/alert")
        deadline = time.monotonic() + 10
        while outbox.depth() and time.monotonic() < deadline:  # the last acknowledgements
            time.sleep(0.05)
    finally:
        stop.set()
        worker.join(5)
        transport.stop()
        room.close()
        broker.stop()
    ids = [p["message_id"] for p in got]
    first_seen = list(dict.fromkeys(ids))
    assert first_seen == produced  # all of them, in the order produced
    seqs = {p["message_id"]: p["seq"] for p in got}
    assert [seqs[i] for i in first_seen] == sorted(seqs.values())
    assert outbox.depth() == 0


def table_for(folder: Path) -> Path:
    image = next(frames(ROUND / "round.mp4", 10))[2]
    path = folder / "table.yaml"
    calibrate(image, table_id="t1", rules="nz-1998", banker=1).write(path)
    return path


def edge_config(folder: Path, port: int, **mqtt: object) -> Path:
    truth = json.loads((ROUND / "truth.json").read_text())
    config = {
        "table": str(table_for(folder)),
        "camera": {"source": str(ROUND / "round.mp4"), "speed": 4.0},
        "analysis": {
            "labels": str(ROUND / "frames.json.gz"),
            "cut": truth["cut"],
            "cut_options": truth["cut_options"],
        },
        "mqtt": {"host": "127.0.0.1", "port": port, "site": "s1", **mqtt},
        "outbox": {"path": str(folder / "outbox.sqlite"), "min_free_mb": 0},
        "observability": {"metrics_port": free_port(), "health_every_s": 1.0},
    }
    path = folder / "edge.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def start_edge(config: Path) -> subprocess.Popen[str]:
    """The box as a process, its log beside the config (for a failing test to show)."""
    with (config.parent / "edge.log").open("a") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "paigow.cli", "run", "--config", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=log,
            text=True,
        )


def outbox_ids(path: Path) -> list[str]:
    if not path.exists():
        return []
    with closing(sqlite3.connect(path)) as db:
        try:
            return [row[0] for row in db.execute("SELECT id FROM outbox ORDER BY seq")]
        except sqlite3.OperationalError:  # the box is still creating it
            return []


def test_kill_9_then_restart_delivers_the_outbox(tmp_path: Path) -> None:
    broker = Broker(tmp_path)  # not started: the box must keep everything meanwhile
    config = edge_config(tmp_path, broker.port)
    edge = start_edge(config)
    try:
        deadline = time.monotonic() + 180  # a loaded CI box: the round takes longer to follow
        while time.monotonic() < deadline:
            if len(outbox_ids(tmp_path / "outbox.sqlite")) >= 3:
                break
            time.sleep(0.2)
        edge.send_signal(signal.SIGKILL)
        edge.wait(10)
        waiting = outbox_ids(tmp_path / "outbox.sqlite")
        assert len(waiting) >= 3  # two alerts and the round record, never published
        broker.start()
        room = Subscriber(broker.port, "paigow/s1/t1/#")
        edge = start_edge(config)
        deadline = time.monotonic() + 30  # the outbox's own messages, not status or health
        while True:
            got = room.wait_for(0, timeout=0)
            received = [p.get("message_id") for p in got]
            if all(i in received for i in waiting) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert all(i in received for i in waiting)
        kinds = {p["body"]["kind"] for p in got if p.get("kind") == "alert"}
        assert kinds == {"wrong-first-position", "house-way-violation"}
        alert = next(p for p in got if p.get("kind") == "alert")
        assert len(alert["evidence_jpeg"]) > 1000  # the evidence crop travels with it
        metrics = (
            urllib.request.urlopen(
                f"http://127.0.0.1:{yaml.safe_load(config.read_text())['observability']['metrics_port']}/metrics",
                timeout=5,
            )
            .read()
            .decode()
        )
        assert "paigow_frames_analysed_total" in metrics and "paigow_outbox_depth" in metrics
        room.close()
    finally:
        edge.terminate()
        edge.wait(10)
        broker.stop()
    assert edge.returncode == 0


# -- TLS, passwords, ACLs ----------------------------------------------------------------------


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def secure_broker(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("tls")
    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        cwd=folder,
    )
    openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        cwd=folder,
    )
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.ext",
        "-out",
        "server.crt",
        cwd=folder,
    )
    passwd = folder / "passwd"
    for user, password in (("s1/t1", "secret-1"), ("s1/t2", "secret-2"), ("room", "room-pw")):
        subprocess.run(
            [
                "mosquitto_passwd",
                "-b",
                *(["-c"] if not passwd.exists() else []),
                str(passwd),
                user,
                password,
            ],
            check=True,
            capture_output=True,
        )
    (folder / "acl").write_text(
        (Path(__file__).parents[1] / "deploy" / "mosquitto" / "acl").read_text()
    )
    extra = (
        f"allow_anonymous false\npassword_file {passwd}\nacl_file {folder / 'acl'}\n"
        f"cafile {folder / 'ca.crt'}\ncertfile {folder / 'server.crt'}\n"
        f"keyfile {folder / 'server.key'}\n"
    )
    broker = Broker(folder, extra).start()
    yield broker, folder
    broker.stop()


def test_a_table_may_publish_only_under_its_own_topics(secure_broker) -> None:  # type: ignore[no-untyped-def]
    broker, folder = secure_broker
    room = Subscriber(
        broker.port,
        "paigow/#",
        client_id="room-acl",
        username="room",
        password="room-pw",
        ca=str(folder / "ca.crt"),
    )
    transport = MqttTransport(
        host="127.0.0.1",
        port=broker.port,
        client_id="edge-t1-tls",
        status_topic="paigow/s1/t1/status",
        username="s1/t1",
        password="secret-1",
        ca_file=str(folder / "ca.crt"),
    )
    transport.start()
    try:
        assert transport.wait_connected(10)
        own = transport.publish("paigow/s1/t1/alert", b'{"own": true}')
        others = [  # another table; this table under another site; a topic no box writes
            transport.publish(topic, b'{"other": true}')
            for topic in ("paigow/s1/t2/alert", "paigow/s2/t1/alert", "paigow/s1/t1/alert/x")
        ]
        acks = dict(transport.acks.get(timeout=10) for _ in range(5))  # status, own, others
        assert acks[own] is None
        for other in others:
            assert acks[other] is not None and "authori" in acks[other].lower()
        got = room.wait_for(1, timeout=5, topic_end="/alert")
        assert {json.dumps(p) for p in got} == {'{"own": true}'}
    finally:
        transport.stop()
        room.close()


def test_a_wrong_password_is_a_clear_error(secure_broker, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    broker, folder = secure_broker
    (tmp_path / "pw").write_text("not-the-password\n")
    config = edge_config(
        tmp_path,
        broker.port,
        username="s1/t1",
        password_file=str(tmp_path / "pw"),
        tls={"ca_file": str(folder / "ca.crt")},
    )
    run = subprocess.run(
        [sys.executable, "-m", "paigow.cli", "run", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 2
    last = run.stderr.strip().splitlines()[-1]
    assert "refused this box's login as 's1/t1'" in last and "check mqtt.username" in last
    assert "Traceback" not in run.stderr and "not-the-password" not in run.stderr


def test_no_plain_connection_to_the_tls_listener(secure_broker) -> None:  # type: ignore[no-untyped-def]
    broker, _ = secure_broker
    transport = MqttTransport(
        host="127.0.0.1",
        port=broker.port,
        client_id="plain",
        status_topic="paigow/s1/t1/status",
        username="s1/t1",
        password="secret-1",
    )
    transport.start()
    try:
        assert not transport.wait_connected(2)
    finally:
        transport.client.loop_stop()
    assert os.environ.get("PAIGOW_MQTT_PASSWORD") is None


def test_a_full_disk_is_an_alarm_holds_messages_and_resumes_by_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import edge.app
    from vision.follow.records import Alert

    config = EdgeConfig.load(edge_config(tmp_path, free_port()))
    starved = config.model_copy(
        update={"outbox": config.outbox.model_copy(update={"min_free_mb": 1e12})}
    )
    app = edge.app.EdgeApp(starved, transport=MemoryTransport(up=False))
    assert "disk-low" in app.health().alarms
    alerts = [
        Alert(
            kind="foreign-tile",
            severity="critical",
            table_id="t1",
            round_id="r1",
            rules="nz-1998",
            clause="3.3(a)",
            confidence=0.9,
            evidence_time_s=1.0,
            raised_time_s=1.2,
        ).model_dump(mode="json")
        for _ in range(3)
    ]
    disk = FullDisk(app.outbox._db)
    app.outbox._db = disk  # type: ignore[assignment]
    disk.full = True
    monkeypatch.setattr(edge.app, "HELD_IN_MEMORY", 2)
    for alert in alerts:
        app._store("alert", alert, app.topics["alert"], None)
    assert len(app.unstored) == 2 and app.dropped == 1  # held in memory up to the bound
    report = app.health()
    assert {"outbox-unwritable", "messages-dropped"} <= set(report.alarms)
    metrics = generate_latest(app.metrics.registry).decode()
    assert "paigow_outbox_writable 0.0" in metrics
    assert "paigow_messages_dropped_total 1.0" in metrics
    disk.full = False
    app._store_held()  # what the analysis loop does every frame
    assert not app.unstored and app.outbox.depth() == 2
    assert "outbox-unwritable" not in app.health().alarms
    assert "paigow_outbox_writable 1.0" in generate_latest(app.metrics.registry).decode()


def test_a_camera_that_cannot_be_opened_is_reported_lost_and_retried() -> None:
    from edge.app import Camera

    camera = Camera("rtsp://127.0.0.1:9/none", loop=False, backoff_cap=0.2)
    stop = threading.Event()
    worker = threading.Thread(target=camera.run, args=(stop,), daemon=True)
    worker.start()
    deadline = time.monotonic() + 20
    while camera.state != "lost" and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    worker.join(20)
    assert camera.state == "lost" and camera.latest(timeout=0.01) is None


def test_analysis_takes_the_newest_frame(tmp_path: Path) -> None:
    from edge.app import Camera

    camera = Camera(str(ROUND / "round.mp4"), loop=False, backoff_cap=1.0, speed=20.0)
    stop = threading.Event()
    worker = threading.Thread(target=camera.run, args=(stop,), daemon=True)
    worker.start()
    deadline = time.monotonic() + 20  # frames keep coming while nobody takes them
    while camera.frames_read <= 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    read_so_far = camera.frames_read
    frame = camera.latest(timeout=5)
    stop.set()
    worker.join(10)
    assert frame is not None and read_so_far > 5
    assert frame.video_s >= (read_so_far - 2) / 10  # the newest, not the first one read


def test_the_camera_makes_images_of_due_frames_only() -> None:
    """A 10 frames a second file analysed at 10/3 a second: only every third frame becomes an
    image (the others are decoded and passed over), at the times the analysis wants."""
    from edge.app import Camera

    camera = Camera(str(ROUND / "round.mp4"), loop=False, backoff_cap=1.0, speed=10.0, every_s=0.3)
    stop = threading.Event()
    worker = threading.Thread(target=camera.run, args=(stop,), daemon=True)
    worker.start()
    taken = []
    while camera.state != "ended" or camera._fresh.is_set():
        frame = camera.latest(timeout=0.5)
        if frame is not None:
            taken.append(frame.video_s)
    stop.set()
    worker.join(10)
    assert len(taken) > 40 and camera.frames_read == 268  # every frame decoded
    assert all(abs(t / 0.3 - round(t / 0.3)) < 1e-3 for t in taken), taken  # due ones only


class ShiftedModels:
    """Models whose runtime misplaces every box by half a tile: a reader of pixels, not labels."""

    def __init__(self) -> None:
        from vision.replay import ModelSource

        self.models = ModelSource()

    def scan(self, image: NDArray[np.uint8]) -> None:
        return None

    def detections(
        self, index: int, t: float, image: NDArray[np.uint8], scanned: object = None
    ) -> Detections:
        found = self.models.detections(index, t, image)
        return dataclasses.replace(found, corners=np.add(found.corners, [12.0, 0.0]))


@pytest.mark.parametrize(
    ("source", "alarmed"), [(None, False), (ShiftedModels, True)], ids=["shipped", "shifted"]
)
def test_models_that_misread_known_frames_are_an_alarm(
    tmp_path: Path, source: type[ShiftedModels] | None, alarmed: bool
) -> None:
    """The shipped models, marker and chips models included, are checked on this machine's CPU
    and runtime, as the box checks them at start; the box with labels (a demo) is not checked."""
    from edge.app import EdgeApp

    with_labels = EdgeConfig.load(edge_config(tmp_path, free_port()))
    assert EdgeApp(with_labels, transport=MemoryTransport(up=False)).models_check is None
    with_models = with_labels.model_copy(
        update={"analysis": with_labels.analysis.model_copy(update={"labels": None})}
    )
    app = EdgeApp(
        with_models, transport=MemoryTransport(up=False), source=source() if source else None
    )
    assert app.models_check is not None
    assert app.models_check.passed is not alarmed, str(app.models_check)
    assert ("models-misread" in app.health_alarms()) is alarmed
    if source is None:  # the shipped marker and chips models are checked too
        assert app.models_check.markers_read == app.models_check.markers > 0
        assert app.models_check.chips_found == app.models_check.chips > 0


@pytest.mark.parametrize(
    ("analysed", "now", "since", "slow"),
    [
        ([], 5.0, 0.0, False),  # under a whole window watched: not yet said
        ([], 20.0, None, False),  # not watching
        ([10.5 + 0.1 * k for k in range(95)], 20.0, 0.0, False),  # 95 of 100 due
        ([10.5 + 0.2 * k for k in range(48)], 20.0, 0.0, True),  # 5 frames a second
        ([0.1 * k for k in range(100)], 20.0, 0.0, True),  # all of them too long ago
    ],
)
def test_analysis_that_cannot_keep_its_rate_is_an_alarm(
    analysed: list[float], now: float, since: float | None, slow: bool
) -> None:
    from edge.app import analysis_slow

    assert analysis_slow(analysed, now, 10.0, since) is slow


def test_the_box_takes_the_pits_word_for_the_next_round(tmp_path: Path) -> None:
    """Announcements on the command topic reach the follower (NZ round: a player/banker's own
    hand is not held to the house way); malformed ones are counted and change nothing."""
    from edge.app import EdgeApp

    config = EdgeConfig.load(edge_config(tmp_path, free_port()))
    # played at the tests' usual 4x: at 20x a busy core dropped the frames a tile showed in
    config = config.model_copy(update={
        "analysis": config.analysis.model_copy(update={"cut": None, "cut_options": {}}),
    })  # fmt: skip
    transport = MemoryTransport()
    app = EdgeApp(config, transport=transport)
    for payload in (
        b'{"by": "pit-1", "bank": "player", "cut": "yat-dong-dong", '
        b'"cut_options": {"side": "left"}}',
        b'{"by": "pit-1", "cut": "no-such-cut"}',
        b'{"by": "pit-1", "cut_options": {"side": "left"}}',
        b"not json",
    ):
        transport.commands.put(payload)
    app.run(handle_signals=False)
    sent = [(topic, json.loads(payload)) for topic, payload, _ in transport.published]
    record = next(m["body"] for topic, m in sent if topic.endswith("/round"))
    assert (record["bank"], record["cut"], record["cut_known"]) == (
        "player", "yat-dong-dong", "announced"
    )  # fmt: skip
    kinds = {m["body"]["kind"] for topic, m in sent if topic.endswith("/alert")}
    assert kinds == {"wrong-first-position"}  # the bank's hand was the player/banker's to set
    metrics = generate_latest(app.metrics.registry).decode()
    assert 'paigow_announcements_total{outcome="taken"} 1.0' in metrics
    assert 'paigow_announcements_total{outcome="refused"} 3.0' in metrics
