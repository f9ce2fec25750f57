"""One detections container, passed between vision stages (like supervision's Detections)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import cv2
import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class Detections:
    """N detections as columns: oriented corners, their axis-aligned boxes, confidence, label."""

    corners: NDArray[np.float64]  # N x 4 x 2 image pixels
    confidence: NDArray[np.float64]  # N
    labels: tuple[str, ...]  # N: `1-1`..`6-6`, `back`, `die-1`..`die-6` (or a detector class)
    label_confidence: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    table_xy: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 2)))
    """N x 2 table millimetres of each centre, once `Locate` has run."""
    zones: tuple[str, ...] = ()
    """N: the table zone each centre lies in (`p1`..`p8`, `bank`, `stack`, `dice` or ``)."""
    flat: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    """N: how sure the flatness reader is that a die lies flat (1 for a tile), once it has read
    the dice; empty otherwise."""
    face_up: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    """N: how sure the reader is that a tile lies face up, whichever its face (its probability
    of any face among the tile classes; 0 for a die), once it has read the tiles; empty
    otherwise. A tile half under another shows a pip or two: face up for sure, its face not."""
    set_distance: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    """N: how far each face-up tile's look lies from the enrolled set's (`vision.enrol.
    look_distance`; 0 for a die, a back or a tile not judged), once read by an enrolled set;
    empty otherwise."""

    def __post_init__(self) -> None:
        n = len(self.labels)
        if self.corners.shape != (n, 4, 2) or self.confidence.shape != (n,):
            raise ValueError("detections columns must all have one row per detection")
        if any(
            c.shape not in ((0,), (n,))
            for c in (self.label_confidence, self.flat, self.face_up, self.set_distance)
        ):
            raise ValueError(
                "label_confidence, flat, face_up and set_distance have one value per detection"
            )
        if self.table_xy.shape not in ((0, 2), (n, 2)) or len(self.zones) not in (0, n):
            raise ValueError("table_xy and zones have one row per detection")

    def __setstate__(self, state: dict[str, object]) -> None:
        """Detections pickled before a column was added (cached rounds) read it as empty."""
        self.__dict__.update({"face_up": np.zeros(0), "set_distance": np.zeros(0)} | state)

    @classmethod
    def empty(cls) -> Detections:
        return cls(np.zeros((0, 4, 2)), np.zeros(0), ())

    @classmethod
    def concat(cls, parts: list[Detections]) -> Detections:
        """The rows of all `parts`, in order. A column that only some non-empty parts hold
        cannot be joined: a label confidence would end up against the wrong row. The set
        distance is the exception: a part kept from a frame read before the table's set was
        enrolled was not judged against it, which its rows say as 0."""
        rows = [part for part in parts if len(part)]
        if not rows:
            return cls.empty()

        def column(name: str, empty: object) -> object:
            held = [len(getattr(part, name)) > 0 for part in rows]
            if not any(held):
                return empty
            if not all(held) and name != "set_distance":
                raise ValueError(f"only some detections hold {name}")
            # a part read before a set was enrolled (or after it was dropped): not judged
            values = [getattr(part, name) if len(getattr(part, name)) else np.zeros(len(part))
                      for part in rows]  # fmt: skip
            return sum(values, ()) if name == "zones" else np.concatenate(values)

        return cls(
            np.concatenate([part.corners for part in rows]),
            np.concatenate([part.confidence for part in rows]),
            sum((part.labels for part in rows), ()),
            column("label_confidence", np.zeros(0)),  # type: ignore[arg-type]
            column("table_xy", np.zeros((0, 2))),  # type: ignore[arg-type]
            column("zones", ()),  # type: ignore[arg-type]
            column("flat", np.zeros(0)),  # type: ignore[arg-type]
            column("face_up", np.zeros(0)),  # type: ignore[arg-type]
            column("set_distance", np.zeros(0)),  # type: ignore[arg-type]
        )

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def xyxy(self) -> NDArray[np.float64]:
        if not len(self):
            return np.zeros((0, 4))
        return np.concatenate([self.corners.min(axis=1), self.corners.max(axis=1)], axis=1)

    def __getitem__(self, index: NDArray[np.bool_] | NDArray[np.int64]) -> Detections:
        keep = np.arange(len(self))[index]
        conf = self.label_confidence[keep] if len(self.label_confidence) else self.label_confidence
        xy = self.table_xy[keep] if len(self.table_xy) else self.table_xy
        zones = tuple(self.zones[i] for i in keep) if self.zones else ()
        flat = self.flat[keep] if len(self.flat) else self.flat
        up = self.face_up[keep] if len(self.face_up) else self.face_up
        far = self.set_distance[keep] if len(self.set_distance) else self.set_distance
        labels = tuple(self.labels[i] for i in keep)
        return Detections(
            self.corners[keep], self.confidence[keep], labels, conf, xy, zones, flat, up, far
        )

    def with_labels(
        self,
        labels: tuple[str, ...],
        confidence: NDArray[np.float64],
        flat: NDArray[np.float64] | None = None,
        face_up: NDArray[np.float64] | None = None,
        set_distance: NDArray[np.float64] | None = None,
    ) -> Detections:
        return replace(
            self,
            labels=labels,
            label_confidence=confidence,
            flat=self.flat if flat is None else flat,
            face_up=self.face_up if face_up is None else face_up,
            set_distance=self.set_distance if set_distance is None else set_distance,
        )

    def with_places(self, table_xy: NDArray[np.float64], zones: tuple[str, ...]) -> Detections:
        return replace(self, table_xy=table_xy, zones=zones)

    @property
    def label_scores(self) -> NDArray[np.float64]:
        """How sure each label is: the reader's confidence, else the detector's."""
        return self.label_confidence if len(self.label_confidence) else self.confidence

    def to_json(self) -> list[dict[str, object]]:
        rows = []
        for i, label in enumerate(self.labels):
            x1, y1, x2, y2 = self.xyxy[i]
            rows.append({
                "label": label,
                "confidence": round(float(self.confidence[i]), 4),
                "box": [round(float(v), 1) for v in (x1, y1, x2, y2)],
                "corners": np.round(self.corners[i], 1).tolist(),
            })  # fmt: skip
        return rows


def box_sides(corners: NDArray[np.float64]) -> NDArray[np.float64]:
    """N x 2: each box's (N x 4 x 2 corners) longer and shorter side, the mean of its two
    opposite sides, in the corners' units."""
    sides = np.linalg.norm(corners - np.roll(corners, -1, axis=1), axis=2)
    one, other = (sides[:, 0] + sides[:, 2]) / 2, (sides[:, 1] + sides[:, 3]) / 2
    return np.stack([np.maximum(one, other), np.minimum(one, other)], axis=1)


def polygon_iou(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """How much two oriented boxes (4 corners each) overlap: intersection over union."""
    pa, pb = a.astype(np.float32), b.astype(np.float32)
    inter, _ = cv2.intersectConvexConvex(cv2.convexHull(pa), cv2.convexHull(pb))
    union = cv2.contourArea(cv2.convexHull(pa)) + cv2.contourArea(cv2.convexHull(pb)) - inter
    return float(inter / union) if union > 0 else 0.0


def iou_matrix(pred: Detections, truth: list[dict]) -> NDArray[np.float64]:  # type: ignore[type-arg]
    """Each detection's IoU with each known object (`box` and `corners`): the matching behind
    the held-out evaluation and the box's self-check."""
    matrix = np.zeros((len(pred), len(truth)))
    if not len(pred) or not truth:
        return matrix
    pboxes, tboxes = pred.xyxy, np.array([t["box"] for t in truth])
    for i in range(len(pred)):
        overlap = (
            np.minimum(pboxes[i, 2], tboxes[:, 2]) > np.maximum(pboxes[i, 0], tboxes[:, 0])
        ) & (np.minimum(pboxes[i, 3], tboxes[:, 3]) > np.maximum(pboxes[i, 1], tboxes[:, 1]))
        for j in np.flatnonzero(overlap):
            matrix[i, j] = polygon_iou(pred.corners[i], np.asarray(truth[j]["corners"]))
    return matrix
