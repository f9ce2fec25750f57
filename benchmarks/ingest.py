"""Benchmark: the surveillance room's ingest under load.

    python3 benchmarks/ingest.py --tables 100 --rate 10 --seconds 60 --workers 2

A real Mosquitto on loopback (started here); one publisher plays `--tables` tables, each
publishing `--rate` alerts a second (QoS 1, MQTT v5) for `--seconds`; `--workers` separate
`paigow ingest` processes share the subscription and write one SQLite store. Reports the rate
sustained, and checks that every message was stored exactly once.
"""

from __future__ import annotations

import argparse
import json
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import closing
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.broker import Broker  # noqa: E402


def envelope(table: str, seq: int) -> bytes:
    alert_id = str(uuid.uuid4())
    return json.dumps(
        {
            "message_id": alert_id,
            "seq": seq,
            "table_id": table,
            "kind": "alert",
            "produced_at": time.time(),
            "body": {
                "id": alert_id,
                "kind": "exposed-tile-dealing",
                "severity": "medium",
                "table_id": table,
                "round_id": f"{table}:bench:{seq}",
                "position": 3,
                "rules": "mbs-2020",
                "clause": "5.1, 5.5.2",
                "expected": "every tile face down",
                "observed": "a face-up tile in p3",
                "confidence": 0.9,
                "evidence_time_s": 9.1,
                "raised_time_s": 9.4,
            },
        }
    ).encode()


def stored(path: Path) -> tuple[int, int]:
    with closing(sqlite3.connect(path)) as db:
        alerts = db.execute("SELECT COUNT(*) FROM alerts WHERE kind != 'sequence-gap'").fetchone()
        distinct = db.execute("SELECT COUNT(DISTINCT id) FROM alerts").fetchone()
    return int(alerts[0]), int(distinct[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--rate", type=float, default=10.0, help="alerts a second per table")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ingest-"))
    broker = Broker(folder).start()
    store = folder / "room.sqlite"
    subprocess.run(
        [sys.executable, "-m", "paigow.cli", "retention", "--days", "1", "--store", str(store)],
        check=True,
        capture_output=True,
    )
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "paigow.cli",
                "ingest",
                "--broker",
                f"127.0.0.1:{broker.port}",
                "--store",
                str(store),
                "--client-id",
                f"ingest-{k}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for k in range(args.workers)
    ]
    time.sleep(3.0)  # let the workers subscribe
    publisher = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="tables", protocol=mqtt.MQTTv5)
    publisher.max_inflight_messages_set(2000)
    publisher.connect("127.0.0.1", broker.port)
    publisher.loop_start()
    tables = [f"pgt-{k:03d}" for k in range(args.tables)]
    seq = dict.fromkeys(tables, 0)
    total = int(args.tables * args.rate * args.seconds)
    tick = 1 / args.rate
    started = time.monotonic()
    published = 0
    infos = []
    while published < total:
        for table in tables:
            seq[table] += 1
            infos.append(
                publisher.publish(f"paigow/bench/{table}/alert", envelope(table, seq[table]), qos=1)
            )
            published += 1
        time.sleep(max(0.0, started + (published / args.tables) * tick - time.monotonic()))
    for info in infos:
        info.wait_for_publish(60)
    sent_for = time.monotonic() - started
    while True:
        count, _ = stored(store)
        if count >= total or time.monotonic() - started > args.seconds * 3:
            break
        time.sleep(0.5)
    drained = time.monotonic() - started
    for worker in workers:
        worker.send_signal(signal.SIGTERM)
    stats = [
        json.loads((w.communicate(timeout=30)[0] or "{}").strip().splitlines()[-1]) for w in workers
    ]
    publisher.loop_stop()
    broker.stop()
    count, distinct = stored(store)
    print(
        f"published {total} alerts from {args.tables} tables in {sent_for:.1f} s "
        f"({total / sent_for:.0f}/s); stored {count} ({distinct} distinct ids) after "
        f"{drained:.1f} s: sustained {count / drained:.0f}/s; lost {total - count}; "
        f"workers stored {[s.get('stored') for s in stats]}, duplicates "
        f"{[s.get('duplicates') for s in stats]}"
    )
    return 0 if count == total == distinct else 1


if __name__ == "__main__":
    raise SystemExit(main())
