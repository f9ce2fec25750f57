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
times), saved as JPEG at quality 95, and `objects.json`: each frame's tiles, dice, markers
and stacks of chips, their boxes, corners, labels and how much of each is in view."""
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
    chips: int
    """Stacks of chips in view; 0 where no chips model is installed to look for them."""
    chips_found: int
    over_nothing: int
    """Tile and die boxes overlapping no tile or die at all (IoU under 0.3), and where chips are
    looked for, chips boxes overlapping no stack."""

    @property
    def passed(self) -> bool:
        """Bars well under what the shipped models do on these frames (faces 38 of 39, dice 13
        of 13, markers 4 of 4, chips 23 of 23, 3 boxes over nothing in 6 frames) and above a
        broken runtime's (the detector with 8-bit weights on a CPU without VNNI: 102 boxes over
        nothing in six such frames). The marker detector and the chips model are 8-bit too:
        their markers and stacks are held to the dice's bar. A chips model that misses the house
        box's stacks takes a player bank for the house's, or the other way round."""
        return (
            self.faces_read >= 0.85 * self.faces
            and self.dice_read >= 0.7 * self.dice
            and self.markers_read >= 0.7 * self.markers
            and self.chips_found >= 0.7 * self.chips
            and self.over_nothing <= 4 * self.frames
        )

    def __str__(self) -> str:
        markers = f", markers {self.markers_read} of {self.markers}" if self.markers else ""
        chips = f", chips {self.chips_found} of {self.chips}" if self.chips else ""
        return (
            f"faces read right {self.faces_read} of {self.faces}, dice {self.dice_read} of "
            f"{self.dice}{markers}{chips}, {self.over_nothing} boxes over nothing in "
            f"{self.frames} frames"
        )


def check_models(
    read: Read, markers: bool = False, chips: bool = False, frames: Path = FRAMES
) -> SelfCheck:
    """Read the known full-table frames and count what came out right; with `markers` (and
    `chips`), `read` looks for the markers (and the stacks of chips) too and they are counted."""
    listing = frames / "objects.json"
    if not listing.is_file():
        raise FileNotFoundError(f"{listing}: the self-check's known frames are missing")
    known = json.loads(listing.read_text())
    counts = np.zeros(9, int)
    for name, objects in known.items():
        image = cv2.imread(str(frames / name), cv2.IMREAD_COLOR)
        if image is None:
            raise FileNotFoundError(f"{frames / name}: a self-check frame is missing")
        counts += _tally(read(image), objects, markers, chips)
    return SelfCheck(len(known), *map(int, counts))


def _tally(found: Detections, objects: list[dict], markers: bool, chips: bool) -> NDArray[np.int64]:  # type: ignore[type-arg]
    """Faces in view, faces read right, dice, dice read right, markers, markers read right,
    stacks of chips, stacks found, and boxes over nothing: tile and die boxes over no tile or
    die, chips boxes over no stack. Markers and chips only where they are looked for."""
    kind_of = {label: "plaque" for label in MARKERS} | {WAGER: "chips"}
    tally = np.zeros(9, int)
    for kind, column in (("tile", 0), ("plaque", 4), ("chips", 6)):
        if (kind == "plaque" and not markers) or (kind == "chips" and not chips):
            continue
        mine = [kind_of.get(label, "tile") == kind for label in found.labels]
        boxes = found[np.array(mine, bool)]
        truths = [o for o in objects if kind_of.get(o["label"], "tile") == kind]
        ious = iou_matrix(boxes, truths)
        for j, obj in enumerate(truths):
            if obj["label"] == "back" or obj["visible"] < FULLY_IN_VIEW:
                continue
            at = 2 if obj["label"].startswith("die-") else column
            best = int(np.argmax(ious[:, j])) if len(boxes) else -1
            right = best >= 0 and ious[best, j] >= 0.5 and boxes.labels[best] == obj["label"]
            tally[at] += 1
            tally[at + 1] += right
        if kind != "plaque":
            tally[8] += int((ious.max(axis=1, initial=0.0) < 0.3).sum())
    return tally
