"""What every phase of the follower shares: the zones, the phases, the round in progress, how
long a sight must hold (`RoundSettings`), and how an alert is raised with its evidence."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from rules import Irregularity
from vision.follow.judge import Judge, clause, severity
from vision.follow.records import Alert, RoundRecord
from vision.table import Locate, TableConfig

if TYPE_CHECKING:
    from vision.follow.delivery import Breach, Track
    from vision.follow.dice import DieSighting
    from vision.follow.exposure import FaceTrack
    from vision.follow.hands import HandWatch
    from vision.follow.unboxed import Search

K = Irregularity
HAND_ZONES = ("bank", *(f"p{p}" for p in range(1, 9)))
PLAYER_ZONES = HAND_ZONES[1:]


@dataclass(frozen=True)
class RoundSettings:
    """How long a sight must hold before the follower believes it, and what a round's start
    looks like."""

    steady: int = 3
    """Frames a sighting must hold before it counts (0.3 s at 10 analysed frames a second)."""
    washing: int = 10
    """Tiles lying loose (in no zone) from which the table is being washed: a round's start, even
    where washed tiles spill into the players' boxes. Over 231 simulated rounds 14 or more lay loose
    in every frame of the wash, and at most 7 once hands were delivered; round 700141 was taken for
    one joined mid-delivery (its dice never read) when washed tiles lay in the bank's box."""


ROUND = RoundSettings()


class Phase(Enum):
    WAITING = "waiting"
    SHUFFLE = "shuffle"
    DICE = "dice"
    DELIVERY = "delivery"
    SETTING = "setting"
    EXPOSURE = "exposure"


DEALING = (Phase.DICE, Phase.DELIVERY)
"""The phases in which, once the dice are read, the tiles are dealt."""


@dataclass(frozen=True)
class Raised:
    """An alert or a round record, with the evidence crop an alert carries."""

    record: Alert | RoundRecord
    evidence: NDArray[np.uint8] | None = None
    zone: tuple[int, int, int, int] | None = None
    """The part of the frame the alert concerns (x0, y0, x1, y1): boxed on its evidence clip."""


@dataclass
class Streak:
    """Consecutive frames for which a condition held, and when it began."""

    needed: int
    count: int = 0
    since: float = 0.0

    def update(self, holds: bool, t: float) -> bool:
        if not holds:
            self.count = 0
            return False
        if self.count == 0:
            self.since = t
        self.count += 1
        return self.count >= self.needed


V = TypeVar("V")


class Steady(Generic[V]):
    """A value seen on the table, taken once the same one was seen `Streak.needed` frames
    running (the chung's box, a +4 button): one frame's glimpse changes nothing."""

    def __init__(self, needed: int, value: V) -> None:
        self.value = value
        self.candidate = value
        self.streak = Streak(needed)

    def see(self, seen: V, t: float) -> bool:
        """Whether `seen` is now taken, in place of another value."""
        if seen != self.candidate:
            self.candidate = seen
            self.streak.update(False, t)
        if self.streak.update(True, t) and seen != self.value:
            self.value = seen
            return True
        return False

    def lose(self, t: float) -> None:
        """Nothing to go by this frame: the run starts again."""
        self.streak.update(False, t)

    def reset(self, value: V) -> None:
        self.value = self.candidate = value


def _nearest_first(candidates: Iterable[tuple[float | bool, ...]]) -> dict[int, int]:
    """One-to-one matching of new sightings to old tracks, closest pairs first: candidates
    (any order keys, such as a rank before the distance, then sighting, track) in, sighting ->
    track out."""
    matched: dict[int, int] = {}
    taken: set[int] = set()
    for *_, i, j in sorted(candidates):
        if i not in matched and j not in taken:
            matched[i] = j
            taken.add(j)
    return matched


@dataclass
class Round:
    """What is known so far about the round in progress."""

    index: int
    started_s: float
    complete: bool
    phase: Phase
    phases: dict[str, float] = field(default_factory=dict)
    dice: list[int] = field(default_factory=list)
    dice_flat: bool = True
    dice_agreement: float = 1.0
    """The least share of a die's sightings that read its value: how sure the dice reading is."""
    pooled: list[list[DieSighting]] = field(default_factory=list)
    """The dice lying still, each with its sightings, until they are read."""
    still_from: int = 0
    """Index in `dice_frames` of the first frame the dice were seen lying still."""
    dice_since: float = 0.0
    watch_dice: bool = True
    dice_frames: list[list[DieSighting]] = field(default_factory=list)
    required_first: int | None = None
    first_seen: int | None = None
    served: dict[int, float] = field(default_factory=dict)  # position -> arrival time
    places: list[NDArray[np.float64]] = field(default_factory=list)
    """Where each of the eight stacks stood when all were first seen, along the row (mm)."""
    ahead: dict[int, float] = field(default_factory=dict)
    """Stack -> how far (mm) it stands ahead of its place, pushed towards the players for the
    cut's set-up (MBS App. D), as last seen before the delivery began."""
    set_up: frozenset[int] | None = None
    """The stacks pushed for the set-up as the delivery began (`_read_set_up`); None until
    then or where none was."""
    in_flight: list[tuple[float, NDArray[np.float64], float]] = field(default_factory=list)
    """(time, place, the detector's confidence) of each face-down tile seen in no zone since
    the stacks stood: blocks on their way to the positions."""
    flying: list[float] = field(default_factory=list)
    """The frames in which a block was seen in flight (`RoundFollower._note_flight`)."""
    landed: dict[int, list[NDArray[np.float64]]] = field(default_factory=dict)
    """Position -> where the tiles of its block lay as it was seen to arrive."""
    traced: int = 0
    """Groups whose blocks have been traced back to the stacks."""
    standing: dict[int, list[tuple[float, float]]] = field(default_factory=dict)
    """Stack -> (time, the detector's confidence) of each frame it was seen standing in."""
    lengths: dict[int, list[float]] = field(default_factory=dict)
    """Stack -> its box's longer side (mm) in each frame it was seen still before the
    delivery: how long the detector boxes that stack (`CUT.longer_than_itself`)."""
    empty_since: dict[int, tuple[float, int]] = field(default_factory=dict)
    """Stack -> when its place was first seen empty since it last stood, and in how many frames."""
    gone: dict[int, tuple[float, float]] = field(default_factory=dict)
    """Stack -> when it went, once its place has been seen empty in `CUT.empty_frames` frames
    (`CUT.end_frames` at the row's open end), and how much sooner than a cut expects that must
    be to break it (`CUT.gone_before`, `CUT.end_gone_before`)."""
    live: list[int] = field(default_factory=list)
    """The permitted cut views (`Judge.views`) the delivery still fits."""
    reference: int | None = None
    """Once no permitted cut fits: the view that fitted longest, which the alerts cite."""
    held: dict[int, Breach] = field(default_factory=dict)
    """Position -> a lone stack gone one group early under `reference`, held until the set is
    counted (`DeliveryPhase._breached`)."""
    cut_breached: set[int] = field(default_factory=set)
    """The boxes whose tiles broke the cut: the round's one `wrong-cut-order` alert names the
    first, its record every one."""
    watches: dict[str, HandWatch] = field(default_factory=dict)
    raised: set[tuple[str, int | None]] = field(default_factory=set)
    alerts: list[Alert] = field(default_factory=list)
    faces_seen: Counter[str] = field(default_factory=Counter)
    tile_sizes: list[tuple[float, float]] = field(default_factory=list)
    """Length and width (mm) of every tile box in the hands, face up or down, frame by frame
    since the exposure began: what this table's own set measures (`HandsPhase._judge_size`)."""
    short_hands: dict[str, int] = field(default_factory=dict)
    off_stacks: int = 0
    """The most face-down stacks seen in the box out of play's zone, `ROUND.steady` frames
    running, once more than a block's two were raised as a fifth tile there
    (`DeliveryPhase._count_off_box`); else 0."""
    off_held: int = 0
    """The same count before it is raised: held until the set is counted where the detector was
    unsure of the stack beyond the block (`DeliveryPhase._settle_off_box`)."""
    off_held_since: float = 0.0
    """When that count was first held."""
    off_extra_sure: list[float] = field(default_factory=list)
    """The detector's confidence in the stack beyond the block there, each frame it showed."""
    off_streak: Streak = field(default_factory=lambda: Streak(ROUND.steady))
    searches: dict[str, Search] = field(default_factory=dict)
    """Zone -> the search for an object no model boxed beside its short hand (`unboxed`)."""
    closed_checks: bool = False

    @property
    def tile_size(self) -> tuple[float, float]:
        """What this table's set measures (mm): the median length and width of `tile_sizes`."""
        length, width = np.median(np.asarray(self.tile_sizes), axis=0)
        return float(length), float(width)

    @property
    def stack_length(self) -> float | None:
        """How long the stacks' tiles were boxed before the delivery (mm; the median of
        `lengths`); None before any stack was seen."""
        boxed = [length for lengths in self.lengths.values() for length in lengths]
        return float(np.median(boxed)) if boxed else None

    @property
    def columns(self) -> list[float]:
        """The stacks' places along the row (mm)."""
        return [float(p[0]) for p in self.places]

    @property
    def pitch(self) -> float:
        """How far apart the stacks stand along the row (mm)."""
        return float(np.median(np.diff(self.columns)))

    @property
    def row(self) -> float:
        """Where the stacks' row lies across the table (mm)."""
        return float(np.median([p[1] for p in self.places]))


class FollowerBase:
    """The state the phases share (set up by `RoundFollower`) and how they raise alerts."""

    table: TableConfig
    run: str
    locate: Locate
    judge: Judge
    bank: str | None
    """Who banks this round, as announced or configured (None: not known)."""
    adjust: Steady[int]
    """The +4 or -4 a button shows for this round (NZ 9.6), else 0 (`.value`)."""
    off_box: int | None
    """The box an "Off" button marks out of play (NZ 12.10, MBS 5.6.1) for the round in
    progress, as seen before its delivery began; else None."""
    round: Round | None
    image: NDArray[np.uint8] | None
    plaques: NDArray[np.float64]
    """The markers' boxes (N x 4 x 2, image pixels) at the last looks that found any
    (`follower.PLAQUE_LOOKS`)."""
    stacks_before: deque[list[NDArray[np.float64]]]
    faces: list[FaceTrack]
    carried: list[Track]
    to_dice: Streak
    arrivals: dict[str, Streak]
    lone_arrivals: dict[str, Streak]

    def _alert(
        self,
        out: list[Raised],
        kind: K,
        position: int | None,
        expected: str,
        observed: str,
        since: float,
        t: float,
        confidence: float,
        zone: str,
        *,
        summary: str,
        rule: str | None = None,
        whole_frame: bool = False,
    ) -> None:
        round_ = self.round
        assert round_ is not None
        key = (kind.value, position)
        if key in round_.raised:
            return
        round_.raised.add(key)
        alert = Alert(
            kind=kind.value,
            severity=severity(kind),
            table_id=self.table.table_id,
            round_id=self._round_id(),
            position=position,
            rules=self.table.rules,
            clause=rule or clause(kind, self.table.rules),
            summary=summary,
            expected=expected,
            observed=observed,
            confidence=round(float(np.clip(confidence, 0, 1)), 3),
            evidence_time_s=round(since, 3),
            raised_time_s=round(t, 3),
        )
        round_.alerts.append(alert)
        box = tuple(int(v) for v in self.locate.image_box(zone))
        out.append(Raised(alert, self._evidence(zone, whole_frame), box))  # type: ignore[arg-type]

    def _off_zone(self) -> str | None:
        """The zone of the box out of play, if any."""
        return None if self.off_box is None else f"p{self.off_box}"

    def _evidence(self, zone: str, whole_frame: bool) -> NDArray[np.uint8] | None:
        if self.image is None:
            return None
        if whole_frame:
            return self.image.copy()
        x1, y1, x2, y2 = self.locate.image_box(zone)
        return self.image[y1:y2, x1:x2].copy()

    def _round_id(self) -> str:
        assert self.round is not None
        return f"{self.table.table_id}:{self.run}:{self.round.index}"
