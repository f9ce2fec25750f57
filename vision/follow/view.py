"""One frame counted by zone: what every phase looks at."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from vision.detections import Detections, box_sides
from vision.follow.base import HAND_ZONES
from vision.follow.delivery import CUT, StackSighting
from vision.follow.dice import DieSighting, _flat_by_shape
from vision.follow.exposure import DOUBTED, FACES, UNREAD, Sighting
from vision.table import TableConfig


@dataclass(frozen=True)
class View:
    """One frame, counted by zone: what the phase logic looks at."""

    tiles: int
    dice: int
    loose: int
    hand_tiles: int
    backs: Mapping[str, int]
    faces: Mapping[str, int]
    stacks: list[StackSighting]
    backs_xy: list[tuple[NDArray[np.float64], str, float]]
    """Each face-down tile's place, zone and the detector's confidence in it."""
    dice_read: list[DieSighting]
    faces_xy: list[Sighting]
    unread_xy: list[tuple[str, NDArray[np.float64], str, float, float]]
    """Tiles the detector boxes face up whose face the reader cannot tell (under `FACES.min_read`),
    each with the reader's best guess of its face, its place and zone, the detector's confidence
    and the reader's that it lies face up."""
    loose_backs: list[tuple[NDArray[np.float64], NDArray[np.float64], float]] = field(
        default_factory=list
    )
    """Each face-down tile boxed outside every zone (a block in flight, as a rule): its place,
    its box's corners on the table (mm) and the detector's confidence in it."""

    def unread_while(self, dealing: bool) -> list[Sighting]:
        """The unread tiles as sightings: while dealing, those the detector is sure lie face up
        (`UNREAD`, `FACES.unread_face`); in any phase, those the reader takes for face up
        (`DOUBTED`, `FACES.face_sure`)."""
        sightings = []
        for guess, xy, zone, detector, reader in self.unread_xy:
            if dealing and detector >= FACES.unread_face:
                sightings.append(Sighting(UNREAD, xy, zone, detector))
            elif reader >= FACES.face_sure:
                named = guess if reader >= FACES.guess_sure else ""
                sightings.append(Sighting(DOUBTED, xy, zone, reader, named))
        return sightings

    @property
    def stack_xy(self) -> list[NDArray[np.float64]]:
        return [s.xy for s in self.stacks]

    @property
    def tiles_xy(self) -> list[NDArray[np.float64]]:
        """Where every tile lies, face up or down, read or not."""
        return (
            [xy for xy, _, _ in self.backs_xy]
            + [s.xy for s in self.faces_xy]
            + [xy for _, xy, _, _, _ in self.unread_xy]
        )

    @classmethod
    def of(cls, seen: Detections, table: TableConfig) -> View:
        scores = seen.label_scores
        backs: Counter[str] = Counter()
        faces: Counter[str] = Counter()
        stacks, dice_read, backs_xy, faces_xy, unread_xy, loose_backs = [], [], [], [], [], []
        tiles = dice = loose = hand_tiles = 0
        for i, label in enumerate(seen.labels):
            zone = seen.zones[i]
            if label.startswith("die-"):
                if zone == "dice":
                    dice += 1
                    sides = _sides_on_table(table, seen.corners[i])
                    flat = float(seen.flat[i]) if len(seen.flat) else _flat_by_shape(sides)
                    dice_read.append(
                        DieSighting(
                            label, seen.table_xy[i], flat, float(scores[i]), float(sides.mean())
                        )
                    )
                continue
            tiles += 1
            loose += zone == ""
            hand_tiles += zone in HAND_ZONES
            if label == "back":
                backs[zone] += 1
                backs_xy.append((seen.table_xy[i], zone, float(seen.confidence[i])))
                if not zone:
                    corners = table.to_table(seen.corners[i])
                    loose_backs.append((seen.table_xy[i], corners, float(seen.confidence[i])))
                if zone == "stack" and seen.confidence[i] >= CUT.standing:
                    length = float(_sides_on_table(table, seen.corners[i])[0])
                    stacks.append(
                        StackSighting(seen.table_xy[i], float(seen.confidence[i]), length)
                    )
            elif scores[i] >= FACES.min_read:
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
            loose_backs,
        )


def _sides_on_table(table: TableConfig, corners: NDArray[np.float64]) -> NDArray[np.float64]:
    """A box's longer and shorter side on the table, in millimetres."""
    return box_sides(table.to_table(corners)[None])[0]
