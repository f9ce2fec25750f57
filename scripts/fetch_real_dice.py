"""Fetch real photographs of dice and cut them into the reader's crops (never committed).

Source: N3VERS4YDIE/dice-recognition on GitHub, its `datasets/dices` folder: the Roboflow
project "Rune55" v3 (https://universe.roboflow.com/rune-zkmvl/rune55/dataset/3), 7,239 photos
at 640 x 640 with one axis-aligned box per die, licence CC BY 4.0 (attribution below and in
models/MODEL_CARD.md). Its train and valid splits train and select; its test split is only
ever measured on.

python3 scripts/fetch_real_dice.py [--source URL_OR_CLONE] [--out datasets/real-dice]

Writes OUT/reader/{train,val,test}/die-N/*.png (the reader's 64 x 64 crops: train boxes moved
as the detector's are, two copies each; val and test as labelled), OUT/table/{train,val,test}/
(each photograph shrunk towards the table's scale, with its boxes in photos.jsonl:
`vision.training.real_dice`), OUT/ATTRIBUTION.md and OUT/card.json (counts). `--table-only`
rewrites the table-scale photographs alone.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from vision.crops import cut

SOURCE = "https://github.com/N3VERS4YDIE/dice-recognition"
SPLITS = {"train": "train", "valid": "val", "test": "test"}
TRAIN_COPIES = 2
ATTRIBUTION = """# Real dice photographs

"Rune55" v3 by Roboflow user rune-zkmvl (https://universe.roboflow.com/rune-zkmvl/rune55/dataset/3),
as published in N3VERS4YDIE/dice-recognition (https://github.com/N3VERS4YDIE/dice-recognition),
`datasets/dices`. Licence: CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/).
Changes: each labelled die cut out and resampled to the reader's 64 x 64 crop; training boxes
moved at random as the detector's boxes move. Not committed to this repository.
"""


def corners_of(line: str, width: int, height: int) -> tuple[int, np.ndarray]:
    """A YOLO label line (class cx cy w h, 0..1) as the class and the box's four corners."""
    cls, cx, cy, w, h = line.split()
    x0, y0 = (float(cx) - float(w) / 2) * width, (float(cy) - float(h) / 2) * height
    x1, y1 = x0 + float(w) * width, y0 + float(h) * height
    return int(cls), np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)


def convert(dataset: Path, out: Path, seed: int = 0,
            crops: bool = True) -> dict[str, Counter[str]]:  # fmt: skip
    from vision.training.real_dice import write_photo
    from vision.training.train import jitter

    rng = np.random.default_rng(seed)
    counts: dict[str, Counter[str]] = {}
    for theirs, ours in SPLITS.items():
        counts[ours] = Counter()
        for label_file in sorted((dataset / theirs / "labels").glob("*.txt")):
            image_file = dataset / theirs / "images" / f"{label_file.stem}.jpg"
            image = cv2.imread(str(image_file))
            if image is None:
                continue
            height, width = image.shape[:2]
            labelled = [
                corners_of(line, width, height)
                for line in label_file.read_text().splitlines()
                if line.strip()
            ]
            if labelled:
                write_photo(
                    out / "table" / ours,
                    label_file.stem[:60],
                    image,
                    [(*c[0], *c[2]) for _, c in labelled],
                    [k + 1 for k, _ in labelled],
                )
            for index, (cls, corners) in enumerate(labelled if crops else []):
                label = f"die-{cls + 1}"
                folder = out / "reader" / ours / label
                folder.mkdir(parents=True, exist_ok=True)
                copies = TRAIN_COPIES if ours == "train" else 1
                for copy in range(copies):
                    box = jitter(corners, rng, die=True) if ours == "train" else corners
                    name = f"{label_file.stem[:40]}_{index}_{copy}.png"
                    cv2.imwrite(str(folder / name), cut(image, box, die=True))
                    counts[ours][label] += 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=SOURCE, help="the repository's URL or a local clone")
    parser.add_argument("--out", default="datasets/real-dice")
    parser.add_argument("--table-only", action="store_true",
                        help="rewrite only the table-scale photographs (OUT/table)")  # fmt: skip
    args = parser.parse_args()
    out = Path(args.out)
    with tempfile.TemporaryDirectory() as scratch:
        clone = Path(scratch) / "dice"
        steps = (
            ["git", "clone", "--quiet", "--depth", "1", "--no-checkout", args.source, str(clone)],
            ["git", "-C", str(clone), "checkout", "HEAD", "--", "datasets/dices"],  # the photos
        )
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                reason = (done.stderr.strip().splitlines() or ["git failed"])[-1]
                print(f"cannot fetch {args.source}: {reason}", file=sys.stderr)
                return 2
        dataset = clone / "datasets" / "dices"
        if not (dataset / "data.yaml").is_file():
            print(f"{args.source} has no datasets/dices/data.yaml", file=sys.stderr)
            return 2
        shutil.rmtree(out / "table", ignore_errors=True)
        if args.table_only:
            convert(dataset, out, crops=False)
            print(f"{out / 'table'}: the photographs at table scale")
            return 0
        shutil.rmtree(out / "reader", ignore_errors=True)
        counts = convert(dataset, out)
    (out / "ATTRIBUTION.md").write_text(ATTRIBUTION)
    card = {split: dict(sorted(c.items())) for split, c in counts.items()}
    (out / "card.json").write_text(json.dumps({"source": args.source, "crops": card}, indent=2))
    for split, c in card.items():
        print(f"{split}: {sum(c.values())} crops ({', '.join(f'{k} {v}' for k, v in c.items())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
