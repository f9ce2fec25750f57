"""Tile and dice detection on the edge box: onnxruntime only, no torch.

Three stages, each a small object with one verb:
- `Detector.detect(image)`: YOLO11n-OBB on the whole frame finds face-up tiles, face-down tiles
  and dice as oriented boxes;
- `Refiner.refine(image, detections)`: each box moved onto its object (the detector's own
  boxes are loose), as part of `Detector.detect` when `models/refiner.onnx` is there, and
  again, looking closer, where `models/refiner-2.onnx` is;
- `Reader.read(image, detections)`: each box is rectified from the full-resolution frame and a
  YOLO11n-cls model reads it: a tile's face in pip notation, `back`, or `die-N` (a die by a
  reader of dice alone, where `models/dice.onnx` is);
- `MarkerWatch.watch(t, image, detections)`: a second YOLO11n-OBB finds the round's markers
  (the chung, the +4 and -4 buttons) twice a second, where `models/markers.onnx` is.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import cv2
import numpy as np
import onnxruntime as ort
from numpy.typing import NDArray

from vision.crops import REFINED_LEAN_MARGIN, as_input, cut
from vision.detections import Detections
from vision.labels import CHUNG_BANKER, CHUNG_CO, CONTEXT, MARKERS, NOT_A_MARKER, WAGER
from vision.refine import FIRST, REFINE_CROP, View, crop, decode
from vision.reuse import Region

if TYPE_CHECKING:
    from vision.enrol import KnownSet

MODELS = Path(os.environ.get("PAIGOW_MODELS", Path(__file__).resolve().parents[1] / "models"))
"""The shipped ONNX files: the repository's models/, or $PAIGOW_MODELS (the container's)."""
REFINERS = (MODELS / "refiner.onnx", MODELS / "refiner-2.onnx")
"""The refiner's stages, each run on the boxes the one before it gave, where its file is there."""
DETECTOR_CLASSES = ("tile", "back", "die")
"""What the detector is trained to find: face-up tiles, face-down tiles and dice. The markers
(the chung, the +4 and -4 buttons) have a detector of their own (`MarkerDetector`), looking
twice a second: grown into this one, they lost it dice and were never found (MODEL_CARD,
"Markers"), and a plaque boxed by both would be counted twice."""
DETECTOR_SCALE = 0.5
"""The detector sees a full-table 1920x1080 frame at half size (960x544): a tile is then about
11 x 27 px and a die 6 px, enough to find them (the reader reads them at full resolution). At a
third (640 px), dice shrink to 4 px and the CPU-trained candidate found 9% of them."""
DETECTOR_INPUT = (544, 960)
"""The detector's whole-frame input, height x width: a 1920x1080 frame at `DETECTOR_SCALE`."""
ZOOM = 0.8
"""Dice get a second look at 0.8 of full resolution (a die 10 px, not 6), in windows around
the whole-frame pass's die candidates. Of 20 round-studio frames of three touching dice,
`benchmarks/touching_dice.py` found and read the dice exactly in 19 with it and 14 without
(a die too few in 1 and 4). The held-out numbers are in docs/detector.md."""
ZOOM_INPUT = 320
"""The closer look's input side: a 400-px window of the frame at `ZOOM`."""
ZOOM_WINDOWS = 4
STRIDE = 32
"""YOLO11's coarsest stride: an input's sides are multiples of it."""
SAME_DIE = 0.5
"""Two die boxes whose centres are closer than this share of the stronger box's short side are
one die (touching dice are a whole side apart). Second boxes can survive it (with the earlier
checkpoint, 4 of the 20 frames above); the round follower pools dice by place and absorbs
them. Merging up to 0.75 of a side removed one and lost a real die in another."""
OVERLAP = 0.3
"""Boxes overlapping a surer one by more than this (rotated IoU) are suppressed. A box that
straddles two tiles lying side by side overlaps each by about a third: at 0.5 it survived and
became a fifth tile in a hand or a third copy of a face. `benchmarks/overlap.py` on 80
held-out frames: face boxes on no face 167 at 0.5, 64 at 0.3; faces found 93.4% and 92.5%."""
SAME_TILE = 0.25
"""Two refined tile boxes whose centres are closer than this share of the surer box's short
side (about 6 mm) are one tile: tiles side by side lie a whole width apart. Suppressing refined
boxes by rotated IoU (`OVERLAP`) instead dropped 50 of 170 face boxes on nothing on
`datasets/test1080` but also 5 of 3,962 faces found."""
DIE_CANDIDATE = 0.05
"""A die box this sure is worth a closer look (the whole-frame pass reports dice at 0.35)."""
SURE_DIE = 0.5
"""The closer look's dice replace the whole-frame pass's in its windows, except a die the whole
frame saw this surely and the closer look did not see at all (within a side of it): in one
round frame the third of three touching dice scored 0.69 in the whole frame and 0.10 in its
window, and the round read as one die. On 80 held-out frames the same dice accuracy (84.9%)
with 2 more die boxes on nothing (23, not 21); the round below is in docs/accuracy.md."""
ZOOM_CONFIDENCE = 0.15
"""A die seen this surely in a closer look is reported: the window is cut around a die
candidate, so a weaker answer is believable there. On 80 held-out frames, dice found and read
right: 75.3% at 0.35, 81.5% at 0.25, 84.9% at 0.15, 85.6% at 0.1; die boxes on no die 12, 15,
21, 26 (the round follower counts dice seen in at least 2 of 5 frames, in the dice area)."""


class Candidates(NamedTuple):
    """A scan's boxes in frame pixels, strongest first: corners (N x 4 x 2), the detector's
    class of each, and how sure it is (dice down to `DIE_CANDIDATE`)."""

    corners: NDArray[np.float64]
    kinds: NDArray[np.int64]
    confidence: NDArray[np.float64]


def cpu_session(path: Path, threads: int) -> ort.InferenceSession:
    """A CPU session whose worker threads sleep between runs. onnxruntime's default keeps them
    spinning after each run: the frame's three sessions (detector, reader, flatness) and the
    Python between them then fight over two cores, and the whole-frame pass took 70 ms in a
    replay of a 1080p round instead of 42, and the replay 30.8 s instead of 18.7
    (docs/benchmarks.md)."""
    if not path.exists():
        raise FileNotFoundError(f"model file {path} is missing")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _names(session: ort.InferenceSession) -> dict[int, str]:
    return names_of(session.get_modelmeta().custom_metadata_map["names"])


def names_of(text: str) -> dict[int, str]:
    """The class names an ultralytics export keeps in its metadata: `{0: 'tile', ...}`."""
    return {int(k): str(v) for k, v in ast.literal_eval(text).items()}


def letterbox(
    image: NDArray[np.uint8], height: int, width: int
) -> tuple[NDArray[np.float32], float, int, int]:
    """The detector's input blob: the frame scaled to fit, centred on grey; with the scale and the
    offsets that map boxes back to the frame."""
    h, w = image.shape[:2]
    scale = min(width / w, height / h)
    nw, nh = round(w * scale), round(h * scale)
    canvas = np.full((height, width, 3), 114, np.uint8)
    top, left = (height - nh) // 2, (width - nw) // 2
    canvas[top : top + nh, left : left + nw] = cv2.resize(
        image, (nw, nh), interpolation=cv2.INTER_AREA
    )
    return blob_of(canvas), scale, left, top


def blob_of(image: NDArray[np.uint8]) -> NDArray[np.float32]:
    """A BGR image as a network's input, 1 x 3 x H x W in RGB from 0 to 1: what
    `cv2.dnn.blobFromImage(image, 1 / 255, swapRB=True)` gives, to the bit, in a fifteenth of
    its time on the whole frame's 960 x 544 (1.0 ms against 15.6 on the 2-core EPYC without
    VNNI, a tenth of the detector's pass; four dice windows of 320 x 320, 0.9 ms against 2.6;
    for the readers' batches of 64-px crops OpenCV's is as quick). Each colour plane is copied
    out whole, then scaled in place."""
    height, width = image.shape[:2]
    blob = np.empty((1, 3, height, width), np.float32)
    for channel, plane in enumerate(reversed(cv2.split(image))):
        blob[0, channel] = plane
    blob *= np.float32(1 / 255)
    return blob


def part_blob(
    image: NDArray[np.uint8], crop: tuple[int, int, int, int], height: int, width: int
) -> tuple[NDArray[np.float32], float, int, int]:
    """The detector's input for one part of the frame: cut from the whole frame's input on the
    network's stride grid, so the part holds the very pixels the whole frame's input holds
    there, at the same place on the grid, and the network sees them the same way. Cut
    elsewhere, 16 px off the grid, blocks under a dealer's hand were boxed otherwise than in the
    whole frame, and a block's traced flight named other stacks (round 700094)."""
    blob, scale, left, top = letterbox(image, height, width)
    x0, y0, x1, y1 = crop
    gx0, gy0 = (int(v * scale + o) // STRIDE * STRIDE for v, o in ((x0, left), (y0, top)))
    gx1 = min(-(-int(np.ceil(x1 * scale + left)) // STRIDE) * STRIDE, width)
    gy1 = min(-(-int(np.ceil(y1 * scale + top)) // STRIDE) * STRIDE, height)
    part = np.ascontiguousarray(blob[:, :, gy0:gy1, gx0:gx1])
    return part, scale, left - gx0, top - gy0


class Detector:
    """YOLO11n-OBB over the whole frame at `DETECTOR_SCALE`, then a closer look at the dice."""

    def __init__(
        self,
        path: Path = MODELS / "detector.onnx",
        threads: int = 2,
        confidence: float = 0.35,
        iou: float = OVERLAP,
        zoom: bool = True,
        refiner: Sequence[Path] | None = REFINERS,
    ) -> None:
        self.session = cpu_session(path, threads)
        stages = [p for p in refiner or () if p.exists()]
        self.refiner = Refiner(stages, threads) if stages else None
        self.input = self.session.get_inputs()[0]
        _, _, height, width = self.input.shape
        fixed = isinstance(height, int) and isinstance(width, int)
        if zoom and not fixed:
            self.height, self.width = DETECTOR_INPUT
        elif zoom:
            raise ValueError(f"{path} has a fixed input size: looking closer at dice needs a "
                             "detector exported with a dynamic one")  # fmt: skip
        else:
            self.height, self.width = (height, width) if fixed else DETECTOR_INPUT
        self.names = _names(self.session)
        self.die = next(k for k, name in self.names.items() if name == "die")
        self.confidence = confidence
        self.iou = iou
        self.zoom = zoom

    def detect(self, image: NDArray[np.uint8], region: Region | None = None) -> Detections:
        """The objects in the frame, or only those `region` reaches (`Region.reaches`), looked
        for in its crop at the scale the whole frame is seen at (`vision.reuse`)."""
        return self.resolve(image, self.scan(image, region), region)

    def scan(self, image: NDArray[np.uint8], region: Region | None = None) -> Candidates:
        """The pass over the whole frame (or `region`'s crop): every box, and every die
        candidate worth a closer look. It needs nothing of the frame before, so it can run a
        frame ahead of `resolve` (`vision.pipeline`)."""
        if region is None:
            blob, scale, left, top = letterbox(image, self.height, self.width)
        else:
            blob, scale, left, top = part_blob(image, region.crop, self.height, self.width)
        output = self.session.run(None, {self.input.name: blob})[0][0]
        candidate = min(DIE_CANDIDATE, self.confidence) if self.zoom else self.confidence
        corners, kinds, conf = self._boxes(output, die_threshold=candidate)
        return Candidates((corners - [left, top]) / scale, kinds, conf)

    def resolve(
        self, image: NDArray[np.uint8], candidates: Candidates, region: Region | None = None
    ) -> Detections:
        """The scan's boxes made detections: the dice looked at closer, the unsure candidates
        dropped, every box refined."""
        corners, kinds, conf = candidates
        keep = conf >= self.confidence
        if self.zoom:
            dice = kinds == self.die
            h, w = image.shape[:2]
            wanted = dice & region.reaches(corners.mean(1)) if region else dice
            windows = zoom_windows(corners[wanted].mean(1), conf[wanted], w, h)
            close = self._look_closer(image, windows)
            centres = corners.mean(1)
            confirmed = _near_any(centres, close[0].mean(1), _short_sides(corners))
            replaced = confirmed | (conf < SURE_DIE)
            keep &= ~(dice & _inside_any(centres, windows) & replaced)
            corners = np.concatenate([corners[keep], close[0]])
            kinds = np.concatenate([kinds[keep], close[1]])
            conf = np.concatenate([conf[keep], close[2]])
            keep = one_box_per_die(corners, np.argsort(-conf), kinds == self.die)
        keep = np.arange(len(kinds))[keep]
        if region is not None:
            keep = keep[region.reaches(corners[keep].mean(1))]
        labels = tuple(self.names[int(k)] for k in kinds[keep])
        found = Detections(corners[keep].reshape(-1, 4, 2), conf[keep], labels)
        if self.refiner is None:
            return found
        refined = self.refiner.refine(image, found)
        judged = kinds[keep] != self.die
        return refined[apart(refined.corners, refined.confidence, judged)]

    def _look_closer(
        self, image: NDArray[np.uint8], windows: list[tuple[int, int]]
    ) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]:
        """The dice found in each window, seen at `ZOOM` of full resolution."""
        found = (np.zeros((0, 4, 2)), np.zeros(0, np.int64), np.zeros(0))
        if not windows:
            return found
        side = round(ZOOM_INPUT / ZOOM)
        views = []
        for x0, y0 in windows:
            view = np.full((side, side, 3), 114, np.uint8)
            patch = image[y0 : y0 + side, x0 : x0 + side]
            view[: patch.shape[0], : patch.shape[1]] = patch
            views.append(cv2.resize(view, (ZOOM_INPUT, ZOOM_INPUT), interpolation=cv2.INTER_AREA))
        blob = np.concatenate([blob_of(view) for view in views])
        parts = [found]
        outputs = self.session.run(None, {self.input.name: blob})[0]
        for (x0, y0), output in zip(windows, outputs, strict=True):
            corners, kinds, conf = self._boxes(output, die_threshold=ZOOM_CONFIDENCE)
            dice = kinds == self.die
            parts.append((corners[dice] / ZOOM + [x0, y0], kinds[dice], conf[dice]))
        corners, kinds, conf = (np.concatenate(column) for column in zip(*parts, strict=True))
        return corners.reshape(-1, 4, 2), kinds, conf

    def _boxes(
        self, output: NDArray[np.float32], die_threshold: float
    ) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]:
        """`oriented_boxes` with dice kept down to `die_threshold`, one box per die."""
        least = np.full(len(self.names), self.confidence)
        least[self.die] = die_threshold
        corners, kinds, conf = oriented_boxes(output, least, self.iou)
        kept = one_box_per_die(corners, np.arange(len(kinds)), kinds == self.die)
        return corners[kept], kinds[kept], conf[kept]


def oriented_boxes(
    output: NDArray[np.float32], least: NDArray[np.float64], iou: float
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]:
    """One image's raw YOLO-OBB output, (4 + classes + 1) x anchors, to boxes after suppression:
    corners in input pixels, class, confidence (strongest first); a box is kept if at least as
    sure as `least` of its class."""
    classes = len(least)
    scores = output[4 : 4 + classes].T
    kinds = scores.argmax(1)
    conf = scores[np.arange(len(kinds)), kinds].astype(np.float64)
    keep = conf >= least[kinds]
    if not keep.any():
        return np.zeros((0, 4, 2)), np.zeros(0, np.int64), np.zeros(0)
    boxes, angles = output[:4].T[keep], output[4 + classes][keep]
    kinds, conf = kinds[keep], conf[keep]
    rotated = [((float(cx), float(cy)), (float(bw), float(bh)), float(np.degrees(a)))
               for (cx, cy, bw, bh), a in zip(boxes, angles, strict=True)]  # fmt: skip
    chosen = cv2.dnn.NMSBoxesRotated(rotated, conf.tolist(), 0.0, iou)
    chosen = np.asarray(chosen, dtype=np.int64).reshape(-1)
    chosen = chosen[np.argsort(-conf[chosen])]
    corners = np.array([cv2.boxPoints(rotated[i]) for i in chosen], np.float64)
    return corners.reshape(-1, 4, 2), kinds[chosen], conf[chosen]


def apart(
    corners: NDArray[np.float64], conf: NDArray[np.float64], judged: NDArray[np.bool_]
) -> NDArray[np.bool_]:
    """Which boxes to keep once refined: of the `judged` ones (tiles and backs), none centred
    within `SAME_TILE` of a surer one's short side from its centre. A box straddling two tiles
    side by side overlaps each by about a third and survives the scan's suppression
    (`OVERLAP`); the refiner then moves it onto one of them, a second, narrower box on that
    tile (1120061 from pixels: a `6-6` boxed 21 and 18 mm wide measured as another set's tile).
    Dice keep their own rule (`one_box_per_die`)."""
    keep = np.ones(len(corners), bool)
    centres, short = corners.mean(1), _short_sides(corners)
    for i in np.argsort(-conf):  # surest first: a box dropped drops nothing itself
        if not judged[i] or not keep[i]:
            continue
        near = np.linalg.norm(centres - centres[i], axis=1) < SAME_TILE * short[i]
        near[i] = False
        keep[near & judged & (conf <= conf[i])] = False
    return keep


def _short_sides(corners: NDArray[np.float64]) -> NDArray[np.float64]:
    sides = np.linalg.norm(np.roll(corners, -1, axis=1) - corners, axis=2)
    return sides.min(axis=1)  # type: ignore[no-any-return]


def _near_any(
    points: NDArray[np.float64], others: NDArray[np.float64], radius: NDArray[np.float64]
) -> NDArray[np.bool_]:
    """Which points lie within their own radius of any of the others."""
    if not len(points) or not len(others):
        return np.zeros(len(points), bool)
    apart = np.linalg.norm(points[:, None] - others[None], axis=2)
    return (apart < radius[:, None]).any(axis=1)  # type: ignore[no-any-return]


def zoom_windows(
    centres: NDArray[np.float64], confidence: NDArray[np.float64], width: int, height: int
) -> list[tuple[int, int]]:
    """Top-left corners of the windows to look closer in: one on the strongest die candidate,
    then one on each next candidate not well inside a window already, at most `ZOOM_WINDOWS`."""
    side = round(ZOOM_INPUT / ZOOM)
    margin = side // 16
    windows: list[tuple[int, int]] = []
    for k in np.argsort(-confidence):
        x, y = centres[k]
        if _inside_any(centres[k : k + 1], windows, margin)[0]:
            continue
        if len(windows) == ZOOM_WINDOWS:
            break
        windows.append((int(np.clip(x - side / 2, 0, max(width - side, 0))),
                        int(np.clip(y - side / 2, 0, max(height - side, 0)))))  # fmt: skip
    return windows


def _inside_any(
    points: NDArray[np.float64], windows: list[tuple[int, int]], margin: int = 0
) -> NDArray[np.bool_]:
    side = round(ZOOM_INPUT / ZOOM)
    inside = np.zeros(len(points), bool)
    for x0, y0 in windows:
        low, high = np.array([x0, y0]) + margin, np.array([x0, y0]) + side - margin
        inside |= np.all((points >= low) & (points <= high), axis=1)
    return inside


def one_box_per_die(
    corners: NDArray[np.float64], strongest_first: NDArray[np.int64], is_die: NDArray[np.bool_]
) -> NDArray[np.int64]:
    """Drop a die box centred within `SAME_DIE` of a stronger die box's side: the same die.
    A die is a square, so two boxes on it can be turned 45 degrees apart and overlap less than
    NMS's IoU threshold."""
    centres = corners.mean(1)
    radius = SAME_DIE * _short_sides(corners)
    kept: list[int] = []
    for i in strongest_first:
        if is_die[i] and any(
            is_die[j] and np.linalg.norm(centres[i] - centres[j]) < radius[j] for j in kept
        ):
            continue
        kept.append(int(i))
    return np.asarray(kept, np.int64)


MARKERS_MODEL = MODELS / "markers.onnx"
MARKER_FACES_MODEL = MODELS / "marker-faces.onnx"
CHIPS_MODEL = MODELS / "chips.onnx"
"""A YOLO11n-OBB that finds stacks of chips (`wager`), run beside the marker detector at every
other look (`CHIPS_EVERY_S`) and kept for its `wager` boxes alone. Trained with the markers as
its other classes, it finds 98.6% of held-out stacks but fewer plaques than the shipped marker
detector, which stays the plaques' detector (models/MODEL_CARD.md, "Chips")."""
DICE_MODEL = MODELS / "dice.onnx"
"""A reader of dice alone (YOLO11n-cls, six values), trained on rendered dice of every look
and on real photographs' dice: it reads real dice far better than the reader of tiles and
dice, whose dice are the renderer's alone (models/MODEL_CARD.md, "Dice reader")."""
DICE_TURNS = 4
"""The reader of dice alone reads each die in four quarter turns and averages them: a die's
face is the same at any turn, and its crop's turn is arbitrary. First tried on the real test
split with an earlier candidate, then chosen on the valid split (one view 87.7%, four 89.7%,
eight with mirrors 90.0%); the test split gave 88.0% -> 89.2% and the house look 93.1% ->
93.5%; four cost about 4 ms more than one a frame
on a 2-core EPYC without VNNI, eight would cost twice that for 0.3 points."""
HALF_TURN_BELOW = 0.9
"""A tile box the reader reads under this sure (its surest face or back) is read again turned
half round and the two readings averaged: a tile's crop lies either way up (`vision.crops`), and
a reader unsure of a design it never saw reads it better from both ends. Chosen on charcoal's
crops read by a reader trained without charcoal (faces 69.2% -> 71.6% at 0.9, 71.7% turning
every tile), where 46% of faces read under 0.9; models/MODEL_CARD.md, "Both ways round"."""
LOOK_MODEL = MODELS / "setlook.onnx"
"""Which set a tile belongs to (`vision.enrol.SetLook`): used once a set with looks is enrolled."""
JUDGED_FACE_UP = 0.5
"""A tile is judged against the enrolled set's looks when the reader finds it likelier face up
than down: a back shows nothing of its set's faces."""
MODEL_FILES = ("detector.onnx", "refiner.onnx", "refiner-2.onnx", "reader.onnx", "dice.onnx",
               "flatness.onnx", "markers.onnx", "marker-faces.onnx", "chips.onnx",
               "setlook.onnx")  # fmt: skip
"""Every model file the box runs where it is there (`MODELS`)."""
MARKER_CONFIDENCE = 0.3
"""A marker box this sure is reported. On 400 frames of seed 5656 (342 markers; never trained
on) the shipped pair found 318 with the right face at 0.3, with 10 boxes on no marker and 10
read with the other face; at 0.5, 294 and 0 and 7 (`python3 -m vision.training.markers
--measure`): the detector splits its score between a plaque's two faces, which the face reader
tells apart, so its bar is low; the follower takes a chung only once seen on the same box
`ROUND.steady` looks running, which a stray box is not."""
CHIPS_CONFIDENCE = 0.5
"""A stack of chips this sure is reported. A chips box has no face reader to say `none`, and one
box on no chips on the house's box, seen look after look, makes a house bank a player's (round
1550037: something on box 1 boxed as chips at 0.31-0.37 in a third of the looks; true stacks
0.8-0.9). On 400 frames of seed 6565 (1,686 stacks, never trained on) the 8-bit model found
1,663 with 43 boxes on no chips at 0.3, 1,652 with 18 at 0.5, 1,646 with 9 at 0.6: 0.5 is the
highest bar that keeps the stacks found within a point of the most it finds (1,665 at 0.2)."""
MARKER_EVERY_S = 0.5
"""Seconds of video between looks for markers: a chung or button is laid before the dice and
stays for the round, and the follower takes it after `ROUND.steady` looks, 1.5 s, well inside
the washing and the dice before delivery. A look (detector and face reader) costs 43 ms on a
1080p frame, more than half of a frame's 74 ms of tile models (docs/detector.md): every frame it
would cut the frames analysed a second by a third, twice a second it takes 86 ms a second."""
CHIPS_EVERY_S = 1.0
"""Seconds of video between looks for chips (`CHIPS_MODEL`), at every other look for markers;
the look between reports the stacks of the one before. Wagers are laid before the washing and
stay until the table clears, and who banks is taken from them before the delivery. The chips
model costs about as much as the marker models together (a look 110.6 ms with it against 57.6
ms without on a 2-core CPU without VNNI, `benchmarks/marker_look.py`): once a second, a second
of video's looks take 168 ms instead of 221. The 330 rounds of `docs/accuracy.md` gave the same
alerts, hands and banks so."""


class MarkerDetector:
    """The round's markers (the chung by its face, the +4, -4 and Off buttons) and the chips
    staked on the table (`wager`): a YOLO11n-OBB of their own finds them over the whole frame,
    seen as the detector sees it, and where its face reader is there (a YOLO11n-cls), each
    plaque's box is read again from the full-resolution frame: at half size a plaque's word is
    a few pixels high (`vision.training.markers` says why apart from the tile detector). A
    stack of chips has no word to read, so its box keeps the detector's class. Where a chips
    model is there (`CHIPS_MODEL`), chips are its `wager` boxes alone."""

    def __init__(self, path: Path = MARKERS_MODEL, faces: Path | None = MARKER_FACES_MODEL,
                 threads: int = 2, confidence: float = MARKER_CONFIDENCE,
                 iou: float = OVERLAP, chips: Path | None = CHIPS_MODEL,
                 chips_confidence: float = CHIPS_CONFIDENCE) -> None:  # fmt: skip
        self.session = cpu_session(path, threads)
        self.input = self.session.get_inputs()[0]
        self.names = _names(self.session)
        self.faces = cpu_session(faces, threads) if faces is not None and faces.exists() else None
        self.face_names = _names(self.faces) if self.faces else {}
        self.chips = cpu_session(chips, threads) if chips is not None and chips.exists() else None
        self.chip_names = _names(self.chips) if self.chips else {}
        self.chips_input = self.chips.get_inputs()[0].name if self.chips else ""
        chungs = (CHUNG_BANKER, CHUNG_CO)
        self.chung_columns = [k for k, name in self.face_names.items() if name in chungs]
        for model, names in ((path, self.names), (faces, self.face_names),
                             (chips, self.chip_names)):  # fmt: skip
            unknown = set(names.values()) - {*CONTEXT, NOT_A_MARKER}
            if unknown:
                raise ValueError(f"{model} knows {sorted(unknown)}, not the markers {CONTEXT}")
        if self.chips is not None and WAGER not in self.chip_names.values():
            raise ValueError(f"{chips} has no class {WAGER}: it finds no chips")
        self.least = np.full(len(self.names), confidence)
        self.chips_least = np.full(len(self.chip_names), chips_confidence)
        self.iou = iou

    @property
    def classes(self) -> tuple[str, ...]:
        """What a look reports: the marker detector's classes, `wager` from the chips model
        where one is there."""
        if self.chips is None:
            return tuple(self.names.values())
        return (*(name for name in self.names.values() if name != WAGER), WAGER)

    def detect(self, image: NDArray[np.uint8], chips: bool = True) -> Detections:
        """The markers, and the stacks of chips; without `chips`, where a chips model is there,
        no stacks (the marker detector's own are never reported beside one)."""
        blob, scale, left, top = letterbox(image, *DETECTOR_INPUT)
        output = self.session.run(None, {self.input.name: blob})[0][0]
        corners, kinds, conf = oriented_boxes(output, self.least, self.iou)
        labels = [self.names[int(k)] for k in kinds]
        if self.chips is not None:
            mine = np.array([label != WAGER for label in labels], bool)
            chip_corners, chip_conf, stacks = np.zeros((0, 4, 2)), np.zeros(0), np.zeros(0, bool)
            if chips:
                output = self.chips.run(None, {self.chips_input: blob})[0][0]
                chip_corners, chip_kinds, chip_conf = oriented_boxes(
                    output, self.chips_least, self.iou
                )
                stacks = np.array([self.chip_names[int(k)] == WAGER for k in chip_kinds], bool)
            corners = np.concatenate([corners[mine], chip_corners[stacks]]).reshape(-1, 4, 2)
            conf = np.concatenate([conf[mine], chip_conf[stacks]])
            labels = [label for label, kept in zip(labels, mine, strict=True) if kept]
            labels += [WAGER] * int(stacks.sum())
        corners = (corners - [left, top]) / scale
        sure = np.ones(len(labels))
        plaques = [k for k, label in enumerate(labels) if label != WAGER]
        if self.faces is not None and plaques:
            crops = [cut(image, corners[k], die=False) for k in plaques]
            blob = as_input(crops)
            read = self._read_faces(blob)
            for k, column in zip(plaques, read.argmax(1), strict=True):
                labels[k] = self.face_names[int(column)]
            sure[plaques] = read.max(1)
        kept = np.array([label != NOT_A_MARKER for label in labels], bool)
        labels_kept = tuple(label for label, k in zip(labels, kept, strict=True) if k)
        return Detections(corners[kept].reshape(-1, 4, 2), conf[kept], labels_kept, sure[kept])

    def _read_faces(self, blob: NDArray[np.float32]) -> NDArray[np.float32]:
        """The face reader's probabilities for each crop. A crop it takes for the chung is read
        again turned half round and the two reads averaged: the chung's box says which way its
        long side runs, not which way up its word is, and an upside-down `BANKER` read
        `co-banker` now and then (round 1120062 took a co-bank so). Buttons are read as they
        lie: turned as well, two held-out buttons read as another marker. Measured in
        `models/MODEL_CARD.md` (Markers: the chung read both ways up)."""
        assert self.faces is not None
        name = self.faces.get_inputs()[0].name
        read: NDArray[np.float32] = self.faces.run(None, {name: blob})[0]
        chung = np.isin(read.argmax(1), self.chung_columns)
        if chung.any():
            turned = np.ascontiguousarray(np.rot90(blob[chung], 2, axes=(2, 3)))
            read[chung] = (read[chung] + self.faces.run(None, {name: turned})[0]) / 2
        return read


class MarkerWatch:
    """Looks for markers every `MARKER_EVERY_S` of video (and for chips every `CHIPS_EVERY_S`,
    the stacks last found reported at the looks between) and adds them to that frame's
    detections; in every frame until the next look, a box on a marker's plaque seen at the last
    look is dropped (chips hide nothing the tile detector boxes): the tile detector, which has
    no class for the plaques, boxes one as a face-up tile now and then (7 of 432 held-out
    plaques at the follower's bar), and a die now and then on its printed word. A die box
    centred on a plaque is dropped; a tile's box only where it and the plaque hold each other's
    centre (`_on_markers`): a tile set down half over an Off button
    (the hand played on the box it marks) is kept."""

    def __init__(self, detector: MarkerDetector, every_s: float = MARKER_EVERY_S,
                 chips_every_s: float = CHIPS_EVERY_S) -> None:  # fmt: skip
        self.detector = detector
        self.every_s = every_s
        self.chips_every_s = chips_every_s
        self.due = self.chips_due = float("-inf")
        self.seen = Detections.empty()
        self.stacks = Detections.empty()
        """The stacks of chips the last look for chips found: reported again until the next."""
        self.plaques = np.zeros((0, 4, 2))
        """The corners of the plaques among `seen`: what a tile or die box is dropped on."""

    def watch(self, t: float, image: NDArray[np.uint8], detections: Detections) -> Detections:
        looked = t >= self.due
        if looked:
            chips = self.detector.chips is None or t >= self.chips_due
            self.seen = self.detector.detect(image, chips=chips)
            if self.detector.chips is not None and chips:
                self.stacks = self.seen[np.isin(self.seen.labels, [WAGER])]
                self.chips_due = t + self.chips_every_s
            elif self.detector.chips is not None:
                self.seen = Detections.concat([self.seen, self.stacks])
            self.plaques = self.seen.corners[np.isin(self.seen.labels, MARKERS)]
            self.due = t + self.every_s
        if len(self.plaques) and len(detections):
            dice = np.array([label.startswith("die") for label in detections.labels], bool)
            detections = detections[~_on_markers(detections.corners, dice, self.plaques)]
        return (
            Detections.concat([detections, _alongside(self.seen, detections)])
            if looked
            else detections
        )


def _alongside(markers: Detections, found: Detections) -> Detections:
    """The markers with the columns the frame's other detections hold, to join them: read as
    sure as their face reader said, lying flat as a tile does, no face-up tile, and not judged
    against the enrolled set."""
    n = len(markers)
    if not n or not len(found):
        return markers
    columns = ("label_confidence", "flat", "face_up", "set_distance")
    held = {name: len(getattr(found, name)) > 0 for name in columns}
    sure = markers.label_confidence if len(markers.label_confidence) else np.ones(n)
    return replace(
        markers,
        label_confidence=sure if held["label_confidence"] else np.zeros(0),
        flat=np.ones(n) if held["flat"] else np.zeros(0),
        face_up=np.zeros(n) if held["face_up"] else np.zeros(0),
        set_distance=np.zeros(n) if held["set_distance"] else np.zeros(0),
    )


def _on_markers(
    boxes: NDArray[np.float64], dice: NDArray[np.bool_], markers: NDArray[np.float64]
) -> NDArray[np.bool_]:
    """Whether each box (N x 4 x 2) lies on one of the markers: a die box centred on one; a
    tile's box where it also holds the marker's centre. A plaque boxed as a tile is boxed about
    its middle; a tile beside or half over a plaque holds at most one of the two centres."""
    centred = _inside(boxes.mean(1), markers)  # N x M
    holding = _inside(markers.mean(1), boxes).T  # N x M
    return (centred & (holding | dice[:, None])).any(-1)  # type: ignore[no-any-return]


def _inside(points: NDArray[np.float64], quads: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Whether each point lies inside each convex quadrilateral: P x Q."""
    edges = np.roll(quads, -1, axis=1) - quads  # Q x 4 x 2
    to_point = points[:, None, None, :] - quads[None]  # P x Q x 4 x 2
    cross = edges[None, ..., 0] * to_point[..., 1] - edges[None, ..., 1] * to_point[..., 0]
    return (cross >= 0).all(-1) | (cross <= 0).all(-1)  # type: ignore[no-any-return]


class Refiner:
    """Moves every detected box onto its object (`vision.refine` has the geometry), one stage
    after another, each looking as widely as its file says it was trained to."""

    def __init__(self, paths: Sequence[Path] = REFINERS[:1], threads: int = 2) -> None:
        self.stages = []
        for path in paths:
            session = cpu_session(path, threads)
            view = session.get_modelmeta().custom_metadata_map.get("view")
            self.stages.append((session, session.get_inputs()[0].name,
                                View.parse(view) if view else FIRST))  # fmt: skip

    def refine(self, image: NDArray[np.uint8], detections: Detections) -> Detections:
        if not len(detections):
            return detections
        dice = [kind.startswith("die") for kind in detections.labels]
        corners = detections.corners
        for session, name, view in self.stages:
            crops = [crop(image, c, d, view) for c, d in zip(corners, dice, strict=True)]
            blob = as_input(crops, REFINE_CROP)
            out = session.run(None, {name: blob})[0]
            moved = [decode(c, row[5:] if d else row[:5], d, view)
                     for c, row, d in zip(corners, out, dice, strict=True)]  # fmt: skip
            corners = np.asarray(moved)
        return replace(detections, corners=corners)


class Reader:
    """Reads each detected tile and die from its rectified full-resolution crop (a die by the
    reader of dice alone, where there is one), and, with a flatness model, whether each die lies
    flat. The flatness crop's `lean_margin` suits the refined boxes `Detector` gives by default;
    for unrefined boxes pass `LEAN_MARGIN`."""

    def __init__(
        self,
        path: Path = MODELS / "reader.onnx",
        threads: int = 2,
        flatness: Path | None = MODELS / "flatness.onnx",
        lean_margin: float = REFINED_LEAN_MARGIN,
        known_set: KnownSet | None = None,
        dice: Path | None = DICE_MODEL,
        looks: Path | None = LOOK_MODEL,
        half_turn_below: float = HALF_TURN_BELOW,
    ) -> None:
        from vision.enrol import SetLook  # not at the top: vision.enrol crosses into rules/

        self.session = cpu_session(path, threads)
        self.looker = SetLook(looks, threads) if looks and looks.exists() else None
        self.lean_margin = lean_margin
        self.known_set = known_set
        self.half_turn_below = half_turn_below
        self.input = self.session.get_inputs()[0]
        self.outputs = [o.name for o in self.session.get_outputs()][:2]
        self.names = _names(self.session)
        self.back_index = next(k for k, n in self.names.items() if n == "back")
        self.flatness = cpu_session(flatness, threads) if flatness and flatness.exists() else None
        if self.flatness is not None:
            self.flat_index = next(k for k, n in _names(self.flatness).items() if n == "flat")
        self.dice = cpu_session(dice, threads) if dice and dice.exists() else None
        if self.dice is not None:  # its columns in the reader's order of names
            self.dice_input = self.dice.get_inputs()[0].name
            dice_names = _names(self.dice)
            columns = {n: k for k, n in self.names.items()}
            self.dice_columns = np.array([columns[dice_names[k]] for k in sorted(dice_names)])

    def look_at(
        self,
        crops: Sequence[NDArray[np.uint8]],
        embed: bool = True,
        dice: Sequence[bool] | None = None,
        both_ways: bool = False,
        half_turn_below: float | None = None,
    ) -> tuple[NDArray[np.float32], NDArray[np.float32] | None]:
        """One run of the reader over crops (`vision.crops.cut`): each row's class
        probabilities, and, with `embed`, each row's unit-length embedding where the model gives
        one (`vision.training.embedding`). The rows `dice` marks take their die values'
        probabilities from the reader of dice alone, where there is one (nothing on the other
        columns: a die box is read as a die). A tile row read under `half_turn_below` sure (the
        reader's own bar unless given; 0 reads every tile as cut only) is read again turned half
        round and the two averaged (`HALF_TURN_BELOW`); with
        `both_ways` the embedding is N x 2 x D: as cut and turned (as cut twice for a row not
        turned), as an enrolled set holds its tiles (`vision.enrol.KnownSet`)."""
        blob = as_input(crops)
        outputs = self.session.run(self.outputs if embed else self.outputs[:1],
                                   {self.input.name: blob})  # fmt: skip
        probs = outputs[0]
        is_die = np.zeros(len(crops), bool) if dice is None else np.asarray(dice, bool)
        tiles = self._tiles
        both = both_ways and len(outputs) > 1
        turned_embedding = outputs[1].copy() if both else None
        bar = self.half_turn_below if half_turn_below is None else half_turn_below
        if len(tiles):
            unsure = ~is_die & (probs[:, tiles].max(1) < bar)
            if unsure.any():
                turned = np.ascontiguousarray(blob[unsure][:, :, ::-1, ::-1])
                again = self.session.run(self.outputs if both else self.outputs[:1],
                                         {self.input.name: turned})  # fmt: skip
                probs = probs.copy()
                probs[unsure] = (probs[unsure] + again[0]) / 2
                if turned_embedding is not None:
                    turned_embedding[unsure] = again[1]
        rows = np.flatnonzero(is_die)
        if self.dice is not None and len(rows):
            probs = probs.copy()
            probs[rows] = 0.0
            dice_blob = blob[rows]
            turns = [np.rot90(dice_blob, k, axes=(2, 3)) for k in range(DICE_TURNS)]
            blob_turns = np.ascontiguousarray(np.concatenate(turns))
            seen = self.dice.run(None, {self.dice_input: blob_turns})[0]
            probs[np.ix_(rows, self.dice_columns)] = seen.reshape(DICE_TURNS, len(rows), -1).mean(0)
        if len(outputs) == 1:
            return probs, None
        embedding = outputs[1]
        if turned_embedding is not None:
            embedding = np.stack([embedding, turned_embedding], 1)
        length = np.linalg.norm(embedding, axis=-1, keepdims=True)
        return probs, embedding / np.maximum(length, 1e-9)

    def read(self, image: NDArray[np.uint8], detections: Detections) -> Detections:
        """Label each box with what the reader sees, within what the detector found: a tile or
        back box becomes a face or `back` (the reader sees pips better), a die box a die value
        (and how sure the flatness model is that it lies flat). With a `known_set`, a face-up
        tile is read by the set's own faces too (`vision.enrol.KnownSet.combine`), and, where
        the set holds looks, judged against them (`set_distance`)."""
        if not len(detections):
            return detections
        dice = [kind == "die" for kind in detections.labels]
        crops = [cut(image, c, die) for c, die in zip(detections.corners, dice, strict=True)]
        known = self.known_set is not None
        probs, embedding = self.look_at(crops, known, dice, both_ways=known)
        if self.known_set is not None and embedding is not None:
            probs = self.known_set.combine(probs, embedding, self.names, detections.labels)
        labels, confidence = [], []
        face_up = np.zeros(len(detections))
        for row, kind in enumerate(detections.labels):
            allowed = self._dice if kind == "die" else self._tiles
            index = allowed[int(np.argmax(probs[row, allowed]))]
            labels.append(self.names[int(index)])
            confidence.append(float(probs[row, index]))
            if kind != "die":
                tile = probs[row, self._tiles].sum()
                face_up[row] = (tile - probs[row, self.back_index]) / max(float(tile), 1e-9)
        flat = None
        if self.flatness is not None:
            dice = [row for row, kind in enumerate(detections.labels) if kind == "die"]
            flat = np.ones(len(detections))
            if dice:
                wide = [cut(image, detections.corners[row], True, self.lean_margin) for row in dice]
                blob = as_input(wide)
                name = self.flatness.get_inputs()[0].name
                flat[dice] = self.flatness.run(None, {name: blob})[0][:, self.flat_index]
        distance = self._set_distance(crops, labels, face_up)
        return detections.with_labels(
            tuple(labels), np.asarray(confidence), flat, face_up, distance
        )

    def _set_distance(
        self, crops: list[NDArray[np.uint8]], labels: list[str], face_up: NDArray[np.float64]
    ) -> NDArray[np.float64] | None:
        """How far each face-up tile's look lies from the enrolled set's; None without an
        enrolled set with looks or without the set-look model."""
        known = self.known_set
        if known is None or known.looks is None or self.looker is None:
            return None
        distance = np.zeros(len(crops))
        judged = [row for row, label in enumerate(labels) if not label.startswith("die")
                  and label != "back" and face_up[row] >= JUDGED_FACE_UP]  # fmt: skip
        if judged:
            distance[judged] = known.distance(self.looker.embed([crops[row] for row in judged]))
        return distance

    @property
    def _dice(self) -> NDArray[np.int64]:
        return np.array([i for i, n in self.names.items() if n.startswith("die-")])

    @property
    def _tiles(self) -> NDArray[np.int64]:
        return np.array([i for i, n in self.names.items() if not n.startswith("die-")])
