"""Enrolment: the table's own set of tiles, learnt from its opening display, and tiles in play
read by it.

NZ 8.0 has the dealer display a new set's 32 tiles face up in order of rank before play (a
replacement set too, NZ 10.16). Laid in that order, each tile's face is known from its place,
up to the order of a mixed rank's two tiles, whether or not the reader can read this maker's
design. `enrol` finds the order the tiles were laid in (rows or a line, from either end), names
each tile by its place and by reading, says where the two disagree, and checks the set is
whole: 32 tiles face up, none twice, none from another set, three dice. A display in any other
arrangement is read rather than placed.

The reader gives, besides its classes, an embedding of each crop (`vision.training.embedding`).
An accepted enrolment keeps each tile's embedding with its face (`KnownSet`); in play a tile is
then read by the classifier and by its nearest enrolled tiles together (`KnownSet.combine`).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np
from numpy.typing import NDArray

from rules import FACES, FULL_SET, Tile, check_set
from vision.annotate import draw, place_tags
from vision.crops import CROP, as_input, cut
from vision.detections import Detections, box_sides, polygon_iou

if TYPE_CHECKING:
    from vision.detector import Detector, Reader

DISPLAY_ORDER: tuple[str, ...] = tuple(str(t) for t in FACES for _ in range(t.copies))
"""The 32 tiles highest first, as NZ 8.0 has them displayed."""
RANK_OF_PLACE: tuple[frozenset[str], ...] = tuple(
    frozenset(str(t) for t in FACES if t.rank == Tile.parse(face).rank) for face in DISPLAY_ORDER
)
"""The faces a place in the display may hold: one face, or a mixed rank's two in either order."""
FACE_NAMES = tuple(str(t) for t in FACES)
MIXED_PAIRS = tuple(
    place for place in range(len(DISPLAY_ORDER) - 1)
    if len(RANK_OF_PLACE[place]) == 2 and DISPLAY_ORDER[place] != DISPLAY_ORDER[place + 1]
    and (place == 0 or RANK_OF_PLACE[place - 1] != RANK_OF_PLACE[place])
)  # fmt: skip
"""The first place of each mixed rank's two (`4-5` and `3-6`, ...): either may lie first."""

FACE_DOWN = 0.9
"""A display's tile lies face down when the reader is this sure it sees a back: a reader that
never saw a design with small engraved dots reads some of its faces as backs, less surely."""

# -- finding the order --------------------------------------------------------------------
ROW_SPLIT = 0.5
"""Two tiles are in different rows when their centres are further apart along the tiles' long
axis than this share of a tile's length: rows are a tile's length apart, a row's own tiles a
few millimetres."""
IN_ORDER = 0.25
"""The display counts as laid in order of rank when, in the order that fits it best, this share
of the tiles reads as a face their place may hold. A reader that has never seen the design
reads half to nine tenths of its faces right (charcoal 51% on displays); in an order that is
not the layout's, about one tile in twenty fits by chance."""

ORDER_RULED_OUT = 0.35
"""An order in which the reader all but rules out (`PLACE_RULED_OUT`) the faces of more than
this share of the places is not the layout, however many of the rest fit: a scattered display
can fit `IN_ORDER` by chance, and a reader that knows the design then rules out most of the
order's places (seed 882012's scattered display: 59-75% by every reader, accepted with 24 tiles
misnamed where the reader did not know the design well enough for `out_of_place`). Displays
truly laid in order had at most 19% ruled out, over 2,341 read by the shipped, the
house-only and the left-out readers (seeds 880000-883019, docs/enrolment.md)."""

CLOSER_MARGIN = 0.1
"""The second look spans the display and this share of its size around it."""
COVERED = 0.5
"""A display's tile box with this share of it inside surer tile boxes is no tile of its own
(`one_box_per_object`): a box across two neighbours' ends lay 0.96 inside them (884018), the
display's own tiles at most 0.003 inside surer ones."""
CUT_EDGE = 0.5
"""A box of the second look within this share of the margin of a side where the look's window
cuts the frame is dropped (`clear_of_cut`)."""
TILE_LONG, TILE_SHORT, DIE_SIDE = (0.6, 1.5), (0.8, 1.25), (0.6, 1.5)
"""A tile box is one of the display's tiles only where its long and short sides lie within
these shares of the median tile box's; a die box only where its longer side lies within
`DIE_SIDE` of the median die box's (`sized_alike`). Makers' tiles differ in length by up to a
sixth (60-70 mm) and in width by a tenth, so another set's tile stays in, to be refused for
what it is. Over 480 house displays (seeds 880000-886019, the second look's cut already left
out) it dropped die boxes 1.8-1.9 times a die's side on the bare cloth, each a fourth or fifth
die that refused a whole set (882019, 886012); a light foreign tile boxed as a die (1.6-2.0
times), which refuses its display as a tile short rather than as a fourth die; and, in one
scattered display already refused, 18 boxes on tiles' halves."""
LOOKS = ((0.0, 0.0), (0.24, 0.0), (-0.24, 0.0), (0.0, 0.15), (0.0, -0.15))
"""Offsets (x, y in the image, in tile widths) of the crops each display tile's embedding is
averaged over: about the spread of the detector's boxes (`vision.crops`). On 24 displays of
each of three families the 1st percentile of a face's two copies' likeness was 0.854, 0.658
and 0.812 with it, 0.857, 0.651 and 0.780 without (classic, ivory, navy), and a whole set's
tiles came further below the doubled ones in classic and ivory."""

SET_DICE = 3
"""Dice a table throws (every rule book): a display shows three."""

VIEW_FLOOR = 1e-9
"""The least probability a view's reading is counted at in `views_agreed`: the classifier's
softmax gives exact zeros, and one view's zero must lower a class, not veto it."""

GAP = 1.6
"""Neighbours in a row further apart than this many times the display's pitch have a tile
missing between them (a missing tile leaves two pitches; boxes moved as the detector's vary by
about a seventh of one)."""
ACROSS = 0.08
"""A box overlapping both its neighbours in a row by more than this (rotated IoU) lies across
two tiles, as the detector boxes the gap between tiles laid close: neighbours that are each a
tile overlap little or not at all."""

# -- checking the set -----------------------------------------------------------------------
TWIN_OUTLIER = 4.0
"""A tile is another face's twin when it is much more like a tile placed as another face than
the set's other tiles are (see `twins`): this many robust deviations (1.48 MAD) above the set's
median, and at least `TWIN_LEAST`. Chosen on 36 displays of each case in three families
(classic, ivory, navy; seeds 900-911) read by readers that never saw them: no whole set
refused, 27 of 36 doubled faces caught; on two families not looked at (charcoal, cream): no
whole set refused, 13 of 23 caught. A fixed likeness threshold caught more on the first three
(35 of 36) but refused 15 of 22 whole sets of the other two: how alike a reader finds two tiles
depends on whether it was trained on their design."""
TWIN_LEAST = 0.2
PLACE_RULED_OUT = 0.001
"""A display tile the reader finds this unlikely to be the face its place names is another
face, out of its place (`out_of_place`), where the reader knows the design (`KNOWN_DESIGN`).
On house displays with the shipped models a doubled tile's placed face had 0.0008 or less; on
family displays read by the shipped reader, 2e-10 to 0.018, and the genuine tiles of whole
sets otherwise accepted 0.0002 or more (the one below 0.001 in a display read 61% as placed).
Chosen with `KNOWN_DESIGN` on house seeds 880000-884019 and five families' 880000-880019
(shipped and house-only readers); confirmed on house 886000-888019 (docs/enrolment.md)."""
KNOWN_DESIGN = 0.9
"""The share of a display's other tiles the reader must read as their places name for
`out_of_place` to judge, and for `twins` to take a pair of tiles read as their places name at
its word: a reader that never saw a design misreads some of its genuine tiles surely. The house-only
reader ruled out a genuine tile's placed face in 30 of the 63 family displays in order it
would otherwise accept (classic, navy, charcoal), each read at most 89% as placed; the doubled
displays the rule catches were read 90.3% or more as placed but for the doubled tile. The
margin between is thin (docs/enrolment.md). Where the reader knew the design, every tile
`twins` named that it read as placed was genuine (951 over seeds 880000-883019, the shipped,
house-only and left-out readers), and 435 of the 436 doubled tiles `twins` named were read as
the other face; a doubled tile's genuine twin may be named instead of it, so the pair's other
tile must be read as placed too (confirmed on seeds 894000-894019: docs/enrolment.md, "A twin
the reader reads as placed")."""
STYLE_OUTLIER = 8.0
"""A tile whose body colour or size lies this many robust deviations (1.48 MAD, at least
`STYLE_FLOOR`) from the rest of the set's is from another set. On the displays above: no whole
set refused in any family, 18 of 36 and 10 of 23 foreign tiles caught (a tile of another
family with the same body colour, black or ivory, differs only in its pips)."""
STYLE_FLOOR = np.array([8.0, 5.0, 5.0, 0.06, 0.06])
"""The least deviation counted for each style feature (body L, a, b, length, width): light
falls unevenly over a display, so a set's own tiles differ by this much."""
BODY_BAND = 25.0
"""Lightness (OpenCV's 0-255 L) within this of the set's body lightness counts as the set's body
(`strangers`): about three of `STYLE_FLOOR`'s lightness deviations, as unevenly as light falls
over a display."""
BODY_SHARE_LEAST = 0.25
"""A tile darker than the set but with at least this share of its middle at the set's body
lightness may be crowded by its own dark pips (`strangers`): light-bodied sets' `6-6`, `5-5`,
`5-6` and `4-6` drawn with large dark pips showed 0.26-0.44, tiles darker for their own dark
body at most 0.17. Only darker: a light tile in a dark set, dense dark pips on it, shares as
much with a dark body (0.21-0.27), and no dark set's own light pips crowd a tile's middle in
any family drawn. Chosen on displays of seeds 900000-902019 (docs/enrolment.md, "Dense pips
are not another body")."""
COPY_CROWDED = 0.5
"""A face's other copy carries the same pips, so it is crowded alike: a tile is excused as
crowded only where its copy is at least this share as much darker than the set. A light tile
of another set whose own larger pips crowd it (a cream `6-6` among ivory, seeds 893014 and
900010) has a copy that is not. Every face that large pips crowd has two copies. Set with
`BODY_SHARE_LEAST` on seeds 893000-893019 and 900000-903019, confirmed on 904000-905059."""


@dataclass(frozen=True)
class SeenTile:
    """One tile of the display: where it lies, what it reads as, and where it was placed."""

    corners: NDArray[np.float64]
    read: str
    read_score: float
    placed: str | None
    """The face its place in the order of rank names; None where the display is not in order."""
    place: int | None
    """1..32 in the order laid."""
    embedding: NDArray[np.float32] | None
    """2 x D: the reader's embedding of its crop as cut and turned half round (a crop's turn
    is a guess, `vision.crops.canonical`)."""
    look: NDArray[np.float32] | None = None
    """D: its look by the set-look model (`SetLook`), which set it belongs to; None without
    the model."""
    placed_score: float | None = None
    """How likely the reader finds the face its place names; None where the display is not in
    order."""

    @property
    def face(self) -> str:
        """The face enrolled: by place where the display is in order, else as read."""
        return self.placed or self.read

    @property
    def agrees(self) -> bool:
        return self.placed is None or self.placed == self.read


@dataclass(frozen=True)
class Enrolment:
    """What the box made of an opening display: every tile, the dice, and what is wrong."""

    tiles: tuple[SeenTile, ...]
    dice: tuple[str, ...]
    in_order: bool
    problems: tuple[str, ...]
    made_with: NDArray[np.float32] | None = None
    """The models that saw it, as `fingerprint` gives them; None where not known."""
    face_down: tuple[SeenTile, ...] = ()
    """Tiles the reader sees a back on (`FACE_DOWN`), with their places where the display is in
    order: not enrolled, and shown in the picture."""

    @property
    def whole(self) -> bool:
        """A genuine set, whole, displayed as the rules ask: the enrolment may be accepted."""
        return not self.problems

    @property
    def disagreements(self) -> list[SeenTile]:
        return [t for t in self.tiles if not t.agrees]

    @property
    def read_as_placed(self) -> float:
        """The share of the tiles the reader read as the faces their places name: how well it
        knows this design (1 where nothing was placed or seen)."""
        return 1 - len(self.disagreements) / len(self.tiles) if self.tiles else 1.0

    def table(self) -> str:
        """Each face, how many, and how surely the reader agrees, as a text table."""
        lines = [f"{'face':<6}{'count':>6}  {'read as':<14}{'sure':>6}"]
        for face in FACE_NAMES:
            seen = [t for t in self.tiles if t.face == face]
            reads = ", ".join(sorted({t.read for t in seen if t.read != face})) or face
            sure = min((t.read_score for t in seen if t.read == face), default=0.0)
            mark = "" if len(seen) == FULL_SET[Tile.parse(face)] else "  <- wrong count"
            lines.append(f"{face:<6}{len(seen):>6}  {reads:<14}{sure:>6.0%}{mark}")
        lines.append(
            f"dice: {len(self.dice)} ({', '.join(d.removeprefix('die-') for d in self.dice)})"
        )
        return "\n".join(lines)

    def summary(self) -> str:
        how = "in order of rank" if self.in_order else "not in order of rank: read, not placed"
        head = f"{len(self.tiles)} tiles face up, {how}; {len(self.disagreements)} read otherwise"
        if not self.whole:
            return f"{head}. Refused: " + "; ".join(self.problems) + "."
        if set_weight(self.read_as_placed) == SET_ALONE:
            return (f"{head}. The set is whole. The reader read {self.read_as_placed:.0%} of it "
                    "as placed, too little to know the design: in play the set's own tiles "
                    "read its faces.")  # fmt: skip
        return f"{head}. The set is whole."


def columns(names: dict[int, str], labels: tuple[str, ...]) -> NDArray[np.int64]:
    """The reader's output column of each of `labels`, by the class names its metadata lists."""
    index = {name: k for k, name in names.items()}
    return np.array([index[label] for label in labels], np.int64)


def enrol(image: NDArray[np.uint8], detector: Detector, reader: Reader) -> Enrolment:
    """Find, read and place the display in `image` and check the set it shows (by its looks
    too, where the reader has the set-look model)."""
    found = sized_alike(one_box_per_object(closer(image, detector)))
    return enrol_found(image, found, reader)


def closer(image: NDArray[np.uint8], detector: Detector) -> Detections:
    """The display's tiles and dice found twice: in the whole frame, then in the part of it
    they lie in (`CLOSER_MARGIN` around them), which the detector sees at about full resolution
    rather than half: tiles laid a few millimetres apart are 2 px apart at half size, and the
    whole-frame pass boxed the gap between two as a tile."""
    whole = detector.detect(image)
    if not len(whole):
        return whole
    low, high = whole.corners.reshape(-1, 2).min(0), whole.corners.reshape(-1, 2).max(0)
    pad = (high - low) * CLOSER_MARGIN
    x0, y0 = np.maximum(low - pad, 0).astype(int)
    x1, y1 = np.minimum(high + pad, [image.shape[1], image.shape[0]]).astype(int)
    part = detector.detect(np.ascontiguousarray(image[y0:y1, x0:x1]))
    part = part[np.flatnonzero(clear_of_cut(part.corners, (x0, y0, x1, y1), image.shape, pad))]
    return dataclasses.replace(part, corners=part.corners + np.array([x0, y0], np.float64))


def clear_of_cut(
    corners: NDArray[np.float64], window: tuple[int, int, int, int],
    shape: tuple[int, ...], pad: NDArray[np.float64],
) -> NDArray[np.bool_]:  # fmt: skip
    """Which boxes of the second look (`corners` in its `window`'s pixels) keep `CUT_EDGE` of
    the margin clear of each side of the window that cuts through the frame: every object the
    first look found lies a whole margin inside, and the cut itself is an edge the detector can
    box (the strip of bare cloth between it and a row's first tile, as a face-down tile: seeds
    880019 and 882003, 0.37 and 0.71 sure, seen in the second look only)."""
    x0, y0, x1, y1 = window
    height, width = shape[:2]
    near, far = corners.min(axis=1), corners.max(axis=1)
    keep = CUT_EDGE * pad
    clear = np.ones(len(corners), bool)
    for cuts, side in ((x0 > 0, near[:, 0] > keep[0]), (y0 > 0, near[:, 1] > keep[1]),
                       (x1 < width, far[:, 0] < x1 - x0 - keep[0]),
                       (y1 < height, far[:, 1] < y1 - y0 - keep[1])):  # fmt: skip
        if cuts:
            clear &= side
    return clear


def one_box_per_object(found: Detections) -> Detections:
    """Drop a tile box that overlaps a surer one by more than `vision.detector.OVERLAP`, and a
    die box centred on a surer one (`vision.detector.one_box_per_die`). The refiner can move
    two boxes the detector kept apart onto one object: in a display of tiles laid side by side
    that happened in 4 of 8 frames (a tile boxed twice, 33-34 tiles), and a die boxed twice
    refused 2 of 40 whole displays of the house look (seeds 880005 and 880008: "4 dice").
    A tile box lying `COVERED` or more inside surer tile boxes is dropped too: tiles on
    display do not overlap, and a box across two neighbours' ends overlaps each by a quarter
    only (884018: a 33rd tile)."""
    from vision.detector import OVERLAP, one_box_per_die

    dice = np.array([label == "die" for label in found.labels], bool)
    kept: list[int] = []
    for i in np.argsort(-found.confidence, kind="stable"):
        tiles = [j for j in kept if not dice[j]]
        if dice[i] or (
            all(polygon_iou(found.corners[i], found.corners[j]) <= OVERLAP for j in tiles)
            and covered(found.corners[i], found.corners[tiles]) < COVERED
        ):
            kept.append(int(i))
    strongest_first = np.asarray(kept, np.int64)
    return found[np.sort(one_box_per_die(found.corners, strongest_first, dice))]


def covered(box: NDArray[np.float64], others: NDArray[np.float64]) -> float:
    """The share of `box` (4 corners) that lies inside `others` (N x 4 x 2), which are taken
    not to overlap one another (a display's tiles)."""
    hull = cv2.convexHull(box.astype(np.float32))
    area = cv2.contourArea(hull)
    inside = sum(cv2.intersectConvexConvex(hull, cv2.convexHull(o.astype(np.float32)))[0]
                 for o in others)  # fmt: skip
    return float(inside / area) if area > 0 else 0.0


def sized_alike(found: Detections) -> Detections:
    """Only the boxes sized as a tile or a die of this display (`TILE_LONG`, `TILE_SHORT`,
    `DIE_SIDE`): a set's tiles are cut alike and a table's dice are one size, and with 8 tiles
    or 3 dice there are enough of each to tell their size by the median."""
    long, short = box_sides(found.corners).T
    dice = np.array([label == "die" for label in found.labels], bool)
    tiles = ~dice
    keep = np.ones(len(found), bool)
    if tiles.sum() >= 8:
        keep &= dice | (_within(long, tiles, TILE_LONG) & _within(short, tiles, TILE_SHORT))
    if dice.sum() >= 3:
        keep &= tiles | _within(long, dice, DIE_SIDE)
    return found[np.flatnonzero(keep)]


def _within(
    side: NDArray[np.float64], kind: NDArray[np.bool_], bounds: tuple[float, float]
) -> NDArray[np.bool_]:
    """Which boxes' `side` lies within `bounds` times the median of the `kind` boxes'."""
    share = side / np.median(side[kind])
    return (share >= bounds[0]) & (share <= bounds[1])  # type: ignore[no-any-return]


def enrol_found(image: NDArray[np.uint8], found: Detections, reader: Reader) -> Enrolment:
    """`enrol` on boxes already found. Each tile's embedding is the mean over crops cut a little
    off its box (`LOOKS`), each as cut and turned half round: a box a few pixels off moves one
    crop's embedding as much as another face would. What a tile reads as is those crops'
    geometric mean (`views_agreed`): one crop of a face with small dim pips can read as a back
    where the others do not. A die keeps the dice reader's reading of its crop as cut."""
    if not len(found):  # nothing on the table the detector could box
        counted = (f"0 tiles face up, a set has {len(DISPLAY_ORDER)}",
                   f"0 dice, a table uses {SET_DICE}")  # fmt: skip
        return Enrolment((), (), False, counted)
    dice = [kind == "die" for kind in found.labels]
    crops = [cut(image, c, die) for c, die in zip(found.corners, dice, strict=True)]
    short = np.linalg.norm(found.corners[:, 1] - found.corners[:, 0], axis=1)
    short = np.minimum(short, np.linalg.norm(found.corners[:, 2] - found.corners[:, 1], axis=1))
    sums, views = None, []
    for dx, dy in LOOKS:
        moved = found.corners + (np.array([dx, dy])[None, :] * short[:, None])[:, None, :]
        shifted = [cut(image, c, die) for c, die in zip(moved, dice, strict=True)]
        read_upright, upright = reader.look_at(shifted)
        read_turned, turned = reader.look_at([crop[::-1, ::-1] for crop in shifted])
        views += [read_upright, read_turned]
        if upright is not None and turned is not None:
            both = np.stack([upright, turned], 1)
            sums = both if sums is None else sums + both
    probs = views_agreed(np.stack(views))
    die_rows = np.flatnonzero(dice)
    if len(die_rows):  # the dice reader's reading of each die's crop as cut
        die_crops = [crops[row] for row in die_rows]
        probs[die_rows] = reader.look_at(die_crops, embed=False, dice=[True] * len(die_rows))[0]
    embedding = None if sums is None else sums / np.linalg.norm(sums, axis=2, keepdims=True)
    looks = None if reader.looker is None else _looks(image, found, reader.looker, short)
    seen = enrol_seen(found, probs, embedding, reader.names, crops, looks)
    return dataclasses.replace(seen, made_with=fingerprint(reader))


def views_agreed(views: NDArray[np.float32]) -> NDArray[np.float32]:
    """Views x rows x classes of probabilities made one reading per row: their geometric mean,
    each row summing to one again. A class stays likely only where most views find it so: a
    back one crop sees and the others do not is not a back (charcoal displays of seeds
    909000-909019: 12 tiles read face down from their crop as cut, 9 from the views), and a face
    most views rule out stays ruled out (`out_of_place`), where the arithmetic mean lifted a
    doubled display's misplaced face over `PLACE_RULED_OUT` (ivory 917011)."""
    agreed = np.exp(np.log(np.maximum(views, VIEW_FLOOR)).mean(axis=0))
    return (agreed / agreed.sum(axis=1, keepdims=True)).astype(np.float32)


def _display_dice(found: Detections, dice_probs: NDArray[np.float32]) -> NDArray[np.bool_]:
    """Which boxes are the display's dice: where more than `SET_DICE` are boxed, not one smaller
    than the others that the reader is unsure of (`vision.follow.dice.of_the_set`, as in play;
    sides in pixels: a display's dice lie together), the least sure first and never fewer than
    `SET_DICE`. The detector boxed such a phantom beside a die in 4 of 120 displays of the
    rounds harness (997018, 998003: 0.75 and 0.86 of a die's side, read at 0.37 and 0.40, where
    the dice read at 0.99 or more), and the set was refused for a fourth die. Thinned below
    three, real dice of a look the dice reader doubts went too (navy 909001 and cream 909006
    with the true boxes: "2 dice", "1 dice"), and the set was refused for a die short."""
    from vision.follow.dice import of_the_set  # the follower imports this module

    is_die = np.array([label == "die" for label in found.labels], bool)
    rows = np.flatnonzero(is_die)
    if len(rows) > SET_DICE:
        sides = box_sides(found.corners[rows]).mean(axis=1)
        sure = dice_probs[rows].max(axis=1)
        kept = np.array(of_the_set(sides.tolist(), sure.tolist()), bool)
        unlike = sorted(np.flatnonzero(~kept), key=lambda k: float(sure[k]))
        is_die[rows[unlike[: len(rows) - SET_DICE]]] = False
    return is_die


def _looks(image: NDArray[np.uint8], found: Detections, looker: SetLook,
           short: NDArray[np.float64]) -> NDArray[np.float32]:  # fmt: skip
    """Each tile box's set look, the mean over the crops `LOOKS` cuts (as the embedding's);
    a die's row is left empty (zeros): the model knows tiles only."""
    tiles = np.array([label != "die" for label in found.labels], bool)
    total = None
    for dx, dy in LOOKS:
        moved = found.corners[tiles] + (np.array([dx, dy]) * short[tiles, None])[:, None, :]
        look = looker.embed([cut(image, c, False) for c in moved])
        total = look if total is None else total + look
    looks = np.zeros((len(found), 0 if total is None else total.shape[1]), np.float32)
    if total is not None:
        looks[tiles] = total / np.maximum(np.linalg.norm(total, axis=1, keepdims=True), 1e-9)
    return looks


def enrol_seen(
    found: Detections,
    probs: NDArray[np.float32],
    embedding: NDArray[np.float32] | None,
    names: dict[int, str],
    crops: list[NDArray[np.uint8]],
    looks: NDArray[np.float32] | None = None,
) -> Enrolment:
    """`enrol` on what the detector found and the reader saw, row by row: class probabilities,
    embeddings (N x 2 x D, as cut and turned half round) and set looks (N x D, `SetLook`)."""
    face_columns = columns(names, FACE_NAMES)
    (back,) = columns(names, ("back",))
    dice_columns = np.array([k for k, n in names.items() if n.startswith("die-")])
    dice = tuple(
        names[int(dice_columns[np.argmax(probs[i, dice_columns])])]
        for i in np.flatnonzero(_display_dice(found, probs[:, dice_columns]))
    )
    tiles = np.flatnonzero([label != "die" for label in found.labels])
    faces = probs[tiles][:, face_columns]
    faces = faces / np.maximum(faces.sum(1, keepdims=True), 1e-9)
    # placed with every tile box, those read as backs too: a tile face down is then named by
    # its place, and the rest of the display stays placed rather than read
    order = best_order(found.corners[tiles], faces)
    placed: list[str | None] = [None] * len(tiles)
    places: list[int | None] = [None] * len(tiles)
    if order is not None:
        for place, (row, face) in enumerate(zip(order, assign_faces(order, faces), strict=True)):
            placed[row], places[row] = face, place + 1
    read = [FACE_NAMES[int(np.argmax(row))] for row in faces]
    every = [
        SeenTile(
            found.corners[i],
            read[k],
            float(faces[k].max()),
            placed[k],
            places[k],
            None if embedding is None else embedding[i],
            None if looks is None else looks[i],
            None if placed[k] is None else float(faces[k, FACE_NAMES.index(placed[k])]),
        )
        for k, i in enumerate(tiles)
    ]
    down = [k for k, i in enumerate(tiles) if probs[i, back] >= FACE_DOWN]
    seen = tuple(tile for k, tile in enumerate(every) if k not in down)
    face_down = tuple(every[k] for k in down)
    up = [i for k, i in enumerate(tiles) if k not in down]
    problems: list[str] = []
    if down:
        where = "".join(
            f"; place {every[k].place} (laid as {every[k].placed}) reads as a back, "
            f"{probs[tiles[k], back]:.0%} sure"
            for k in down
            if every[k].place
        )
        problems.append(f"{len(down)} tile{'s' * (len(down) > 1)} face down{where}")
    if len(seen) != len(DISPLAY_ORDER) and order is None:  # placed, 32 lie there
        problems.append(f"{len(seen)} tiles face up, a set has {len(DISPLAY_ORDER)}")
    if order is None:
        report = check_set([Tile.parse(t.read) for t in seen], whole_set=True)
        if not report.ok:
            problems.append(f"as read: {report}")
    else:
        problems += gaps(seen + face_down)  # a tile face down leaves no gap
        problems += twins(seen) if embedding is not None else []
        problems += out_of_place(seen)
    problems += strangers(seen, [crops[i] for i in up])
    rest, copy = looks_apart(seen)
    problems += outsiders(seen, rest)
    problems += unlike_copies(seen, rest, copy)
    if len(dice) != SET_DICE:
        problems.append(f"{len(dice)} dice, a table uses {SET_DICE}")
    return Enrolment(seen, dice, order is not None, tuple(problems), face_down=face_down)


AGREED, OTHERWISE, WRONG = (0, 150, 0), (0, 160, 230), (0, 0, 220)
"""A display tile's colour in the picture: read as placed, read otherwise, named by a problem."""
PICTURE_MARGIN = 0.25
"""The picture shows the display and this share of its size around it, at full resolution."""


def picture(image: NDArray[np.uint8], enrolment: Enrolment) -> NDArray[np.uint8]:
    """The display as a person checks it: each tile outlined and tagged with its place and face,
    orange with what it read as where the reader read otherwise, red where a problem names its
    place or it lies face down; cut to the display and enlarged so that the tags are legible."""
    named = {int(word) for problem in enrolment.problems
             for word in re.findall(r"place (\d+)", problem)}  # fmt: skip
    corners = [t.corners for t in enrolment.tiles + enrolment.face_down]
    if not corners:
        return image
    low = np.min([c.min(0) for c in corners], axis=0)
    high = np.max([c.max(0) for c in corners], axis=0)
    pad = (high - low) * PICTURE_MARGIN
    x0, y0 = np.maximum(low - pad, 0).astype(int)
    x1, y1 = np.minimum(high + pad, [image.shape[1], image.shape[0]]).astype(int)
    zoom = max(1.0, 1000 / max(x1 - x0, y1 - y0, 1))
    part = cv2.resize(image[y0:y1, x0:x1], None, fx=zoom, fy=zoom, interpolation=cv2.INTER_CUBIC)
    items, outlines = [], []
    tagged = [(tile, WRONG if tile.place in named else AGREED if tile.agrees else OTHERWISE,
               tile.face + ("" if tile.agrees else f" ({tile.read})"))
              for tile in enrolment.tiles]  # fmt: skip
    tagged += [(tile, WRONG, "back") for tile in enrolment.face_down]
    for tile, colour, what in tagged:
        box = (tile.corners - [x0, y0]) * zoom
        items.append((box, f"{tile.place}:{what}" if tile.place else what, colour))
        outlines.append((box, colour))
    return draw(part, outlines, place_tags(part.shape, items))


# -- the order of rank ------------------------------------------------------------------------


def _axes(corners: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """Each box's centre across rows (along the tiles' long axis) and along them, and a tile's
    length: the display's own axes, whichever way the camera looks at it."""
    long_edges = np.where(
        (np.linalg.norm(corners[:, 1] - corners[:, 0], axis=1)
         > np.linalg.norm(corners[:, 2] - corners[:, 1], axis=1))[:, None],
        corners[:, 1] - corners[:, 0],
        corners[:, 2] - corners[:, 1],
    )  # fmt: skip
    angles = np.arctan2(long_edges[:, 1], long_edges[:, 0])
    axis = np.angle(np.exp(2j * angles).sum()) / 2  # the long axes' mean, a line's direction
    across_axis = np.array([np.cos(axis), np.sin(axis)])
    along_axis = np.array([-across_axis[1], across_axis[0]])
    centres = corners.mean(1)
    length = float(np.median(np.linalg.norm(long_edges, axis=1)))
    return centres @ across_axis, centres @ along_axis, length


def _rows(across: NDArray[np.float64], length: float, sign: int = 1) -> list[NDArray[np.int64]]:
    """The boxes in each row, rows ordered by `sign` * across."""
    ranked = np.argsort(sign * across, kind="stable")
    breaks = np.flatnonzero(np.diff(sign * across[ranked]) > ROW_SPLIT * length) + 1
    return np.split(ranked, breaks)


def orders(corners: NDArray[np.float64]) -> list[NDArray[np.int64]]:
    """Every order the tiles may have been laid in: rows across the tiles' long axis (a line is
    one row), each row the same way or turning back, starting from any corner."""
    if not len(corners):
        return []
    across, along, length = _axes(corners)
    result = []
    for across_sign, along_sign, snake in itertools.product((1, -1), (1, -1), (False, True)):
        sequence: list[int] = []
        for number, row in enumerate(_rows(across, length, across_sign)):
            sign = -along_sign if snake and number % 2 else along_sign
            sequence += row[np.argsort(sign * along[row], kind="stable")].tolist()
        result.append(np.asarray(sequence, np.int64))
    return result


def gaps(tiles: tuple[SeenTile, ...]) -> list[str]:
    """Where a display laid in order is not evenly laid: a gap where a tile is missing (its
    place taken by a box the detector put across two tiles, so that 32 boxes are found), or a
    box lying across two tiles (`GAP`, `ACROSS`)."""
    placed = sorted((t for t in tiles if t.place), key=lambda t: t.place or 0)
    if len(placed) < 3:
        return []
    corners = np.stack([t.corners for t in placed])
    across, along, length = _axes(corners)
    rows = [row[np.argsort(along[row])] for row in _rows(across, length) if len(row) > 1]
    steps = np.concatenate([np.diff(along[row]) for row in rows]) if rows else np.zeros(0)
    if not len(steps):
        return []
    pitch = float(np.median(steps))
    problems = []
    for row in rows:
        for a, b in itertools.pairwise(row):
            if along[b] - along[a] > GAP * pitch:
                problems.append(f"a gap between places {placed[a].place} and {placed[b].place}: "
                                "a tile missing")  # fmt: skip
        for left, middle, right in zip(row, row[1:], row[2:], strict=False):
            if min(polygon_iou(corners[middle], corners[left]),
                   polygon_iou(corners[middle], corners[right])) > ACROSS:  # fmt: skip
                problems.append(f"place {placed[middle].place} lies across two tiles")
    return problems


def best_order(
    corners: NDArray[np.float64], faces: NDArray[np.float32]
) -> NDArray[np.int64] | None:
    """The laying order that best explains what the reader reads, if the display is in order
    of rank (`IN_ORDER`, `ORDER_RULED_OUT`): the row of each place, first to last. None
    otherwise."""
    if len(corners) != len(DISPLAY_ORDER):
        return None
    allowed = np.array([[f in rank for f in FACE_NAMES] for rank in RANK_OF_PLACE])
    best, best_chance, best_fit = None, None, -np.inf
    for order in orders(corners):
        chance = (faces[order] * allowed).sum(1)
        fit = float(np.log(chance + 1e-6).sum())
        if fit > best_fit:
            best, best_chance, best_fit = order, chance, fit
    assert best is not None and best_chance is not None
    fits = allowed[np.arange(len(best)), np.argmax(faces[best], axis=1)]
    ruled_out = best_chance < PLACE_RULED_OUT
    return best if fits.mean() >= IN_ORDER and ruled_out.mean() <= ORDER_RULED_OUT else None


def assign_faces(order: NDArray[np.int64], faces: NDArray[np.float32]) -> list[str]:
    """Each place's face: its own, or, for a mixed rank's two places, the two faces in the way
    the reader finds likelier."""
    result = list(DISPLAY_ORDER)
    for start in MIXED_PAIRS:
        pair = sorted(RANK_OF_PLACE[start])
        a, b = (FACE_NAMES.index(f) for f in pair)
        first, second = faces[order[start]], faces[order[start + 1]]
        straight = first[a] * second[b] >= first[b] * second[a]
        result[start], result[start + 1] = pair if straight else pair[::-1]
    return result


# -- is the set whole -------------------------------------------------------------------------


def knows_design(tiles: list[SeenTile]) -> bool:
    """Whether the reader read at least `KNOWN_DESIGN` of these tiles as their places name."""
    return sum(t.agrees for t in tiles) >= KNOWN_DESIGN * len(tiles)


def twins(tiles: tuple[SeenTile, ...]) -> list[str]:
    """Tiles placed as one face that look like another placed face's tile: a face doubled where
    another should lie. A tile with a copy is compared with its copy, one without with the
    copies of the face it is most like (how alike two copies of a face look); a tile far more
    like another face than that, for this set (`TWIN_OUTLIER`), is a twin, unless a reader
    that knows the design (`KNOWN_DESIGN`) reads both it and that tile as their places name,
    or it has a copy it looks more like than that tile: two faces a set draws alike (the
    charcoal look's `6-6` and `4-6`, 0.98-0.996 alike) stand out of a set whose other faces lie
    apart, yet each tile is still nearest its own copy. On charcoal and navy displays in order
    (seeds 908000-908039, rows and a line) this accepted 7 more of 160 whole sets, and of 240
    displays with a face doubled (six looks) none more; confirmed on 909000-909019, six looks:
    whole sets in order 226 -> 227 of 240, displays accepted with a face doubled 6 and with a
    foreign tile 5 of 120 each, as before (docs/enrolment.md)."""
    placed = [t for t in tiles if t.embedding is not None and t.placed]
    if len(placed) < 3:
        return []
    known = knows_design(placed)
    upright = np.stack([t.embedding[0] for t in placed])  # type: ignore[index]
    turned = np.stack([t.embedding[1] for t in placed])  # type: ignore[index]
    like = np.maximum(upright @ upright.T, upright @ turned.T)
    like = np.maximum(like, like.T)
    faces = [t.placed for t in placed]
    pairs = zip(*np.triu_indices(len(placed), 1), strict=True)
    typical = float(np.median([like[i, j] for i, j in pairs if faces[i] == faces[j]] or [1.0]))
    excess, nearest, civil = [], [], []
    for i in range(len(placed)):
        others = [j for j in range(len(placed)) if faces[j] != faces[i]]
        near = max(others, key=lambda j: like[i, j])
        own = [j for j in range(len(placed)) if j != i and faces[j] == faces[i]]
        mates = [k for k in range(len(placed)) if k != near and faces[k] == faces[near]]
        reference = like[i, own[0]] if own else like[near, mates[0]] if mates else typical
        excess.append(like[i, near] - reference)
        nearest.append(near)
        civil.append(bool(own))
    excess_of, civil_of = np.asarray(excess), np.asarray(civil)
    problems = []
    for kind in (True, False):
        values = excess_of[civil_of == kind]
        if len(values) < 3:
            continue
        middle = float(np.median(values))
        spread = 1.4826 * float(np.median(np.abs(values - middle)))
        for i in np.flatnonzero(civil_of == kind):
            tile, other = placed[i], placed[nearest[i]]
            if known and tile.agrees and other.agrees:
                continue
            if kind and excess_of[i] <= 0:  # nearer its own copy than any other face's tile
                continue
            if excess_of[i] >= middle + max(TWIN_OUTLIER * spread, TWIN_LEAST):
                problems.append(
                    f"place {tile.place} (laid as {tile.placed}) looks like the {other.placed} "
                    f"at place {other.place}: a face twice"
                )
    return problems


def out_of_place(tiles: tuple[SeenTile, ...]) -> list[str]:
    """Tiles placed as one face that the reader all but rules out (`PLACE_RULED_OUT`) where it
    reads the rest of the display as placed (`KNOWN_DESIGN`): another face lies there, a face
    doubled where `twins` misses it once the reader's embedding puts a face's tiles of every
    design close together (its two copies then look as alike as a face and its doubled copy).
    A reader that misreads many of a design's tiles misreads some surely, so there it says
    nothing."""
    scored = [(t, t.placed_score) for t in tiles if t.placed_score is not None]
    ruled_out = [t for t, score in scored if score < PLACE_RULED_OUT]
    rest = [t for t, score in scored if score >= PLACE_RULED_OUT]
    if not ruled_out or not knows_design(rest):
        return []
    return [
        f"place {t.place} (laid as {t.placed}) reads {t.read}, {t.read_score:.0%} sure, "
        f"and as a {t.placed} {t.placed_score:.2%}: a {t.read} where a {t.placed} belongs"
        for t in ruled_out
    ]


def _middle(crop: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """The Lab pixels of a tile crop's middle: mostly body and pips, clear of its edges."""
    h, w = crop.shape[:2]
    inner = cv2.cvtColor(crop[h // 8 : -h // 8, w // 6 : -w // 6], cv2.COLOR_BGR2LAB)
    return inner.reshape(-1, 3)


def style(middle: NDArray[np.uint8], corners: NDArray[np.float64]) -> NDArray[np.float64]:
    """A tile's look apart from its face: its body's colour (Lab median of its crop's `middle`,
    mostly body but where large pips crowd it, `BODY_SHARE_LEAST`) and its length and width in
    pixels."""
    body = np.median(middle.astype(np.float64), axis=0)
    sides = np.linalg.norm(np.roll(corners, -1, 0) - corners, axis=1)
    return np.array([*body, sides.max(), sides.min()])


def strangers(tiles: tuple[SeenTile, ...], crops: list[NDArray[np.uint8]]) -> list[str]:
    """Tiles whose colour or size is unlike the rest of the set's (`STYLE_OUTLIER`). A tile
    darker than the set whose middle is still `BODY_SHARE_LEAST` the set's body, and whose
    copy is darker too (`COPY_CROWDED`), is not unlike it in lightness: its dark pips crowd its
    middle."""
    if len(tiles) < 8:
        return []
    middles = [_middle(crop) for crop in crops]
    looks = np.stack([style(m, t.corners) for m, t in zip(middles, tiles, strict=True)])
    looks[:, 3:] /= np.median(looks[:, 3:], axis=0)
    centre = np.median(looks, axis=0)
    spread = np.maximum(1.4826 * np.median(np.abs(looks - centre), axis=0), STYLE_FLOOR)
    far = np.abs(looks - centre) / spread
    body_share = np.array([np.mean(np.abs(m[:, 0] - centre[0]) <= BODY_BAND) for m in middles])
    darker = centre[0] - looks[:, 0]
    crowded = (body_share >= BODY_SHARE_LEAST) & (darker > 0)
    faces = [t.face for t in tiles]
    for k in np.flatnonzero(crowded):
        copies = [j for j, face in enumerate(faces) if j != k and face == faces[k]]
        crowded[k] = any(darker[j] >= COPY_CROWDED * darker[k] for j in copies)
    far[crowded, 0] = 0.0
    names = ("body lightness", "body colour", "body colour", "length", "width")
    problems = []
    for tile, row in zip(tiles, far, strict=True):
        if row.max() >= STYLE_OUTLIER:
            where = f"place {tile.place}" if tile.place else f"a {tile.read}"
            problems.append(
                f"{where} is unlike the set ({names[int(np.argmax(row))]}): another set's tile"
            )
    return problems


def looks_apart(
    tiles: tuple[SeenTile, ...],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """How far each tile's set look (`SetLook`) lies from the rest of the display's, and from
    the other copy of its face where the display shows that face twice (1 - cosine); NaN where
    the tile has no look, fewer than 8 tiles have one, or its face shows no other copy."""
    rest, copy = np.full(len(tiles), np.nan), np.full(len(tiles), np.nan)
    judged = [k for k, t in enumerate(tiles) if t.look is not None]
    if len(judged) < 8:
        return rest, copy
    looks = np.stack([tiles[k].look for k in judged])  # type: ignore[misc]
    rest[judged] = look_distance(looks, looks, leave_out=True)
    for pair in _copies(tiles, judged):
        copy[pair] = 1.0 - float(tiles[pair[0]].look @ tiles[pair[1]].look)  # type: ignore[operator]
    return rest, copy


def _copies(tiles: tuple[SeenTile, ...], judged: list[int]) -> list[list[int]]:
    """The indices of each face's two tiles, for the faces `judged` shows exactly twice."""
    by_face: dict[str, list[int]] = {}
    for k in judged:
        by_face.setdefault(tiles[k].face, []).append(k)
    return [pair for pair in by_face.values() if len(pair) == 2]


def outsiders(tiles: tuple[SeenTile, ...], rest: NDArray[np.float64]) -> list[str]:
    """Tiles whose look lies `LOOK_FAR` or further from the rest of the set's (`looks_apart`):
    another maker's tile, told by its pips and finish where its body colour is the set's; a
    face the set holds once, which no copy vouches for (`unlike_copies`), at `SINGLE_FAR`."""
    problems = []
    for tile, far in zip(tiles, rest, strict=True):
        allowed = allowed_far(tile.face)
        single = allowed == SINGLE_FAR
        if far >= allowed:  # never for NaN: a tile not judged
            where = (
                f"place {tile.place} (laid as {tile.placed})" if tile.place else f"a {tile.read}"
            )
            held = " for a face held once" if single else ""
            problems.append(f"{where} looks unlike the rest of the set ({far:.2f} from it, "
                            f"{allowed} allowed{held}): another set's tile")  # fmt: skip
    return problems


def unlike_copies(
    tiles: tuple[SeenTile, ...], rest: NDArray[np.float64], copy: NDArray[np.float64]
) -> list[str]:
    """The two tiles enrolled as one face whose set looks lie `COPY_FAR` or further apart
    (`looks_apart`): a maker makes a face's copies alike, so one of them is another set's tile,
    though both lie near enough the rest of the set (`outsiders`, which names a tile that does
    not)."""
    problems = []
    judged = [k for k in range(len(tiles)) if not np.isnan(copy[k])]
    for pair in _copies(tiles, judged):
        apart = float(copy[pair[0]])
        if apart >= COPY_FAR and not (rest[pair] >= LOOK_FAR).any():
            where = " and ".join(
                f"place {tiles[k].place}" if tiles[k].place else f"a {tiles[k].read}" for k in pair
            )
            face = tiles[pair[0]].face
            problems.append(f"{where} ({face}) look unlike each other ({apart:.2f} apart, "
                            f"{COPY_FAR} allowed): one is another set's")  # fmt: skip
    return problems


# -- reading by the set ---------------------------------------------------------------------


SET_TEMPERATURE = 0.05
"""How sharply closeness to an enrolled tile becomes a probability: cosine gaps between a
tile's own face and the next are a few hundredths."""
SET_WEIGHT = 0.85
"""How much the set's own faces weigh against the classifier's reading (a geometric mix): at
0.85 a play tile goes to the face of the enrolled tile it lies nearest, and the classifier
decides only where two enrolled faces lie about as near. A set's own tiles read a design far
better than a classifier that never saw it, and within a point of one that did. Measured on
play tiles of enrolled sets (`vision.training.enrolment`, boxes refined as the box refines
them), chosen on seeds 880000-880019 and confirmed on 881000-881019 and 882000-882019:
docs/enrolment.md, "How much the set weighs"."""
SET_ALONE_BELOW, SET_ALONE = 0.8, 1.0
"""A set whose display the reader read under `SET_ALONE_BELOW` as placed reads play tiles by
the set alone (`SET_ALONE`): that reader does not know the design, and its reading only drags
the set's down. On seeds 880000-880019 sets read so gained 2 points from 0.85 to 1.0, those
read 80-90% as placed lost 2 (docs/enrolment.md, "How much the set weighs")."""


def set_weight(agreement: float) -> float:
    """How much an enrolled set weighs in play, by the share of its display's tiles the reader
    read as the faces their places name."""
    return SET_ALONE if agreement < SET_ALONE_BELOW else SET_WEIGHT


@dataclass(frozen=True)
class KnownSet:
    """An accepted enrolment's tiles as the reader sees them: two embeddings per tile, in turn
    (as cut and turned half round, so a tile in play matches whichever way it lies), and each
    one's face."""

    faces: tuple[str, ...]
    vectors: NDArray[np.float32]
    looks: NDArray[np.float32] | None = None
    """Each tile's set look (`SetLook`), to judge tiles in play by; None where the enrolment was
    made without the set-look model."""
    weight: float = SET_WEIGHT
    """How much the set weighs against the classifier in play (`set_weight`)."""
    made_with: NDArray[np.float32] | None = None
    """The models that made its vectors (`fingerprint`); None for a set saved before sets kept
    it."""

    def __post_init__(self) -> None:
        pairs = self.faces[0::2] == self.faces[1::2] and len(self.faces) % 2 == 0
        if not pairs or len(self.faces) != len(self.vectors):
            raise ValueError("a known set holds each tile's two views in turn, one face each")

    @classmethod
    def of(cls, enrolment: Enrolment) -> KnownSet:
        kept = [t for t in enrolment.tiles if t.embedding is not None]
        if not kept:
            raise ValueError("the enrolment holds no embeddings: the reader gives none")
        faces = tuple(t.face for t in kept for _ in range(2))
        looks = [t.look for t in enrolment.tiles if t.look is not None]
        return cls(
            faces,
            np.concatenate([t.embedding for t in kept]),  # type: ignore[misc]
            np.stack(looks) if len(looks) == len(enrolment.tiles) else None,
            set_weight(enrolment.read_as_placed),
            enrolment.made_with,
        )

    def made_by(self, reader: Reader) -> bool:
        """Whether `reader` (and its set-look model) made this set's vectors: another reader's
        embedding, or another set-look model's looks, lie elsewhere, and a tile in play would be
        matched against vectors it cannot be compared with."""
        if self.made_with is None:
            return False
        now = fingerprint(reader)
        return now.shape == self.made_with.shape and bool(
            np.abs(now - self.made_with).max() <= SAME_MODELS
        )

    def distance(self, looks: NDArray[np.float32]) -> NDArray[np.float64]:
        """How far each of `looks` lies from the set's (`look_distance`)."""
        if self.looks is None:
            raise ValueError("the set was enrolled without looks")
        return look_distance(self.looks, looks)

    def likeness(self, embedding: NDArray[np.float32]) -> NDArray[np.float32]:
        """Each row's closeness (cosine) to each face's nearest enrolled tile: N x 21 (-1 for a
        face the set does not hold), by the nearer of its two views. Rows of N x 2 x D
        (`Reader.look_at(both_ways=True)`) that were read turned half round too, their two
        views differing, are matched end to end: each enrolled tile's two views against the
        row's two, whichever way round fits, averaged."""
        upright, turned = self.vectors[0::2], self.vectors[1::2]
        cut = embedding if embedding.ndim == 2 else embedding[:, 0]
        sims = np.maximum(cut @ upright.T, cut @ turned.T)
        if embedding.ndim == 3:
            half = embedding[:, 1]
            both = ~np.all(cut == half, axis=1)
            same = cut[both] @ upright.T + half[both] @ turned.T
            sims[both] = np.maximum(same, cut[both] @ turned.T + half[both] @ upright.T) / 2
        return np.where(self._held[None], sims[:, None, :], -1.0).max(2).astype(np.float32)

    @functools.cached_property
    def _held(self) -> NDArray[np.bool_]:
        """Which enrolled tiles are of each face: 21 x tiles."""
        return np.array([[face == name for face in self.faces[0::2]] for name in FACE_NAMES])

    def combine(
        self,
        probs: NDArray[np.float32],
        embedding: NDArray[np.float32],
        names: dict[int, str],
        kinds: tuple[str, ...],
        weight: float | None = None,
    ) -> NDArray[np.float32]:
        """The reader's probabilities with each tile's faces weighed by the set (`weight`, by
        default the set's own); dice and backs are left as the classifier reads them."""
        weight = self.weight if weight is None else weight
        faces_at = columns(names, FACE_NAMES)
        tiles = np.array([kind != "die" for kind in kinds])
        out = probs.copy()
        if not tiles.any():
            return out
        likeness = self.likeness(embedding[tiles])
        by_set = np.exp((likeness - likeness.max(1, keepdims=True)) / SET_TEMPERATURE)
        by_set /= by_set.sum(1, keepdims=True)
        faces = probs[tiles][:, faces_at]
        mass = faces.sum(1, keepdims=True)
        mixed = faces ** (1 - weight) * by_set**weight
        mixed = mixed / np.maximum(mixed.sum(1, keepdims=True), 1e-12) * mass
        rows = np.flatnonzero(tiles)
        out[np.ix_(rows, faces_at)] = mixed
        return out

    def save(self, path: Path) -> None:
        optional = {"looks": self.looks, "made_with": self.made_with}
        kept = {name: value for name, value in optional.items() if value is not None}
        np.savez_compressed(path, faces=np.array(self.faces), vectors=self.vectors,
                            weight=np.float64(self.weight), **kept)  # fmt: skip

    @classmethod
    def load(cls, path: Path) -> KnownSet:
        """A saved set; one enrolled before the set-look model holds no looks, one saved before
        sets kept their weight weighs `SET_WEIGHT`, one saved before sets kept their models'
        fingerprint is made by none (`made_by`)."""
        with np.load(path) as held:
            looks = held["looks"].astype(np.float32) if "looks" in held else None
            faces = tuple(str(f) for f in held["faces"])
            weight = float(held["weight"]) if "weight" in held else SET_WEIGHT
            made_with = held["made_with"].astype(np.float32) if "made_with" in held else None
            return cls(faces, held["vectors"].astype(np.float32), looks, weight, made_with)


# -- which models made a set -------------------------------------------------------------------
PROBE_SEED = 0x5E7
"""Draws the one fixed crop (`probe`) every reader and set-look model is asked about."""
SAME_MODELS = 1e-3
"""Two fingerprints are of the same models when no coordinate differs by more. The shipped
reader gives its fingerprint to the bit on one thread or two; a reader trained on from it for
24 minutes moved it by up to 0.08 (models/MODEL_CARD.md, Reader): the margin between is left
for rounding that differs from one CPU to another. A reader whose last layer alone was fitted
again keeps its embedding, and so its fingerprint and the sets it enrolled."""


@functools.cache
def probe() -> NDArray[np.uint8]:
    """A fixed crop of noise: no tile, but every model maps it somewhere of its own."""
    return np.random.default_rng(PROBE_SEED).integers(0, 256, (CROP, CROP, 3), np.uint8)


def fingerprint(reader: Reader) -> NDArray[np.float32]:
    """What `reader`'s embedding and its set-look model make of `probe`, one after the other
    (empty for a model it lacks): a set enrolled by other models is told by it
    (`KnownSet.made_by`)."""
    embedding = reader.look_at([probe()], half_turn_below=0.0)[1]
    parts = [np.zeros(0, np.float32) if embedding is None else embedding[0]]
    if reader.looker is not None:
        parts.append(reader.looker.embed([probe()])[0])
    return np.concatenate(parts).astype(np.float32)


# -- which set a tile belongs to ---------------------------------------------------------------
LOOK_FAR = 0.45
"""A tile lies outside the set when its look is this far (1 - cosine) from the set's centre."""
SINGLE_FAR = 0.25
"""`LOOK_FAR` for a tile of a face the set holds once (the ten mixed faces): no copy vouches for
it, and these faces keep closer to their set than the dense-pip pairs that hold `LOOK_FAR` up.
On the whole displays in order of seeds 906000-906039 and 907000-907039 (8,700 such tiles) the
set's own lay under 0.21 from the rest but in one display (cream 907008, 0.253; 99.9% under
0.15); of the 19 displays still accepted with another maker's tile on such a face, 9 had it
0.25 or more from the rest. Confirmed on 908000-908039 (docs/enrolment.md, "A face of two
makers"). A display's bar only: in play it flagged far more clean rounds than it caught foreign
tiles (`vision.follow.hands`)."""
COPY_FAR = 0.3
"""Two tiles enrolled as one face are not one maker's when their looks lie this far apart
(`unlike_copies`). The set look lets some faces go less than others (a light set's dense-pip
faces lie up to 0.5 from the rest of its display, so `LOOK_FAR` cannot come down), but a face's
two copies lie together. On the displays of seeds 906000-906039 (the five families, the
shipped models, the true boxes moved and refined): the copies of the 399 whole displays in order lay
at most 0.36 apart (99% under 0.24); a foreign tile and its face's genuine copy under 0.25 in 5
of 117; 22 displays with a foreign tile were accepted, 5 of them on a face with a copy 0.3 or
more from it, and one whole display lay over the bar (0.36, cream 906012 in a line)."""


def allowed_far(face: str) -> float:
    """How far from the rest of its display a tile enrolled as `face` may look (`SINGLE_FAR`
    for a face the set holds once, else `LOOK_FAR`). Play judges every face at `LOOK_FAR`."""
    return SINGLE_FAR if FULL_SET[Tile.parse(face)] == 1 else LOOK_FAR


class SetLook:
    """The set-look model (`vision.training.setlook`): a unit vector per tile crop that keeps
    makers' sets apart and lets faces go, to tell a foreign tile from the set's own."""

    def __init__(self, path: Path, threads: int = 2) -> None:
        from vision.detector import cpu_session  # its threads sleep between runs

        self.session = cpu_session(path, threads)
        self.input = self.session.get_inputs()[0].name

    def embed(self, crops: list[NDArray[np.uint8]]) -> NDArray[np.float32]:
        """N x D for N reader crops (`vision.crops.cut`)."""
        if not crops:
            return np.zeros((0, self.session.get_outputs()[0].shape[1]), np.float32)
        blob = as_input(crops)
        looks = self.session.run(None, {self.input: blob})[0]
        return looks / np.maximum(np.linalg.norm(looks, axis=1, keepdims=True), 1e-9)


def look_distance(
    enrolled: NDArray[np.float32], looks: NDArray[np.float32], leave_out: bool = False
) -> NDArray[np.float64]:
    """How far each of `looks` lies from the centre of the enrolled set's looks (1 - cosine).
    With `leave_out`, `looks` are the enrolled tiles themselves, each against the others."""
    total = enrolled.sum(0)
    centres = total[None, :] - enrolled if leave_out else np.broadcast_to(total, looks.shape)
    centres = centres / np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-9)
    return 1.0 - np.einsum("nd,nd->n", looks, centres).astype(np.float64)


__all__ = ["DISPLAY_ORDER", "Enrolment", "KnownSet", "SeenTile", "enrol", "enrol_seen"]
