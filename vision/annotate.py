"""Draw detections on a frame, for people: oriented boxes and labels."""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detections import Detections


def annotate(image: NDArray[np.uint8], detections: Detections) -> NDArray[np.uint8]:
    out = image.copy()
    scale = max(image.shape[1] / 1920, 0.5)
    for corners, label in zip(detections.corners, detections.labels, strict=True):
        colour = (
            (0, 200, 255)
            if label == "back"
            else (0, 0, 255)
            if label.startswith("die")
            else (0, 255, 0)
        )
        cv2.polylines(out, [np.round(corners).astype(np.int32)], True, colour, max(1, round(scale)))
        x, y = corners.min(axis=0)
        cv2.putText(out, label, (int(x), int(y) - 3), cv2.FONT_HERSHEY_SIMPLEX, 0.45 * scale,
                    colour, max(1, round(scale)), cv2.LINE_AA)  # fmt: skip
    return out
