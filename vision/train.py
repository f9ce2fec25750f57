"""`paigow train`: the two models, trained from scratch on `paigow synth dataset` output.

The detector (YOLO11n-OBB) finds face-up tiles, face-down tiles and dice with oriented boxes;
the reader (YOLO11n-cls) reads each rectified crop: a tile's face, a back, or a die's value.
Training needs the `[train]` extra (torch, ultralytics); nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.crops import CROP, rectify
from vision.synth.dataset import link_images
from vision.synth.labels import CLASSES

DETECTOR_CLASSES = ("tile", "back", "die")


def detector_class(label: str) -> int:
    """Face-up tile, face-down tile or die: the detector's three classes."""
    if label == "back":
        return 1
    if label.startswith("die-"):
        return 2
    return 0


def _annotations(data: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in (data / "annotations.jsonl").read_text().splitlines()]


def prepare_detector(data: Path) -> Path:
    """Write three-class oriented labels beside the data set; returns its data.yaml."""
    root = data / "detector"
    shutil.rmtree(root, ignore_errors=True)
    for entry in _annotations(data):
        w, h = entry["width"], entry["height"]
        lines = []
        for obj in entry["objects"]:
            if not obj["labelled"]:
                continue
            corners = np.clip(np.asarray(obj["corners"]) / [w, h], 0, 1)
            lines.append(
                f"{detector_class(obj['label'])} " + " ".join(f"{v:.6f}" for v in corners.ravel())
            )
        name = Path(entry["image"])
        target = root / "labels" / name.parent.name / f"{name.stem}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines) + "\n")
    link_images(data / "images", root / "images")
    names = "\n".join(f"  {i}: {c}" for i, c in enumerate(DETECTOR_CLASSES))
    (root / "data.yaml").write_text(f"train: images/train\nval: images/val\nnames:\n{names}\n")
    return root / "data.yaml"


def prepare_reader(data: Path, per_class: int = 1500, seed: int = 0) -> Path:
    """Rectified crops of every labelled object, in the class folders ultralytics reads, with
    the corner jitter a detector's boxes have. Backs are capped like any other class."""
    root = data / f"reader-{per_class}"
    shutil.rmtree(root, ignore_errors=True)
    rng = np.random.default_rng(seed)
    counts: dict[str, Counter[str]] = {"train": Counter(), "val": Counter()}
    for entry in tqdm(_annotations(data), desc="crops", unit="img"):
        split = entry["split"]
        cap = per_class if split == "train" else per_class // 5
        wanted = [o for o in entry["objects"] if o["labelled"] and counts[split][o["label"]] < cap]
        if not wanted:
            continue
        image = cv2.imread(str(data / entry["image"]))
        for index, obj in enumerate(wanted):
            corners = jitter(np.asarray(obj["corners"], dtype=np.float64), rng)
            crop = rectify(image, corners)
            folder = root / split / obj["label"]
            folder.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(folder / f"{Path(entry['image']).stem}_{index}.png"), crop)
            counts[split][obj["label"]] += 1
    for split in ("train", "val"):  # every class needs a folder, even if empty
        for label in CLASSES:
            (root / split / label).mkdir(parents=True, exist_ok=True)
    return root


def jitter(corners: np.ndarray, rng: np.random.Generator, amount: float = 0.06) -> np.ndarray:
    """Move the corners as a detector's box would: shift, scale, turn a little; any start."""
    centre = corners.mean(0)
    size = np.linalg.norm(corners[1] - corners[0]) + np.linalg.norm(corners[2] - corners[1])
    angle = rng.normal(0, 0.04)
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    scale = 1 + rng.normal(0, amount / 2)
    moved = (corners - centre) @ rot.T * scale + centre + rng.normal(0, amount * size / 4, 2)
    moved += rng.normal(0, amount * size / 12, moved.shape)
    return np.roll(moved, int(rng.integers(4)), axis=0)


def _yolo() -> type:
    os.environ.setdefault("YOLO_OFFLINE", "1")
    try:
        from ultralytics import YOLO
    except ImportError as error:  # pragma: no cover - depends on the optional extra
        raise RuntimeError("training needs the [train] extra: pip install -e '.[train]'") from error
    return YOLO  # type: ignore[no-any-return]


def train_detector(data_yaml: Path, out: Path, epochs: int, imgsz: int, hours: float | None,
                   batch: int = 16, weights: Path | None = None) -> Path:  # fmt: skip
    """From scratch, or on from an earlier run's checkpoint (CPU runs are short and resumed)."""
    yolo = _yolo()(str(weights) if weights else "yolo11n-obb.yaml")
    out = out.resolve()  # ultralytics puts a relative project under its own runs folder
    yolo.train(data=str(data_yaml), epochs=epochs, imgsz=imgsz, batch=batch, workers=2,
               device="cpu", project=str(out), name="detector", exist_ok=True,
               pretrained=str(weights) if weights else False,
               amp=False, plots=False, time=hours, degrees=180, fliplr=0.5, flipud=0.5,
               mosaic=1.0, close_mosaic=2, patience=100, verbose=False)  # fmt: skip
    best = Path(yolo.trainer.save_dir) / "weights" / "best.pt"
    exported = _yolo()(str(best)).export(format="onnx", imgsz=imgsz, simplify=True, dynamic=False)
    return Path(exported)


def train_reader(crops: Path, out: Path, epochs: int, imgsz: int = CROP) -> Path:
    yolo = _yolo()("yolo11n-cls.yaml")
    out = out.resolve()
    yolo.train(data=str(crops), epochs=epochs, imgsz=imgsz, batch=128, workers=2, device="cpu",
               project=str(out), name="reader", exist_ok=True, pretrained=False, amp=False,
               plots=False, fliplr=0.0, erasing=0.0, auto_augment=None, verbose=False)  # fmt: skip
    best = Path(yolo.trainer.save_dir) / "weights" / "best.pt"
    exported = _yolo()(str(best)).export(format="onnx", imgsz=imgsz, simplify=True, dynamic=True)
    return Path(exported)
