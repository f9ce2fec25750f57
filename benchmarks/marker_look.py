"""Measure: milliseconds of one look for markers and chips, with and without a chips model.

    python3 benchmarks/marker_look.py [--chips models/chips.onnx [OTHER.onnx ...]] [--repeats 15]

A look runs the marker detector and its face reader on a full-table 1080p frame (seed 4242,
never trained on) twice a second of video (`vision.detector.MARKER_EVERY_S`); a chips model runs
beside them at every other look (`vision.detector.CHIPS_EVERY_S`). Prints the median of
`--repeats` looks (the first two left out), for the marker models alone and with each chips
model, timed one after another in one process so that they share the machine's state; run it
with nothing else running.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.detector import CHIPS_MODEL, MarkerDetector  # noqa: E402
from vision.training.evaluate import cpu, marker_speed  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chips", nargs="+", type=Path, default=[CHIPS_MODEL])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    missing = [p for p in args.chips if not p.is_file()]
    if missing:
        print(f"--chips: no model file {missing[0]}", file=sys.stderr)
        return 2
    print(cpu())
    print(f"markers alone: {marker_speed(MarkerDetector(chips=None), args.repeats):.1f} ms a look")
    for chips in args.chips:
        ms = marker_speed(MarkerDetector(chips=chips), args.repeats)
        print(f"with {chips}: {ms:.1f} ms a look")
    return 0


if __name__ == "__main__":
    sys.exit(main())
