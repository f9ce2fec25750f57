"""Benchmark: the edge box's whole per-frame analysis, by resolution, on this CPU, one stage
after another (as before) and overlapped on both cores (`vision.pipeline`), side by side.

    python3 benchmarks/pipeline.py [--frames 40] [--resolutions 1280x720,1920x1080,3840x2160]
                                   [--detector PATH.onnx] [--refiner-stages N]
                                   [--half-turn-below BAR]

A simulated round's busiest stretch (every hand on the table, exposures) is rendered and written
to an MP4 per resolution; each way then decodes it on a thread of its own (as the camera thread
does) and analyses every frame: detector (whole-frame scan, dice close-up, both refiner stages),
reader, the marker detector twice a second of video (`MarkerWatch`, where it ships), round
follower. Reported: frames a second, the cores the process used meanwhile (CPU
time over wall time), the median ms of each stage, and whether the two ways gave the same
detections on every frame. "One after another" is the previous edge box: every model session on
2 threads, a frame's stages in turn. "Overlapped": sessions on 1 thread each, the scan of frame
n+1 beside the rest of frame n. `--detector` times a detector file that is not shipped (a
training checkpoint exported to ONNX: the timing depends on its architecture and input size,
not on how well it was trained); `--refiner-stages` runs only the first N shipped refiner stages
(0: none), to time a stage; `--half-turn-below` the reader's bar for reading an unsure tile
again turned half round (`vision.detector.HALF_TURN_BELOW`; 0: every tile read as cut only).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.detections import Detections  # noqa: E402
from vision.detector import HALF_TURN_BELOW, MODELS, REFINERS, Detector  # noqa: E402
from vision.follow import RoundFollower  # noqa: E402
from vision.pipeline import ahead  # noqa: E402
from vision.replay import ModelSource  # noqa: E402
from vision.synth.round import Studio  # noqa: E402
from vision.table import calibrate  # noqa: E402

FIRST_T = 16.0
"""Seconds into the round where every hand lies on the table and exposures begin."""


def cpu_flags() -> str:
    """What decides the detector's speed: 8-bit dot products (VNNI) or not."""
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return "CPU flags unknown"
    have = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni") if f in flags]
    return ", ".join(have) or "no AVX2"


def decoded(video: Path) -> Iterator[NDArray[np.uint8]]:
    capture = cv2.VideoCapture(str(video))
    try:
        while True:
            ok, image = capture.read()
            if not ok:
                return
            yield image
    finally:
        capture.release()


def run_way(
    video: Path, table: object, studio: Studio, overlapped: bool, args: argparse.Namespace
) -> tuple[float, float, dict[str, float], list[Detections]]:
    """Frames a second, cores used, median ms per stage, and every frame's detections."""
    threads = 1 if overlapped else 2
    models = ModelSource(threads=threads)
    models.detector = Detector(args.detector, threads=threads,
                               refiner=REFINERS[: args.refiner_stages])  # fmt: skip
    models.reader.half_turn_below = args.half_turn_below
    follower = RoundFollower(table, cut=studio.plan.cut, cut_options=studio.plan.cut_options)  # type: ignore[arg-type]
    ms: dict[str, list[float]] = {"scan": [], "rest": [], "follow": []}

    def scan(image: NDArray[np.uint8]) -> object:
        if not overlapped:
            return None
        started = time.perf_counter()
        scanned = models.scan(image)
        ms["scan"].append((time.perf_counter() - started) * 1000)
        return scanned

    found: list[Detections] = []
    wall, cpu = time.perf_counter(), os.times()
    for k, (image, ahead_scanned) in enumerate(ahead(decoded(video), scan)):
        started = time.perf_counter()
        scanned = ahead_scanned if overlapped else models.scan(image)
        if not overlapped:
            ms["scan"].append((time.perf_counter() - started) * 1000)
        middle, t = time.perf_counter(), FIRST_T + k * 0.1
        detections = models.detections(k, t, image, scanned)  # type: ignore[arg-type]
        ms["rest"].append((time.perf_counter() - middle) * 1000)
        middle = time.perf_counter()
        follower.follow(t, detections, image)
        ms["follow"].append((time.perf_counter() - middle) * 1000)
        found.append(detections)
    wall = time.perf_counter() - wall
    after = os.times()
    used = (after.user - cpu.user + after.system - cpu.system) / wall
    return len(found) / wall, used, {k: float(np.median(v)) for k, v in ms.items()}, found


def same(one: list[Detections], other: list[Detections]) -> int:
    return sum(
        a.labels == b.labels
        and np.array_equal(a.corners, b.corners)
        and np.array_equal(a.confidence, b.confidence)
        for a, b in zip(one, other, strict=True)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--resolutions", default="1280x720,1920x1080,3840x2160")
    parser.add_argument("--detector", type=Path, default=MODELS / "detector.onnx")
    parser.add_argument("--refiner-stages", type=int, default=len(REFINERS))
    parser.add_argument("--half-turn-below", type=float, default=HALF_TURN_BELOW)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; {cpu_flags()}")
    with tempfile.TemporaryDirectory() as scratch:
        for resolution in args.resolutions.split(","):
            width, height = (int(v) for v in resolution.split("x"))
            studio = Studio.of(4242, "mbs-2020", [], (width, height))
            table = calibrate(studio.frame(0.0)[0], table_id="bench", rules="mbs-2020")
            video = Path(scratch) / f"{resolution}.mp4"
            mp4v = cv2.VideoWriter_fourcc(*"mp4v")
            writer = cv2.VideoWriter(str(video), mp4v, 10, (width, height))
            for k in range(args.frames):
                writer.write(studio.frame(FIRST_T + k * 0.1)[0])
            writer.release()
            results = {}
            for overlapped in (False, True):
                results[overlapped] = run_way(video, table, studio, overlapped, args)
                fps, cores, ms, _ = results[overlapped]
                way = "overlapped       " if overlapped else "one after another"
                print(f"{resolution} {way}: {fps:5.1f} frames/s, {cores:.2f} cores; "
                      f"scan {ms['scan']:.1f} ms, close-up+refine+read {ms['rest']:.1f} ms, "
                      f"follow {ms['follow']:.1f} ms")  # fmt: skip
            alike = same(results[False][3], results[True][3])
            print(f"{resolution}: same detections both ways on {alike} of {args.frames} frames")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
