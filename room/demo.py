"""`paigow demo`: the whole product on one machine with nothing configured.

A simulated earlier shift fills the incident store; the review UI starts; then five tables play
a round each at once, followed as a table box would (calibrated from their first frame, round
follower, alerts with evidence clips), and their alerts arrive on the live board. Two rounds are
the bundled test fixtures; three more are rendered into the demo's folder on its first run, so
that every kind of alert is raised by some table and has its clip. With `--broker` the rounds go
through the real path instead: each box's outbox and MQTT, then `paigow ingest`.

The shipped detector is still below its accuracy targets (docs/detector.md), so the demo reads
the fixture rounds' simulator labels in place of the models; everything after detection is
real.
"""

from __future__ import annotations

import base64
import json
import secrets
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import uvicorn
from numpy.typing import NDArray

from edge.app import EdgeApp
from edge.clips import ClipMaker, ClipSettings, Evidence, evidence_body
from edge.config import EdgeConfig
from edge.enrolments import record_of
from edge.messages import Envelope, Health
from room.ingest import Ingest
from room.report import write_report
from room.shift import simulate_shift
from room.store import Store
from room.web import create_app
from vision.follow import Raised, RoundFollower
from vision.follow.records import Alert, RoundRecord
from vision.replay import LabelSource, frames
from vision.table import calibrate

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "rounds"
USERS = {"viewer": "demo-viewer", "reviewer": "demo-reviewer", "admin": "demo-admin"}


@dataclass(frozen=True)
class RenderedRound:
    """A round the demo renders once (a few seconds each) rather than ship as a fixture."""

    name: str
    seed: int
    rules: str
    irregularities: tuple[str, ...]


RENDERED = (
    RenderedRound("act-irregular", 101, "act-2005",
                  ("wrong-dice-count", "exposed-tile-stacking", "foreign-tile", "wrong-hand-size")),
    RenderedRound("rws-irregular", 102, "rws-2018",
                  ("dice-not-flat", "exposed-tile-dealing", "missing-tile")),
    RenderedRound("mbs-irregular", 103, "mbs-2020",
                  ("wrong-cut-order", "hands-swapped", "off-box-played")),
)  # fmt: skip
"""With the fixtures' wrong-first-position and house-way-violation, every kind in the catalogue;
kinds that would blur each other (a tile moved between boxes and hands exchanged) in different
rounds."""
RENDERED_SIZE = (960, 540)
"""Half the fixtures' pixels: a round renders in about 4 s on a 2-core box."""


def demo_rounds(folder: Path, say: Callable[[str], None]) -> list[Path]:
    """The rounds the demo's tables play, in table order (demo-1, demo-2, ...)."""
    from vision.synth.round import simulate_round  # the demo, like its shift, is simulated

    rounds = [FIXTURES / "nz-irregular", FIXTURES / "mbs-clean"]
    for spec in RENDERED:
        out = folder / "rounds" / spec.name
        if not out.is_dir():
            say(f"  rendering {spec.name} (first run only)")
            part = out.with_name(spec.name + ".part")  # a render cut short is started again
            shutil.rmtree(part, ignore_errors=True)
            simulate_round(part, spec.seed, spec.rules, list(spec.irregularities),
                           resolution=RENDERED_SIZE, progress=False)  # fmt: skip
            part.rename(out)
        rounds.append(out)
    return rounds


def prepare(folder: Path) -> Store:
    folder.mkdir(parents=True, exist_ok=True)
    store = Store.open(f"sqlite:///{folder / 'room.sqlite'}")
    for role, password in USERS.items():
        store.add_user(role, password, role, by="demo")
    if store.count_rounds() == 0:
        simulate_shift(store, tables=8, rounds=30, start=time.time() - 8 * 3600)
    return store


DISPLAY_SEED = 2
"""The opening display each demo table's set is enrolled from: a house-look display the
shipped detector boxes tile by tile (`docs/enrolment.md`)."""
DEMO_SUPERVISOR = "supervisor"


def enrol_tables(store: Store, table_ids: list[str], say: Callable[[str], None]) -> dict[str, str]:
    """Each table's set enrolled from a simulated opening display and accepted, as `paigow enrol
    --accept` would send it; the enrolment id of each table."""
    from vision.detector import Detector, Reader
    from vision.enrol import enrol, picture
    from vision.synth.display import render_display

    _, rendering, _ = render_display(DISPLAY_SEED, "house", "rows")
    seen = enrol(rendering.image, Detector(), Reader())
    ok, jpeg = cv2.imencode(".jpg", picture(rendering.image, seen))
    ids = {}
    for table_id in table_ids:
        record = record_of(seen, table_id=table_id, at=time.time())
        record = record.model_copy(update={"accepted_by": DEMO_SUPERVISOR if seen.whole else None})
        message = Envelope(
            message_id=record.id, seq=store.last_seq(table_id) + 1, table_id=table_id,
            kind="enrolment", produced_at=time.time(), body=record.model_dump(mode="json"),
            evidence_jpeg=base64.b64encode(jpeg.tobytes()).decode() if ok else None,
        ).model_dump(mode="json")  # fmt: skip
        store.ingest(message)
        if seen.whole:
            ids[table_id] = record.id
    say(f"  each table's tiles enrolled from its opening display: {seen.summary()}")
    return ids


DEMO_SITE = "demo"
HEALTH_EVERY_S = 5.0
"""The demo's tables report their health as often as a box would (`observability.health_every_s`
is 10 s by default; the demo is short)."""


def follow_round(
    folder: Path,
    store: Store,
    speed: float,
    table_id: str,
    say: Callable[[str], None],
    lock: threading.Lock | None = None,
    enrolment: str | None = None,
) -> int:
    """Follow one simulated round into the store, paced at `speed` x real time. Tables
    followed side by side share `lock` for their writes; `enrolment` is the one the table's
    health names."""
    lock = lock or threading.Lock()
    truth = json.loads((folder / "truth.json").read_text())
    first = next(frames(folder / "round.mp4", 10))[2]
    table = calibrate(first, table_id=table_id, rules=truth["rules"], banker=truth["banker"])
    follower = RoundFollower(
        table, run=f"demo{int(time.time())}", cut=truth["cut"], cut_options=truth["cut_options"]
    )
    source = LabelSource(folder / "frames.json.gz")
    with lock:
        seq = store.last_seq(table_id)
        store.note_status(DEMO_SITE, table_id, "online")
    raised_count = 0
    started = time.monotonic()
    reported, analysed, last_t = -HEALTH_EVERY_S, 0, 0.0
    clips = ClipMaker(ClipSettings(), fps=10.0, image_width=first.shape[1])

    def keep(raised: list[Raised]) -> None:
        nonlocal seq, raised_count
        for item in raised:
            seq += 1
            raised_count += 1
            with lock:
                store.ingest(envelope(item.record, seq, table_id, item.evidence))
            if isinstance(item.record, Alert):
                clips.want(item.record, item.zone)
                say(f"  {table_id}: {item.record.kind}: {item.record.summary}")

    def send(made: list[Evidence]) -> None:
        nonlocal seq
        for evidence in made:  # as the box's outbox would publish it
            seq += 1
            still, clip = evidence.encoded()
            message = Envelope(
                message_id=f"{evidence.alert_id}:evidence", seq=seq, table_id=table_id,
                kind="evidence", produced_at=time.time(), body=evidence_body(evidence, table_id),
                evidence_jpeg=still, clip_webm=clip,
            ).model_dump(mode="json")  # fmt: skip
            with lock:
                store.ingest(message)

    for index, t, image, _ in frames(folder / "round.mp4", 10):
        time.sleep(max(0.0, started + t / speed - time.monotonic()))
        detections = source.detections(index, t, image)
        clips.add(t, image, detections)
        keep(follower.follow(t, detections, image))
        send([clips.make(job) for job in clips.due(t)])
        analysed, last_t = analysed + 1, t
        now = time.monotonic()
        if now - reported >= HEALTH_EVERY_S:  # what the box's health report would say
            reported = now
            fps = round(analysed / max(now - started, 1e-3), 1)
            report = Health(table_id=table_id, at=time.time(), camera="ok", broker_connected=True,
                            outbox_depth=0, free_mb=0.0, analysis_fps=fps,
                            enrolment=enrolment)  # fmt: skip
            with lock:
                store.note_health(DEMO_SITE, report.model_dump())
    keep(follower.finish(last_t))  # the round record, clean rounds' too
    send([clips.make(job) for job in clips.flush()])
    return raised_count


def envelope(
    record: Alert | RoundRecord, seq: int, table_id: str, evidence: NDArray[np.uint8] | None
) -> dict[str, Any]:
    """What the table box would publish for this record (`edge.messages.Envelope`)."""
    jpeg = None
    if evidence is not None and evidence.size:
        ok, data = cv2.imencode(".jpg", evidence)
        jpeg = base64.b64encode(data.tobytes()).decode() if ok else None
    if isinstance(record, Alert):
        message_id, kind = str(record.id), "alert"
    else:
        message_id, kind = f"{record.round_id}:record", "round"
    return Envelope(
        message_id=message_id,
        seq=seq,
        table_id=table_id,
        kind=kind,
        produced_at=time.time(),
        body=record.model_dump(mode="json"),
        evidence_jpeg=jpeg,
    ).model_dump(mode="json")


def through_broker(
    folder: Path, store: Store, host: str, port: int, speed: float, say: Callable[[str], None]
) -> None:
    """Each fixture round through its own box (outbox, MQTT) and one ingest worker."""
    stop = threading.Event()
    ingest = Ingest(
        store,
        host=host,
        port=port,
        client_id=f"demo-ingest-{secrets.token_hex(3)}",
        persistent=False,
    )
    worker = threading.Thread(target=ingest.run, args=(stop,), daemon=True)
    worker.start()
    ingest.ready.wait(10)
    boxes = []
    for k, round_folder in enumerate(demo_rounds(folder, say)):
        truth = json.loads((round_folder / "truth.json").read_text())
        first = next(frames(round_folder / "round.mp4", 10))[2]
        table_id = f"demo-{k + 1}"
        box = folder / table_id
        box.mkdir(exist_ok=True)
        calibrate(first, table_id=table_id, rules=truth["rules"], banker=truth["banker"]).write(
            box / "table.yaml"
        )
        config = EdgeConfig.model_validate(
            {
                "table": box / "table.yaml",
                "camera": {"source": str(round_folder / "round.mp4"), "speed": speed},
                "analysis": {
                    "labels": round_folder / "frames.json.gz",
                    "cut": truth["cut"],
                    "cut_options": truth["cut_options"],
                },
                "mqtt": {"host": host, "port": port, "site": DEMO_SITE},
                "outbox": {"path": box / "outbox.sqlite", "min_free_mb": 0},
                "observability": {"metrics_port": 0, "log_format": "text"},
            }
        )
        app = EdgeApp(config)
        thread = threading.Thread(target=app.run, kwargs={"handle_signals": False}, daemon=True)
        thread.start()
        boxes.append(thread)
        say(f"  box {table_id} replaying {round_folder.name} through mqtt://{host}:{port}")
    for thread in boxes:
        thread.join()
    time.sleep(2.0)
    stop.set()
    worker.join(5)
    say(f"  ingest stored {ingest.stats.stored} messages ({ingest.stats.duplicates} duplicates)")


def run_demo(
    folder: Path,
    *,
    port: int,
    broker: tuple[str, int] | None,
    speed: float,
    serve: bool,
    say: Callable[[str], None] = print,
) -> Store:
    store = prepare(folder)
    server = None
    if serve:
        app = create_app(store, secrets.token_urlsafe(32), secure_cookie=False)  # loopback
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        )
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        say(f"Review UI: http://127.0.0.1:{port}/")
        say("Log in as " + ", ".join(f"{u} / {p}" for u, p in USERS.items()))
    say("Five tables play a round each (simulator labels stand in for the detector):")
    if broker is None:
        lock = threading.Lock()
        rounds = demo_rounds(folder, say)
        names = [f"demo-{k + 1}" for k in range(len(rounds))]
        enrolled = enrol_tables(store, names, say)
        tables = [
            threading.Thread(
                target=follow_round,
                args=(round_folder, store, speed, name, say, lock, enrolled.get(name)),
                daemon=True,
            )
            for name, round_folder in zip(names, rounds, strict=True)
        ]
        for table in tables:
            table.start()
        for table in tables:
            table.join()
    else:
        through_broker(folder, store, *broker, speed, say)
    now = time.time()
    html, pdf, _ = write_report(store, now - 9 * 3600, now + 60, None, folder / "report")
    say(f"Shift report: {html} and {pdf}")
    if server is not None:
        say("Serving until Ctrl-C.")
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            server.should_exit = True
    return store
