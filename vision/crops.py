"""The reader's input cut from the full-resolution frame: the same in training and at run time.

A detector's boxes are a few pixels off (measured on the half-size detector: a tile's centre
by 11% of its width at the median and 22% at the 90th percentile, its size by up to 15%, its
turn by 9 degrees at the 90th percentile; a die's box 20% too large, its centre off by 22%
of the die at the median, and its turn arbitrary: a square has no long side). Crops therefore
reach beyond the box, and the reader is trained on boxes moved the same way
(`vision.training.train`).
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

CROP = 64
"""Every crop is CROP x CROP pixels: a tile's long side runs top to bottom."""
TILE_MARGIN = 1.15
"""A tile crop spans its box grown by 15% each way, so a box a little short keeps every pip."""
DIE_MARGIN = 1.4
"""A die crop is an upright square 1.4 times the box's mean side around the box's centre."""
LEAN_MARGIN = 2.2
"""Whether a die leans shows beside its top face (the side it leans to), so the flatness
reader's crop is wider: 2.2 times the box's side. The flatness reader was trained on such
crops around boxes moved as the detector's own are, on average 1.17 times the die
(`vision.training.train.jitter`)."""
REFINED_LEAN_MARGIN = 2.6
"""The flatness reader's crop around a refined box (`vision.refine`, true to the die within a
few percent): 2.2 x 1.17 times its side, the view the reader was trained on. Cut at 2.2 around
refined boxes, flat dice read as leaning in six of 231 simulated rounds (false dice-not-flat
alerts); at 2.4, 2.6 and 2.8 in one, every cocked die still caught (docs/accuracy.md)."""


def canonical(corners: NDArray[np.float64]) -> NDArray[np.float64]:
    """Order four corners so that the first edge is a short side: the crop is then upright
    (a tile's long axis vertical), up to a half turn the reader learns to ignore."""
    corners = np.asarray(corners, dtype=np.float64)
    first = np.linalg.norm(corners[1] - corners[0])
    second = np.linalg.norm(corners[2] - corners[1])
    return corners if first <= second else np.roll(corners, -1, axis=0)


def cut(
    image: NDArray[np.uint8],
    corners: NDArray[np.float64],
    die: bool,
    die_margin: float = DIE_MARGIN,
) -> NDArray[np.uint8]:
    """The reader's CROP x CROP view of one box: a tile rectified along its own axes, a die as
    an upright square (its pips read the same at any turn, and its box's turn is a guess)."""
    corners = np.asarray(corners, dtype=np.float64)
    centre = corners.mean(0)
    if die:
        side = np.mean(np.linalg.norm(np.roll(corners, -1, 0) - corners, axis=1)) * die_margin
        half = side / 2
        src = centre + np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    else:
        src = centre + (canonical(corners) - centre) * TILE_MARGIN
    dst = np.array([[0, 0], [CROP, 0], [CROP, CROP], [0, CROP]], np.float32)
    warp = cv2.getPerspectiveTransform(src.astype(np.float32), dst)
    return cv2.warpPerspective(image, warp, (CROP, CROP), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)  # fmt: skip
