"""An object of a tile's size that no model boxed, beside a short hand (`vision.follow.unboxed`):
found where it lies unboxed, and only where it is as large, as solid and as far from the cloth as
a tile is."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.follow.unboxed import unboxed

CLOTH = (40, 110, 30)  # BGR: a green cloth
IVORY = (200, 225, 235)
TILE = (68.0, 27.0)  # the set's tiles, mm
ZONE = np.array([[0.0, 0.0], [220.0, 0.0], [220.0, 150.0], [0.0, 150.0]])
SCALE = 1.5  # image pixels a millimetre: the table seen a little closer than 1:1
HOMOGRAPHY = np.array([[SCALE, 0.0, 20.0], [0.0, SCALE, 10.0], [0.0, 0.0, 1.0]])


def rectangle(centre: tuple[float, float], length: float, width: float, turn: float) -> np.ndarray:
    """Four corners (table mm) of a rectangle turned `turn` degrees."""
    return cv2.boxPoints(((centre[0], centre[1]), (length, width), turn)).astype(np.float64)


def scene(things: list[tuple[np.ndarray, tuple[int, int, int]]]) -> np.ndarray:
    """A frame of the cloth with each thing (corners in table mm, colour) drawn on it."""
    image = np.zeros((300, 400, 3), np.uint8)
    image[:] = CLOTH
    rng = np.random.default_rng(3)
    image = np.clip(image + rng.normal(0, 4, image.shape), 0, 255).astype(np.uint8)  # weave
    for corners, colour in things:
        pixels = cv2.perspectiveTransform(corners.reshape(-1, 1, 2), HOMOGRAPHY).reshape(-1, 2)
        cv2.fillPoly(image, [np.round(pixels).astype(np.int32)], colour)
    return image


FOREIGN = rectangle((150, 70), 62, 26, 30)
ROUNDED = cv2.ellipse2Poly((150, 70), (34, 14), 30, 0, 360, 5).astype(np.float64)
BESIDE = rectangle((150 - 26.5 * np.sin(np.radians(30)), 70 + 26.5 * np.cos(np.radians(30))),
                   62, 27, 30)  # fmt: skip


@pytest.mark.parametrize(
    ("things", "boxed", "found"),
    [
        ([(FOREIGN, IVORY)], [], [(62, 26)]),  # a light tile no model boxed
        ([(FOREIGN, IVORY)], [FOREIGN], []),  # the same tile, boxed: nothing left to find
        # beside a boxed tile, touching it: the grown box cuts a few millimetres off, no more
        ([(FOREIGN, IVORY), (BESIDE, (20, 20, 20))], [BESIDE], [(62, 22)]),
        ([(rectangle((60, 60), 39, 39, 0), (30, 30, 200))], [], []),  # a chip's square of size
        ([(rectangle((110, 75), 140, 30, 10), (90, 120, 180))], [], []),  # a sleeve: too long
        ([(rectangle((110, 75), 200, 3, 0), (230, 230, 230))], [], []),  # the zone's line
        ([(FOREIGN, (45, 115, 36))], [], []),  # a tile the cloth's colour: nothing to go by
        ([(ROUNDED, (120, 160, 210))], [], []),  # a tile's size, not its shape: a fingertip
    ],
    ids=[
        "unboxed",
        "boxed",
        "beside a boxed one",
        "chip",
        "sleeve",
        "printed line",
        "cloth",
        "rounded",
    ],
)
def test_an_object_is_found_where_it_lies_unboxed_and_is_a_tiles_size(
    things: list[tuple[np.ndarray, tuple[int, int, int]]],
    boxed: list[np.ndarray],
    found: list[tuple[float, float]],
) -> None:
    boxes = np.array(boxed).reshape(-1, 4, 2)
    got = unboxed(scene(things), HOMOGRAPHY, ZONE, boxes, TILE)
    assert len(got) == len(found)
    for g, (length, width) in zip(got, found, strict=True):
        assert abs(g.length - length) <= 3 and abs(g.width - width) <= 3
    for g in got:
        assert np.linalg.norm(g.xy - FOREIGN.mean(axis=0)) < 4 and g.fill > 0.85


FIXTURES = Path(__file__).parent / "fixtures" / "unboxed"


def test_a_light_tile_whose_dark_pips_notch_its_outline_is_still_a_tiles_shape() -> None:
    """Another maker's ivory `4-5` pressed against a boxed tile of its hand, its dark pips near
    the dark blue cloth's colour (round 995003 from pixels, box 4 from above at a millimetre a
    pixel): the pips on its end cut a notch into its outline, which filled 0.75 of its
    rectangle; made convex, 0.94. Missed, it left only `missing-tile` at that box."""
    image = cv2.imread(str(FIXTURES / "light-tile-dark-pips.png"))
    known = json.loads((FIXTURES / "light-tile-dark-pips.json").read_text())
    zone, boxes = np.array(known["zone"]), np.array(known["boxes"]).reshape(-1, 4, 2)
    got = unboxed(image, np.eye(3), zone, boxes, (61.0, 25.0))
    assert [(round(g.length), round(g.width)) for g in got] == [(64, 21)]
    assert np.linalg.norm(got[0].xy - (109.5, 108.2)) < 3
