"""Benchmark: the edge box's whole per-frame analysis, by resolution, on this CPU.

    python3 benchmarks/pipeline.py [--detector PATH.onnx] [--refiner-stages N] [--threads 2]

Frames of a simulated round are rendered at 1280x720, 1920x1080 and 3840x2160; each goes through
detection (the ONNX detector), reading (the ONNX reader on every detected box) and the round
follower. Reports median ms per stage and frames per second. `--detector` times a detector file
that is not shipped (for instance a training checkpoint exported to ONNX): the timing does not
depend on how well it was trained, only on its architecture and input size.
`--refiner-stages` runs only the first N shipped refiner stages (0: none), to time a stage.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.detector import MODELS, REFINERS, Detector, Reader  # noqa: E402
from vision.follow import RoundFollower  # noqa: E402
from vision.synth.round import Studio  # noqa: E402
from vision.table import calibrate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detector", type=Path, default=MODELS / "detector.onnx")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--refiner-stages", type=int, default=len(REFINERS))
    args = parser.parse_args()
    detector = Detector(args.detector, threads=args.threads,
                        refiner=REFINERS[: args.refiner_stages])  # fmt: skip
    reader = Reader(threads=args.threads)
    stages = len(detector.refiner.stages) if detector.refiner else 0
    print(f"detector input {detector.width}x{detector.height}, {stages} refiner stages, "
          f"{args.threads} threads")  # fmt: skip
    for width, height in ((1280, 720), (1920, 1080), (3840, 2160)):
        studio = Studio.of(4242, "mbs-2020", [], (width, height))
        image, _, _ = studio.frame(0.0)
        table = calibrate(image, table_id="bench", rules="mbs-2020")
        follower = RoundFollower(table, cut=studio.plan.cut, cut_options=studio.plan.cut_options)
        times: dict[str, list[float]] = {"detect": [], "read": [], "follow": [], "total": []}
        boxes = []
        for k in range(args.frames):
            t = 16.0 + k * 0.1  # the busiest part: every hand on the table, exposures
            image, _, _ = studio.frame(t)
            t0 = time.perf_counter()
            found = detector.detect(image)
            t1 = time.perf_counter()
            read = reader.read(image, found)
            t2 = time.perf_counter()
            follower.follow(t, read, image)
            t3 = time.perf_counter()
            for name, value in zip(times, (t1 - t0, t2 - t1, t3 - t2, t3 - t0), strict=True):
                value_ms = value * 1000
                times[name].append(value_ms)
            boxes.append(len(found))
        median = {name: float(np.median(v)) for name, v in times.items()}
        print(
            f"{width}x{height}: detect {median['detect']:.1f} ms, read {median['read']:.1f} ms "
            f"({np.median(boxes):.0f} boxes), follow {median['follow']:.1f} ms, total "
            f"{median['total']:.1f} ms = {1000 / median['total']:.1f} frames/s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
