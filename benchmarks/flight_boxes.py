"""Measure: the backs the detector boxes in flight against the tiles the simulator drew there.

    python3 benchmarks/flight_boxes.py CACHE [--rounds N]

CACHE is a folder of `vision.training.accuracy --context --cache` rounds from pixels (their
names carry the resolution). For the first N rounds, each frame of the delivery is drawn again
(the simulator is seeded, so the same frame) for its tiles' true boxes, and each back the
detector boxed outside every zone, as sure as a stack must be (`CUT.standing`), is set beside
the nearest tile drawn: on it (within `ON_A_TILE` mm) or on nothing drawn (over `ON_NOTHING`).
Each box's sides are given against the stacks' boxes before the delivery (their medians), the
measure a follower rule would have. The boxes on nothing are the detector's own errors in
flight: a block's shadow on the cloth, one box spanning a block's two tiles, the edge of the
dealer's arm (docs/accuracy.md, "Blocks traced to the wrong stacks").
"""

from __future__ import annotations

import argparse
import pickle
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.detections import box_sides  # noqa: E402
from vision.follow.delivery import CUT  # noqa: E402
from vision.progress import each  # noqa: E402
from vision.synth.round import DELIVERY_EACH, Studio  # noqa: E402
from vision.table import Locate  # noqa: E402
from vision.training.accuracy import FPS, Seen  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from trace_breaches import round_of  # noqa: E402

ON_A_TILE = 12.0
"""Millimetres from a drawn tile's centre within which a box is of that tile: a box's centre
lies a few millimetres off, and a tile half hidden under the hand up to 11 (`_unhidden`)."""
ON_NOTHING = 20.0
"""Millimetres from every drawn tile beyond which a box is of none: the tiles of a block lie
25-29 mm apart, so a box this far from each is not one of them boxed off-centre."""
SIZE = re.compile(r"-(\d+)x(\d+)-context-")


def boxes(path: Path) -> list[tuple[float, float, float]]:
    """Each back boxed in flight in one round: its distance to the nearest drawn tile (mm), and
    its length and width against the stacks' before the delivery."""
    seed, rules, injected = round_of(path)
    size = SIZE.search(path.name)
    seen = Seen(*pickle.loads(path.read_bytes()))
    if size is None or isinstance(seen.table, str):
        return []
    table = seen.table
    studio = Studio.of(seed, rules, [injected] if injected else [],
                       (int(size[1]), int(size[2])), context=True)  # fmt: skip
    start = studio.scene.time.delivery
    locate = Locate(table)
    stacks, found = [], []
    for index, detections in enumerate(seen.frames):
        t = round(index / FPS, 3)
        if t >= start + 8 * DELIVERY_EACH:
            break
        located = locate.locate(detections)
        backs = [i for i, label in enumerate(located.labels)
                 if label == "back" and located.confidence[i] >= CUT.standing]  # fmt: skip
        sides = {i: box_sides(table.to_table(located.corners[i])[None])[0] for i in backs}
        if t < start:
            stacks += [sides[i] for i in backs if located.zones[i] == "stack"]
            continue
        loose = [i for i in backs if not located.zones[i]]
        if not loose or not stacks:
            continue
        _, objects, _ = studio.frame(t)
        drawn = [table.to_table(np.asarray(o["corners"], float)).mean(0)
                 for o in objects if o["kind"] == "tile"]  # fmt: skip
        length, width = np.median(stacks, axis=0)
        for i in loose:
            nearest = min(float(np.linalg.norm(located.table_xy[i] - xy)) for xy in drawn)
            found.append((nearest, sides[i][0] / length, sides[i][1] / width))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cache", type=Path)
    parser.add_argument("--rounds", type=int, default=60, help="the first N cached rounds")
    args = parser.parse_args()
    paths = sorted(args.cache.glob("*-context-*.pkl"))[: args.rounds]
    if args.rounds < 1 or not paths:
        print(f"no cached context rounds in {args.cache} (or --rounds under 1)", file=sys.stderr)
        return 2
    rows = np.array([row for path in each(paths, len(paths), "rounds", "round")
                     for row in boxes(path)]).reshape(-1, 3)  # fmt: skip
    if not len(rows):
        print("no backs boxed in flight in these rounds", file=sys.stderr)
        return 2
    on_tile, on_nothing = rows[rows[:, 0] <= ON_A_TILE], rows[rows[:, 0] > ON_NOTHING]
    print(f"{len(paths)} rounds, {len(rows)} backs boxed in flight at {CUT.standing} or more: "
          f"{len(on_tile)} on a drawn tile, {len(on_nothing)} ({len(on_nothing) / len(rows):.1%}) "
          f"over {ON_NOTHING:.0f} mm from every drawn tile")  # fmt: skip
    for name, chosen in (("on a tile", on_tile), ("on nothing", on_nothing)):
        if len(chosen):
            length = np.percentile(chosen[:, 1], [5, 50, 95])
            width = np.percentile(chosen[:, 2], [5, 50, 95])
            print(f"  {name}: length {length[0]:.2f}/{length[1]:.2f}/{length[2]:.2f}, width "
                  f"{width[0]:.2f}/{width[1]:.2f}/{width[2]:.2f} of the stacks' "
                  "(5th/50th/95th percentiles)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
