"""Regenerate docs/reuse.jpg: what the models look at again in a frame of a simulated round.

    python3 scripts/reuse_picture.py [--seed 777001] [--t 9.0]

The round's frames are followed with `vision.reuse` up to `--t`; that frame is drawn half size
with each look's crop (yellow), the part whose objects it takes (green), the detections it gave
(green boxes) and those kept from earlier frames (blue boxes).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.replay import ModelSource  # noqa: E402
from vision.synth.round import Studio  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=777001)
    parser.add_argument("--t", type=float, default=9.0)
    args = parser.parse_args()
    studio = Studio.of(args.seed, "mbs-2020", [], (1920, 1080))
    models = ModelSource(reuse=True)
    assert models.reuse is not None
    for index in range(round(args.t * 10) + 1):
        t = round(index / 10, 3)
        image, _, _ = studio.frame(t)
        found = models.detections(index, t, image)
    looks = models.reuse.regions
    fresh = np.zeros(len(found), bool)
    for region in looks:
        fresh |= region.holds(found.corners.mean(1))
    for corners, new in zip(found.corners, fresh, strict=True):
        colour = (80, 220, 80) if new else (255, 170, 60)
        cv2.polylines(image, [corners.astype(np.int32)], True, colour, 3)
    for region in looks:
        cv2.rectangle(image, region.crop[:2], region.crop[2:], (0, 220, 255), 3)
        cv2.rectangle(image, region.inside[:2], region.inside[2:], (80, 220, 80), 3)
    lines = (f"t = {args.t:.1f} s: {models.reuse.looked:.0%} of the frame looked at again",
             "yellow: looked at; green: objects taken from the look; blue: kept")  # fmt: skip
    for row, text in enumerate(lines):
        for colour, width in (((0, 0, 0), 8), ((255, 255, 255), 3)):
            cv2.putText(image, text, (330, 60 + 60 * row), cv2.FONT_HERSHEY_SIMPLEX, 1.5,
                        colour, width, cv2.LINE_AA)  # fmt: skip
    out = ROOT / "docs" / "reuse.jpg"
    cv2.imwrite(str(out), cv2.resize(image, (960, 540), interpolation=cv2.INTER_AREA),
                [cv2.IMWRITE_JPEG_QUALITY, 85])  # fmt: skip
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
