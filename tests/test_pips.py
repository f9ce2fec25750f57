"""Pip counting (`vision.training.pips`): drawn dice of either polarity, counted."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.training.pips import count_pips

SPOTS = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (-1, 1), (1, -1), (1, 1)],
    5: [(-1, -1), (-1, 1), (0, 0), (1, -1), (1, 1)],
    6: [(-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)],
}


def drawn_die(value: int, body: int, pip: int, turn: float) -> np.ndarray:
    """A 64-pixel crop of a die face on grey cloth, turned by `turn` degrees."""
    crop = np.full((64, 64, 3), 90, np.uint8)
    cv2.rectangle(crop, (12, 12), (52, 52), (body,) * 3, -1)
    for dx, dy in SPOTS[value]:
        cv2.circle(crop, (32 + 11 * dx, 32 + 11 * dy), 4, (pip,) * 3, -1)
    turned = cv2.getRotationMatrix2D((32, 32), turn, 1.0)
    return cv2.warpAffine(crop, turned, (64, 64), borderValue=(90, 90, 90))


@pytest.mark.parametrize("value", range(1, 7))
@pytest.mark.parametrize(("body", "pip"), [(235, 20), (40, 230)], ids=["white", "black"])
@pytest.mark.parametrize("turn", [0.0, 30.0])
def test_a_die_face_is_counted_whichever_its_colours(
    value: int, body: int, pip: int, turn: float
) -> None:
    assert count_pips(drawn_die(value, body, pip, turn)) == value


def test_a_blank_face_has_no_count() -> None:
    assert count_pips(np.full((64, 64, 3), 200, np.uint8)) is None
