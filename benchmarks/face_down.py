"""Measure: how surely the reader sees a back on display tiles laid face up and face down.

    python3 benchmarks/face_down.py FIRST_SEED COUNT [--looks house,classic,...]

For each look and seed, three opening displays (`vision.synth.display`): whole in rows, whole
in a line, and in rows with one tile laid face down; their true boxes moved as the detector's
and refined, as `vision.training.enrolment` boxes them. Each tile is read as enrolment reads it
(the ten views agreed, `vision.enrol.views_agreed`). Printed: the face-up tiles the reader sees
a back on (`vision.enrol.FACE_DOWN` or surer), with its chance of their own face, against the
face-down tiles' chance of the face laid where they lie: whether a bar on that chance could
tell a face read as a back from a back.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision import enrol  # noqa: E402
from vision.detector import REFINERS, Reader, Refiner  # noqa: E402
from vision.progress import each  # noqa: E402
from vision.synth.appearance import looks_named  # noqa: E402
from vision.synth.display import render_display  # noqa: E402
from vision.training.enrolment import truth_boxes  # noqa: E402

CASES = (("whole rows", "rows", None), ("whole line", "line", None),
         ("face-down", "rows", "face-down"))  # fmt: skip
BARS = (0.001, 0.003, 0.01, 0.03)
"""Chances of the place's face at which a tile read as a back might be taken as face up."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first_seed", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("--looks", default="house,classic,ivory,navy,charcoal,cream")
    args = parser.parse_args()
    if args.count < 1:
        print("COUNT must be 1 or more", file=sys.stderr)
        return 2
    try:
        looks = looks_named(args.looks)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    reader = Reader(flatness=None)
    refiner = Refiner([p for p in REFINERS if p.exists()])
    column = {name: k for k, name in reader.names.items()}
    seen: dict[str, np.ndarray] = {}
    real_enrol_seen = enrol.enrol_seen

    def keep_probs(found, probs, *rest, **named):  # type: ignore[no-untyped-def]
        """`enrol_seen`, keeping the probabilities `enrol_found` reads the tiles with."""
        seen["probs"] = probs
        return real_enrol_seen(found, probs, *rest, **named)

    enrol.enrol_seen = keep_probs
    faces_as_backs: list[tuple[str, int, str, str, float, float]] = []
    backs: list[tuple[str, int, float, float]] = []
    jobs = [(look, case, seed) for look in looks for case in CASES
            for seed in range(args.first_seed, args.first_seed + args.count)]  # fmt: skip
    for look, (case, arrangement, fault), seed in each(jobs, len(jobs), "displays", "display"):
        shown, rendering, _ = render_display(seed, look, arrangement, fault)
        found, truth = truth_boxes(rendering, np.random.default_rng([seed, 0xB0C]), refiner=refiner)
        places = [lab.tags.get("place") for lab in rendering.labels if lab.labelled]  # as truth
        enrol.enrol_found(rendering.image, found, reader)
        probs = seen["probs"]
        for row, (label, place) in enumerate(zip(truth, places, strict=True)):
            back = float(probs[row, column["back"]])
            if label == "back":  # the face the dealer laid there, face down
                laid = shown.faces[int(place) - 1]
                backs.append((look, seed, back, float(probs[row, column[laid]])))
            elif label in enrol.FACE_NAMES and back >= enrol.FACE_DOWN:
                faces_as_backs.append(
                    (look, seed, case, label, back, float(probs[row, column[label]]))
                )
    print(f"face-up tiles read as backs ({enrol.FACE_DOWN:.0%} or surer): {len(faces_as_backs)}")
    for look, seed, case, face, back, own in sorted(faces_as_backs, key=lambda r: r[5]):
        print(f"  {look} {seed} {case}: a {face}, back {back:.1%}, its own face {own:.3%}")
    read_as_backs = [chance for _, _, back, chance in backs if back >= enrol.FACE_DOWN]
    print(f"face-down tiles: {len(backs)}, read as backs {len(read_as_backs)}; their chance of "
          "the face laid where they lie, largest first: "
          + ", ".join(f"{c:.3%}" for c in sorted(read_as_backs, reverse=True)[:8]))  # fmt: skip
    for bar in BARS:
        taken = sum(chance >= bar for chance in read_as_backs)
        kept = sum(own >= bar for *_, own in faces_as_backs)
        print(
            f"  at {bar:.1%}: faces read as backs taken as face up {kept} of "
            f"{len(faces_as_backs)}, backs taken as face up {taken} of {len(read_as_backs)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
