"""Ingest refuses what a box could never have sent, keeps each refusal as a dead letter with its
reason, and carries on: the malformed and forged messages that once stopped it for good."""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from room.ingest import MAX_PAYLOAD, Ingest, RefusedError, check_envelope
from room.store import DEAD_LETTER_BYTES, Store
from tests.broker import Broker, publisher
from tests.test_room import alert_envelope, health

Edit = Callable[[dict], object]  # type: ignore[type-arg]


def _set(path: str, value: object) -> Edit:
    def edit(envelope: dict) -> object:  # type: ignore[type-arg]
        *parents, last = path.split(".")
        target = envelope
        for key in parents:
            target = target[key]
        target[last] = value
        return envelope

    return edit


def _nested(depth: int) -> Edit:
    return lambda envelope: ("[" * depth + "]" * depth).encode()


# (what, how the payload is spoilt, words the reason must carry) - each from issue 39's list
MALFORMED: list[tuple[str, Edit, str]] = [
    ("position an object", _set("body.position", {"box": 3}), "body.position"),
    ("expected a list", _set("body.expected", ["1-4", "2-3"]), "body.expected"),
    ("JSON nested 100k deep", _nested(100_000), "nested too deep"),
    ("seq 2**63", _set("seq", 2**63), "seq"),
    ("seq 10**30", _set("seq", 10**30), "seq"),
    ("seq 0", _set("seq", 0), "seq"),
    ("seq -5", _set("seq", -5), "seq"),
    ("seq 1.7", _set("seq", 1.7), "seq"),
    ("seq true", _set("seq", True), "seq"),
    ("position 'abc'", _set("body.position", "abc"), "body.position"),
    ("8 MB observed", _set("body.observed", "x" * 8_000_000), "bytes, more than"),
    ("10,000-character id", _set("message_id", "m" * 10_000), "message_id"),
    ("another table's alert", _set("table_id", "t2"), "published on table t1's topic"),
    ("another table in the body", _set("body.table_id", "t2"), "body of table 't2'"),
    ("from the far future", _set("produced_at", 1e308), "produced_at"),
    ("not JSON", lambda envelope: b"\xff\xfe not json", "not JSON"),
]


@pytest.mark.parametrize(("what", "spoil", "reason"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_each_malformed_envelope_is_refused_with_its_reason(what: str, spoil: Edit,
                                                            reason: str) -> None:  # fmt: skip
    spoilt = spoil(copy.deepcopy(alert_envelope(7)))
    payload = spoilt if isinstance(spoilt, bytes) else json.dumps(spoilt).encode()
    with pytest.raises(RefusedError) as refused:
        check_envelope("paigow/s1/t1/alert", payload, now=time.time())
    assert reason in str(refused.value), str(refused.value)


def test_a_good_envelope_passes() -> None:
    payload = json.dumps(alert_envelope(7)).encode()
    assert check_envelope("paigow/s1/t1/alert", payload, now=time.time())["seq"] == 7
    assert len(payload) < MAX_PAYLOAD


def _published(sender: mqtt.Client, topic: str, payload: bytes) -> None:
    sender.publish(topic, payload, qos=1).wait_for_publish(5)


def test_ingest_stays_up_keeps_dead_letters_and_stores_the_next_good_one(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'room.sqlite'}")
    broker = Broker(tmp_path).start()
    sender = publisher(broker.port, "boxes")
    stop = threading.Event()
    worker = Ingest(store, host="127.0.0.1", port=broker.port)
    thread = threading.Thread(target=worker.run, args=(stop,), daemon=True)
    thread.start()
    try:
        assert worker.ready.wait(10)
        for _, spoil, _ in MALFORMED:
            spoilt = spoil(copy.deepcopy(alert_envelope(1)))
            payload = spoilt if isinstance(spoilt, bytes) else json.dumps(spoilt).encode()
            _published(sender, "paigow/s1/t1/alert", payload)
        forged = health("t2", time.time())  # t1 reporting as t2
        _published(sender, "paigow/s1/t1/health", json.dumps(forged).encode())
        future = health("t1", 1e308)  # would hide every real report after it
        _published(sender, "paigow/s1/t1/health", json.dumps(future).encode())
        _published(sender, "paigow/s1/t1/alert", json.dumps(alert_envelope(1)).encode())
        deadline = time.monotonic() + 30
        while worker.stats.stored < 1 or worker.stats.rejected < len(MALFORMED) + 2:
            assert thread.is_alive(), "ingest stopped"
            assert time.monotonic() < deadline, worker.stats
            time.sleep(0.1)
    finally:
        stop.set()
        thread.join(5)
        sender.loop_stop()
        broker.stop()
    assert worker.stats.stored == 1 and worker.stats.rejected == len(MALFORMED) + 2
    letters = store.dead_letters()
    assert len(letters) == len(MALFORMED) + 2
    assert all(letter.reason and len(letter.payload) <= DEAD_LETTER_BYTES for letter in letters)
    assert any("t2" in letter.reason and letter.topic.endswith("/health") for letter in letters)
    assert any("at 1e+308" in letter.reason for letter in letters)
    assert [a.table_id for a in store.alerts()] == ["t1"]
    assert store.table_conditions() == [] or all(
        c.table_id != "t2" for c in store.table_conditions()
    )
