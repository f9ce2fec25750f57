"""Measure: faces the reader sees in simulated rounds before the setting, where none lies.

    python3 benchmarks/false_faces.py --reader models/reader.onnx [CANDIDATE.onnx ...]
        [--half-turn-below 0.9 [0 ...]] [--clean 30] [--exposed 12]

Every tile is face down until the hands are set, so a box read as a face over backs is what
raises a false exposed-tile alert (four frames of the same face in one place make one). Frames
are the shipped detector's boxes, every analysed frame (10 a second) up to the setting, in
`--clean` clean rounds (seeds 800100 on) and `--exposed` rounds with a tile exposed while
stacking (seeds 800200 on): rounds never mined for the reader's training
(`vision.training.train.ROUND_SEEDS`, 800000-800079). For each confidence bar: readings of a
face over
no face-up tile (overlap < 0.5, or over a back), and how many of the boxes over an exposed
face-up tile read right. Several readers read the same detector boxes, one table each, so a
candidate is compared with the shipped reader for the cost of one detector pass. Each reader
reads at each `--half-turn-below` bar (`vision.detector.HALF_TURN_BELOW`; 0 reads every tile
as cut only). Below each table, where each face read over no face at the follower's bar lies
(round, time, box centre): what a candidate's extra ones lie on is what to mine next.
"""

from __future__ import annotations

import argparse
import sys
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tqdm import tqdm  # noqa: E402

from vision.detector import HALF_TURN_BELOW, Detector, Reader  # noqa: E402
from vision.follow.exposure import FACES  # noqa: E402
from vision.synth.round import FPS, Timeline  # noqa: E402
from vision.training.train import round_frames, under  # noqa: E402

BARS = (0.5, 0.6, 0.7, 0.8, 0.9)

Where = tuple[int, float, float, float]  # round seed, seconds into it, box centre x and y
Reading = tuple[str, float, str | None, Where]  # label, confidence, face-up tile under it


def readings(job: tuple[int, str | None, tuple[tuple[str, float], ...]]) -> list[list[Reading]]:
    """Each reader's reading of each tile box before the setting, with the tile under it
    (None: no tile)."""
    seed, injected, reader_paths = job
    detector = Detector(threads=1)
    readers = [Reader(Path(path), threads=1, flatness=None, half_turn_below=bar)
               for path, bar in reader_paths]  # fmt: skip
    rows: list[list[Reading]] = [[] for _ in readers]
    frames = round_frames(seed, injected, 1 / FPS, Timeline.of().setting)
    for index, (rendering, truth) in enumerate(frames):
        boxes = detector.detect(rendering.image)
        if not len(boxes):
            continue
        tiles = [under(corners, truth) for corners in boxes.corners]  # the readers keep the boxes
        centres = boxes.corners.mean(1)
        for reader, kept in zip(readers, rows, strict=True):
            found = reader.read(rendering.image, boxes)
            for tile, label, score, (x, y) in zip(
                tiles, found.labels, found.label_scores, centres, strict=True
            ):
                if label.startswith("die-"):
                    continue
                if label == "back" and (tile is None or tile.label == "back"):
                    continue
                where = (seed, index / FPS, float(x), float(y))
                kept.append((label, float(score), tile.label if tile else None, where))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", type=Path, nargs="+", default=[ROOT / "models" / "reader.onnx"])
    parser.add_argument("--half-turn-below", type=float, nargs="+", default=[HALF_TURN_BELOW])
    parser.add_argument("--clean", type=int, default=30)
    parser.add_argument("--exposed", type=int, default=12)
    args = parser.parse_args()
    missing = [str(path) for path in args.reader if not path.is_file()]
    if missing:
        print(f"error: no reader at {', '.join(missing)}", file=sys.stderr)
        return 2
    paths = tuple((str(path), bar) for path in args.reader for bar in args.half_turn_below)
    jobs: list[tuple[int, str | None, tuple[tuple[str, float], ...]]]
    jobs = [(800100 + i, None, paths) for i in range(args.clean)]
    jobs += [(800200 + i, "exposed-tile-stacking", paths) for i in range(args.exposed)]
    rows: list[list[Reading]] = [[] for _ in paths]
    with Pool(2) as pool:
        for found in tqdm(pool.imap_unordered(readings, jobs), total=len(jobs), unit="round"):
            for read, more in zip(rows, found, strict=True):
                read.extend(more)
    for (path, half_turn), read in zip(paths, rows, strict=True):
        false = [r for r in read if r[0] != "back" and r[2] in (None, "back")]
        exposed = [r for r in read if r[2] not in (None, "back")]
        print(f"\nreader {path}, half turn below {half_turn}, {args.clean} clean and "
              f"{args.exposed} exposed-tile rounds\n")  # fmt: skip
        print("| bar | faces read over no face | exposed faces read right |\n|---:|---:|---:|")
        for bar in BARS:
            right = sum(label == tile and score >= bar for label, score, tile, _ in exposed)
            print(f"| {bar} | {sum(score >= bar for _, score, _, _ in false)} "
                  f"| {right} of {len(exposed)} |")  # fmt: skip
        for label, score, tile, (seed, t, x, y) in sorted(false, key=lambda r: r[3]):
            if score >= FACES.min_read:  # the follower's bar: what it would count
                print(f"- {label} at {score:.2f} over {tile or 'no tile'}: round {seed} at "
                      f"{t:.1f} s, box centre ({x:.0f}, {y:.0f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
