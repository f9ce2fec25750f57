"""The box's enrolments of its table's tile set (`vision.enrol`): every display it looked at,
kept with its image, its time and who accepted it, and the accepted one the reader reads by.

Each enrolment is a folder `enrolments/ID/` beside the outbox: the frame (`display.jpg`), the
picture a person checks (`picture.jpg`), the record (`enrolment.json`, `edge.messages.Enrolment`)
and the set as the reader sees it (`set.npz`). `current.json` names the accepted one; it is
replaced whole (written aside, then renamed), so a crash leaves the previous enrolment in force.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from edge.messages import EnrolledTile, Enrolment
from vision.enrol import Enrolment as Seen
from vision.enrol import KnownSet, picture


class EnrolmentError(ValueError):
    """An enrolment that cannot be accepted or read, in one line."""


def record_of(
    seen: Seen, *, table_id: str, at: float, enrolment_id: str | None = None
) -> Enrolment:
    """The message and the record kept for one look at a display."""
    return Enrolment(
        id=enrolment_id or f"{table_id}-enrol-{int(at)}-{uuid.uuid4().hex[:6]}",
        table_id=table_id,
        at=at,
        whole=seen.whole,
        in_order=seen.in_order,
        problems=list(seen.problems),
        tiles=[
            EnrolledTile(place=t.place, face=t.face, read=t.read, sure=round(t.read_score, 3))
            for t in seen.tiles
        ],
        dice=list(seen.dice),
    )


class Enrolments:
    """The enrolments folder of one box."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def keep(self, seen: Seen, image: NDArray[np.uint8], record: Enrolment) -> Path:
        """Store one look at a display, accepted or not; returns its folder."""
        place = self.folder / record.id
        part = place.with_name(place.name + ".part")
        part.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(part / "display.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        cv2.imwrite(str(part / "picture.jpg"), picture(image, seen), [cv2.IMWRITE_JPEG_QUALITY, 88])
        if any(t.embedding is not None for t in seen.tiles):
            KnownSet.of(seen).save(part / "set.npz")
        (part / "enrolment.json").write_text(record.model_dump_json(indent=1))
        os.replace(part, place)
        return place

    def accept(self, enrolment_id: str, by: str, at: float | None = None) -> Enrolment:
        """Make a whole set's enrolment the one in force, recording who accepted it."""
        record = self.record(enrolment_id)
        if not record.whole:
            raise EnrolmentError(
                f"enrolment {enrolment_id} was refused ({'; '.join(record.problems)}): "
                "it cannot be accepted"
            )
        if not (self.folder / enrolment_id / "set.npz").is_file():
            raise EnrolmentError(
                f"enrolment {enrolment_id} holds no set to read by: the reader gave no embedding"
            )
        record = record.model_copy(update={"accepted_by": by})
        _write_whole(
            self.folder / enrolment_id / "enrolment.json", record.model_dump_json(indent=1)
        )
        current = {"id": enrolment_id, "accepted_by": by, "accepted_at": at or time.time()}
        _write_whole(self.folder / "current.json", json.dumps(current))
        return record

    def record(self, enrolment_id: str) -> Enrolment:
        path = self.folder / enrolment_id / "enrolment.json"
        if not path.is_file():
            raise EnrolmentError(f"no enrolment {enrolment_id} in {self.folder}")
        return Enrolment.model_validate_json(path.read_text())

    def current(self) -> tuple[Enrolment, KnownSet] | None:
        """The accepted enrolment in force and its set, or None where none was accepted."""
        path = self.folder / "current.json"
        if not path.is_file():
            return None
        try:
            enrolment_id = str(json.loads(path.read_text())["id"])
            record = self.record(enrolment_id)
            return record, KnownSet.load(self.folder / enrolment_id / "set.npz")
        except (ValueError, KeyError, OSError) as error:
            raise EnrolmentError(
                f"the enrolment in force ({path}) cannot be read: {error}"
            ) from None

    def picture_jpeg(self, enrolment_id: str) -> bytes:
        return (self.folder / enrolment_id / "picture.jpg").read_bytes()


def _write_whole(path: Path, text: str) -> None:
    """Write a file so that a reader sees the old text or the new, never a part."""
    aside = path.with_name(path.name + ".new")
    aside.write_text(text)
    os.replace(aside, path)
