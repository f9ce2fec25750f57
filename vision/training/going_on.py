"""Going on from the shipped detector without losing its small dice: an ablation on the CPU.

Every run that went on training the shipped detector (on a GPU at batch 128, on this CPU at
batch 16 with the norms held) lost the house look's small dice in the whole-frame pass within
its first epoch (`models/MODEL_CARD.md`). This trains arms that differ in one setting each, from
the same start, on the same crops, for the same steps, and measures each on validation frames
never trained on, so that the next GPU run goes on the way that keeps them:

    python3 -m vision.training.going_on --data house --epochs 1 --arms base,before-mends
    python3 -m vision.training.going_on --data looks --epochs 2 --arms shipped,base,freeze
    python3 -m vision.training.going_on --data looks --where-dice-are-boxed 150

`--data house` trains on the house look alone (does going on itself lose the dice?), `looks`
on the house look twice and each appearance family once (does an arm that keeps them still
learn the new looks?), `house-no-plaques` on the house scenes without the chung and buttons.
`--where-dice-are-boxed` says what the shipped detector's die boxes lie on, training nothing.
Everything is rendered from fixed seeds, and ultralytics trains deterministically, so a run
reproduces its figures. Results go to `OUT/going-on.json`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from vision.progress import each

if TYPE_CHECKING:
    from vision.detector import Detector

START_SEED, VAL_HOUSE_SEED, VAL_LOOKS_SEED = 73_000, 71_000, 72_000
"""The frames the start's norms are measured on, and the two validation sets: apart from every
training set's seeds and from the held-out test sets (`docs/detector.md`), which choose nothing."""
DATA = {
    "house": (74_000, 300, ()),
    "house-no-plaques": (74_000, 300, ()),
    "looks": (75_000, 350, ("house", "house", "classic", "ivory", "navy", "charcoal", "cream")),
}
"""Each training set's seed, frames and the looks they take turns in (none: the house look
alone), a third of them close-ups, as the GPU runs render them. `house-no-plaques` is the house
set's scenes with the chung and button left off: the tile detector has no class for them, and
the shipped one boxes them as dice now and then."""
NO_PLAQUES = {"house-no-plaques"}
CLOSE_UPS = 0.3
VAL_CROPS = {"house": 20, "house-no-plaques": 20, "looks": 30}
"""Frames of each training set's val split cut into validation crops (die recall on crops)."""
BEFORE_MENDS: dict[str, object] = {"full_targets": (), "shape_term": False}
"""The going-on recipe before its two mends for dice (`train.full_class_targets`,
`train.box_shape_term`): the arms measured against it keep it, so each reproduces its figures."""
ARMS: dict[str, dict[str, object]] = {
    "base": {},
    "before-mends": BEFORE_MENDS,
    "no-shape-term": {"shape_term": False},
    "lr1e-5": {**BEFORE_MENDS, "lr0": 1e-5},
    "lr2e-5": {**BEFORE_MENDS, "lr0": 2e-5},
    "angle0": {**BEFORE_MENDS, "angle": 0.0},
    "noscale": {**BEFORE_MENDS, "scale": 0.0},
    "freeze": {**BEFORE_MENDS, "freeze": 11},
    "norms-free": {**BEFORE_MENDS, "hold_norms": False},
    "sgd": {**BEFORE_MENDS, "optimizer": "SGD", "lr0": 1e-4, "momentum": 0.9},
    "small-boxes-as-drawn": {**BEFORE_MENDS, "small_boxes_grown_to": 0},
    "small-boxes-grown-to-32": {**BEFORE_MENDS, "small_boxes_grown_to": 32},
    "classes-weighted": {**BEFORE_MENDS, "cls_pw": 1.0},
    "box-loss-doubled": {**BEFORE_MENDS, "box": 15.0},
    "dfl-off": {**BEFORE_MENDS, "dfl": 0.0},
    "all-full-targets": {"full_targets": ("tile", "back", "die"), "shape_term": False},
}
"""Arms of the CPU's going-on recipe (`train.train_detector` at `GOING_ON_RATE`, norms held,
batch 16; dice trained to full class targets and the box loss's shape term,
`train.full_class_targets` and `train.box_shape_term`): `base` is the recipe, `before-mends`
the recipe without either mend, `no-shape-term` without the second. The others change one
setting of the recipe before the mends: the rate, the rotated boxes' angle loss, the scale
augmentation, the backbone frozen (YOLO11n's first 11 modules), the norms' statistics moving,
plain SGD, the label assigner taking a die's anchors from inside its box as drawn (as
ultralytics 8.3 did; 8.4 grows a box under 16 px to 16 px first, `_small_boxes_grown_to`) or
grown further, each class's loss weighted by its inverse frequency (a die is one box in
fourteen in the looks crops), the box loss doubled, the distribution focal loss off, and every
class trained to full targets (tiles' and backs' too). `shipped` measures the start itself."""
BATCH = 16


def _render(out: Path) -> dict[str, Path]:
    """The start's norm frames, both training sets and both validation sets, once."""
    from vision.synth.dataset import write_dataset

    wanted = {
        "norms": (START_SEED, 40, (), CLOSE_UPS),
        "val-house": (VAL_HOUSE_SEED, 80, (), 0.0),
        "val-looks": (VAL_LOOKS_SEED, 100, ("classic", "ivory", "navy", "charcoal", "cream"), 0.0),
        **{name: (*spec, CLOSE_UPS) for name, spec in DATA.items()},
    }
    paths = {}
    for name, (seed, frames, looks, close_ups) in wanted.items():
        paths[name] = out / name
        if not (paths[name] / "annotations.jsonl").exists():
            write_dataset(paths[name], frames, seed, resolution=(1920, 1080), close_ups=close_ups,
                          families=looks, workers=2, progress=False,
                          plaques=name not in NO_PLAQUES)  # fmt: skip
    return paths


def _train(arm: str, crops: Path, start: Path, epochs: int, out: Path) -> Path:
    """One arm trained from `start`: its last weights."""
    from vision.training.train import (
        DETECTOR_AUGMENT,
        FULL_TARGETS,
        GOING_ON_RATE,
        _floor_probiou,
        _hold_norm_statistics,
        _yolo,
        box_shape_term,
        full_class_targets,
        going_on_recipe,
    )

    settings = dict(ARMS[arm])
    hold = bool(settings.pop("hold_norms", True))
    full = tuple(settings.pop("full_targets", FULL_TARGETS))  # type: ignore[call-overload]
    shape = settings.pop("shape_term", True)
    grown = settings.pop("small_boxes_grown_to", None)
    yolo = _yolo()(str(start))
    _floor_probiou()
    if hold:
        yolo.add_callback("on_train_batch_start", _hold_norm_statistics)
    recipe = {**going_on_recipe(GOING_ON_RATE), **DETECTOR_AUGMENT, **settings}
    with contextlib.ExitStack() as changed:
        changed.enter_context(full_class_targets(full))
        if shape:
            changed.enter_context(box_shape_term())
        if grown is not None:
            changed.enter_context(_small_boxes_grown_to(int(grown)))  # type: ignore[call-overload]
        yolo.train(data=str(crops), epochs=epochs, imgsz=320, batch=BATCH, workers=0,
                   device="cpu", project=str(out.resolve()), name="d", exist_ok=True,
                   pretrained=str(start), amp=False, plots=False, verbose=False,
                   **recipe)  # fmt: skip
    return Path(yolo.trainer.save_dir) / "weights" / "last.pt"


@contextlib.contextmanager
def _small_boxes_grown_to(side: int) -> Iterator[None]:
    """ultralytics' rotated-box assigner picks a box's candidate anchors from inside it, each
    side first grown to the second stride (16 px) where shorter: a 6-px die's from a 16-px
    square. Within this each side is grown to `side` instead (0: the box as drawn, as 8.3
    did)."""
    from ultralytics.utils.tal import RotatedTaskAlignedAssigner

    built = RotatedTaskAlignedAssigner.__init__

    def grown(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        built(self, *args, **kwargs)
        self.stride_val = side

    RotatedTaskAlignedAssigner.__init__ = grown  # type: ignore[method-assign]
    try:
        yield
    finally:
        RotatedTaskAlignedAssigner.__init__ = built  # type: ignore[method-assign]


def _whole_frame_dice(seen: Detector, folder: Path, frames: int | None = None):  # type: ignore[no-untyped-def]
    """Each frame's labelled objects and `seen`'s whole-frame pass's die boxes (down to
    `DIE_CANDIDATE`, the closer look's own bar), in frame pixels, with their scores."""
    import cv2
    import numpy as np

    from vision.detector import DIE_CANDIDATE, letterbox, oriented_boxes

    least = np.array([1.1 if name != "die" else DIE_CANDIDATE for name in seen.names.values()])
    lines = (folder / "annotations.jsonl").read_text().splitlines()[:frames]
    for entry in map(json.loads, lines):
        image = cv2.imread(str(folder / entry["image"]))
        blob, scale, left, top = letterbox(image, seen.height, seen.width)
        output = seen.session.run(None, {seen.input.name: blob})[0][0]
        corners, _, confidence = oriented_boxes(output, least, seen.iou)
        yield entry["objects"], (corners - [left, top]) / scale, confidence


def dice_boxes(detector: Path, folder: Path) -> dict[str, float]:
    """For each labelled die of `folder`, the nearest die box of the whole-frame pass: how many
    dice have one within a side of their centre, one the detector's bar sure, one matching at
    IoU 0.5 or more; and the median such box's score, area against the die's, axis-aligned
    IoU and centre error (px). Dice lost to boxes that grew are told from dice lost to scores."""
    import numpy as np

    from vision.detections import Detections, iou_matrix
    from vision.detector import Detector

    seen, rows = Detector(detector, zoom=False), []
    for objects, corners, confidence in _whole_frame_dice(seen, folder):
        centres = corners.mean(1)
        for die in (o for o in objects if o["label"].startswith("die-") and o["labelled"]):
            true = np.asarray(die["corners"], np.float64)
            sides = np.linalg.norm(true - np.roll(true, -1, axis=0), axis=1)
            off = np.linalg.norm(centres - true.mean(0), axis=1) if len(centres) else np.zeros(0)
            if not len(off) or off.min() > sides.max():
                rows.append((0.0, 0.0, 0.0, 0.0))
                continue
            k = int(off.argmin())
            box = corners[k]
            area = np.linalg.norm(box[1] - box[0]) * np.linalg.norm(box[2] - box[1])
            fit = iou_matrix(Detections(box[None], np.ones(1), ("die",)), [die])[0, 0]
            rows.append((confidence[k], area / (sides[0] * sides[1]), fit, off[k]))
    table = np.array(rows)
    near = table[:, 0] > 0
    sure = table[:, 0] >= seen.confidence
    return {
        "dice": len(table),
        "boxed": int(near.sum()),
        "boxed surely": int(sure.sum()),
        "surely at IoU 0.5": int((sure & (table[:, 2] >= 0.5)).sum()),
        **{f"median {name}": round(float(np.median(table[near, column])), 2)
           for column, name in enumerate(("score", "area ratio", "IoU", "centre px"))},
    }  # fmt: skip


def where_dice_are_boxed(detector: Path, folder: Path, frames: int) -> dict[str, int]:
    """What the whole-frame pass's die boxes of the detector's bar lie on, over the first
    `frames` of `folder`: a die, a tile face, a back, a plaque, chips, or nothing labelled."""
    from collections import Counter

    import cv2
    import numpy as np

    from vision.detector import Detector

    seen, found = Detector(detector, zoom=False), Counter[str]()
    for objects, corners, confidence in _whole_frame_dice(seen, folder, frames):
        for centre in corners[confidence >= seen.confidence].mean(1):
            under = [o["label"] for o in objects
                     if cv2.pointPolygonTest(np.float32(o["corners"]), tuple(map(float, centre)),
                                             False) >= 0]  # fmt: skip
            named = ["face" if u[0].isdigit() else u for u in under] + ["nothing"]
            found["die" if any(u.startswith("die-") for u in named) else named[0]] += 1
    return dict(found.most_common())


def measure(detector: Path, weights: Path | None, crops: Path, data: dict[str, Path]) -> dict:  # type: ignore[type-arg]
    """Die precision, recall, AP50 and AP50-95 on the validation crops (where `weights`, a
    checkpoint, is given); house dice found by the whole-frame pass alone, and how its boxes fit
    them (`dice_boxes`); house faces and dice found with the closer look; the families' faces
    found and read right and their dice found."""
    from vision.detector import Detector, Reader
    from vision.training.evaluate import evaluate

    reader = Reader()
    figures: dict[str, object] = {}
    if weights is not None:
        from vision.training.train import _yolo

        checked = _yolo()(str(weights)).val(data=str(crops), imgsz=320, batch=BATCH, device="cpu",
                                            workers=0, plots=False, verbose=False)  # fmt: skip
        die = list(checked.names.values()).index("die")
        figures["die on crops P/R/AP50/AP"] = [
            round(float(x), 3) for x in checked.class_result(die)
        ]
    whole = evaluate(data["val-house"], Detector(detector, zoom=False), reader)
    house = evaluate(data["val-house"], Detector(detector), reader)
    looks = evaluate(data["val-looks"], Detector(detector), reader)
    figures["house dice boxes, whole frame"] = dice_boxes(detector, data["val-house"])
    figures |= {
        "house dice whole frame": whole["dice_found"],
        "house dice": house["dice_found"],
        "house faces found": house["tile_face_found"],
        "house faces right": house["tile_face_accuracy"],
        "looks faces found": looks["tile_face_found"],
        "looks faces right": looks["tile_face_accuracy"],
        "looks dice": looks["dice_found"],
    }
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in figures.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=tuple(DATA), default="house")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument(
        "--arms", default="base", help=f"comma-separated: shipped, {', '.join(ARMS)}"
    )
    parser.add_argument("--out", type=Path, default=Path("runs/going-on"))
    parser.add_argument("--where-dice-are-boxed", type=int, metavar="FRAMES",
                        help="only say what the shipped detector's die boxes lie on in the first "
                             "FRAMES of --data's training set")  # fmt: skip
    args = parser.parse_args()
    arms = args.arms.split(",")
    unknown = [a for a in arms if a != "shipped" and a not in ARMS]
    if args.where_dice_are_boxed is not None and args.where_dice_are_boxed < 1:
        print("--where-dice-are-boxed: at least 1 frame", file=sys.stderr)
        return 2
    if unknown or args.epochs < 1:
        print(f"no arm {unknown[0]}" if unknown else "--epochs: at least 1", file=sys.stderr)
        return 2
    from vision.detector import DETECTOR_INPUT, MODELS
    from vision.training.train import checkpoint_from_shipped, export_onnx, prepare_detector

    data = _render(args.out)
    if args.where_dice_are_boxed:
        where = where_dice_are_boxed(MODELS / "detector.onnx", data[args.data],
                                     args.where_dice_are_boxed)  # fmt: skip
        print(f"die boxes of the shipped detector in {args.data}: {json.dumps(where)}")
        return 0
    norms = prepare_detector([data["norms"]], args.out / "norms", val_images=5, workers=2)
    start = checkpoint_from_shipped(MODELS / "detector.onnx", norms.parent / "images" / "train",
                                    args.out / "start.pt")  # fmt: skip
    crops = prepare_detector([data[args.data]], args.out / f"{args.data}-crops",
                             val_images=VAL_CROPS[args.data], workers=2)  # fmt: skip
    results_file = args.out / "going-on.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    for arm in each(arms, len(arms), "arms", "arm"):
        began = time.time()
        if arm == "shipped":
            figures = measure(MODELS / "detector.onnx", start, crops, data)
        else:
            last = _train(
                arm, crops, start, args.epochs, args.out / f"{args.data}-{arm}-{args.epochs}"
            )
            figures = measure(export_onnx(last, list(DETECTOR_INPUT)), last, crops, data)
        figures["minutes"] = round((time.time() - began) / 60, 1)
        key = f"{args.data} {arm}" + ("" if arm == "shipped" else f" {args.epochs} epochs")
        results[key] = figures
        print(f"{key}: {json.dumps(figures)}", flush=True)
        results_file.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
