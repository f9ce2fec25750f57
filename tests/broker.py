"""A real Mosquitto for tests, started on a free port, and a subscriber that records messages."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def publisher(port: int, client_id: str = "tables") -> mqtt.Client:
    """A connected MQTT v5 client with its network loop running: the tables' side of a test."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", port)
    client.loop_start()
    return client


def ingest_process(
    port: int, store: str, client_id: str = "paigow-ingest"
) -> subprocess.Popen[bytes]:
    """`paigow ingest` as the room runs it: its own process, a stable client id."""
    return subprocess.Popen(
        [sys.executable, "-m", "paigow.cli", "ingest", "--broker", f"127.0.0.1:{port}",
         "--store", store, "--client-id", client_id],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Broker:
    """mosquitto -c CONF on PORT; `stop()` and `start()` again keep the same port and files."""

    def __init__(self, folder: Path, extra: str = "", port: int | None = None) -> None:
        self.folder = folder
        self.port = port or free_port()
        self.conf = folder / "mosquitto.conf"
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n"
            f"persistence true\npersistence_location {folder}/\n"
            "log_dest stderr\nlog_type error\n"
            + (extra or "allow_anonymous true\n")
            # As root, mosquitto would drop to its own user, who cannot read the test's files.
            + ("user root\n" if os.geteuid() == 0 else "")
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Broker:
        self.process = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.conf)], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                if self.process.poll() is not None:
                    assert self.process.stderr is not None
                    with self.process.stderr as stderr:
                        raise RuntimeError(stderr.read().decode()) from None
                time.sleep(0.02)
        raise RuntimeError("mosquitto did not start")

    def stop(self, kill: bool = False) -> None:
        if self.process is None:
            return
        if kill:
            self.process.kill()
        else:
            self.process.terminate()
        self.process.wait(10)
        if self.process.stderr:
            self.process.stderr.close()
        self.process = None


class Subscriber:
    """Records every message under a topic filter. A persistent session (MQTT v5, session
    expiry), so a broker restart with persistence does not drop what was queued for it."""

    def __init__(self, port: int, topic: str, client_id: str = "room", **login: Any) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []
        self.topic = topic
        self.lock = threading.Lock()
        self.ready = threading.Event()
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
        if login:
            client.username_pw_set(login["username"], login["password"])
            if "ca" in login:
                client.tls_set(ca_certs=login["ca"])
        client.on_connect = self._on_connect
        client.on_message = self._on_message
        client.on_disconnect = lambda *a: self.ready.clear()
        client.reconnect_delay_set(0.05, 0.2)
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = 3600
        client.connect_async("127.0.0.1", port, clean_start=False, properties=props)
        client.loop_start()
        self.client = client
        if not self.ready.wait(10):
            raise RuntimeError("subscriber could not connect")

    def _on_connect(self, client, userdata, flags, reason, properties) -> None:  # type: ignore[no-untyped-def]
        client.subscribe(self.topic, qos=1)
        self.ready.set()

    def _on_message(self, client, userdata, message) -> None:  # type: ignore[no-untyped-def]
        try:
            payload = json.loads(message.payload)
        except ValueError:
            payload = {"raw": message.payload.decode(errors="replace")}
        with self.lock:
            self.messages.append((message.topic, payload))

    def wait_for(self, count: int, timeout: float, topic_end: str = "") -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                got = [p for t, p in self.messages if t.endswith(topic_end)]
            if (
                len({p.get("message_id", id(p)) for p in got}) >= count
                or time.monotonic() > deadline
            ):
                return got
            time.sleep(0.05)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
