"""The round's markers (the chung by its face, the +4, -4 and Off buttons) found by a detector of
their own, trained on this CPU.

The shipped detector was trained before the markers; teaching them to it needs a GPU run
(models/MODEL_CARD.md: a 2-minute GPU run of the grown detector lost dice and found no marker,
and a branch on its frozen features found 4%). A marker says the round's context and stays put
for the round, so the box need not look for it in every frame: a YOLO11n-OBB of its own, with
the markers as its only classes, looks twice a second (`vision.detector.MarkerWatch`). It
starts from the shipped detector's backbone and neck (they already know the cloth, the tiles
and the light) with a fresh class branch, and trains on 320-px crops of frames seen as the
detector sees them (letterboxed to `DETECTOR_INPUT`), most of them around a marker. At that
scale a plaque's word is a few pixels high, so a face reader (YOLO11n-cls, like the tile
reader) reads each box again from the full-resolution frame, and says `none` for a box on no
marker.

`python3 -m vision.training.markers --data DATA [DATA ...] --out RUN --hours H`: crops, a
checkpoint from the shipped detector, training, an ONNX export `RUN/markers.onnx`;
`--faces`: the face reader instead (`RUN/marker-faces.onnx`); `--measure MODEL [--face-reader
FACES] [--chips CHIPS] --data DATA --out FILE.json`: how many markers (and stacks of chips) they
find at each bar.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import cv2
import numpy as np

from vision.crops import cut
from vision.detector import DETECTOR_INPUT, MODELS
from vision.labels import CONTEXT, MARKERS, MINUS_4, NOT_A_MARKER, OFF, PLUS_4, WAGER
from vision.progress import progress
from vision.training.train import (
    DETECTOR_CROP,
    _annotations,
    _floor_probiou,
    _inside,
    _stop_on_non_finite_loss,
    _yolo,
    checkpoint_from_shipped,
    export_onnx,
    fresh_obb_folders,
    jitter,
    obb_data_yaml,
    train_reader,
)

AROUND_EACH = 1
"""Crops cut around each marker, at a random place in the crop: on this CPU an hour trains some
35,000 crops, so a marker is better shown once in each of many more rendered frames (rendering
costs a tenth of a second a frame) than twice."""
ELSEWHERE_EACH = 1
"""Crops cut anywhere in each frame: the tiles, chips, cards and cloth a marker must not be."""


def letterbox_scale(width: int, height: int) -> float:
    """The scale `vision.detector.letterbox` sees a frame at: the crops' objects are the size
    the detector will see them."""
    return min(DETECTOR_INPUT[1] / width, DETECTOR_INPUT[0] / height)


def prepare_markers(datasets: list[Path], out: Path, seed: int = 0) -> Path:
    """Crops with the markers' and wagers' oriented labels (class = index in `CONTEXT`); one
    cut by a crop's edge keeps the part inside if half of it shows. Returns the crops'
    data.yaml."""
    rng = np.random.default_rng(seed)
    root = fresh_obb_folders(out / "marker-data")
    entries = [(data, e) for data in datasets for e in _annotations(data)]
    bar = progress(len(entries), "marker crops", "img")
    for data, entry in entries:
        bar.update()
        image = cv2.imread(str(data / entry["image"]))
        scale = letterbox_scale(image.shape[1], image.shape[0])
        small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        shown = [o for o in entry["objects"] if o["label"] in CONTEXT and o["labelled"]]
        markers = [(CONTEXT.index(o["label"]), np.asarray(o["corners"]) * scale) for o in shown]
        height, width = small.shape[:2]
        spare_x, spare_y = max(width - DETECTOR_CROP, 0), max(height - DETECTOR_CROP, 0)
        origins = []
        for _, corners in markers:
            low, high = corners.min(0), corners.max(0)
            for _ in range(AROUND_EACH):
                x = rng.uniform(high[0] - DETECTOR_CROP, low[0])
                y = rng.uniform(high[1] - DETECTOR_CROP, low[1])
                origins.append((int(np.clip(x, 0, spare_x)), int(np.clip(y, 0, spare_y))))
        origins += [(int(rng.integers(spare_x + 1)), int(rng.integers(spare_y + 1)))
                    for _ in range(ELSEWHERE_EACH)]  # fmt: skip
        stem = f"{data.name}-{Path(entry['image']).stem}"
        for x, y in origins:
            crop = np.full((DETECTOR_CROP, DETECTOR_CROP, 3), 114, np.uint8)
            part = small[y : y + DETECTOR_CROP, x : x + DETECTOR_CROP]
            crop[: part.shape[0], : part.shape[1]] = part
            lines = [f"{cls} " + " ".join(f"{v:.6f}" for v in box.ravel())
                     for cls, corners in markers
                     if (box := _inside(corners - [x, y])) is not None]  # fmt: skip
            name = f"{stem}-{x}-{y}"
            cv2.imwrite(str(root / "images" / entry["split"] / f"{name}.jpg"), crop,
                        [cv2.IMWRITE_JPEG_QUALITY, 95])  # fmt: skip
            (root / "labels" / entry["split"] / f"{name}.txt").write_text("\n".join(lines) + "\n")
    bar.close()
    return obb_data_yaml(root, CONTEXT)


FACE_COPIES = 4
"""Crops of each true marker for the face reader, each box moved as the marker detector's boxes
move (`face_box`)."""
FACE_SPREAD = 2.0
"""The marker detector boxes looser than the tile detector, and no refiner moves its boxes: a
mid-training checkpoint's overlapped the true box by 0.76 at the median (319 markers of seed
5656), the refined tile boxes' 0.95, and buttons' came turned up to 45 degrees. A face reader
trained on boxes moved as the tile reader's misread 39 of 308 found markers there, most on such
boxes; so its boxes move twice as far (`vision.training.train.jitter`'s `spread`)."""
FACE_GROWTH = (0.9, 1.4)
"""...and larger, up to 1.4 times the plaque: the reader must read a plaque small in its crop."""


def face_box(corners: np.ndarray, rng: np.random.Generator, square: bool) -> np.ndarray:
    """A true marker's box moved as the marker detector's move: shifted, turned, grown; a
    square button's box turned any way (a square's box has no side to turn by, and the
    detector's came turned up to 45 degrees)."""
    moved = jitter(corners, rng, die=False, spread=FACE_SPREAD)
    centre = moved.mean(0)
    moved = centre + (moved - centre) * rng.uniform(*FACE_GROWTH)
    if square:
        angle = rng.uniform(0, np.pi / 2)
        turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        moved = centre + (moved - centre) @ turn.T
    return moved  # type: ignore[no-any-return]


def prepare_marker_faces(datasets: list[Path], out: Path, seed: int = 0) -> Path:
    """Class folders (`MARKERS` and `NOT_A_MARKER`) of full-resolution crops for the face
    reader, cut as it will see them (`vision.crops.cut`): each true marker `FACE_COPIES` times;
    per frame, one tile or back and one patch of the table of a plaque's size as no marker."""
    rng = np.random.default_rng(seed)
    root = out / "marker-face-crops"
    shutil.rmtree(root, ignore_errors=True)
    for split in ("train", "val"):
        for name in (*MARKERS, NOT_A_MARKER):
            (root / split / name).mkdir(parents=True, exist_ok=True)
    entries = [(data, e) for data in datasets for e in _annotations(data)]
    bar = progress(len(entries), "marker face crops", "img")
    for data, entry in entries:
        bar.update()
        image = cv2.imread(str(data / entry["image"]))
        stem, folder = f"{data.name}-{Path(entry['image']).stem}", root / entry["split"]
        crops: list[tuple[str, np.ndarray]] = []
        labelled = [o for o in entry["objects"] if o["labelled"]]
        for obj in labelled:
            if obj["label"] in MARKERS:
                corners = np.asarray(obj["corners"], np.float64)
                square = obj["label"] in (PLUS_4, MINUS_4, OFF)
                crops += [(obj["label"], face_box(corners, rng, square))
                          for _ in range(FACE_COPIES)]  # fmt: skip
        others = [o for o in labelled if o["label"] not in MARKERS]
        if others:
            other = others[int(rng.integers(len(others)))]
            crops.append((NOT_A_MARKER, jitter(np.asarray(other["corners"], np.float64), rng,
                                               die=other["label"].startswith("die-"))))  # fmt: skip
        scale = image.shape[1] / 1920  # a plaque 40-80 px long in a 1080p frame
        length, width = rng.uniform(40, 80) * scale, rng.uniform(16, 40) * scale
        centre = rng.uniform([0, 0], image.shape[1::-1])
        patch = cv2.boxPoints(((*centre,), (length, width), float(rng.uniform(0, 180))))
        crops.append((NOT_A_MARKER, patch.astype(np.float64)))
        for index, (label, corners) in enumerate(crops):
            cv2.imwrite(str(folder / label / f"{stem}_{index}.png"), cut(image, corners, False))
    bar.close()
    return root


def checkpoint_from_detector(shipped: Path, shown: Path, out: Path) -> Path:
    """A YOLO11n-OBB with the markers and the wager's chips (`CONTEXT`) as its classes, every
    weight taken from a shipped OBB export (`checkpoint_from_shipped`) but the class branch's
    last convolutions: those start as ultralytics starts a fresh head, and a class the export
    already has (going on from the marker detector) keeps its rows."""
    import torch
    from ultralytics.nn.tasks import OBBModel

    whole = torch.load(checkpoint_from_shipped(shipped, shown, out.with_suffix(".whole.pt")),
                       weights_only=False)["model"]  # fmt: skip
    model = OBBModel("yolo11n-obb.yaml", nc=len(CONTEXT), verbose=False)
    state = model.state_dict()
    rows = [(new, old) for new, name in enumerate(CONTEXT)
            for old, known in whole.names.items() if known == name]  # fmt: skip
    for key, value in whole.state_dict().items():
        if state[key].shape == value.shape:
            state[key] = value
        elif state[key].shape[1:] == value.shape[1:] and rows:  # the class rows
            for new, old in rows:
                state[key][new] = value[old]
    model.load_state_dict(state)
    model.names = dict(enumerate(CONTEXT))
    torch.save({"model": model.eval(), "train_args": {"task": "obb", "imgsz": DETECTOR_CROP}}, out)
    return out


def train_markers(data_yaml: Path, out: Path, hours: float, weights: Path, device: str = "cpu",
                  batch: int = 32, workers: int = 2) -> Path:  # fmt: skip
    """Train for `hours` at ultralytics' fresh-start rate (the class branch is new, and at the
    low going-on rate new class rows never moved: MODEL_CARD, the second H100 run); export."""
    yolo = _yolo()(str(weights))
    _floor_probiou()
    yolo.add_callback("on_train_batch_end", _stop_on_non_finite_loss)
    out = out.resolve()
    yolo.train(data=str(data_yaml), epochs=100, time=hours, imgsz=DETECTOR_CROP, batch=batch,
               workers=workers, device=device, project=str(out), name="markers", exist_ok=True,
               pretrained=str(weights), amp=False, plots=False, degrees=180, fliplr=0.5,
               flipud=0.5, scale=0.25, mosaic=0.5, close_mosaic=1, warmup_epochs=0.5,
               patience=100, verbose=False)  # fmt: skip
    best = Path(yolo.trainer.save_dir) / "weights" / "best.pt"
    exported = export_onnx(best, list(DETECTOR_INPUT))
    target = out / "markers.onnx"
    shutil.copyfile(exported, target)
    return target


SWEPT = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
"""Confidences the marker detector's bar is chosen from."""


def sweep(model: Path, faces: Path | None, data: Path,
          chips: Path | None = None) -> dict[str, dict[str, int]]:  # fmt: skip
    """The marker detector on every frame of a rendered data set, at each bar of `SWEPT`: true
    markers found with their own class (oriented IoU >= 0.5), found with another marker's class
    (the chung's other face, the other button), and marker boxes on no marker of their class;
    each box read again by the face reader `faces` where given. Stacks of chips (`wager`,
    where the model has the class) are counted apart, found and boxed on nothing."""
    from vision.detections import Detections, iou_matrix
    from vision.detector import MarkerDetector
    from vision.training.evaluate import _count_chips, _count_markers

    detector = MarkerDetector(
        model, faces, confidence=min(SWEPT), chips=chips, chips_confidence=min(SWEPT)
    )  # each bar counted below
    counts = {f"{bar}": {"total": 0, "right": 0, "on_nothing": 0, "read_as_faces": 0,
                         "other_class": 0, "chips": 0, "chips_found": 0,
                         "chip_boxes_on_nothing": 0} for bar in SWEPT}  # fmt: skip
    entries = _annotations(data)
    bar_ = progress(len(entries), f"markers on {data.name}", "img")
    for entry in entries:
        bar_.update()
        found = detector.detect(cv2.imread(str(data / entry["image"])))
        truth = [o for o in entry["objects"] if o["labelled"] and o["label"] in MARKERS]
        for bar in SWEPT:
            kept = found[found.confidence >= bar]
            stacks = kept[np.isin(kept.labels, [WAGER])]
            kept = kept[~np.isin(kept.labels, [WAGER])]
            _count_markers(counts[f"{bar}"], kept, Detections.empty(), entry)
            if len(kept) and truth:
                overlap = iou_matrix(kept, truth) >= 0.5
                other = np.array([[f != t["label"] for t in truth] for f in kept.labels], bool)
                counts[f"{bar}"]["other_class"] += int((overlap & other).any(0).sum())
            _count_chips(counts[f"{bar}"], stacks, entry)
    bar_.close()
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", required=True, help="rendered data sets")
    parser.add_argument("--measure", help="a marker model to measure on --data, not train")
    parser.add_argument("--faces", action="store_true", help="train the face reader instead")
    parser.add_argument("--face-reader", help="with --measure: the face reader to read boxes by")
    parser.add_argument("--chips", help="with --measure: a chips model whose stacks of chips "
                        "replace the marker model's, as the box runs them")  # fmt: skip
    parser.add_argument("--out", required=True, help="working folder; with --measure, a .json")
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", help="with --faces: a face reader checkpoint (.pt) to go on "
                        "from, its classes the markers' and `none`; else an OBB export to "
                        "go on from (default: the shipped tile detector)")  # fmt: skip
    args = parser.parse_args()
    datasets = [Path(d) for d in args.data]
    missing = [d for d in datasets if not (d / "annotations.jsonl").is_file()]
    if missing:
        print(f"--data: no annotations.jsonl in {missing[0]}", file=sys.stderr)
        return 2
    if args.measure:
        if not Path(args.measure).is_file():
            print(f"--measure: no model file {args.measure}", file=sys.stderr)
            return 2
        faces = Path(args.face_reader) if args.face_reader else None
        chips = Path(args.chips) if args.chips else None
        if chips is not None and not chips.is_file():
            print(f"--chips: no model file {chips}", file=sys.stderr)
            return 2
        measured = {str(d): sweep(Path(args.measure), faces, d, chips) for d in datasets}
        Path(args.out).write_text(json.dumps(measured, indent=2) + "\n")
        print(json.dumps(measured, indent=2))
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.faces:
        crops = prepare_marker_faces(datasets, out, args.seed)
        start = Path(args.start) if args.start else None
        if start is not None and not start.is_file():
            print(f"--start: no checkpoint {start}", file=sys.stderr)
            return 2
        exported = train_reader(crops, out, epochs=100, name="marker-faces", device=args.device,
                                hours=args.hours, weights=start)  # fmt: skip
        shutil.copyfile(exported, out / "marker-faces.onnx")
        print(json.dumps({"model": str(out / "marker-faces.onnx")}))
        return 0
    shipped = Path(args.start) if args.start else MODELS / "detector.onnx"
    if not shipped.is_file():
        print(f"--start: no export {shipped}", file=sys.stderr)
        return 2
    data_yaml = prepare_markers(datasets, out, args.seed)
    shown = data_yaml.parent / "images" / "train"
    start = checkpoint_from_detector(shipped, shown, out / "start.pt")
    model = train_markers(data_yaml, out, args.hours, start, args.device)
    print(json.dumps({"model": str(model)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
