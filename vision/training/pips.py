"""Pip counting as a second opinion on a die the reader is unsure of (issue 37): measured
against the plain reader on class folders of die crops, to keep it only where it wins.

A die's value is its number of pips, whatever the maker draws them like; the reader learnt
dice from one renderer and reads most real photographs wrong. This counts the round blobs of
either polarity (dark pips on a light die, light on a dark one) on the die's face, and takes
the count where the reader's surest die value is under each of `THRESHOLDS`.

`python3 -m vision.training.pips --reader models/reader.onnx --crops datasets/real-dice/reader/test
[--crops ...]` prints, for each folder, the reader alone, the count alone and each mix.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.crops import as_input

SIDE = 96
"""Pixels a crop is resized to before counting: a 64-pixel crop's pips are 5-9 px across."""
BLOCK = 21
"""The adaptive threshold's window: about two pips and the gap between, so a pip stands out
from the face around it whatever the light across the die."""
OFFSET = 12
"""Grey levels a pixel must lie below its window's mean to be part of a pip (blur and
texture stay under it)."""
AREA = (12, 500)
"""Blob area in pixels (at `SIDE`) a pip may have: a 1 drawn large is the biggest."""
ROUND = 2.2
"""Longest to shortest side of a blob's box: pips are round; edges and shadows are long."""
FILL = 0.5
"""Least share of its box a blob fills: a disc fills 0.79, an edge's corner much less."""
MARGIN = 14
"""Pixels (at `SIDE`) from the crop's edge inside which a blob's centre must lie: the crop
spans the die with some margin, where the next die or the cloth begins."""
ALIKE = (0.4, 2.5)
"""A pip's area against the median blob's: one die's pips are one size."""
THRESHOLDS = (0.5, 0.7, 0.9, 0.99)
"""The reader's surest die value under which the count is taken, each measured."""


def count_pips(crop: NDArray[np.uint8]) -> int | None:
    """The die's value by counting its pips; None where neither polarity gives 1-6 blobs."""
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    grey = cv2.GaussianBlur(cv2.resize(grey, (SIDE, SIDE), interpolation=cv2.INTER_CUBIC),
                            (3, 3), 0)  # fmt: skip
    best: tuple[float, int] | None = None
    for image in (grey, 255 - grey):
        pips = cv2.adaptiveThreshold(image, 255, cv2.ADAPTIVE_THRESH_MEAN_C,
                                     cv2.THRESH_BINARY_INV, BLOCK, OFFSET)  # fmt: skip
        n, _, stats, centres = cv2.connectedComponentsWithStats(pips)
        areas = []
        for (_, _, w, h, area), (x, y) in zip(stats[1:n], centres[1:n], strict=True):
            if not AREA[0] <= area <= AREA[1] or max(w, h) > ROUND * min(w, h):
                continue
            inside = MARGIN < x < SIDE - MARGIN and MARGIN < y < SIDE - MARGIN
            if area / (w * h) >= FILL and inside:
                areas.append(float(area))
        if not areas:
            continue
        median = float(np.median(areas))
        kept = [a for a in areas if ALIKE[0] * median <= a <= ALIKE[1] * median]
        if 1 <= len(kept) <= 6:
            spread = float(np.std(kept)) / median if len(kept) > 1 else 0.3
            if best is None or spread < best[0]:  # the polarity whose pips are most alike
                best = (spread, len(kept))
    return None if best is None else best[1]


def measure(reader: Path, crops: Path, per_class: int = 300) -> str:
    """One line: the reader alone, the count alone, and each mix, on `crops/die-N/`."""
    import onnxruntime as ort

    from vision.detector import names_of

    session = ort.InferenceSession(str(reader), providers=["CPUExecutionProvider"])
    names = names_of(session.get_modelmeta().custom_metadata_map["names"])
    dice = [i for i, n in names.items() if n.startswith("die-")]
    images, truth = [], []
    for value in range(1, 7):
        for path in sorted((crops / f"die-{value}").glob("*"))[:per_class]:
            image = cv2.imread(str(path))
            if image is not None:
                images.append(image)
                truth.append(value)
    if not images:
        return f"{crops}: no die-N folders of crops"
    probs = []
    for start in range(0, len(images), 256):
        blob = as_input(images[start : start + 256])
        probs.append(session.run(None, {session.get_inputs()[0].name: blob})[0][:, dice])
    chosen = np.concatenate(probs)
    chosen /= chosen.sum(1, keepdims=True)
    read, sure = chosen.argmax(1) + 1, chosen.max(1)
    counted = np.array([count_pips(image) or 0 for image in images])
    right = np.array(truth)
    line = (f"{crops} ({len(images)} dice): reader {np.mean(read == right):.1%}, "
            f"count {np.mean(counted == right):.1%}")  # fmt: skip
    for threshold in THRESHOLDS:
        mixed = np.where((sure < threshold) & (counted > 0), counted, read)
        line += f", count under {threshold}: {np.mean(mixed == right):.1%}"
    return line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", type=Path, default=Path("models/reader.onnx"))
    parser.add_argument("--crops", type=Path, action="append", required=True,
                        help="a folder of die-1 .. die-6 crop folders (repeatable)")  # fmt: skip
    args = parser.parse_args()
    for folder in args.crops:
        if not folder.is_dir():
            print(f"--crops: no folder {folder}", file=sys.stderr)
            return 2
    for folder in args.crops:
        print(measure(args.reader, folder), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
