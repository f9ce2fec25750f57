"""Measure: a house bank dealt a player's cut (NZ 9.5, ACT 8.6: the house bank is cut Yat Dong
Dong), on tables that say their bank is the house, or (`--shown`) say nothing of who banks and
leave it to the chung and the chips on the betting boxes (NZ 11.1(b), ACT 7.3: no wager on box
1 while the house banks).

    python3 benchmarks/house_bank_cut.py [--rounds 40] [--first-seed 860000] [--workers 2] [--shown]

Simulated rounds from the simulator's labels at 1280x720, NZ and ACT in turn; every other round
is dealt Yat Dong Dong (clean), the rest one of the book's other approved cuts drawn at random,
with its options, delivered as that cut says. The follower is told the table's configuration
with `bank: house` and nothing of the cut. A player's cut that a camera above cannot tell from
some Yat Dong Dong (the same stacks to the same groups, the layers aside) is counted apart.
Latency: from the first group whose block a Yat Dong Dong would not lift to the first alert.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rules import CUTS, find_ruleset, stack_signature  # noqa: E402
from rules.context import Bank, cut_regime  # noqa: E402
from vision.follow import RoundFollower  # noqa: E402
from vision.follow.records import Alert, RoundRecord  # noqa: E402
from vision.progress import each  # noqa: E402
from vision.synth.round import DELIVERY_EACH, FPS, Context, Studio, Timeline  # noqa: E402
from vision.training.accuracy import _seen  # noqa: E402

BOOKS = ("nz-1998", "act-2005")


def first_seen_apart(cut: str, options: dict[str, str], house: str) -> int | None:
    """The first group whose block no option of the house cut lifts (None: none differs),
    as a camera above tells blocks apart (`rules.stack_signature`)."""
    dealt = stack_signature(CUTS[cut].grid(CUTS[cut].options(**options)))
    houses = [stack_signature(CUTS[house].grid(o)) for o in CUTS[house].all_options()]
    for group in range(8):
        if all(dealt[group] != h[group] for h in houses):
            return group + 1
    return None


def follow(job: tuple[int, str, str | None, bool]) -> dict[str, object]:
    seed, rules, cut, shown = job
    studio = Studio.of(seed, rules, [], (1280, 720), cut, context=shown)
    plan = studio.plan
    house = find_ruleset(rules).house_cut
    assert house is not None
    seen = _seen(studio, rules, "labels", None)
    if isinstance(seen.table, str):
        return {"seed": seed, "error": seen.table}
    told = {"bank": None if shown else "house", "cuts": []}
    follower = RoundFollower(seen.table.model_copy(update=told), run=str(seed))
    raised = []
    for index, found in enumerate(seen.frames):
        raised += follower.follow(round(index / FPS, 3), found, None)
    raised += follower.finish(round(studio.frame_count / FPS, 3))
    alerts = [r.record for r in raised if isinstance(r.record, Alert)]
    record = next(r.record for r in raised if isinstance(r.record, RoundRecord))
    apart = first_seen_apart(plan.cut, plan.cut_options, house)
    shown = Timeline.of().delivery + ((apart or 1) - 1) * DELIVERY_EACH
    cut_alerts = [a for a in alerts if a.kind == "wrong-cut-order"]
    return {
        "seed": seed, "rules": rules, "cut": plan.cut, "house": plan.cut == house,
        "seeable": apart is not None, "kinds": sorted({a.kind for a in alerts}),
        "latency": (cut_alerts[0].raised_time_s - shown) if cut_alerts else None,
        "record_cut": record.cut, "bank_read": record.bank,
    }  # fmt: skip


def plan(rounds: int, first: int, shown: bool) -> list[tuple[int, str, str | None, bool]]:
    """With `shown`, only seeds whose drawn context is a house bank (the others skipped)."""
    jobs: list[tuple[int, str, str | None, bool]] = []
    seed = first
    for k in range(rounds):
        rules = BOOKS[k % 2]
        book = find_ruleset(rules)
        while shown and Context.draw(book, np.random.default_rng([seed, 0x36])).bank is not (
            Bank.HOUSE
        ):
            seed += 1
        if k % 4 < 2:
            jobs.append((seed, rules, book.house_cut, shown))
        else:
            others = [c for c in cut_regime(book, Bank.PLAYER).checkable
                      if c != book.house_cut and CUTS[c].drawn is not None]  # fmt: skip
            cut = str(np.random.default_rng(seed).choice(others))
            jobs.append((seed, rules, cut, shown))
        seed += 1
    return jobs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--first-seed", type=int, default=860_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--shown", action="store_true", help="tell nothing of who banks: the chips show it"
    )
    args = parser.parse_args()
    if args.rounds < 4:
        print("error: --rounds must be at least 4 (clean and dealt a player's cut, both books)",
              file=sys.stderr)  # fmt: skip
        return 2
    jobs = plan(args.rounds, args.first_seed, args.shown)
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(each(pool.map(follow, jobs), len(jobs), "rounds", "round"))
    failed = [r for r in rows if "error" in r]
    rows = [r for r in rows if "error" not in r]
    clean = [r for r in rows if r["house"]]
    dealt = [r for r in rows if not r["house"] and r["seeable"]]
    unseeable = [r for r in rows if not r["house"] and not r["seeable"]]
    caught = [r for r in dealt if "wrong-cut-order" in r["kinds"]]
    late = sorted(float(r["latency"]) for r in caught)
    print(f"house bank dealt Yat Dong Dong: {sum(not r['kinds'] for r in clean)} of {len(clean)} "
          f"rounds without an alert, cut named right in "
          f"{sum(r['record_cut'] == r['cut'] for r in clean)}")  # fmt: skip
    print(
        f"house bank dealt a player's cut (seeable from above): wrong-cut-order in "
        f"{len(caught)} of {len(dealt)}; other alerts in "
        f"{sum(bool(set(r['kinds']) - {'wrong-cut-order'}) for r in dealt)}"
    )
    if late:
        print(f"  latency from the first block Yat Dong Dong would not lift: median "
              f"{np.median(late):.1f} s, max {max(late):.1f} s")  # fmt: skip
    print(f"who banks, in the record: house in {sum(r['bank_read'] == 'house' for r in rows)} "
          f"of {len(rows)}")  # fmt: skip
    print(
        f"player's cuts a camera above cannot tell from Yat Dong Dong: {len(unseeable)} "
        f"({', '.join(sorted({str(r['cut']) for r in unseeable})) or 'none'}), of which "
        f"{sum('wrong-cut-order' in r['kinds'] for r in unseeable)} alerted"
    )
    for r in dealt:
        if r not in caught:
            print(f"  missed: {r['seed']} {r['rules']} {r['cut']} raised {r['kinds']}")
    for r in clean:
        if r["kinds"]:
            print(f"  false: {r['seed']} {r['rules']} raised {r['kinds']}")
    if failed:
        print(f"failed: {failed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
