"""Stage: follow rounds on one table from located detections, frame by frame.

`RoundFollower.follow(t, detections, image)` takes each analysed frame and returns what it
raised: alerts as soon as their evidence is steady (a few frames), and the round's record when
the table clears. The phases are inferred from what lies where, never from a clock, so missed
frames, a round abandoned midway and a camera that starts mid-round are all handled:

    waiting -> shuffle -> dice -> delivery -> setting -> exposure -> (record) -> waiting

Every game judgement is asked of `vision.judge` (and through it `rules/`).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from itertools import takewhile
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from rules import Irregularity
from vision.detections import Detections
from vision.judge import Judge, SetHand, clause, is_face, severity
from vision.records import Alert, HandRecord, RoundRecord
from vision.table import Locate, TableConfig

K = Irregularity
HAND_ZONES = ("bank", *(f"p{p}" for p in range(1, 9)))
PLAYER_ZONES = HAND_ZONES[1:]
MIN_READ = 0.8
"""Faces read with less confidence than this are not counted as seen. Before the setting in 42
simulated rounds (`benchmarks/false_faces.py`, 5,502 frames) the reader read a face over no
face-up tile 10 times at 0.8 or more and 23 times at 0.6, and 238 against 239 of 246 boxes over
an exposed tile right: a lower bar would buy little and let more washed backs pass as faces."""
HELD_READ = 0.5
"""In a hand lying face up (two or more of its faces read at `MIN_READ`), a face read this
sure still counts: a tile at the hand's edge read at 0.5-0.8 frame after frame made a hand of
three and a false missing-tile alert (rounds 700023 and 700032). Out of an exposed hand the bar
stays `MIN_READ`: a back lying across the layout's line read as `2-2` at 0.58-0.82 for half a
second while stacking (round 700057)."""
WASHING = 10
"""Tiles lying loose (in no zone) from which the table is being washed: a round's start, even
where washed tiles spill into the players' boxes. Over 231 simulated rounds 14 or more lay loose
in every frame of the wash, and at most 7 once hands were delivered; round 700141 was taken for
one joined mid-delivery (its dice never read) when washed tiles lay in the bank's box."""
STEADY = 3
"""Frames a sighting must hold before it counts (0.3 s at 10 analysed frames a second)."""
CARRIED_STEP = 150.0
"""Millimetres a carried tile may move between analysed frames and still be the same tile."""
CARRIED_GAP = 3
"""Frames a carried tile may go unseen and still be followed where it was heading: two hands
carried past each other are each missed a frame or two where they cross (round 700120), and a
tile found again must keep the box it left."""
RESTING = 20.0
"""Millimetres a face-down tile may move between analysed frames and still be lying where it
is: a hand carried over a box on its way elsewhere (the bank's hand to the bank area) has not
landed there."""
STANDING = 0.5
"""How sure the detector must be of a back in the stacking area for it to be a stack standing
there (a stack left standing is the evidence of a wrong cut order). Stacks read 0.6-0.9; boxes
under 0.5 over the cloth where a stack was taken made false alerts in rounds 700109 and 700207
(over 231 rounds). The shadow beside the last stack on a dark cloth still reads up to 0.61
(round 700036); `SURE_STACK` asks more of a stack seen only once."""
LATE = 0.0
"""Seconds after a group arrives by which the stacks it emptied must be gone: a block leaves its
stack before it arrives, so a stack still standing when its group arrives was not taken."""
STILL_FRAMES = 3
"""Frames in a row a stack must lie in one place to stand: a block carried over the row paused
there in two (round 700109, seen again where its stack had been taken)."""
SURE_STACK = 0.75
"""How sure the detector must be of a stack seen standing since its group arrived for it to
have been left out of the cut; once is enough (a stack left standing may be dealt a frame
later: with the simulator's labels two of 15 catches saw it once). The detector's phantom in
the shadow where a stack was taken reads below, frame after frame: 0.52 in one frame (round
700036), 0.58-0.71 in six (700109, 700169, false alerts while less sure stacks counted in two
frames); the stacks left standing in the 13 caught of the 231 rounds of
`docs/accuracy-models.md` read 0.75-0.92 in every frame after."""
STACK_PLACE = 5.0
"""Millimetres from where a stack stood when all eight were seen within which one seen standing
later is that stack: nobody moves a stack without lifting it. The detector boxes the shadow
of the stack beside a lifted one, 7-10 mm from where the lifted one stood, at 0.75-0.81 (round
730067, a false alert); the stacks left standing that the 231 rounds of
`docs/accuracy-models.md` catch lie 0.1-3.5 mm from their places."""
TRACE_APART = 0.8
"""Stack pitches between where a block in flight points back to on the stacks' row and every
stack its group should come from, for the block to count as lifted from elsewhere: a box's
centre is a few millimetres off, and a carried tile's height shifts it a little more (the
stacks lie 26-29 mm apart)."""
OFF_STACK = 0.35
"""Stack pitches from every stack beyond which the line a sighting traces back to its group's
stacks is in doubt (`_own_line`): from pixels a tile's own line ends up to half a pitch off
its stack (clean round 710026: 0.17-0.45), so a doubted line needs another that ends on a
stack (`ON_STACK`) before it is dropped."""
ON_STACK = 0.1
"""Stack pitches within which another of a doubted sighting's lines ends on a stack: that one is
the tile's own (with labels within 0.05)."""
SHALLOW = 0.4
"""The sine of the angle to the stacks' row under which a block's line back to the row cannot
tell the stacks apart: there a tile seen a millimetre off its path moves where its line meets
the row by 1/sine of that, and a tile in flight is boxed a few millimetres off. Flights to the
boxes at the row's ends (1 and 8) meet it at 14-16 degrees (sine 0.23-0.27); from pixels their
lines ended one or two stacks off the right ones in rounds 700126, 730089 and 730100 (false
alerts). The lines that caught swapped blocks in the 231 rounds met the row at sine 0.53 or
more."""
FITS_OTHER = 0.1
"""Stack pitches, on average over a block's sightings, within which their lines end on another
group's stacks for the block to count as that group's (`_lifted_for_another`): with labels a
swapped block's fit 0.01-0.09, from pixels 0.07 (710145); the nearest a right block came, from
pixels, fit the interleaved other group's stacks 0.16 and its own 0.42 (clean round 710030)."""
FITS_BETTER = 0.3
"""Stack pitches by which, on average, a block's sightings must fit that other group's stacks
better than its own: swapped blocks with labels 0.31 (700255, one stack more) to 0.99."""
UNREAD = "face-up"
"""The face of a face-up tile the reader cannot tell."""
DOUBTED = "face-up?"
"""The face of a tile the reader takes for face up (`FACE_SURE`) without being sure of which
face: such a sighting carries on a face-up tile's track within `FACE_HELD` of it, after the
faces read; where it carries none it starts a guess (`FaceTrack.guessed`)."""
UNREAD_FACE = 0.5
"""How sure the detector must be that a tile lies face up for it to count as one while the
tiles are dealt, though the reader cannot tell its face: a tile exposed in a block in flight
lies half under the dealer's hand, so the reader doubts it (0.28-0.61 in round 710081) where
the detector does not (0.50-0.75). Followed through the flight, such a tile is alerted as it
lands (0.8 s after it showed) instead of four frames later (1.1 s). The washed backs the
reader takes for faces lie before the dice are read, when this does not apply."""
FACE_SURE = 0.5
"""How sure the reader must be that a tile lies face up, whatever its face, for its sighting to
carry on a face-up tile's track in any phase (`DOUBTED`). Washed tiles turned over under the
dealer's hand are read under `MIN_READ` for a frame or two while the reader still takes them
for faces (round 700080: `1-2` at 0.47-0.58, face up 0.95-0.98), so their tracks lapsed and
they were alerted 1.2 s after they showed. Over the 451 rounds from pixels, carrying tracks so
took 700080 to 0.5 s, 740051 1.4 to 0.9 s and 700212 2.3 to 1.1 s, with no new false alert at
any bar from 0.0 to 0.6; letting such sightings also start tracks raised one at 0.4 (700141),
and letting them carry a track as far as a read face may stray dragged one off its tile and
delayed an alert (740084). More likely face up than not, then."""
SURE_FACE = 0.99
"""How sure, on average, the reader must be that a tile lies face up for two frames to hold it
(`STEADY` frames otherwise) while tiles are washed or dealt from stacks still standing: once
they are gone, a hand turned up for the exposure is read for two frames before the phase turns.
Over the 451 rounds from pixels no back was followed as a face for two frames while tiles were
washed or dealt, however sure (`benchmarks/face_tracks.py`), and a tile exposed reached this bar
in two frames in 46 of the 56 rounds with one: most exposed tiles are alerted 0.1 s after they
show instead of 0.3 s, 700212 0.7 s instead of 1.1 s."""
GUESS_SURE = 0.9
"""How sure the reader must be that a doubted tile lies face up for its best guess to start a
track (`FaceTrack.guessed`): a face guessed alike in one place two frames running is as good as
read. Over the 451 rounds from pixels, guesses took two exposed tiles' alerts from 0.3 to 0.1 s
(730062: `1-6` at 0.51 and 0.67, face up 1.0) and raised no false alert at 0.8 or 0.9; at 0.5 a
back along a line guessed `2-2` at 0.63 (face up 0.55-0.74) was followed (700141)."""
SAME_PLACE = 18.0
"""Millimetres within which two face readings in a hand are one tile: tiles are 24-27 mm wide
and lie side by side or further apart, while a box straddling two neighbours lay 15-17 mm from
each (round 700150: a five-tile hand read as six in every other frame, never steady)."""
FACE_HELD = 40.0
"""Millimetres a followed face-up tile may stray from where it was heading between frames."""
FACE_GAP = 5
"""Analysed frames a followed face-up tile's track outlives its last reading: a tile carried
under the dealer's hand, or read under `MIN_READ` among washed tiles, for half a second.
Chosen over the 231 rounds of `docs/accuracy-models.md`: exposed tiles alerted over 1 s after
they showed in 5 rounds with no gap, 2 with 4 frames, 1 with 5 or 8, and no new false alert at
any. A back read where the track was ends it (the face there was a misread back): within
`FACE_HELD` that also ended a real tile's track among washed neighbours (700179), within
`SAME_PLACE` none."""
DICE_WINDOW = STEADY + 2
"""Frames pooled to read the dice: half a second at 10 analysed frames a second."""
DICE_CONFIRM = DICE_WINDOW + 3
"""Frames over which dice that do not read as three lying flat in the first window are read
again: a flat die read at 0.26-0.97 frame by frame, under 0.5 in three frames of one window
(round 700166); a phantom die boxed in two of the first five frames (round 700036)."""
DICE_SEEN = 3
"""A die must show in at least a third of the window's frames (a detector misses a small die
now and then; a phantom die does not hold its place)."""
DIE_PLACE = 7.0
"""Millimetres within which two sightings are the same die (dice are 13-19 mm across)."""
DIE_STILL = 6.0
"""Millimetres a die's sightings may spread over the window and still be lying still."""
DIE_APART = 12.0
"""Dice are 13-19 mm across, so two dice lie at least this far apart, centre to centre: a box
closer to a steadier die is that die seen twice, or a box straddling two touching dice."""


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


@dataclass
class Slot:
    """One exposed tile's place in a hand, with the labels read there over the frames."""

    xy: NDArray[np.float64]
    votes: Counter[str] = field(default_factory=Counter)
    seen: int = 0

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
    steady: Streak = field(default_factory=lambda: Streak(STEADY + 1))
    last_count: int = -1
    final: SetHand | None = None
    final_t: float = 0.0

    def update(self, xy: NDArray[np.float64], labels: list[str], scores: list[float]) -> None:
        for point, label, score in zip(xy, labels, scores, strict=True):
            near = [s for s in self.slots if np.linalg.norm(s.xy - point) < SAME_PLACE]
            slot = near[0] if near else Slot(point.copy())
            if not near:
                self.slots.append(slot)
            slot.votes[label] += score
            slot.seen += 1
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


@dataclass(frozen=True)
class FaceTrack:
    """A face-up tile followed from frame to frame: where it was last seen, how it moved, since
    when, in how many frames, how many frames ago, and how sure the reader was of it on
    average."""

    label: str
    xy: NDArray[np.float64]
    velocity: NDArray[np.float64]
    zone: str
    frames: int
    since: float
    sure: float
    unseen: int = 0
    """Analysed frames since it was last read (an arm passing over it, a reading under the bar)."""
    guessed: bool = False
    """Started by a face the reader doubts (`DOUBTED`), named by its best guess: it goes on only
    where that face is read, or guessed again in the same place, in the next frame."""

    def distance(self, xy: NDArray[np.float64]) -> float | None:
        """How far a sighting lies from this tile, if near enough to be it: carried on as it
        moved (the longer unseen, the further it may have strayed), or put down where it was
        last seen."""
        steps = self.unseen + 1
        carried = float(np.linalg.norm(xy - self.xy - self.velocity * steps))
        put_down = float(np.linalg.norm(xy - self.xy))
        reach = CARRIED_STEP if self.frames == 1 else FACE_HELD * steps
        near = [d for d, bar in ((carried, reach), (put_down, FACE_HELD)) if d <= bar]
        return min(near) if near else None


class Sighting(NamedTuple):
    """A face-up tile seen in one frame: its face (or `UNREAD`, `DOUBTED`), place, zone, how
    sure of it, and for a doubted face the reader's best guess."""

    label: str
    xy: NDArray[np.float64]
    zone: str
    score: float
    guess: str = ""


def _may_continue(sighting: Sighting, track: FaceTrack) -> bool:
    """A face read continues a track of its face, a doubted or unread one any track; a guess
    goes on only as the face it guessed, read or guessed again."""
    if track.guessed:
        return track.label in (sighting.label, sighting.guess)
    return sighting.label in (track.label, DOUBTED) or UNREAD in (sighting.label, track.label)


def _follow_faces(
    tracks: list[FaceTrack],
    faces: list[Sighting],
    backs: list[NDArray[np.float64]],
    t: float,
) -> list[FaceTrack]:
    """Each face continues the nearest track of the same face (`FaceTrack.distance`), and a
    face the reader doubts (`DOUBTED`) a track none continued, near where it was, before a
    guess (`FaceTrack.guessed`), which it continues only where it guesses the same face; a track
    followed for two frames or more and not continued is kept for `FACE_GAP` frames, unless a
    back now lies where it was. A tile turned up, lying or carried, keeps its track though an
    arm hides it or the reader doubts it for a few frames; a back misread as a face flickers
    from place to place and face to face, and is read as the back it is in between."""
    pairs = _nearest_first(
        (sighting.label == DOUBTED, track.guessed, distance, i, j)
        for i, sighting in enumerate(faces)
        for j, track in enumerate(tracks)
        if _may_continue(sighting, track)
        and (distance := track.distance(sighting.xy)) is not None
        and (sighting.label != DOUBTED or distance <= (SAME_PLACE if track.guessed else FACE_HELD))
    )
    followed = []
    for i, (label, xy, zone, score, guess) in enumerate(faces):
        was = tracks[pairs[i]] if i in pairs else None
        if was is not None:
            sure = (was.sure * was.frames + score) / (was.frames + 1)
            step = (xy - was.xy) / (was.unseen + 1)
            named = was.label if label in (UNREAD, DOUBTED) else label
            followed.append(FaceTrack(named, xy, step, zone, was.frames + 1, was.since, sure))
        elif label != DOUBTED:
            followed.append(FaceTrack(label, xy, np.zeros(2), zone, 1, t, score))
        elif guess:
            followed.append(FaceTrack(guess, xy, np.zeros(2), zone, 1, t, score, guessed=True))
    continued = set(pairs.values())
    followed += [
        replace(track, unseen=track.unseen + 1)
        for j, track in enumerate(tracks)
        if j not in continued
        and track.frames > 1
        and track.unseen < FACE_GAP
        and not any(np.linalg.norm(xy - track.xy) <= SAME_PLACE for xy in backs)
    ]
    return followed


@dataclass(frozen=True)
class Track:
    """A face-down tile followed from frame to frame after delivery."""

    xy: NDArray[np.float64]
    zone: str
    origin: str
    """The zone it last lay still in (for a tile in transit, the one it left)."""
    velocity: NDArray[np.float64]
    unseen: int = 0
    """Frames since it was last seen (`CARRIED_GAP`)."""

    @property
    def reach(self) -> float:
        """How far from where it should be a tile found is this one. A tile lying still when
        last seen lies there still under the hand that hides it: a tile carried over it is
        another (round 700164: hands carried across box 6 hid its tiles and took their place)."""
        if self.unseen and float(np.linalg.norm(self.velocity)) <= RESTING:
            return RESTING
        return CARRIED_STEP


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
    pooled: list[list[tuple[str, float]]] = field(default_factory=list)
    """The dice lying still, each with its (label, flatness) sightings, until they are read."""
    still_from: int = 0
    """Index in `dice_frames` of the first frame the dice were seen lying still."""
    dice_since: float = 0.0
    watch_dice: bool = True
    dice_frames: list[list[tuple[str, NDArray[np.float64], float]]] = field(default_factory=list)
    required_first: int | None = None
    first_seen: int | None = None
    served: dict[int, float] = field(default_factory=dict)  # position -> arrival time
    places: list[NDArray[np.float64]] = field(default_factory=list)
    """Where each of the eight stacks stood when all were first seen, along the row (mm)."""
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
    watches: dict[str, HandWatch] = field(default_factory=dict)
    raised: set[tuple[str, int | None]] = field(default_factory=set)
    alerts: list[Alert] = field(default_factory=list)
    faces_seen: Counter[str] = field(default_factory=Counter)
    short_hands: dict[str, int] = field(default_factory=dict)
    closed_checks: bool = False

    @property
    def columns(self) -> list[float]:
        """The stacks' places along the row (mm)."""
        return [float(p[0]) for p in self.places]

    @property
    def row(self) -> float:
        """Where the stacks' row lies across the table (mm)."""
        return float(np.median([p[1] for p in self.places]))


class RoundFollower:
    """Follows rounds at one table; one instance per camera."""

    def __init__(
        self,
        table: TableConfig,
        run: str = "live",
        cut: str | None = None,
        cut_options: Mapping[str, str] | None = None,
    ) -> None:
        self.table = table
        self.run = run
        self.locate = Locate(table)
        cut_id = cut or table.cut
        options = dict(cut_options if cut_options is not None else table.cut_options)
        self.judge = Judge(table.rules, table.banker, cut_id, options)
        self.cut = cut_id
        self.cut_options = options
        self.round: Round | None = None
        self.rounds = 0
        self.image: NDArray[np.uint8] | None = None
        self.stacks_before: deque[list[NDArray[np.float64]]] = deque(maxlen=STILL_FRAMES - 1)
        self.faces: list[FaceTrack] = []
        self.start = Streak(STEADY)
        self.midway = Streak(STEADY)
        self.idle = Streak(30)
        self.to_dice = Streak(STEADY)
        self.to_setting = Streak(10)
        self.to_exposure = Streak(2)
        self.to_close = Streak(5)
        self.arrivals = {zone: Streak(2) for zone in PLAYER_ZONES}
        self.carried: list[Track] = []

    # -- per frame -----------------------------------------------------------------------------

    def follow(
        self, t: float, detections: Detections, image: NDArray[np.uint8] | None = None
    ) -> list[Raised]:
        """Take one analysed frame (detections in image pixels); return what it raised."""
        self.image = image
        seen = self.locate.locate(detections)
        out: list[Raised] = []
        view = View.of(seen, self.table)
        previous = list(self.stacks_before)
        self.stacks_before.append(view.stack_xy)
        current = self.round
        dealing = current is not None and bool(current.dice) and current.phase in DEALING
        sightings = view.faces_xy + view.unread_while(dealing)
        self.faces = _follow_faces(self.faces, sightings, [xy for xy, _, _ in view.backs_xy], t)
        if current is None:
            self._maybe_start(t, view)
            current = self.round
            if current is None:
                return out
        if self.idle.update(view.tiles == 0 and view.dice == 0, t):
            return self._close(t, out, abandoned=current.phase != Phase.EXPOSURE)
        phase = current.phase
        if phase == Phase.SHUFFLE or (phase == Phase.DICE and not current.dice):
            washing = phase == Phase.SHUFFLE and not view.dice
            self._watch_exposed(t, K.EXPOSED_TILE_STACKING, out, dice_area=washing)
        elif phase in (Phase.DICE, Phase.DELIVERY, Phase.SETTING):  # dice read: dealing is on
            from_stacks = phase != Phase.SETTING and bool(view.backs.get("stack"))
            self._watch_exposed(t, K.EXPOSED_TILE_DEALING, out, quick=from_stacks)
        if phase in (Phase.SHUFFLE, Phase.DICE, Phase.DELIVERY) and current.watch_dice:
            self._watch_dice(t, view, out)
        if phase == Phase.SHUFFLE and self.to_dice.update(view.dice >= 1, t):
            self._enter(Phase.DICE, self.to_dice.since)
        if phase == Phase.DICE:
            self._note_columns(view)
            if any(view.backs.get(z, 0) for z in PLAYER_ZONES):
                self._enter(Phase.DELIVERY, t)
                phase = Phase.DELIVERY
        if phase in (Phase.DICE, Phase.DELIVERY) and current.places:
            self._note_flight(t, view)
            self._note_standing(t, view, previous)
        if phase == Phase.DELIVERY:
            self._watch_delivery(t, view, out)
            if self.to_setting.update(view.backs.get("stack", 0) == 0 and view.loose == 0, t):
                self._enter(Phase.SETTING, self.to_setting.since)
        if phase in (Phase.DELIVERY, Phase.SETTING):
            self._watch_carried(t, view, out)
        # A hand turned face up ends the setting, and the delivery too where a stray box kept
        # the follower from seeing it end (a tile exposed while dealing is one face, not two).
        dealt = phase == Phase.SETTING or (phase == Phase.DELIVERY and not view.backs.get("stack"))
        if dealt and self.to_exposure.update(
            max((view.faces.get(z, 0) for z in HAND_ZONES), default=0) >= 2, t
        ):
            self._enter(Phase.EXPOSURE, self.to_exposure.since)
            phase = Phase.EXPOSURE
        if phase == Phase.EXPOSURE:
            self._watch_hands(t, seen, out)
            if self.to_close.update(view.hand_tiles == 0, t):
                return self._close(t, out, abandoned=False)
        return out

    def finish(self, t: float) -> list[Raised]:
        """The video ended: close the round in progress (abandoned unless it was exposed)."""
        if self.round is None:
            return []
        return self._close(t, [], abandoned=self.round.phase != Phase.EXPOSURE)

    # -- phases --------------------------------------------------------------------------------

    def _maybe_start(self, t: float, view: View) -> None:
        washing = view.loose >= WASHING
        if self.start.update(
            view.tiles >= 12 and (view.hand_tiles <= 2 or washing) and view.dice == 0, t
        ):
            self._open(self.start.since, complete=True, phase=Phase.SHUFFLE)
            return
        if not self.midway.update((view.dice >= 1 or view.hand_tiles >= 4) and not washing, t):
            return
        hand_faces = sum(view.faces.get(z, 0) for z in HAND_ZONES)
        if hand_faces >= 2:
            phase = Phase.EXPOSURE
        elif view.hand_tiles and view.backs.get("stack", 0) == 0:
            phase = Phase.SETTING
        elif view.hand_tiles:
            phase = Phase.DELIVERY
        else:
            phase = Phase.DICE
        self._open(self.midway.since, complete=False, phase=phase)
        round_ = self.round
        assert round_ is not None
        if phase != Phase.DICE:  # its dice and deliveries were missed: nothing to check them by
            round_.watch_dice = False
            round_.served = {int(z[1:]): t for z in PLAYER_ZONES if view.backs.get(z, 0)}

    def _open(self, t: float, *, complete: bool, phase: Phase) -> None:
        self.rounds += 1
        self.round = Round(self.rounds, t, complete, phase, {phase.value: t})
        for streak in (
            self.idle,
            self.to_dice,
            self.to_setting,
            self.to_exposure,
            self.to_close,
            *self.arrivals.values(),
        ):
            streak.count = 0

    def _enter(self, phase: Phase, t: float) -> None:
        assert self.round is not None
        self.round.phase = phase
        self.round.phases.setdefault(phase.value, t)

    # -- checks --------------------------------------------------------------------------------

    def _watch_exposed(
        self, t: float, kind: K, out: list[Raised], dice_area: bool = False, quick: bool = True
    ) -> None:
        """A face-up tile followed for a few frames while tiles should all be face down, as
        sure as the reader was of its face; with `quick`, for two frames where the reader is
        sure of it (`SURE_FACE`). In the dice area only with `dice_area` (while the tiles are
        washed and no die is out): two dice side by side look like a tile's face, while a
        washed tile lies there as anywhere (round 700278: followed there for 2.3 s)."""
        held = sorted(
            (
                f
                for f in self.faces
                if (f.frames > STEADY or (quick and f.frames > 1 and f.sure >= SURE_FACE))
                and not f.unseen
                and (dice_area or f.zone != "dice")
            ),
            key=lambda f: f.since,
        )
        if held:
            zone = held[0].zone
            where = {"": "the table", "dice": "the dice area"}.get(zone, zone)
            self._alert(
                out,
                kind,
                None,
                "every tile face down",
                f"a face-up tile in {where}",
                held[0].since,
                t,
                held[0].sure,
                zone or "stack",
            )

    def _watch_dice(self, t: float, view: View, out: list[Raised]) -> None:
        """The dice once they lie still for `DICE_WINDOW` frames. Three dice lying flat are
        read then; anything else is read again over the `DICE_CONFIRM` frames from there
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
            if len(frames) < DICE_WINDOW:
                return
            dice = _pool_dice(frames[-DICE_WINDOW:])
            if dice is None:  # still rolling
                return
            round_.pooled = dice
            round_.still_from = len(frames) - DICE_WINDOW
            round_.dice_since = self.to_dice.since if round_.phase == Phase.DICE else t
        elif view.dice:
            round_.pooled = _pool_dice(frames[round_.still_from :], still=True) or round_.pooled
        usual = len(round_.pooled) == 3 and not _leaning(round_.pooled)
        if not usual and view.dice and len(frames) - round_.still_from < DICE_CONFIRM:
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
            )
        order = self.judge.order(round_.dice)
        round_.required_first = order.first if order else None

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
            # A block shows two tiles (the others lie under them); one alone is not a block. One
            # of the two may lie face up (a tile exposed while dealing is still delivered).
            shown = view.backs.get(zone, 0) + view.faces.get(zone, 0)
            if streak.update(shown >= 2, t) and position not in round_.served:
                round_.served[position] = streak.since
                round_.landed[position] = [xy for xy, z, _ in view.backs_xy if z == zone]
                if round_.first_seen is None and len(round_.served) == 1:
                    self._first_position(position, streak.since, t, out)
        if round_.places and round_.first_seen is not None:
            self._check_stacks(t, out)
            self._trace_blocks(t, out)

    def _watch_carried(self, t: float, view: View, out: list[Raised]) -> None:
        """Tiles carried from one player's box into another's after delivery. Face-down tiles
        are followed from frame to frame (nearest predicted position, one to one, so two hands
        passing each other keep apart); each remembers the zone it last lay still in, and one
        that comes to rest in another player's box than the served box it left raises the
        alert, as sure as the detector was of the tile where it came to rest. A tile that moves
        on is only passing over a box; the bank's hand going to the bank area is the dealer's
        job, not a swap."""
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
            if zone and (before is None or float(np.linalg.norm(velocity)) <= RESTING):
                if (
                    zone in PLAYER_ZONES
                    and origin in PLAYER_ZONES
                    and origin != zone
                    and int(origin[1:]) in round_.served
                ):
                    a = min(int(origin[1:]), int(zone[1:]))
                    self._alert(
                        out,
                        K.HANDS_SWAPPED,
                        a,
                        f"position {a}'s tiles stay at {a}",
                        f"tiles carried from position {origin[1:]} to {zone[1:]}",
                        t,
                        t,
                        sure,
                        zone,
                    )
                origin = zone
            current.append(Track(xy, zone, origin, velocity))
        continued = set(pairs.values())
        current += [
            replace(track, xy=track.xy + track.velocity, unseen=track.unseen + 1)
            for j, track in enumerate(previous)
            if j not in continued and track.unseen < CARRIED_GAP
        ]
        self.carried = current

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
            )

    def _note_flight(self, t: float, view: View) -> None:
        """Face-down tiles outside every zone: blocks on their way to the positions. A frame
        counts as one of a flight where such a tile lies where none lay in the last second: a
        tile lying still outside the zones is not a block flying."""
        round_ = self.round
        assert round_ is not None
        loose = [(t, xy, sure) for xy, zone, sure in view.backs_xy if not zone and sure >= STANDING]
        if _somewhere_new(round_.in_flight, loose):
            round_.flying.append(t)
        round_.in_flight += loose

    def _note_standing(
        self, t: float, view: View, previous: list[list[NDArray[np.float64]]]
    ) -> None:
        """Which stacks stand in this frame, from the dice on: the first block may fly before
        the follower sees a box served. Only tiles lying still for `STILL_FRAMES` count: a
        block carried over the stacks is not a stack; and only where a stack stood
        (`STACK_PLACE`): something boxed beside that place is not the stack."""
        round_ = self.round
        assert round_ is not None
        if len(previous) < STILL_FRAMES - 1:
            return

        def lay_still(p: NDArray[np.float64]) -> bool:
            return all(any(np.linalg.norm(p - q) < 6.0 for q in frame) for frame in previous)

        still = [(p, sure) for p, sure in view.stacks if lay_still(p)]
        for stack, place in enumerate(round_.places):
            sure = [c for p, c in still if np.linalg.norm(p - place) <= STACK_PLACE]
            if sure:
                round_.standing.setdefault(stack, []).append((t, max(sure)))

    def _check_stacks(self, t: float, out: list[Raised]) -> None:
        """A stack seen standing once the group that should have taken its last tiles had
        left with them (`_gone_by`): the groups left out of the cut's order. (Seeing a stack
        that should be gone cannot be an arm in the way; a stack unseen early can be, so that
        is not judged.) The alert is as sure as the detector was of the stack since then."""
        round_ = self.round
        assert round_ is not None
        arrivals = sorted(round_.served.values())
        for stack, group in self.judge.last_groups().items():
            gone = _gone_by(group, arrivals, round_.flying)
            if gone is None:
                continue
            sure = [c for seen, c in round_.standing.get(stack, []) if seen >= gone]
            if max(sure, default=0.0) < SURE_STACK:
                continue
            position = (round_.first_seen - 1 + group - 1) % 8 + 1  # type: ignore[operator]
            self._alert(
                out,
                K.WRONG_CUT_ORDER,
                position,
                f"stack {stack + 1} gone with group {group} to position {position}",
                f"stack {stack + 1} still standing",
                gone,
                t,
                float(np.mean(sure)),
                "stack",
            )

    def _trace_blocks(self, t: float, out: list[Raised]) -> None:
        """Each delivered block's flight traced back to the stacks' row: a block from stacks
        its group does not hold was cut out of order, even where those stacks still stand
        (their upper layers taken), which `_check_stacks` cannot see. Each sighting in the
        first half of the flight gets a line from each place its tiles landed (side by side:
        from the box's centre right groups traced up to 1.4 pitches off); `_lifted_elsewhere`
        weighs them one by one, `_lifted_for_another` together. As sure as the detector was
        of those tiles."""
        round_ = self.round
        assert round_ is not None
        arrivals = sorted(round_.served.values())
        columns, row = round_.columns, round_.row  # derived: once, not per sighting
        while round_.traced < len(arrivals):
            group = round_.traced = round_.traced + 1
            since = arrivals[group - 2] if group > 1 else -np.inf
            position = (round_.first_seen - 1 + group - 1) % 8 + 1  # type: ignore[operator]
            spots = round_.landed.get(position) or [self.locate.zones[f"p{position}"].mean(0)]
            stacks = self.judge.stacks_of(group)
            homes = []
            for seen, xy, sure in round_.in_flight:  # from the frame the block before landed
                if since <= seen < arrivals[group - 1]:
                    homes.append((seen, sure, [_home(xy, spot, row) for spot in spots]))
            others = [self.judge.stacks_of(g) for g in range(1, 9) if g != group]
            away = _lifted_elsewhere(homes, columns, stacks) or _lifted_for_another(
                homes, columns, stacks, others
            )
            if not away:
                continue
            origins = sorted({origin for _, _, origin in away})
            self._alert(
                out,
                K.WRONG_CUT_ORDER,
                position,
                f"group {group} to position {position} from stack "
                + " and ".join(str(s + 1) for s in sorted(stacks)),
                "its block lifted from stack " + " and ".join(str(s + 1) for s in origins),
                away[0][0],
                t,
                float(np.mean([sure for _, sure, _ in away])),
                "stack",
            )

    def _watch_hands(self, t: float, seen: Detections, out: list[Raised]) -> None:
        round_ = self.round
        assert round_ is not None
        scores = seen.label_scores
        for zone in HAND_ZONES:
            faces = [
                i
                for i, z in enumerate(seen.zones)
                if z == zone and is_face(seen.labels[i]) and scores[i] >= HELD_READ
            ]
            if sum(scores[i] >= MIN_READ for i in faces) < 2:  # not a hand lying face up
                faces = [i for i in faces if scores[i] >= MIN_READ]
            rows = _one_per_place(faces, seen.table_xy, scores)
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
            )
            same = len(rows) == watch.last_count
            watch.last_count = len(rows)
            if watch.steady.update(same and len(rows) > 0, t):
                watch.final = watch.settle(len(rows))
                watch.final_t = watch.steady.since
                self._judge_hand(zone, watch, t, out)
        finals = [w for w in round_.watches.values() if w.final is not None]
        if len(finals) == 8 and not round_.closed_checks:
            self._judge_set(t, out)

    def _axis(self, zone: str) -> NDArray[np.float64]:
        polygon = self.locate.zones[zone]
        edge = polygon[1] - polygon[0]
        return np.asarray(edge / np.linalg.norm(edge), np.float64)

    def _position(self, zone: str) -> int:
        return self.table.banker if zone == "bank" else int(zone[1:])

    def _judge_hand(self, zone: str, watch: HandWatch, t: float, out: list[Raised]) -> None:
        round_ = self.round
        assert round_ is not None and watch.final is not None
        hand = watch.final
        position = self._position(zone)
        confidence = watch.agreement
        since = watch.final_t
        for face in hand.tiles:
            round_.faces_seen[face] += 1
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
                )
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
            )
        elif size < 4:
            round_.short_hands[zone] = size
        house_set = zone == "bank" or position in self.table.house_way_positions
        if house_set and hand.setting is not None:
            check = self.judge.house_way(hand.setting)
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
                    rule=f"{check.clause.ref}: {check.clause.summary}",
                )

    def _judge_set(self, t: float, out: list[Raised]) -> None:
        """Every hand is exposed: tiles missing from the set, and short hands not explained by
        them."""
        round_ = self.round
        assert round_ is not None
        round_.closed_checks = True
        total = sum(round_.faces_seen.values())
        report = self.judge.integrity(list(round_.faces_seen.elements()), whole_set=True)
        if total < 32:
            missing = ", ".join(f"{tile} x{n}" for tile, n in report.missing)
            self._alert(
                out,
                K.MISSING_TILE,
                None,
                "32 tiles",
                f"{total} tiles; missing {missing}",
                t,
                t,
                min(w.agreement for w in round_.watches.values() if w.final is not None),
                "stack",
                whole_frame=True,
            )
        short = sum(4 - n for n in round_.short_hands.values())
        if short > 32 - total:
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
                )

    # -- output --------------------------------------------------------------------------------

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
            expected=expected,
            observed=observed,
            confidence=round(float(np.clip(confidence, 0, 1)), 3),
            evidence_time_s=round(since, 3),
            raised_time_s=round(t, 3),
        )
        round_.alerts.append(alert)
        out.append(Raised(alert, self._evidence(zone, whole_frame)))

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

    def _close(self, t: float, out: list[Raised], *, abandoned: bool) -> list[Raised]:
        round_ = self.round
        assert round_ is not None
        if not abandoned and not round_.closed_checks:
            self._judge_set(t, out)
        hands: dict[str, HandRecord] = {}
        settings = {}
        for zone, watch in round_.watches.items():
            if watch.final is None:
                continue
            hand = watch.final
            position = self._position(zone)
            record: dict[str, object] = {"tiles": list(hand.tiles)}
            if hand.setting is not None:
                settings[position] = hand.setting
                record["high"] = [str(x) for x in hand.setting.high.tiles]
                record["low"] = [str(x) for x in hand.setting.low.tiles]
                try:
                    check = self.judge.house_way(hand.setting)
                    record["house_way"] = check.is_house_way
                    record["house_way_setting"] = str(check.expected)
                except ValueError:  # two of a face a set holds once
                    pass
            else:
                record["high"], record["low"] = list(hand.groups[0]), list(hand.groups[1])
            hands[str(position)] = HandRecord.model_validate(record)
        outcomes = {}
        bank = settings.get(self.table.banker)
        if bank is not None:
            for position, setting in settings.items():
                if position != self.table.banker:
                    try:
                        outcomes[str(position)] = self.judge.outcome(setting, bank)
                    except ValueError:
                        continue
        record_ = RoundRecord(
            round_id=self._round_id(),
            table_id=self.table.table_id,
            rules=self.table.rules,
            banker=self.table.banker,
            started_s=round(round_.started_s, 3),
            ended_s=None if abandoned else round(t, 3),
            complete=round_.complete and not abandoned,
            phases={k: round(v, 3) for k, v in round_.phases.items()},
            dice=round_.dice,
            dice_flat=round_.dice_flat,
            cut=self.cut,
            cut_options=self.cut_options,
            required_first_position=round_.required_first,
            first_position=round_.first_seen,
            hands=hands,
            outcomes=outcomes,
            alerts=[a.id for a in round_.alerts],
        )
        out.append(Raised(record_))
        self.round = None
        self.start.count = self.midway.count = 0
        return out


@dataclass(frozen=True)
class View:
    """One frame, counted by zone: what the phase logic looks at."""

    tiles: int
    dice: int
    loose: int
    hand_tiles: int
    backs: Mapping[str, int]
    faces: Mapping[str, int]
    stacks: list[tuple[NDArray[np.float64], float]]
    """Each stack standing: its place and the detector's confidence in it."""
    backs_xy: list[tuple[NDArray[np.float64], str, float]]
    """Each face-down tile's place, zone and the detector's confidence in it."""
    dice_read: list[tuple[str, NDArray[np.float64], float]]
    faces_xy: list[Sighting]
    unread_xy: list[tuple[str, NDArray[np.float64], str, float, float]]
    """Tiles the detector boxes face up whose face the reader cannot tell (under `MIN_READ`),
    each with the reader's best guess of its face, its place and zone, the detector's confidence
    and the reader's that it lies face up."""

    def unread_while(self, dealing: bool) -> list[Sighting]:
        """The unread tiles as sightings: while dealing, those the detector is sure lie face up
        (`UNREAD`, `UNREAD_FACE`); in any phase, those the reader takes for face up
        (`DOUBTED`, `FACE_SURE`)."""
        sightings = []
        for guess, xy, zone, detector, reader in self.unread_xy:
            if dealing and detector >= UNREAD_FACE:
                sightings.append(Sighting(UNREAD, xy, zone, detector))
            elif reader >= FACE_SURE:
                named = guess if reader >= GUESS_SURE else ""
                sightings.append(Sighting(DOUBTED, xy, zone, reader, named))
        return sightings

    @property
    def stack_xy(self) -> list[NDArray[np.float64]]:
        return [p for p, _ in self.stacks]

    @classmethod
    def of(cls, seen: Detections, table: TableConfig) -> View:
        scores = seen.label_scores
        backs: Counter[str] = Counter()
        faces: Counter[str] = Counter()
        stacks, dice_read, backs_xy, faces_xy, unread_xy = [], [], [], [], []
        tiles = dice = loose = hand_tiles = 0
        for i, label in enumerate(seen.labels):
            zone = seen.zones[i]
            if label.startswith("die-"):
                if zone == "dice":
                    dice += 1
                    flat = (
                        float(seen.flat[i])
                        if len(seen.flat)
                        else _flat_by_shape(table, seen.corners[i])
                    )
                    dice_read.append((label, seen.table_xy[i], flat))
                continue
            tiles += 1
            loose += zone == ""
            hand_tiles += zone in HAND_ZONES
            if label == "back":
                backs[zone] += 1
                backs_xy.append((seen.table_xy[i], zone, float(seen.confidence[i])))
                if zone == "stack" and seen.confidence[i] >= STANDING:
                    stacks.append((seen.table_xy[i], float(seen.confidence[i])))
            elif scores[i] >= MIN_READ:
                faces[zone] += 1
                faces_xy.append(Sighting(label, seen.table_xy[i], zone, float(scores[i])))
            else:
                up = float(seen.face_up[i]) if len(seen.face_up) else 0.0
                unread_xy.append((label, seen.table_xy[i], zone, float(seen.confidence[i]), up))
        return cls(
            tiles,
            dice,
            loose,
            hand_tiles,
            backs,
            faces,
            stacks,
            backs_xy,
            dice_read,
            faces_xy,
            unread_xy,
        )


def _lifted_elsewhere(
    homes: list[tuple[float, float, list[float]]], columns: list[float], stacks: set[int]
) -> list[tuple[float, float, int]]:
    """The sightings of one group's block in flight that show it lifted from stacks the group
    does not hold, each as (time, the detector's confidence, the stack it points to); none
    unless they are most of the sightings that point at the stacks' row at all, and agree.
    Each sighting's `homes` are where it traces back to from each place the block landed;
    the likeliest is the one nearest the group's stacks. A block comes from as many stacks
    as its group holds (two far apart in some cuts), so the sightings must point within a
    stack of that many places: a stray tile carried elsewhere meanwhile points anywhere
    (round 700191 from pixels: a flight to box 1, nearly along the row, traced 2-6 pitches
    from its stack beside one that traced right, a false alert). A line that ends beyond the
    row's end, nearest a stack of the group, points at no other stack (700104 from pixels: a
    line 0.87 pitch past the group's end stack counted as lifted from that stack, a false
    alert)."""
    pitch = float(np.median(np.diff(columns)))
    points, away = 0, []
    for seen, sure, traced in homes:
        lines = _on_row(traced, columns, pitch)
        if not lines:
            continue
        points += 1
        x = _own_line(lines, columns, stacks, pitch)
        origin = int(np.argmin([abs(x - c) for c in columns]))
        if origin not in stacks and _apart(x, columns, stacks) >= TRACE_APART * pitch:
            away.append((seen, sure, origin))
    most = [origin for origin, _ in Counter(o for _, _, o in away).most_common(len(stacks))]
    agreed = [a for a in away if any(abs(a[2] - o) <= 1 for o in most)]
    if len(agreed) < 2 or 2 * len(agreed) <= points:
        return []
    return agreed


def _own_line(lines: list[float], columns: list[float], stacks: set[int], pitch: float) -> float:
    """Which of a sighting's lines (one from each place its block landed) it flew along: the
    one nearest its group's stacks, unless that one ends well off every stack (`OFF_STACK`)
    and another ends on one (`ON_STACK`). A tile is lifted from a stack, so its own line ends
    on one; a line from the other landing place ends anywhere. In `ghan-dong-ping-say` a
    group's four tiles come from four stacks two apart and land in two places, so a tile's line
    from the wrong place often ends near a right stack by chance (710145: a block from stacks
    1, 3, 5, 7 for 2, 4, 6, 8 went unalerted, though its tiles' own lines ended within 0.05
    pitch of their stacks). From pixels both bars matter: doubting lines 0.25 pitch off made
    false alerts in two of 165 rounds (710011, 710097)."""

    def off_stack(x: float) -> float:
        return _apart(x, columns, range(len(columns))) / pitch

    nearest = min(lines, key=lambda x: _apart(x, columns, stacks))
    on_a_stack = min(lines, key=off_stack)
    if off_stack(nearest) > OFF_STACK and off_stack(on_a_stack) <= ON_STACK:
        return on_a_stack
    return nearest


def _lifted_for_another(
    homes: list[tuple[float, float, list[float]]],
    columns: list[float],
    stacks: set[int],
    others: list[set[int]],
) -> list[tuple[float, float, int]]:
    """The sightings of one group's block in flight, where together they fit another group's
    stacks (`FITS_OTHER`) much better than its own (`FITS_BETTER`): a block swapped with
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
        if (lines := _on_row(traced, columns, pitch))
    ]
    if len(sightings) < 2:
        return []

    def off(lines: list[float], chosen: Iterable[int]) -> float:
        return min(1.0, min(_apart(x, columns, chosen) for x in lines) / pitch)

    own = np.mean([off(lines, stacks) for _, _, lines in sightings])
    for other in others:
        fit = np.mean([off(lines, other) for _, _, lines in sightings])
        if fit <= FITS_OTHER and own - fit >= FITS_BETTER:
            return [
                (seen, sure, min(other, key=lambda s: min(abs(x - columns[s]) for x in lines)))
                for seen, sure, lines in sightings
            ]
    return []


def _on_row(traced: list[float], columns: list[float], pitch: float) -> list[float]:
    """The lines of a sighting that end on the stacks' row, a pitch either side of its ends
    allowed; the others (infinite: not in the first half of a flight) point nowhere."""
    return [x for x in traced if columns[0] - pitch <= x <= columns[-1] + pitch]


def _apart(x: float, columns: list[float], chosen: Iterable[int]) -> float:
    """How far a line ending at `x` on the stacks' row ends from the nearest chosen stack."""
    return min(abs(x - columns[s]) for s in chosen)


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
    arrived = arrivals[group - 1] + LATE if group <= len(arrivals) else np.inf
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
    return any(all(np.linalg.norm(xy - q) > RESTING for q in recent) for _, xy, _ in now)


def _home(xy: NDArray[np.float64], spot: NDArray[np.float64], row: float) -> float:
    """Where on the stacks' row (its x) a tile seen at `xy` in flight to `spot` was lifted:
    the line from the spot through the sighting, back to the row. Infinite for a sighting
    that is not in the first half of a flight from the row, or whose line meets the row too
    flat to tell its stacks apart (`SHALLOW`). A tile beyond the row, on the dealer's side, is
    not on its way to a box (740024, 740056: tiles moved there while a block flew made false
    alerts)."""
    dy = xy[1] - spot[1]
    if abs(dy) < 1e-6 or (xy[1] - row) * (spot[1] - row) <= 0:
        return float("inf")
    x = spot[0] + (xy[0] - spot[0]) * (row - spot[1]) / dy
    home = np.array([x, row])
    if np.linalg.norm(xy - home) > 0.5 * np.linalg.norm(spot - home):
        return float("inf")
    if abs(xy[1] - row) < SHALLOW * np.linalg.norm(xy - home):
        return float("inf")
    return float(x)


def _one_per_place(
    rows: list[int], xy: NDArray[np.float64], scores: NDArray[np.float64]
) -> list[int]:
    """The surest reading at each place: two boxes on one tile (the detector sometimes gives
    a tile two, a few pixels apart) are one tile, not two."""
    kept: list[int] = []
    for i in sorted(rows, key=lambda i: -scores[i]):
        if all(np.linalg.norm(xy[i] - xy[j]) >= SAME_PLACE for j in kept):
            kept.append(i)
    return sorted(kept)


def _pool_dice(
    frames: list[list[tuple[str, NDArray[np.float64], float]]], *, still: bool = False
) -> list[list[tuple[str, float]]] | None:
    """The dice of a window of frames, left to right, each with its (label, flatness) sightings:
    a die is a place (within `DIE_PLACE` mm) seen in at least `DICE_SEEN` of the frames, so a
    die the detector misses now and then still counts, and a one-frame phantom does not; a place
    within `DIE_APART` of a steadier one is that die again. None while a die still moves: its
    sightings spread, or the last frame shows one in a new place (unless the dice are known to
    lie `still`)."""
    places: list[list[tuple[str, NDArray[np.float64], float, int]]] = []
    for index, frame in enumerate(frames):
        for label, xy, flat in frame:
            near = [p for p in places if np.linalg.norm(xy - p[0][1]) <= DIE_PLACE]
            if near:
                near[0].append((label, xy, flat, index))
            else:
                places.append([(label, xy, flat, index)])
    places.sort(key=lambda p: -len({s[3] for s in p}))  # the steadiest first
    kept: list[list[tuple[str, NDArray[np.float64], float, int]]] = []
    centres: list[NDArray[np.float64]] = []
    for place in places:
        centre = np.mean([s[1] for s in place], axis=0)
        if all(np.linalg.norm(centre - c) >= DIE_APART for c in centres):
            kept.append(place)
            centres.append(centre)
    dice = [p for p in kept if len({s[3] for s in p}) * DICE_SEEN >= len(frames)]
    stray = [p for p in kept if len({s[3] for s in p}) * DICE_SEEN < len(frames)]
    if not still and any(s[3] == len(frames) - 1 for p in stray for s in p):
        return None
    for die in dice:
        spread = np.ptp(np.array([s[1] for s in die]), axis=0)
        if not still and float(np.max(spread)) > DIE_STILL:
            return None
    dice.sort(key=lambda p: float(np.mean([s[1][0] for s in p])))
    return [[(s[0], s[2]) for s in die] for die in dice]


FLAT_ASPECT = 0.88
"""A die's top face, mapped onto the table, is square when the die lies flat; leaning on an
edge at 0.6 rad it is 0.83 as wide as long."""


def _leaning(dice: list[list[tuple[str, float]]]) -> list[int]:
    """The dice whose median flatness over their sightings is under one half."""
    return [k for k, die in enumerate(dice) if _median_flat(die) < 0.5]


def _median_flat(die: list[tuple[str, float]]) -> float:
    return float(np.median([f for _, f in die]))


def _flat_by_shape(table: TableConfig, corners: NDArray[np.float64]) -> float:
    """1 if a die's top face is square on the table, else 0: for exact boxes (the simulator's
    labels); the detector's die boxes are too rough for it (flat dice measured 0.78-0.99), so
    from pixels the flatness reader decides."""
    top = table.to_table(corners)
    lengths = np.linalg.norm(np.roll(top, -1, axis=0) - top, axis=1)
    a, b = (lengths[0] + lengths[2]) / 2, (lengths[1] + lengths[3]) / 2
    return float(min(a, b) / max(a, b, 1e-9) >= FLAT_ASPECT)


def _dice(values: list[int]) -> str:
    return " ".join(str(v) for v in values) if values else "unseen"
