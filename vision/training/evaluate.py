"""Evaluate the detector and reader on a held-out `paigow synth dataset` test set.

    python3 -m vision.training.evaluate --data datasets/test1080 --out docs/detector.md

Oriented-box IoU matches detections to ground truth. Reported: mAP50-95 and mAP50 over the 28
labels (COCO-style, 101-point), per-class precision and recall at IoU 0.5, tile-face accuracy
(every face-up tile in the ground truth: found and read right) and dice-value accuracy, a
confusion matrix image, and milliseconds per frame by resolution.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import onnxruntime as ort
from numpy.typing import NDArray
from tqdm import tqdm

from vision.crops import REFINED_LEAN_MARGIN
from vision.detections import Detections, iou_matrix, polygon_iou
from vision.detector import (
    DETECTOR_SCALE,
    HALF_TURN_BELOW,
    MARKER_EVERY_S,
    MARKERS_MODEL,
    OVERLAP,
    REFINERS,
    Detector,
    MarkerDetector,
    MarkerWatch,
    Reader,
)
from vision.labels import CLASS_ID, CLASSES, CONTEXT, FACES, MARKERS, WAGER
from vision.synth.dataset import render_sample

IOU_THRESHOLDS = np.linspace(0.5, 0.95, 10)


def average_precision(scores: list[float], hits: list[bool], positives: int) -> float:
    if positives == 0:
        return float("nan")
    order = np.argsort(-np.asarray(scores))
    tp = np.cumsum(np.asarray(hits, dtype=float)[order])
    fp = np.cumsum(1 - np.asarray(hits, dtype=float)[order])
    recall = tp / positives
    precision = tp / np.maximum(tp + fp, 1e-9)
    envelope = np.maximum.accumulate(precision[::-1])[::-1] if len(precision) else precision
    points = np.linspace(0, 1, 101)
    return float(
        np.mean([envelope[recall >= r].max() if (recall >= r).any() else 0.0 for r in points])
    )


Ranked = dict[str, dict[float, tuple[list[float], list[bool]]]]
"""Per label and IoU threshold: each detection's score, and whether it hit an unmatched truth."""


def _rank(
    ranked: Ranked,
    found: Detections,
    truth: list[dict],  # type: ignore[type-arg]
    ious: NDArray[np.float64],
    scores: NDArray[np.float64],
) -> None:
    """COCO-style matching, surest first: each detection takes the best unmatched true object
    of its label at each IoU threshold."""
    for threshold in IOU_THRESHOLDS:
        taken: set[int] = set()
        for i in np.argsort(-scores):
            candidates = [
                j
                for j in range(len(truth))
                if j not in taken
                and truth[j]["label"] == found.labels[i]
                and ious[i, j] >= threshold
            ]
            if candidates:
                taken.add(max(candidates, key=lambda j: ious[i, j]))
            ranked[found.labels[i]][threshold][0].append(float(scores[i]))
            ranked[found.labels[i]][threshold][1].append(bool(candidates))


def _count_markers(counts: dict[str, int], found: Detections, faces: Detections,
                   entry: dict) -> None:  # type: ignore[type-arg]  # fmt: skip
    """The context markers (chung, +4/-4 buttons): each true one found with its own class at
    IoU >= 0.5, each marker box on no marker of its class, and each true one boxed as a face-up
    tile (IoU >= 0.5 with a face box)."""
    truth = [o for o in entry["objects"] if o["labelled"] and o["label"] in MARKERS]
    counts["total"] += len(truth)
    if len(faces) and truth:
        counts["read_as_faces"] += int((iou_matrix(faces, truth) >= 0.5).any(0).sum())
    if not len(found) or not truth:
        counts["on_nothing"] += len(found)
        return
    same = np.array([[f == t["label"] for t in truth] for f in found.labels], bool)
    hit = (iou_matrix(found, truth) >= 0.5) & same
    counts["right"] += int(hit.any(0).sum())
    counts["on_nothing"] += int((~hit.any(1)).sum())


def _count_chips(counts: dict[str, int], found: Detections, entry: dict) -> None:  # type: ignore[type-arg]
    """Stacks of chips (`wager`): each true one found at IoU >= 0.5, each box on none."""
    truth = [o for o in entry["objects"] if o["labelled"] and o["label"] == WAGER]
    hit = iou_matrix(found, truth) >= 0.5
    counts["chips"] += len(truth)
    counts["chips_found"] += int(hit.any(0).sum())
    counts["chip_boxes_on_nothing"] += int((~hit.any(1)).sum())


def evaluate(data: Path, detector: Detector, reader: Reader, limit: int | None = None,
             markers: MarkerDetector | None = None) -> dict:  # type: ignore[type-arg]  # fmt: skip
    """The detector and reader on every frame, and the marker detector where given (as the
    edge box runs it: `MarkerWatch`, which also drops boxes on a marker)."""
    entries = [json.loads(x) for x in (data / "annotations.jsonl").read_text().splitlines()][:limit]
    per_class: Ranked = defaultdict(lambda: {t: ([], []) for t in IOU_THRESHOLDS})
    per_detector: Ranked = defaultdict(lambda: {t: ([], []) for t in IOU_THRESHOLDS})
    positives: dict[str, int] = defaultdict(int)
    confusion = np.zeros((len(CLASSES) + 1, len(CLASSES) + 1), int)  # last: missed / spurious
    faces = {"total": 0, "right": 0, "found": 0}
    dice = {"total": 0, "right": 0, "found": 0}
    fit: dict[str, list[float]] = {"faces": [], "dice": []}  # IoU of each found object's box
    still = {"faces": [0, 0], "dice": [0, 0]}  # (right, total) in frames without motion blur
    context = {"total": 0, "right": 0, "on_nothing": 0, "read_as_faces": 0}
    chips = {"chips": 0, "chips_found": 0, "chip_boxes_on_nothing": 0}
    timings, marker_timings = [], []
    for entry in tqdm(entries, desc="evaluating", unit="img"):
        image = cv2.imread(str(data / entry["image"]))
        start = time.perf_counter()
        found = reader.read(image, detector.detect(image))
        timings.append(time.perf_counter() - start)
        if markers is not None:
            start = time.perf_counter()
            found = MarkerWatch(markers).watch(0.0, image, found)
            marker_timings.append(time.perf_counter() - start)
        is_marker = np.array([label in MARKERS for label in found.labels], bool)
        is_face = np.array([label in FACES for label in found.labels], bool)
        _count_markers(context, found[is_marker], found[is_face], entry)
        _count_chips(chips, found[np.isin(found.labels, [WAGER])], entry)
        found = found[~np.isin(found.labels, CONTEXT)]  # the markers' and the chips' boxes
        truth = [o for o in entry["objects"] if o["labelled"] and o["label"] in CLASS_ID]
        for t in truth:
            positives[t["label"]] += 1
        ious = iou_matrix(found, truth)
        _rank(per_class, found, truth, ious, found.confidence * found.label_confidence)
        _rank(per_detector, found, truth, ious, found.confidence)
        matched_pred: set[int] = set()
        for j, t in enumerate(truth):  # label-agnostic matching at IoU 0.5 for accuracy
            i = int(np.argmax(ious[:, j])) if len(found) else -1
            ok = i >= 0 and ious[i, j] >= 0.5
            gt = CLASSES.index(t["label"])
            if ok:
                matched_pred.add(i)
                confusion[gt, CLASSES.index(found.labels[i])] += 1
            else:
                confusion[gt, -1] += 1
            bucket = (
                dice if t["label"].startswith("die-") else faces if t["label"] != "back" else None
            )
            if bucket is not None:
                bucket["total"] += 1
                bucket["found"] += int(ok)
                bucket["right"] += int(ok and found.labels[i] == t["label"])
                if ok:
                    fit["faces" if bucket is faces else "dice"].append(float(ious[i, j]))
                if _still(entry, t):
                    key = "faces" if bucket is faces else "dice"
                    still[key][0] += int(ok and found.labels[i] == t["label"])
                    still[key][1] += 1
        for i in set(range(len(found))) - matched_pred:
            confusion[-1, CLASSES.index(found.labels[i])] += 1
    aps = {c: [average_precision(*per_class[c][t], positives[c]) for t in IOU_THRESHOLDS]
           for c in CLASSES if positives[c]}  # fmt: skip
    aps_detector = [np.mean([average_precision(*per_detector[c][t], positives[c])
                             for t in IOU_THRESHOLDS]) for c in CLASSES if positives[c]]  # fmt: skip
    table = {}
    for c in CLASSES:
        _, hits = per_class[c][0.5] if c in per_class else ([], [])
        tp = sum(hits)
        table[c] = {"instances": positives[c], "precision": tp / len(hits) if hits else 0.0,
                    "recall": tp / positives[c] if positives[c] else 0.0,
                    "ap50": aps[c][0] if c in aps else None,
                    "ap50_95": float(np.mean(aps[c])) if c in aps else None}  # fmt: skip
    return {
        "images": len(entries),
        "map50": float(np.mean([a[0] for a in aps.values()])),
        "map50_95": float(np.mean([np.mean(a) for a in aps.values()])),
        "map50_95_detector_score": float(np.mean(aps_detector)),
        "tile_face_accuracy": faces["right"] / max(faces["total"], 1),
        "tile_face_found": faces["found"] / max(faces["total"], 1),
        "tile_face_read_given_found": faces["right"] / max(faces["found"], 1),
        "tile_faces": faces["total"],
        "face_boxes_on_nothing": int(confusion[-1, : len(FACES)].sum()),
        "dice_accuracy": dice["right"] / max(dice["total"], 1),
        "dice_found": dice["found"] / max(dice["total"], 1),
        "dice_read_given_found": dice["right"] / max(dice["found"], 1),
        "dice": dice["total"],
        "tile_face_fit": float(np.mean(fit["faces"])) if fit["faces"] else 0.0,
        "dice_fit": float(np.mean(fit["dice"])) if fit["dice"] else 0.0,
        "tile_face_accuracy_still": still["faces"][0] / max(still["faces"][1], 1),
        "tile_faces_still": still["faces"][1],
        "dice_accuracy_still": still["dice"][0] / max(still["dice"][1], 1),
        "dice_still": still["dice"][1],
        "markers": context["total"],
        "markers_found_right": context["right"] / max(context["total"], 1),
        "marker_boxes_on_nothing": context["on_nothing"],
        "markers_read_as_faces": context["read_as_faces"],
        "chips": chips["chips"],
        "chips_found": chips["chips_found"] / max(chips["chips"], 1),
        "chip_boxes_on_nothing": chips["chip_boxes_on_nothing"],
        "ms_per_frame_in_eval": 1000 * float(np.median(timings)),
        "ms_per_marker_look_in_eval": 1000 * float(np.median(marker_timings))
        if marker_timings
        else None,
        "per_class": table,
        "confusion": confusion.tolist(),
    }


def speed(detector: Detector, reader: Reader, repeats: int = 15) -> dict[str, float]:
    """Median milliseconds to detect and read one full-table frame, by resolution."""
    return {f"{width}x{height}": _median_ms(lambda image: reader.read(image, detector.detect(image)),
                                            (width, height), repeats)
            for width, height in ((1280, 720), (1920, 1080), (2560, 1440), (3840, 2160))}  # fmt: skip


def marker_speed(markers: MarkerDetector, repeats: int = 15) -> float:
    """Median milliseconds of one look for the markers in a full-table 1080p frame (detector
    and face reader)."""
    return _median_ms(markers.detect, (1920, 1080), repeats)


def _median_ms(work: Callable[[NDArray[np.uint8]], object], size: tuple[int, int],
               repeats: int) -> float:  # fmt: skip
    """`work` on the timing frame (seed 4242, never trained on) at `size`, the first two runs
    (warming up) left out."""
    image = render_sample(4242, 0, size, close_ups=0.0).rendering.image
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work(image)
        times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times[2:]))


def cpu() -> str:
    """The CPU the speed was measured on: whether it has 8-bit dot products (VNNI) halves or
    doubles the detector's time, and the machine changes from session to session."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    pairs = (line.split(":", 1) for line in info.splitlines() if ":" in line)
    fields = {key.strip(): value.strip() for key, value in pairs}  # every core says the same
    model = fields.get("model name", "unknown CPU")
    flags = set(fields.get("flags", "").split())
    vnni = "with VNNI" if flags & {"avx512_vnni", "avx_vnni"} else "without VNNI"
    simd = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    return f"{model}, {os.cpu_count()} cores, {simd} {vnni}"


def design_measurements(data: Path) -> dict[str, float]:
    """Geometry behind the design, from the annotations alone: how often neighbours defeat
    axis-aligned boxes, and how big a face-up tile is in the frame."""
    entries = [json.loads(x) for x in (data / "annotations.jsonl").read_text().splitlines()]
    crowded_aabb = crowded_obb = objects = 0
    widths, lengths = [], []
    for entry in entries:
        truth = [o for o in entry["objects"] if o["labelled"] and o["label"] in CLASS_ID]
        for a in range(len(truth)):
            objects += 1
            box_a = np.asarray(truth[a]["box"])
            aabb = obb = 0.0
            for b in range(len(truth)):
                if a == b:
                    continue
                box_b = np.asarray(truth[b]["box"])
                iw = min(box_a[2], box_b[2]) - max(box_a[0], box_b[0])
                ih = min(box_a[3], box_b[3]) - max(box_a[1], box_b[1])
                if iw <= 0 or ih <= 0:
                    continue
                inter = iw * ih
                union = np.prod(box_a[2:] - box_a[:2]) + np.prod(box_b[2:] - box_b[:2]) - inter
                aabb = max(aabb, inter / union)
                obb = max(
                    obb,
                    polygon_iou(np.asarray(truth[a]["corners"]), np.asarray(truth[b]["corners"])),
                )
            crowded_aabb += aabb >= 0.5
            crowded_obb += obb >= 0.5
        for o in truth:
            if _fully_visible_face(o):
                c = np.asarray(o["corners"])
                sides = sorted([np.linalg.norm(c[1] - c[0]), np.linalg.norm(c[2] - c[1])])
                widths.append(sides[0])
                lengths.append(sides[1])
    return {
        "objects": objects,
        "share_with_aabb_iou_over_0.5": crowded_aabb / max(objects, 1),
        "share_with_obb_iou_over_0.5": crowded_obb / max(objects, 1),
        "tile_width_px_median": float(np.median(widths)) if widths else 0.0,
        "tile_length_px_median": float(np.median(lengths)) if lengths else 0.0,
    }


def _still(entry: dict, obj: dict) -> bool:  # type: ignore[type-arg]
    """A sharp frame (no camera shake) and, for a die, lying flat: a cocked die has no value to
    read (the rules call for a re-roll) and a shaken frame smears a 13-px die's pips together."""
    return entry.get("motion_blur", 0) == 0 and obj["tags"].get("flat", True) is not False


def _fully_visible_face(obj: dict) -> bool:  # type: ignore[type-arg]
    label = obj["label"]
    return label != "back" and not label.startswith("die-") and obj["visible"] >= 0.9


def refiner_picture(data: Path, out: Path, frames: int = 40) -> None:
    """Around the dice and a face-up tile of the first test frame with the most dice in view:
    the detector's own boxes (left) and the refined ones (right), the true outlines in green."""
    entries = [json.loads(x) for x in (data / "annotations.jsonl").read_text().splitlines()]

    def dice_of(entry: dict) -> list[dict]:  # type: ignore[type-arg]
        return [o for o in entry["objects"] if o["labelled"] and o["label"].startswith("die-")]

    def with_a_face(entry: dict) -> bool:  # type: ignore[type-arg]
        return any(o["labelled"] and _fully_visible_face(o) for o in entry["objects"])

    shown = [e for e in entries[:frames] if with_a_face(e)] or [
        e for e in entries if with_a_face(e)
    ]
    if not shown:
        return  # no face-up tile in full view to show
    entry = max(shown, key=lambda e: min(len(dice_of(e)), 3))
    truth = [o for o in entry["objects"] if o["labelled"]]
    dice = dice_of(entry) or truth
    image = cv2.imread(str(data / entry["image"]))
    tile = next(o for o in truth if _fully_visible_face(o))
    centres = [np.mean([np.mean(o["corners"], axis=0) for o in dice], axis=0),
               np.mean(tile["corners"], axis=0)]  # fmt: skip
    found = [Detector(refiner=None).detect(image), Detector().detect(image)]
    rows = []
    for centre in centres:
        x0, y0 = np.clip(centre - 40, 0, [image.shape[1] - 80, image.shape[0] - 80]).astype(int)
        views = []
        for boxes in found:
            view = image.copy()
            for o in truth:
                outline = np.round(o["corners"]).astype(np.int32)
                cv2.polylines(view, [outline], True, (0, 220, 0), 1, cv2.LINE_AA)
            for corners, kind in zip(boxes.corners, boxes.labels, strict=True):
                colour = (0, 0, 255) if kind == "die" else (0, 140, 255)
                cv2.polylines(view, [np.round(corners).astype(np.int32)], True, colour, 1,
                              cv2.LINE_AA)  # fmt: skip
            patch = cv2.resize(view[y0 : y0 + 80, x0 : x0 + 80], None, fx=4, fy=4,
                               interpolation=cv2.INTER_NEAREST)  # fmt: skip
            views += [patch, np.full((patch.shape[0], 12, 3), 255, np.uint8)]
        rows += [np.hstack(views[:-1]), np.full((12, views[0].shape[1] * 2 + 12, 3), 255, np.uint8)]
    cv2.imwrite(str(out), np.vstack(rows[:-1]), [cv2.IMWRITE_JPEG_QUALITY, 88])


def confusion_image(confusion: NDArray[np.int64], out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [*CLASSES, "none"]
    matrix = np.asarray(confusion, dtype=float)
    norm = matrix / np.maximum(matrix.sum(1, keepdims=True), 1)
    fig, ax = plt.subplots(figsize=(11, 10))
    ax.imshow(norm, cmap="Blues", vmin=0, vmax=1)
    ax.set_xticks(range(len(labels)), labels, rotation=90)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel("predicted (none: no detection)")
    ax.set_ylabel("ground truth (none: spurious detection)")
    for i, j in zip(*np.nonzero(matrix), strict=True):
        ax.text(j, i, int(matrix[i, j]), ha="center", va="center", fontsize=6,
                color="white" if norm[i, j] > 0.5 else "black")  # fmt: skip
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def report(m: dict) -> str:  # type: ignore[type-arg]
    """docs/detector.md, from the measured metrics."""
    d = m["design"]
    speed_rows = "\n".join(
        f"| {res} | {ms:.0f} | {1000 / ms:.1f} |" for res, ms in m["ms_per_frame"].items()
    )
    class_rows = "\n".join(
        f"| `{c}` | {v['instances']} | {v['precision']:.3f} | {v['recall']:.3f} | "
        + (f"{v['ap50']:.3f} | {v['ap50_95']:.3f} |" if v["ap50"] is not None else "- | - |")
        for c, v in m["per_class"].items()
    )
    fv = m["fully_visible"]

    def met(ok: bool) -> str:
        return "yes" if ok else "no"

    fps = m["ms_per_frame"]["1920x1080"]
    return f"""# Detector and reader: measured on a held-out synthetic test set

Generated by `python3 -m vision.training.evaluate --data datasets/test1080` (this file, `models/metrics.json`
and `docs/detector-confusion.png`). Test set: `{m["test_set"]}` -- {m["images"]} full-table
1920x1080 frames from a seed never used for training, rendered and read with {m["software"]}. Models: `models/detector.onnx`
(YOLO11n-OBB, 3 classes, 960 x 544 whole-frame input, 8-bit with 7-bit weights),
`models/refiner.onnx` and `models/refiner-2.onnx` (a small box regressor, two stages) and `models/reader.onnx` (YOLO11n-cls, 28 classes){_dice_model(m)}{_markers_models(m)}; see `models/MODEL_CARD.md`
for how they were trained.

## Targets

| target | measured | met |
|---|---|---|
| tile-face accuracy >= 99.5%: every labelled face-up tile, found and read right | {100 * m["tile_face_accuracy"]:.2f}% of {m["tile_faces"]} | {met(m["tile_face_accuracy"] >= 0.995)} |
| the same, frames without camera shake | {100 * m["tile_face_accuracy_still"]:.2f}% of {m["tile_faces_still"]} | {met(m["tile_face_accuracy_still"] >= 0.995)} |
| dice value accuracy >= 99.5%: every labelled die, found and read right | {100 * m["dice_accuracy"]:.2f}% of {m["dice"]} | {met(m["dice_accuracy"] >= 0.995)} |
| the same, flat dice in frames without camera shake | {100 * m["dice_accuracy_still"]:.2f}% of {m["dice_still"]} | {met(m["dice_accuracy_still"] >= 0.995)} |
| mAP50-95 >= 0.85 (28 labels, oriented IoU) | {m["map50_95"]:.4f} | {met(m["map50_95"] >= 0.85)} |
| 1920x1080 frame in <= 100 ms (10 fps) on this 2-core CPU ({m["cpu"]}) | {fps:.0f} ms | {met(fps <= 100)} |

The targets are the whole test set's. A fifth of its frames carry a shaken camera's motion
blur (2-6 px, the data set's `motion_blur`), and some dice lie cocked against another; the
"without camera shake" rows separate those because the round follower reads dice only once they
have lain still for several frames, and a cocked die has no value (the rules call a re-roll).

For mAP each detection is scored as a two-stage detector scores it: how sure the detector is
that a tile (or die) lies there, times how sure the reader is of its face (or value). Scored by
the detector's confidence alone, mAP50-95 is
{m["map50_95_detector_score"]:.3f}: a tile the reader hesitates over then ranks with the surest.

Where the misses come from:

- detection: {100 * m["tile_face_found"]:.1f}% of face-up tiles and {100 * m["dice_found"]:.1f}% of
  dice are found at oriented IoU >= 0.5; of those found, {100 * m["tile_face_read_given_found"]:.2f}%
  of tiles and {100 * m["dice_read_given_found"]:.2f}% of dice are read right; mAP50 is {m["map50"]:.3f}.
- visibility: the test set labels any object with at least 40% of its face in view. Reading the
  ground-truth boxes, tiles with at least 90% in view read right {100 * fv["tiles"]:.2f}% of the
  time ({fv["tiles_n"]} tiles), dice {100 * fv["dice"]:.2f}% ({fv["dice_n"]} dice;
  {100 * fv["dice_still"]:.2f}% of the {fv["dice_still_n"]} flat ones in sharp frames); tiles
  partly covered (40-90% in view) {100 * fv["partial_tiles"]:.1f}% ({fv["partial_tiles_n"]}): with
  one end hidden a face can be undecidable.

## Design, with the numbers behind it

- **Two stages.** A face-up tile in a 1920x1080 full-table frame is about
  {d["tile_width_px_median"]:.0f} x {d["tile_length_px_median"]:.0f} px (median) and a die about
  13 px. The detector only has to find face-up tiles, backs and dice; the reader reads each
  rectified 64 x 64 crop cut from the full-resolution frame. On ground-truth boxes it reads
  {100 * d["read_accuracy_native_crops"]:.2f}% of {d["tiles_read"]} fully visible face-up tiles right
  from full-resolution crops and {100 * d["read_accuracy_crops_at_detector_scale"]:.2f}% from crops
  of the frame at the detector's (half) scale.
- **Half size, not a third.** The detector sees the frame at 960 x 544. An earlier 640 x 384
  candidate made dice 4 px wide and found 9% of them; at half size a die is 6-7 px. It trains on
  320 x 320 crops of half-size frames (objects at the size it will see them, a ninth of a full
  frame's cost per image on a CPU) and runs on the whole half-size frame at once.
- **A closer look at the dice.** At half size a die is 6 px and touching dice blur together.
  Every die candidate of the whole-frame pass (confidence >= 0.05) gets a 400 x 400 px window of
  the full-resolution frame, seen at 0.8 scale (a die 10 px); the dice found there replace the
  whole-frame pass's, and one die seen twice (two boxes turned 45 degrees apart) is kept once.
  Dice found: {100 * m["dice_found"]:.1f}% with the closer look, {100 * m["without_zoom"]["dice_found"]:.1f}% without
  (dice value accuracy {100 * m["dice_accuracy"]:.1f}% against {100 * m["without_zoom"]["dice_accuracy"]:.1f}%).
- **Refined boxes.** The CPU-trained detector boxes loosely; a small network looks at each box
  in a crop 1.6 times its size (a die's: twice) and moves it onto its object (`vision/refine.py`),
  and a second one, trained on the first one's boxes, looks again closer (1.3 times; a die's 1.6).
  A found face-up tile's box overlaps it by {m["tile_face_fit"]:.3f} at the mean
  ({m["without_refiner"]["tile_face_fit"]:.3f} without), a found die's by {m["dice_fit"]:.3f}
  ({m["without_refiner"]["dice_fit"]:.3f}); mAP50-95 {m["map50_95"]:.3f} against
  {m["without_refiner"]["map50_95"]:.3f}, dice found {100 * m["dice_found"]:.1f}% against
  {100 * m["without_refiner"]["dice_found"]:.1f}% and read right {100 * m["dice_accuracy"]:.1f}% against
  {100 * m["without_refiner"]["dice_accuracy"]:.1f}%, faces read right {100 * m["tile_face_accuracy"]:.2f}% against
  {100 * m["without_refiner"]["tile_face_accuracy"]:.2f}%. The second stage's share: with the first
  stage alone tiles overlap by {m["first_stage_only"]["tile_face_fit"]:.3f}, dice by
  {m["first_stage_only"]["dice_fit"]:.3f}, mAP50-95 {m["first_stage_only"]["map50_95"]:.3f}, faces read right
  {100 * m["first_stage_only"]["tile_face_accuracy"]:.2f}%, dice {100 * m["first_stage_only"]["dice_accuracy"]:.1f}%.
  Below, the detector's boxes (left) and the refined ones (right) on a test frame, the true
  outlines in green:

  ![boxes before and after the refiner](detector-refiner.jpg)
- **Suppression at rotated IoU {OVERLAP}, not 0.5.** A box straddling two tiles that lie side by
  side overlaps each by about a third; at 0.5 it survives and becomes a fifth tile in a hand or
  a third copy of a face. Face boxes on no labelled object: {m["face_boxes_on_nothing"]} at {OVERLAP},
  {m["suppressed_at_0_5"]["face_boxes_on_nothing"]} at 0.5; faces found {100 * m["tile_face_found"]:.1f}% against
  {100 * m["suppressed_at_0_5"]["tile_face_found"]:.1f}% (`benchmarks/overlap.py` compares more thresholds).
{_half_turn_bullet(m)}{_markers_bullet(m)}- **8-bit detector, 7-bit weights.** The shipped detector is quantised with onnxruntime (static,
  per-channel, calibrated on 40 training frames; the head's output layers stay float): on 80
  test frames it scored the float model's mAP50-95 (0.419 against 0.419) in about 60% of its
  time on a CPU with VNNI. Its weights are kept to 7 bits: a CPU without VNNI
  (AVX2 only) sums pairs of 8-bit products in 16 bits, which overflow with full 8-bit weights.
  On such a CPU (AMD EPYC, 2 cores) the detector quantised with 8-bit weights found
  30 dice a frame where there were 2 (die precision 0.02-0.78, mAP50-95 0.840); taken back to
  float (`vision.training.quantize.float_from_qdq`) and quantised again with 7-bit weights it scored
  mAP50-95 0.855, the float model 0.856, faces 94.52% both, dice 92.1% and 91.8%, in the same
  time on that CPU (time both side by side: `python3 benchmarks/pipeline.py --detector
  FLOAT.onnx`, then without `--detector`).
- **Oriented boxes.** In the test set {100 * d["share_with_aabb_iou_over_0.5"]:.2f}% of labelled
  objects overlap a neighbour at axis-aligned IoU >= 0.5 (where axis-aligned NMS would drop
  one), and {100 * d["share_with_obb_iou_over_0.5"]:.2f}% at oriented IoU. The conflict is rare on
  these layouts, but the oriented box is what lets the reader rectify a rotated tile, so the
  detector is YOLO11n-OBB.

## Speed (onnxruntime, 2 threads, detector + refiner + reader, one full-table frame)

| frame | ms | frames/s |
|---|---|---|
{speed_rows}

The whole-frame pass always runs at 960 x 544 (letterboxed), so its cost is flat; the closer
look costs one 320 x 320 pass per die window (one or two on a table with dice out); the
refiner's and the reader's cost grows with the number of objects (about 0.4 ms a box for each
refiner stage), not the resolution; resizing the frame is the only part
that scales with pixels. Measured on {m["cpu"]} with nothing else running
(`python3 -m vision.training.evaluate --speed-only`); a shared machine's speed swings by a
quarter from run to run, so time a change side by side
(`python3 benchmarks/pipeline.py --refiner-stages 1`, then without it, times the second
refiner stage).

These are whole frames. By default the edge box and `paigow replay` run the
models only around what changed since they last looked there and around the tiles they were
unsure of (`vision/reuse.py`, `docs/rounds.md`): a 1080p replay 1.8 times faster here (2026-11-28), with
one false alert and one missed swap more than whole frames over 231 rounds
(`docs/benchmarks.md`, `docs/accuracy.md`); `analysis.reuse: false` or
`paigow replay --whole-frames` analyse every frame whole.

## Per class (IoU 0.5 for precision and recall)

| class | instances | precision | recall | AP50 | AP50-95 |
|---|---|---|---|---|---|
{class_rows}

![confusion matrix](detector-confusion.png)
{_flatness_section(m.get("flatness"))}{_beyond_section(m.get("families"), m.get("real_dice"), m.get("real_dice_table"))}"""


def _beyond_section(families: dict | None, real: dict | None, table: dict | None = None) -> str:  # type: ignore[type-arg]
    """Tiles and dice the house look did not draw: each appearance family's own test set
    (`vision/synth/appearance.py`), and real photographs of dice, on their boxes and at the
    table's scale."""
    if not families and not real and not table:
        return ""
    section = """
## Beyond the house look
"""
    if families:
        rows = "\n".join(
            f"| {name} | `{f['test_set']}` | {100 * f['tile_face_accuracy']:.2f}% of "
            f"{f['tile_faces']} | {100 * f['dice_accuracy']:.2f}% of {f['dice']} "
            f"| {100 * f['tile_face_found']:.1f}% | {100 * f['dice_found']:.1f}% "
            f"| {f['face_boxes_on_nothing']} |"
            for name, f in sorted(families.items())
        )
        section += f"""
Each appearance family rendered on its own (1920x1080, full table, seeds never trained on),
read by the shipped models, whole pipeline as above (found at oriented IoU >= 0.5 and read
right). The detector was trained on the house look alone, the tile reader on every family's
frames of other seeds. Targets: >= 99.5% each, and >= 99% with the family left out of training
(`models/MODEL_CARD.md`'s leave-one-family-out table, reader only).

| family | test set | faces found and read right | dice found and read right | faces found | dice found | face boxes on nothing |
|---|---|---|---|---|---|---|
{rows}
"""
    if real:
        section += f"""
Real dice photographs (`scripts/fetch_real_dice.py`: the test split of N3VERS4YDIE/dice-recognition,
CC BY 4.0, never trained on), read as the box reads them on the labelled boxes: {100 * real["accuracy"]:.1f}% of
{real["total"]} dice read right (target >= 97%). Commonest misreads: {", ".join(f"`{k}` {v}" for k, v in real["misreads"].items())}.
Most of the split's photographs are train photographs again, and most dice it misreads show no
countable pip: `models/MODEL_CARD.md`, "What the real test split measures".
"""
    if table:
        rows = "\n".join(
            f"| {name} | {t['photos']} | {t['dice']} | {100 * t['found_share']:.1f}% "
            f"| {100 * t['read_right_share']:.1f}% | {t['other_boxes']} "
            f"| {100 * t['read_on_true_boxes']:.1f}% |"
            for name, t in table.items()
        )
        section += f"""
The same test split's photographs at the table's scale (`vision.training.real_dice`): each shrunk
until its dice are as large as the renders' (a 16-px upright box in 1080p) and pasted onto a
held-out frame where it covers nothing, then the whole pipeline as above. A die is found when a
die box is centred on it; other die boxes in a photograph lie on no die or on one found already.
The last column is the reader alone on the labelled boxes at that scale (every photograph of the
split, `--reader-at-table-scale`): what the pipeline would read had the detector boxed every die
exactly. Target: >= 95% of the dark photographs' dice found ([pictures](real-dice-table.jpg)).

| surroundings | photographs | dice | found | found and read right | other die boxes in them | read right on the true boxes |
|---|---|---|---|---|---|---|
{rows}
"""
    return section


def _half_turn_bullet(m: dict) -> str:  # type: ignore[type-arg]
    """The design line of reading unsure tiles both ways round, where it was measured."""
    cut = m.get("read_as_cut_only")
    if cut is None:
        return ""
    return f"""- **Unsure tiles read both ways round.** A tile's crop lies either way up, so a tile the
  reader reads under {HALF_TURN_BELOW} sure is read again turned half round and the two readings
  averaged (`vision.detector.HALF_TURN_BELOW`): faces found and read right
  {100 * m["tile_face_accuracy"]:.2f}% against {100 * cut["tile_face_accuracy"]:.2f}% read as cut only, mAP50-95
  {m["map50_95"]:.3f} against {cut["map50_95"]:.3f}. A design the reader never saw gains more (4.9 points of
  ivory's and cream's faces left out of training: `models/MODEL_CARD.md`, "Both ways round").
"""


def _dice_model(m: dict) -> str:  # type: ignore[type-arg]
    """The reader of dice alone, where one read the dice."""
    if not m.get("dice_model"):
        return ""
    return ", whose dice `models/dice.onnx` reads (YOLO11n-cls, 6 classes)"


def _markers_models(m: dict) -> str:  # type: ignore[type-arg]
    if m.get("ms_per_marker_look") is None:
        return ""
    chips = m.get("chips_model", False)
    classes = len([c for c in m.get("marker_classes", range(4)) if not chips or c != "wager"])
    return (f", and for the round's markers `models/markers.onnx` (YOLO11n-OBB, {classes} classes)"
            " with `models/marker-faces.onnx` (YOLO11n-cls, 5 classes)"
            + (", and for stacks of chips `models/chips.onnx` (YOLO11n-OBB)" if chips else ""))  # fmt: skip


def _markers_bullet(m: dict) -> str:  # type: ignore[type-arg]
    """The markers' line of the design: found by their own detector where it ships."""
    if m.get("ms_per_marker_look") is None:
        return ""
    before = m["without_markers"]
    return f"""- **The markers, a detector of their own.** The chung (by its face) and the +4, -4 and Off
  buttons are found by a second YOLO11n-OBB (`models/markers.onnx`, trained after the tile
  detector, which has no marker classes) every {MARKER_EVERY_S:g} s of video, not every frame:
  they stay put for the round; a face reader reads each of its boxes again from the
  full-resolution frame, and drops a box on no marker. Of the test set's {m["markers"]}
  markers it finds {100 * m["markers_found_right"]:.1f}% with their own class (oriented IoU >=
  0.5), with {m["marker_boxes_on_nothing"]} marker boxes on no marker of that class in
  {m["images"]} frames, in {m["ms_per_marker_look"]:.0f} ms a look (a 1080p frame, 2 threads,
  timed as the speed below). A box on a marker it found (each holding the other's centre) is
  dropped until its next look:
  plaques boxed as face-up tiles {m["markers_read_as_faces"]} (without the marker detector
  {before["markers_read_as_faces"]}), face boxes on no labelled object {m["face_boxes_on_nothing"]}
  ({before["face_boxes_on_nothing"]}), faces found and read right
  {100 * m["tile_face_accuracy"]:.2f}% ({100 * before["tile_face_accuracy"]:.2f}%).{_chips_line(m)}
"""


def _chips_line(m: dict) -> str:  # type: ignore[type-arg]
    """Stacks of chips, where a look for markers finds them (`wager`): who banks."""
    if "wager" not in m.get("marker_classes", ()):
        return ""
    finder = ("A chips model of its own (`models/chips.onnx`), run beside it once a second, finds"
              if m.get("chips_model") else "The same detector finds")  # fmt: skip
    return f"""
  {finder} stacks of chips (`wager`: on the betting boxes, and a
  player-banker's capital in the centre circle), which say who banks (`docs/rounds.md`): of the
  test set's {m["chips"]} stacks it finds {100 * m["chips_found"]:.1f}% (IoU >= 0.5), with
  {m["chip_boxes_on_nothing"]} chip boxes on no stack."""


def _flatness_section(f: dict | None) -> str:  # type: ignore[type-arg]
    if not f:
        return ""
    return f"""
## Does a die lie flat? (`models/flatness.onnx`)

A die leaning on an edge must be rolled again; the rounds' follower asks the flatness reader
(YOLO11n-cls on a crop {REFINED_LEAN_MARGIN} times the die's refined box) and pools its answer over half a second.
Measured on `{f["test_set"]}` (half the dice cocked, a seed never trained on), dice fully in
view in frames without camera shake, right at a 0.5 threshold:

| boxes | flat dice | cocked dice |
|---|---|---|
| ground truth | {f["truth_flat"]:.1%} of {f["truth_flat_n"]} | {f["truth_cocked"]:.1%} of {f["truth_cocked_n"]} |
| the detector's | {f["detected_flat"]:.1%} of {f["detected_flat_n"]} | {f["detected_cocked"]:.1%} of {f["detected_cocked_n"]} |
"""


def flatness(data: Path, detector: Detector, reader: Reader) -> dict[str, float]:
    """How often the flatness reader is right about dice fully in view in sharp frames (the
    follower judges dice lying still), on their ground-truth boxes and on the detector's boxes
    that match one (oriented IoU >= 0.5)."""
    tally = {f"{boxes}_{kind}": [0, 0] for boxes in ("truth", "detected")
             for kind in ("flat", "cocked")}  # fmt: skip
    for line in tqdm((data / "annotations.jsonl").read_text().splitlines(), desc="flatness"):
        entry = json.loads(line)
        dice = [o for o in entry["objects"] if o["labelled"] and o["label"].startswith("die-")
                and o["visible"] >= 0.9]  # fmt: skip
        if entry.get("motion_blur", 0) or not dice:
            continue
        image = cv2.imread(str(data / entry["image"]))
        truth = Detections(np.array([o["corners"] for o in dice], np.float64), np.ones(len(dice)),
                           ("die",) * len(dice))  # fmt: skip
        on_truth = reader.read(image, truth).flat
        found = reader.read(image, detector.detect(image))
        ious = iou_matrix(found, dice)
        for j, obj in enumerate(dice):
            kind = "flat" if obj["tags"].get("flat", True) else "cocked"
            tally[f"truth_{kind}"][0] += (on_truth[j] >= 0.5) == (kind == "flat")
            tally[f"truth_{kind}"][1] += 1
            i = int(np.argmax(ious[:, j])) if len(found) else -1
            if i >= 0 and ious[i, j] >= 0.5 and found.labels[i].startswith("die-"):
                tally[f"detected_{kind}"][0] += (found.flat[i] >= 0.5) == (kind == "flat")
                tally[f"detected_{kind}"][1] += 1
    out: dict[str, float] = {}
    for key, (right, count) in tally.items():
        out[key] = right / max(count, 1)
        out[f"{key}_n"] = count
    return out


def reader_on_truth(data: Path, reader: Reader) -> dict:  # type: ignore[type-arg]
    """Read every labelled object from its ground-truth corners, in one pass over the test set:
    accuracy by visibility, full resolution against the detector's scale, confusion, speed."""
    from vision.crops import cut

    def read(crops: list[NDArray[np.uint8]], dice: list[bool]) -> list[str]:
        probs = reader.look_at(crops, embed=False, dice=dice)[0]
        return [reader.names[int(p.argmax())] for p in probs]

    confusion = np.zeros((len(CLASSES) + 1, len(CLASSES) + 1), int)
    buckets = {"tiles": [0, 0], "dice": [0, 0], "partial_tiles": [0, 0], "dice_still": [0, 0]}
    right = total = native_right = scaled_right = full_tiles = 0
    crop_times, read_times, batch = [], [], 0
    for line in (data / "annotations.jsonl").read_text().splitlines():
        entry = json.loads(line)
        objs = [o for o in entry["objects"] if o["labelled"] and o["label"] in CLASS_ID]
        if not objs:  # markers are the detector's alone: the reader never sees them
            continue
        image = cv2.imread(str(data / entry["image"]))
        start = time.perf_counter()
        crops = [cut(image, np.asarray(o["corners"]), o["label"].startswith("die-")) for o in objs]
        middle = time.perf_counter()
        predicted = read(crops, [o["label"].startswith("die-") for o in objs])
        crop_times.append(middle - start)
        read_times.append(time.perf_counter() - middle)
        batch = max(batch, len(objs))
        for obj, label in zip(objs, predicted, strict=True):
            confusion[CLASSES.index(obj["label"]), CLASSES.index(label)] += 1
            if obj["label"] == "back":
                continue
            die = obj["label"].startswith("die-")
            if not die:
                total += 1
                right += label == obj["label"]
            if die and obj["visible"] < 0.9:
                continue
            key = "dice" if die else "tiles" if obj["visible"] >= 0.9 else "partial_tiles"
            buckets[key][0] += label == obj["label"]
            buckets[key][1] += 1
            if die and _still(entry, obj):
                buckets["dice_still"][0] += label == obj["label"]
                buckets["dice_still"][1] += 1
        faces = [i for i, o in enumerate(objs) if _fully_visible_face(o)]
        if faces:  # the same tiles cut from the frame at the detector's scale
            small = cv2.resize(image, None, fx=DETECTOR_SCALE, fy=DETECTOR_SCALE,
                               interpolation=cv2.INTER_AREA)  # fmt: skip
            coarse = cv2.resize(
                small, (image.shape[1], image.shape[0]), interpolation=cv2.INTER_LINEAR
            )
            scaled = read(
                [cut(coarse, np.asarray(objs[i]["corners"]), False) for i in faces],
                [False] * len(faces),
            )
            native_right += sum(predicted[i] == objs[i]["label"] for i in faces)
            scaled_right += sum(s == objs[i]["label"] for s, i in zip(scaled, faces, strict=True))
            full_tiles += len(faces)
    fully_visible: dict[str, float] = {}
    for key, (hits, count) in buckets.items():
        fully_visible[key] = hits / max(count, 1)
        fully_visible[f"{key}_n"] = count
    return {
        "tiles_all": right / max(total, 1), "tiles_all_n": total,
        "confusion": confusion.tolist(), "reader_batch": batch,
        "reader_ms": 1000 * float(np.median(read_times)),
        "crop_ms": 1000 * float(np.median(crop_times)),
        "fully_visible": fully_visible,
        "scale": {
            "read_accuracy_native_crops": native_right / max(full_tiles, 1),
            "read_accuracy_crops_at_detector_scale": scaled_right / max(full_tiles, 1),
            "tiles_read": full_tiles,
        },
    }  # fmt: skip


MARKER_FIGURES = ("markers", "markers_found_right", "marker_boxes_on_nothing",
                  "markers_read_as_faces", "chips", "chips_found", "chip_boxes_on_nothing")  # fmt: skip
"""What the looks for markers give, measured again alone by `--markers-only`."""
KEPT_TOGETHER = {"speed": ("ms_per_frame", "ms_per_marker_look", "cpu")}
"""`--keep` blocks that are several keys of the metrics."""


def main() -> None:
    parser = argparse.ArgumentParser(description="Evaluate the shipped detector and reader.")
    parser.add_argument("--data", type=Path)
    parser.add_argument("--metrics", type=Path, default=Path("models/metrics.json"))
    parser.add_argument("--confusion", type=Path, default=Path("docs/detector-confusion.png"))
    parser.add_argument("--report", type=Path, default=Path("docs/detector.md"))
    parser.add_argument("--flatness", type=Path, help="a data set rendered with --cocked-dice")
    parser.add_argument(
        "--families",
        type=Path,
        nargs="*",
        default=[],
        help="test sets each rendered in one appearance family (--families NAME)",
    )
    parser.add_argument(
        "--real-dice", type=Path, help="the real dice test crops (datasets/real-dice/reader/test)"
    )
    parser.add_argument(
        "--real-dice-table",
        type=Path,
        help="the real dice test photographs at table scale (datasets/real-dice/table/test)",
    )
    parser.add_argument(
        "--keep",
        nargs="+",
        default=[],
        choices=("flatness", "real_dice", "real_dice_table", "speed"),
        help="blocks of --metrics to keep as measured, not measured again (a change that leaves "
        "their models and data alone, e.g. the tile reader's, need not fetch real dice again; "
        "speed: the timings and their CPU, where this machine is not the target's)",
    )
    parser.add_argument(
        "--speed-only",
        action="store_true",
        help="time the models again on this (idle) machine and rewrite the speed figures of "
        "--metrics and --report, keeping the accuracy figures (no --data needed)",
    )
    parser.add_argument(
        "--markers-only",
        action="store_true",
        help="measure again what the looks for markers give on --data (markers, stacks of "
        "chips, a look's time) and keep every other figure of --metrics: those models alone "
        "changed",
    )
    args = parser.parse_args()
    reader = Reader()
    if args.markers_only:
        if args.data is None or not MARKERS_MODEL.exists():
            parser.error("--markers-only needs --data and the marker models")
        kept = json.loads(args.metrics.read_text())
        markers = MarkerDetector()
        seen = evaluate(args.data, Detector(), reader, markers=markers)
        kept |= {key: seen[key] for key in MARKER_FIGURES}
        kept["marker_classes"] = list(markers.classes)
        kept["chips_model"] = markers.chips is not None
        kept["ms_per_marker_look"] = marker_speed(markers)
        args.metrics.write_text(json.dumps(kept, indent=2) + "\n")
        args.report.write_text(report(kept))
        print(json.dumps({key: kept[key] for key in (*MARKER_FIGURES, "ms_per_marker_look")}))
        return
    if args.speed_only:
        kept = json.loads(args.metrics.read_text())
        kept["ms_per_frame"], kept["cpu"] = speed(Detector(), reader), cpu()
        if MARKERS_MODEL.exists():
            kept["ms_per_marker_look"] = marker_speed(MarkerDetector())
        args.metrics.write_text(json.dumps(kept, indent=2) + "\n")
        args.report.write_text(report(kept))
        print(f"{args.metrics}, {args.report}: {kept['ms_per_frame']} on {kept['cpu']}")
        return
    if args.data is None:
        parser.error("--data is required (a held-out data set), or --speed-only")
    earlier = json.loads(args.metrics.read_text()) if args.keep and args.metrics.exists() else {}
    kept = [key for block in args.keep for key in KEPT_TOGETHER.get(block, (block,))]
    absent = [key for key in kept if key not in earlier]
    if absent:
        parser.error(f"--keep {absent[0]}: {args.metrics} holds no such block to keep")
    card = json.loads((args.data / "card.json").read_text())
    images, test_set = sum(card["images"].values()), card["command"]
    reading = reader_on_truth(args.data, reader)
    detector = Detector()
    markers = MarkerDetector() if MARKERS_MODEL.exists() else None
    result = {**reading, **evaluate(args.data, detector, reader, markers=markers)}
    if markers is not None:
        result["marker_classes"] = list(markers.classes)
        result["chips_model"] = markers.chips is not None
    loose = evaluate(args.data, Detector(refiner=None), reader)
    result["without_refiner"] = {k: loose[k] for k in (
        "map50", "map50_95", "tile_face_found", "tile_face_accuracy", "dice_found",
        "dice_accuracy", "tile_face_fit", "dice_fit", "face_boxes_on_nothing")}  # fmt: skip
    one_stage = evaluate(args.data, Detector(refiner=REFINERS[:1]), reader)
    result["first_stage_only"] = {k: one_stage[k] for k in (
        "map50", "map50_95", "tile_face_accuracy", "dice_accuracy", "tile_face_fit", "dice_fit")}  # fmt: skip
    whole_frame_only = evaluate(args.data, Detector(zoom=False), reader)
    result["without_zoom"] = {k: whole_frame_only[k] for k in ("dice_found", "dice_accuracy")}
    result["without_markers"] = {  # the closer look is the dice's alone: faces match
        k: whole_frame_only[k]
        for k in ("markers_read_as_faces", "face_boxes_on_nothing", "tile_face_accuracy")
    }
    as_cut = evaluate(args.data, detector, Reader(half_turn_below=0.0), markers=markers)
    result["read_as_cut_only"] = {k: as_cut[k] for k in ("tile_face_accuracy", "map50_95")}
    looser = evaluate(args.data, Detector(iou=0.5), reader)
    result["suppressed_at_0_5"] = {
        k: looser[k] for k in ("tile_face_found", "tile_face_accuracy", "face_boxes_on_nothing")
    }
    if args.flatness:
        command = json.loads((args.flatness / "card.json").read_text())["command"]
        result["flatness"] = {"test_set": command, **flatness(args.flatness, detector, reader)}
    if args.families:
        result["families"] = {}
        for data in args.families:
            family_card = json.loads((data / "card.json").read_text())
            (family,) = family_card["families"]
            seen = evaluate(data, detector, reader)
            result["families"][family] = {"test_set": family_card["command"], **{k: seen[k] for k in (
                "tile_face_accuracy", "tile_faces", "dice_accuracy", "dice", "tile_face_found",
                "dice_found", "face_boxes_on_nothing")}}  # fmt: skip
    if args.real_dice:
        from vision.training.families import crop_accuracy

        dice = crop_accuracy(reader, args.real_dice)  # as the box reads them
        result["real_dice"] = {**dice["by_kind"]["dice"], "misreads": dice["misreads"]}  # type: ignore[index]
    if args.real_dice_table:
        from vision.training.real_dice import found_at_table_scale, read_at_table_scale

        exact = read_at_table_scale(reader, args.real_dice_table)
        result["real_dice_table"] = {
            kind: {
                **found_at_table_scale(
                    detector, reader, args.real_dice_table, args.data, dark=kind == "dark"
                ),
                "read_on_true_boxes": exact[kind]["read_right"],
            }
            for kind in ("dark", "light")
        }
    result["dice_model"] = reader.dice is not None
    if "speed" not in args.keep:
        result["ms_per_frame"] = speed(detector, reader)
        if markers is not None:
            result["ms_per_marker_look"] = marker_speed(markers)
        result["cpu"] = cpu()
    result.update({key: earlier[key] for key in kept})
    result["software"] = f"onnxruntime {ort.__version__}, OpenCV {cv2.__version__}"
    title = "Detector + reader on the held-out test set (oriented IoU >= 0.5)"
    result["images"], result["test_set"] = images, test_set
    result["design"] = {**design_measurements(args.data), **result.pop("scale")}
    confusion_image(np.asarray(result["confusion"]), args.confusion, title)
    refiner_picture(args.data, args.confusion.with_name("detector-refiner.jpg"))
    args.metrics.write_text(json.dumps({k: v for k, v in result.items() if k != "confusion"},
                                       indent=2) + "\n")  # fmt: skip
    args.report.write_text(report(result))
    print(
        json.dumps(
            {k: v for k, v in result.items() if k not in ("per_class", "confusion")}, indent=2
        )
    )


if __name__ == "__main__":
    main()
