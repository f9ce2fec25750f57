"""Reading the dice: pooled over the frames they lie still, read once they agree, each checked
for lying flat; the first position follows from them (`DiceSettings`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from vision.follow.base import ROUND, FollowerBase, K, Phase, Raised
from vision.table import TableConfig

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


DICE = DiceSettings()


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

    def _read_dice(self, t: float, dice: list[list[tuple[str, float]]], out: list[Raised]) -> None:
        """The pooled dice's values and flatness, their alerts, and the first position."""
        round_ = self.round
        assert round_ is not None
        votes = [Counter(label for label, _ in die) for die in dice]
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
    frames: list[list[tuple[str, NDArray[np.float64], float]]], *, still: bool = False
) -> list[list[tuple[str, float]]] | None:
    """The dice of a window of frames, left to right, each with its (label, flatness) sightings:
    a die is a place (within `DICE.die_place` mm) seen in at least `DICE.seen` of the frames, so a
    die the detector misses now and then still counts, and a one-frame phantom does not; a place
    within `DICE.die_apart` of a steadier one is that die again. None while a die still moves: its
    sightings spread, or the last frame shows one in a new place (unless the dice are known to
    lie `still`)."""
    places: list[list[tuple[str, NDArray[np.float64], float, int]]] = []
    for index, frame in enumerate(frames):
        for label, xy, flat in frame:
            near = [p for p in places if np.linalg.norm(xy - p[0][1]) <= DICE.die_place]
            if near:
                near[0].append((label, xy, flat, index))
            else:
                places.append([(label, xy, flat, index)])
    places.sort(key=lambda p: -len({s[3] for s in p}))  # the steadiest first
    kept: list[list[tuple[str, NDArray[np.float64], float, int]]] = []
    centres: list[NDArray[np.float64]] = []
    for place in places:
        centre = np.mean([s[1] for s in place], axis=0)
        if all(np.linalg.norm(centre - c) >= DICE.die_apart for c in centres):
            kept.append(place)
            centres.append(centre)
    dice = [p for p in kept if len({s[3] for s in p}) * DICE.seen >= len(frames)]
    stray = [p for p in kept if len({s[3] for s in p}) * DICE.seen < len(frames)]
    if not still and any(s[3] == len(frames) - 1 for p in stray for s in p):
        return None
    for die in dice:
        spread = np.ptp(np.array([s[1] for s in die]), axis=0)
        if not still and float(np.max(spread)) > DICE.die_still:
            return None
    dice.sort(key=lambda p: float(np.mean([s[1][0] for s in p])))
    return [[(s[0], s[2]) for s in die] for die in dice]


def _leaning(dice: list[list[tuple[str, float]]]) -> list[int]:
    """The dice whose median flatness over their sightings is under `DICE.leaning_below`."""
    return [k for k, die in enumerate(dice) if _median_flat(die) < DICE.leaning_below]


def _median_flat(die: list[tuple[str, float]]) -> float:
    return float(np.median([f for _, f in die]))


def _flat_by_shape(table: TableConfig, corners: NDArray[np.float64]) -> float:
    """1 if a die's top face is square on the table, else 0: for exact boxes (the simulator's
    labels); the detector's die boxes are too rough for it (flat dice measured 0.78-0.99), so
    from pixels the flatness reader decides."""
    top = table.to_table(corners)
    lengths = np.linalg.norm(np.roll(top, -1, axis=0) - top, axis=1)
    a, b = (lengths[0] + lengths[2]) / 2, (lengths[1] + lengths[3]) / 2
    return float(min(a, b) / max(a, b, 1e-9) >= DICE.flat_aspect)


def _dice(values: list[int]) -> str:
    return " ".join(str(v) for v in values) if values else "unseen"
