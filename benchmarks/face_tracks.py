"""Measure: face-up tiles the follower follows while tiles are washed or dealt, where none lies.

    python3 benchmarks/face_tracks.py --cache runs/acc-cache [--first-seed 700000] [--rounds 231]

The rounds of `python3 -m vision.training.accuracy` (the same seeds, rule books and injections; from
pixels with the shipped models, looking again only where the frame changed), their detections
taken from its `--cache` where it holds them (made and kept there otherwise, as it would). A
face followed for two frames or more, seen in the latest, while the round is washed, its dice
thrown or its stacks dealt is what an exposed-tile alert is raised on (`FACES.sure_face` and
`ROUND.steady` in `vision/follow/`); in a round with no tile exposed before the setting each is
a back taken for a face. For each bar on how sure the reader was of it on average: how many
such tracks (rounds) reach it, and in how many rounds with a tile exposed a face reached it
at two frames.
"""

from __future__ import annotations

import argparse
import sys
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tqdm import tqdm  # noqa: E402

from vision.follow import Phase, RoundFollower  # noqa: E402
from vision.synth.round import FPS, Studio  # noqa: E402
from vision.training.accuracy import (  # noqa: E402
    EXPOSED,
    REUSE,
    SEED_BASE,
    _cache_stamp,
    _seen,
    plan_rounds,
)

BARS = (0.0, 0.8, 0.9, 0.95, 0.99)
WATCHED = (Phase.SHUFFLE, Phase.DICE, Phase.DELIVERY)

Track = tuple[int, str | None, float, str, float]  # seed, injected, time, face, how sure


def tracks(job: tuple[int, str, str | None, str, str]) -> list[Track]:
    """Each face followed for two frames or more, seen now, before the setting: the first frame
    it was so, by track."""
    seed, rules, injected, cache, stamp = job
    studio = Studio.of(seed, rules, [injected] if injected else [], (1920, 1080))
    key = f"{seed}-{rules}-{injected or 'clean'}-1920x1080-{stamp}"
    seen = _seen(studio, rules, REUSE, Path(cache) / key)
    if isinstance(seen.table, str):
        return []
    follower = RoundFollower(seen.table, run=str(seed))
    rows: dict[float, Track] = {}
    for index, found in enumerate(seen.frames):
        t = round(index / FPS, 3)
        follower.follow(t, found, None)
        if follower.round is None or follower.round.phase not in WATCHED:
            continue
        for face in follower.faces:
            if face.frames == 2 and not face.unseen and face.since not in rows:
                rows[face.since] = (seed, injected, t, face.label, face.sure)
    return list(rows.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=ROOT / "runs" / "acc-cache")
    parser.add_argument("--first-seed", type=int, default=SEED_BASE)
    parser.add_argument("--rounds", type=int, default=231)
    args = parser.parse_args()
    if args.rounds < 1:
        print("error: --rounds must be 1 or more", file=sys.stderr)
        return 2
    stamp = _cache_stamp(REUSE)
    planned = plan_rounds(args.rounds, 1 / 3, args.first_seed)
    jobs = [(*job, str(args.cache), stamp) for job in planned]
    rows: list[Track] = []
    with Pool(2) as pool:
        for found in tqdm(pool.imap_unordered(tracks, jobs), total=len(jobs), unit="round"):
            rows += found
    false = [r for r in rows if r[1] not in EXPOSED]
    exposed = {r[0] for r in rows if r[1] in EXPOSED}
    print(f"{args.rounds} rounds from seed {args.first_seed}, {len(exposed)} with a tile exposed "
          f"followed two frames\n")  # fmt: skip
    print("| bar | backs followed as faces (rounds) | rounds with a tile exposed reaching it |")
    print("|---:|---:|---:|")
    for bar in BARS:
        backs = [r for r in false if r[4] >= bar]
        reached = {r[0] for r in rows if r[1] in EXPOSED and r[4] >= bar}
        print(f"| {bar} | {len(backs)} ({len({r[0] for r in backs})}) | {len(reached)} |")
    for seed, injected, t, label, sure in sorted(false, key=lambda r: -r[4])[:10]:
        print(f"- {seed} ({injected or 'clean'}) {t:.1f} s: {label} at {sure:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
