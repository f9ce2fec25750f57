"""Benchmark: alert latency from the frame that shows the evidence to a subscriber receiving it.

    python3 benchmarks/alert_latency.py --passes 100

A real Mosquitto on loopback (started here), the box's own path for every alert: the round
follower on the frame, the evidence crop encoded, the outbox commit (fsync), the courier, MQTT
v5 QoS 1, the broker, a subscriber. The clock starts when the frame is handed to the follower
(decoding and detection are not included: they are the detector's benchmark) and stops when the
subscriber's callback sees the message. The fixture round with two irregularities is followed
again and again, frames paced at `--pace` per second.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from edge.app import EdgeApp  # noqa: E402
from edge.config import EdgeConfig  # noqa: E402
from tests.broker import Broker  # noqa: E402
from vision.follow import RoundFollower  # noqa: E402
from vision.follow.records import Alert  # noqa: E402
from vision.replay import frames  # noqa: E402
from vision.table import calibrate  # noqa: E402

ROUND = ROOT / "tests" / "fixtures" / "rounds" / "nz-irregular"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=100)
    parser.add_argument("--pace", type=float, default=100.0, help="frames per second fed")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="latency-"))
    broker = Broker(folder).start()
    truth = json.loads((ROUND / "truth.json").read_text())
    first = next(frames(ROUND / "round.mp4", 10))[2]
    calibrate(first, table_id="t1", rules=truth["rules"], banker=1).write(folder / "table.yaml")
    config = EdgeConfig.model_validate(
        {
            "table": folder / "table.yaml",
            "camera": {"source": str(ROUND / "round.mp4")},
            "analysis": {
                "labels": ROUND / "frames.json.gz",
                "cut": truth["cut"],
                "cut_options": truth["cut_options"],
            },
            "mqtt": {"host": "127.0.0.1", "port": broker.port, "site": "bench"},
            "outbox": {"path": folder / "outbox.sqlite", "min_free_mb": 0},
            "observability": {"metrics_port": 0},
        }
    )
    app = EdgeApp(config)
    received: dict[str, float] = {}

    def on_message(client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        received.setdefault(json.loads(message.payload)["message_id"], time.perf_counter())

    room = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="room", protocol=mqtt.MQTTv5)
    room.on_message = on_message
    room.connect("127.0.0.1", broker.port)
    room.subscribe("paigow/bench/t1/alert", qos=1)
    room.loop_start()
    app.transport.start()
    courier = threading.Thread(target=app.courier.run, args=(app.stop,), daemon=True)
    courier.start()
    time.sleep(1.0)
    images = [image for _, _, image, _ in frames(ROUND / "round.mp4", 10)]
    source = app.source
    started: dict[str, float] = {}
    offset = 0.0
    for _ in tqdm(range(args.passes), desc="passes", unit="round"):
        app.follower = RoundFollower(
            app.table, run="bench", cut=truth["cut"], cut_options=truth["cut_options"]
        )
        for index, image in enumerate(images):
            t = round(index / 10, 3)
            detections = source.detections(index, t, image)
            due = time.perf_counter() + 1 / args.pace
            t0 = time.perf_counter()
            raised = app.follower.follow(offset + t, detections, image)
            app._publish_raised(raised)
            for item in raised:
                if isinstance(item.record, Alert):
                    started[str(item.record.id)] = t0
            time.sleep(max(0.0, due - time.perf_counter()))
        app._publish_raised(app.follower.finish(offset + t))
        offset += 30.0
    deadline = time.monotonic() + 10
    while len(received.keys() & started.keys()) < len(started) and time.monotonic() < deadline:
        time.sleep(0.05)
    app.stop.set()
    app.transport.stop()
    room.loop_stop()
    broker.stop()
    latency = np.array([(received[i] - t0) * 1000 for i, t0 in started.items() if i in received])
    lost = len(started) - len(latency)
    p50, p95, p99 = np.percentile(latency, [50, 95, 99])
    print(
        f"{len(latency)} alerts received of {len(started)} raised ({lost} lost); latency "
        f"ms p50 {p50:.1f}, p95 {p95:.1f}, p99 {p99:.1f}, max {latency.max():.1f}"
    )
    return 0 if lost == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
