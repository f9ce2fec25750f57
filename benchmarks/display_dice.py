"""Measure: opening displays refused for their dice, with and without enrolment's dice rule.

    python3 benchmarks/display_dice.py FIRST_SEED COUNT

Each seed's opening display as the set-look rounds lay it (`vision.training.setlook
round_display`: the house set at that round's table, its camera, cloth and light) is found by
the shipped detector once, then enrolled twice on the same boxes: counting every die box
(before) and counting dice by enrolment's rule (`vision.enrol._display_dice`, after: beyond
three, not a box small and unsure, as in play).
Every display is a whole set, so every refusal is a false one; each changed verdict is printed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision import enrol  # noqa: E402
from vision.detections import Detections  # noqa: E402
from vision.progress import each  # noqa: E402
from vision.replay import ModelSource  # noqa: E402
from vision.training.accuracy import RULES  # noqa: E402
from vision.training.setlook import FAMILIES, SetLook, round_display  # noqa: E402

SET_LOOK = ROOT / "models" / "setlook.onnx"


def every_die_box(found: Detections, _: np.ndarray) -> np.ndarray:
    """Enrolment's dice before the rule: every box the detector calls a die."""
    return np.array([label == "die" for label in found.labels], bool)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first_seed", type=int)
    parser.add_argument("count", type=int)
    args = parser.parse_args()
    if args.count < 1:
        print("COUNT must be 1 or more", file=sys.stderr)
        return 2
    source = ModelSource(reuse=True)
    source.reader.looker = SetLook(SET_LOOK)
    rule = enrol._display_dice
    accepted = {"before": 0, "after": 0}
    four = {"before": 0, "after": 0}
    for seed in each(range(args.first_seed, args.first_seed + args.count), args.count,
                     "displays", "display"):  # fmt: skip
        k = seed % 100  # as `setlook.follow_rounds` draws each round's book and foreign family
        foreign = tuple(FAMILIES)[(k // 2) % len(FAMILIES)] if k % 2 else None
        _, _, display = round_display(seed, RULES[(k // 2) % len(RULES)], foreign)
        found = enrol.sized_alike(enrol.one_box_per_object(enrol.closer(display, source.detector)))
        verdicts = {}
        for name, dice in (("before", every_die_box), ("after", rule)):
            enrol._display_dice = dice
            verdicts[name] = enrol.enrol_found(display, found, source.reader)
        enrol._display_dice = rule
        for name, verdict in verdicts.items():
            accepted[name] += verdict.whole
            four[name] += any(f"dice, a table uses {enrol.SET_DICE}" in p for p in verdict.problems)
        if verdicts["before"].problems != verdicts["after"].problems:
            print(f"  {seed}: {'; '.join(verdicts['before'].problems) or 'accepted'} -> "
                  f"{'; '.join(verdicts['after'].problems) or 'accepted'}")  # fmt: skip
    print(f"{args.count} whole displays: accepted {accepted['before']} before, "
          f"{accepted['after']} after; refused for the dice count {four['before']} before, "
          f"{four['after']} after")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
