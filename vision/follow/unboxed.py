"""Things of a tile's size lying in a box that no model boxed (`UnboxedSettings`): where a hand
shows fewer than four tiles, a tile of another set that the detector was never taught may lie
beside it. From pixels, light-bodied tiles of another set (ivory, cream) among the house set's
were boxed in no frame, and only `missing-tile` was raised (`docs/enrolment.md`)."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class UnboxedSettings:
    """Finding an object no model boxed in a box's zone, on the cloth seen from above."""

    margin: float = 10.0
    """Millimetres around the zone's polygon that are searched too: a hand's tile may lie over
    the zone's printed line."""
    cloth_far: float = 40.0
    """How far a pixel's colour (CIELAB, OpenCV's 8-bit scale) lies from the zone's cloth (the
    median of what no box covers) to be something on it. The cloth itself lay within 6 of its
    median at the median and 13-14 at the 90th percentile (a green cloth, round 976001 from
    pixels; a blue one, the NZ fixture round), and up to 34 at the 99.9th in the MBS fixture
    round's boxes; an ivory tile 100 and more off. A black tile on the dark blue cloth lies
    about 45 off, too near to stand out whole; the detector boxes the dark tiles it knows."""
    around: float = 4.0
    """Millimetres grown around every box before what is left is searched: a box lies a few
    millimetres off its tile and a tile's shadow falls beside it."""
    thin: int = 5
    """Millimetres: what is thinner than this (the zone's printed line, a box's leftover rim) is
    opened away before the search; a tile is 20 mm wide or more."""
    length: tuple[float, float] = (0.7, 1.3)
    """The object's length against the set's tiles' (the median of the hands' tile boxes):
    makers cut tiles 60-70 mm long (`../shared/domain/tiles.md`), so another set's lies within
    0.85-1.17 of this one's, and a neighbouring box grown by `around` may cut a few millimetres
    off it; a chip (39 mm across) is shorter, a hand or a sleeve longer."""
    width: tuple[float, float] = (0.6, 1.5)
    """The same for its width: makers' proportions run 2.0-2.6 to one, and the neighbouring box
    grown by `around` cut an ivory tile lying against it from about 27 mm to 22.5 (976001)."""
    fill: float = 0.85
    """The least share of its rotated bounding rectangle that an object's outline, made convex,
    must fill: a tile is a solid rectangle (ivory tiles filled 0.92-0.99 from pixels), a chip a
    disc (0.79), a fingertip about as much, a printed line or what a box leaves of a tile it half
    covers far less. The outline, not the pixels: pips near the cloth's colour would leave
    holes. Made convex, for such pips on a tile's edge cut notches into its outline: dark pips
    on a light tile on a dark cloth filled 0.73-0.75 as drawn and 0.93-0.94 made convex (rounds
    995003 and 995039 from pixels, another maker's tiles missed)."""
    same_place: float = 5.0
    """Millimetres within which an object found in the next frame is the same object: a tile
    at rest does not move, a hand does."""
    search_s: float = 4.0
    """Seconds after a short hand settles in which its zone is searched: the tiles lie exposed
    for the payout, and a search is a few milliseconds a frame."""


UNBOXED = UnboxedSettings()


@dataclass
class Search:
    """A short hand's zone, searched frame by frame from when the hand settled: the object
    last found there and in how many frames running."""

    since: float
    xy: NDArray[np.float64] | None = None
    frames: int = 0


@dataclass(frozen=True)
class Unboxed:
    """An object found on the cloth: its centre (table mm), length, width (mm) and fill."""

    xy: NDArray[np.float64]
    length: float
    width: float
    fill: float


def unboxed(
    image: NDArray[np.uint8],
    homography: NDArray[np.float64],
    zone: NDArray[np.float64],
    boxes: NDArray[np.float64],
    tile: tuple[float, float],
) -> list[Unboxed]:
    """The objects of a tile's size (`tile`: length, width in mm) in a zone (table mm) that
    none of `boxes` (N x 4 x 2, table mm: every detection and marker plaque) covers. The zone
    is looked at from above (`homography`: table mm to image pixels), a millimetre a pixel, so
    that sizes are the cloth's own."""
    low = zone.min(axis=0) - UNBOXED.margin
    width, height = (np.ceil(zone.max(axis=0) + UNBOXED.margin - low)).astype(int)
    shift = np.array([[1.0, 0.0, low[0]], [0.0, 1.0, low[1]], [0.0, 0.0, 1.0]])
    above = cv2.warpPerspective(
        image,
        homography @ shift,
        (int(width), int(height)),
        flags=cv2.WARP_INVERSE_MAP | cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    covered = np.zeros((int(height), int(width)), np.uint8)
    for box in boxes:
        cv2.fillPoly(covered, [np.round(box - low).astype(np.int32)], 255)
    grow = 2 * int(UNBOXED.around) + 1
    covered = cv2.dilate(covered, np.ones((grow, grow), np.uint8))
    lab = cv2.cvtColor(above, cv2.COLOR_BGR2LAB).astype(np.float32)
    if not np.any(covered == 0):
        return []
    cloth = np.median(lab[covered == 0][::4], axis=0)  # a quarter of the cloth says its colour
    off = lab - cloth
    far = (np.einsum("ijk,ijk->ij", off, off) > UNBOXED.cloth_far**2) & (covered == 0)
    kernel = np.ones((UNBOXED.thin, UNBOXED.thin), np.uint8)
    far = cv2.morphologyEx(far.astype(np.uint8), cv2.MORPH_OPEN, kernel)
    outlines, _ = cv2.findContours(far, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    found = []
    for outline in outlines:  # its outline, not its pixels: a tile's pips may lie near the cloth's
        (x, y), sides, _ = cv2.minAreaRect(outline)
        long, short = max(sides) + 1.0, min(sides) + 1.0  # pixel centres: a pixel more
        hull = cv2.convexHull(outline)
        fill = (cv2.contourArea(hull) + cv2.arcLength(hull, True) / 2 + 1) / (long * short)
        if (
            UNBOXED.length[0] <= long / tile[0] <= UNBOXED.length[1]
            and UNBOXED.width[0] <= short / tile[1] <= UNBOXED.width[1]
            and fill >= UNBOXED.fill
        ):
            found.append(Unboxed(np.array([x, y]) + low, long, short, min(1.0, fill)))
    return found
