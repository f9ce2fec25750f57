"""Measure: how far each sighting of a block in flight traces from the stacks it was lifted from.

    python3 benchmarks/trace_error.py CACHE [CACHE ...] [--as-boxed]

Each CACHE is a folder of `vision.training.accuracy --context --cache` rounds (labels or
pixels, any stamp). Each round is followed as the box follows it; each sighting of a group's
block in flight that the block trace weighs (`DeliveryPhase._trace_blocks`: in the first half
of a flight, its line meeting the stacks' row) is traced back from each place the block landed,
and the line the trace takes for it (`_own_line`) is measured against the stacks the round's
plan dealt the group from, in stack pitches. A line beyond `CUT.off_stack` is in doubt; one
beyond `CUT.trace_apart` counts as lifted from elsewhere. `--as-boxed` takes each tile in
flight where the detector boxed it, its near end hidden or not (`_unhidden` left out).
Rounds with a tile dealt to another box (`wrong-hand-size`) are left out: that tile flies
apart from its group.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rules import stack_signature  # noqa: E402
from vision.follow import RoundFollower, delivery  # noqa: E402
from vision.follow.delivery import CUT, Home, _apart, _on_row, _own_line  # noqa: E402
from vision.progress import each  # noqa: E402
from vision.synth.round import plan_round  # noqa: E402
from vision.training.accuracy import FPS, TABLE_CUTS, Seen  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from trace_breaches import round_of  # noqa: E402


class Measured(RoundFollower):
    """The box's follower, measuring each group's sightings in flight as it traces them."""

    dealt: list[set[int]]
    """The stacks (0-7) each group was dealt from, by the round's plan."""
    errors: list[float]
    """Pitches between each sighting's own line and its group's dealt stacks."""

    def _flights(self) -> Iterator[tuple[int, int, list[Home]]]:
        round_ = self.round
        assert round_ is not None
        pitch = round_.pitch
        for group, position, homes in super()._flights():
            stacks = self.dealt[group - 1]
            for _, _, traced in homes:
                lines = _on_row(traced, round_.columns, pitch, round_.ahead)
                if lines:
                    own = _own_line(lines, round_.columns, stacks, pitch, round_.ahead)
                    self.errors.append(_apart(own, round_.columns, stacks, round_.ahead) / pitch)
            yield group, position, homes


def errors(path: Path) -> list[float]:
    """Every weighed sighting's error in one cached round (none where no group flies whole)."""
    seed, rules, injected = round_of(path)
    if injected == "wrong-hand-size":
        return []
    seen = Seen(*pickle.loads(path.read_bytes()))
    if isinstance(seen.table, str):
        return []
    table = seen.table.model_copy(update={"cuts": list(TABLE_CUTS.get(rules, ()))})
    follower = Measured(table, run=str(seed))
    plan = plan_round(seed, rules, [injected] if injected else [], None, context=True)
    follower.dealt = [{stack for stack, _ in group} for group in stack_signature(plan.grid)]
    follower.errors = []
    for index, found in enumerate(seen.frames):
        follower.follow(round(index / FPS, 3), found, None)
    return follower.errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("caches", nargs="+", type=Path)
    parser.add_argument(
        "--as-boxed", action="store_true", help="each tile in flight where it was boxed"
    )
    args = parser.parse_args()
    paths = [path for cache in args.caches for path in sorted(cache.glob("*-context-*.pkl"))]
    if not paths:
        print(f"no cached context rounds in {', '.join(map(str, args.caches))}", file=sys.stderr)
        return 2
    if args.as_boxed:
        delivery._unhidden = lambda xy, corners, length: xy  # type: ignore[assignment]
    found = np.array(
        [e for path in each(paths, len(paths), "rounds", "round") for e in errors(path)]
    )
    if not len(found):
        print("no sightings of a block in flight in these rounds", file=sys.stderr)
        return 2
    p50, p90, p95, p99 = np.percentile(found, [50, 90, 95, 99])
    doubt, elsewhere = np.mean(found > CUT.off_stack), np.mean(found > CUT.trace_apart)
    print(f"{len(paths)} rounds, {len(found)} sightings in flight traced; pitches from the stacks "
          f"dealt: median {p50:.2f}, 90th {p90:.2f}, 95th {p95:.2f}, 99th {p99:.2f}; in doubt "
          f"(over {CUT.off_stack}) {doubt:.1%}, pointing elsewhere (over {CUT.trace_apart}) "
          f"{elsewhere:.1%}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
