"""Measure: displays taken as laid in order of rank, with and without `ORDER_RULED_OUT`.

    python3 benchmarks/order_by_chance.py --first-seed 891000 --displays 100 \
        --arrangement scattered [--reader READER.onnx] [--families house,classic,...]

A scattered display can fit `IN_ORDER` by chance; the bar on places the reader rules out turns
such an order away. For each family, `--displays` displays of the arrangement are drawn, their
true boxes moved as the detector's and refined as the box refines them, read, and placed by
`best_order` as it is and with the bar lifted. Scattered displays should be taken in order by
neither; displays in rows or a line by both.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from vision import enrol  # noqa: E402
from vision.crops import cut  # noqa: E402
from vision.detector import Reader, Refiner  # noqa: E402
from vision.synth.appearance import FAMILIES, looks_named  # noqa: E402
from vision.synth.display import ARRANGEMENTS, render_display  # noqa: E402
from vision.training.enrolment import REFINERS, truth_boxes  # noqa: E402


def placed(found_corners: np.ndarray, faces: np.ndarray, bar: float) -> bool:  # type: ignore[type-arg]
    """Whether `best_order` takes the display as laid in order with `ORDER_RULED_OUT` at `bar`."""
    kept = enrol.ORDER_RULED_OUT
    enrol.ORDER_RULED_OUT = bar
    try:
        return enrol.best_order(found_corners, faces) is not None
    finally:
        enrol.ORDER_RULED_OUT = kept


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first-seed", type=int, default=891000)
    parser.add_argument("--displays", type=int, default=100, help="displays per family")
    parser.add_argument("--arrangement", choices=ARRANGEMENTS, default="scattered")
    parser.add_argument("--reader", type=Path, help="a reader with its embedding (else shipped)")
    parser.add_argument("--families", default=",".join(("house", *FAMILIES)))
    args = parser.parse_args()
    try:
        families = looks_named(args.families)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.reader is not None and not args.reader.is_file():
        print(f"error: no reader {args.reader}", file=sys.stderr)
        return 2
    reader = Reader(flatness=None) if args.reader is None else Reader(args.reader, flatness=None)
    refiner = Refiner([p for p in REFINERS if p.exists()])
    face_columns = enrol.columns(reader.names, enrol.FACE_NAMES)
    (back,) = enrol.columns(reader.names, ("back",))
    print("| family | displays | with 32 face up | taken in order without the bar | with it |")
    print("|---|---:|---:|---:|---:|")
    for family in families:
        tally: Counter[str] = Counter()
        for seed in range(args.first_seed, args.first_seed + args.displays):
            rendering = render_display(seed, family, args.arrangement)[1]
            rng = np.random.default_rng([seed, 0xB0C])  # as the enrolment harness moves them
            found = truth_boxes(rendering, rng, refiner=refiner)[0]
            tiles = [i for i, label in enumerate(found.labels) if label != "die"]
            crops = [cut(rendering.image, found.corners[i], False) for i in tiles]
            probs = reader.look_at(crops)[0]
            face_up = probs[:, back] < enrol.FACE_DOWN
            up = [i for i, shown in zip(tiles, face_up, strict=True) if shown]
            faces = probs[face_up][:, face_columns]
            faces = faces / faces.sum(1, keepdims=True)
            tally["displays"] += 1
            if len(up) != len(enrol.DISPLAY_ORDER):
                continue
            tally["32 up"] += 1
            tally["without"] += placed(found.corners[up], faces, 1.0)
            tally["with"] += placed(found.corners[up], faces, enrol.ORDER_RULED_OUT)
        print(f"| {family} | {tally['displays']} | {tally['32 up']} | {tally['without']} "
              f"| {tally['with']} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
