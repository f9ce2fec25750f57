"""Ingest killed (-9) while the tables keep publishing loses nothing: its MQTT session outlives
it, the broker queues what it missed, and the restarted worker stores every message once."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from room.store import Store
from tests.broker import Broker, ingest_process, publisher
from tests.test_room import alert_envelope


def _wait_stored(store: Store, count: int, seconds: float = 30) -> int:
    deadline = time.monotonic() + seconds
    while (stored := len(store.alerts())) < count and time.monotonic() < deadline:
        time.sleep(0.2)
    return stored


def test_ingest_killed_twice_loses_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'room.sqlite'}"
    store = Store.open(url)
    broker = Broker(tmp_path).start()
    tables = publisher(broker.port, "tables")
    seq = {"t1": 0, "t2": 0, "t3": 0}
    sent: list[str] = []

    def send(envelope: dict) -> None:  # type: ignore[type-arg]
        topic = f"paigow/s1/{envelope['table_id']}/alert"
        tables.publish(topic, json.dumps(envelope), qos=1).wait_for_publish(5)

    def publish(rounds: int) -> None:
        for _ in range(rounds):
            for table in seq:
                seq[table] += 1
                envelope = alert_envelope(seq[table], table)
                sent.append(envelope["body"]["id"])
                send(envelope)

    ingest = ingest_process(broker.port, url)
    try:
        # Until ingest has first subscribed nothing is queued for it: the tables repeat their
        # first message (one id: stored once) until it is stored.
        first = [alert_envelope(1, table) for table in seq]
        sent += [envelope["body"]["id"] for envelope in first]
        seq = dict.fromkeys(seq, 1)
        deadline = time.monotonic() + 30
        while len(store.alerts()) < 3:
            assert time.monotonic() < deadline, "ingest never subscribed"
            for envelope in first:
                send(envelope)
            time.sleep(0.5)
        for _ in range(2):
            os.kill(ingest.pid, signal.SIGKILL)
            ingest.wait(10)
            publish(10)  # while ingest is down
            ingest = ingest_process(broker.port, url)
            assert _wait_stored(store, len(sent)) == len(sent)
        publish(2)
        assert _wait_stored(store, len(sent)) == len(sent)
    finally:
        ingest.send_signal(signal.SIGTERM)
        ingest.wait(10)
        tables.loop_stop()
        broker.stop()
    assert sorted(a.id for a in store.alerts()) == sorted(sent)  # each once
    assert store.raise_gaps(0.0) == []  # nothing missing: no sequence gap
