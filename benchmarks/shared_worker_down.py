"""Benchmark: two ingest workers share the tables' messages and one is killed.

    python3 benchmarks/shared_worker_down.py

A real Mosquitto on loopback (started here) and two real `paigow ingest` workers with their
persistent sessions in one shared subscription; one is killed -9 and at once a table publishes
100 alerts. Mosquitto (as the MQTT 5 spec allows) keeps handing the killed member its share; the
live worker stands in for it after `STAND_IN_AFTER_S`. Reported: how many were stored 1 s after
publishing and when the last was; then the same with the killed worker back. The measurement
behind docs/room.md#ingest.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from room.store import Store  # noqa: E402
from tests.broker import Broker, ingest_process, publisher  # noqa: E402
from tests.test_room import alert_envelope  # noqa: E402

SENT = 100


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="shared-"))
    broker = Broker(folder).start()
    url = f"sqlite:///{folder / 'room.sqlite'}"
    store = Store.open(url)

    def stored() -> int:
        return sum(a.kind != "sequence-gap" for a in store.alerts(limit=10_000))

    table = publisher(broker.port, "t1")

    def send(seq: int) -> None:
        envelope = json.dumps(alert_envelope(seq, "t1"))
        table.publish("paigow/s1/t1/alert", envelope, qos=1).wait_for_publish(5)

    first = ingest_process(broker.port, url, "ingest-1")
    second = ingest_process(broker.port, url, "ingest-2")
    deadline = time.monotonic() + 30
    while stored() < 1:  # until a worker has subscribed, seq 1 again and again
        if time.monotonic() > deadline:
            raise SystemExit("ingest never subscribed")
        send(1)
        time.sleep(0.5)
    time.sleep(2)  # both subscribed

    def burst(first_seq: int) -> tuple[int, float]:
        """Alerts stored 1 s after the burst was sent, and seconds until all were."""
        for seq in range(first_seq, first_seq + SENT):
            send(seq)
        sent_at = time.monotonic()
        within_1s = None
        while (count := stored()) < first_seq + SENT - 1:
            if within_1s is None and time.monotonic() - sent_at >= 1:
                within_1s = count
            if time.monotonic() - sent_at > 60:
                raise SystemExit(f"only {count} stored a minute later")
            time.sleep(0.05)
        return (within_1s or count) - (first_seq - 1), time.monotonic() - sent_at

    os.kill(second.pid, signal.SIGKILL)
    second.wait(10)
    down = burst(2)
    second = ingest_process(broker.port, url, "ingest-2")
    time.sleep(3)  # back, its session taken back from the stand-in
    back = burst(2 + SENT)
    for worker in (first, second):
        worker.send_signal(signal.SIGTERM)
        worker.wait(30)
    table.loop_stop()
    broker.stop()
    print(
        f"{SENT} alerts sent just after one of two workers was killed: {down[0]} stored within "
        f"1 s, all {SENT} after {down[1]:.1f} s; with both up again: {back[0]} within 1 s, "
        f"all after {back[1]:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
