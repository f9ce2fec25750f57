"""Measure: seconds the edge box's start-up check of its models takes, and what it read.

    python3 benchmarks/selfcheck.py [--repeats 3]

Reads the frames shipped in `models/selfcheck/` with the shipped models as the box does at
start (`edge.app.EdgeApp._check_models`: each frame whole, markers and chips looked for where
their models ship), `--repeats` times in one process after loading the models once; prints each
run's seconds and the check's counts. Run it with nothing else running.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.replay import ModelSource  # noqa: E402
from vision.selfcheck import check_models  # noqa: E402
from vision.training.evaluate import cpu  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.repeats < 1:
        print("--repeats: at least 1", file=sys.stderr)
        return 2
    print(cpu())
    source = ModelSource()
    watch = source.watch
    chips = watch is not None and watch.detector.chips is not None
    for run in range(args.repeats):
        began = time.perf_counter()
        check = check_models(source.look, markers=watch is not None, chips=chips)
        print(f"run {run + 1}: {time.perf_counter() - began:.2f} s; {check}; "
              f"{'passed' if check.passed else 'FAILED'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
