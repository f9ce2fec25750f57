"""`paigow synth dataset`: labelled images in the layout ultralytics trains on.

OUT/images/{train,val}/NNNNNN.jpg
OUT/labels/{train,val}/NNNNNN.txt       axis-aligned boxes: class cx cy w h (0..1)
OUT/obb/labels/{train,val}/NNNNNN.txt   oriented boxes: class x1 y1 ... x4 y4 (0..1)
OUT/obb/images -> ../images
OUT/data.yaml, OUT/obb/data.yaml        for `yolo train data=...`
OUT/annotations.jsonl                   every object: label, corners, visibility, tags;
                                        each image's homography, table mm to pixels
OUT/README.md, OUT/card.json            the data-set card: classes, counts, command
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from multiprocessing import get_context
from multiprocessing.pool import Pool
from pathlib import Path

import cv2
import numpy as np

from vision.labels import CLASS_ID, CLASSES, MARKERS
from vision.layout import TableLayout
from vision.progress import each
from vision.synth.appearance import (
    HOUSE,
    LIGHT_FELTS,
    appearance,
    dress,
    finish,
    shadow_strength,
)
from vision.synth.render import Look, Renderer, Rendering
from vision.synth.sampler import COCKED_DICE, random_camera, random_scene
from vision.synth.textures import ClothStyle, Image, cloth_image, random_cloth

LAYOUT = TableLayout()
CLOTHS = 12


@dataclass(frozen=True)
class Sample:
    rendering: Rendering
    jpeg_quality: int
    resolution: tuple[int, int]
    motion_blur: int
    """Length of the whole frame's motion blur in pixels (a shaken camera), 0 when sharp."""
    family: str = "house"
    homography: tuple[tuple[float, ...], ...] = ()
    """Table mm to image pixels (undistorted), for crops at the cloth's scale."""


@lru_cache(maxsize=CLOTHS)
def _cloth(style: ClothStyle) -> Image:
    return cloth_image(style, LAYOUT)


def cloth_styles(seed: int) -> list[ClothStyle]:
    rng = np.random.default_rng([seed, 0xC107])
    return [random_cloth(rng) for _ in range(CLOTHS)]


IMAGES_PER_CAMERA = 4
"""Consecutive images share a camera and cloth (each with its own scene and look): building
the camera's view of the cloth is a third of an image's cost."""


@lru_cache(maxsize=2)
def _renderer(seed: int, group: int, resolution: tuple[int, int] | None) -> Renderer:
    rng = np.random.default_rng([seed, group, 0xCA3])
    styles = cloth_styles(seed)
    style = styles[int(rng.integers(len(styles)))]
    camera = random_camera(rng, LAYOUT, resolution, zone=False)
    return Renderer(camera, _cloth(style), LAYOUT)


def family_of(index: int, families: tuple[str, ...]) -> str:
    """Image `index`'s appearance family: the families take turns, so every one of them is
    in every stretch of a data set."""
    return families[index % len(families)] if families else "house"


def render_sample(
    seed: int,
    index: int,
    resolution: tuple[int, int] | None = None,
    close_ups: float = 0.35,
    cocked_dice: float = COCKED_DICE,
    families: tuple[str, ...] = (),
    plaques: bool = True,
) -> Sample:
    """Image `index` of the data set for `seed`: the same pixels whatever else is generated.
    `close_ups` is the share of images that show one zone close up rather than the table.
    With `families`, the scene is dressed in one of them (`family_of`); its look is drawn from a
    stream of its own, so the scene's layout is the house image's. Without `plaques`, the chung
    and button are left off (`random_scene`)."""
    rng = np.random.default_rng([seed, index])
    things = random_scene(rng, LAYOUT, cocked_dice, plaques)
    family = family_of(index, families)
    dressing = np.random.default_rng([seed, index, 0xFA])
    look_of = appearance(family, dressing)
    things = dress(things, look_of)
    if rng.random() < close_ups:  # a close-up of one zone: its own camera
        camera = random_camera(rng, LAYOUT, resolution, zone=True, things=things)
        styles = cloth_styles(seed)
        renderer = Renderer(camera, _cloth(styles[int(rng.integers(len(styles)))]), LAYOUT)
    else:
        renderer = _renderer(seed, index // IMAGES_PER_CAMERA, resolution)
    if dressing.random() < look_of.scene.light_cloth:
        renderer = Renderer(renderer.camera, _cloth(light_cloth(dressing)), LAYOUT)
    look = Look.random(rng)
    if look_of is not HOUSE:
        look = replace(look, shadow=shadow_strength(look_of.scene, dressing))
    rendering = renderer.render(things, look, rng)
    if look_of is not HOUSE:
        rendering = replace(rendering, image=finish(rendering.image, look_of.scene, dressing))
    width, height = renderer.camera.width, renderer.camera.height
    homography = tuple(tuple(float(v) for v in row) for row in renderer.camera.table_homography())
    return Sample(rendering, int(rng.integers(60, 96)), (width, height), look.blur, family,
                  homography)  # fmt: skip


def light_cloth(rng: np.random.Generator) -> ClothStyle:
    """A pale layout cloth with dark printing: dice on light surroundings were never found."""
    felt = LIGHT_FELTS[int(rng.integers(len(LIGHT_FELTS)))]
    ink = (40, 40, 40) if rng.random() < 0.6 else (30, 30, 140)
    return ClothStyle(felt, ink, float(rng.uniform(3, 9)), int(rng.integers(1 << 30)))


def yolo_lines(rendering: Rendering, width: int, height: int) -> tuple[list[str], list[str]]:
    """Axis-aligned and oriented label lines for the labelled tiles and dice (the markers, no
    reader class, are in `annotations.jsonl` alone, where the detector's data is cut from)."""
    boxes, oriented = [], []
    for label in rendering.labels:
        if not label.labelled or label.label not in CLASS_ID:
            continue
        cls = CLASS_ID[label.label]
        x1, y1, x2, y2 = label.box
        if x2 - x1 < 1 or y2 - y1 < 1:
            continue
        boxes.append(
            f"{cls} {(x1 + x2) / 2 / width:.6f} {(y1 + y2) / 2 / height:.6f} "
            f"{(x2 - x1) / width:.6f} {(y2 - y1) / height:.6f}"
        )
        corners = np.clip(label.corners / [width, height], 0, 1)
        oriented.append(f"{cls} " + " ".join(f"{v:.6f}" for v in corners.ravel()))
    return boxes, oriented


def write_dataset(
    out: Path,
    n: int,
    seed: int,
    *,
    val_fraction: float = 0.1,
    resolution: tuple[int, int] | None = None,
    close_ups: float = 0.35,
    cocked_dice: float = COCKED_DICE,
    families: tuple[str, ...] = (),
    workers: int = 1,
    progress: bool = True,
    plaques: bool = True,
) -> dict:  # type: ignore[type-arg]
    """Render and write `n` images, on `workers` processes; returns the data-set card. The
    images and their order do not depend on `workers`."""
    out.mkdir(parents=True, exist_ok=True)
    for split in ("train", "val"):
        for folder in ("images", "labels", "obb/labels"):
            (out / folder / split).mkdir(parents=True, exist_ok=True)
    counts: dict[str, Counter[str]] = {"train": Counter(), "val": Counter()}
    resolutions: Counter[str] = Counter()
    images = {"train": 0, "val": 0}
    per_family: Counter[str] = Counter()
    jobs = [(out, seed, index, val_fraction, resolution, close_ups, cocked_dice, families, plaques)
            for index in range(n)]  # fmt: skip
    with (out / "annotations.jsonl").open("w") as annotations, _pool(workers) as pool:
        written = pool.imap(_write_image, jobs, chunksize=4) if pool else map(_write_image, jobs)
        for entry in each(written, n, "rendering", "img", enabled=progress):
            split = entry["split"]
            images[split] += 1
            resolutions[f"{entry['width']}x{entry['height']}"] += 1
            per_family[entry["family"]] += 1
            counts[split].update(o["label"] for o in entry["objects"] if o["labelled"])
            annotations.write(json.dumps(entry) + "\n")
    link_images(out / "images", out / "obb" / "images")
    names = "\n".join(f"  {i}: '{c}'" for i, c in enumerate(CLASSES))
    for root in (out, out / "obb"):
        (root / "data.yaml").write_text(
            # no `path:`: ultralytics then reads the folders next to this file
            f"train: images/train\nval: images/val\nnames:\n{names}\n"
        )
    card = {
        "images": images,
        "seed": seed,
        "resolutions": dict(resolutions),
        "families": dict(per_family),
        "classes": list(CLASSES),
        "objects": {split: {c: counts[split][c] for c in (*CLASSES, *MARKERS)} for split in counts},
        "close_ups": close_ups,
        "cocked_dice": cocked_dice,
        "command": f"paigow synth dataset --n {n} --out {out} --seed {seed}"
        + (f" --resolution {resolution[0]}x{resolution[1]}" if resolution else "")
        + (f" --close-ups {close_ups}" if close_ups != 0.35 else "")
        + (f" --cocked-dice {cocked_dice}" if cocked_dice != COCKED_DICE else "")
        + (f" --families {','.join(families)}" if families else ""),
    }
    (out / "card.json").write_text(json.dumps(card, indent=2) + "\n")
    (out / "README.md").write_text(_card_markdown(card))
    return card


@contextmanager
def _pool(workers: int) -> Iterator[Pool | None]:
    if workers <= 1:
        yield None
        return
    with get_context("spawn").Pool(workers) as pool:
        yield pool


def _write_image(job: tuple) -> dict:  # type: ignore[type-arg]
    """Render image `index`, write it and its labels; its annotation line."""
    out, seed, index, val_fraction, resolution, close_ups, cocked_dice, families, plaques = job
    split = "val" if (index * 7919 % 1000) < val_fraction * 1000 else "train"
    sample = render_sample(seed, index, resolution, close_ups, cocked_dice, families, plaques)
    width, height = sample.resolution
    name = f"{index:06d}"
    cv2.imwrite(
        str(out / "images" / split / f"{name}.jpg"),
        sample.rendering.image,
        [cv2.IMWRITE_JPEG_QUALITY, sample.jpeg_quality],
    )
    boxes, oriented = yolo_lines(sample.rendering, width, height)
    (out / "labels" / split / f"{name}.txt").write_text("\n".join(boxes) + "\n")
    (out / "obb" / "labels" / split / f"{name}.txt").write_text("\n".join(oriented) + "\n")
    objects = [
        {
            "label": label.label,
            "labelled": label.labelled,
            "visible": round(label.visible, 3),
            "box": [round(v, 2) for v in label.box],
            "corners": np.round(label.corners, 2).tolist(),
            "tags": {k: v for k, v in label.tags.items() if isinstance(v, str | int | float)},
        }
        for label in sample.rendering.labels
        if label.label is not None
    ]
    return {
        "image": f"images/{split}/{name}.jpg",
        "split": split,
        "width": width,
        "height": height,
        "motion_blur": sample.motion_blur,
        "family": sample.family,
        "homography": [[float(f"{v:.6g}") for v in row] for row in sample.homography],
        "objects": objects,
    }


def link_images(source: Path, target: Path) -> None:
    """Give a second label layout its own `images/` folder: ultralytics finds labels by
    swapping `images` for `labels` in the resolved path, so a symlinked folder would lead it
    back to the first layout's labels. Hard links cost no space (copies where they cannot)."""
    for image in source.rglob("*.jpg"):
        linked = target / image.relative_to(source)
        linked.parent.mkdir(parents=True, exist_ok=True)
        if linked.exists():
            continue
        try:
            os.link(image, linked)
        except OSError:
            shutil.copy2(image, linked)


def _card_markdown(card: dict) -> str:  # type: ignore[type-arg]
    rows = "\n".join(
        f"| `{c}` | {card['objects']['train'][c]} | {card['objects']['val'][c]} |"
        for c in card["classes"]
    )
    res = ", ".join(f"{k}: {v}" for k, v in sorted(card["resolutions"].items()))
    return f"""# Synthetic Pai Gow table data set

Made by `{card["command"]}` (deterministic per seed and image index).
Images: {card["images"]["train"]} train, {card["images"]["val"]} val. Resolutions: {res}.

Labels: 21 tile faces in pip notation, `back` for a face-down tile, `die-1`..`die-6` for a
die's top face. An object is labelled when at least 40% of its labelled face is in view.
Boxes: `labels/` axis-aligned (YOLO), `obb/labels/` oriented (4 corners of the face).

| class | train objects | val objects |
|---|---|---|
{rows}
"""
