"""Tile and dice detection on the edge box: onnxruntime only, no torch.

Two stages, each a small object with one verb:
- `Detector.detect(image)`: YOLO11n-OBB on the whole frame finds face-up tiles, face-down tiles
  and dice as oriented boxes;
- `Reader.read(image, detections)`: each box is rectified from the full-resolution frame and a
  YOLO11n-cls model reads it: a tile's face in pip notation, `back`, or `die-N`.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import cv2
import numpy as np
import onnxruntime as ort
from numpy.typing import NDArray

from vision.crops import CROP, cut
from vision.detections import Detections

MODELS = Path(os.environ.get("PAIGOW_MODELS", Path(__file__).resolve().parents[1] / "models"))
"""The shipped ONNX files: the repository's models/, or $PAIGOW_MODELS (the container's)."""
DETECTOR_CLASSES = ("tile", "back", "die")
DETECTOR_SCALE = 0.5
"""The detector sees a full-table 1920x1080 frame at half size (960x544): a tile is then about
11 x 27 px and a die 6 px, enough to find them (the reader reads them at full resolution). At a
third (640 px), dice shrink to 4 px and the CPU-trained candidate found 9% of them."""
DETECTOR_INPUT = (544, 960)
"""The exported detector's input, height x width: a 1920x1080 frame at `DETECTOR_SCALE`."""


def _session(path: Path, threads: int) -> ort.InferenceSession:
    if not path.exists():
        raise FileNotFoundError(f"model file {path} is missing")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _names(session: ort.InferenceSession) -> dict[int, str]:
    meta = session.get_modelmeta().custom_metadata_map
    return {int(k): str(v) for k, v in ast.literal_eval(meta["names"]).items()}


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
    return cv2.dnn.blobFromImage(canvas, 1 / 255, swapRB=True), scale, left, top


class Detector:
    """YOLO11n-OBB over the whole frame, letterboxed to the model's input size."""

    def __init__(self, path: Path = MODELS / "detector.onnx", threads: int = 2,
                 confidence: float = 0.35, iou: float = 0.5) -> None:  # fmt: skip
        self.session = _session(path, threads)
        self.input = self.session.get_inputs()[0]
        _, _, self.height, self.width = self.input.shape
        self.names = _names(self.session)
        self.confidence = confidence
        self.iou = iou

    def detect(self, image: NDArray[np.uint8]) -> Detections:
        blob, scale, left, top = letterbox(image, self.height, self.width)
        output = self.session.run(None, {self.input.name: blob})[0][0]  # (4 + classes + 1, anchors)
        classes = len(self.names)
        boxes = output[:4].T
        scores = output[4 : 4 + classes].T
        angles = output[4 + classes]
        best = scores.argmax(1)
        conf = scores[np.arange(len(best)), best]
        keep = conf >= self.confidence
        boxes, best, conf, angles = boxes[keep], best[keep], conf[keep], angles[keep]
        if not len(conf):
            return Detections.empty()
        rotated = [((float(cx), float(cy)), (float(bw), float(bh)), float(np.degrees(a)))
                   for (cx, cy, bw, bh), a in zip(boxes, angles, strict=True)]  # fmt: skip
        chosen = cv2.dnn.NMSBoxesRotated(rotated, conf.tolist(), self.confidence, self.iou)
        chosen = np.asarray(chosen, dtype=np.int64).reshape(-1)
        corners = np.array([cv2.boxPoints(rotated[i]) for i in chosen], np.float64)
        corners = (corners - [left, top]) / scale
        labels = tuple(self.names[int(best[i])] for i in chosen)
        return Detections(corners.reshape(-1, 4, 2), conf[chosen].astype(np.float64), labels)


class Reader:
    """Reads each detected tile and die from its rectified full-resolution crop."""

    def __init__(self, path: Path = MODELS / "reader.onnx", threads: int = 2) -> None:
        self.session = _session(path, threads)
        self.input = self.session.get_inputs()[0]
        self.names = _names(self.session)

    def read(self, image: NDArray[np.uint8], detections: Detections) -> Detections:
        """Label each box with what the reader sees, within what the detector found: a tile or
        back box becomes a face or `back` (the reader sees pips better), a die box a die value."""
        if not len(detections):
            return detections
        crops = [
            cut(image, c, kind == "die")
            for c, kind in zip(detections.corners, detections.labels, strict=True)
        ]
        blob = cv2.dnn.blobFromImages(crops, 1 / 255, (CROP, CROP), swapRB=True)
        probs = self.session.run(None, {self.input.name: blob})[0]
        labels, confidence = [], []
        for row, kind in enumerate(detections.labels):
            allowed = self._dice if kind == "die" else self._tiles
            index = allowed[int(np.argmax(probs[row, allowed]))]
            labels.append(self.names[int(index)])
            confidence.append(float(probs[row, index]))
        return detections.with_labels(tuple(labels), np.asarray(confidence))

    @property
    def _dice(self) -> NDArray[np.int64]:
        return np.array([i for i, n in self.names.items() if n.startswith("die-")])

    @property
    def _tiles(self) -> NDArray[np.int64]:
        return np.array([i for i, n in self.names.items() if not n.startswith("die-")])
