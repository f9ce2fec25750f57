"""Analyse only what changed: the detections of the parts of the table whose pixels have not
changed since they were analysed are kept, and the models look again only around a change.

A table camera is fixed, and most of a round is still: in a simulated 1080p round (777001)
70% of the frames differ from the one before in under 1% of their blocks, and the most
changing in 11%. The models answer the same pixels the same way, so a part of the frame
whose pixels have not changed since it was analysed needs no second look. On a 2-core CPU
without 8-bit dot products the whole-frame analysis takes about 146 ms at 1080p, over the
100 ms that 10 frames a second allow; a change's neighbourhood takes a fraction of it.

A part counts as changed where, on a 480-px-wide grey copy of the frame, any pixel of its
block differs by more than `CHANGED` grey levels from the frame that part was last analysed
in (not the frame before: a slow drift adds up and is caught). Detections are taken from a
look at a changed part for the objects centred in it and `MARGIN` around it (its `inside`),
and the look covers at least another `MARGIN` (rounded out to the detector's stride grid,
`vision.detector.part_blob`), so an object it takes is wholly in view and an object it leaves
to the kept detections lies wholly outside the change. An object on the inside's edge is one
object whichever copy is judged: the look also gives the objects centred a little beyond it
(`EDGE`), and each is matched with its kept copy (`_exchange`).

A tile the detector was unsure of (under `DOUBT`) is never kept: its blocks count as
changed, so the models look there again on each frame's own pixels. On whole frames sensor
noise makes such a box come and go from frame to frame, and the round follower relies on
that (a back misread as a face does not hold for the frames an alert needs; a second box
over a stack does not stand in every frame); kept, one noisy answer would hold for seconds.
For the same reason, where a part's look lost a tile the detector had been sure of and whose
pixels had not changed (`_lost_unchanged`), the next frame is looked at whole: kept, one look's
miss of a stack that stood still beside a change held for as long as nothing near it moved,
while the follower counts a stack gone from two frames seen empty (round 1735033: one miss kept
for three frames, a false `wrong-cut-order`). Not a second look at a part: a part's look
differs from the whole frame's where its borders reach (the network's padding), and a look at
a crop like the one that missed missed again there; the whole frame found the stack.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detections import Detections, box_sides

SIDE = 480
"""Frames are compared at this width, grey: a 1080p frame's 4 x 4 pixels averaged into one,
which also averages sensor noise down (a still simulated round differs by 1 grey level at its
99th percentile)."""
BLOCK = 8
"""Changes are found in blocks of this side on the grey copy: 32 px of a 1920-px frame."""
CHANGED = 12
"""A grey pixel that differs by more than this has changed. A pip of a die at 1080p (2-3 px,
dark on white) moves its averaged grey pixel by about 70 levels."""
MARGIN = 2
"""Blocks around a change whose objects are taken from the new look, and again around those
that the look covers: 64 px at 1080p, more than a tile's length (about 55 px)."""
MOST = 0.5
"""Where the looks would cover more than this share of the frame, the whole frame is
analysed: one large look costs less than many that overlap."""
DOUBT = 0.75
"""Tiles the detector is less sure of than this are looked at again each frame. Stacks and
tiles lying in the open read 0.78-0.92 at 1080p; a second box over a stack (0.45-0.67, round
700111) or a back misread as a face (0.53-0.72, round 700032) reads below. Dice are not: their
boxes, from the detector's closer look, read 0.55-0.73 at their middle half however plain
they lie, so all would be looked at on every frame (round 777001 replayed at 1.2x real time
instead of 2.1x); their reading pools a window of frames, and kept they were read as on whole
frames over the 231 rounds of `docs/accuracy.md`."""
EDGE = 0.5
"""The share of the margin between a look's inside and its crop beyond the inside within which
the look also gives the objects centred there (32 px at 1080p), to be matched with their kept
copies: a box's centre moves a pixel or two from one look to the next, and the detector places
its box before the refiner moves it. Within it an object still lies wholly in the look (a
tile's half-length is about 27 px at 1080p)."""
REFRESH = 5.0
"""Seconds after which the whole frame is analysed again regardless: what a change too faint
to count (a slow light change under `CHANGED` everywhere) could have hidden is bounded by it."""


@dataclass(frozen=True)
class Region:
    """A part of the frame to look at (`crop`, frame pixels x0, y0, x1, y1) and the part within
    it (`inside`) whose objects' detections are taken from that look."""

    crop: tuple[int, int, int, int]
    inside: tuple[int, int, int, int]

    def holds(self, centres: NDArray[np.float64]) -> NDArray[np.bool_]:
        return _within(centres, self.inside)

    def reaches(self, centres: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Centred inside or within `EDGE` of it: what the look gives."""
        (x0, y0, x1, y1), (c0, d0, c1, d1) = self.inside, self.crop
        grown = (
            x0 - EDGE * (x0 - c0),
            y0 - EDGE * (y0 - d0),
            x1 + EDGE * (c1 - x1),
            y1 + EDGE * (d1 - y1),
        )
        return _within(centres, grown)


def _within(
    centres: NDArray[np.float64], box: tuple[float, float, float, float]
) -> NDArray[np.bool_]:
    x0, y0, x1, y1 = box
    x, y = centres[:, 0], centres[:, 1]
    return (x >= x0) & (x < x1) & (y >= y0) & (y < y1)  # type: ignore[no-any-return]


Analyse = Callable[[NDArray[np.uint8], Region | None], Detections]
"""The models on a frame: the whole of it (None), or one region, giving only the detections
it reaches (`Region.reaches`)."""


class Reuse:
    """The detections of a fixed camera's frames, the unchanged parts' kept from earlier frames
    and the changed parts' analysed anew (`detections`)."""

    def __init__(self, analyse: Analyse, refresh: float = REFRESH) -> None:
        self.analyse = analyse
        self.refresh = refresh
        self.reference: NDArray[np.int16] | None = None
        self.shape: tuple[int, ...] = ()
        self.kept = Detections.empty()
        self.whole_at = -np.inf
        self.looked = 0.0
        """The share of the last frame the models looked at (1: the whole frame)."""
        self.regions: list[Region] = []
        """The regions of the last frame looked at again (none when it was looked at whole)."""
        self.lost = np.zeros((0, 4, 2))
        """Tiles, sure ones, that the last frame's look at its parts lost while the pixels
        under them stood still: the next frame is looked at whole."""

    def detections(self, t: float, image: NDArray[np.uint8]) -> Detections:
        grey = _grey(image)
        if image.shape != self.shape or not 0 <= t - self.whole_at < self.refresh or len(self.lost):
            return self._whole(t, image, grey)
        assert self.reference is not None
        doubtful = self.kept.corners[_tiles(self.kept) & (self.kept.confidence < DOUBT)]
        changed = _changed_blocks(self.reference, grey)
        regions = _regions_around(changed, grey, image.shape[1], image.shape[0], doubtful)
        looked = sum((r.crop[2] - r.crop[0]) * (r.crop[3] - r.crop[1]) for r in regions)
        share = looked / (image.shape[0] * image.shape[1])
        if share > MOST:
            return self._whole(t, image, grey)
        self.looked, self.regions = share, regions
        if not regions:
            return self.kept
        before, still = self.kept, ~changed
        centres = self.kept.corners.mean(axis=1)
        stale = np.zeros(len(self.kept), bool)
        parts = []
        sx, sy = grey.shape[1] / image.shape[1], grey.shape[0] / image.shape[0]
        for region in regions:
            look = self.analyse(image, region)
            taken, replaced = _exchange(centres, look, region)
            stale |= replaced
            parts.append(look[taken])
            x0, y0, x1, y1 = region.inside
            rows, cols = (
                slice(round(y0 * sy), round(y1 * sy)),
                slice(round(x0 * sx), round(x1 * sx)),
            )
            self.reference[rows, cols] = grey[rows, cols]
        self.kept = Detections.concat([self.kept[~stale], *parts])
        pixel = _block_pixels(image.shape[1], image.shape[0], grey)
        self.lost = _lost_unchanged(before, self.kept, still, pixel)
        return self.kept

    def _whole(self, t: float, image: NDArray[np.uint8], grey: NDArray[np.int16]) -> Detections:
        self.kept, self.lost = self.analyse(image, None), np.zeros((0, 4, 2))
        self.reference, self.whole_at, self.looked, self.regions = grey, t, 1.0, []
        self.shape = image.shape
        return self.kept


def _tiles(found: Detections) -> NDArray[np.bool_]:
    """Which detections are tiles: a die's box is never kept doubtful or looked for again (its
    reading pools a window of frames, `DOUBT`)."""
    return np.array([not label.startswith("die") for label in found.labels], bool)


def _lost_unchanged(
    before: Detections,
    after: Detections,
    still: NDArray[np.bool_],
    pixel: tuple[float, float],
) -> NDArray[np.float64]:
    """The corners of the tiles in `before` the detector was sure of (`DOUBT`) with no
    detection in `after` centred within half their shorter side, where every block under them
    is `still` (unchanged since analysed): a look's miss, not a tile taken away (one taken
    changes its pixels). An unsure tile coming and going is the noise the follower expects
    (14 of round 1735033's 15 losses, 0.35-0.63 while washing)."""
    tiles = before[_tiles(before) & (before.confidence >= DOUBT)]
    if not len(tiles):
        return np.zeros((0, 4, 2))
    centres, now = tiles.corners.mean(axis=1), after.corners.mean(axis=1)
    apart = np.linalg.norm(centres[:, None] - now[None], axis=2).reshape(len(tiles), -1)
    found = (apart < box_sides(tiles.corners)[:, 1:] / 2).any(axis=1)
    lost = [
        corners
        for corners, seen in zip(tiles.corners, found, strict=True)
        if not seen and still[_blocks_under(corners, pixel)].all()
    ]
    return np.array(lost, float).reshape(-1, 4, 2)


def _exchange(
    kept: NDArray[np.float64], look: Detections, region: Region
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Which of a look's detections are taken, and which kept ones (by their `kept` centres)
    they replace. One centred inside the look is taken; one beyond it, within its reach, unless
    a kept copy centred outside the inside stands for it (the same object: centres within half
    the looked box's shorter side). A kept one centred inside, or the copy of one taken, is
    replaced. Judged by each copy's own centre, an object on the inside's edge was lost: its
    kept copy centred just inside, the look's just outside (round 1040038: a stack gone
    from the detections for 0.4 s while it stood, then a false `wrong-cut-order`)."""
    centres = look.corners.mean(axis=1)
    inside = region.holds(centres)
    replaced = region.holds(kept)
    apart = np.linalg.norm(centres[:, None] - kept[None], axis=2)
    same = apart < box_sides(look.corners)[:, 1:] / 2
    taken = inside | ~(same & ~replaced).any(axis=1)
    replaced |= (same & taken[:, None]).any(axis=0)
    return taken, replaced  # type: ignore[return-value]


def _grey(image: NDArray[np.uint8]) -> NDArray[np.int16]:
    h, w = image.shape[:2]
    small = cv2.resize(image, (SIDE, max(round(SIDE * h / w), 1)), interpolation=cv2.INTER_AREA)
    return cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.int16)


def changed_regions(
    reference: NDArray[np.int16],
    grey: NDArray[np.int16],
    width: int,
    height: int,
    doubtful: NDArray[np.float64] | None = None,
) -> list[Region]:
    """The regions to look at again in a `width` x `height` frame whose grey copy is `grey`:
    one per group of changed blocks (merged where their looks would overlap). The blocks under
    `doubtful` detections (N x 4 x 2 corners, frame pixels) count as changed."""
    return _regions_around(_changed_blocks(reference, grey), grey, width, height, doubtful)


def _regions_around(
    changed: NDArray[np.bool_],
    grey: NDArray[np.int16],
    width: int,
    height: int,
    doubtful: NDArray[np.float64] | None,
) -> list[Region]:
    """`changed_regions` from the blocks already found changed (`_changed_blocks`)."""
    changed = changed.copy()
    pixel = _block_pixels(width, height, grey)
    for corners in doubtful if doubtful is not None else ():
        changed[_blocks_under(corners, pixel)] = True
    if not changed.any():
        return []
    count, _, stats, _ = cv2.connectedComponentsWithStats(changed.astype(np.uint8), connectivity=8)
    boxes = [(x - MARGIN, y - MARGIN, x + w + MARGIN, y + h + MARGIN)
             for x, y, w, h, _ in stats[1:count]]  # fmt: skip
    boxes = _merged(boxes, grow=2 * MARGIN)

    def frame(box: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
        x0, y0, x1, y1 = box
        return (max(round(x0 * pixel[0]), 0), max(round(y0 * pixel[1]), 0),
                min(round(x1 * pixel[0]), width), min(round(y1 * pixel[1]), height))  # fmt: skip

    return [
        Region(frame((x0 - MARGIN, y0 - MARGIN, x1 + MARGIN, y1 + MARGIN)), frame((x0, y0, x1, y1)))
        for x0, y0, x1, y1 in boxes
    ]


def _changed_blocks(reference: NDArray[np.int16], grey: NDArray[np.int16]) -> NDArray[np.bool_]:
    """Which blocks of the grey copy differ from the reference by more than `CHANGED`."""
    rows, cols = -(-grey.shape[0] // BLOCK), -(-grey.shape[1] // BLOCK)
    apart = np.zeros((rows * BLOCK, cols * BLOCK), np.int16)
    apart[: grey.shape[0], : grey.shape[1]] = np.abs(grey - reference)
    return apart.reshape(rows, BLOCK, cols, BLOCK).max(axis=(1, 3)) > CHANGED  # type: ignore[no-any-return]


def _block_pixels(width: int, height: int, grey: NDArray[np.int16]) -> tuple[float, float]:
    """A block's sides in the pixels of a `width` x `height` frame, across and down."""
    return BLOCK * width / grey.shape[1], BLOCK * height / grey.shape[0]


def _blocks_under(corners: NDArray[np.float64], pixel: tuple[float, float]) -> tuple[slice, slice]:
    """The rows and columns of the blocks under a box (4 x 2 corners, frame pixels)."""
    (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
    return (
        slice(max(int(y0 // pixel[1]), 0), max(int(y1 // pixel[1]) + 1, 0)),
        slice(max(int(x0 // pixel[0]), 0), max(int(x1 // pixel[0]) + 1, 0)),
    )


Box = tuple[int, int, int, int]


def _merged(boxes: list[Box], grow: int) -> list[Box]:
    """Boxes joined wherever they come within `grow` of each other, until none do: one look
    costs less than two over the same pixels, and two insides that overlapped would each take
    an object between them."""
    boxes = list(boxes)
    i = 0
    while i < len(boxes):
        a = boxes[i]
        near = [j for j in range(len(boxes)) if j != i and _near(a, boxes[j], grow)]
        if not near:
            i += 1
            continue
        rest = [box for k, box in enumerate(boxes) if k not in (i, near[0])]
        boxes, i = [*rest, _union(a, boxes[near[0]])], 0
    return boxes


def _near(a: Box, b: Box, grow: int) -> bool:
    return a[0] < b[2] + grow and b[0] < a[2] + grow and a[1] < b[3] + grow and b[1] < a[3] + grow


def _union(a: Box, b: Box) -> Box:
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])
