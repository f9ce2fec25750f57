"""`paigow train`: the models, trained from scratch on `paigow synth dataset` output.

The detector (YOLO11n-OBB) finds face-up tiles, face-down tiles and dice with oriented boxes;
the reader (YOLO11n-cls) reads each rectified crop: a tile's face, a back, or a die's value;
the flatness reader (YOLO11n-cls) tells from a die's crop whether it lies flat or leans on an
edge. Training needs the `[train]` extra (torch, ultralytics); nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import shutil
import warnings
import zlib
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from itertools import zip_longest
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray
from tqdm import tqdm

from vision.crops import CROP, LEAN_MARGIN, canonical, cut, cut_to_scale, set_view
from vision.detections import Detections, box_sides
from vision.detector import (
    DETECTOR_CLASSES,
    DETECTOR_INPUT,
    DETECTOR_SCALE,
    MODELS,
    Detector,
    Reader,
    names_of,
)
from vision.labels import CLASS_ID, CLASSES, MARKERS
from vision.refine import OUTPUTS, REFINE_CROP
from vision.synth.render import Label, Rendering
from vision.training.recolour import recolouring_trainer


def detector_class(label: str) -> int | None:
    """Face-up tile, face-down tile or die: the detector's classes. A marker is none of them
    (its own detector finds it): left unlabelled, it is background to this one."""
    if label in MARKERS:
        return None
    if label == "back":
        return 1
    if label.startswith("die-"):
        return 2
    return 0


def _annotations(data: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in (data / "annotations.jsonl").read_text().splitlines()]


DETECTOR_CROP = 320
"""Training crops: full-frame inputs cost nine times as much per image on a CPU as 320-px crops
cut from the same half-size frames, with the objects at the size the detector will see."""


def prepare_detector(datasets: list[Path], out: Path, val_images: int = 100,
                     workers: int = 1, real_dice: Path | None = None,
                     photo_looks: Collection[str] | None = None) -> Path:  # fmt: skip
    """Cut each half-size frame into overlapping crops with oriented labels of the detector's
    classes (a marker is left unlabelled: background to learn); an object cut by a crop's edge
    keeps the part inside if at least half of it is in view. With `real_dice` (the
    table-scale photographs' folder, `vision.training.real_dice`), each frame of `photo_looks`
    (every frame where None) first gets one real photograph of dice pasted where it covers
    nothing, its train split's on training frames and its val split's on validation frames.
    Returns the crops' data.yaml."""
    from vision.training.real_dice import photos

    root = fresh_obb_folders(out / "detector-data")
    entries = [(data, e) for data in datasets for e in _annotations(data)]
    dropped = set([i for i, (_, e) in enumerate(entries) if e["split"] == "val"][val_images:])
    real = {split: photos(real_dice / split) if real_dice else [] for split in ("train", "val")}
    jobs = []
    for i, (data, entry) in enumerate(entries):
        if i not in dropped:
            pool = real[entry["split"]]
            if photo_looks is not None and entry.get("family", "house") not in photo_looks:
                pool = []
            jobs.append((root, data, entry, pool[i % len(pool)] if pool else None))
    _each(_detector_crops, jobs, workers, "detector crops")
    return obb_data_yaml(root, DETECTOR_CLASSES)


def fresh_obb_folders(root: Path) -> Path:
    """An empty ultralytics data folder: `images/` and `labels/`, each with `train/` and `val/`."""
    shutil.rmtree(root, ignore_errors=True)
    for split in ("train", "val"):
        (root / "images" / split).mkdir(parents=True, exist_ok=True)
        (root / "labels" / split).mkdir(parents=True, exist_ok=True)
    return root


def obb_data_yaml(root: Path, names: tuple[str, ...]) -> Path:
    """The data.yaml that names `root`'s splits and its classes, in order."""
    listed = "\n".join(f"  {i}: {c}" for i, c in enumerate(names))
    path = root / "data.yaml"
    path.write_text(
        f"path: {root.resolve()}\ntrain: images/train\nval: images/val\nnames:\n{listed}\n"
    )
    return path


def _each(work, jobs: list, workers: int, what: str) -> list:  # type: ignore[no-untyped-def, type-arg]
    """`work` over `jobs` in order, on `workers` processes, with a progress bar."""
    if workers <= 1:
        return [work(job) for job in tqdm(jobs, desc=what, unit="img")]
    from multiprocessing import get_context

    with get_context("spawn").Pool(workers) as pool:
        return list(tqdm(pool.imap(work, jobs, chunksize=8), total=len(jobs), desc=what,
                         unit="img"))  # fmt: skip


def _detector_crops(job: tuple) -> None:  # type: ignore[type-arg]
    from vision.training.real_dice import TRAINING_SHRINK, free_place, paste, scaled_size

    root, data, entry, photo = job
    split = entry["split"]
    image = cv2.imread(str(data / entry["image"]))
    small = cv2.resize(image, None, fx=DETECTOR_SCALE, fy=DETECTOR_SCALE,
                       interpolation=cv2.INTER_AREA)  # fmt: skip
    objects = [(kind, np.asarray(o["corners"]) * DETECTOR_SCALE) for o in entry["objects"]
               if o["labelled"] and (kind := detector_class(o["label"])) is not None
               ]  # fmt: skip
    stem = f"{data.name}-{Path(entry['image']).stem}"
    if photo is not None:  # seeded by the frame, so a data set is cut the same every time
        rng = np.random.default_rng(zlib.crc32(stem.encode()))
        scale = DETECTOR_SCALE * rng.uniform(*TRAINING_SHRINK)
        everything = [np.asarray(o["corners"]) * DETECTOR_SCALE for o in entry["objects"]]
        size = (small.shape[1], small.shape[0])
        at = free_place(scaled_size(photo, scale), size, everything, rng)
        if at is not None:
            objects += [(DETECTOR_CLASSES.index("die"), c) for c in paste(small, photo, scale, at)]
    for x, y in _crop_origins(small.shape[1], small.shape[0]):
        crop = small[y : y + DETECTOR_CROP, x : x + DETECTOR_CROP]
        lines = [f"{cls} " + " ".join(f"{v:.6f}" for v in box.ravel())
                 for cls, corners in objects
                 if (box := _inside(corners - [x, y])) is not None]  # fmt: skip
        name = f"{stem}-{x}-{y}"
        cv2.imwrite(str(root / "images" / split / f"{name}.jpg"), crop,
                    [cv2.IMWRITE_JPEG_QUALITY, 95])  # fmt: skip
        (root / "labels" / split / f"{name}.txt").write_text("\n".join(lines) + "\n")


def _crop_origins(width: int, height: int) -> list[tuple[int, int]]:
    """Top-left corners of crops that cover the frame, overlapping where they must."""

    def starts(length: int) -> list[int]:
        count = max(1, -(-length // DETECTOR_CROP))
        if count == 1:
            return [0]
        step = (length - DETECTOR_CROP) / (count - 1)
        return [round(i * step) for i in range(count)]

    return [(x, y) for y in starts(height) for x in starts(width)]


def _within(
    polygon: np.ndarray, width: float, height: float
) -> tuple[float, float, np.ndarray | None]:
    """A convex polygon's area, the area of its part inside a `width` x `height` rectangle at
    the origin, and that part (None where nothing of it lies inside)."""
    rectangle = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    convex = cv2.convexHull(polygon.astype(np.float32))
    shown, part = cv2.intersectConvexConvex(convex, rectangle)
    return float(cv2.contourArea(convex)), float(shown), part


def _inside(corners: np.ndarray) -> np.ndarray | None:
    """The object's part inside the crop as normalised corners, or None if under half shows."""
    area, shown, part = _within(corners, DETECTOR_CROP, DETECTOR_CROP)
    if area <= 0 or part is None or shown < 0.5 * area:
        return None
    box = corners if shown > 0.99 * area else cv2.boxPoints(cv2.minAreaRect(part))
    return np.clip(np.asarray(box) / DETECTOR_CROP, 0, 1)  # type: ignore[no-any-return]


DIE_COPIES = 2
"""Dice are scarce (three a scene, when in view): each gives the reader two differently moved
boxes."""


READ_IN_FRAME = 0.9
"""A reader crop is cut only of a face at least this share inside its image. The renderer labels
a face by how much of its in-frame part shows, so a tile nine tenths off the frame's edge is
labelled; its crop is the edge's pixels smeared (`BORDER_REPLICATE`) and its pips are off the
frame. 2-3% of the leave-one-family-out held face crops of `datasets/fam-wide` were less
than nine tenths inside (ivory 116 of 3,452), and the readers read 24-25% of those right against
66-74% of the rest: a label no one could read from the crop teaches the reader nothing."""


def in_frame(obj: dict, entry: dict) -> bool:  # type: ignore[type-arg]
    """Whether at least `READ_IN_FRAME` of an annotated object's face lies inside its image."""
    area, inside, _ = _within(np.asarray(obj["corners"]), entry["width"], entry["height"])
    return bool(inside >= READ_IN_FRAME * area)


BACKS = {"back": 3}
"""A back's cap, in face caps: every family's back is a look of its own (the families' backs
differ more than their faces do), and a back read as a face is a false exposed-tile alert."""


def _class_folders(root: Path, names: tuple[str, ...]) -> Path:
    """`root` emptied, with a train and a val folder for every class: ultralytics takes its
    classes from the folders, so each needs one even where no crop falls in it."""
    shutil.rmtree(root, ignore_errors=True)
    for split in ("train", "val"):
        for name in names:
            (root / split / name).mkdir(parents=True)
    return root


def prepare_reader(datasets: list[Path], out: Path, per_class: int = 1500, seed: int = 0,
                   keep: Callable[[str], bool] | None = None,
                   workers: int = 1, to_scale: str | None = None) -> Path:  # fmt: skip
    """Crops of every labelled object, in the class folders ultralytics reads, from boxes moved
    as the detector's are, backs capped at `BACKS` times a face's cap. `keep` says which
    appearance families' images are used (leave-one-family-out training and its measurement).
    `to_scale`: cut at the cloth's scale from each image's homography (`cut_to_scale`), a
    fixed patch ("fixed") or one the size of the image's own tiles and dice ("set",
    `set_view`: what a box that has measured its table's set would cut)."""
    root = _class_folders(out / "reader-data", CLASSES)
    counts: dict[str, Counter[str]] = {"train": Counter(), "val": Counter()}
    jobs = []
    for data in datasets:
        for entry in _annotations(data):
            if keep is not None and not keep(entry.get("family", "house")):
                continue
            split = entry["split"]
            cap = per_class if split == "train" else per_class // 5
            wanted = [o for o in entry["objects"]
                      if o["labelled"] and o["label"] in CLASS_ID and in_frame(o, entry)
                      and counts[split][o["label"]] < cap * BACKS.get(o["label"], 1)]  # fmt: skip
            if not wanted:
                continue
            counts[split].update(o["label"] for o in wanted)
            if to_scale and "homography" not in entry:
                raise ValueError(f"{data}: {entry['image']} has no homography; render it again")
            jobs.append((root, data, entry, wanted, seed + len(jobs), to_scale))
    _each(_reader_crops, jobs, workers, "reader crops")
    return root


def _reader_crops(job: tuple[Path, Path, dict, list, int, str | None]) -> None:  # type: ignore[type-arg]
    root, data, entry, wanted, seed, to_scale = job
    rng = np.random.default_rng(seed)
    split = entry["split"]
    image = cv2.imread(str(data / entry["image"]))
    if to_scale is not None:
        homography = np.asarray(entry["homography"])
        sizes = _own_sizes(entry, homography)
    for index, obj in enumerate(wanted):
        die = obj["label"].startswith("die-")
        for copy in range(DIE_COPIES if die else 1):
            corners = jitter(np.asarray(obj["corners"], dtype=np.float64), rng, die)
            name = f"{data.name}-{Path(entry['image']).stem}_{index}_{copy}.png"
            if to_scale is None:
                crop = cut(image, corners, die)
            else:
                view = set_view(sizes[die], die) if to_scale == "set" else None
                crop = cut_to_scale(image, corners, die, homography, view)
            cv2.imwrite(str(root / split / obj["label"] / name), crop)


def _own_sizes(entry: dict, homography: NDArray[np.float64]) -> dict[bool, tuple[float, float]]:  # type: ignore[type-arg]
    """The median width and length (mm) of an image's true tile boxes, and of its dice: the
    size its set measures, as a box learns it from the tiles it has seen."""
    inverse = np.linalg.inv(homography)
    sizes: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for obj in entry["objects"]:
        if obj["labelled"] and obj["label"] in CLASS_ID:
            corners = np.asarray(obj["corners"], np.float64).reshape(-1, 1, 2)
            cloth = cv2.perspectiveTransform(corners, inverse).reshape(1, 4, 2)
            length, width = box_sides(cloth)[0]
            sizes[obj["label"].startswith("die-")].append((width, length))
    return {die: tuple(np.median(found, axis=0)) if found else SIZE_UNSEEN[die]
            for die, found in sizes.items()}  # fmt: skip


SIZE_UNSEEN = {False: (25.0, 62.0), True: (16.0, 16.0)}
"""An image without a labelled tile (or die) is cut at the house set's size: the scene's
default tile and the middle of the 12-20 mm dice."""


ROUND_SEEDS = 800_000
"""Rounds mined for reader crops start here: data sets and fixtures use seeds below 10,000 and
`vision.training.accuracy` 700,000 on."""
MINED_ROUNDS = 100
"""At most this many rounds are mined: `benchmarks/false_faces.py` reads rounds from 800,100 on."""
ROUND_MATCH = 0.5
"""A detector box is an object's when their overlap is at least half their union."""
FACE_SHOWN = 0.6
"""A face-up tile's crop is trained on only when this share of its face is in view; a back's at
any share (a half-hidden back is still no face)."""
MINED_IRREGULARITIES = (None, None, "exposed-tile-stacking", "exposed-tile-dealing")
KEEP = {"back": 0.05, "no face": 1.0, "face": 0.3, "hard": 0.3, "misread": 1.0}
"""Share of each kind of mined crop kept: backs lying alone are many and read right; boxes over
several backs are few and were read as faces (`docs/benchmarks.md`); hard crops, those the
shipped reader gets wrong, come about 300 a round (most slid off a back over a line); the
detector's own boxes over no face that the reader reads as faces (`misread`) are the false
faces `benchmarks/false_faces.py` counts, a few a round: every one is kept."""
HARD_FACE = 0.3
"""A crop over no face is hard when the shipped reader gives a face this much of its belief."""
HARD_TRIES = 4
"""Boxes tried per back in full view: moved as the detector's are, and as many slid off it."""
HALF_SHOWN = 0.5
"""A back at least this much in view is paired with its neighbours (`straddles`), though
another lies across it: washed backs lie on each other."""


def round_crops(
    seed: int, every: float = 0.3, reader: Path | None = None, until: float | None = None
) -> Iterator[tuple[str, str, NDArray[np.uint8]]]:
    """(kind, label, crop) for each tile box the shipped detector finds in a simulated round's
    frames, one frame every `every` seconds up to `until` (the round's end). The scenes the
    reader is otherwise trained on are single frames; in a round it reads tiles being washed,
    carried and half hidden under hands, boxed as the detector boxes them. A box over backs and
    cloth and no face, such as one pairing halves of two washed tiles, is labelled `back`: no
    face shows in it; where `reader` (the shipped one by default) takes it for a face, it is a
    `misread`, with `HARD_TRIES` boxes moved about it as the detector's move. A box half over a
    face is left out. Then the `hard` crops (`hard_crops`) of `reader`, labelled `back`."""
    rng = np.random.default_rng(seed)
    injected = MINED_IRREGULARITIES[int(rng.integers(len(MINED_IRREGULARITIES)))]
    detector = Detector(threads=1)
    judge = Reader(reader or MODELS / "reader.onnx", threads=1, flatness=None)
    for rendering, seen in round_frames(seed, injected, every, until, dice=True):
        truth = [t for t in seen if not t.label.startswith("die-")]
        found = detector.detect(rendering.image)
        face_up = judge.read(rendering.image, found).face_up if len(found) else []
        for corners, kind, face in zip(found.corners, found.labels, face_up, strict=True):
            if kind == "die":
                continue
            best = under(corners, truth)
            crop = cut(rendering.image, corners, False)
            if best is None:
                near = [t for t in truth if _iou(corners, t.corners) > 0.05]
                no_face = all(t.label == "back" for t in near)
            else:
                no_face = best.label == "back"
            if no_face:
                if face >= HARD_FACE:
                    yield "misread", "back", crop
                    for _ in range(HARD_TRIES):
                        yield (
                            "misread",
                            "back",
                            cut(rendering.image, jitter(corners, rng, False), False),
                        )
                else:
                    yield ("no face" if best is None else "back"), "back", crop
            elif best is not None and best.visible >= FACE_SHOWN:
                yield "face", str(best.label), crop
        for crop in hard_crops(rendering.image, seen, judge, rng):
            yield "hard", "back", crop


def hard_crops(image: NDArray[np.uint8], seen: list[Label], reader: Reader,
               rng: np.random.Generator) -> list[NDArray[np.uint8]]:  # fmt: skip
    """Crops over no face that `reader` takes for one: boxes around each back in full view,
    moved as the detector's are or slid off it over the cloth, and boxes straddling two backs
    (`straddles`), touching no face-up tile and no die.
    A back along one of the cloth's lines, the line showing at its ends, read `2-2` at 0.99;
    a box slid half off a back over a line's corner `6-6` at 0.98: the false exposed-tile alerts
    of rounds 700141 and 730064 (`docs/accuracy.md`)."""
    others = [np.asarray(t.corners, np.float64) for t in seen if t.label != "back"]
    boxes = []
    for back in seen:
        if back.label != "back" or back.visible < 0.9:
            continue
        corners = np.asarray(back.corners, np.float64)
        boxes += [jitter(corners, rng, False) for _ in range(HARD_TRIES)]
        boxes += [slide(corners, rng) for _ in range(HARD_TRIES)]
    boxes += straddles(seen, rng)
    boxes = [b for b in boxes if all(_iou(b, o) == 0 for o in others)]
    if not boxes:
        return []
    read = reader.read(image, Detections(np.asarray(boxes), np.ones(len(boxes)),
                                         ("tile",) * len(boxes)))  # fmt: skip
    return [cut(image, b, False) for b, face in zip(boxes, read.face_up, strict=True)
            if face >= HARD_FACE]  # fmt: skip


def straddles(seen: list[Label], rng: np.random.Generator) -> list[NDArray[np.float64]]:
    """Boxes the size of a back between two backs lying closer than a back's length, as the
    detector boxes two washed backs as one tile: two overlapping backs across the printed
    centre circle, boxed as one, read `3-3` and `2-2` at 0.5-0.8 for a second and more (round
    1550007, a false exposed-tile alert; `docs/accuracy.md`). One box per pair, each at the
    pair's midpoint, turned as one of the two and moved as the detector's boxes move."""
    backs = [np.asarray(t.corners, np.float64) for t in seen
             if t.label == "back" and t.visible >= HALF_SHOWN]  # fmt: skip
    centres = [back.mean(0) for back in backs]
    boxes = []
    for i, first in enumerate(backs):
        length = np.linalg.norm(canonical(first)[2] - canonical(first)[1])
        for j in range(i + 1, len(backs)):
            if np.linalg.norm(centres[i] - centres[j]) >= length:
                continue
            middle = (centres[i] + centres[j]) / 2
            k = i if rng.random() < 0.5 else j
            boxes.append(jitter(backs[k] - centres[k] + middle, rng, False))
    return boxes


def slide(corners: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
    """A tile's box moved off it, across by 0.4-1 of its width or along by 0.3-0.7 of its
    length: a detector box beside a back, over part of it and the cloth."""
    axes = canonical(corners)
    across, along = axes[1] - axes[0], axes[2] - axes[1]
    sign = rng.choice([-1.0, 1.0])
    step = (across * rng.uniform(0.4, 1.0) if rng.random() < 0.5
            else along * rng.uniform(0.3, 0.7))  # fmt: skip
    return jitter(corners + sign * step, rng, False)


def round_frames(
    seed: int, injected: str | None, every: float, until: float | None = None, dice: bool = False
) -> Iterator[tuple[Rendering, list[Label]]]:
    """A simulated 1920x1080 round's frames, one every `every` seconds up to `until` (its end),
    each with the tiles in view (and the dice, with `dice`)."""
    from vision.synth.round import FPS, Studio
    from vision.training.accuracy import RULES

    studio = Studio.of(seed, RULES[seed % 4], [injected] if injected else [], (1920, 1080))
    end = studio.frame_count if until is None else int(until * FPS)
    for index in range(0, end, max(1, round(every * FPS))):
        things, _ = studio.scene.things(index / FPS)
        rendering = studio.renderer.render(things, studio.look, studio.rng)
        yield rendering, [t for t in rendering.labels
                          if t.label and (dice or not t.label.startswith("die-"))]  # fmt: skip


def _mine(args: tuple[int, Path, str, Path | None, float, float | None]) -> Counter[str]:
    seed, root, split, reader, every, until = args
    rng = np.random.default_rng([seed, 1])
    counts: Counter[str] = Counter()
    mined = round_crops(seed, every, reader, until)
    for index, (kind, label, crop) in enumerate(mined):
        if rng.random() < KEEP[kind]:
            cv2.imwrite(str(root / split / label / f"round{seed}_{every:g}s_{index}.png"), crop)
            counts[label] += 1
    return counts


def prepare_round_crops(root: Path, rounds: int, val_every: int = 10, workers: int = 2,
                        first: int = 0, reader: Path | None = None, every: float = 0.3,
                        until: float | None = None) -> Counter[str]:  # fmt: skip
    """Adds crops mined from `rounds` simulated rounds (from the `first` after `ROUND_SEEDS`),
    a frame every `every` seconds up to `until`, to the reader's class folders (every
    `val_every`-th round's to validation), `workers` rounds at a time; the hard crops are those
    `reader` (the shipped one by default) reads as faces. Crops are named by round and frame
    step, so mining a round's first seconds again at every frame keeps what was mined before."""
    from multiprocessing import Pool

    for split in ("train", "val"):
        for label in CLASSES:
            (root / split / label).mkdir(parents=True, exist_ok=True)
    jobs = [(ROUND_SEEDS + i, root, "val" if i % val_every == val_every - 1 else "train", reader,
             every, until) for i in range(first, first + rounds)]  # fmt: skip
    total: Counter[str] = Counter()
    with Pool(workers) as pool:
        for counts in tqdm(pool.imap_unordered(_mine, jobs), total=rounds, desc="round crops",
                           unit="round"):  # fmt: skip
            total.update(counts)
    return total


def under(corners: NDArray[np.float64], truth: list[Label]) -> Label | None:
    """The object a box is on: the one it overlaps most, weighted by how much of each shows
    (a face-up tile lying on a back hides it), if they overlap by `ROUND_MATCH`."""
    if not truth:
        return None
    best = truth[int(np.argmax([_iou(corners, t.corners) * t.visible for t in truth]))]
    return best if _iou(corners, best.corners) >= ROUND_MATCH else None


def _iou(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    shared, _ = cv2.intersectConvexConvex(a32, b32)
    union = cv2.contourArea(a32) + cv2.contourArea(b32) - shared
    return float(shared / union) if union > 0 else 0.0


REFINE_MATCH = 0.25
"""A detected box trains the refiner on the object of its kind it overlaps most, from this
oriented IoU: a box straddling two tiles (about a third on each) learns to move onto one."""
REFINE_SHARE = {"train1080": 1.0, "train-dice": 0.2}
"""Share of the tile boxes kept per data set (`train-dice` is there for its dice)."""
SHAPE = (REFINE_CROP, REFINE_CROP, 3)


def prepare_refiner(datasets: list[Path], out: Path, seed: int = 0, stage: int = 1) -> Path:
    """A refiner stage's examples: each box the shipped detector finds on a labelled object (its
    own errors, not a model of them; for the second stage, after the first stage moved it), and
    one box moved as `jitter` moves it (the second stage: half as far) per labelled die and per
    third of the tiles, as crops with the true box encoded in the box's frame (`vision.refine`).
    Written as one .npz per split."""
    from vision.detector import REFINERS, Detector
    from vision.refine import FIRST, STAGES, crop, encode

    rng = np.random.default_rng(seed)
    detector = Detector(refiner=REFINERS[: stage - 1])  # the boxes it must learn to fix
    view = STAGES[stage - 1]
    spread = view.most_shift / FIRST.most_shift  # boxes moved as far as the stage may move them
    rows: dict[str, tuple[list, list, list, list]] = {  # type: ignore[type-arg]
        "train": ([], [], [], []), "val": ([], [], [], [])}  # fmt: skip
    entries = [(data, e) for data in datasets for e in _annotations(data)]
    for data, entry in tqdm(entries, desc="refiner crops", unit="img"):
        image = cv2.imread(str(data / entry["image"]))
        truth = [o for o in entry["objects"] if o["labelled"] and o["label"] in CLASS_ID]
        kinds = np.array([detector_class(o["label"]) for o in truth])
        boxes = [np.asarray(o["corners"], np.float64) for o in truth]
        found = detector.detect(image)
        pairs = []
        for corners, kind in zip(found.corners, found.labels, strict=True):
            cls = DETECTOR_CLASSES.index(kind)
            if cls != 2 and rng.random() > REFINE_SHARE.get(data.name, 1.0):
                continue
            ious = [
                _iou(corners, b) if k == cls else 0.0 for b, k in zip(boxes, kinds, strict=True)
            ]
            if ious and max(ious) >= REFINE_MATCH:
                pairs.append((corners, boxes[int(np.argmax(ious))], cls == 2))
        for box, k in zip(boxes, kinds, strict=True):
            if k == 2 or rng.random() < REFINE_SHARE.get(data.name, 1.0) / 3:
                pairs.append((jitter(box, rng, die=k == 2, spread=spread), box, k == 2))
        crops, targets, dice, detected = rows[entry["split"]]
        for corners, box, die in pairs:
            crops.append(crop(image, corners, die, view))
            targets.append(encode(corners, box, die))
            dice.append(die)
            detected.append(corners)
    root = out / f"{REFINERS[stage - 1].stem}-data"
    root.mkdir(parents=True, exist_ok=True)
    for split, (crops, targets, dice, detected) in rows.items():
        np.savez(
            root / f"{split}.npz",
            crops=np.asarray(crops, np.uint8).reshape(-1, *SHAPE),
            targets=np.asarray(targets, np.float32).reshape(-1, 5),
            dice=np.asarray(dice, bool),
            boxes=np.asarray(detected).reshape(-1, 4, 2),
        )
    return root


def _refiner_net() -> object:
    """About 20 M multiply-adds a crop: a full table's 35 boxes in a few milliseconds."""
    from torch import nn

    def conv(i: int, o: int, stride: int) -> list[nn.Module]:
        return [nn.Conv2d(i, o, 3, stride, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]

    features = [*conv(3, 16, 2), *conv(16, 32, 1), *conv(32, 48, 2), *conv(48, 64, 1),
                *conv(64, 96, 2), *conv(96, 128, 2)]  # fmt: skip
    head = [nn.Flatten(), nn.Linear(128 * 4 * 4, 128), nn.ReLU(), nn.Linear(128, OUTPUTS)]
    return nn.Sequential(*features, *head)


def train_refiner(data: Path, out: Path, epochs: int = 15, batch: int = 256, seed: int = 0,
                  stage: int = 1) -> Path:  # fmt: skip
    """Plain torch (ultralytics has no box regressor): smooth L1 on each kind's five numbers,
    scaled to unit spread, with mirrored crops; exported to ONNX with the scale folded in and
    the stage's view in the file's metadata."""
    import onnx
    import torch
    from torch import nn

    from vision.detector import REFINERS
    from vision.refine import STAGES

    torch.manual_seed(seed)
    torch.set_num_threads(2)
    train, val = np.load(data / "train.npz"), np.load(data / "val.npz")
    # each array read from the file once: indexing `train["crops"]` reads it all again
    crops, targets, dice = train["crops"], train["targets"], train["dice"]
    mean = np.concatenate([targets[~dice].mean(0), targets[dice].mean(0)]).astype(np.float32)
    spread = np.concatenate([targets[~dice].std(0), targets[dice].std(0)]).astype(np.float32)
    net = _refiner_net()
    optimiser = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    steps = epochs * (len(targets) // batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, 2e-3, total_steps=steps)
    rng = np.random.default_rng(seed)

    def tensors(crops: NDArray, targets: NDArray, dice: NDArray, mirror: bool) -> tuple:  # type: ignore[type-arg]
        x = crops[..., ::-1].astype(np.float32) / 255  # BGR to RGB, as blobFromImages(swapRB)
        y = targets.copy()
        if mirror:
            for axis, flip in (("x", rng.random(len(y)) < 0.5), ("y", rng.random(len(y)) < 0.5)):
                x[flip] = x[flip][:, :, ::-1] if axis == "x" else x[flip][:, ::-1]
                y[np.ix_(flip, [0 if axis == "x" else 1, 4])] *= -1
        wide = np.zeros((len(y), OUTPUTS), np.float32)
        wide[~dice, :5], wide[dice, 5:] = y[~dice], y[dice]
        wide = (wide - mean) / spread
        mask = np.zeros_like(wide)
        mask[~dice, :5], mask[dice, 5:] = 1, 1
        return (torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2))),
                torch.from_numpy(wide), torch.from_numpy(mask))  # fmt: skip

    def loss_of(x: object, y: object, mask: object) -> object:
        return (nn.functional.smooth_l1_loss(net(x), y, reduction="none") * mask).sum() / mask.sum()

    vx, vy, vm = tensors(val["crops"], val["targets"], val["dice"], False)
    for epoch in range(epochs):
        net.train()
        order = rng.permutation(len(targets))
        bar = tqdm(range(len(order) // batch), desc=f"refiner {epoch + 1}/{epochs}", unit="batch")
        for step in bar:
            pick = np.sort(order[step * batch : (step + 1) * batch])
            x, y, mask = tensors(crops[pick], targets[pick], dice[pick], True)
            loss = loss_of(x, y, mask)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            bar.set_postfix(loss=f"{loss.item():.3f}")
        net.eval()
        if len(vx):
            with torch.no_grad():
                val_loss = np.mean([float(loss_of(vx[i : i + 1024], vy[i : i + 1024],
                                                  vm[i : i + 1024]))
                                    for i in range(0, len(vx), 1024)])  # fmt: skip
            tqdm.write(f"refiner epoch {epoch + 1}: validation loss {val_loss:.4f}")
    head = net[-1]
    with torch.no_grad():  # fold the targets' scale into the last layer
        head.weight.mul_(torch.from_numpy(spread)[:, None])
        head.bias.mul_(torch.from_numpy(spread)).add_(torch.from_numpy(mean))
    out.mkdir(parents=True, exist_ok=True)
    name = REFINERS[stage - 1].stem
    torch.save(net.state_dict(), out / f"{name}.pt")
    path = out / f"{name}.onnx"
    with warnings.catch_warnings():  # the newer exporter needs onnxscript, which we do not ship
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            net,
            torch.zeros(1, 3, REFINE_CROP, REFINE_CROP),
            str(path),
            input_names=["images"],
            output_names=["boxes"],
            dynamic_axes={"images": {0: "n"}, "boxes": {0: "n"}},
            dynamo=False,
        )
    model = onnx.load(str(path))
    onnx.helper.set_model_props(model, {"view": str(STAGES[stage - 1])})
    onnx.save(model, str(path))
    return path


FLATNESS_CLASSES = ("cocked", "flat")


def prepare_flatness(datasets: list[Path], out: Path, per_class: int = 4000, seed: int = 0) -> Path:
    """Die crops (boxes moved as the detector's are) in `flat` and `cocked` class folders.
    Cocked dice are rare in ordinary scenes: train on a data set rendered with
    `--cocked-dice 0.5`; each cocked die gives `DIE_COPIES` crops, each flat one a single.
    Frames with a shaken camera's blur are left out: the follower judges dice lying still.
    The data sets take turns, image by image, so that the cap draws on every look given rather
    than filling up from the first data set named."""
    root = _class_folders(out / "flatness-data", FLATNESS_CLASSES)
    rng = np.random.default_rng(seed)
    counts: Counter[tuple[str, str]] = Counter()
    each = [[(data, e) for e in _annotations(data)] for data in datasets]
    entries = [pair for turn in zip_longest(*each) for pair in turn if pair is not None]
    for data, entry in tqdm(entries, desc="flatness crops", unit="img"):
        split = entry["split"]
        cap = per_class if split == "train" else per_class // 5
        dice = [o for o in entry["objects"] if o["labelled"] and o["label"].startswith("die-")]
        if entry.get("motion_blur", 0):
            continue
        image = cv2.imread(str(data / entry["image"])) if dice else None
        for index, obj in enumerate(dice):
            name = "flat" if obj["tags"].get("flat", True) else "cocked"
            for copy in range(1 if name == "flat" else DIE_COPIES):
                if counts[split, name] >= cap:
                    break
                corners = jitter(np.asarray(obj["corners"], dtype=np.float64), rng, die=True)
                crop = f"{data.name}-{Path(entry['image']).stem}_{index}_{copy}.png"
                cv2.imwrite(str(root / split / name / crop), cut(image, corners, True, LEAN_MARGIN))
                counts[split, name] += 1
    return root


DICE_CLASSES = tuple(label for label in CLASSES if label.startswith("die-"))
DICE_REAL_PER_CLASS = {"train": 8000, "val": 250}
"""Real die crops per value beside the renders' in a dice reader's folders: in training the
whole train split (6,564-7,848 a value), two thirds of its crops. The photographs' dice (other
bodies, pips, cameras) are the look it lacks most: at 1,500 a value a reader trained from
scratch read 78.5% of the real test split's dice, at 3,000 89.2%, and going on from that one
with all of them 90.7%, the house look's dice unchanged (`models/MODEL_CARD.md`)."""


def copy_real_dice(real: Path, root: Path, per_class: dict[str, int],
                   seed: int = 0) -> Counter[str]:  # fmt: skip
    """Copy up to `per_class[split]` real die crops a value, drawn at random, from `real`
    (`scripts/fetch_real_dice.py`'s crops: PNG, or JPEG where carried to a GPU machine) into the
    class folders under `root`, each named `real-...`. Crops copied, by split."""
    draw = random.Random(seed)
    added: Counter[str] = Counter()
    for split, cap in per_class.items():
        for name in DICE_CLASSES:
            folder = real / split / name
            files = sorted(p for p in folder.glob("*") if p.suffix in (".png", ".jpg"))
            for path in draw.sample(files, min(cap, len(files))):
                shutil.copy2(path, root / split / name / f"real-{path.name}")
                added[split] += 1
    return added


def prepare_dice(datasets: list[Path], out: Path, real: Path | None = None,
                 seed: int = 0) -> Path:  # fmt: skip
    """Crops of every labelled die, in die-1..die-6 folders, for a reader of dice alone: boxes
    moved as the detector's are (two copies of each training die), shaken frames included (the
    box reads dice in every frame), and with `real` (`scripts/fetch_real_dice.py`'s crops) up to
    `DICE_REAL_PER_CLASS` real photographs' dice per value."""
    root = _class_folders(out / "dice-data", DICE_CLASSES)
    rng = np.random.default_rng(seed)
    for data in datasets:
        for entry in tqdm(_annotations(data), desc=f"dice crops: {data.name}", unit="img"):
            dice = [o for o in entry["objects"] if o["label"] in DICE_CLASSES
                    and o["labelled"] and in_frame(o, entry)]  # fmt: skip
            if not dice:
                continue
            image = cv2.imread(str(data / entry["image"]))
            split = entry["split"]
            for index, obj in enumerate(dice):
                for copy in range(DIE_COPIES if split == "train" else 1):
                    corners = jitter(np.asarray(obj["corners"], dtype=np.float64), rng, die=True)
                    crop = f"{data.name}-{Path(entry['image']).stem}_{index}_{copy}.png"
                    cv2.imwrite(str(root / split / obj["label"] / crop), cut(image, corners, True))
    if real is not None:
        copy_real_dice(real, root, DICE_REAL_PER_CLASS, seed)
    return root


def jitter(corners: np.ndarray, rng: np.random.Generator, die: bool,
           spread: float = 1.0) -> np.ndarray:  # fmt: skip
    """Move a true box as the detector's boxes move (`vision.crops` has the measurements):
    a tile's by a tenth of its width, a few percent in size and a few degrees; a die's by a
    quarter of its side and up to half its size again; all of it `spread` times as far. Any
    starting corner."""
    centre = corners.mean(0)
    short = min(np.linalg.norm(corners[1] - corners[0]), np.linalg.norm(corners[2] - corners[1]))
    if die:
        shift, turn = rng.normal(0, 0.2 * short * spread, 2), 0.0
        scale = 1 + (rng.uniform(0.9, 1.45, 2) - 1) * spread
    else:
        shift, turn = rng.normal(0, 0.12 * short * spread, 2), 0.09 * spread
        scale = rng.normal(1, 0.07 * spread, 2)
    angle = rng.normal(0, turn)
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    axes = canonical(corners) - centre  # scale the short and the long side apart
    u = (axes[1] - axes[0]) / max(np.linalg.norm(axes[1] - axes[0]), 1e-9)
    v = np.array([-u[1], u[0]])
    local = np.stack([axes @ u * scale[0], axes @ v * scale[1]], axis=1)
    moved = (local[:, :1] * u + local[:, 1:] * v) @ rot.T + centre + shift
    return np.roll(moved, int(rng.integers(4)), axis=0)


def _yolo() -> type:
    """ultralytics' YOLO, training on every core: on a CPU it loads data in the training
    process itself (no loader workers) yet keeps torch to one thread fewer than the cores, so
    on this 2-core machine a training run kept one core busy and left the other idle."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    try:
        from ultralytics import YOLO
        from ultralytics.utils import torch_utils
    except ImportError as error:  # pragma: no cover - depends on the optional extra
        raise RuntimeError("training needs the [train] extra: pip install -e '.[train]'") from error
    torch_utils.NUM_THREADS = os.cpu_count() or 1
    return YOLO  # type: ignore[no-any-return]


EXPORTS = {"obb": ("yolo11n-obb.yaml", "YOLO11n-OBB"),
           "classify": ("yolo11n-cls.yaml", "YOLO11n-cls")}  # fmt: skip
"""The architectures `checkpoint_from_onnx` rebuilds, by the task an export names."""


EXPORT_OPSET = 18
"""The ONNX opset of every export, the shipped models' own: left to ultralytics, the TorchScript
exporter of torch 2.14 wrote opset 9, whose Resize onnxruntime's quantiser cannot convert."""


def export_onnx(weights: Path, imgsz: int | list[int]) -> Path:
    """An ultralytics checkpoint exported to ONNX as every shipped model was: by torch's
    TorchScript exporter. Where onnxscript is installed, torch >= 2.9 takes its dynamo exporter
    instead, whose node names (`node_conv2d`, not `/model.23/...`) `quantize.float_head` cannot
    place, so such an export could not be made 8-bit."""
    import torch

    original = torch.onnx.export
    torch.onnx.export = functools.partial(original, dynamo=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            exported = _yolo()(str(weights)).export(format="onnx", imgsz=imgsz, simplify=True,
                                                    dynamic=True, opset=EXPORT_OPSET)  # fmt: skip
    finally:
        torch.onnx.export = original
    return Path(exported)


def checkpoint_from_onnx(model: Path, images: list[Path], out: Path) -> Path:
    """A trainable checkpoint rebuilt from an exported (and maybe 8-bit) detector or reader, so a
    CPU session can go on training a shipped model when its run folder is gone.

    The export folds each batch norm into its convolution; unfolding, each norm gets the mean and
    spread of its convolution's output over `images` (training crops), and a scale and shift that
    give the folded layer's output back exactly."""
    import onnx
    import torch
    from ultralytics.nn.modules.conv import Conv
    from ultralytics.nn.tasks import ClassificationModel, OBBModel

    if not images:
        raise ValueError(f"{model}: no training images to measure its norms on")
    exported = onnx.load(str(model))
    meta = {p.key: p.value for p in exported.metadata_props}
    task = meta.get("task", "obb")
    if task not in EXPORTS:
        raise ValueError(f"{model} is a {task} export: only YOLO11n-OBB and -cls ones go on")
    names = [n for _, n in sorted(names_of(meta["names"]).items())] if "names" in meta else []
    names = names or list(DETECTOR_CLASSES)
    yaml, title = EXPORTS[task]

    def build() -> torch.nn.Module:
        kind = ClassificationModel if task == "classify" else OBBModel
        return kind(yaml, nc=len(names), verbose=False)  # type: ignore[no-any-return]

    weights = _onnx_weights(exported.graph)
    folded = build().eval()
    folded.fuse(verbose=False)
    state = folded.state_dict()
    if not fits_architecture(weights, {k: tuple(v.shape) for k, v in state.items()}):
        raise ValueError(f"{model} is not a {len(names)}-class {title} export")
    folded.load_state_dict({**state, **{k: torch.from_numpy(v.copy()) for k, v in weights.items()}})

    moments: dict[str, list[torch.Tensor]] = {}

    def record(name: str):  # type: ignore[no-untyped-def]
        def hook(conv, _inputs, output) -> None:  # type: ignore[no-untyped-def]
            z = (output - conv.bias.view(1, -1, 1, 1)).double()
            seen = moments.setdefault(name, [torch.zeros(()), torch.zeros(()), torch.zeros(())])
            seen[0] = seen[0] + z.sum((0, 2, 3))
            seen[1] = seen[1] + (z**2).sum((0, 2, 3))
            seen[2] = seen[2] + z.shape[0] * z.shape[2] * z.shape[3]

        return hook

    hooks = [m.conv.register_forward_hook(record(name))
             for name, m in folded.named_modules() if isinstance(m, Conv)]  # fmt: skip
    with torch.no_grad():
        for start in range(0, len(images), 32):
            batch = [cv2.dnn.blobFromImage(cv2.imread(str(path)), 1 / 255, swapRB=True)[0]
                     for path in images[start : start + 32]]  # fmt: skip
            folded(torch.from_numpy(np.stack(batch)))
    for hook in hooks:
        hook.remove()

    trainable = build()
    tensors = {**dict(trainable.named_parameters()), **dict(trainable.named_buffers())}
    with torch.no_grad():
        for name, module in trainable.named_modules():
            if not isinstance(module, Conv):
                continue
            total, squares, count = moments[name]
            mean = total / count
            var = (squares / count - mean**2).clamp(min=1e-6)
            module.conv.weight.copy_(torch.from_numpy(weights.pop(f"{name}.conv.weight")))
            bias = torch.from_numpy(weights.pop(f"{name}.conv.bias")).double()
            module.bn.running_mean.copy_(mean)
            module.bn.running_var.copy_(var)
            module.bn.weight.copy_((var + module.bn.eps).sqrt())
            module.bn.bias.copy_(mean + bias)
        for key, value in weights.items():  # the head's last layers and the DFL carry no norm
            tensors[key].copy_(torch.from_numpy(value))
    trainable.names = dict(enumerate(names))
    out.parent.mkdir(parents=True, exist_ok=True)
    args = {"task": task, "imgsz": DETECTOR_CROP if task == "obb" else CROP}
    torch.save({"model": trainable.eval(), "train_args": args}, out)
    return out


def checkpoint_from_shipped(model: Path, shown: Path, out: Path) -> Path:
    """`checkpoint_from_onnx` with its norms measured on 256 of the images under `shown`."""
    images = sorted(p for p in shown.rglob("*") if p.suffix in (".jpg", ".png"))
    return checkpoint_from_onnx(model, images[:: max(1, len(images) // 256)], out)


DECODING_BINS = ".dfl.conv.weight"
"""The box decoding's bins 0..15, which ultralytics builds into every detector and never
trains: an export rewritten by `quantize.expectation_on_last_axis` holds them as a MatMul's, not
a convolution's, so a checkpoint takes them from the built model."""


def fits_architecture(
    weights: dict[str, NDArray[np.float32]], shapes: dict[str, tuple[int, ...]]
) -> bool:
    """Whether an export's weights (`_onnx_weights`) are every parameter of the architecture
    built to go on from it (`shapes`, by PyTorch name), the decoding's bins apart, each of its
    shape."""
    built = {k for k in shapes if k.endswith(DECODING_BINS)}
    return set(weights) | built == set(shapes) and all(
        shapes[k] == tuple(v.shape) for k, v in weights.items()
    )


def _onnx_weights(graph) -> dict[str, NDArray[np.float32]]:  # type: ignore[no-untyped-def]
    """Each convolution's and linear layer's weight and bias by its PyTorch name, dequantised
    where in 8 bits."""
    from onnx import numpy_helper

    stored = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    values: dict[str, NDArray[np.float32]] = {}
    for node in graph.node:
        if node.op_type == "DequantizeLinear" and node.input[0] in stored:
            q = stored[node.input[0]].astype(np.float64)
            scale = stored[node.input[1]].astype(np.float64)
            zero = stored[node.input[2]].astype(np.float64) if len(node.input) > 2 else 0.0
            axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
            if scale.ndim == 1 and q.ndim > 1:
                shape = [1] * q.ndim
                shape[axis] = -1
                scale, zero = scale.reshape(shape), np.reshape(zero, shape if np.ndim(zero) else ())
            values[node.output[0]] = ((q - zero) * scale).astype(np.float32)
    weights = {}
    for node in graph.node:
        if node.op_type in ("Conv", "Gemm"):
            for name in node.input[1:]:
                value = values.get(name, stored.get(name))
                if value is not None:
                    key = name.split("_DequantizeLinear_Output")[0]  # once per quantising
                    weights[key] = value.astype(np.float32)
    return weights


GOING_ON_RATE = 0.00005
"""The detector's rate going on from a checkpoint in a short CPU run: a fresh optimiser at the
default rate and mosaics undid more than an epoch gained, and so did the batch norms' statistics
drifting to those of 16-crop batches (validation mAP50-95 0.710 -> 0.694 in 170 steps, 0.707
with them held): so it goes on at a low rate, on whole crops, with each norm's statistics held
as they were."""
NEW_LOOKS_RATE = 0.0003
"""The detector's rate going on for thousands of steps towards looks it has never seen (a GPU
run: the appearance families, real dice): at `GOING_ON_RATE` 1.3 epochs on the CPU found 29% of
the ivory family's tiles (`models/MODEL_CARD.md`), and ultralytics' own rate for a fresh start
is 0.0014; a fifth of it, warmed up over the first epoch and falling to a tenth. A third of it
found fewer dice on every set in 5 epochs on an H200 (`models/MODEL_CARD.md`). Going on loses
the house dice at every rate, as the rate times the steps (`vision.training.going_on`): a lower
rate only slows it."""
HELD_NORMS_BELOW = 64
"""Batches smaller than this hold the norms' statistics (their own are too noisy); larger ones,
a GPU's, let the statistics move to the new looks' cloths and light."""


DETECTOR_AUGMENT = {"degrees": 180, "fliplr": 0.5, "flipud": 0.5, "scale": 0.25}
"""The detector's augmentation, fresh or going on: tiles lie at any angle and either way up on
the cloth; sets and camera heights differ in scale by about a quarter."""


def going_on_recipe(rate: float) -> dict[str, object]:
    """ultralytics' settings for going on from a checkpoint at `rate`: AdamW, no mosaics; a
    short CPU run's low rate (`GOING_ON_RATE` or under) unwarmed and falling to a fifth, a
    GPU's warmed up over the first epoch and falling to a tenth."""
    slow = rate <= GOING_ON_RATE
    return {"optimizer": "AdamW", "lr0": rate, "lrf": 0.2 if slow else 0.1,
            "warmup_epochs": 0.0 if slow else 1.0, "warmup_bias_lr": 0.0, "mosaic": 0.0,
            "close_mosaic": 0}  # fmt: skip


def train_detector(data_yaml: Path, out: Path, epochs: int, hours: float | None,
                   batch: int = 16, weights: Path | None = None, device: str = "cpu",
                   workers: int = 2, rate: float = GOING_ON_RATE,
                   keep_epochs: Path | None = None) -> Path:  # fmt: skip
    """From scratch, or on from an earlier run's checkpoint at `rate` (`GOING_ON_RATE` for
    short CPU runs, `NEW_LOOKS_RATE` for a GPU's), going on with the dice's two mends
    (`full_class_targets`, `box_shape_term`). With `keep_epochs`, every epoch's weights
    are kept there too (`epoch-N.pt`, without the optimiser), to be chosen among on whole
    frames afterwards: the crops' validation figures do not say how a frame's small dice fare."""
    yolo = _yolo()(str(weights) if weights else "yolo11n-obb.yaml")
    _floor_probiou()
    out = out.resolve()  # ultralytics puts a relative project under its own runs folder
    fresh = {"mosaic": 1.0, "close_mosaic": 2, "warmup_epochs": 3.0}
    if weights and batch < HELD_NORMS_BELOW:
        yolo.add_callback("on_train_batch_start", _hold_norm_statistics)
    yolo.add_callback("on_train_batch_end", _stop_on_non_finite_loss)
    if keep_epochs is not None:
        yolo.add_callback("on_model_save", functools.partial(_keep_epoch, keep_epochs))
    with contextlib.ExitStack() as mends:
        if weights:  # measured going on; from scratch it trains as ultralytics does
            mends.enter_context(full_class_targets(FULL_TARGETS))
            mends.enter_context(box_shape_term())
        yolo.train(data=str(data_yaml), epochs=epochs, imgsz=DETECTOR_CROP, batch=batch,
                   workers=workers, device=device, project=str(out), name="detector",
                   exist_ok=True, pretrained=str(weights) if weights else False,
                   amp=False, plots=False, time=hours, patience=100, verbose=False,
                   **DETECTOR_AUGMENT, **(going_on_recipe(rate) if weights else fresh))  # fmt: skip
    best = Path(yolo.trainer.save_dir) / "weights" / "best.pt"
    return export_onnx(best, list(DETECTOR_INPUT))


def _keep_epoch(folder: Path, trainer) -> None:  # type: ignore[no-untyped-def]
    """Copy the epoch's checkpoint just saved (`last.pt`) into `folder` as `epoch-N.pt`, its
    optimiser stripped (a third of the size: a GPU run's files come back through a narrow pipe)."""
    from ultralytics.utils.torch_utils import strip_optimizer

    folder.mkdir(parents=True, exist_ok=True)
    kept = folder / f"epoch-{trainer.epoch + 1}.pt"
    shutil.copy2(trainer.last, kept)
    strip_optimizer(str(kept))


PROBIOU_FLOOR = 1e-7
"""The least a box's covariance determinant counts as in the rotated-box loss: ultralytics
takes the square root of the product of two boxes' determinants, which underflows to 0 for a
box predicted a hair wide (1e-21 on a CPU; a GPU flushes far larger values to zero), and the
root's infinite slope at 0 turns the whole step's gradient NaN while the loss stays finite.
Floored, each root has a finite slope; a real box's determinant (a 3-px die's, in the loss's
8-px grid cells, about 1e-4) is far above it, so its loss is unchanged. ultralytics' own eps."""


def _floored_probiou(obb1, obb2, CIoU: bool = False, eps: float = PROBIOU_FLOOR,  # type: ignore[no-untyped-def]  # noqa: N803
                     floor: float = 0.0):  # fmt: skip
    """ultralytics' `probiou` (Bhattacharyya distance of two boxes' Gaussians, arXiv
    2106.06072) with each determinant floored at `PROBIOU_FLOOR` before its square root.
    `floor`, which ultralytics 8.4's loss passes (a variance added to every box), is passed on
    where given; 8.3's covariance takes none."""
    from ultralytics.utils.metrics import _get_covariance_matrix

    if CIoU:
        raise ValueError("the rotated-box loss asks no CIoU of probiou")
    x1, y1 = obb1[..., :2].split(1, dim=-1)
    x2, y2 = obb2[..., :2].split(1, dim=-1)
    widened = (floor,) if floor else ()
    a1, b1, c1 = _get_covariance_matrix(obb1, *widened)
    a2, b2, c2 = _get_covariance_matrix(obb2, *widened)
    joint = (a1 + a2) * (b1 + b2) - (c1 + c2).pow(2)
    t1 = ((a1 + a2) * (y1 - y2).pow(2) + (b1 + b2) * (x1 - x2).pow(2)) / (joint + eps) * 0.25
    t2 = ((c1 + c2) * (x2 - x1) * (y1 - y2)) / (joint + eps) * 0.5
    own = (a1 * b1 - c1.pow(2)).clamp(min=eps).sqrt() * (a2 * b2 - c2.pow(2)).clamp(min=eps).sqrt()
    t3 = (joint / (4 * own + eps) + eps).log() * 0.5
    distance = (t1 + t2 + t3).clamp(eps, 100.0)
    return 1 - (1.0 - (-distance).exp() + eps).sqrt()


def _floor_probiou() -> None:
    """Point ultralytics' rotated-box loss and its label assigner at `_floored_probiou`."""
    from ultralytics.utils import loss, tal

    loss.probiou = tal.probiou = _floored_probiou


FULL_TARGETS = ("die",)
"""Classes whose positive anchors are trained towards a class score of 1 (`full_class_targets`)
rather than towards how well their boxes fit."""


@contextlib.contextmanager
def full_class_targets(classes: Collection[str]) -> Iterator[None]:
    """ultralytics' task-aligned assigner trains each positive anchor's class score towards how
    well the boxes of its object's anchors fit it (their best rotated IoU), so that a score says
    how good a box is. A die is 6-7 px at the detector's scale: a pixel of centre error is a
    seventh of its side, its boxes fit at about 0.5, and its class target falls with them until
    dice score under the detector's bar. Within this, the anchors of `classes` are trained
    towards 1; the others keep the aligned target. Measured going on from the shipped detector
    (`models/MODEL_CARD.md`, "Where the house dice go")."""
    from ultralytics.utils.tal import TaskAlignedAssigner

    aligned = TaskAlignedAssigner._forward
    full = [DETECTOR_CLASSES.index(name) for name in classes]

    def forward(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        import torch

        labels, boxes, scores, foreground, index = aligned(self, *args, **kwargs)
        chosen = torch.isin(labels, torch.as_tensor(full, device=labels.device)) & foreground
        if chosen.any():
            scores = scores.clone()
            scores[chosen] = (scores[chosen] > 0).to(scores.dtype)
        return labels, boxes, scores, foreground, index

    TaskAlignedAssigner._forward = forward  # type: ignore[method-assign]
    try:
        yield
    finally:
        TaskAlignedAssigner._forward = aligned  # type: ignore[method-assign]


@contextlib.contextmanager
def box_shape_term() -> Iterator[None]:
    """ultralytics' rotated-box loss is one minus the boxes' probabilistic IoU, the overlap of
    two Gaussians; for a box off its object's centre a wider Gaussian overlaps more, so a tiny
    box whose centre is a pixel or two off is paid to grow (going on, the house dice's boxes grew
    from 1.2 to 1.7-2.1 times their true area and stopped matching them). Within this, the loss
    also counts the predicted box's shape set on its object's centre, whose IoU is highest at
    the true size whatever the centre's error."""
    from ultralytics.utils import loss

    overlap = loss.RotatedBboxLoss.forward

    def forward(self, pred_dist, pred_bboxes, anchor_points, target_bboxes, target_scores,  # type: ignore[no-untyped-def]
                target_scores_sum, fg_mask, *sizes):  # fmt: skip
        import torch

        loss_iou, loss_dfl = overlap(self, pred_dist, pred_bboxes, anchor_points, target_bboxes,
                                     target_scores, target_scores_sum, fg_mask, *sizes)  # fmt: skip
        weight = target_scores[fg_mask].sum(-1, keepdim=True)
        target = target_bboxes[fg_mask]
        centred = torch.cat((target[:, :2], pred_bboxes[fg_mask][:, 2:]), dim=-1)
        widened = {"floor": self.floor} if getattr(self, "floor", 0.0) else {}  # 8.4 widens
        shape = loss.probiou(centred, target, **widened)
        return loss_iou + ((1.0 - shape) * weight).sum() / target_scores_sum, loss_dfl

    loss.RotatedBboxLoss.forward = forward  # type: ignore[method-assign]
    try:
        yield
    finally:
        loss.RotatedBboxLoss.forward = overlap  # type: ignore[method-assign]


def _stop_on_non_finite_loss(trainer) -> None:  # type: ignore[no-untyped-def]
    """Stop at the first step whose loss is not a number, and say so (the detector's and the
    readers' training alike): a GPU run once went on with every weight NaN after one NaN
    gradient (`PROBIOU_FLOOR`) and exported a detector that finds nothing."""
    import torch

    items = getattr(trainer, "loss_items", None)
    if items is None:
        return
    terms = items.values() if isinstance(items, dict) else [items]  # ultralytics 8.4 names them
    values = torch.cat([torch.as_tensor(v, dtype=torch.float32).reshape(-1) for v in terms])
    if not bool(torch.isfinite(values).all()):
        raise RuntimeError(f"the training loss went {values.tolist()} in epoch "
                           f"{trainer.epoch + 1}: its weights are not kept")  # fmt: skip


def _hold_norm_statistics(trainer) -> None:  # type: ignore[no-untyped-def]
    """Batch norms compute with their running statistics in training too (scale and shift still
    learn), as the exported model does."""
    import torch

    for module in trainer.model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.eval()


READER_CROP_SCALE = 0.1
"""A reader's training crop loses at most a tenth of its area to the random resized crop
(ultralytics' `scale`; it keeps 1 - scale to all of it, at 3:4 to 4:3). Its default, 0.5,
cut up to half a 64-px crop away, an end's outer pips with it, while the label stayed: the
reader learnt that a `6-6` short of a row is still a `6-6`. The boxes are already moved as the
detector's are (`jitter`). Measured on leave-one-family-out readers (`models/MODEL_CARD.md`,
"A crop that keeps its pips"): every family's faces and backs read better at 0.1, by 1.3-7.3
points of faces."""


def train_reader(crops: Path, out: Path, epochs: int, imgsz: int = CROP, name: str = "reader",
                 flips: bool = False, weights: Path | None = None, device: str = "cpu",
                 workers: int = 2, hours: float | None = None,
                 recolour: bool = False, scale: float = READER_CROP_SCALE) -> Path:  # fmt: skip
    """A classifier of crops by class folder, from scratch or on from a checkpoint (at a low
    rate, each norm's statistics held, as the detector goes on). A die leans or lies flat
    whichever way it is mirrored, so the flatness reader also sees flipped crops. `recolour`
    repaints training crops as other makers' sets (`vision.training.recolour`); `scale` is how
    much of a crop's area its random resized crop may cut away."""
    yolo = _yolo()(str(weights) if weights else "yolo11n-cls.yaml")
    out = out.resolve()
    going_on = {"optimizer": "AdamW", "lr0": 0.0001, "lrf": 0.2, "warmup_epochs": 0.0}
    if weights:
        yolo.add_callback("on_train_batch_start", _hold_norm_statistics)
    yolo.add_callback("on_train_batch_end", _stop_on_non_finite_loss)
    yolo.train(data=str(crops), epochs=epochs, imgsz=imgsz, batch=128, workers=workers,
               device=device, time=hours, project=str(out), name=name, exist_ok=True,
               pretrained=bool(weights), amp=False, plots=False, fliplr=0.5 if flips else 0.0,
               erasing=0.0, auto_augment=None, verbose=False,
               trainer=recolouring_trainer() if recolour else None,
               scale=scale,
               **(going_on if weights else {}))  # fmt: skip
    best = Path(yolo.trainer.save_dir) / "weights" / "best.pt"
    return export_onnx(best, imgsz)
