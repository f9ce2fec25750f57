"""Measure: each block trace that broke a cut, in cached rounds, against what was dealt.

    python3 benchmarks/trace_breaches.py CACHE [CACHE ...] [--one-stack-agree N] [--trace-frames N]

Each CACHE is a folder of `vision.training.accuracy --context --cache` rounds (labels or
pixels, any stamp). Each round is followed to its end as the box follows it; every breach of a
cut by a block traced back to the stacks (`DeliveryPhase._trace_blocks`) is compared with the
round's plan: it is false where the group was dealt from exactly the stacks that cut names for
it (the cut was not broken there). `--one-stack-agree` and `--trace-frames` follow with
`CUT.one_stack_agree` or `CUT.trace_frames` set otherwise: the breaches a rule drops are the
difference between two runs. A false breach of
the cut dealt is a false `wrong-cut-order` or a cut named wrong; one of another cut is harmless
unless it was the last evidence against it.
"""

from __future__ import annotations

import argparse
import pickle
import re
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rules import CUTS, CutChoice, stack_signature  # noqa: E402
from vision.follow import RoundFollower, delivery  # noqa: E402
from vision.follow.base import Raised  # noqa: E402
from vision.follow.delivery import Breach  # noqa: E402
from vision.progress import each  # noqa: E402
from vision.synth.round import plan_round  # noqa: E402
from vision.training.accuracy import FPS, TABLE_CUTS, Seen  # noqa: E402

TRACED = re.compile(r"group (\d+) to .* from stack ")
"""A trace breach's `expected` (`_trace_blocks`): the group, then the stacks its cut names."""
LIFTED = "its block lifted from stack "


class Watched(RoundFollower):
    """The box's follower, keeping each trace breach with the cut view it broke."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.traced: list[tuple[int, int, list[int]]] = []
        """(view, group, stacks pointed at, 0-7) for each trace breach."""

    def _breached(self, view: int, breaches: list[Breach], out: list[Raised]) -> None:
        for breach in breaches:
            matched = TRACED.match(breach.expected)
            if matched and breach.observed.startswith(LIFTED):
                origins = [int(s) - 1 for s in breach.observed.removeprefix(LIFTED).split(" and ")]
                self.traced.append((view, int(matched.group(1)), origins))
        super()._breached(view, breaches, out)


def round_of(path: Path) -> tuple[int, str, str | None]:
    """Seed, rule book and injected kind from a cached round's name (`accuracy._round_key`)."""
    seed, book, year, rest = path.name.split("-", 3)
    kind = re.match(r"(.*?)-\d+x\d+-context-", rest)
    if kind is None:
        raise ValueError(f"{path.name} is not a cached context round")
    return int(seed), f"{book}-{year}", None if kind.group(1) == "clean" else kind.group(1)


def breaches(path: Path) -> list[dict[str, object]]:
    """Every trace breach of one cached round, with the stacks its group was dealt from."""
    seed, rules, injected = round_of(path)
    seen = Seen(*pickle.loads(path.read_bytes()))
    if isinstance(seen.table, str):
        return []
    table = seen.table.model_copy(update={"cuts": list(TABLE_CUTS.get(rules, ()))})
    follower = Watched(table, run=str(seed))
    for index, found in enumerate(seen.frames):
        follower.follow(round(index / FPS, 3), found, None)
    plan = plan_round(seed, rules, [injected] if injected else [], None, context=True)
    dealt = stack_signature(plan.grid)
    cut = stack_signature(CutChoice(plan.cut, CUTS[plan.cut].options(**plan.cut_options)))
    found = []
    for view, group, origins in follower.traced:
        named = sorted(follower.judge.views[view].stacks[group])
        came = sorted(stack for stack, _ in dealt[group - 1])
        signature = stack_signature(follower.judge.views[view].choices[0])
        found.append({"seed": seed, "kind": injected or "clean", "group": group, "named": named,
                      "dealt": came, "pointed": origins, "false": named == came,
                      "dealt cut": signature == cut})  # fmt: skip
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("caches", nargs="+", type=Path)
    parser.add_argument("--one-stack-agree", type=int, help="follow with this CUT.one_stack_agree")
    parser.add_argument("--trace-frames", type=int, help="follow with this CUT.trace_frames")
    args = parser.parse_args()
    paths = [path for cache in args.caches for path in sorted(cache.glob("*-context-*.pkl"))]
    if not paths:
        print(f"no cached context rounds in {', '.join(map(str, args.caches))}", file=sys.stderr)
        return 2
    for name in ("one_stack_agree", "trace_frames"):
        value = getattr(args, name)
        if value is not None:
            if value < 1:
                print(f"--{name.replace('_', '-')} must be 1 or more", file=sys.stderr)
                return 2
            delivery.CUT = replace(delivery.CUT, **{name: value})
    found = [row for path in each(paths, len(paths), "rounds", "round") for row in breaches(path)]
    false = [row for row in found if row["false"]]
    one_stack = [row for row in found if len(row["named"]) == 1]  # type: ignore[arg-type]
    print(f"{len(paths)} rounds, {len(found)} trace breaches ({len(one_stack)} of a group "
          f"taken from one stack), {len(false)} false "
          f"({sum(bool(row['dealt cut']) for row in false)} of them of the cut dealt)")  # fmt: skip
    for row in false:
        print("  " + " ".join(f"{key} {value}" for key, value in row.items() if key != "false"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
