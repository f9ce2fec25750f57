"""Benchmark: what evidence clips cost the edge box, and what they weigh.

    python3 benchmarks/clips.py [--resolution 1920x1080]

A simulated round's frames (10 a second, its delivery and setting: the busiest part) go through
the box's frame ring (`edge.clips`) as the analysis loop feeds it; an alert at 17 s then gets
its clip. Reported: ms per frame to keep a frame (scale, JPEG), the ring's size, ms to make one
clip (annotate, encode), and the clip's and the still's size against ingest's 1 MB limit.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from edge.clips import ClipMaker, ClipSettings  # noqa: E402
from room.ingest import MAX_PAYLOAD  # noqa: E402
from vision.detections import Detections  # noqa: E402
from vision.follow.records import Alert  # noqa: E402
from vision.synth.round import Studio  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resolution", default="1920x1080")
    args = parser.parse_args()
    width, height = (int(v) for v in args.resolution.split("x"))
    studio = Studio.of(4242, "mbs-2020", [], (width, height))
    maker = ClipMaker(ClipSettings(), fps=10.0, image_width=width)
    keep_ms = []
    for k in range(60):
        t = 13.0 + k / 10
        image, labels, _ = studio.frame(t)
        found = Detections(
            np.array([o["corners"] for o in labels], float).reshape(-1, 4, 2),
            np.ones(len(labels)),
            tuple(str(o["label"]) for o in labels),
        )
        started = time.perf_counter()
        maker.add(t, image, found)
        keep_ms.append((time.perf_counter() - started) * 1000)
    alert = Alert(kind="hands-swapped", severity="critical", table_id="b", round_id="b:1",
                  rules="mbs-2020", clause="5.7", confidence=1.0, evidence_time_s=17.0,
                  raised_time_s=17.0)  # fmt: skip
    maker.want(alert, (800, 400, 1100, 700))
    started = time.perf_counter()
    (job,) = maker.due(19.0)
    due_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    made = maker.make(job)
    clip_ms = (time.perf_counter() - started) * 1000
    seconds = made.to_s - made.from_s
    message = (len(made.clip_webm) + len(made.frame_jpeg)) * 4 / 3  # base64 in the envelope
    print(f"{args.resolution}: keeping a frame {np.median(keep_ms):.1f} ms median "
          f"(p90 {np.percentile(keep_ms, 90):.1f}); ring {len(maker.ring.frames)} frames, "
          f"{maker.ring.bytes / 1e6:.1f} MB")  # fmt: skip
    clip_kb, still_kb = len(made.clip_webm) / 1e3, len(made.frame_jpeg) / 1e3
    print(f"one clip of {seconds:.1f} s: its frames taken in {due_ms:.2f} ms on the analysis "
          f"thread, made in {clip_ms:.0f} ms on the clip thread; clip {clip_kb:.0f} KB, "
          f"still {still_kb:.0f} KB; the message {message / 1e3:.0f} KB of ingest's "
          f"{MAX_PAYLOAD / 1e3:.0f} KB")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
