"""Benchmark: set all 35,960 four-tile draws the house way, under each rule book.

Each rule book runs in a fresh interpreter, so the figure includes working out every one of
the 8,130 distinct draws once (the engine remembers a verdict per distinct draw after that).

    python3 benchmarks/house_way.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import subprocess
import sys
import time

from rules import FULL_SET, find_ruleset, ruleset_ids


def time_one(ruleset_id: str) -> float:
    draws = list(itertools.combinations([t for t, n in FULL_SET.items() for _ in range(n)], 4))
    assert len(draws) == 35_960
    ruleset = find_ruleset(ruleset_id)
    start = time.perf_counter()
    for draw in draws:
        ruleset.house_way(draw)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per rule book")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(time_one(args.one)))
        return
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print(f"{'ruleset':<10} {'best s':>7} {'worst s':>8}  (35,960 draws, fresh process each run)")
    for ruleset_id in ruleset_ids():
        runs = [
            json.loads(
                subprocess.run(
                    [sys.executable, __file__, "--one", ruleset_id],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            for _ in range(args.repeat)
        ]
        print(f"{ruleset_id:<10} {min(runs):>7.3f} {max(runs):>8.3f}")


if __name__ == "__main__":
    main()
