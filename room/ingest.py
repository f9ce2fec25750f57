"""`paigow ingest`: every table's alerts and round records into the incident store.

Subscribes through an MQTT v5 shared subscription (`$share/<group>/…`), so several ingest
workers split the load; each message is stored once by its id (redeliveries are dropped) and a
jump in a table's sequence numbers is stored as a `sequence-gap` alert of its own. A message is
acknowledged to the broker only after it is committed, so a crash mid-way means a redelivery,
not a loss. Each box's retained status and periodic health report are read by every worker
(a plain subscription: the broker hands retained messages to no shared one) and kept as the
table's last word on its health, for the live board.

Workers stand in for each other. Each announces itself, retained, on
`<prefix>/room/ingest/workers/<client id>` (`online`; its last will and its clean stop say
`offline`). A worker down for `STAND_IN_AFTER_S` has its share served by the first live worker
(by client id), which connects a second client with the down worker's client id and so takes
over its persistent session: the broker keeps handing a down member of a shared subscription its
share, and only its own session can drain it. When the worker returns, its connection takes the
session back (the broker disconnects the stand-in: "session taken over") and redeliveries of what
the stand-in had not yet acknowledged are dropped by id.
"""

from __future__ import annotations

import json
import logging
import math
import queue
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from pydantic import ValidationError

from edge.messages import Enrolment, Envelope, EvidenceClip, Health, Status
from room.store import Store, StoreError
from vision.follow.records import Alert, RoundRecord
from vision.table import ID_PATTERN

log = logging.getLogger("paigow.ingest")


MAX_PAYLOAD = 1_048_576
"""Bytes: an alert with its evidence crop is 10-60 KB; a megabyte is past any honest message."""
NAME = re.compile(ID_PATTERN)
MAX_SEQ = 2**53
"""Past this a sequence number no longer survives a JSON reader's doubles."""
FUTURE_S = 86_400.0
"""A box's clock may be minutes off, never a day ahead: a report from the far future would
hide every real one after it."""


class RefusedError(ValueError):
    """A message ingest will not store: the reason goes to the dead letters."""


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "message"
    return f"{where}: {first['msg']}"


def check_envelope(topic: str, payload: bytes | bytearray, now: float) -> dict[str, Any]:
    """The envelope in `payload` if this topic's table may publish it; else `RefusedError`."""
    if len(payload) > MAX_PAYLOAD:
        raise RefusedError(f"{len(payload)} bytes, more than {MAX_PAYLOAD}")
    try:
        data = json.loads(payload)
    except RecursionError:
        raise RefusedError("JSON nested too deep") from None
    except ValueError:
        raise RefusedError("not JSON") from None
    try:
        envelope = Envelope.model_validate(data)
    except ValidationError as error:
        raise RefusedError(_first_error(error)) from None
    _, _, table_id, kind = topic.rsplit("/", 3)
    if envelope.table_id != table_id:
        raise RefusedError(
            f"table_id {envelope.table_id[:64]!r} published on table {table_id}'s topic"
        )
    if envelope.kind != kind:
        raise RefusedError(f"a {envelope.kind} published on a {kind} topic")
    if type(data["seq"]) is not int or envelope.seq > MAX_SEQ:
        raise RefusedError(f"seq {str(data['seq'])[:32]} is not a whole number from 1 to 2**53")
    if not NAME.fullmatch(envelope.message_id) or not NAME.fullmatch(envelope.table_id):
        raise RefusedError("message_id or table_id not 1-64 letters, digits and _.:-")
    if not math.isfinite(envelope.produced_at) or envelope.produced_at > now + FUTURE_S:
        raise RefusedError(f"produced_at {envelope.produced_at} is not a time up to a day from now")
    model = {"alert": Alert, "round": RoundRecord, "evidence": EvidenceClip,
             "enrolment": Enrolment}[envelope.kind]  # fmt: skip
    try:
        body = model.model_validate(envelope.body)
    except ValidationError as error:
        raise RefusedError(f"body.{_first_error(error)}") from None
    if body.table_id != envelope.table_id:
        raise RefusedError(f"body of table {body.table_id[:64]!r} in table {table_id}'s envelope")
    return data  # type: ignore[no-any-return]


@dataclass
class IngestStats:
    stored: int = 0
    duplicates: int = 0
    rejected: int = 0
    gaps: list[tuple[str, int, int]] = field(default_factory=list)


SESSION_EXPIRY_S = 7 * 24 * 3600
"""How long the broker keeps an ingest worker's session (its subscriptions and the messages
queued for it) while the worker is down: a worker killed on a Friday night and restarted on
Monday loses nothing. A worker retired for good frees the broker's queue a week later."""


STAND_IN_AFTER_S = 1.0
"""A worker down this long has its share served by a live one. The broker publishes a killed
worker's will at once, and the room needs its alerts within seconds; a second spares a takeover
for a worker that is only reconnecting after a blip (it reconnects within 1 s). A takeover that
was not needed costs nothing: the worker takes its session back and redeliveries are dropped."""
ONLINE, OFFLINE = b"online", b"offline"
TAKEN_OVER = 142
"""MQTT v5 DISCONNECT reason "session taken over": a worker came back for its own session."""


class Ingest:
    """One ingest worker. `run()` until `stop` is set.

    Its MQTT session outlives a disconnect (clean start off, `SESSION_EXPIRY_S`, a stable
    client id): while it is down the broker queues every alert and round for it and hands them
    over when it comes back, so killing ingest loses nothing. Each worker needs its own
    client id; two with one id would take each other's session. `persistent` False (a one-off
    run such as the demo's): a session that ends with the run, since a shared subscription
    keeps handing a departed member its share."""

    def __init__(
        self,
        store: Store,
        *,
        host: str,
        port: int,
        prefix: str = "paigow",
        group: str = "ingest",
        client_id: str = "paigow-ingest",
        username: str | None = None,
        password: str | None = None,
        ca_file: str | None = None,
        batch: int = 200,
        gap_grace_s: float = 30.0,
        persistent: bool = True,
    ) -> None:
        self.store = store
        self.persistent = persistent
        self.client_id = client_id
        self.workers_topic = f"{prefix}/room/ingest/workers"
        self._workers: dict[str, tuple[bytes, float]] = {}
        """Each worker's last word (online/offline) and when it was heard, from their topic."""
        self._stand_ins: dict[str, mqtt.Client] = {}
        self._taken_back: set[str] = set()
        """Down workers whose stand-in was disconnected by another client with their id: not
        taken again until some worker's word changes (no two stand-ins fighting over a session)."""
        shared = ("alert", "round", "evidence", "enrolment")
        self.topics = [f"$share/{group}/{prefix}/+/+/{kind}" for kind in shared]
        self.topics += [f"{prefix}/+/+/status", f"{prefix}/+/+/health"]
        self.stats = IngestStats()
        self.batch = batch
        self.gap_grace_s = gap_grace_s
        self.ready = threading.Event()
        self.refusal: str | None = None
        self._inbox: queue.Queue[tuple[mqtt.Client, mqtt.MQTTMessage]] = queue.Queue()
        self._login = (username, password, ca_file)
        self.host, self.port = host, port
        self.client = self._client(client_id)
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = self._on_subscribe
        if persistent:
            self.topics.append(f"{self.workers_topic}/+")
            self.client.will_set(f"{self.workers_topic}/{client_id}", OFFLINE, qos=1, retain=True)

    def _client(self, client_id: str) -> mqtt.Client:
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5, manual_ack=True
        )
        username, password, ca_file = self._login
        if username is not None:
            client.username_pw_set(username, password)
        if ca_file is not None:
            client.tls_set(ca_certs=ca_file)
        client.reconnect_delay_set(1, 30)
        client.on_message = lambda c, u, message: self._inbox.put((c, message))
        client.max_inflight_messages_set(1000)
        return client

    def _connect(self, client: mqtt.Client) -> None:
        session = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        session.SessionExpiryInterval = SESSION_EXPIRY_S if self.persistent else 0
        client.connect_async(
            self.host, self.port, keepalive=15, clean_start=not self.persistent,
            properties=session,
        )  # fmt: skip
        client.loop_start()

    def _on_connect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.ConnectFlags,
        reason: ReasonCode,
        properties: Properties | None,
    ) -> None:
        if reason.is_failure:
            self.refusal = str(reason)
            log.error("broker refused the ingest login: %s", reason)
            return
        client.subscribe([(topic, 1) for topic in self.topics])

    def _on_subscribe(
        self,
        client: mqtt.Client,
        userdata: object,
        mid: int,
        reasons: list[ReasonCode],
        properties: Properties | None,
    ) -> None:
        """Ready once the broker has the subscriptions: a report sent before then is lost."""
        refused = [str(reason) for reason in reasons if reason.is_failure]
        if refused:
            self.refusal = ", ".join(refused)
            log.error("broker refused the ingest subscriptions: %s", self.refusal)
            return
        if self.persistent:
            client.publish(f"{self.workers_topic}/{self.client_id}", ONLINE, qos=1, retain=True)
        self.ready.set()

    def _hear_worker(self, message: mqtt.MQTTMessage) -> None:
        worker = message.topic.rsplit("/", 1)[1]
        word = bytes(message.payload)
        if self._workers.get(worker, (b"", 0.0))[0] != word:
            self._workers[worker] = (word, time.monotonic())
            self._taken_back.clear()
            log.info("ingest worker %s is %s", worker, word.decode(errors="replace")[:16])

    def _stand_in_for(self, worker: str) -> None:
        """Take over `worker`'s session until it comes back for it."""
        stand_in = self._client(worker)

        def on_disconnect(client, userdata, flags, reason, properties):  # type: ignore[no-untyped-def]
            if reason == TAKEN_OVER:  # never reconnect: that would take the session back
                client.disconnect()
                self._taken_back.add(worker)

        stand_in.on_disconnect = on_disconnect
        self._stand_ins[worker] = stand_in
        self._connect(stand_in)
        log.warning("ingest worker %s is down: standing in for it", worker)

    def _watch_workers(self) -> None:
        """Stand in for each worker down `STAND_IN_AFTER_S` if this is the first live worker;
        let go of each stand-in whose worker is back or that another client took over."""
        now = time.monotonic()
        live = sorted(worker for worker, (word, _) in self._workers.items() if word == ONLINE)
        first_live = bool(live) and live[0] == self.client_id
        for worker, (word, since) in list(self._workers.items()):
            stand_in = self._stand_ins.get(worker)
            if stand_in is not None and (word == ONLINE or worker in self._taken_back):
                stand_in.disconnect()
                stand_in.loop_stop()
                del self._stand_ins[worker]
                log.info("no longer standing in for ingest worker %s", worker)
            elif (
                stand_in is None
                and word == OFFLINE
                and worker != self.client_id
                and first_live
                and now - since >= STAND_IN_AFTER_S
                and worker not in self._taken_back
            ):
                self._stand_in_for(worker)

    def run(self, stop: threading.Event) -> None:
        self._connect(self.client)
        try:
            checked = time.monotonic()
            while not stop.is_set():
                self._watch_workers()
                if time.monotonic() - checked > min(1.0, self.gap_grace_s):
                    checked = time.monotonic()
                    for table_id, first_seq, last_seq in self.store.raise_gaps(self.gap_grace_s):
                        self.stats.gaps.append((table_id, first_seq, last_seq))
                        log.warning(
                            "table %s: messages %s-%s never arrived", table_id, first_seq, last_seq
                        )
                try:
                    first = self._inbox.get(timeout=0.2)
                except queue.Empty:
                    continue
                messages = [first]
                while len(messages) < self.batch:
                    try:
                        messages.append(self._inbox.get_nowait())
                    except queue.Empty:
                        break
                self._store(messages)
        finally:
            for stand_in in self._stand_ins.values():
                stand_in.disconnect()
                stand_in.loop_stop()
            if self.persistent and self.client.is_connected():  # a clean stop leaves no will
                topic = f"{self.workers_topic}/{self.client_id}"
                self.client.publish(topic, OFFLINE, qos=1, retain=True).wait_for_publish(5)
            self.client.disconnect()
            self.client.loop_stop()

    def _store(self, messages: list[tuple[mqtt.Client, mqtt.MQTTMessage]]) -> None:
        envelopes: list[dict[str, Any]] = []
        readable: list[mqtt.MQTTMessage] = []
        now = time.time()
        for _, message in messages:
            if message.topic.startswith(self.workers_topic + "/"):
                self._hear_worker(message)
                continue
            if message.topic.endswith(("/status", "/health")):
                self._note(message)
                continue
            try:
                envelopes.append(check_envelope(message.topic, message.payload, now))
                readable.append(message)
            except RefusedError as reason:
                self._refuse(message, str(reason))
        try:
            results = self.store.ingest_many(envelopes)
        except Exception:  # the batch could not be stored: each alone, so one bad row costs one
            log.exception("a batch of %d failed; storing each alone", len(envelopes))
            results = [self._ingest_alone(envelope) for envelope in envelopes]
        for message, result in zip(readable, results, strict=True):
            if isinstance(result, StoreError):
                self._refuse(message, f"store: {result}")
            elif result.stored:
                self.stats.stored += 1
            else:
                self.stats.duplicates += 1
        for client, message in messages:  # acknowledged only once committed, by its receiver
            client.ack(message.mid, message.qos)

    def _ingest_alone(self, envelope: dict[str, Any]) -> Any:
        try:
            return self.store.ingest_many([envelope])[0]
        except Exception as error:  # kept as a dead letter, never a stop
            return StoreError(f"{type(error).__name__}: {str(error).splitlines()[0][:200]}")

    def _refuse(self, message: mqtt.MQTTMessage, reason: str) -> None:
        """Count it, log it once, keep it (bounded) as a dead letter; ingest carries on."""
        self.stats.rejected += 1
        log.error("refused a message on %s: %s", message.topic[:200], reason)
        try:
            self.store.dead_letter(message.topic, reason, bytes(message.payload))
        except Exception:
            log.exception("could not keep the refused message")

    def _note(self, message: mqtt.MQTTMessage) -> None:
        """A box's status or health report, kept as its table's last word (never an error to
        stop for: a malformed one, or one from another table or the far future, is refused)."""
        _, site, table_id, kind = message.topic.rsplit("/", 3)
        try:
            if len(message.payload) > MAX_PAYLOAD:
                raise RefusedError(f"{len(message.payload)} bytes, more than {MAX_PAYLOAD}")
            if kind == "status":
                status = Status.model_validate_json(message.payload)
                self.store.note_status(site, table_id, status.state)
                return
            report = Health.model_validate_json(message.payload)
            if report.table_id != table_id:
                raise RefusedError(
                    f"table {report.table_id[:64]!r} reported on table {table_id}'s topic"
                )
            if not math.isfinite(report.at) or report.at > time.time() + FUTURE_S:
                raise RefusedError(f"at {report.at} is not a time up to a day from now")
            self.store.note_health(site, report.model_dump(mode="json"))
        except ValidationError as error:
            self._refuse(message, f"{kind}: {_first_error(error)}")
        except (RefusedError, ValueError) as error:
            self._refuse(message, f"{kind}: {str(error).splitlines()[0]}")
