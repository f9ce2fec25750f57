"""`paigow run`: the table box. Wires, in order: config, outbox, transport and courier, metrics,
camera, analysis; then runs until stopped.

Frames: the camera thread keeps only the newest frame; analysis takes whatever is newest when it
is ready, so when it falls behind frames are dropped, never queued. Every alert and round record
goes through the outbox before the broker sees it.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import queue
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np
from numpy.typing import NDArray
from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server
from pydantic import ValidationError

from edge.clips import ClipMaker, ClipSettings, Evidence, evidence_body
from edge.comms import Courier, MqttTransport, Transport, TransportError
from edge.config import ConfigError, EdgeConfig
from edge.enrolments import EnrolmentError, Enrolments
from edge.messages import Alarm, Announce, CameraState, Health, MessageKind
from edge.outbox import Outbox, OutboxError
from vision.follow import Announcement, Raised, RoundFollower
from vision.follow.records import Alert
from vision.pipeline import ahead
from vision.replay import LabelSource, ModelSource, Source
from vision.selfcheck import SelfCheck, check_models
from vision.table import CalibrationError, TableConfig

if TYPE_CHECKING:
    from vision.detector import Candidates

log = logging.getLogger("paigow.edge")


@dataclass(frozen=True)
class Frame:
    stream_s: float
    """Seconds since the service started watching: always increasing, even across loops."""
    video_s: float
    """Position in the source (for a looped video file, within the current pass)."""
    image: NDArray[np.uint8]


class Camera:
    """Reads the source on its own thread, keeping only the newest frame that is due at the
    analysis rate; reconnects with exponential backoff and says when the camera is lost.

    Every frame is decoded (a compressed stream's next frame needs the ones before it), but only
    a due one is turned into a BGR image: at 4K and 30 frames a second with 10 analysed, that
    is 0.18 cores instead of 0.25 (`benchmarks/camera.py`)."""

    def __init__(
        self,
        source: str,
        *,
        loop: bool,
        backoff_cap: float,
        speed: float = 1.0,
        every_s: float = 0.0,
    ) -> None:
        self.source = source
        self.speed = speed
        self.every_s = every_s
        """The analysis period: frames closer together than this are never converted."""
        self.loop = loop
        self.backoff_cap = backoff_cap
        self.state: CameraState = "starting"
        self.frames_read = 0
        self._latest: Frame | None = None
        self._lock = threading.Lock()
        self._fresh = threading.Event()

    def latest(self, timeout: float) -> Frame | None:
        """The newest frame not yet taken, waiting up to `timeout`."""
        if not self._fresh.wait(timeout):
            return None
        with self._lock:
            self._fresh.clear()
            return self._latest

    def run(self, stop: threading.Event) -> None:
        backoff, offset, started, next_due = 1.0, 0.0, time.monotonic(), 0.0
        is_file = Path(self.source).is_file()
        while not stop.is_set():
            capture = cv2.VideoCapture(int(self.source) if self.source.isdigit() else self.source)
            if not capture.isOpened():
                self._lost(f"cannot open {self.source}")
                stop.wait(backoff)
                backoff = min(backoff * 2, self.backoff_cap)
                continue
            self.state, backoff = "ok", 1.0
            rate = capture.get(cv2.CAP_PROP_FPS) or 25.0
            index, pass_start = 0, time.monotonic()
            while not stop.is_set():
                if not capture.grab():
                    break
                video_s = index / rate
                if is_file:  # play a file at its own pace, as a camera would deliver it
                    stop.wait(max(0.0, pass_start + video_s / self.speed - time.monotonic()))
                stream_s = offset + video_s if is_file else time.monotonic() - started
                self.frames_read += 1
                index += 1
                if stream_s + 1e-6 < next_due:
                    continue
                ok, image = capture.retrieve()
                if not ok:
                    break
                next_due = max(next_due + self.every_s, stream_s - self.every_s / 2)
                with self._lock:
                    self._latest = Frame(round(stream_s, 3), round(video_s, 3), image)
                    self._fresh.set()
            capture.release()
            if is_file and self.loop and index:
                offset += index / rate + 1.0  # a second of empty table between passes
                continue
            if is_file:
                self.state = "ended"
                return
            self._lost(f"{self.source} stopped delivering frames")
            stop.wait(backoff)
            backoff = min(backoff * 2, self.backoff_cap)

    def _lost(self, why: str) -> None:
        if self.state != "lost":
            log.warning("camera lost: %s", why)
        self.state = "lost"


class Metrics:
    """The Prometheus endpoint's series."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.frames = Counter("paigow_frames_analysed", "Frames analysed", registry=r)
        self.fps = Gauge(
            "paigow_analysis_fps", "Frames analysed per second (last 10 s)", registry=r
        )
        self.inference_ms = Gauge("paigow_inference_ms", "Detection time per frame", registry=r)
        self.alerts = Counter("paigow_alerts", "Alerts raised", ["kind"], registry=r)
        self.rounds = Counter("paigow_rounds", "Round records written", registry=r)
        self.outbox = Gauge("paigow_outbox_depth", "Messages not yet acknowledged", registry=r)
        self.connected = Gauge("paigow_broker_connected", "1 when connected", registry=r)
        self.camera_ok = Gauge("paigow_camera_ok", "1 when the camera delivers", registry=r)
        self.outbox_writable = Gauge(
            "paigow_outbox_writable", "0 while the outbox's disk refuses writes", registry=r
        )
        self.dropped = Counter(
            "paigow_messages_dropped", "Messages lost: outbox full and memory hold full", registry=r
        )
        self.announcements = Counter(
            "paigow_announcements", "The pit's announcements, taken or refused", ["outcome"],
            registry=r,
        )  # fmt: skip


HELD_IN_MEMORY = 1000
"""Messages held in memory while the outbox's disk refuses writes: about 12 MB of alerts with
evidence, hours of a normal table's alerts; past it a new message is dropped and counted."""

SLOW_WINDOW = 10.0
"""Seconds over which the analysed frame rate is measured (the `paigow_analysis_fps` gauge)."""


def analysis_slow(
    analysed_at: list[float], now: float, fps: float, since: float | None, share: float = 0.8
) -> bool:
    """Fewer than `share` of the frames due in the last `SLOW_WINDOW` seconds were analysed:
    the CPU cannot keep the configured rate, so alerts come late and short events (a face
    shown for a few frames) can be missed. Not said before a whole window has been watched."""
    if since is None or now - since < SLOW_WINDOW:
        return False
    recent = sum(1 for t in analysed_at if now - t < SLOW_WINDOW)
    return recent < share * fps * SLOW_WINDOW


class EdgeApp:
    def __init__(
        self,
        config: EdgeConfig,
        *,
        transport: Transport | None = None,
        source: Source | None = None,
    ) -> None:
        self.config = config
        try:
            self.table = TableConfig.read(config.table)
        except CalibrationError as error:
            raise ConfigError(str(error)) from None
        own = f"{config.mqtt.site}/{self.table.table_id}"
        if config.mqtt.username not in (None, own):
            raise ConfigError(
                f"mqtt.username {config.mqtt.username!r} is not {own!r}: the broker lets a box "
                f"publish only under its own SITE/TABLE (docs/mqtt.md#security)"
            )
        kinds = ("alert", "round", "evidence", "status", "health", "announce")
        self.topics = {k: config.topic(self.table.table_id, k) for k in kinds}
        self.outbox = Outbox(config.outbox.path, config.outbox.min_free_mb)
        self.evidence = config.outbox.path.parent / "evidence"
        self.transport = transport or self._mqtt()
        self.courier = Courier(self.outbox, self.transport, config.mqtt.in_flight)
        self.metrics = Metrics()
        self.camera = Camera(
            config.camera.source,
            loop=config.camera.loop,
            backoff_cap=config.camera.reconnect_max_s,
            speed=config.camera.speed,
            every_s=1.0 / config.analysis.fps,
        )
        self.source = source or self._source()
        self.models_check = self._check_models()
        self.enrolments = Enrolments(config.outbox.path.parent / "enrolments")
        self.enrolment: str | None = None
        self.enrolment_stale: str | None = None
        """The accepted enrolment its models did not make, not read by (`_take_enrolment`)."""
        self.enrolment_seen: int | None = -1
        self._take_enrolment()
        analysis = config.analysis
        self.follower = RoundFollower(
            self.table,
            run=f"{int(time.time())}",
            cut=analysis.cut,
            cut_options=analysis.cut_options or None,
        )
        self.stop = threading.Event()
        self.unstored: list[tuple[MessageKind, dict[str, Any], str, str | None, str | None]] = []
        evidence = config.evidence
        self.clips = (
            ClipMaker(
                ClipSettings(
                    evidence.before_s, evidence.after_s, evidence.width, evidence.clip_width
                ),
                fps=analysis.fps,
                image_width=self.table.image_size[0],
            )
            if evidence.clip
            else None
        )
        self.clip_pool = ThreadPoolExecutor(1, thread_name_prefix="clips")
        self.clip_jobs: list[Future[Evidence]] = []
        self.dropped = 0
        self.analysed_at: list[float] = []
        self.watching_since: float | None = None

    def _mqtt(self) -> MqttTransport:
        m = self.config.mqtt
        tls = m.tls
        return MqttTransport(
            host=m.host,
            port=m.port,
            client_id=f"paigow-{m.site}-{self.table.table_id}",
            status_topic=self.topics["status"],
            username=m.username,
            password=m.password(),
            ca_file=str(tls.ca_file) if tls else None,
            cert_file=str(tls.cert_file) if tls and tls.cert_file else None,
            key_file=str(tls.key_file) if tls and tls.key_file else None,
            keepalive=m.keepalive_s,
            in_flight=m.in_flight,
            online_payload=lambda: json.dumps(
                {"state": "online", "camera": self.camera.state}
            ).encode(),
            command_topic=self.topics["announce"],
        )

    def _source(self) -> Source:
        if self.config.analysis.labels is not None:
            return LabelSource(self.config.analysis.labels)
        try:
            source = ModelSource(reuse=self.config.analysis.reuse)
        except FileNotFoundError as error:
            raise ConfigError(f"{error} (docs/detector.md); demos set analysis.labels") from None
        if source.watch is None:
            log.warning("no marker detector (models/markers.onnx): the banker's box and any +4/-4 "
                        "come from the pit's announcements or table.yaml")  # fmt: skip
        return source

    def _check_models(self) -> SelfCheck | None:
        """Known frames read before the models are trusted on this machine (`vision/selfcheck`);
        a demo's labels need no check."""
        if isinstance(self.source, LabelSource):
            return None
        source = self.source
        try:
            if isinstance(source, ModelSource):  # each frame whole: nothing kept between
                watch = source.watch
                chips = watch is not None and watch.detector.chips is not None
                check = check_models(source.look, markers=watch is not None, chips=chips)
            else:
                check = check_models(lambda image: source.detections(0, 0.0, image))
        except FileNotFoundError as error:  # PAIGOW_MODELS without the frames shipped beside
            raise ConfigError(f"{error} (models/selfcheck/, scripts/make_selfcheck.py)") from None
        if check.passed:
            log.info("the models read known frames right on this machine: %s", check)
        else:
            log.error("the models misread known frames on this machine (%s): this box's "
                      "alerts and hands cannot be trusted", check)  # fmt: skip
        return check

    def _take_enrolment(self) -> None:
        """Read by the accepted enrolment of this table's set (`paigow enrol`), at the start and
        whenever another is accepted; after the self-check, whose known frames show the house's
        set, not this table's. A demo's labels read nothing, but its health names the set too."""
        marker = self.enrolments.folder / "current.json"
        changed = marker.stat().st_mtime_ns if marker.is_file() else None
        if changed == self.enrolment_seen:
            return
        self.enrolment_seen = changed
        try:
            current = self.enrolments.current()
        except EnrolmentError as error:
            log.error("%s: reading by the models alone", error)
            current = None
        record, known = current if current is not None else (None, None)
        self.enrolment_stale = None
        if isinstance(self.source, ModelSource):
            if known is not None and record is not None and not known.made_by(self.source.reader):
                log.error("enrolment %s was made by other models than this box reads with (its "
                          "reader or set-look model has changed since): reading by the models "
                          "alone; enrol the set again", record.id)  # fmt: skip
                self.enrolment_stale = record.id
                record, known = None, None
            self.source.reader.known_set = known
        self.enrolment = record.id if record is not None else None
        if record is None:
            log.warning("no accepted enrolment of this table's tiles (paigow enrol)")
        else:
            log.info("reading by enrolment %s, accepted by %s", record.id, record.accepted_by)
            if known is not None and known.looks is None:
                log.warning("enrolment %s holds no set looks (made before the set-look model): "
                            "tiles of another set are not told by their look; enrol again",
                            record.id)  # fmt: skip

    # -- running -------------------------------------------------------------------------------

    def run(self, *, handle_signals: bool = True) -> None:
        if handle_signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: self.stop.set())
        port = self.config.observability.metrics_port
        if port:
            start_http_server(port, registry=self.metrics.registry)
        self.transport.start()
        threads = [
            threading.Thread(
                target=self.courier.run, args=(self.stop,), name="courier", daemon=True
            ),
            threading.Thread(target=self.camera.run, args=(self.stop,), name="camera", daemon=True),
            threading.Thread(target=self._health, name="health", daemon=True),
        ]
        for thread in threads:
            thread.start()
        log.info(
            "watching table %s; publishing under %s",
            self.table.table_id,
            self.topics["alert"].rsplit("/", 1)[0],
        )
        try:
            self._analyse()
        finally:
            self.stop.set()
            self.clip_pool.shutdown(wait=False, cancel_futures=True)  # a clip not made is lost
            for thread in threads:
                thread.join(timeout=5)
            with contextlib.suppress(OutboxError):  # what is left stays for the next start
                self.courier.step()
            self.transport.stop()
            self.outbox.close()

    def _due_frames(self) -> Iterator[Frame | None]:
        """The camera's newest due frame (it keeps only frames due at the configured rate,
        newer ones replacing older); None after half a second without one, so that the loop's
        own checks still run; the end at the end of a file."""
        while not self.stop.is_set():
            frame = self.camera.latest(timeout=0.5)
            if frame is None and self.camera.state == "ended":
                return
            yield frame

    def _scan(self, frame: Frame | None) -> tuple[Candidates | None, float]:
        """The first stage, a frame ahead on its own thread (`vision.pipeline`), and its ms."""
        started = time.perf_counter()
        scanned = self.source.scan(frame.image) if frame is not None else None
        return scanned, (time.perf_counter() - started) * 1000

    def _analyse(self) -> None:
        last = 0.0
        self.watching_since = time.monotonic()
        for frame, (scanned, scan_ms) in ahead(self._due_frames(), self._scan):
            if self.transport.refusal is not None:
                raise TransportError(
                    f"the broker refused this box's login as {self.config.mqtt.username!r}: "
                    f"{self.transport.refusal} (check mqtt.username and the password)"
                )
            if self.unstored:
                self._store_held()  # the disk may have room again
            self._take_announcements()
            if frame is None:
                continue
            last = frame.stream_s
            started = time.perf_counter()
            detections = self.source.detections(0, frame.video_s, frame.image, scanned)
            self.metrics.inference_ms.set(scan_ms + (time.perf_counter() - started) * 1000)
            if self.clips is not None:
                self.clips.add(frame.stream_s, frame.image, detections)
            self._publish_raised(self.follower.follow(frame.stream_s, detections, frame.image))
            if self.clips is not None:
                self.clip_jobs += [self.clip_pool.submit(self.clips.make, job)
                                   for job in self.clips.due(frame.stream_s)]  # fmt: skip
                self._publish_evidence(wait=False)
            self.metrics.frames.inc()
            now = time.monotonic()
            self.analysed_at = [t for t in self.analysed_at if now - t < SLOW_WINDOW] + [now]
            self.metrics.fps.set(len(self.analysed_at) / SLOW_WINDOW)
        if self.camera.state == "ended" and not self.stop.is_set():  # a file played to its end
            self._publish_raised(self.follower.finish(last))
            if self.clips is not None:
                self.clip_jobs += [self.clip_pool.submit(self.clips.make, job)
                                   for job in self.clips.flush()]  # fmt: skip
                self._publish_evidence(wait=True)
            self._drain()

    def _take_announcements(self) -> None:
        """The pit's word on the command topic, for the follower's next round; one that is not
        a valid announcement is logged and counted, never acted on."""
        while True:
            try:
                payload = self.transport.commands.get_nowait()
            except queue.Empty:
                return
            try:
                said = Announce.model_validate_json(payload)
            except ValidationError as error:
                self.metrics.announcements.labels("refused").inc()
                reason = "; ".join(e["msg"] for e in error.errors())
                log.warning("refused an announcement on %s: %s", self.topics["announce"], reason)
                continue
            self.metrics.announcements.labels("taken").inc()
            log.info("announced by %s for the next round: %s", said.by,
                     said.model_dump_json(exclude={"by"}, exclude_none=True))  # fmt: skip
            self.follower.announce(Announcement(said.bank, said.banker, said.cut,
                                                said.cut_options))  # fmt: skip

    def _drain(self, timeout: float = 10.0) -> None:
        """At the end of a file: give the courier a moment to deliver what is left."""
        deadline = time.monotonic() + timeout
        while self.outbox.depth() and time.monotonic() < deadline and self.transport.connected:
            self.courier.wake.set()
            time.sleep(0.05)

    def _publish_raised(self, raised: list[Raised]) -> None:
        for item in raised:
            record = item.record
            if isinstance(record, Alert):
                evidence = None
                if item.evidence is not None and item.evidence.size:
                    ok, jpeg = cv2.imencode(".jpg", item.evidence, [cv2.IMWRITE_JPEG_QUALITY, 85])
                    evidence = base64.b64encode(jpeg.tobytes()).decode() if ok else None
                self._store("alert", record.model_dump(mode="json"), self.topics["alert"], evidence)
                if self.clips is not None:
                    self.clips.want(record, item.zone)
                self.metrics.alerts.labels(record.kind).inc()
                log.warning(
                    "alert %s at position %s: %s", record.kind, record.position, record.observed
                )
            else:
                self._store("round", record.model_dump(mode="json"), self.topics["round"], None)
                self.metrics.rounds.inc()

    def _publish_evidence(self, *, wait: bool) -> None:
        """Store each clip made (all of them, waiting, with `wait`), in the order asked for."""
        while self.clip_jobs and (wait or self.clip_jobs[0].done()):
            try:
                evidence = self.clip_jobs.pop(0).result()
            except Exception:  # evidence is worth a try, never the analysis: the alert went
                log.exception("could not make an alert's clip")
                continue
            body = evidence_body(evidence, self.table.table_id)
            self._store("evidence", body, self.topics["evidence"], *evidence.encoded())

    def _store(
        self,
        kind: MessageKind,
        body: dict[str, Any],
        topic: str,
        evidence: str | None,
        clip: str | None = None,
    ) -> None:
        """Into the outbox; if the disk refuses, hold it in memory (up to `HELD_IN_MEMORY`,
        then refuse it, counted), retry on every frame, and alarm."""
        if len(self.unstored) >= HELD_IN_MEMORY:
            self.dropped += 1
            self.metrics.dropped.inc()
            log.error("outbox full and %d messages held: a %s is lost", HELD_IN_MEMORY, kind)
        else:
            self.unstored.append((kind, body, topic, evidence, clip))
        self._store_held()

    def _store_held(self) -> None:
        while self.unstored:
            kind_, body_, topic_, evidence_, clip_ = self.unstored[0]
            try:
                self.outbox.put(topic_, body_, table_id=self.table.table_id, kind=kind_,
                                evidence_jpeg=evidence_, clip_webm=clip_)  # fmt: skip
            except OutboxError as error:
                log.error(
                    "cannot store a message, holding %d in memory: %s", len(self.unstored), error
                )
                return
            self.unstored.pop(0)
        self.courier.wake.set()

    def health_alarms(self) -> list[Alarm]:
        alarms: list[Alarm] = []
        if self.outbox.disk_low():
            alarms.append("disk-low")
        if self.unstored or self.courier.store_error is not None:
            alarms.append("outbox-unwritable")
        if self.dropped:
            alarms.append("messages-dropped")
        if self.camera.state == "lost":
            alarms.append("camera-lost")
        if self.courier.refused:
            alarms.append("messages-refused")
        if self.models_check is not None and not self.models_check.passed:
            alarms.append("models-misread")
        if self.camera.state == "ok" and analysis_slow(
            self.analysed_at, time.monotonic(), self.config.analysis.fps, self.watching_since
        ):
            alarms.append("analysis-slow")
        if self.enrolment_stale is not None:
            alarms.append("enrolment-stale")
        return alarms

    def health(self) -> Health:
        alarms = self.health_alarms()
        try:
            depth = self.outbox.depth()
        except OutboxError:  # cannot count it now: say so rather than stop reporting
            depth = self.courier.handed - self.courier.delivered
            if "outbox-unwritable" not in alarms:
                alarms.append("outbox-unwritable")
        self.metrics.outbox.set(depth)
        self.metrics.connected.set(1 if self.transport.connected else 0)
        self.metrics.camera_ok.set(1 if self.camera.state == "ok" else 0)
        self.metrics.outbox_writable.set(0 if "outbox-unwritable" in alarms else 1)
        return Health(
            table_id=self.table.table_id,
            at=time.time(),
            camera=self.camera.state,
            broker_connected=self.transport.connected,
            outbox_depth=depth,
            free_mb=round(self.outbox.free_mb(), 1),
            analysis_fps=round(len(self.analysed_at) / SLOW_WINDOW, 2),
            alarms=alarms,
            enrolment=self.enrolment,
        )

    def _health(self) -> None:
        while not self.stop.wait(self.config.observability.health_every_s):
            self._take_enrolment()
            report = self.health()
            if report.alarms:
                log.warning("health alarms: %s", ", ".join(report.alarms))
            self.transport.publish(self.topics["health"], report.model_dump_json().encode())
