"""Rectified crops of oriented boxes: the reader's input, the same in training and at run time."""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

CROP = 64
"""Every crop is CROP x CROP pixels: a tile's long side runs top to bottom."""


def canonical(corners: NDArray[np.float64]) -> NDArray[np.float64]:
    """Order four corners so that the first edge is a short side: the crop is then upright
    (a tile's long axis vertical), up to a half turn the reader learns to ignore."""
    corners = np.asarray(corners, dtype=np.float64)
    first = np.linalg.norm(corners[1] - corners[0])
    second = np.linalg.norm(corners[2] - corners[1])
    return corners if first <= second else np.roll(corners, -1, axis=0)


def rectify(image: NDArray[np.uint8], corners: NDArray[np.float64]) -> NDArray[np.uint8]:
    src = canonical(corners).astype(np.float32)
    dst = np.array([[0, 0], [CROP, 0], [CROP, CROP], [0, CROP]], np.float32)
    warp = cv2.getPerspectiveTransform(src, dst)
    return cv2.warpPerspective(image, warp, (CROP, CROP), flags=cv2.INTER_AREA,
                               borderMode=cv2.BORDER_REPLICATE)  # fmt: skip
