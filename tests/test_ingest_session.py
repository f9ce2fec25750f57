"""Ingest killed (-9) while the tables keep publishing loses nothing: its MQTT session outlives
it, the broker queues what it missed, and the restarted worker stores every message once."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from room.store import Store
from tests.broker import Broker, Subscriber, ingest_process, publisher
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


def _words(workers: Subscriber) -> dict[str, str]:
    """Each ingest worker's newest word on its topic."""
    with workers.lock:
        return {topic.rsplit("/", 1)[1]: payload["raw"] for topic, payload in workers.messages}


def _wait_words(workers: Subscriber, expected: dict[str, str], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while _words(workers) != expected:
        assert time.monotonic() < deadline, f"workers say {_words(workers)}, not {expected}"
        time.sleep(0.1)


def test_a_worker_that_stays_down_has_its_share_served_by_the_other(tmp_path: Path) -> None:
    """Mosquitto keeps handing a down member of a shared subscription its share: the live
    worker takes over the down one's session and stores it, and gives it back on its return."""
    url = f"sqlite:///{tmp_path / 'room.sqlite'}"
    store = Store.open(url)
    broker = Broker(tmp_path).start()
    tables = publisher(broker.port, "tables")
    workers = Subscriber(broker.port, "paigow/room/ingest/workers/+", client_id="watch")
    sent: list[str] = []

    def publish(first: int, count: int) -> None:
        for seq in range(first, first + count):
            envelope = alert_envelope(seq, "t1")
            sent.append(envelope["body"]["id"])
            tables.publish("paigow/s1/t1/alert", json.dumps(envelope), qos=1).wait_for_publish(5)

    first = ingest_process(broker.port, url, "ingest-1")
    second = ingest_process(broker.port, url, "ingest-2")
    try:
        _wait_words(workers, {"ingest-1": "online", "ingest-2": "online"})
        os.kill(second.pid, signal.SIGKILL)
        second.wait(10)
        _wait_words(workers, {"ingest-1": "online", "ingest-2": "offline"})  # its last will
        publish(1, 100)
        # Without the stand-in, half of these wait for ingest-2 however long it stays down.
        assert _wait_stored(store, 100, seconds=20) == 100
        second = ingest_process(broker.port, url, "ingest-2")
        _wait_words(workers, {"ingest-1": "online", "ingest-2": "online"})
        publish(101, 100)
        assert _wait_stored(store, 200, seconds=20) == 200
        second.send_signal(signal.SIGTERM)  # a clean stop says offline too, without a will
        second.wait(20)
        _wait_words(workers, {"ingest-1": "online", "ingest-2": "offline"})
        publish(201, 20)
        assert _wait_stored(store, 220, seconds=20) == 220
    finally:
        for worker in (first, second):
            worker.send_signal(signal.SIGTERM)
            worker.wait(20)
        workers.close()
        tables.loop_stop()
        broker.stop()
    assert sorted(a.id for a in store.alerts()) == sorted(sent)  # each once
    assert store.raise_gaps(0.0) == []
