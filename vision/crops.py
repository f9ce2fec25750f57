"""The reader's input cut from the full-resolution frame: the same in training and at run time.

A detector's boxes are a few pixels off (measured on the half-size detector: a tile's centre
by 11% of its width at the median and 22% at the 90th percentile, its size by up to 15%, its
turn by 9 degrees at the 90th percentile; a die's box 20% too large, its centre off by 22%
of the die at the median, and its turn arbitrary: a square has no long side). Crops therefore
reach beyond the box, and the reader is trained on boxes moved the same way
(`vision.training.train`).
"""

from __future__ import annotations

from collections.abc import Sequence

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


def as_input(crops: Sequence[NDArray[np.uint8]], size: int = CROP) -> NDArray[np.float32]:
    """Crops as cut (BGR) in the layout every network here was trained on: RGB as ultralytics
    reads images, scaled to 0-1, N x 3 x size x size."""
    return cv2.dnn.blobFromImages(list(crops), 1 / 255, (size, size), swapRB=True)


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
    return _warp(image, src)


def _warp(image: NDArray[np.uint8], src: NDArray[np.float64]) -> NDArray[np.uint8]:
    """The quadrilateral `src` (its first corner top left, its first edge the top) drawn onto
    the CROP x CROP square."""
    dst = np.array([[0, 0], [CROP, 0], [CROP, CROP], [0, CROP]], np.float32)
    warp = cv2.getPerspectiveTransform(src.astype(np.float32), dst)
    return cv2.warpPerspective(image, warp, (CROP, CROP), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)  # fmt: skip


TILE_VIEW_MM = (31.0, 80.0)
"""A tile crop at the table's scale spans 31 x 80 mm of cloth: the widest and longest tiles
`tiles.md` names (about 25-27 x 60-70 mm) grown by TILE_MARGIN, so the biggest set keeps every
pip and a smaller one shows smaller, as it is."""
DIE_VIEW_MM = 28.0
"""A die crop at the table's scale spans 28 mm square: DIE_MARGIN times a 20 mm die, the
largest the appearance families draw."""


def cut_to_scale(
    image: NDArray[np.uint8],
    corners: NDArray[np.float64],
    die: bool,
    homography: NDArray[np.float64],
    view: tuple[float, float] | None = None,
) -> NDArray[np.uint8]:
    """The reader's CROP x CROP view of one box at a fixed scale of the cloth (`homography`:
    table mm to image pixels): the box gives only the centre and, for a tile, the turn, so a
    box a little long or short, a camera higher or lower, and the perspective towards the far
    side of the table no longer change what the reader sees. `view`: the patch's width and
    length (mm), TILE_VIEW_MM or DIE_VIEW_MM square unless given (a set's own size grown by
    its margin, `set_view`)."""
    homography = np.asarray(homography, np.float64)
    on_cloth = cv2.perspectiveTransform(
        canonical(corners).reshape(-1, 1, 2), np.linalg.inv(homography)
    ).reshape(4, 2)
    centre = on_cloth.mean(0)
    width, length = view or ((DIE_VIEW_MM, DIE_VIEW_MM) if die else TILE_VIEW_MM)
    half_w, half_l = width / 2, length / 2
    if die:
        across, along = np.array([1.0, 0]), np.array([0, 1.0])
    else:
        along = (on_cloth[2] + on_cloth[3] - on_cloth[0] - on_cloth[1]) / 2
        along /= max(float(np.linalg.norm(along)), 1e-9)
        across = (on_cloth[1] + on_cloth[2] - on_cloth[0] - on_cloth[3]) / 2
        across -= along * (across @ along)  # square to the long side
        across /= max(float(np.linalg.norm(across)), 1e-9)
    patch = centre + np.array([[-half_w, -half_l], [half_w, -half_l], [half_w, half_l],
                               [-half_w, half_l]]) @ np.stack([across, along])  # fmt: skip
    return _warp(image, cv2.perspectiveTransform(patch.reshape(-1, 1, 2), homography).reshape(4, 2))


def set_view(size: tuple[float, float], die: bool) -> tuple[float, float]:
    """The patch `cut_to_scale` cuts for a set whose tiles (or dice) measure `size` (width,
    length mm): grown by the box crop's margin, so the set's tiles fill the crop as a true box
    does, whatever its maker's size, and only the box's own error no longer shows."""
    if die:
        side = float(np.mean(size)) * DIE_MARGIN
        return side, side
    return size[0] * TILE_MARGIN, size[1] * TILE_MARGIN
