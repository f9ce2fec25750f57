"""Measure: a tile dealt into or out of the hand of a box out of play (NZ 12.9-12.10, MBS 5.6),
whose hand is set aside face down unplayed (MBS 3.12) and so never read.

    python3 benchmarks/off_box_hand_size.py [--rounds 40] [--first-seed 1470000] [--pixels]

Simulated rounds from the simulator's labels at 1280x720 (with `--pixels`: the shipped models
at 1920x1080, looking again only where the frame changed, markers read from pixels), NZ and MBS
in turn, each drawing who banks, its cut and its box out of play as its rule book has them
chosen (the follower told only the table's configuration, as `vision.training.accuracy
--context`). Seeds are taken in order
from `--first-seed`, kept where the round has a box out of play and, for the irregular rounds,
where the `wrong-hand-size` plan moves a tile into that box's hand ("into": five set aside, a
hand in play of three) or out of it ("out of": three set aside, a hand in play of five); a third
of the rounds are clean ones with a box out of play. Right is `wrong-hand-size` and nothing
else; clean is no alert.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rules import Irregularity  # noqa: E402
from vision.progress import each  # noqa: E402
from vision.synth.round import plan_round  # noqa: E402
from vision.training.accuracy import run_round  # noqa: E402

BOOKS = ("nz-1998", "mbs-2020")
KIND = Irregularity.WRONG_HAND_SIZE.value
CASES = ("into", "out of", "clean")


def case_of(seed: int, rules: str, case: str) -> bool:
    """Whether `seed` plans a round of `case` at `rules`."""
    plan = plan_round(seed, rules, [] if case == "clean" else [KIND], None, context=True)
    if plan.off_box is None:
        return False
    if case == "clean":
        return True
    assert plan.moved_tile is not None
    _, source, destination = plan.moved_tile
    return plan.off_box == (destination if case == "into" else source)


def jobs(rounds: int, first: int, pixels: bool) -> Iterator[tuple[str, tuple]]:  # type: ignore[type-arg]
    source, resolution = ("models-reuse", (1920, 1080)) if pixels else ("labels", (1280, 720))
    seed = first
    for k in range(rounds):
        rules, case = BOOKS[k % 2], CASES[k % 3]
        while not case_of(seed, rules, case):
            seed += 1
        yield case, (seed, rules, None if case == "clean" else KIND, source, resolution, None,
                     True)  # fmt: skip
        seed += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--first-seed", type=int, default=1_470_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pixels", action="store_true", help="the shipped models, 1920x1080")
    args = parser.parse_args()
    if args.rounds < 3:
        print("error: --rounds must be at least 3 (into, out of and clean)", file=sys.stderr)
        return 2
    if args.first_seed < 0 or args.workers < 1:
        print("error: --first-seed must be 0 or more and --workers 1 or more", file=sys.stderr)
        return 2
    planned = list(jobs(args.rounds, args.first_seed, args.pixels))
    with ProcessPoolExecutor(args.workers) as pool:
        outcomes = list(each(pool.map(run_round, [j for _, j in planned]), len(planned), "rounds",
                             "round"))  # fmt: skip
    print(f"seeds {planned[0][1][0]}-{planned[-1][1][0]}")
    for case in CASES:
        rows = [o for (c, _), o in zip(planned, outcomes, strict=True) if c == case]
        failed = [o for o in rows if o.error]
        rows = [o for o in rows if not o.error]
        if case == "clean":
            print(f"clean, a box out of play: {sum(not o.raised for o in rows)} of {len(rows)} "
                  "without an alert")  # fmt: skip
            wrong = [o for o in rows if o.raised]
        else:
            right = [o for o in rows if o.raised == [KIND]]
            late = [o.latency[KIND] for o in rows if KIND in o.latency]
            print(f"a tile dealt {case} the hand set aside: {KIND} alone in {len(right)} of "
                  f"{len(rows)}; {KIND} in {sum(KIND in o.raised for o in rows)}; "
                  f"missing-tile in {sum('missing-tile' in o.raised for o in rows)}")  # fmt: skip
            if late:
                print(f"  latency from the tile landing or the hand exposed: median "
                      f"{np.median(late):.1f} s, max {max(late):.1f} s")  # fmt: skip
            wrong = [o for o in rows if o not in right]
        for o in wrong:
            print(f"  {o.seed} {o.rules} raised {o.raised}")
        for o in failed:
            print(f"  failed: {o.seed} {o.rules}: {o.error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
