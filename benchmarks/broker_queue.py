"""Benchmark: what the broker does past its queue limit while ingest is down.

    python3 benchmarks/broker_queue.py --limit 200 --sent 500

A real Mosquitto on loopback (started here) with `max_queued_messages LIMIT`; a real
`paigow ingest` subscribes (its persistent session), is killed -9, one table publishes `--sent`
alerts (QoS 1) while it is down, then ingest starts again. Reports how many the publisher had
acknowledged, how many reached the store, and the `sequence-gap` alerts the room raised for the
rest: the measurement behind docs/mqtt.md#the-brokers-queue.
"""

from __future__ import annotations

import argparse
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


def stored_alerts(store: Store) -> tuple[int, list[str]]:
    alerts = store.alerts(limit=100_000)
    gaps = [a.observed or "" for a in alerts if a.kind == "sequence-gap"]
    return len(alerts) - len(gaps), gaps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=200, help="max_queued_messages")
    parser.add_argument("--sent", type=int, default=500, help="alerts sent while ingest is down")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="queue-"))
    broker = Broker(folder, f"allow_anonymous true\nmax_queued_messages {args.limit}\n").start()
    url = f"sqlite:///{folder / 'room.sqlite'}"
    store = Store.open(url)
    table = publisher(broker.port, "t1")

    def send(seq: int) -> bool:
        info = table.publish("paigow/s1/t1/alert", json.dumps(alert_envelope(seq, "t1")), qos=1)
        info.wait_for_publish(10)
        return info.is_published()

    worker = ingest_process(broker.port, url)
    deadline = time.monotonic() + 30
    while stored_alerts(store)[0] < 1:  # until ingest has subscribed, seq 1 again and again
        if time.monotonic() > deadline:
            raise SystemExit("ingest never subscribed")
        send(1)
        time.sleep(0.5)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(10)
    acknowledged = sum(send(seq) for seq in range(2, args.sent + 2))
    worker = ingest_process(broker.port, url)
    time.sleep(3)
    send(args.sent + 2)  # one more once it is back: the jump shows the gap
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        count, gaps = stored_alerts(store)
        if gaps:
            break
        if count >= args.sent + 2:
            break
        time.sleep(0.5)
    time.sleep(35)  # ingest raises a gap 30 s after noticing it (late numbers may still come)
    count, gaps = stored_alerts(store)
    worker.send_signal(signal.SIGTERM)
    worker.wait(30)
    table.loop_stop()
    broker.stop()
    down = args.sent
    print(
        f"max_queued_messages {args.limit}: {down} alerts sent while ingest was down, "
        f"{acknowledged} acknowledged to the table by the broker; stored {count - 2} of them "
        f"(+ the one before and the one after); lost {down - (count - 2)}; "
        f"sequence-gap alerts: {gaps}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
