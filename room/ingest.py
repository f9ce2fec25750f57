"""`paigow ingest`: every table's alerts and round records into the incident store.

Subscribes through an MQTT v5 shared subscription (`$share/<group>/…`), so several ingest
workers split the load; each message is stored once by its id (redeliveries are dropped) and a
jump in a table's sequence numbers is stored as a `sequence-gap` alert of its own. A message is
acknowledged to the broker only after it is committed, so a crash mid-way means a redelivery,
not a loss. Each box's retained status and periodic health report are read by every worker
(a plain subscription: the broker hands retained messages to no shared one) and kept as the
table's last word on its health, for the live board.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from edge.messages import Health, Status
from room.store import Store, StoreError

log = logging.getLogger("paigow.ingest")


@dataclass
class IngestStats:
    stored: int = 0
    duplicates: int = 0
    rejected: int = 0
    gaps: list[tuple[str, int, int]] = field(default_factory=list)


class Ingest:
    """One ingest worker. `run()` until `stop` is set."""

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
    ) -> None:
        self.store = store
        self.topics = [f"$share/{group}/{prefix}/+/+/alert", f"$share/{group}/{prefix}/+/+/round",
                       f"{prefix}/+/+/status", f"{prefix}/+/+/health"]  # fmt: skip
        self.stats = IngestStats()
        self.batch = batch
        self.gap_grace_s = gap_grace_s
        self.ready = threading.Event()
        self.refusal: str | None = None
        self._inbox: queue.Queue[mqtt.MQTTMessage] = queue.Queue()
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5, manual_ack=True
        )
        if username is not None:
            client.username_pw_set(username, password)
        if ca_file is not None:
            client.tls_set(ca_certs=ca_file)
        client.reconnect_delay_set(1, 30)
        client.on_connect = self._on_connect
        client.on_subscribe = self._on_subscribe
        client.on_message = lambda c, u, message: self._inbox.put(message)
        client.max_inflight_messages_set(1000)
        self.client = client
        self.host, self.port = host, port

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
        self.ready.set()

    def run(self, stop: threading.Event) -> None:
        self.client.connect_async(self.host, self.port, keepalive=15)
        self.client.loop_start()
        try:
            checked = time.monotonic()
            while not stop.is_set():
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
            self.client.disconnect()
            self.client.loop_stop()

    def _store(self, messages: list[mqtt.MQTTMessage]) -> None:
        envelopes: list[dict[str, Any]] = []
        readable: list[mqtt.MQTTMessage] = []
        for message in messages:
            if message.topic.endswith(("/status", "/health")):
                self._note(message)
                continue
            try:
                envelopes.append(json.loads(message.payload))
                readable.append(message)
            except ValueError:
                self.stats.rejected += 1
                log.error("not JSON on %s: dropped", message.topic)
        for message, result in zip(readable, self.store.ingest_many(envelopes), strict=True):
            if isinstance(result, StoreError):
                self.stats.rejected += 1
                log.error("rejected a message on %s: %s", message.topic, result)
            elif result.stored:
                self.stats.stored += 1
            else:
                self.stats.duplicates += 1
        for message in messages:  # acknowledged only once committed
            self.client.ack(message.mid, message.qos)

    def _note(self, message: mqtt.MQTTMessage) -> None:
        """A box's status or health report, kept as its table's last word (never an error to
        stop for: a malformed one is logged and dropped)."""
        _, site, table_id, kind = message.topic.rsplit("/", 3)
        try:
            if kind == "status":
                status = Status.model_validate_json(message.payload)
                self.store.note_status(site, table_id, status.state)
            else:
                report = Health.model_validate_json(message.payload)
                self.store.note_health(site, report.model_dump(mode="json"))
        except ValueError as error:
            self.stats.rejected += 1
            log.error("malformed %s on %s: %s", kind, message.topic, str(error).splitlines()[0])
