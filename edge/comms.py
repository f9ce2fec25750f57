"""Transports: how messages leave the box. One small interface, an MQTT one and an in-memory one
for tests, and the `Courier` that moves the outbox through a transport in order.

Errors, drawn once:

    TransportError      the broker cannot be used as configured (refused login, bad TLS files)
"""

from __future__ import annotations

import logging
import queue
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from edge.outbox import Outbox, OutboxError

log = logging.getLogger("paigow.edge")

Ack = tuple[int, str | None]
"""A delivery token and, when the broker refused the message, why."""


COMMANDS_HELD = 100
"""Commands received and not yet taken: the pit announces once a round, so a hundred waiting
means a flood, not a backlog."""
STORE_RETRY_S = 1.0
"""Seconds the courier waits after the outbox failed to read: a full disk is not freed faster
than that, and retrying sooner only fills the log."""


class TransportError(RuntimeError):
    """The broker cannot be used as configured."""


class Transport(Protocol):
    """Where messages go. `publish` returns a token that comes back through `acks` once the
    broker has the message (QoS 1), or None when not connected."""

    acks: queue.Queue[Ack]
    commands: queue.Queue[bytes]
    """Payloads received on the box's command topic (the pit's announcements), in order."""
    refusal: str | None
    """Why the broker refused the login, if it did: waiting will not fix that."""

    @property
    def connected(self) -> bool: ...

    def start(self) -> None: ...

    def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> int | None: ...

    def stop(self) -> None: ...


@dataclass
class MemoryTransport:
    """In-memory transport for unit tests: records what was published and acknowledges it
    when told (or at once)."""

    auto_ack: bool = True
    up: bool = True
    published: list[tuple[str, bytes, bool]] = field(default_factory=list)
    acks: queue.Queue[Ack] = field(default_factory=queue.Queue)
    commands: queue.Queue[bytes] = field(default_factory=queue.Queue)
    unacked: list[int] = field(default_factory=list)
    refusal: str | None = None

    @property
    def connected(self) -> bool:
        return self.up

    def start(self) -> None:
        return None

    def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> int | None:
        if not self.up:
            return None
        self.published.append((topic, payload, retain))
        token = len(self.published)
        if self.auto_ack:
            self.acks.put((token, None))
        else:
            self.unacked.append(token)
        return token

    def stop(self) -> None:
        self.up = False


class MqttTransport:
    """paho-mqtt 2.x, MQTT v5, QoS 1, with a retained `online`/`offline` status (the last will)
    and automatic reconnection with backoff."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        client_id: str,
        status_topic: str,
        username: str | None = None,
        password: str | None = None,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        keepalive: int = 15,
        in_flight: int = 50,
        online_payload: Callable[[], bytes] | None = None,
        command_topic: str | None = None,
    ) -> None:
        self.host, self.port, self.keepalive = host, port, keepalive
        self.status_topic = status_topic
        self.command_topic = command_topic
        self.commands: queue.Queue[bytes] = queue.Queue(COMMANDS_HELD)
        self.online_payload = online_payload or (lambda: b'{"state":"online"}')
        self.acks: queue.Queue[Ack] = queue.Queue()
        self.refusal: str | None = None
        self._up = threading.Event()
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
        client.will_set(status_topic, b'{"state":"offline"}', qos=1, retain=True)
        if username is not None:
            client.username_pw_set(username, password)
        if ca_file is not None:
            try:
                client.tls_set(
                    ca_certs=ca_file,
                    certfile=cert_file,
                    keyfile=key_file,
                    tls_version=ssl.PROTOCOL_TLS_CLIENT,
                )
            except (OSError, ssl.SSLError) as error:
                raise TransportError(f"TLS files cannot be used: {error}") from None
        client.max_inflight_messages_set(in_flight)
        client.reconnect_delay_set(min_delay=1, max_delay=30)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_message = self._on_message
        self.client = client

    @property
    def connected(self) -> bool:
        return self._up.is_set()

    def start(self) -> None:
        self.client.connect_async(self.host, self.port, keepalive=self.keepalive)
        self.client.loop_start()

    def wait_connected(self, timeout: float) -> bool:
        return self._up.wait(timeout)

    def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> int | None:
        if not self.connected:
            return None
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        if info.rc != mqtt.MQTT_ERR_SUCCESS:
            return None
        return int(info.mid)

    def stop(self) -> None:
        """Leave cleanly: say `offline` ourselves (the will is only for unclean exits)."""
        if self.connected:
            self.client.publish(self.status_topic, b'{"state":"offline"}', qos=1, retain=True)
        self._up.clear()  # leaving on purpose: not a lost broker
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.ConnectFlags,
        reason: ReasonCode,
        properties: Properties | None,
    ) -> None:
        if reason.is_failure:  # never report success after a refusal
            self.refusal = str(reason)
            log.error("broker refused the connection: %s", reason)
            return
        self.refusal = None
        if self.command_topic is not None:  # again on every connection: sessions are clean
            client.subscribe(self.command_topic, qos=1)
        client.publish(self.status_topic, self.online_payload(), qos=1, retain=True)
        self._up.set()
        log.info("connected to the broker at %s:%s", self.host, self.port)

    def _on_message(self, client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        try:
            self.commands.put_nowait(bytes(message.payload))
        except queue.Full:  # the analysis loop takes them every frame: this is a flood
            log.warning("dropped a command on %s: %d waiting", message.topic, COMMANDS_HELD)

    def _on_disconnect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.DisconnectFlags,
        reason: ReasonCode,
        properties: Properties | None,
    ) -> None:
        if self._up.is_set():
            log.warning("lost the broker: %s", reason)
        self._up.clear()

    def _on_publish(
        self,
        client: mqtt.Client,
        userdata: object,
        mid: int,
        reason: ReasonCode,
        properties: Properties | None,
    ) -> None:
        self.acks.put((mid, str(reason) if reason.is_failure else None))


class Courier:
    """Moves the outbox through a transport: oldest first, at most `window` unacknowledged,
    each removed from the outbox only when the broker acknowledged it."""

    def __init__(
        self, outbox: Outbox, transport: Transport, window: int = 50, resend_after: float = 20.0
    ) -> None:
        self.outbox = outbox
        self.transport = transport
        self.window = window
        self.resend_after = resend_after
        self.wake = threading.Event()
        self.in_flight: dict[int, int] = {}  # token -> seq
        self.since: dict[int, float] = {}  # token -> when handed over
        self.handed = 0  # highest seq handed to the transport since start
        self.unsettled: list[tuple[int, str | None]] = []  # acknowledged, not yet recorded
        self.store_error: str | None = None  # the outbox's last error while it lasts
        self.refused = 0
        self.delivered = 0
        self.errors: list[str] = []

    def step(self) -> int:
        """Settle acknowledgements, hand over what the window allows; returns how many were
        handed over. A store error (disk full) is kept, not raised: an acknowledgement the
        outbox could not record is settled again on the next step, and sending goes on."""
        while True:
            try:
                token, refusal = self.transport.acks.get_nowait()
            except queue.Empty:
                break
            seq = self.in_flight.pop(token, None)
            self.since.pop(token, None)
            if seq is not None:  # else the status message, or a duplicate acknowledgement
                self.unsettled.append((seq, refusal))
        self._settle()
        if not self.transport.connected:
            return 0
        if self.in_flight and time.monotonic() - min(self.since.values()) > self.resend_after:
            # The client lost them (no acknowledgement long after reconnecting): hand them
            # over again from the outbox. A consumer sees at most a duplicate, marked by id.
            self.handed = min(self.in_flight.values()) - 1
            self.in_flight.clear()
            self.since.clear()
        room = self.window - len(self.in_flight)
        if room <= 0:
            return 0
        handed = 0
        for message in self.outbox.pending(after=self.handed, limit=room):
            sent = self.transport.publish(message.topic, message.payload)
            if sent is None:
                break
            self.in_flight[sent] = message.seq
            self.since[sent] = time.monotonic()
            self.handed = message.seq
            handed += 1
        return handed

    def _settle(self) -> None:
        """Record acknowledgements in the outbox, oldest first, until the store refuses."""
        try:
            while self.unsettled:
                seq, refusal = self.unsettled[0]
                if refusal is None:
                    self.outbox.ack(seq)
                    self.delivered += 1
                else:
                    self.outbox.refuse(seq, refusal)
                    self.refused += 1
                    self.errors.append(f"message {seq} refused by the broker: {refusal}")
                    log.error("broker refused message %s: %s", seq, refusal)
                self.unsettled.pop(0)
        except OutboxError as error:
            if self.store_error is None:
                log.error("the outbox cannot record acknowledgements, will retry: %s", error)
            self.store_error = str(error)
            return
        if self.store_error is not None:
            log.info("the outbox records acknowledgements again")
        self.store_error = None

    def run(self, stop: threading.Event, idle: float = 0.05) -> None:
        """Until `stop`; a store error never ends it (see `step`), nor does anything else:
        a courier that died would leave the box up and silent."""
        while not stop.is_set():
            try:
                handed = self.step()
            except OutboxError as error:  # reading the outbox failed: wait and try again
                self.store_error = str(error)
                handed = 0
                stop.wait(STORE_RETRY_S)
            except Exception:
                log.exception("courier step failed; carrying on")
                handed = 0
                stop.wait(STORE_RETRY_S)
            if not handed:
                self.wake.wait(idle)
                self.wake.clear()
