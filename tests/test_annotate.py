"""`paigow detect --annotate`: tags a person can read, not on top of each other."""

from __future__ import annotations

import numpy as np
import pytest

from vision.annotate import FACE_COLOUR, LABEL_HEIGHT, _free_place, annotate, tags
from vision.detections import Detections


def square(x: float, y: float, w: float = 20, h: float = 40) -> np.ndarray:
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], float)


@pytest.mark.parametrize(
    ("taken", "expected"),
    [
        ([], (100, 72)),  # above the box
        ([(100, 72, 40, 26)], (100, 142)),  # above taken: below
        ([(100, 72, 40, 26), (100, 142, 40, 26)], (122, 100)),  # then right of it
        ([(0, 0, 1000, 1000)], (100, 72)),  # nowhere free: above all the same
    ],
)
def test_a_tag_goes_where_no_other_tag_is(
    taken: list[tuple[int, int, int, int]], expected: tuple[int, int]
) -> None:
    x, y, _, _ = _free_place(square(100, 100), 40, 26, taken, (1080, 1920, 3))
    assert (x, y) == expected


def test_tags_are_readable_at_1080p_and_apart_in_a_hand() -> None:
    hand = [square(900 + 24 * k, 500) for k in range(4)]  # four faces side by side
    dice = [square(1400 + 10 * k, 700, 9, 9) for k in range(3)]  # three dice together
    found = Detections(np.array(hand + dice + [square(100, 100)]), np.ones(8),
                       ("6-6", "1-1", "4-4", "1-3", "die-1", "die-2", "die-4", "back"))  # fmt: skip
    drawn = tags((1080, 1920, 3), found)
    assert [t.text for t in drawn] == ["6-6", "1-1", "4-4", "1-3", "die-1", "die-2", "die-4"]
    for k, (x, y, w, h) in enumerate(t.box for t in drawn):
        assert h >= LABEL_HEIGHT * 1080  # tall enough to read
        for a, b, w2, h2 in (t.box for t in drawn[:k]):
            assert not (x < a + w2 and a < x + w and y < b + h2 and b < y + h)  # apart
    unsure = Detections(np.array(hand[:1]), np.ones(1), ("6-6",), label_confidence=np.array([0.6]))
    assert tags((1080, 1920, 3), unsure)[0].text == "6-6 60%"  # a doubt stands out
    image = annotate(np.zeros((1080, 1920, 3), np.uint8), found)
    assert np.all(image[drawn[0].box[1] + 1, drawn[0].box[0] + 1] == FACE_COLOUR)
