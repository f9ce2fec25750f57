"""Teach the reader's embedding to bring a face together across looks, as enrolment needs.

The reader's pooled features (`vision.training.embedding`) were trained only to feed its
classifier: two crops of one face in a set the reader never saw lie closer than crops of two
faces, but not by much (docs/enrolment.md), which caps reading by the set. This goes on from a
reader checkpoint with its classification loss kept and a supervised contrastive loss (Khosla
et al. 2020) added on those same normalised features, over batches holding every class several
times across the appearance families, so a face lies near itself whatever set drew it and the
class output is trained on as before.

`python3 -m vision.training.metric --start runs/cpu/without-navy/reader/weights/best.pt
--crops runs/readers/without-navy/reader-data --minutes 8 --out runs/metric/without-navy`
writes `OUT/reader/weights/best.onnx` (with the `embedding` output), the layout
`vision.training.enrolment --readers` reads.
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from vision.crops import CROP
from vision.training.embedding import add_embedding

PER_CLASS = 5
"""Crops of each class in a batch: several positives for every anchor, and with 28 classes a
batch of 140, about the classifier's own batch."""
TEMPERATURE = 0.1
"""The contrastive loss's temperature: the value its authors found best, and sharp enough that
the nearest wrong face, not the average one, drives the loss."""
CONTRAST_WEIGHT = 1.0
"""The contrastive loss beside the classification loss: equal, so neither is given up."""
LEARNING_RATE = 3e-4
"""AdamW's rate: three times the plain going-on rate, since the features must move, not just
the last layer; decays to a tenth by the cosine."""
SHIFT_PX = 3
"""A crop moved up to this many pixels each way, as a detector box is off by (train.jitter)."""
SCALE_RANGE = 0.08
"""And scaled by up to this share either way."""
LIGHT_RANGE = 0.2
"""Brightness and contrast changed by up to this share: other light than the renderer's."""


def load_crops(root: Path, names: dict[int, str]) -> tuple[np.ndarray, np.ndarray]:
    """Every crop under `root/CLASS/` as CROP x CROP RGB, with its class index by `names`."""
    index = {name: i for i, name in names.items()}
    images, labels = [], []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if folder.name not in index:
            raise ValueError(f"{folder}: no such class in the reader ({sorted(index)})")
        for path in sorted(folder.glob("*.png")) + sorted(folder.glob("*.jpg")):
            image = cv2.imread(str(path))
            if image is None:
                raise ValueError(f"{path}: not an image")
            if image.shape[:2] != (CROP, CROP):
                image = cv2.resize(image, (CROP, CROP), interpolation=cv2.INTER_AREA)
            images.append(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))
            labels.append(index[folder.name])
    return np.stack(images), np.array(labels)


def batches(labels: np.ndarray, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    """Endless batches of PER_CLASS random crops of every class."""
    by_class = [np.flatnonzero(labels == c) for c in np.unique(labels)]
    while True:
        yield np.concatenate([rng.choice(idx, PER_CLASS, replace=len(idx) < PER_CLASS)
                              for idx in by_class])  # fmt: skip


def augment(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A crop as another look at the same object: shifted, scaled, turned half round or not,
    lit otherwise. Never mirrored (a mirrored 2-4 is no tile)."""
    scale = 1 + rng.uniform(-SCALE_RANGE, SCALE_RANGE)
    turn = 180.0 if rng.random() < 0.5 else 0.0
    matrix = cv2.getRotationMatrix2D((CROP / 2, CROP / 2), turn, scale)
    matrix[:, 2] += rng.uniform(-SHIFT_PX, SHIFT_PX, 2)
    moved = cv2.warpAffine(image, matrix, (CROP, CROP), borderMode=cv2.BORDER_REPLICATE)
    gain = 1 + rng.uniform(-LIGHT_RANGE, LIGHT_RANGE)
    bias = 255 * rng.uniform(-LIGHT_RANGE, LIGHT_RANGE) / 2
    lit: np.ndarray = np.clip(moved.astype(np.float32) * gain + bias, 0, 255)
    return lit


def contrastive(features, labels, temperature: float = TEMPERATURE):  # type: ignore[no-untyped-def]
    """Supervised contrastive loss: each crop's log-likelihood of its own class's crops among
    all the batch's others, on unit vectors."""
    import torch
    from torch.nn import functional

    unit = functional.normalize(features, dim=1)
    logits = unit @ unit.T / temperature
    self_mask = torch.eye(len(labels), dtype=torch.bool)
    logits = logits.masked_fill(self_mask, -1e9)
    positive = (labels[:, None] == labels[None, :]) & ~self_mask
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    return -(log_prob * positive).sum(1).div(positive.sum(1).clamp(min=1)).mean()


def train(start: Path, crops: Path, out: Path, minutes: float, seed: int = 0,
          contrast_weight: float = CONTRAST_WEIGHT) -> Path:  # fmt: skip
    """Go on from the reader checkpoint `start` for `minutes`; returns the exported ONNX.
    `contrast_weight` 0 is the same training without the contrastive loss (to measure it)."""
    import torch
    from torch.nn import functional

    torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    checkpoint = torch.load(start, map_location="cpu", weights_only=False)
    model = copy.deepcopy(checkpoint["model"]).float()
    images, labels = load_crops(crops / "train", model.names)
    print(f"{len(images)} crops, {len(np.unique(labels))} classes from {crops / 'train'}",
          flush=True)  # fmt: skip
    pooled: list[torch.Tensor] = []
    model.model[-1].linear.register_forward_hook(lambda _m, inputs, _o: pooled.append(inputs[0]))
    for parameter in model.parameters():
        parameter.requires_grad_(True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=5e-4)
    model.train()
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.eval()  # statistics held, as the exported reader computes
    began = time.monotonic()
    last_line = began
    steps = 0
    for chosen in batches(labels, rng):
        done = (time.monotonic() - began) / (minutes * 60)
        if done >= 1:
            break
        for group in optimizer.param_groups:
            group["lr"] = LEARNING_RATE * (0.1 + 0.9 * (1 + math.cos(math.pi * done)) / 2)
        batch = np.stack([augment(images[i], rng) for i in chosen]) / 255.0
        inputs = torch.from_numpy(batch.transpose(0, 3, 1, 2).astype(np.float32))
        target = torch.from_numpy(labels[chosen])
        pooled.clear()
        logits = model(inputs)
        classify = functional.cross_entropy(logits, target)
        contrast = contrastive(pooled[0], target)
        loss = classify + contrast_weight * contrast
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps += 1
        if time.monotonic() - last_line > 20:
            last_line = time.monotonic()
            print(f"{done:4.0%} step {steps}: classify {classify.item():.3f}, "
                  f"contrast {contrast.item():.3f}", flush=True)  # fmt: skip
    return export(checkpoint, model, out, steps)


def export(checkpoint: dict, model, out: Path, steps: int) -> Path:  # type: ignore[no-untyped-def,type-arg]
    """Save as an ultralytics checkpoint and export as the reader is (ONNX, dynamic batch),
    with the embedding output."""
    import torch

    from vision.training.train import _yolo

    weights = out / "reader" / "weights"
    weights.mkdir(parents=True, exist_ok=True)
    model.model[-1].linear._forward_hooks.clear()
    saved = dict(checkpoint, model=model.eval().half(), ema=None, optimizer=None,
                 train_results={"metric_steps": steps})  # fmt: skip
    torch.save(saved, weights / "best.pt")
    exported = Path(_yolo()(str(weights / "best.pt")).export(
        format="onnx", imgsz=CROP, simplify=True, dynamic=True))  # fmt: skip
    add_embedding(exported, exported)
    return exported


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", required=True, help="a reader checkpoint (.pt)")
    parser.add_argument("--crops", required=True, help="class folders of crops, train/ in it")
    parser.add_argument("--out", required=True)
    parser.add_argument("--minutes", type=float, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--contrast-weight", type=float, default=CONTRAST_WEIGHT,
                        help="0: the classification loss alone")  # fmt: skip
    args = parser.parse_args()
    if not Path(args.start).is_file():
        print(f"--start: no checkpoint {args.start}", file=sys.stderr)
        return 2
    if not (Path(args.crops) / "train").is_dir():
        print(f"--crops: no train/ folder in {args.crops}", file=sys.stderr)
        return 2
    print(train(Path(args.start), Path(args.crops), Path(args.out), args.minutes, args.seed,
                args.contrast_weight))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
