"""Write the frames the edge box reads at start-up to check its models (`vision/selfcheck.py`):
six full-table 1080p frames of a seed no model was trained on, and what lies in each.

python3 scripts/make_selfcheck.py
"""

from __future__ import annotations

import json
import shutil

import cv2

from vision.selfcheck import FRAMES
from vision.synth.dataset import render_sample

SEED = 4242
"""The seed `vision.training.evaluate` times its frames with: never trained on."""
COUNT = 6
JPEG_QUALITY = 95
"""Near-lossless at a seventh of PNG's size (2.7 MB a frame); the self-check's bars are far
from what the models read either way (docs/detector.md)."""


def main() -> None:
    shutil.rmtree(FRAMES, ignore_errors=True)
    FRAMES.mkdir(parents=True)
    known = {}
    for index in range(COUNT):
        sample = render_sample(SEED, index, (1920, 1080), close_ups=0.0)
        name = f"frame-{index}.jpg"
        quality = [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]
        cv2.imwrite(str(FRAMES / name), sample.rendering.image, quality)
        known[name] = [
            {
                "box": [round(float(v), 2) for v in o.box],
                "corners": [[round(float(x), 2), round(float(y), 2)] for x, y in o.corners],
                "label": o.label,
                "visible": round(float(o.visible), 3),
            }
            for o in sample.rendering.labels
            if o.label is not None
        ]
    (FRAMES / "objects.json").write_text(json.dumps(known, indent=1))
    total = sum(f.stat().st_size for f in FRAMES.iterdir())
    print(f"{FRAMES}: {COUNT} frames, {total / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
