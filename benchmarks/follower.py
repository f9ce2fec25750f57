"""Measure: the round follower's own time a frame, on the fixture rounds' labels.

    python3 benchmarks/follower.py [--repeats 5]

Each fixture round (`tests/fixtures/rounds/`) calibrated from its first frame, then its labelled
detections followed frame by frame, as the box follows a round once the models have read it;
the best of `--repeats` runs a round, so another process's load shows less. What it leaves out
is the models' time (`benchmarks/pipeline.py`), which sets the box's pace.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.follow import RoundFollower  # noqa: E402
from vision.replay import LabelSource, frames  # noqa: E402
from vision.table import calibrate  # noqa: E402
from vision.training.evaluate import cpu  # noqa: E402

ROUNDS = ROOT / "tests" / "fixtures" / "rounds"


def seconds_a_frame(folder: Path, repeats: int) -> tuple[int, float]:
    known = json.loads((folder / "truth.json").read_text())
    image = next(frames(folder / "round.mp4", 10))[2]
    table = calibrate(image, table_id="bench", rules=known["rules"], banker=known["banker"])
    source = LabelSource(folder / "frames.json.gz")
    times = sorted(source.frames)
    seen = [source.detections(0, t, None) for t in times]  # type: ignore[arg-type]
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        follower = RoundFollower(table, run="bench", cut=known["cut"],
                                 cut_options=known["cut_options"])  # fmt: skip
        for t, detections in zip(times, seen, strict=True):
            follower.follow(t, detections, None)
        follower.finish(times[-1])
        best = min(best, time.perf_counter() - started)
    return len(times), best / len(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.repeats < 1:
        print("--repeats: at least 1", file=sys.stderr)
        return 2
    print(cpu())
    for folder in sorted(p for p in ROUNDS.iterdir() if (p / "frames.json.gz").exists()):
        count, each = seconds_a_frame(folder, args.repeats)
        print(f"{folder.name}: {count} frames, {each * 1000:.2f} ms a frame (best of "
              f"{args.repeats})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
