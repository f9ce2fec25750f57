"""Measure: displays refused for a tile's body colour or size, with and without `BODY_SHARE_LEAST`.

    python3 benchmarks/dense_pips.py --first-seed 903000 --displays 20 [--families house,...]

A light-bodied set's `6-6`, `5-5`, `5-6` and `4-6` drawn with large dark pips are darker in the
middle than the rest of the set, as a dark tile of another set is. For each family, whole
displays in rows and in a line and displays with another set's tile (in rows) are drawn, their
true boxes moved as the detector's and refined as the box refines them, and judged by
`strangers` alone (body colour and size: the reader and the set look are not asked) as it is
and with the dense-pips exemption lifted. Whole displays refused should fall; other sets' tiles
caught should not.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from vision import enrol  # noqa: E402
from vision.crops import cut  # noqa: E402
from vision.detector import Refiner  # noqa: E402
from vision.synth.appearance import FAMILIES, looks_named  # noqa: E402
from vision.synth.display import render_display  # noqa: E402
from vision.training.enrolment import REFINERS, truth_boxes  # noqa: E402

CASES = (("rows", None), ("line", None), ("rows", "foreign"))


def flagged(tiles: tuple[enrol.SeenTile, ...], crops: list[np.ndarray], least: float) -> set[int]:  # type: ignore[type-arg]
    """The places `strangers` names with `BODY_SHARE_LEAST` at `least`."""
    kept = enrol.BODY_SHARE_LEAST
    enrol.BODY_SHARE_LEAST = least
    try:
        said = enrol.strangers(tiles, crops)
    finally:
        enrol.BODY_SHARE_LEAST = kept
    return {int(re.search(r"place (\d+)", line).group(1)) for line in said}  # type: ignore[union-attr]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first-seed", type=int, default=903000)
    parser.add_argument("--displays", type=int, default=20, help="displays per case and family")
    parser.add_argument("--families", default=",".join(("house", *FAMILIES)))
    args = parser.parse_args()
    try:
        families = looks_named(args.families)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    refiner = Refiner([p for p in REFINERS if p.exists()])
    print("| family | whole displays | refused without the exemption | with it "
          "| with another set's tile | that tile caught without | with |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|")
    for family in families:
        tally: Counter[str] = Counter()
        for seed in range(args.first_seed, args.first_seed + args.displays):
            for arrangement, fault in CASES:
                shown, rendering, _ = render_display(seed, family, arrangement, fault)
                rng = np.random.default_rng([seed, 0xB0C])  # as the enrolment harness moves them
                found = truth_boxes(rendering, rng, refiner=refiner)[0]
                rows = [i for i, label in enumerate(found.labels) if label == "tile"]
                crops = [cut(rendering.image, found.corners[i], False) for i in rows]
                tiles = tuple(
                    enrol.SeenTile(found.corners[i], face, 1.0, face, place, None)
                    for place, (i, face) in enumerate(zip(rows, shown.faces, strict=True), 1)
                )
                without, with_ = (
                    flagged(tiles, crops, np.inf),
                    flagged(tiles, crops, enrol.BODY_SHARE_LEAST),
                )
                if fault is None:
                    tally["whole"] += 1
                    tally["whole refused without"] += bool(without)
                    tally["whole refused with"] += bool(with_)
                else:
                    foreign = int(re.search(r"place (\d+) holds", shown.fault_detail).group(1))  # type: ignore[union-attr]
                    tally["foreign"] += 1
                    tally["caught without"] += foreign in without
                    tally["caught with"] += foreign in with_
        print(f"| {family} | {tally['whole']} | {tally['whole refused without']} "
              f"| {tally['whole refused with']} | {tally['foreign']} | {tally['caught without']} "
              f"| {tally['caught with']} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
