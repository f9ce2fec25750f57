"""Measure: the detector's suppression threshold (rotated IoU) against boxes on no tile.

    python3 benchmarks/overlap.py --data datasets/test1080 [--frames 80] [--iou 0.5 0.4 0.3 0.2]

A box that straddles two tiles lying side by side overlaps each by about a third, so it
survives suppression at 0.5 and becomes a fifth tile in a hand or a third copy of a face. For
each threshold, on the first held-out frames: tile faces found and read, face boxes on no face
(label-agnostic IoU < 0.5 with every labelled object), face precision and mAP50-95.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from vision.detector import Detector, Reader  # noqa: E402
from vision.labels import FACES  # noqa: E402
from vision.training.evaluate import evaluate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="a `paigow synth dataset` folder")
    parser.add_argument("--frames", type=int, default=80)
    parser.add_argument("--iou", type=float, nargs="+", default=[0.5, 0.4, 0.3, 0.2])
    args = parser.parse_args()
    if not (args.data / "annotations.jsonl").exists():
        print(f"error: {args.data} is not a `paigow synth dataset` folder", file=sys.stderr)
        return 2
    reader = Reader()
    print("| IoU | faces found | faces read right | face boxes on no face | face precision "
          "| mAP50-95 |\n|---:|---:|---:|---:|---:|---:|")  # fmt: skip
    for iou in args.iou:
        m = evaluate(args.data, Detector(iou=iou), reader, limit=args.frames)
        precision = np.mean([m["per_class"][f]["precision"] for f in FACES
                             if m["per_class"][f]["instances"]])  # fmt: skip
        stray = m["face_boxes_on_nothing"]
        print(f"| {iou:.2f} | {m['tile_face_found']:.2%} | {m['tile_face_accuracy']:.2%} | "
              f"{stray} | {precision:.2%} | {m['map50_95']:.3f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
