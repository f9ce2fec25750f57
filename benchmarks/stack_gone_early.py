"""Measure: how early the dealt cut's stacks read gone, from cached rounds (`CUT.gone_before`,
`CUT.end_gone_before`).

    python3 benchmarks/stack_gone_early.py CACHE [CACHE ...]

Each CACHE is a folder of `vision.training.accuracy --context --cache` rounds (labels or
pixels, any stamp). Every round delivered as its cut says (clean, and the kinds that leave the
delivery alone) is followed to its end; for each stack the follower marked gone, under the cut
still fitting at the end, the seconds from the arrival of the group before its last to when
its place read empty (negative: before). Between two standing stacks and at the row's open
end apart, as the follower allows them apart.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.follow import RoundFollower  # noqa: E402
from vision.follow.delivery import CUT  # noqa: E402
from vision.progress import each  # noqa: E402
from vision.training.accuracy import FPS, TABLE_CUTS, Seen  # noqa: E402

CHANGE_THE_DELIVERY = ("wrong-cut-order", "missing-tile", "foreign-tile")
"""Kinds whose rounds are not delivered as their cut says (or whose stacks are not whole)."""


def margins(path: Path) -> list[tuple[bool, float]]:
    """(at the row's open end, seconds gone after the group before its last arrived) for each
    stack a cached round's follower marked gone under the cut that fitted to the end."""
    seen = Seen(*pickle.loads(path.read_bytes()))
    if isinstance(seen.table, str):
        return []
    rules = "-".join(path.name.split("-")[1:3])
    table = seen.table.model_copy(update={"cuts": list(TABLE_CUTS.get(rules, ()))})
    follower = RoundFollower(table)
    last = None
    for index, found in enumerate(seen.frames):
        follower.follow(round(index / FPS, 3), found, None)
        last = follower.round or last
    if last is None or not last.live or len(last.served) < 8:
        return []
    arrivals = sorted(last.served.values())
    view = follower.judge.views[last.live[0]]
    gone = last.gone
    return [
        (gone[stack][1] != CUT.gone_before, round(gone[stack][0] - arrivals[group - 2], 2))
        for stack, group in view.last_groups.items()
        if stack in gone and group >= 2
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("caches", nargs="+", type=Path)
    args = parser.parse_args()
    paths = [
        path
        for cache in args.caches
        for path in sorted(cache.glob("*-context-*.pkl"))
        if not any(f"-{kind}-" in path.name for kind in CHANGE_THE_DELIVERY)
    ]
    if not paths:
        print(f"no cached context rounds in {', '.join(map(str, args.caches))}", file=sys.stderr)
        return 2
    found: dict[bool, Counter[float]] = {False: Counter(), True: Counter()}
    for path in each(paths, len(paths), "rounds", "round"):
        for at_end, margin in margins(path):
            found[at_end][margin] += 1
    for at_end, name in ((False, "between two standing stacks"), (True, "at the row's open end")):
        counts = found[at_end]
        early = sorted((m, n) for m, n in counts.items() if m < 0.1)
        print(f"{name}: {sum(counts.values())} stacks; earliest {min(counts, default=None)} s; "
              f"up to the arrival: {', '.join(f'{m:+.1f} s x{n}' for m, n in early)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
