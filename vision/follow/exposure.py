"""Face-up tiles followed from frame to frame, so that a tile exposed while the tiles are washed,
stacked or dealt is alerted as soon as it shows and a back misread as a face for a frame is not
(`FaceSettings`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from vision.follow.base import ROUND, FollowerBase, K, Raised, _nearest_first
from vision.follow.delivery import CARRIED

UNREAD = "face-up"
"""The face of a face-up tile the reader cannot tell."""
DOUBTED = "face-up?"
"""The face of a tile the reader takes for face up (`FACES.face_sure`) without being sure of
which face: such a sighting carries on a face-up tile's track within `FACES.face_held` of it,
after the faces read; where it carries none it starts a guess (`FaceTrack.guessed`)."""


@dataclass(frozen=True)
class FaceSettings:
    """Following face-up tiles from frame to frame (exposed tiles)."""

    min_read: float = 0.8
    """Faces read with less confidence than this are not counted as seen. Before the setting in 42
    simulated rounds (`benchmarks/false_faces.py`, 5,502 frames) the reader read a face over no
    face-up tile 10 times at 0.8 or more and 23 times at 0.6, and 238 against 239 of 246 boxes over
    an exposed tile right: a lower bar would buy little and let more washed backs pass as faces."""
    unread_face: float = 0.5
    """How sure the detector must be that a tile lies face up for it to count as one while the
    tiles are dealt, though the reader cannot tell its face: a tile exposed in a block in flight
    lies half under the dealer's hand, so the reader doubts it (0.28-0.61 in round 710081) where
    the detector does not (0.50-0.75). Followed through the flight, such a tile is alerted as it
    lands (0.8 s after it showed) instead of four frames later (1.1 s). The washed backs the
    reader takes for faces lie before the dice are read, when this does not apply."""
    face_sure: float = 0.5
    """How sure the reader must be that a tile lies face up, whatever its face, for its sighting to
    carry on a face-up tile's track in any phase (`DOUBTED`). Washed tiles turned over under the
    dealer's hand are read under `min_read` for a frame or two while the reader still takes them
    for faces (round 700080: `1-2` at 0.47-0.58, face up 0.95-0.98), so their tracks lapsed and
    they were alerted 1.2 s after they showed. Over the 451 rounds from pixels, carrying tracks so
    took 700080 to 0.5 s, 740051 1.4 to 0.9 s and 700212 2.3 to 1.1 s, with no new false alert at
    any bar from 0.0 to 0.6; letting such sightings also start tracks raised one at 0.4 (700141),
    and letting them carry a track as far as a read face may stray dragged one off its tile and
    delayed an alert (740084). More likely face up than not, then."""
    sure_face: float = 0.99
    """How sure, on average, the reader must be that a tile lies face up for two frames to hold it
    (`ROUND.steady` frames otherwise) while tiles are washed or dealt from stacks still standing:
    once
    they are gone, a hand turned up for the exposure is read for two frames before the phase turns.
    Over the 451 rounds from pixels no back was followed as a face for two frames while tiles were
    washed or dealt, however sure (`benchmarks/face_tracks.py`), and a tile exposed reached this bar
    in two frames in 46 of the 56 rounds with one: most exposed tiles are alerted 0.1 s after they
    show instead of 0.3 s, 700212 0.7 s instead of 1.1 s."""
    guess_sure: float = 0.9
    """How sure the reader must be that a doubted tile lies face up for its best guess to start a
    track (`FaceTrack.guessed`): a face guessed alike in one place two frames running is as good as
    read. Over the 451 rounds from pixels, guesses took two exposed tiles' alerts from 0.3 to 0.1 s
    (730062: `1-6` at 0.51 and 0.67, face up 1.0) and raised no false alert at 0.8 or 0.9; at 0.5 a
    back along a line guessed `2-2` at 0.63 (face up 0.55-0.74) was followed (700141)."""
    same_place: float = 18.0
    """Millimetres within which two face readings in a hand are one tile: tiles are 24-27 mm wide
    and lie side by side or further apart, while a box straddling two neighbours lay 15-17 mm from
    each (round 700150: a five-tile hand read as six in every other frame, never steady)."""
    face_held: float = 40.0
    """Millimetres a followed face-up tile may stray from where it was heading between frames."""
    face_gap: int = 5
    """Analysed frames a followed face-up tile's track outlives its last reading: a tile carried
    under the dealer's hand, or read under `FACES.min_read` among washed tiles, for half a second.
    Chosen over the 231 rounds of `docs/accuracy.md`: exposed tiles alerted over 1 s after
    they showed in 5 rounds with no gap, 2 with 4 frames, 1 with 5 or 8, and no new false alert at
    any. A back read where the track was ends it (the face there was a misread back): within
    `FACES.face_held` that also ended a real tile's track among washed neighbours (700179), within
    `FACES.same_place` none."""


FACES = FaceSettings()


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
        reach = CARRIED.step if self.frames == 1 else FACES.face_held * steps
        near = [d for d, bar in ((carried, reach), (put_down, FACES.face_held)) if d <= bar]
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
    followed for two frames or more and not continued is kept for `FACES.face_gap` frames, unless a
    back now lies where it was. A tile turned up, lying or carried, keeps its track though an
    arm hides it or the reader doubts it for a few frames; a back misread as a face flickers
    from place to place and face to face, and is read as the back it is in between."""
    pairs = _nearest_first(
        (sighting.label == DOUBTED, track.guessed, distance, i, j)
        for i, sighting in enumerate(faces)
        for j, track in enumerate(tracks)
        if _may_continue(sighting, track)
        and (distance := track.distance(sighting.xy)) is not None
        and (
            sighting.label != DOUBTED
            or distance <= (FACES.same_place if track.guessed else FACES.face_held)
        )
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
        and track.unseen < FACES.face_gap
        and not any(np.linalg.norm(xy - track.xy) <= FACES.same_place for xy in backs)
    ]
    return followed


class ExposurePhase(FollowerBase):
    """Tiles that should lie face down and do not."""

    def _watch_exposed(
        self, t: float, kind: K, out: list[Raised], dice_area: bool = False, quick: bool = True
    ) -> None:
        """A face-up tile followed for a few frames while tiles should all be face down, as
        sure as the reader was of its face; with `quick`, for two frames where the reader is
        sure of it (`FACES.sure_face`). In the dice area only with `dice_area` (while the tiles are
        washed and no die is out): two dice side by side look like a tile's face, while a
        washed tile lies there as anywhere (round 700278: followed there for 2.3 s)."""
        held = sorted(
            (
                f
                for f in self.faces
                if (
                    f.frames > ROUND.steady
                    or (quick and f.frames > 1 and f.sure >= FACES.sure_face)
                )
                and not f.unseen
                and (dice_area or f.zone != "dice")
            ),
            key=lambda f: f.since,
        )
        if held:
            zone = held[0].zone
            where = {
                "": "on the table",
                "dice": "in the dice area",
                "bank": "in the bank's area",
                "stack": "in the stacking area",
            }.get(zone, f"in box {zone[1:]}")
            known = held[0].label not in (UNREAD, DOUBTED) and not held[0].guessed
            tile = f"tile ({held[0].label})" if known else "tile"  # a read face is drawn
            self._alert(
                out,
                kind,
                None,
                "every tile face down",
                f"a face-up {tile} {where}",
                held[0].since,
                t,
                held[0].sure,
                zone or "stack",
                summary=f"A {tile} lay face up {where} while the tiles were "
                f"{'stacked' if kind is K.EXPOSED_TILE_STACKING else 'dealt'}.",
            )
