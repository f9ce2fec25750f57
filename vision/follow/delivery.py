"""The delivery: which box is served first, whether the cut's order was kept (stacks left
standing, blocks traced back to the stacks' row: `CutSettings`), and tiles carried from one box
to another once delivered (`CarriedSettings`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from itertools import takewhile
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from vision.follow.base import PLAYER_ZONES, ROUND, FollowerBase, K, Phase, Raised, _nearest_first
from vision.follow.dice import _dice
from vision.follow.judge import CutView

if TYPE_CHECKING:
    from vision.follow.view import View


@dataclass(frozen=True)
class CutSettings:
    """Checking the cut: stacks left standing and blocks traced back to the stacks' row."""

    standing: float = 0.5
    """How sure the detector must be of a back in the stacking area for it to be a stack standing
    there (a stack left standing is the evidence of a wrong cut order). Stacks read 0.6-0.9; boxes
    under 0.5 over the cloth where a stack was taken made false alerts in rounds 700109 and 700207
    (over 231 rounds). The shadow beside the last stack on a dark cloth still reads up to 0.61
    (round 700036); `CUT.sure_stack` asks more of a stack seen only once."""
    late: float = 0.0
    """Seconds after a group arrives by which the stacks it emptied must be gone: a block leaves its
    stack before it arrives, so a stack still standing when its group arrives was not taken."""
    still_frames: int = 3
    """Frames in a row a stack must lie in one place to stand: a block carried over the row paused
    there in two (round 700109, seen again where its stack had been taken)."""
    sure_stack: float = 0.75
    """How sure the detector must be of a stack seen standing since its group arrived for it to
    have been left out of the cut; once is enough (a stack left standing may be dealt a frame
    later: with the simulator's labels two of 15 catches saw it once). The detector's phantom in
    the shadow where a stack was taken reads below, frame after frame: 0.52 in one frame (round
    700036), 0.58-0.71 in six (700109, 700169, false alerts while less sure stacks counted in two
    frames); the stacks left standing in the 13 caught of the 231 rounds of
    `docs/accuracy.md` read 0.75-0.92 in every frame after."""
    stack_place: float = 5.0
    """Millimetres from where a stack stood when all eight were seen within which one seen standing
    later is that stack: nobody moves a stack without lifting it. The detector boxes the shadow
    of the stack beside a lifted one, 7-10 mm from where the lifted one stood, at 0.75-0.81 (round
    730067, a false alert); the stacks left standing that the 231 rounds of
    `docs/accuracy.md` catch lie 0.1-3.5 mm from their places."""
    trace_apart: float = 0.8
    """Stack pitches between where a block in flight points back to on the stacks' row and every
    stack its group should come from, for the block to count as lifted from elsewhere: a box's
    centre is a few millimetres off, and a carried tile's height shifts it a little more (the
    stacks lie 26-29 mm apart)."""
    off_stack: float = 0.35
    """Stack pitches from every stack beyond which the line a sighting traces back to its group's
    stacks is in doubt (`_own_line`): from pixels a tile's own line ends up to half a pitch off
    its stack (clean round 710026: 0.17-0.45), so a doubted line needs another that ends on a
    stack (`CUT.on_stack`) before it is dropped."""
    on_stack: float = 0.1
    """Stack pitches within which another of a doubted sighting's lines ends on a stack: that one is
    the tile's own (with labels within 0.05)."""
    shallow: float = 0.4
    """The sine of the angle to the stacks' row under which a block's line back to the row cannot
    tell the stacks apart: there a tile seen a millimetre off its path moves where its line meets
    the row by 1/sine of that, and a tile in flight is boxed a few millimetres off. Flights to the
    boxes at the row's ends (1 and 8) meet it at 14-16 degrees (sine 0.23-0.27); from pixels their
    lines ended one or two stacks off the right ones in rounds 700126, 730089 and 730100 (false
    alerts). The lines that caught swapped blocks in the 231 rounds met the row at sine 0.53 or
    more."""
    fits_other: float = 0.1
    """Stack pitches, on average over a block's sightings, within which their lines end on another
    group's stacks for the block to count as that group's (`_lifted_for_another`): with labels a
    swapped block's fit 0.01-0.09, from pixels 0.07 (710145); the nearest a right block came, from
    pixels, fit the interleaved other group's stacks 0.16 and its own 0.42 (clean round 710030)."""
    fits_better: float = 0.3
    """Stack pitches by which, on average, a block's sightings must fit that other group's stacks
    better than its own: swapped blocks with labels 0.31 (700255, one stack more) to 0.99."""
    trace_frames: int = 2
    """Analysed frames the sightings that agree a block was lifted elsewhere (`_lifted_elsewhere`)
    must come from: a block flies for 0.5-0.7 s, five or more frames, and one frame can lag. In
    clean round 996006 from pixels group 5's block was seen in flight in one frame only, its
    three boxes 40-100 mm behind the tiles in the motion blur, and all three traced back to
    stack 1 (a false `wrong-cut-order`). Asked for two frames, the 330 rounds from pixels of
    `docs/accuracy.md` and 40 fresh ones with groups swapped gave the same outcomes."""
    one_stack_agree: int = 2
    """Sightings pointing away (`_lifted_elsewhere`) that must point at one and the same stack
    where the group takes one stack whole: its block is lifted from one place. From pixels, two
    sightings on lines meeting the row at sine 0.54-0.59 pointed at two neighbouring stacks for
    such a group, each line about half a pitch off the stack it came from, in clean rounds
    1500142 (a false `wrong-cut-order`) and 1530004 (the cut named wrong). Over the 234 fresh
    rounds of 1550000 from pixels it dropped 5 of 1,347 trace breaches, each right but not
    the last evidence against its cut: no outcome changed (`benchmarks/trace_breaches.py`)."""
    fits_together: int = 3
    """Sightings of a block in flight (`_lifted_for_another`) its fit is averaged over: an
    average of two is one or two frames of a fast flight, and from pixels a block's tiles in
    flight trace up to half a pitch off their stacks. Two sightings at 0.52 and 0.67, traced
    0.25-0.5 pitch past their stacks, fitted the interleaved next group's stacks by 0.05 in
    clean round 900094 (a false alert); requiring three changed no catch with labels (80 swaps
    of 780000, 790000, 820000 and 840000)."""

    longer_than_itself: float = 0.02
    """How much longer than the stack at its place was boxed before the delivery (the median of
    its still frames, `Round.lengths`) a box there may be, from the delivery on, to be that
    stack still standing. Once a stack beside it has gone, the detector can box the gap with
    the stack's edge as a stack, longer: 3.5% (1100135) and 10% (1090141) longer, each a false
    `wrong-cut-order`, where the 123 stacks rightly seen standing measured 0.97-1.005 of
    themselves (medians over the frames up to each alert; the cached rounds from pixels,
    1050000-1170095). Single frames of stacks rightly standing measured up to 4.6% long
    (1200089): each such alert rests on its other frames."""
    before_arrival: float = 0.4
    """Seconds before a group arrives in which a stack its cut keeps standing must be seen
    (`_stacks_missed`): four analysed frames, while the block before is lifted and flies."""
    hides: float = 20.0
    """Millimetres from a stack's place within which any tile (a block in flight over it, the
    stack itself seen but not yet still) leaves the place unjudged rather than empty: less than
    the 26-29 mm to the next stack, so a neighbour standing does not hide it."""
    flank_gap: float = 3.5
    """Stack pitches apart that the nearest stacks seen standing either side of an empty place may
    be for the place to count as seen (`_flanked`): an arm can hide stacks without being
    detected, but not one place while both its flanks show. Three pitches (78-87 mm between
    centres, about 60 mm of open row between their edges) is narrower than a dealer's hand
    (75-95 mm across) or the simulator's arm (85-110 mm); four would not be."""
    empty_frames: int = 2
    """Frames, with no frame between them that boxed a stack at the place (still or not), in
    which a place must be seen empty for its stack to be gone: one frame can be the detector
    missing a standing stack."""
    end_gone_before: float = 1.0
    """`gone_before` for a stack seen gone at the row's open end. From pixels the last tile of
    a stack shared by two groups went unseen while the first group's block flew, and its place
    read empty 0.5-0.6 s before that group landed: at 0.3 s, three false alerts in 110 clean
    rounds (900066, 900082, 900107, Chee Yee and Pong Jun, whose shared end stacks are never
    flanked). Under a delivery and that flight (0.7 s and 0.5-0.6 s), which is how early a
    stack taken one group too soon reads from pixels; Yat Dong Dong with two groups swapped
    (900156) read 1.4 s early. Over 594 rounds from pixels (1050000, 1090000, 1100000 on) the
    dealt cut's end stacks read at most 0.6 s early. At 0.9 s a swap read exactly 1.0 s early
    was caught (1100232), but in three of 32 fresh swaps (1120027, 1120045, 1120061) the cut
    that then fitted longest was broken by a lone stack one group early, which waits for the
    set's count: 15.8 s late instead of 0.5 s."""
    end_frames: int = 5
    """Frames in which a place at the row's open end (`_at_open_end`: nothing left standing
    beyond it) must be seen empty for its stack to be gone: with one flank an arm could hide
    it, but not for half a second while it lifts other stacks."""
    gone_before: float = 0.25
    """Seconds before the group before a stack's last one arrives by which the stack must have
    gone for that cut to be broken (`_gone_early`): a stack goes as that group lands, which the
    follower sees 0-0.1 s after (labels); a cut that keeps it a group longer expects it a whole
    delivery (0.7 s) later, but a block flying over the place hides it going. Between two
    standing stacks the dealt cut's stacks read gone at most 0.2 s before (once in 444, from
    pixels over the cached rounds; never before with labels: `benchmarks/stack_gone_early.py`);
    Yat Dong Dong with groups 3 and 4 swapped, which Cup Say fits but for that, read 0.3 s
    before (1200047, labels and pixels), missed at 0.3 s. One analysed frame lies between."""
    told_apart: int = 3
    """Stacks missed by which the likeliest cut must beat the next for the record to call the
    cut inferred rather than undecided. In the five rounds it was chosen on (770000-770007,
    labels) the dealt cut missed 0-4 and the next 4-12 more."""


CUT = CutSettings()


@dataclass(frozen=True)
class SetUpSettings:
    """Reading the cut's set-up: the stacks a dealer pushes towards the players before
    delivering, where the rule book has the cut drawn every round (MBS App. D, `rules.SetUp`)."""

    least: float = 8.0
    """Millimetres ahead of its place from which a stack lying still is pushed: a stack left in
    place is boxed 0.1-3.5 mm from it (`CUT.stack_place`); the simulator pushes 20 mm, 12 where
    the top tiles are pulled back, and a dealer's "slightly" is a third of a tile or so."""
    most: float = 45.0
    """Millimetres ahead beyond which a tile lying still is no stack of this place pushed: a
    push this long would be most of a tile's length (60-70 mm), and the cloth beyond is where
    blocks are laid for delivery."""
    sideways: float = 6.0
    """Millimetres along the row a pushed stack may lie from its place: pushed straight ahead,
    it stays in its column; the next stack's place is 26-29 mm away."""


SET_UP = SetUpSettings()
NOT_PUSHED: Mapping[int, float] = MappingProxyType({})


@dataclass(frozen=True)
class CarriedSettings:
    """Following face-down tiles after delivery (a hand carried to another box)."""

    step: float = 150.0
    """Millimetres a carried tile may move between analysed frames and still be the same tile."""
    gap: int = 3
    """Frames a carried tile may go unseen and still be followed where it was heading: two hands
    carried past each other are each missed a frame or two where they cross (round 700120), and a
    tile found again must keep the box it left."""
    resting: float = 20.0
    """Millimetres a face-down tile may move between analysed frames and still be lying where it
    is: a hand carried over a box on its way elsewhere (the bank's hand to the bank area) has not
    landed there."""


CARRIED = CarriedSettings()


@dataclass(frozen=True)
class ArrivalSettings:
    """When a player's box counts as served: a block has landed there."""

    block_frames: int = 2
    """Frames running a box must show two tiles, a block's top layer, for its block to have
    landed (one frame may be a block flying over it)."""
    lone_frames: int = 5
    """Frames running a box must show one tile for its block to have landed where the detector
    boxes only one of the two on top. A back of another set's look goes unboxed: with one
    slipped into a block (rounds 995009, 995023, 995025 from pixels), its box was never
    served, so the next box was taken for the first (a false `wrong-first-position`) or every
    later group was traced to the next group's stacks (a false `wrong-cut-order`). Longer
    than `block_frames`: one tile alone for a moment is a tile passing over the box. Chosen
    among 3, 5 and 8 on those rounds and 234 others from pixels: at 3 a tile dealt to the wrong
    box, landing 0.2 s before its own group's block was boxed whole, was taken for the first
    block (1550169, 1550217); at 8 the first box of 995023 was served too late to be first."""


ARRIVAL = ArrivalSettings()

BLOCK_STACKS = 2
"""Stacks a block of four lies in once dealt: two tiles side by side, two high (MBS 3.5: eight
stacks of four; the top layer over the bottom, App. D). A box showing more holds more than
four tiles."""


@dataclass(frozen=True)
class OffBoxSettings:
    """When a stack beyond the block at the box out of play is a fifth tile on sight alone."""

    sure_extra: float = 0.80
    """Median detector confidence, over the frames it shows, of the stack beyond a block's
    `BLOCK_STACKS` there, at and above which it is raised at once; below, it waits for the set
    to be counted (`DeliveryPhase._settle_off_box`). The detector boxed bare cloth beside a
    set-aside block as a third stack at medians 0.46-0.71 (rounds 1710012, 1710169, 1640275,
    1680057 from pixels, four false `wrong-hand-size`); lone tiles dealt into a player's box
    measured 0.84-1.00. Written down before the 11 rounds that confirmed it were looked at
    (runs/offfifth/RULE.txt): lone tiles dealt into the hand set aside measured 0.67-0.87
    there, so about half are raised at the count (11-15 s later), none lost."""


OFF_BOX = OffBoxSettings()


class StackSighting(NamedTuple):
    """A stack's box in one frame: where it lies on the table, how sure the detector is of it
    and its longer side there (mm)."""

    xy: NDArray[np.float64]
    sure: float
    length: float


@dataclass(frozen=True)
class Breach:
    """Where a delivery broke one permitted cut: an alert if no permitted cut fits."""

    position: int
    expected: str
    observed: str
    since: float
    t: float
    confidence: float
    one_group_early: bool = False
    """A stack gone one group before this cut takes its last tile, and nothing more: what a
    stack one tile short does under the right cut where its last group takes that one tile
    alone (`CutView.last_alone`: a tile missing from the set), so alone it waits for the set's
    count (`_settle_held`)."""


@dataclass(frozen=True)
class Track:
    """A face-down tile followed from frame to frame after delivery."""

    xy: NDArray[np.float64]
    zone: str
    origin: str
    """The zone it last lay still in (for a tile in transit, the one it left)."""
    velocity: NDArray[np.float64]
    unseen: int = 0
    """Frames since it was last seen (`CARRIED.gap`)."""
    new: bool = False
    """First seen at its last sighting: the zone it lay in is the one it left only if it lies
    still at the next."""
    still: int = 0
    """Frames running it has lain at rest in `zone` (0 while it moves)."""

    @property
    def reach(self) -> float:
        """How far from where it should be a tile found is this one. A tile lying still when
        last seen lies there still under the hand that hides it: a tile carried over it is
        another (round 700164: hands carried across box 6 hid its tiles and took their place)."""
        if self.unseen and float(np.linalg.norm(self.velocity)) <= CARRIED.resting:
            return CARRIED.resting
        return CARRIED.step


class DeliveryPhase(FollowerBase):
    """Blocks from the stacks to the boxes, and hands carried between boxes afterwards."""

    def _note_columns(self, view: View) -> None:
        """The stacks' places along the stacking area, once all eight stand."""
        round_ = self.round
        assert round_ is not None
        if len(view.stack_xy) == 8 and not round_.places:
            round_.places = sorted(view.stack_xy, key=lambda p: float(p[0]))

    def _watch_delivery(self, t: float, view: View, out: list[Raised]) -> None:
        round_ = self.round
        assert round_ is not None
        for zone, streak in self.arrivals.items():
            position = int(zone[1:])
            # A block shows two tiles (the others lie under them), one of which may lie face up
            # (a tile exposed while dealing is still delivered); one tile alone counts only held
            # longer, and in turn (`ARRIVAL.lone_frames`, `_in_turn`).
            shown = view.backs.get(zone, 0) + view.faces.get(zone, 0)
            lone = self.lone_arrivals[zone]
            block, alone = streak.update(shown >= 2, t), lone.update(shown >= 1, t)
            if position in round_.served:
                continue
            if block or (alone and self._in_turn(position, lone.since)):
                round_.served[position] = streak.since if block else lone.since
                round_.landed[position] = [xy for xy, z, _ in view.backs_xy if z == zone]
                if round_.first_seen is None and len(round_.served) == 1:
                    self._first_position(position, round_.served[position], t, out)
        if round_.places and round_.first_seen is not None:
            self._check_stacks(t, out)
            self._trace_blocks(t, out)

    def _in_turn(self, position: int, since: float) -> bool:
        """Whether a box showing one tile since `since` is the one the delivery serves next:
        the first, or the next round the table after the box served last, and later than it.
        A tile dealt to the wrong box lands alone too, with its own group's block (a hand of
        five, rounds 1550121 and 1550169 from pixels): taken for a block, its box was served
        out of turn and every later group traced to another group's stacks."""
        assert self.round is not None
        served = self.round.served
        if not served:
            return True
        last, at = max(served.items(), key=lambda item: item[1])
        return position == last % 8 + 1 and since > at

    def _count_off_box(self, t: float, view: View, out: list[Raised]) -> None:
        """The hand of the box out of play is set aside face down and never exposed, so it is
        counted as it lies once dealt: more than `BLOCK_STACKS` stacks there, held
        `ROUND.steady` frames, is a fifth tile at least, `wrong-hand-size` at that box, and a
        hand in play short by it is no tile missing (`HandsPhase._set_aside`). A stack of one
        shows the same top as a stack of two: a tile short there is unseeable from above. The
        stack beyond the block is believed on sight only when the detector is sure of it
        (`OFF_BOX.sure_extra`); else it waits for the count (`_settle_off_box`)."""
        round_, zone = self.round, self._off_zone()
        assert round_ is not None
        if zone is None:
            return
        stacks = sorted((sure for _, z, sure in view.backs_xy if z == zone), reverse=True)
        extra = len(stacks) > BLOCK_STACKS
        if extra:
            round_.off_extra_sure.append(stacks[BLOCK_STACKS])
        if not round_.off_streak.update(extra, t):
            return
        if not round_.off_held:
            round_.off_held_since = round_.off_streak.since
        round_.off_held = max(round_.off_held, len(stacks))
        if float(np.median(round_.off_extra_sure)) >= OFF_BOX.sure_extra:
            self._raise_off_box(t, stacks[-1], out)

    def _settle_off_box(self, short: bool, t: float, out: list[Raised]) -> None:
        """The set counted: a stack beyond the block at the box out of play that the detector
        was unsure of is a fifth tile there only if the tiles in play fell `short` of those the
        box leaves in play: 32 tiles, so a tile dealt there was taken from a hand in play. Else
        it was something beside the block that the detector boxed (bare cloth beside a
        set-aside block, rounds 1710012 and 1710169 from pixels)."""
        round_ = self.round
        assert round_ is not None
        if round_.off_held and not round_.off_stacks and short:
            self._raise_off_box(t, float(np.median(round_.off_extra_sure)), out)

    def _raise_off_box(self, t: float, confidence: float, out: list[Raised]) -> None:
        round_, zone = self.round, self._off_zone()
        assert round_ is not None and zone is not None
        round_.off_stacks = round_.off_held
        least, most = 2 * round_.off_stacks - 1, 2 * round_.off_stacks
        self._alert(
            out,
            K.WRONG_HAND_SIZE,
            self.off_box,
            f"4 tiles set aside, {BLOCK_STACKS} stacks of two",
            f"{round_.off_stacks} stacks: {least} or {most} tiles",
            round_.off_held_since,
            t,
            confidence,
            zone,
            summary=f"Box {self.off_box} is marked Off and its hand is to be set "
            f"aside, but it was dealt {round_.off_stacks} stacks ({least} or {most} tiles) where "
            f"a hand lies in {BLOCK_STACKS}; a hand is 4.",
        )

    def _first_position(self, position: int, since: float, t: float, out: list[Raised]) -> None:
        round_ = self.round
        assert round_ is not None
        round_.first_seen = position
        if round_.required_first is not None and position != round_.required_first:
            self._alert(
                out,
                K.WRONG_FIRST_POSITION,
                position,
                f"position {round_.required_first} first (dice {_dice(round_.dice)})",
                f"position {position} first",
                since,
                t,
                round_.dice_agreement,
                f"p{position}",
                summary=f"The first group went to box {position}; the dice "
                f"({_dice(round_.dice)}) and the banker call for box {round_.required_first}.",
            )

    def _note_flight(self, t: float, view: View) -> None:
        """Face-down tiles outside every zone: blocks on their way to the positions, each where
        it lies whole (`_unhidden`). A frame counts as one of a flight where such a tile lies
        where none lay in the last second: a tile lying still outside the zones is not a block
        flying."""
        round_ = self.round
        assert round_ is not None
        sure_enough = [(xy, c, sure) for xy, c, sure in view.loose_backs if sure >= CUT.standing]
        length = round_.stack_length if sure_enough else None  # most frames have none
        loose = [(t, _unhidden(xy, corners, length), sure) for xy, corners, sure in sure_enough]
        if _somewhere_new(round_.in_flight, loose):
            round_.flying.append(t)
        round_.in_flight += loose

    def _note_standing(
        self, t: float, view: View, previous: list[list[NDArray[np.float64]]]
    ) -> None:
        """Which stacks stand in this frame, from the dice on: the first block may fly before
        the follower sees a box served. Only tiles lying still for `CUT.still_frames` count: a
        block carried over the stacks is not a stack; and only where a stack stood
        (`CUT.stack_place`): something boxed beside that place is not the stack. A place seen
        empty, nothing over it and stacks in view close either side (`_flanked`), in
        `CUT.empty_frames` frames with no frame between that boxed a stack there, marks its
        stack gone (`_gone_early`); seen standing again, it was not. (From pixels a stack
        boxed at 0.5-0.6 was missed in two single frames 1.4 s apart, boxed between them but
        never still: counted gone early, a false alert in 1610237.) A flank need only be in
        view, not still: stacks seen at their places as the dealer's arm leaves them show the
        place between is not under it. (Asked to lie still, the flanks of a stack taken a
        group early came back into view 0.2 s too late to tell Yat Dong Dong with two groups
        swapped from Cup Say: round 1080041 from labels.) A stack lying still
        straight ahead of its place (`SET_UP`) before the delivery stands pushed for the set-up
        (`_read_set_up`); from then on it stands wherever it lies pushed, and its empty
        place ahead of the row is where it is judged gone. (Judged at its place on the row
        until the delivery began, a pushed stack not lying still for a frame as the dealer's
        hand came read as gone: that frame and one after the arm had hidden it 0.8 s made a
        false alert in clean round 1710067. From pixels a pushed stack whose tops are pulled
        back is boxed 8-22 mm ahead, frame by frame: judged at one frame's distance, it went
        in and out of sight and its place behind, empty by the set-up, made a false alert in
        clean round 890019.) A stack not pushed counts only
        at its place: the detector boxes a taken stack's shadow 7-10 mm off it (730067). From
        the delivery on, a box at a stack's place longer than that stack was boxed before it
        (`CUT.longer_than_itself`) is the gap beside it: neither standing nor empty."""
        round_ = self.round
        assert round_ is not None
        if len(previous) < CUT.still_frames - 1:
            return

        def lay_still(p: NDArray[np.float64]) -> bool:
            return all(any(np.linalg.norm(p - q) < 6.0 for q in frame) for frame in previous)

        still = [s for s in view.stacks if lay_still(s.xy)]
        standing = [s.xy for s in still]
        in_view = standing + [
            s.xy
            for s in view.stacks
            if any(np.linalg.norm(s.xy - q) <= CUT.stack_place for q in round_.places)
        ]
        tiles = np.array(view.tiles_xy).reshape(-1, 2)
        before_delivery = round_.phase == Phase.DICE
        for stack, place in enumerate(round_.places):
            seen = [s for s in still if np.linalg.norm(s.xy - place) <= CUT.stack_place]
            judged_at = place
            if before_delivery:
                pushed = [s for s in still if _pushed(s.xy, place)]
                if seen:
                    round_.ahead.pop(stack, None)  # in its place: not (or no longer) pushed
                elif pushed:
                    seen = pushed
                    round_.ahead[stack] = float(np.median([s.xy[1] - place[1] for s in pushed]))
                elif stack in round_.ahead:  # seen pushed, not lying still now: judged there
                    judged_at = place + np.array([0.0, round_.ahead[stack]])
                round_.lengths.setdefault(stack, []).extend(s.length for s in seen)
            else:
                if not seen and stack in round_.ahead:  # pushed for the set-up: it stands ahead
                    seen = [s for s in still if _pushed(s.xy, place)]
                    judged_at = place + np.array([0.0, round_.ahead[stack]])  # its place is empty
                before = round_.lengths.get(stack)
                if seen and before:
                    longest = float(np.median(before)) * (1 + CUT.longer_than_itself)
                    seen = [s for s in seen if s.length <= longest]  # else the gap boxed
            sure = [s.sure for s in seen]
            if sure:
                round_.standing.setdefault(stack, []).append((t, max(sure)))
                round_.empty_since.pop(stack, None)
                round_.gone.pop(stack, None)
            elif any(np.linalg.norm(s.xy - judged_at) <= CUT.stack_place for s in view.stacks):
                round_.empty_since.pop(stack, None)  # boxed there, not yet still: not empty
            elif not np.any(np.linalg.norm(tiles - judged_at, axis=1) <= CUT.hides):
                if _flanked(judged_at, in_view, round_.pitch):
                    needed, early = CUT.empty_frames, CUT.gone_before
                elif _at_open_end(stack, round_.places, standing, round_.gone, round_.pitch):
                    needed, early = CUT.end_frames, CUT.end_gone_before
                else:
                    continue
                since, frames = round_.empty_since.get(stack, (t, 0))
                round_.empty_since[stack] = (since, frames + 1)
                if frames + 1 >= needed:
                    round_.gone.setdefault(stack, (since, early))

    def _read_set_up(self) -> None:
        """The cut's set-up as the delivery begins: the stacks pushed towards the players are
        the first group's (MBS App. D, `rules.SetUp`), so from here the delivery is judged
        only by the permitted cuts that begin with those stacks, and one that breaks them
        breaks the cut shown. Only where the rule book has the dealer show one (MBS App. D):
        elsewhere a stack nudged forward is no set-up, and neither is one that fits no
        permitted cut; those narrow nothing (the delivery still tells). The record names the
        stacks seen pushed either way."""
        round_ = self.round
        assert round_ is not None
        if not round_.ahead or round_.set_up is not None:
            return
        round_.set_up = frozenset(round_.ahead)
        shown = [i for i in round_.live if self.judge.views[i].stacks[1] == round_.set_up]
        if shown and self.judge.ruleset.cut_set_up:
            round_.live = shown
            if self.cut_known == "inferred":
                self.cut_known = "seen"

    def _judged(self) -> list[int]:
        """The cut views the delivery is still judged by: those that fit so far, or, once none
        does, the one that fitted longest (its further breaches are alerts too)."""
        round_ = self.round
        assert round_ is not None
        return round_.live if round_.reference is None else [round_.reference]

    def _breached(self, view: int, breaches: list[Breach], out: list[Raised]) -> None:
        """A cut view the delivery broke. While another permitted view still fits, it only drops
        out (the dealer used another cut); when the last one drops, its breaches are alerts: the
        delivery fits no cut the table may deal. A lone stack gone one group early is held until
        the set is counted (`_settle_held`) unless more breaches join it: a stack one tile short
        goes so under the right cut (round 1010164, a false alert before the set was counted).
        A view broken by such a stack alone still drops out while another fits. Kept judged
        until the count instead, it spared one tile-missing round a false alert (1100236), but
        six swaps in 684 rounds from pixels waited longer, three of 32 fresh ones 15.8 s instead
        of 0.5 s (1120027, 1120045, 1120061)."""
        round_ = self.round
        assert round_ is not None
        if not breaches:
            return
        if round_.reference is None:
            round_.live.remove(view)
            if round_.live:
                return
            round_.reference = view
        alone = len(breaches) == 1 and breaches[0].one_group_early
        if alone and not round_.cut_breached:
            round_.held.setdefault(breaches[0].position, breaches[0])
            return
        now = breaches[0].t
        held, round_.held = [replace(b, t=now) for b in round_.held.values()], {}
        self._cut_alerts(view, held + breaches, out)

    def _settle_held(self, t: float, out: list[Raised]) -> None:
        """The set counted (or the round closed): a stack held as gone one group early is an
        alert, raised now, unless a tile missing from the set explains it."""
        round_ = self.round
        assert round_ is not None
        held, round_.held = [replace(b, t=t) for b in round_.held.values()], {}
        if held and not any(kind == K.MISSING_TILE.value for kind, _ in round_.raised):
            assert round_.reference is not None
            self._cut_alerts(round_.reference, held, out)

    def _cut_alerts(self, view: int, breaches: list[Breach], out: list[Raised]) -> None:
        """`wrong-cut-order`, one alert a round, at the first breach, citing the cut view that
        fitted longest: a delivery out of order breaks the cut again at most of the groups
        after (5-7 alerts a round, one for each box, when each breach was one), and to the
        surveillance room that is one incident. The round's record names every box whose tiles
        broke it (`cut_breached`)."""
        round_ = self.round
        assert round_ is not None
        first = not round_.cut_breached
        round_.cut_breached.update(breach.position for breach in breaches)
        if not first or not breaches:
            return
        breach = min(breaches, key=lambda b: b.since)
        permitted = len(self.judge.views)
        named = str(self.judge.views[view].choices[0])
        expected, observed = breach.expected, breach.observed
        if permitted > 1:
            expected += f" ({named}, the permitted cut that fitted longest)"
            observed += f"; no permitted cut fits ({permitted} told apart)"
        self._alert(
            out,
            K.WRONG_CUT_ORDER,
            breach.position,
            expected,
            observed,
            breach.since,
            breach.t,
            breach.confidence,
            "stack",
            summary=f"The tiles for box {breach.position} were not dealt in the cut's "
            f"order: {breach.observed.split(';')[0]}.",
        )

    def _stacks_missed(self, cut: CutView) -> int:
        """How often a stack this cut keeps standing was not seen standing just before a
        group arrived: the other half of the stacks' evidence, which `_check_stacks` does not
        alert on (an arm over a stack hides it) but which tells apart cuts that differ only in
        how soon a stack goes (`yat-dong-dong` takes stack 8 with group 1, `cup-say` with 2)."""
        round_ = self.round
        assert round_ is not None
        missed = 0
        for group, arrived in enumerate(sorted(round_.served.values()), start=1):
            for stack, last in cut.last_groups.items():
                seen = round_.standing.get(stack, [])
                if last > group and not any(
                    arrived - CUT.before_arrival <= t <= arrived for t, _ in seen
                ):
                    missed += 1
        return missed

    def _check_stacks(self, t: float, out: list[Raised]) -> None:
        """A stack seen standing once the group that should have taken its last tiles had
        left with them (`_gone_by`): the groups left out of the cut's order. (Seeing a stack
        that should be gone cannot be an arm in the way; a stack unseen early can be, so that
        is not judged.) The alert is as sure as the detector was of the stack since then.
        Judged for every permitted cut that still fits (`_breached`)."""
        round_ = self.round
        assert round_ is not None
        arrivals = sorted(round_.served.values())
        for index in list(self._judged()):
            breaches = self._gone_early(self.judge.views[index], arrivals, t)
            for stack, group in self.judge.views[index].last_groups.items():
                gone = _gone_by(group, arrivals, round_.flying)
                if gone is None:
                    continue
                sure = [c for seen, c in round_.standing.get(stack, []) if seen >= gone]
                if max(sure, default=0.0) < CUT.sure_stack:
                    continue
                position = (round_.first_seen - 1 + group - 1) % 8 + 1  # type: ignore[operator]
                breaches.append(
                    Breach(
                        position,
                        f"stack {stack + 1} gone with group {group} to position {position}",
                        f"stack {stack + 1} still standing",
                        gone,
                        t,
                        float(np.mean(sure)),
                    )
                )
            self._breached(index, breaches, out)

    def _gone_early(self, cut: CutView, arrivals: list[float], t: float) -> list[Breach]:
        """Stacks gone before this cut takes their last tiles: a stack goes as the group before
        its last one lands, so one whose place lay empty (`_note_standing`) from well before
        that group arrived (`CUT.gone_before`) was dealt sooner than this cut deals it. Judged
        as soon as that is certain: while the group is still to come it arrives after now, so
        a place empty since well before now is enough. (Judged only once the group had
        arrived, a stack taken with the second group where the cut keeps it for the seventh
        ruled that cut out four seconds late: round 1030093 from labels.) Only an empty place
        counts, never a stack merely unseen: a block flying over hides it."""
        round_ = self.round
        assert round_ is not None
        breaches = []
        for stack, last in cut.last_groups.items():
            if stack not in round_.gone or last < 2:
                continue
            gone, early = round_.gone[stack]
            arrived = len(arrivals) >= last - 1
            before = arrivals[last - 2] if arrived else t
            if gone >= before - early:
                continue
            position = (round_.first_seen - 1 + last - 2) % 8 + 1  # type: ignore[operator]
            seen = [c for _, c in round_.standing.get(stack, [])]
            # A stack goes while the group before its last flies; one a group early goes while
            # the group before that flies, so it stood until the third group before had landed.
            one_group = stack in cut.last_alone and (
                last < 4 or (len(arrivals) >= last - 3 and gone >= arrivals[last - 4])
            )
            observed = (
                f"stack {stack + 1} gone {before - gone:.1f} s before"
                if arrived
                else f"stack {stack + 1} gone for {t - gone:.1f} s, group {last - 1} still to come"
            )
            breaches.append(
                Breach(
                    position,
                    f"stack {stack + 1} standing until group {last - 1} reached position "
                    f"{position} (its last tiles go with group {last})",
                    observed,
                    gone,
                    t,
                    float(np.mean(seen)) if seen else CUT.standing,
                    one_group_early=one_group,
                )
            )
        return breaches

    def _trace_blocks(self, t: float, out: list[Raised]) -> None:
        """Each delivered block's flight traced back to the stacks' row: a block from stacks
        its group does not hold was cut out of order, even where those stacks still stand
        (their upper layers taken), which `_check_stacks` cannot see. Each sighting in the
        first half of the flight gets a line from each place its tiles landed (side by side:
        from the box's centre right groups traced up to 1.4 pitches off); `_lifted_elsewhere`
        weighs them one by one, `_lifted_for_another` together. As sure as the detector was
        of those tiles. Judged for every permitted cut that still fits (`_breached`)."""
        round_ = self.round
        assert round_ is not None
        columns, ahead = round_.columns, round_.ahead  # once, not per sighting
        for group, position, homes in self._flights():
            for index in list(self._judged()):
                cut = self.judge.views[index]
                stacks = cut.stacks[group]
                others = [cut.stacks[g] for g in range(1, 9) if g != group]
                away = _lifted_elsewhere(homes, columns, stacks, ahead) or _lifted_for_another(
                    homes, columns, stacks, others, ahead
                )
                if not away:
                    continue
                origins = sorted({origin for _, _, origin in away})
                breach = Breach(
                    position,
                    f"group {group} to position {position} from stack "
                    + " and ".join(str(s + 1) for s in sorted(stacks)),
                    "its block lifted from stack " + " and ".join(str(s + 1) for s in origins),
                    away[0][0],
                    t,
                    float(np.mean([sure for _, sure, _ in away])),
                )
                self._breached(index, [breach], out)

    def _flights(self) -> Iterator[tuple[int, int, list[Home]]]:
        """Each group delivered and not yet traced, marked traced as it is given: its number,
        the position it went to and each sighting of its block in flight (from the frame the
        block before it landed), with a line back to the row from each place it landed."""
        round_ = self.round
        assert round_ is not None
        arrivals = sorted(round_.served.values())
        row = round_.row  # once, not per sighting
        while round_.traced < len(arrivals):
            group = round_.traced = round_.traced + 1
            since = arrivals[group - 2] if group > 1 else -np.inf
            position = (round_.first_seen - 1 + group - 1) % 8 + 1  # type: ignore[operator]
            spots = round_.landed.get(position) or [self.locate.zones[f"p{position}"].mean(0)]
            homes = [
                (seen, sure, [_home(xy, spot, row) for spot in spots])
                for seen, xy, sure in round_.in_flight
                if since <= seen < arrivals[group - 1]
            ]
            yield group, position, homes

    def _watch_carried(self, t: float, view: View, out: list[Raised]) -> None:
        """Tiles carried from one player's box into another's after delivery. Face-down tiles
        are followed from frame to frame (nearest predicted position, one to one, so two hands
        passing each other keep apart); each remembers the zone it last lay still in, and one
        that comes to rest in another player's box than the served box it left raises the
        alert, as sure as the detector was of the tile where it came to rest, `ROUND.steady`
        frames running: where two hands cross over a box between them, one frame's match gives a
        tile a step short enough to be at rest there (14 of 193 swaps from pixels also named a
        box passed over, 1710144, 1670004; runs/swaprest/RULE.txt). A tile first seen
        moving left no box we know of (1600144 from labels: two tiles of hands carried across
        box 6, first seen over it, were taken for box 6's hand carried to box 7). A tile that
        moves on is only passing over a box; the banker's hand going to the bank area is the
        dealer's job, not a swap, but another box's hand set there is the bank playing a hand it
        was not dealt (1600324: the house bank took the hand of the box out of play and set its
        own aside, and neither hand came to rest in a player's box)."""
        round_ = self.round
        assert round_ is not None
        previous = self.carried
        pairs = _nearest_first(
            (distance, i, j)
            for i, (xy, _, _) in enumerate(view.backs_xy)
            for j, track in enumerate(previous)
            if (distance := float(np.linalg.norm(xy - (track.xy + track.velocity)))) <= track.reach
        )
        matched = {i: previous[j] for i, j in pairs.items()}
        current = []
        for i, (xy, zone, sure) in enumerate(view.backs_xy):
            before = matched.get(i)
            velocity = np.zeros(2)
            if before is not None:  # over the frames since it was last seen
                velocity = (xy - before.xy + before.unseen * before.velocity) / (before.unseen + 1)
            origin = before.origin if before is not None else zone
            moving = before is not None and float(np.linalg.norm(velocity)) > CARRIED.resting
            if moving and before is not None and before.new:
                origin = ""  # first seen in flight: it left no box we know of
            still = 0
            if zone and not moving:
                still = 1
                if before is not None and before.still and before.zone == zone:
                    still = before.still + 1
            if still >= ROUND.steady:
                to = _carried_to(zone, self.judge.banker)
                if (
                    to is not None
                    and origin in PLAYER_ZONES
                    and int(origin[1:]) != to
                    and int(origin[1:]) in round_.served
                ):
                    a = min(int(origin[1:]), to)
                    onto, where = ("the bank",) * 2 if zone == "bank" else (str(to), f"box {to}")
                    self._alert(
                        out,
                        K.HANDS_SWAPPED,
                        a,
                        f"position {a}'s tiles stay at {a}",
                        f"tiles carried from position {origin[1:]} to {onto}",
                        t,
                        t,
                        sure,
                        zone,
                        summary=f"Tiles were moved from box {origin[1:]} to {where} "
                        "after delivery.",
                    )
                origin = zone
            current.append(Track(xy, zone, origin, velocity, new=before is None, still=still))
        continued = set(pairs.values())
        current += [
            replace(track, xy=track.xy + track.velocity, unseen=track.unseen + 1)
            for j, track in enumerate(previous)
            if j not in continued and track.unseen < CARRIED.gap
        ]
        self.carried = current


class Line(NamedTuple):
    """A sighting of a block in flight traced back along its flight (`_home`): where the line
    meets the stacks' row (mm along it; infinite where it cannot tell the stacks apart), and
    how far along the row it moves for each millimetre towards the players, so that a stack
    pushed ahead of the row for the set-up is met where it stands."""

    x: float
    slope: float = 0.0

    def at(self, stack: int, ahead: Mapping[int, float]) -> float:
        """Where along the row the line passes the stack, level with where the stack stands."""
        return self.x + self.slope * ahead.get(stack, 0.0)


Home = tuple[float, float, list[Line]]
"""A sighting of a block in flight: when, how sure the detector was of it, and its lines back
to the row (`_home`), one from each place the block landed."""


def _lifted_elsewhere(
    homes: list[Home],
    columns: list[float],
    stacks: set[int],
    ahead: Mapping[int, float] = NOT_PUSHED,
) -> list[tuple[float, float, int]]:
    """The sightings of one group's block in flight that show it lifted from stacks the group
    does not hold, each as (time, the detector's confidence, the stack it points to); none
    unless they agree and carry most of the detector's confidence in the sightings that point
    at the stacks' row at all: each counts as much as the detector was sure of it (clean round
    1090039 from pixels: four of seven sightings, boxed at 0.50-0.63, pointed away, the three
    at 0.84-0.88 at the group's stack, 0.47 of the weight; swapped blocks caught from pixels
    over 264 rounds carried 0.81-1.0 of it).
    Each sighting's `homes` are where it traces back to from each place the block landed;
    the likeliest is the one nearest the group's stacks. A block comes from as many stacks
    as its group holds (two far apart in some cuts), so the sightings must point within a
    stack of that many places: a stray tile carried elsewhere meanwhile points anywhere
    (round 700191 from pixels: a flight to box 1, nearly along the row, traced 2-6 pitches
    from its stack beside one that traced right, a false alert). A line that ends beyond the
    row's end, nearest a stack of the group, points at no other stack (700104 from pixels: a
    line 0.87 pitch past the group's end stack counted as lifted from that stack, a false
    alert). A group's one whole stack is lifted from one place, so some of its sightings must
    point at one stack (`CUT.one_stack_agree`), and they must come from more than one frame
    (`CUT.trace_frames`)."""
    pitch = float(np.median(np.diff(columns)))
    weight, away = 0.0, []
    for seen, sure, traced in homes:
        lines = _on_row(traced, columns, pitch, ahead)
        if not lines:
            continue
        weight += sure
        line = _own_line(lines, columns, stacks, pitch, ahead)
        origin = int(np.argmin([abs(line.at(s, ahead) - c) for s, c in enumerate(columns)]))
        if origin not in stacks and _apart(line, columns, stacks, ahead) >= CUT.trace_apart * pitch:
            away.append((seen, sure, origin))
    pointed = Counter(origin for _, _, origin in away)
    most = [origin for origin, _ in pointed.most_common(len(stacks))]
    agreed = [a for a in away if any(abs(a[2] - o) <= 1 for o in most)]
    if len({seen for seen, _, _ in agreed}) < CUT.trace_frames:
        return []
    if len(agreed) < 2 or 2 * sum(sure for _, sure, _ in agreed) <= weight:
        return []
    if len(stacks) == 1 and pointed[most[0]] < CUT.one_stack_agree:
        return []
    return agreed


def _own_line(
    lines: list[Line],
    columns: list[float],
    stacks: set[int],
    pitch: float,
    ahead: Mapping[int, float] = NOT_PUSHED,
) -> Line:
    """Which of a sighting's lines (one from each place its block landed) it flew along: the
    one nearest its group's stacks, unless that one ends well off every stack (`CUT.off_stack`)
    and another ends on one (`CUT.on_stack`). A tile is lifted from a stack, so its own line ends
    on one; a line from the other landing place ends anywhere. In `ghan-dong-ping-say` a
    group's four tiles come from four stacks two apart and land in two places, so a tile's line
    from the wrong place often ends near a right stack by chance (710145: a block from stacks
    1, 3, 5, 7 for 2, 4, 6, 8 went unalerted, though its tiles' own lines ended within 0.05
    pitch of their stacks). From pixels both bars matter: doubting lines 0.25 pitch off made
    false alerts in two of 165 rounds (710011, 710097)."""

    def off_stack(line: Line) -> float:
        return _apart(line, columns, range(len(columns)), ahead) / pitch

    nearest = min(lines, key=lambda line: _apart(line, columns, stacks, ahead))
    on_a_stack = min(lines, key=off_stack)
    if off_stack(nearest) > CUT.off_stack and off_stack(on_a_stack) <= CUT.on_stack:
        return on_a_stack
    return nearest


def _lifted_for_another(
    homes: list[Home],
    columns: list[float],
    stacks: set[int],
    others: list[set[int]],
    ahead: Mapping[int, float] = NOT_PUSHED,
) -> list[tuple[float, float, int]]:
    """The sightings of one group's block in flight, where together they fit another group's
    stacks (`CUT.fits_other`) much better than its own (`CUT.fits_better`): a block swapped with
    another group's is lifted from that group's stacks. Weighed one by one
    (`_lifted_elsewhere`) the lines can fail to agree where they are right: where the other
    group's stacks lie beside the group's own, a line that ends on them still ends under a
    pitch from a right one (`foot-say`, inner stacks for outer: 710244 with labels;
    `ghan-dong-ping-say`, stacks between: 710145 from pixels; both caught only when the other
    group's block flew, 1.3 and 2.9 s late); where the other group holds the same stacks and
    one more, only a third point away (700255, missed until this check).
    Each sighting's distance to a set of stacks is its nearest line's, at most a pitch: a stray
    tile's line weighs no more than a missed one."""
    pitch = float(np.median(np.diff(columns)))
    sightings = [
        (seen, sure, lines)
        for seen, sure, traced in homes
        if (lines := _on_row(traced, columns, pitch, ahead))
    ]
    if len(sightings) < CUT.fits_together:
        return []

    def off(lines: list[Line], chosen: Iterable[int]) -> float:
        return min(1.0, min(_apart(line, columns, chosen, ahead) for line in lines) / pitch)

    def _apart_any(lines: list[Line], stack: int) -> float:
        return min(_apart(line, columns, [stack], ahead) for line in lines)

    own = np.mean([off(lines, stacks) for _, _, lines in sightings])
    for other in others:
        fit = np.mean([off(lines, other) for _, _, lines in sightings])
        if fit <= CUT.fits_other and own - fit >= CUT.fits_better:
            return [
                (seen, sure, min(other, key=lambda s, lines=lines: _apart_any(lines, s)))
                for seen, sure, lines in sightings
            ]
    return []


def _on_row(
    traced: list[Line], columns: list[float], pitch: float, ahead: Mapping[int, float]
) -> list[Line]:
    """The lines of a sighting that end on the stacks' row, a pitch either side of its ends
    allowed, each end where its stack stands (1650043 from pixels: stack 1 pushed 19 mm ahead
    for the set-up, a flight to box 2 so oblique that its lines met stack 1 there 28-33 mm
    before the row's end; dropped, the sightings kept only their lines from the other place
    the block landed, which pointed at stack 2, a false alert). The others (infinite: not in
    the first half of a flight) point nowhere."""
    last = len(columns) - 1
    return [
        line
        for line in traced
        if line.at(0, ahead) >= columns[0] - pitch and line.at(last, ahead) <= columns[-1] + pitch
    ]


def _apart(
    line: Line, columns: list[float], chosen: Iterable[int], ahead: Mapping[int, float]
) -> float:
    """How far along the row a line passes from the nearest chosen stack."""
    return min(abs(line.at(s, ahead) - columns[s]) for s in chosen)


def _pushed(xy: NDArray[np.float64], place: NDArray[np.float64]) -> bool:
    """Whether something lying at `xy` is the stack of `place` pushed straight ahead (`SET_UP`)."""
    ahead = xy[1] - place[1]
    return abs(xy[0] - place[0]) <= SET_UP.sideways and SET_UP.least <= ahead <= SET_UP.most


def _flanked(place: NDArray[np.float64], standing: list[NDArray[np.float64]], pitch: float) -> bool:
    """Stacks seen on both sides of a place, closer together than a hand is wide
    (`CUT.flank_gap`): no arm reaching over the row could hide the place and leave both in view,
    so the place between them, seen empty, is empty."""
    left = [float(p[0]) for p in standing if p[0] < place[0]]
    right = [float(p[0]) for p in standing if p[0] > place[0]]
    return bool(left and right) and min(right) - max(left) <= CUT.flank_gap * pitch


def _at_open_end(
    stack: int,
    places: list[NDArray[np.float64]],
    standing: list[NDArray[np.float64]],
    gone: Collection[int],
    pitch: float,
) -> bool:
    """A place with a stack seen standing close on one side (`CUT.flank_gap`) and nothing
    standing on the other: the row's end, or only places whose stacks have gone. Stacks dealt
    one by one from an end (Yat Dong Dong) are never flanked on both sides, so without this a
    stack gone there is never seen gone (`_gone_early`)."""
    x = float(places[stack][0])
    left = [float(p[0]) for p in standing if p[0] < x]
    right = [float(p[0]) for p in standing if p[0] > x]
    open_left = not left and all(s in gone for s in range(stack))
    open_right = not right and all(s in gone for s in range(stack + 1, len(places)))
    near = CUT.flank_gap * pitch
    return (open_left and bool(right) and min(right) - x <= near) or (
        open_right and bool(left) and x - max(left) <= near
    )


def _carried_to(zone: str, banker: int) -> int | None:
    """The box whose hand a tile coming to rest in `zone` joins: a player's box, or the
    banker's where the bank's hand is set (the bank area); None elsewhere."""
    if zone == "bank":
        return banker
    return int(zone[1:]) if zone in PLAYER_ZONES else None


def _gone_by(group: int, arrivals: list[float], flying: list[float]) -> float | None:
    """When the stacks a group empties must be gone: once its block has arrived, or sooner,
    once a block has been seen in flight (`flying`) in two frames since the group before it
    arrived (the frame it arrived in too: a tile out of the boxes then is the next block,
    lifted as the last one landed; 700101's was, and its swap was alerted 1.2 s after the lift
    instead of 0.8). A dealer who lifts the next block as the last one lands leaves a stack
    taken out of turn standing only while that block flies: neighbouring stacks swapped in
    `yat-dong-dong` (round 710156, to the far boxes) stood 0.7 s into the wrong flight and were
    gone before it landed. None while neither has happened."""
    if group > len(arrivals) + 1:
        return None
    since = arrivals[group - 2] if group > 1 else -np.inf
    arrived = arrivals[group - 1] + CUT.late if group <= len(arrivals) else np.inf
    seen = [s for s in flying if since <= s]
    gone = min(seen[1] if len(seen) >= 2 else np.inf, arrived)
    return None if gone == np.inf else float(gone)


def _somewhere_new(
    before: list[tuple[float, NDArray[np.float64], float]],
    now: list[tuple[float, NDArray[np.float64], float]],
) -> bool:
    """Whether a tile seen `now` lies where no tile of `before` lay in the last second."""
    if not now:
        return False
    t = now[0][0]
    recent = [xy for _, xy, _ in takewhile(lambda s: s[0] >= t - 1.0, reversed(before))]
    return any(all(np.linalg.norm(xy - q) > CARRIED.resting for q in recent) for _, xy, _ in now)


def _unhidden(
    xy: NDArray[np.float64], corners: NDArray[np.float64], length: float | None
) -> NDArray[np.float64]:
    """Where a tile in flight lies whole, boxed at `xy` with `corners` (table mm) where the
    stacks' tiles were boxed `length` long. The dealer's hand, behind the block, hides the
    tiles' near ends, and the detector boxes what shows: 45-62 mm of 67-69, its centre 5-11 mm
    towards the players, in clean rounds 1610023 and 1660007 from pixels; traced back along
    oblique flights, lines through such centres ended 0.4-0.9 pitch off their stacks and, in
    doubt (`CUT.off_stack`), gave way to the lines from the block's other landing place, which
    ended on other stacks by chance: a false `wrong-cut-order` in each. So a box shorter than
    the stacks' tiles, lying lengthwise towards the players, is taken to be the tile's far
    end: its centre moves back, towards the dealer (down the table, the stacks' row lying
    between the dealer and the boxes), by half what it lacks."""
    first, second = corners[1] - corners[0], corners[2] - corners[1]
    along = first if np.linalg.norm(first) >= np.linalg.norm(second) else second
    boxed = float(np.linalg.norm(along))
    if length is None or boxed >= length or abs(along[1]) < abs(along[0]):
        return xy
    towards_dealer = -along / boxed * np.sign(along[1])
    return xy + towards_dealer * (length - boxed) / 2


def _home(xy: NDArray[np.float64], spot: NDArray[np.float64], row: float) -> Line:
    """Where on the stacks' row (its x) a tile seen at `xy` in flight to `spot` was lifted:
    the line from the spot through the sighting, back to the row. Infinite for a sighting
    that is not in the first half of a flight from the row, or whose line meets the row too
    flat to tell its stacks apart (`CUT.shallow`). A tile beyond the row, on the dealer's side, is
    not on its way to a box (740024, 740056: tiles moved there while a block flew made false
    alerts)."""
    nowhere = Line(float("inf"))
    dy = xy[1] - spot[1]
    if abs(dy) < 1e-6 or (xy[1] - row) * (spot[1] - row) <= 0:
        return nowhere
    slope = float((xy[0] - spot[0]) / dy)
    x = spot[0] + slope * (row - spot[1])
    home = np.array([x, row])
    if np.linalg.norm(xy - home) > 0.5 * np.linalg.norm(spot - home):
        return nowhere
    if abs(xy[1] - row) < CUT.shallow * np.linalg.norm(xy - home):
        return nowhere
    return Line(float(x), slope)
