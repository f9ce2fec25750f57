"""The hands once turned face up: each box's tiles read over frames until steady, split high and
low, and judged: foreign tiles, hand sizes, house way, missing tiles (`HandSettings`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from rules import Bank, InvalidHandError, house_sets_bank
from vision.detections import Detections, box_sides, polygon_iou
from vision.enrol import LOOK_FAR
from vision.follow.base import HAND_ZONES, ROUND, FollowerBase, K, Raised, Streak
from vision.follow.exposure import FACES
from vision.follow.judge import SetHand, is_face
from vision.follow.unboxed import UNBOXED, Search, unboxed


@dataclass(frozen=True)
class HandSettings:
    """Reading the hands once they are turned face up."""

    held_read: float = 0.5
    """In a hand lying face up (two or more of its faces read at `FACES.min_read`), a face read this
    sure still counts: a tile at the hand's edge read at 0.5-0.8 frame after frame made a hand of
    three and a false missing-tile alert (rounds 700023 and 700032). Out of an exposed hand the bar
    stays `FACES.min_read`: a back lying across the layout's line read as `2-2` at 0.58-0.82 for
    half a second while stacking (round 700057)."""

    length_far: float = 0.05
    """How much longer or shorter than the hands' tiles (a share of their median length) a
    face-up tile must measure over its frames to be another set's tile. Makers cut tiles 60-70
    mm long (`../shared/domain/tiles.md`), a set's own alike. From pixels, 1104 tiles of 35
    rounds (974000-974039) measured at most 2.8% off their round's median (1.8 mm); of 7 foreign
    tiles, 6 measured 5.2-15.4% shorter."""
    width_far: float = 0.075
    """The same for the width: a box's width is measured less surely in proportion (its two
    long edges lie 24-27 mm apart): those 1104 tiles lay up to 4.7% off (1.2 mm), the widest
    gaps `1-1`s'. A classic tile as long as the set's measured 8.1% narrower (974021)."""

    missed_frames: int = 1
    """A place of a hand lying face up still counts this many frames after it was last seen:
    the detector may miss a tile for a frame. A cream tile in a house set's hand, boxed in
    every other frame, made the hand's count go 3, 4, 3, 4 and the hand never settled (set-look
    round 999409: only `missing-tile`, for the whole table, was raised)."""


HANDS = HandSettings()


@dataclass
class Slot:
    """One exposed tile's place in a hand, with the labels read there over the frames."""

    xy: NDArray[np.float64]
    votes: Counter[str] = field(default_factory=Counter)
    seen: int = 0
    set_distances: list[float] = field(default_factory=list)
    """How far its look lay from the enrolled set's, frame by frame (none without one)."""
    sizes: list[tuple[float, float]] = field(default_factory=list)
    """Its box's length and width on the cloth (mm), frame by frame (`Locate.sizes`)."""
    pressed: list[tuple[bool, bool]] = field(default_factory=list)
    """Frame by frame with `sizes`, whether a tile touched its length's end or its long side,
    which may have stretched that measure (`_pressed`)."""
    last_frame: int = 0
    """The watch's frame it was last seen in (`HandWatch.frames`)."""

    @property
    def size(self) -> tuple[float, float]:
        """Its length and width over the frames (the median: a hand passing over it for a
        frame or two does not shorten it)."""
        length, width = np.median(np.asarray(self.sizes), axis=0)
        return float(length), float(width)

    @property
    def set_distance(self) -> float:
        """Its look's distance from the enrolled set over the frames (the median: one blurred
        frame does not make a tile foreign); 0 where it was not judged."""
        return float(np.median(self.set_distances)) if self.set_distances else 0.0

    @property
    def label(self) -> str:
        return self.votes.most_common(1)[0][0]

    @property
    def agreement(self) -> float:
        return self.votes[self.label] / max(sum(self.votes.values()), 1e-9)


@dataclass
class HandWatch:
    """A hand zone during exposure: its tiles' places, read over frames until steady."""

    axis: NDArray[np.float64]
    slots: list[Slot] = field(default_factory=list)
    steady: Streak = field(default_factory=lambda: Streak(ROUND.steady + 1))
    last_count: int = -1
    final: SetHand | None = None
    final_t: float = 0.0
    unread_distances: list[float] = field(default_factory=list)
    """Frame by frame, the farthest look from the enrolled set among its face-up tiles read too
    unsurely to count in the hand (a foreign tile's design is what the reader knows least)."""
    frames: int = 0
    """Frames it has been updated in."""

    @property
    def present(self) -> int:
        """Its places seen in the last frame or within `HANDS.missed_frames` before it."""
        return sum(s.last_frame >= self.frames - HANDS.missed_frames for s in self.slots)

    def update(
        self,
        xy: NDArray[np.float64],
        labels: list[str],
        scores: list[float],
        sizes: NDArray[np.float64],
        set_distances: list[float] | None = None,
        pressed: NDArray[np.bool_] | None = None,
    ) -> None:
        self.frames += 1
        distances = set_distances if set_distances is not None else [None] * len(labels)
        touched = pressed if pressed is not None else np.zeros((len(labels), 2), bool)
        for point, label, score, size, distance, sides in zip(
            xy, labels, scores, sizes, distances, touched, strict=True
        ):
            near = [s for s in self.slots if np.linalg.norm(s.xy - point) < FACES.same_place]
            slot = near[0] if near else Slot(point.copy())
            if not near:
                self.slots.append(slot)
            slot.votes[label] += score
            slot.seen += 1
            slot.last_frame = self.frames
            if not np.isnan(size[0]):  # measured: clear of every plaque
                slot.sizes.append((float(size[0]), float(size[1])))
                slot.pressed.append((bool(sides[0]), bool(sides[1])))
            if distance is not None:
                slot.set_distances.append(distance)
            slot.xy = 0.8 * slot.xy + 0.2 * point

    def settle(self, count: int) -> SetHand:
        """The hand: the `count` most-seen places, split at the widest gap along the zone."""
        slots = sorted(self.slots, key=lambda s: -s.seen)[:count]
        slots.sort(key=lambda s: float(s.xy @ self.axis))
        along = [float(s.xy @ self.axis) for s in slots]
        gaps = np.diff(along)
        cut = int(np.argmax(gaps)) + 1 if len(gaps) else len(slots)
        labels = [s.label for s in slots]
        self.slots = slots
        return SetHand.of(labels[:cut], labels[cut:])

    @property
    def agreement(self) -> float:
        """How sure the hand's reading is: its least agreed tile's share of the readings."""
        return min((s.agreement for s in self.slots), default=0.0)


class HandsPhase(FollowerBase):
    """The exposure: every hand read, set and judged."""

    def _watch_hands(self, t: float, seen: Detections, out: list[Raised]) -> None:
        round_ = self.round
        assert round_ is not None
        scores = seen.label_scores
        backs = Counter(
            z for z, label in zip(seen.zones, seen.labels, strict=True) if label == "back"
        )
        sizes = self.locate.sizes(seen)
        in_hands = [i for i, (z, label) in enumerate(zip(seen.zones, seen.labels, strict=True))
                    if z in HAND_ZONES and (label == "back" or is_face(label))]  # fmt: skip
        against = [i for i in in_hands if _against_a_plaque(seen.corners[i], self.plaques)]
        sizes[against] = np.nan  # a plaque cuts its box short: not measured
        round_.tile_sizes.extend(tuple(sizes[i]) for i in in_hands if i not in against)
        pressed = np.zeros((len(seen), 2), bool)
        pressed[in_hands] = _pressed(self.locate.on_cloth(seen.corners[in_hands]))
        for zone in HAND_ZONES:
            faces = [
                i
                for i, z in enumerate(seen.zones)
                if z == zone and is_face(seen.labels[i]) and scores[i] >= HANDS.held_read
            ]
            if sum(scores[i] >= FACES.min_read for i in faces) < 2:  # not a hand lying face up
                faces = [i for i in faces if scores[i] >= FACES.min_read]
            rows = _one_per_place(faces, seen.table_xy, scores)
            # One face beside tiles still face down is a tile exposed while dealing, not the
            # hand turned up: counted, it settled the hand at one tile (round 1020041).
            if len(rows) < 2 and backs[zone]:
                continue
            watch = round_.watches.get(zone)
            if watch is None:
                if not rows:
                    continue
                watch = round_.watches[zone] = HandWatch(self._axis(zone))
            if watch.final is not None:
                continue
            watch.update(
                seen.table_xy[rows],
                [seen.labels[i] for i in rows],
                [float(scores[i]) for i in rows],
                sizes[rows],
                [float(seen.set_distance[i]) for i in rows] if len(seen.set_distance) else None,
                pressed[rows],
            )
            if len(seen.set_distance):  # judged against an enrolled set
                unread = [seen.set_distance[i] for i, z in enumerate(seen.zones) if z == zone
                          and i not in rows and is_face(seen.labels[i])]  # fmt: skip
                if max(unread, default=0.0) > 0:
                    watch.unread_distances.append(float(max(unread)))
            count = watch.present
            same = count == watch.last_count
            watch.last_count = count
            if watch.steady.update(same and count > 0, t):
                watch.final = watch.settle(count)
                watch.final_t = watch.steady.since
                self._judge_hand(zone, watch, t, out)
        self._search_short_hands(seen, t, out)
        finals = [z for z, w in round_.watches.items() if w.final is not None]
        if len(set(finals) - {self._off_zone()}) == 8 - bool(self.off_box) and (
            not round_.closed_checks
        ):  # every hand in play is exposed (a box out of play's is set aside)
            self._judge_set(t, out)

    def _search_short_hands(self, seen: Detections, t: float, out: list[Raised]) -> None:
        """Beside a hand that settled short, an object of a tile's size that no model boxed,
        lying in one place `ROUND.steady` frames running: a tile the box cannot read, most
        likely another set's (`vision.follow.unboxed`). Only with the frame's image (the edge
        box's), and only where a hand is short: every clean hand shows four tiles."""
        round_ = self.round
        assert round_ is not None
        searching = [(zone, search) for zone, search in round_.searches.items()
                     if t - search.since <= UNBOXED.search_s]  # fmt: skip
        if self.image is None or not searching or not round_.tile_sizes:
            return
        table = self.locate.table
        # A die boxed in a hand is no die (they stay in the dice area): the detector boxes the
        # red pips of a light tile it does not know as one (986003 from pixels), and such a
        # box would hide the tile from the search.
        tiles = np.array([not label.startswith("die-") for label in seen.labels], bool)
        kept = seen.corners.reshape(-1, 4, 2)[tiles]
        boxes = self.locate.on_cloth(np.concatenate([kept, self.plaques]))
        length, width = round_.tile_size
        homography = np.asarray(table.homography, np.float64)
        for zone, search in searching:
            zone_mm = self.locate.zones[zone]
            found = unboxed(self.image, homography, zone_mm, boxes, (length, width))
            near = [f for f in found if search.xy is not None
                    and np.linalg.norm(f.xy - search.xy) <= UNBOXED.same_place]  # fmt: skip
            search.frames = search.frames + 1 if near else int(bool(found))
            thing = (near or found or [None])[0]
            search.xy = None if thing is None else thing.xy
            if thing is None or search.frames != ROUND.steady:
                continue
            position, size = self._position(zone), round_.short_hands[zone]
            self._alert(
                out,
                K.FOREIGN_TILE,
                position,
                "every tile a tile of the set the box reads",
                f"{size} tiles read and an object {thing.length:.0f} x {thing.width:.0f} mm "
                "that no model boxed",
                search.since,
                t,
                thing.fill,
                zone,
                summary=f"{_box(position).capitalize()} holds {size} tiles the box can read "
                f"and, beside them, an object of a tile's size ({thing.length:.0f} x "
                f"{thing.width:.0f} mm; this set's tiles {length:.0f} x {width:.0f} mm) that it "
                "cannot: a tile of another set?",
            )

    def _set_aside(self) -> int:
        """Tiles not to be seen face up: the hand of the box out of play, set aside unplayed,
        unless it was exposed (`K.OFF_BOX_PLAYED`): four, or as many as the stacks it was
        dealt can hold (`DeliveryPhase._count_off_box`), so that a hand in play short by a
        tile dealt there is told as `wrong-hand-size`, not as a tile missing."""
        round_, zone = self.round, self._off_zone()
        assert round_ is not None
        played = zone in round_.watches and round_.watches[zone].final is not None
        return 0 if zone is None or played else max(4, 2 * round_.off_stacks)

    def _axis(self, zone: str) -> NDArray[np.float64]:
        polygon = self.locate.zones[zone]
        edge = polygon[1] - polygon[0]
        return np.asarray(edge / np.linalg.norm(edge), np.float64)

    def _position(self, zone: str) -> int:
        return self.judge.banker if zone == "bank" else int(zone[1:])

    def _judge_hand(self, zone: str, watch: HandWatch, t: float, out: list[Raised]) -> None:
        round_ = self.round
        assert round_ is not None and watch.final is not None
        hand = watch.final
        position = self._position(zone)
        confidence = watch.agreement
        since = watch.final_t
        for face in hand.tiles:
            round_.faces_seen[face] += 1
        if zone == self._off_zone():
            self._alert(
                out,
                K.OFF_BOX_PLAYED,
                position,
                f"box {position}'s hand set aside unplayed",
                f"box {position}'s hand exposed",
                since,
                t,
                confidence,
                zone,
                summary=f"{_box(position).capitalize()} is marked Off, yet its hand was exposed "
                "and played; it should have been set aside in the burnt box.",
            )
        report = self.judge.integrity(list(round_.faces_seen.elements()), whole_set=False)
        for tile, extra in report.foreign:
            if str(tile) in hand.tiles:
                self._alert(
                    out,
                    K.FOREIGN_TILE,
                    position,
                    f"at most {round_.faces_seen[str(tile)] - extra} x {tile}",
                    f"{round_.faces_seen[str(tile)]} x {tile}",
                    since,
                    t,
                    confidence,
                    zone,
                    summary=f"{_box(position).capitalize()} holds a {tile} too many: "
                    f"{round_.faces_seen[str(tile)]} seen this round, a set has "
                    f"{round_.faces_seen[str(tile)] - extra}.",
                )
        self._judge_looks(zone, watch, position, since, t, out)
        self._judge_size(zone, watch, position, since, t, out)
        size = len(hand.tiles)
        if size > 4 or (size == 4 and hand.setting is None):
            shape = " + ".join(str(len(g)) for g in hand.groups if g)
            self._alert(
                out,
                K.WRONG_HAND_SIZE,
                position,
                "4 tiles set 2 + 2",
                f"{size} tiles set {shape}",
                since,
                t,
                confidence,
                zone,
                summary=f"{_box(position).capitalize()} holds {size} tiles set {shape}; a hand "
                "is 4 tiles set 2 + 2.",
            )
        elif size < 4:
            round_.short_hands[zone] = size
            round_.searches[zone] = Search(t)
        bank = None if self.bank is None else Bank(self.bank)
        house_set = (zone == "bank" and house_sets_bank(bank)) or (
            position in self.table.house_way_positions
        )
        if house_set and hand.setting is not None:
            try:
                check = self.judge.house_way(hand.setting)
            except InvalidHandError:  # a face twice that a set holds once: no house way for it,
                return  # and the tile is raised as foreign once every hand is exposed
            if not check.is_house_way:
                self._alert(
                    out,
                    K.HOUSE_WAY_VIOLATION,
                    position,
                    str(check.expected),
                    str(hand.setting),
                    since,
                    t,
                    confidence,
                    zone,
                    summary=f"{_box(position).capitalize()}'s hand was set {hand.setting}; the "
                    f"house way is {check.expected}.",
                    rule=f"{check.clause.ref}: {check.clause.summary}",
                )

    def _judge_looks(
        self, zone: str, watch: HandWatch, position: int, since: float, t: float, out: list[Raised]
    ) -> None:
        """A tile whose look lies `LOOK_FAR` or further from the enrolled set's: another maker's
        tile, of a face the set holds (a copy too many is `foreign-tile` by count above). Every
        face is judged at `LOOK_FAR`, also one the set holds once, which a display judges at
        `SINGLE_FAR`: in play that bar flagged 26 of 290 clean rounds through another camera
        against 6, and caught 2 more foreign tiles of 200 (docs/enrolment.md). Also a
        face-up tile the reader could not read surely enough to count in the hand, where it
        lay that far over the frames (the median): a navy `3-3` in a house set read `5-5` at
        0.33-0.38, 0.76 from the set, was left out of its hand (round 972015, `missing-tile`
        alone)."""
        far = [s for s in watch.slots if s.set_distance >= LOOK_FAR]
        unread = watch.unread_distances
        if far:
            slot = max(far, key=lambda s: s.set_distance)
            distances, tile = slot.set_distances, f"a {slot.label}"
        elif len(unread) >= ROUND.steady and np.median(unread) >= LOOK_FAR:
            distances, tile = unread, "a face-up tile it could not read"
        else:
            return
        distance = float(np.median(distances))
        self._alert(
            out,
            K.FOREIGN_TILE,
            position,
            "every tile of the enrolled set",
            f"{tile} {distance:.2f} from the set's look",
            since,
            t,
            float(np.mean(np.asarray(distances) >= LOOK_FAR)),  # the frames it looked so
            zone,
            summary=f"{_box(position).capitalize()} holds {tile} unlike the table's enrolled "
            f"set ({distance:.2f} from its look, {LOOK_FAR} allowed over {len(distances)} "
            "frames): another set's tile.",
        )

    def _judge_size(
        self, zone: str, watch: HandWatch, position: int, since: float, t: float, out: list[Raised]
    ) -> None:
        """A tile measuring `HANDS.length_far` longer or shorter, or `HANDS.width_far` wider
        or narrower, than the tiles in the hands (their median: the set's own): another maker's
        tile, even one whose face and look pass. No enrolment is needed. A tile is measured
        only in the frames it lies clear of every marker's plaque (`_against_a_plaque`). A
        side a tile touches may be stretched by that tile's edge, never cut short: measured
        only so, it counts only where short (`_side_off`)."""
        round_ = self.round
        assert round_ is not None
        measured = [s for s in watch.slots if len(s.sizes) >= ROUND.steady]
        if not measured:  # every slot's sizes are in the round's too
            return
        length, width = round_.tile_size

        def off(slot: Slot) -> float:
            """How far off the set a tile measures, in its bars (1 at the bar)."""
            sizes, pressed = np.asarray(slot.sizes), np.asarray(slot.pressed)
            return max(_side_off(sizes[:, 0], pressed[:, 0], length) / HANDS.length_far,
                       _side_off(sizes[:, 1], pressed[:, 1], width) / HANDS.width_far)  # fmt: skip

        gap, (tile_length, tile_width), slot = max(
            ((off(s), s.size, s) for s in measured), key=lambda scored: scored[0]
        )
        if gap < 1:
            return
        self._alert(
            out,
            K.FOREIGN_TILE,
            position,
            f"tiles {length:.0f} x {width:.0f} mm",
            f"a {slot.label} {tile_length:.0f} x {tile_width:.0f} mm",
            since,
            t,
            float(min(1.0, gap / 2)),
            zone,
            summary=f"{_box(position).capitalize()} holds a {slot.label} of {tile_length:.1f} x "
            f"{tile_width:.1f} mm where the table's other tiles measure {length:.1f} x "
            f"{width:.1f} mm ({tile_length / length - 1:+.0%} long, {tile_width / width - 1:+.0%} "
            f"wide; {HANDS.length_far:.0%} and {HANDS.width_far:.1%} allowed, over "
            f"{len(slot.sizes)} frames): another set's tile.",
        )

    def _judge_set(self, t: float, out: list[Raised]) -> None:
        """Every hand is exposed: tiles missing from the set, and short hands not explained by
        them."""
        round_ = self.round
        assert round_ is not None
        round_.closed_checks = True
        total = sum(round_.faces_seen.values())
        in_play = 32 - self._set_aside()
        report = self.judge.integrity(list(round_.faces_seen.elements()), whole_set=True)
        short = sum(4 - n for n in round_.short_hands.values())
        if total < in_play:
            missing = ", ".join(f"{tile} x{n}" for tile, n in report.missing)
            if in_play < 32:
                missing += f" (of them {32 - in_play} set aside from the box out of play)"
            where: int | None = None
            zone, summary = "stack", ""
            if round_.short_hands and short == in_play - total:
                # The hands short by the tiles missing: they were missing there, or lay there
                # unread (from pixels, ivory and cream tiles among a house set's were read as
                # no face: docs/enrolment.md), so the evidence and the reviewer go there.
                boxes = {self._position(z): n for z, n in sorted(round_.short_hands.items())}
                summary = " " + "; ".join(f"{_box(p).capitalize()}'s hand showed {n} tiles"
                                          for p, n in boxes.items())  # fmt: skip
                summary += ": look there for a tile missing, or one not read (another set's?)."
                if len(boxes) == 1:
                    (zone,) = round_.short_hands
                    (where,) = boxes
            self._alert(
                out,
                K.MISSING_TILE,
                where,
                f"{in_play} tiles",
                f"{total} tiles; missing {missing}",
                t,
                t,
                min(w.agreement for w in round_.watches.values() if w.final is not None),
                zone,
                summary=f"Only {total} of the {in_play} tiles were seen this round; "
                f"missing {missing}.{summary}",
                whole_frame=where is None,
            )
        if short > in_play - total:
            for zone, size in round_.short_hands.items():
                self._alert(
                    out,
                    K.WRONG_HAND_SIZE,
                    self._position(zone),
                    "4 tiles",
                    f"{size} tiles",
                    round_.watches[zone].final_t,
                    t,
                    round_.watches[zone].agreement,
                    zone,
                    summary=f"{_box(self._position(zone)).capitalize()} holds {size} tiles; a "
                    "hand is 4.",
                )


def _box(position: int) -> str:
    """How a summary names a position: the operator's word for it."""
    return f"box {position}"


def _one_per_place(
    rows: list[int], xy: NDArray[np.float64], scores: NDArray[np.float64]
) -> list[int]:
    """The surest reading at each place: two boxes on one tile (the detector sometimes gives
    a tile two, a few pixels apart) are one tile, not two."""
    kept: list[int] = []
    for i in sorted(rows, key=lambda i: -scores[i]):
        if all(np.linalg.norm(xy[i] - xy[j]) >= FACES.same_place for j in kept):
            kept.append(i)
    return sorted(kept)


def _side_off(measures: NDArray[np.float64], pressed: NDArray[np.bool_], set_side: float) -> float:
    """How far (a share of the set's) one side of a tile lies off the set's over its frames:
    the median over the frames no tile touched that side, where there are `ROUND.steady`;
    else over every frame, counted only where shorter (a touching tile's edge may have
    stretched it)."""
    free = measures[~pressed]
    if len(free) >= ROUND.steady:
        return abs(float(np.median(free)) / set_side - 1)
    return max(0.0, 1 - float(np.median(measures)) / set_side)


def _pressed(boxes: NDArray[np.float64]) -> NDArray[np.bool_]:
    """N x 2: whether each tile box (N x 4 x 2 corners on the cloth, mm) overlaps another
    beyond an end (its length may be stretched) and beside its long side (its width may be).
    Set touching in a fan of five, a `1-3`'s box took in the edge of the `2-4` beside it and
    measured 8% wider than the set's: a false `foreign-tile` (round 1100213 from pixels); its
    length stayed true."""
    pressed = np.zeros((len(boxes), 2), bool)
    centres = boxes.mean(axis=1)
    reach = np.linalg.norm(boxes - centres[:, None], axis=2).max(axis=1)
    apart = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    sides = box_sides(boxes)
    for i, k in zip(*np.nonzero(apart < reach[:, None] + reach[None]), strict=True):
        if i == k or polygon_iou(boxes[i], boxes[k]) <= 0:  # only boxes near enough can overlap
            continue
        one, other = boxes[i, 1] - boxes[i, 0], boxes[i, 2] - boxes[i, 1]
        along = (one if np.linalg.norm(one) >= np.linalg.norm(other) else other) / sides[i, 0]
        offset = centres[k] - centres[i]
        lengthwise = abs(float(offset @ along)) / sides[i, 0]
        crosswise = abs(float(offset[0] * along[1] - offset[1] * along[0])) / sides[i, 1]
        pressed[i, 0 if lengthwise > crosswise else 1] = True
    return pressed


def _against_a_plaque(box: NDArray[np.float64], plaques: NDArray[np.float64]) -> bool:
    """Whether a box (4 corners) overlaps a marker's plaque: a tile set down against or half
    over an Off button is boxed short of the plaque, so its size is no tile's. A played hand's
    tile half over its box's Off button measured 11% narrower than the set's and raised a false
    `foreign-tile` (round 1050064 from pixels)."""
    return any(polygon_iou(box, plaque) > 0 for plaque in plaques)
