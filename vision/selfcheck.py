"""Do the models read a known table right on this machine? The same ONNX files answer otherwise
on other CPUs and runtimes: with 8-bit weights the detector saw 30 dice a frame where there were
2 on a CPU without VNNI, and passed every check on the machines it was built on
(docs/detector.md). So the edge box reads a few frames shipped with the models
(`models/selfcheck/`, written by `scripts/make_selfcheck.py`), whose every tile and die it knows,
before it trusts what the models say of the table."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detections import Detections, iou_matrix
from vision.detector import MODELS
from vision.labels import MARKERS, WAGER

FRAMES = MODELS / "selfcheck"
"""Six full-table 1080p frames no model was trained on (the seed `vision.training.evaluate`
times), saved as JPEG at quality 95, and `objects.json`: each frame's
tiles, dice and markers, their boxes, corners, labels and how much of each is in view."""
FULLY_IN_VIEW = 0.9
"""Only objects this much in view count: the models read 99.8% of such tiles on true boxes."""

Read = Callable[[NDArray[np.uint8]], Detections]


@dataclass(frozen=True)
class SelfCheck:
    """What the models made of the known frames."""

    frames: int
    faces: int
    faces_read: int
    dice: int
    dice_read: int
    markers: int
    """Markers (the chung, the +4 and -4 buttons) in view; 0 where no marker models are
    installed to look for them."""
    markers_read: int
    over_nothing: int
    """Tile and die boxes overlapping no tile or die at all (IoU under 0.3)."""

    @property
    def passed(self) -> bool:
        """Bars well under what the shipped models do on these frames (faces 40 of 40, dice 13
        of 13, markers 4 of 4, 2 boxes over nothing in 6 frames) and above a broken runtime's
        (the detector with 8-bit weights on a CPU without VNNI: 102 boxes over nothing in six
        such frames). The marker detector is 8-bit too: its markers are held to the dice's bar."""
        return (
            self.faces_read >= 0.85 * self.faces
            and self.dice_read >= 0.7 * self.dice
            and self.markers_read >= 0.7 * self.markers
            and self.over_nothing <= 4 * self.frames
        )

    def __str__(self) -> str:
        markers = f", markers {self.markers_read} of {self.markers}" if self.markers else ""
        return (
            f"faces read right {self.faces_read} of {self.faces}, dice {self.dice_read} of "
            f"{self.dice}{markers}, {self.over_nothing} boxes over nothing in {self.frames} frames"
        )


def check_models(read: Read, markers: bool = False, frames: Path = FRAMES) -> SelfCheck:
    """Read the known full-table frames and count what came out right; with `markers`, `read`
    looks for the markers too and they are counted."""
    listing = frames / "objects.json"
    if not listing.is_file():
        raise FileNotFoundError(f"{listing}: the self-check's known frames are missing")
    known = json.loads(listing.read_text())
    counts = np.zeros(7, int)
    for name, objects in known.items():
        image = cv2.imread(str(frames / name), cv2.IMREAD_COLOR)
        if image is None:
            raise FileNotFoundError(f"{frames / name}: a self-check frame is missing")
        counts += _tally(read(image), objects, markers)
    return SelfCheck(len(known), *map(int, counts))


def _tally(found: Detections, objects: list[dict], markers: bool) -> NDArray[np.int64]:  # type: ignore[type-arg]
    """Faces in view, faces read right, dice, dice read right, markers, markers read right,
    tile and die boxes over nothing. Stacks of chips are left out: the frames' list has none."""
    found = found[~np.isin(found.labels, [WAGER])]  # chips: no tile or die, and not listed
    plaque = np.array([label in MARKERS for label in found.labels], bool)
    tally = np.zeros(7, int)
    for boxes, kinds in ((found[~plaque], False), (found[plaque], True)):
        if kinds and not markers:
            continue
        truths = [o for o in objects if (o["label"] in MARKERS) == kinds]
        ious = iou_matrix(boxes, truths)
        for j, obj in enumerate(truths):
            if obj["label"] == "back" or obj["visible"] < FULLY_IN_VIEW:
                continue
            column = 4 if kinds else 2 if obj["label"].startswith("die-") else 0
            best = int(np.argmax(ious[:, j])) if len(boxes) else -1
            right = best >= 0 and ious[best, j] >= 0.5 and boxes.labels[best] == obj["label"]
            tally[column] += 1
            tally[column + 1] += right
        if not kinds:
            tally[6] = int((ious.max(axis=1, initial=0.0) < 0.3).sum())
    return tally
