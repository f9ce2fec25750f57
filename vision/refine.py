"""Tighter boxes: the geometry of the refiner that moves each detected box onto its object.

The CPU-trained detector finds tiles well but boxes them loosely (on held-out frames a found
tile's box overlaps the tile by 0.85 at the mean, a die's by 0.67, and one die in nine by less
than 0.5), and a loose box costs both the reader (a crop cut off-centre) and the round
follower (a stack's or a block's place). The refiner (`vision.detector.Refiner`) looks at each
box in a crop wider than the box and regresses where the object really lies, in the box's own
frame, R-CNN style:

- a tile: its centre's shift along the box's short and long axes (in box widths and lengths),
  the log of each side's change, and the turn;
- a die: its centre's shift (in box sides), the log of the side's change, and its turn as
  cos 4a, sin 4a (a square's turn is only known modulo a quarter).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.crops import canonical

REFINE_CROP = 64
"""Every refiner crop is REFINE_CROP x REFINE_CROP pixels (a tile's long axis vertical)."""


@dataclass(frozen=True)
class View:
    """How widely a refiner stage looks around a box, and how far it may move it. Its text form
    (`View.parse`) is stored in each stage's ONNX file, so a model carries the view it was
    trained on."""

    tile: float
    """A tile's crop spans its box grown by this factor each way."""
    die: float
    """A die's crop is an upright square this many times the box's mean side."""
    most_shift: float
    """At most this share of a box's side of shift, and a factor e^most_shift of size: a box over
    nothing (which the refiner never saw in training) cannot be sent across the table."""

    def __str__(self) -> str:
        return f"{self.tile} {self.die} {self.most_shift}"

    @classmethod
    def parse(cls, text: str) -> View:
        tile, die, most_shift = (float(x) for x in text.split())
        return cls(tile, die, most_shift)


FIRST = View(1.6, 2.0, 0.5)
"""Around the detector's own boxes: a box off by a fifth of a tile's width still shows the whole
tile and the cloth around it."""
SECOND = View(1.3, 1.6, 0.25)
"""Around boxes the first stage refined (off by a pixel or two): a closer look, a tile's long
side at about the frame's own resolution in the 64 px crop instead of three quarters of it."""
STAGES = (FIRST, SECOND)
"""Each refiner stage's view, in the order the stages run (`vision.detector.REFINERS`)."""
OUTPUTS = 10
"""Five numbers for a tile (dx, dy, log dw, log dh, turn), then five for a die (dx, dy, log ds,
cos 4a, sin 4a): one network, two heads, each box reads its own."""


def frame_of(corners: NDArray[np.float64], die: bool) -> tuple[NDArray[np.float64], ...]:
    """A box's centre, its axes (unit vectors) and the sides along them. A tile's first axis
    is its short side; a die's axes are the image's (its crop is upright)."""
    corners = np.asarray(corners, np.float64)
    centre = corners.mean(0)
    if die:
        side = float(np.mean(np.linalg.norm(np.roll(corners, -1, 0) - corners, axis=1)))
        return centre, np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([side, side])
    ordered = canonical(corners)
    short, long_ = ordered[1] - ordered[0], ordered[2] - ordered[1]
    w, h = np.linalg.norm(short), np.linalg.norm(long_)
    u = short / max(w, 1e-9)
    v = long_ / max(h, 1e-9)
    return centre, u, v, np.array([w, h])


def crop(image: NDArray[np.uint8], corners: NDArray[np.float64], die: bool,
         view: View = FIRST) -> NDArray[np.uint8]:  # fmt: skip
    """A refiner stage's view of one box: the box's frame, grown, warped to REFINE_CROP square."""
    centre, u, v, sides = frame_of(corners, die)
    grow = view.die if die else view.tile
    half_u, half_v = u * sides[0] * grow / 2, v * sides[1] * grow / 2
    src = np.array([centre - half_u - half_v, centre + half_u - half_v,
                    centre + half_u + half_v, centre - half_u + half_v], np.float32)  # fmt: skip
    dst = np.array([[0, 0], [REFINE_CROP, 0], [REFINE_CROP, REFINE_CROP], [0, REFINE_CROP]],
                   np.float32)  # fmt: skip
    warp = cv2.getPerspectiveTransform(src, dst)
    return cv2.warpPerspective(image, warp, (REFINE_CROP, REFINE_CROP), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)  # fmt: skip


def _turn(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """Signed angle from direction a to direction b, in the image's own orientation."""
    return float(np.arctan2(a[0] * b[1] - a[1] * b[0], a @ b))


def encode(box: NDArray[np.float64], truth: NDArray[np.float64], die: bool) -> NDArray[np.float32]:
    """What the refiner learns: where the true box lies in the detected box's frame."""
    centre, u, v, sides = frame_of(box, die)
    t_centre, _, t_v, t_sides = frame_of(truth, die)
    shift = t_centre - centre
    if die:
        edge = np.asarray(truth[1], np.float64) - np.asarray(truth[0], np.float64)
        angle = 4 * np.arctan2(edge[1], edge[0])
        return np.array([shift @ u / sides[0], shift @ v / sides[1],
                         np.log(t_sides[0] / sides[0]), np.cos(angle), np.sin(angle)],
                        np.float32)  # fmt: skip
    if t_v @ v < 0:  # a rectangle's long axis has no head: take the one nearer the box's
        t_v = -t_v
    return np.array([shift @ u / sides[0], shift @ v / sides[1], np.log(t_sides[0] / sides[0]),
                     np.log(t_sides[1] / sides[1]), _turn(v, t_v)], np.float32)  # fmt: skip


def decode(box: NDArray[np.float64], out: NDArray[np.float32], die: bool,
           view: View = FIRST) -> NDArray[np.float64]:  # fmt: skip
    """The refined box's four corners from the detected box and a refiner stage's five numbers."""
    most = view.most_shift
    centre, u, v, sides = frame_of(box, die)
    dx, dy = np.clip(out[:2], -most, most)
    centre = centre + dx * sides[0] * u + dy * sides[1] * v
    if die:
        side = sides[0] * np.exp(np.clip(out[2], -most, most))
        angle = np.arctan2(out[4], out[3]) / 4
        u = np.array([np.cos(angle), np.sin(angle)])
        v = np.array([-u[1], u[0]])
        w = h = side
    else:
        w, h = sides * np.exp(np.clip(out[2:4], -most, most))
        turn = float(np.clip(out[4], -0.5, 0.5))
        rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
        u, v = rot @ u, rot @ v
    half_u, half_v = u * w / 2, v * h / 2
    return np.array([centre - half_u - half_v, centre + half_u - half_v,
                     centre + half_u + half_v, centre - half_u + half_v])  # fmt: skip
