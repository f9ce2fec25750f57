"""Benchmark: two ingest workers share the tables' messages and one is killed.

    python3 benchmarks/shared_worker_down.py

A real Mosquitto on loopback (started here) and two real `paigow ingest` workers with their
persistent sessions in one shared subscription; one is killed -9, a table publishes 100 alerts,
and the store is counted 6 s later, then again 6 s after the worker is back. Mosquitto (like the
MQTT 5 spec allows) keeps handing a disconnected persistent member its share: the measurement
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
    os.kill(second.pid, signal.SIGKILL)
    second.wait(10)
    for seq in range(2, SENT + 2):
        send(seq)
    time.sleep(6)
    while_down = stored() - 1
    second = ingest_process(broker.port, url, "ingest-2")
    time.sleep(6)
    after = stored() - 1
    for worker in (first, second):
        worker.send_signal(signal.SIGTERM)
        worker.wait(30)
    table.loop_stop()
    broker.stop()
    print(
        f"{SENT} alerts sent while one of two shared workers was down: {while_down} stored 6 s "
        f"later by the other; {after} stored 6 s after the second came back"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
