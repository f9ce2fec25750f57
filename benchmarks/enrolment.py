"""Benchmark: what enrolment costs, once at the display and on every frame after.

    python3 benchmarks/enrolment.py [--repeats 7]

The opening display is a simulated one in the house look (`vision.synth.display`, 1920x1080);
`vision.enrol.enrol` runs on it with the shipped detector and reader (finding, ten reader passes,
placing, checking). Then a moment of play drawn in the same set is read by the reader alone and
by the reader with the enrolled set (`Reader.known_set`), on the detector's boxes of that frame,
with and without the set's looks (each face-up tile judged by the set-look model, where
`models/setlook.onnx` is shipped): the difference is what reading by the set adds to a frame.
Medians of `--repeats` runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace

import numpy as np

from vision.detector import Detector, Reader
from vision.enrol import KnownSet, enrol
from vision.synth.display import render_display

SEED = 2
"""A house display the shipped detector boxes tile by tile (accepted: docs/enrolment.md)."""


def median_ms(work, repeats: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    from vision.training.enrolment import play_scene

    detector, reader = Detector(), Reader()
    _, rendering, _ = render_display(SEED, "house", "rows")
    enrolment = enrol(rendering.image, detector, reader)
    if not enrolment.whole:
        print(f"the display was refused: {enrolment.problems}", file=sys.stderr)
        return 1
    took = median_ms(lambda: enrol(rendering.image, detector, reader), args.repeats)
    play = play_scene(SEED * 10, SEED, "house").image
    boxes = detector.detect(play)
    alone = median_ms(lambda: reader.read(play, boxes), args.repeats * 3)
    known = KnownSet.of(enrolment)
    reader.known_set = replace(known, looks=None)
    by_faces = median_ms(lambda: reader.read(play, boxes), args.repeats * 3)
    reader.known_set = known
    with_set = median_ms(lambda: reader.read(play, boxes), args.repeats * 3)
    judged = int(np.sum(reader.read(play, boxes).set_distance > 0))
    tiles = int(np.sum([label != "die" for label in boxes.labels]))
    print(f"enrolment of a 1920x1080 display: {took:.0f} ms")
    print(f"reading a frame's {len(boxes)} boxes ({tiles} tiles): {alone:.1f} ms alone, "
          f"{by_faces:.1f} ms by the set's faces (+{by_faces - alone:.1f} ms), "
          f"{with_set:.1f} ms by its faces and looks ({judged} face-up tiles judged): "
          f"+{with_set - alone:.1f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
