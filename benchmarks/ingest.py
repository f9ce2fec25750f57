"""Benchmark: the surveillance room's ingest under load.

    python3 benchmarks/ingest.py --tables 50 --rate 40 --seconds 30 --workers 2 --evidence-kb 12

A real Mosquitto on loopback (started here); one publisher plays `--tables` tables, each
publishing `--rate` alerts a second (QoS 1, MQTT v5), each with `--evidence-kb` of evidence
JPEG (base64), for `--seconds`; `--workers` separate `paigow ingest` processes share the
subscription and write one store (SQLite, or `--store URL`). Reports the rate sustained, the
delay from publishing to stored (p50, p99, max: the store's arrival time against the publish
time, one clock), and checks that every message was stored exactly once.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import func, select  # noqa: E402

from room.store import AlertRow, Store  # noqa: E402
from tests.broker import Broker  # noqa: E402


def envelope(table: str, seq: int, evidence: str | None) -> tuple[str, bytes]:
    alert_id = str(uuid.uuid4())
    return alert_id, json.dumps(
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
            "evidence_jpeg": evidence,
        }
    ).encode()


def stored(store: Store) -> tuple[int, int]:
    with store.session() as s:
        alerts = s.scalar(select(func.count()).where(AlertRow.kind != "sequence-gap"))
        distinct = s.scalar(select(func.count(func.distinct(AlertRow.id))))
    return int(alerts or 0), int(distinct or 0)


def arrivals(store: Store) -> dict[str, float]:
    with store.session() as s:
        return {i: at for i, at in s.execute(select(AlertRow.id, AlertRow.received_at))}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--rate", type=float, default=10.0, help="alerts a second per table")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--evidence-kb", type=float, default=12.0, help="evidence per alert")
    parser.add_argument("--store", help="store URL (default: a new SQLite file)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ingest-"))
    broker = Broker(folder).start()
    url = args.store or f"sqlite:///{folder / 'room.sqlite'}"
    store = Store.open(url)
    evidence = base64.b64encode(random.randbytes(int(args.evidence_kb * 1024))).decode() or None
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
                url,
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
    sent_at: dict[str, float] = {}
    while published < total:
        for table in tables:
            seq[table] += 1
            alert_id, payload = envelope(table, seq[table], evidence)
            sent_at[alert_id] = time.time()
            infos.append(publisher.publish(f"paigow/bench/{table}/alert", payload, qos=1))
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
    delays = [at - sent_at[i] for i, at in arrivals(store).items() if i in sent_at]
    print(
        f"published {total} alerts ({args.evidence_kb:g} KB evidence) from {args.tables} tables "
        f"in {sent_for:.1f} s ({total / sent_for:.0f}/s); stored {count} ({distinct} distinct "
        f"ids) after {drained:.1f} s: sustained {count / drained:.0f}/s; lost {total - count}; "
        f"published to stored p50 {percentile(delays, 0.5) * 1000:.0f} ms, "
        f"p99 {percentile(delays, 0.99) * 1000:.0f} ms, max {max(delays) * 1000:.0f} ms; "
        f"workers stored {[s.get('stored') for s in stats]}, duplicates "
        f"{[s.get('duplicates') for s in stats]}"
    )
    return 0 if count == total == distinct else 1


if __name__ == "__main__":
    raise SystemExit(main())
