"""Benchmark: where a whole frame's analysis time goes, model by model, on this CPU.

    python3 benchmarks/frame_costs.py [--frames 40] [--resolution 1920x1080] [--threads 2]

The busiest stretch of a simulated round (`benchmarks/pipeline.py`'s: every hand on the table,
exposures) is rendered, written to an MP4 and decoded; every frame is then analysed whole, one
stage after another, as `paigow replay --whole-frames` does (`vision.replay.ModelSource`: the
detector's whole-frame pass and its closer look at the dice, both refiner stages, the tile
reader, the dice and flatness readers, the marker and chips looks on their own schedule). Each
model session's runs are timed where they are called, so the table says which model a faster
frame has to come from; the rest is Python (cropping, suppression, bookkeeping). `pipeline.py`
times the same work overlapped on both cores, which is how the edge box runs it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.replay import ModelSource  # noqa: E402
from vision.synth.round import Studio  # noqa: E402

FIRST_T = 16.0
"""Seconds into the round where every hand lies on the table and exposures begin."""
ANALYSED_FPS = 10
"""Frames analysed a second of video, as the edge box does: the marker looks' schedule counts
in seconds of video, so their share of a frame depends on it."""


def timed(session: Any, name: str, spent: dict[str, list[float]], whole_width: int) -> None:
    """Time every run of one onnxruntime session under `name`; the detector's runs on an input
    narrower than the whole frame's (`whole_width`) are its closer look at the dice."""
    run: Callable[..., Any] = session.run

    def timed_run(output_names: Any, feed: dict[str, np.ndarray], *rest: Any) -> Any:
        started = time.perf_counter()
        try:
            return run(output_names, feed, *rest)
        finally:
            kind = name
            if name == "detector":
                wide = next(iter(feed.values())).shape[-1] >= whole_width
                kind = "detector, whole" if wide else "detector, dice"
            spent[kind].append((time.perf_counter() - started) * 1000)

    session.run = timed_run


def sessions(models: ModelSource) -> dict[str, Any]:
    """Every model session the whole-frame analysis runs, named by the stage that runs it."""
    found: dict[str, Any] = {"detector": models.detector.session}
    if models.detector.refiner is not None:
        for k, (session, _, _) in enumerate(models.detector.refiner.stages, 1):
            found[f"refiner stage {k}"] = session
    reader = models.reader
    found |= {"tile reader": reader.session, "dice reader": reader.dice,
              "flatness reader": reader.flatness}  # fmt: skip
    if models.watch is not None:
        markers = models.watch.detector
        found |= {"markers": markers.session, "marker faces": markers.faces,
                  "chips": markers.chips}  # fmt: skip
    return {name: session for name, session in found.items() if session is not None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--resolution", default="1920x1080")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    try:
        width, height = (int(v) for v in args.resolution.split("x"))
    except ValueError:
        parser.error(f"--resolution {args.resolution!r} is not WIDTHxHEIGHT")
    if args.frames < 1 or args.threads < 1:
        parser.error("--frames and --threads must be 1 or more")
    studio = Studio.of(4242, "mbs-2020", [], (width, height))
    with tempfile.TemporaryDirectory() as scratch:
        video = Path(scratch) / "round.mp4"
        writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"mp4v"), ANALYSED_FPS,
                                 (width, height))  # fmt: skip
        for k in range(args.frames + 1):
            writer.write(studio.frame(FIRST_T + k / ANALYSED_FPS)[0])
        writer.release()
        capture = cv2.VideoCapture(str(video))
        frames = []
        while (read := capture.read())[0]:
            frames.append(read[1])
        capture.release()
    models = ModelSource(threads=args.threads)
    models.detections(0, FIRST_T, frames[0])  # the first run of a session sets it up: not timed
    spent: dict[str, list[float]] = defaultdict(list)
    for name, session in sessions(models).items():
        timed(session, name, spent, models.detector.width)
    whole = []
    for k, image in enumerate(frames[1:], 1):
        started = time.perf_counter()
        models.detections(k, FIRST_T + k / ANALYSED_FPS, image)
        whole.append((time.perf_counter() - started) * 1000)
    count = len(whole)
    print(f"{os.cpu_count()} cores, {args.threads} threads a session; {count} frames of "
          f"{args.resolution} analysed whole: {np.mean(whole):.1f} ms a frame on average, "
          f"{np.median(whole):.1f} at the median")  # fmt: skip
    print(f"{'model':<18} {'runs a frame':>12} {'ms a run':>9} {'ms a frame':>11} {'share':>6}")
    in_models = 0.0
    for name, runs in sorted(spent.items(), key=lambda item: -sum(item[1])):
        per_frame = sum(runs) / count
        in_models += per_frame
        print(f"{name:<18} {len(runs) / count:>12.2f} {np.median(runs):>9.1f} "
              f"{per_frame:>11.1f} {per_frame / np.mean(whole):>6.0%}")  # fmt: skip
    rest = float(np.mean(whole)) - in_models
    print(f"{'Python between':<18} {'':>12} {'':>9} {rest:>11.1f} {rest / np.mean(whole):>6.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
