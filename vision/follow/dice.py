"""Reading the dice: pooled over the frames they lie still, read once they agree, each checked
for lying flat; the first position follows from them (`DiceSettings`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from vision.follow.base import ROUND, FollowerBase, K, Phase, Raised

if TYPE_CHECKING:
    from vision.follow.view import View


@dataclass(frozen=True)
class DiceSettings:
    """Reading the dice once they lie still."""

    window: int = ROUND.steady + 2
    """Frames pooled to read the dice: half a second at 10 analysed frames a second."""
    confirm: int = window + 3
    """Frames over which dice that do not read as three lying flat in the first window are read
    again: a flat die read at 0.26-0.97 frame by frame, under 0.5 in three frames of one window
    (round 700166); a phantom die boxed in two of the first five frames (round 700036)."""
    seen: int = 3
    """A die must show in at least a third of the window's frames (a detector misses a small die
    now and then; a phantom die does not hold its place)."""
    die_place: float = 7.0
    """Millimetres within which two sightings are the same die (dice are 13-19 mm across)."""
    die_still: float = 6.0
    """Millimetres a die's sightings may spread over the window and still be lying still."""
    die_apart: float = 12.0
    """Dice are 13-19 mm across, so two dice lie at least this far apart, centre to centre: a box
    closer to a steadier die is that die seen twice, or a box straddling two touching dice."""
    flat_aspect: float = 0.88
    """A die's top face, mapped onto the table, is square when the die lies flat; leaning on an
    edge at 0.6 rad it is 0.83 as wide as long."""
    leaning_below: float = 0.5
    """A die whose median flatness over its sightings is under this is leaning: one half is
    where the flatness reader is as sure of one class as of the other. It was not chosen on
    rounds; the one false `dice-not-flat` from pixels in 440 rounds (clean round 910013,
    `docs/accuracy.md`) read 0.32."""
    of_the_set: float = 0.90
    """A place whose box measures under this share of the other dice's (median side on the
    table) is no die of the set, if the reader is also unsure of it (`unsure_below`): the
    dice of a game are one set, one size. Over 2,311 dice of 785 rounds from pixels the least
    share was 0.85 (a leaning die's box is smaller; those read at 0.60 and over); the
    detector's phantom dice held in the gap between dice measured 0.69-0.71 there (rounds
    1100134, 1120028), and 0.87 in 120 fresh rounds (1150033, 1150052), which 0.80, chosen
    first, let through."""
    unsure_below: float = 0.5
    """The reader's median confidence under which a place too small for the set is no die (it
    gives the other values more than this one): the same 2,311 dice read at 0.60 or more (99%
    at 0.97 or more), the four phantoms at 0.26-0.30. Both signs are asked for, so a die of a
    look the reader does not know (read unsure) or a smaller die thrown with the set (read
    sure) still counts."""
    lean_sure: float = 0.2
    """A die read leaning (`leaning_below`) is leaning outright where the flatness reader reads
    it under this; read between this and `leaning_below`, it leans only if its box also
    departs from the set's (`lean_size_off`). Leaning dice from pixels read 0.00-0.01 (46 dice
    in 924 cached rounds); the two flat dice read leaning read 0.32 and 0.34 (clean round
    910013, 1100199), each a false `dice-not-flat`."""
    lean_size_off: float = 0.05
    """How far a die's box (median side on the table) must depart from the other dice's, as a
    share, to count as a second sign of leaning: a die on its edge shows the table another
    outline. Leaning dice measured 0.86-0.94 of the others; 1100199's flat die read leaning
    0.99. Either way counts, smaller or larger: our renderer's leaning dice are boxed smaller,
    a real one tipped on a tile may be boxed larger."""


DICE = DiceSettings()


class DieSighting(NamedTuple):
    """A die box in one frame: the reader's value and how sure it is of it, where the box lies
    on the table and its side there (mm), and how sure the flatness reader is that it lies
    flat."""

    label: str
    xy: NDArray[np.float64]
    flat: float
    sure: float
    side: float


class DicePhase(FollowerBase):
    """The dice, from when they lie still until they are read."""

    def _watch_dice(self, t: float, view: View, out: list[Raised]) -> None:
        """The dice once they lie still for `DICE.window` frames. Three dice lying flat are
        read then; anything else is read again over the `DICE.confirm` frames from there
        (or those the dice stay for): the detector boxes a phantom die in a frame or two and
        the flatness reader wavers on some flat dice, and either alone raised false alerts."""
        round_ = self.round
        assert round_ is not None
        if round_.dice or (view.dice == 0 and not round_.pooled):
            return
        frames = round_.dice_frames
        if view.dice:
            frames.append(view.dice_read)
        if not round_.pooled:
            if len(frames) < DICE.window:
                return
            dice = _pool_dice(frames[-DICE.window :])
            if dice is None:  # still rolling
                return
            round_.pooled = dice
            round_.still_from = len(frames) - DICE.window
            round_.dice_since = self.to_dice.since if round_.phase == Phase.DICE else t
        elif view.dice:
            round_.pooled = _pool_dice(frames[round_.still_from :], still=True) or round_.pooled
        usual = len(round_.pooled) == 3 and not _leaning(round_.pooled)
        if not usual and view.dice and len(frames) - round_.still_from < DICE.confirm:
            return
        self._read_dice(t, round_.pooled, out)

    def _read_dice(self, t: float, dice: list[list[DieSighting]], out: list[Raised]) -> None:
        """The pooled dice's values and flatness, their alerts, and the first position."""
        round_ = self.round
        assert round_ is not None
        votes = [Counter(s.label for s in die) for die in dice]
        round_.dice = [int(v.most_common(1)[0][0].split("-")[1]) for v in votes]
        round_.dice_agreement = min(
            (v.most_common(1)[0][1] / v.total() for v in votes), default=0.0
        )
        leaning = _leaning(dice)
        round_.dice_flat = not leaning
        seen = [len(die) for die in dice]  # no die may have held its place at all
        if len(round_.dice) != 3:
            self._alert(
                out,
                K.WRONG_DICE_COUNT,
                None,
                "3 dice",
                f"{len(round_.dice)} dice",
                round_.dice_since,
                t,
                min(seen, default=0) / max(seen, default=1),
                "dice",
                summary=f"{len(round_.dice) or 'No'} "
                f"{'die was' if len(round_.dice) == 1 else 'dice were'} thrown; the game uses 3.",
            )
        if leaning:
            self._alert(
                out,
                K.DICE_NOT_FLAT,
                None,
                "every die flat",
                f"die {', '.join(str(k + 1) for k in leaning)} not flat",
                round_.dice_since,
                t,
                1.0 - min(_median_flat(dice[k]) for k in leaning),
                "dice",
                summary=f"{'Die' if len(leaning) == 1 else 'Dice'} "
                f"{', '.join(str(k + 1) for k in leaning)} came to rest not lying flat.",
            )
        round_.required_first = self.judge.first_position(round_.dice, self.adjust.value)


def _pool_dice(
    frames: list[list[DieSighting]], *, still: bool = False
) -> list[list[DieSighting]] | None:
    """The dice of a window of frames, left to right, each with its sightings:
    a die is a place (within `DICE.die_place` mm) seen in at least `DICE.seen` of the frames, so a
    die the detector misses now and then still counts, and a one-frame phantom does not; a place
    within `DICE.die_apart` of a steadier one is that die again, and one too small for the set
    and unsure is none (`_of_the_set`). None while a die still moves: its sightings spread, or the
    last frame shows one in a new place (unless the dice are known to lie `still`)."""
    places: list[list[tuple[DieSighting, int]]] = []
    for index, frame in enumerate(frames):
        for sighting in frame:
            near = [p for p in places if np.linalg.norm(sighting.xy - p[0][0].xy) <= DICE.die_place]
            if near:
                near[0].append((sighting, index))
            else:
                places.append([(sighting, index)])
    places.sort(key=lambda p: -len({index for _, index in p}))  # the steadiest first
    kept: list[list[tuple[DieSighting, int]]] = []
    centres: list[NDArray[np.float64]] = []
    for place in places:
        centre = np.mean([s.xy for s, _ in place], axis=0)
        if all(np.linalg.norm(centre - c) >= DICE.die_apart for c in centres):
            kept.append(place)
            centres.append(centre)
    dice = [p for p in kept if len({index for _, index in p}) * DICE.seen >= len(frames)]
    stray = [p for p in kept if len({index for _, index in p}) * DICE.seen < len(frames)]
    if not still and any(index == len(frames) - 1 for p in stray for _, index in p):
        return None
    for die in dice:
        spread = np.ptp(np.array([s.xy for s, _ in die]), axis=0)
        if not still and float(np.max(spread)) > DICE.die_still:
            return None
    dice = _of_the_set([[s for s, _ in die] for die in dice])
    dice.sort(key=lambda die: float(np.mean([s.xy[0] for s in die])))
    return dice


def _of_the_set(dice: list[list[DieSighting]]) -> list[list[DieSighting]]:
    """The places that are dice of the set (`of_the_set`, by their median side and sureness)."""
    sides = [_median_side(die) for die in dice]
    sure = [float(np.median([s.sure for s in die])) for die in dice]
    return [die for die, kept in zip(dice, of_the_set(sides, sure), strict=True) if kept]


def of_the_set(sides: Sequence[float], sure: Sequence[float]) -> list[bool]:
    """Which dice are of the set, by each one's side and how sure the reader is of it: not one
    whose side measures under `DICE.of_the_set` of the others' and which the reader is unsure
    of (`DICE.unsure_below`), a shadow or a reflection in the gap between dice that the detector
    boxes in frame after frame, or once in an opening display (`vision.enrol`)."""
    return [
        not (share < DICE.of_the_set and read < DICE.unsure_below)
        for share, read in zip(_shares_of_the_set(sides), sure, strict=True)
    ]


def _shares_of_the_set(sides: Sequence[float]) -> list[float]:
    """Each die's side as a share of the other dice's (their median); 1 for a die alone."""
    return [
        sides[k] / float(np.median([*sides[:k], *sides[k + 1 :]])) if len(sides) > 1 else 1.0
        for k in range(len(sides))
    ]


def _leaning(dice: list[list[DieSighting]]) -> list[int]:
    """The dice whose median flatness over their sightings is under `DICE.leaning_below`: under
    `DICE.lean_sure` outright, above it only where the die's box also departs from the set's
    by `DICE.lean_size_off` (two signs, as for a phantom die: an unsure read alone made false
    alerts)."""
    flats = [_median_flat(die) for die in dice]
    sides = [_median_side(die) for die in dice]
    return [
        k
        for k, (flat, share) in enumerate(zip(flats, _shares_of_the_set(sides), strict=True))
        if flat < DICE.lean_sure
        or (flat < DICE.leaning_below and abs(share - 1) >= DICE.lean_size_off)
    ]


def _median_side(die: list[DieSighting]) -> float:
    return float(np.median([s.side for s in die]))


def _median_flat(die: list[DieSighting]) -> float:
    return float(np.median([s.flat for s in die]))


def _flat_by_shape(sides: NDArray[np.float64]) -> float:
    """1 if a die's top face (its box's longer and shorter side) is square on the table, else 0:
    for exact boxes (the simulator's labels); the detector's die boxes are too rough for it
    (flat dice measured 0.78-0.99), so from pixels the flatness reader decides."""
    return float(sides[1] / max(sides[0], 1e-9) >= DICE.flat_aspect)


def _dice(values: list[int]) -> str:
    return " ".join(str(v) for v in values) if values else "unseen"
