"""Benchmark: the search beside a short hand (`vision.follow.unboxed`) on a real frame of the
bundled MBS fixture round, its `2-4` left unboxed as a tile no model knows would be.

    python3 benchmarks/unboxed.py [--runs 50]

Times one search of the hand's zone (the follower runs one a frame per short hand, for
`UNBOXED.search_s` after the hand settles) and prints the median and what it found.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.follow.unboxed import unboxed  # noqa: E402
from vision.replay import LabelSource, frames  # noqa: E402
from vision.table import Locate, calibrate  # noqa: E402

ROUND = ROOT / "tests" / "fixtures" / "rounds" / "mbs-clean"
AT = 23.0
"""Seconds into the round: every hand lies exposed."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    if args.runs < 1:
        print("error: --runs must be 1 or more", file=sys.stderr)
        return 2
    known = json.loads((ROUND / "truth.json").read_text())
    video = list(frames(ROUND / "round.mp4", 10))
    table = calibrate(video[0][2], table_id="t1", rules=known["rules"], banker=known["banker"])
    locate = Locate(table)
    image = next(image for _, t, image, _ in video if t >= AT)
    seen = LabelSource(ROUND / "frames.json.gz").detections(0, AT, None)  # type: ignore[arg-type]
    boxes = locate.on_cloth(seen.corners[np.array([lab != "2-4" for lab in seen.labels], bool)])
    box = next(p for p, hand in known["hands"].items() if "2-4" in hand["tiles"])
    zone = locate.zones[f"p{box}"]
    tile = tuple(np.median(locate.sizes(seen), axis=0))
    homography = np.asarray(table.homography, np.float64)
    took, found = [], []
    for _ in range(args.runs):
        started = time.perf_counter()
        found = unboxed(image, homography, zone, boxes, tile)  # type: ignore[arg-type]
        took.append(time.perf_counter() - started)
    print(f"box {box}'s zone searched in {1000 * float(np.median(took)):.1f} ms (median of "
          f"{args.runs}); found: " + ", ".join(f"{f.length:.0f} x {f.width:.0f} mm, fill "
                                             f"{f.fill:.2f}" for f in found))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
