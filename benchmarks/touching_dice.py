"""Measure: three touching dice in the round studio, found and read with and without the
detector's closer look at the dice.

    python3 benchmarks/touching_dice.py [--frames 20]

Each frame is a simulated round half a second after its dice land (seeds 11 on, 1920x1080):
the three dice lie a few millimetres apart, as a dealer shows them. Counts the frames whose
dice are found and read exactly, and those with a box too many or a die too few.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.detector import Detector, Reader  # noqa: E402
from vision.synth.round import Studio, Timeline  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20)
    args = parser.parse_args()
    frames = []
    for seed in range(11, 11 + args.frames):
        studio = Studio.of(seed, "nz-1998", [], (1920, 1080))
        image, objects, _ = studio.frame(Timeline.of().dice + 0.5)
        dice = sorted(str(o["label"]) for o in objects if str(o["label"]).startswith("die-"))
        frames.append((image, dice))
    reader = Reader()
    for zoom in (False, True):
        detector = Detector(zoom=zoom)
        exact = extra = fewer = 0
        for image, dice in frames:
            found = reader.read(image, detector.detect(image)).labels
            read = sorted(label for label in found if label.startswith("die-"))
            exact += read == dice
            extra += len(read) > len(dice)
            fewer += len(read) < len(dice)
        print(f"closer look {'on ' if zoom else 'off'}: {exact} of {len(frames)} frames exact, "
              f"{extra} with a box too many, {fewer} with a die too few")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
