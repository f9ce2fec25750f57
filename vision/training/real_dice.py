"""Real dice photographs at the table's scale: pasted onto a rendered table, the train split's
teach the detector real dice, and the test split's measure whether it finds them.

The photographs (`scripts/fetch_real_dice.py`, N3VERS4YDIE/dice-recognition, CC BY 4.0) are
640 x 640 with one axis-aligned box per die; a die fills 20-270 px of them, where a die on the
table fills 11-17 px of a 1080p frame. Each is stored shrunk (`shrink`) with its boxes and its
background's brightness (`photos.jsonl`), small enough to travel to a GPU machine.

`python3 -m vision.training.real_dice --photos datasets/real-dice/table/test --frames
datasets/test1080` measures the shipped detector and reader on the test split's photographs
pasted onto held-out frames.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from vision.detector import Reader

STORED_BOX_PX = 20.0
"""A photograph's median die box, in px, as stored: a little larger than the table's
(`TABLE_BOX_PX`), so training can shrink it at random; never enlarged (that would blur it)."""
TABLE_BOX_PX = 16.0
"""A die's axis-aligned box at the table's scale in a 1080p frame: the held-out renders' dice
have a 13.4-px median side (`datasets/test1080`, 11-16.5 px from the 5th to the 95th
percentile), and a die turned at random fills an upright box about 1.2 times its side."""
TRAINING_SHRINK = (0.6, 1.0)
"""What training shrinks a stored photograph by: boxes of 12-20 px at full resolution, dice of
about 10-17 px, the renders' range and a little below."""
DARK_BACKGROUND = 128
"""A photograph is of a die on dark surroundings when its median grey outside the dice is
darker than middle grey: the photographs fall into trays of wood (about 60-140) and white
sheets (about 160-200)."""
PASTE_TRIES = 40
"""Random places tried for a photograph before giving up on a frame: one that covers no object
of the scene (a covered object would keep a label for something no longer shown)."""
FOUND_MARGIN = 0.2
"""A die is found when a detected die's centre lies in its box grown by this share of its side:
the labels are upright boxes and the detector's are turned, so overlap would punish a right box
on a turned die."""


SOURCE_SIDE = 640
"""The photographs' side as published, in px: every one of the set is 640 x 640."""
SIZE_BANDS = (0, 24, 32, 48, 64)
"""Lower edges, in px of the published photograph, of the die sizes the reader is measured by
(`read_by_size`): at 64 px and over a die's pips are a few px each even when blurred."""


@dataclass(frozen=True)
class Photo:
    """One stored photograph: its file, its dice as upright boxes (x0, y0, x1, y1) with their
    values, and its median grey outside them."""

    path: Path
    boxes: tuple[tuple[float, float, float, float], ...]
    values: tuple[int, ...]
    background: float

    @property
    def dark(self) -> bool:
        return self.background < DARK_BACKGROUND

    def box_side(self) -> float:
        return float(np.median([max(x1 - x0, y1 - y0) for x0, y0, x1, y1 in self.boxes]))


def shrink(
    image: NDArray[np.uint8],
    boxes: list[tuple[float, float, float, float]],
    side: float = STORED_BOX_PX,
) -> tuple[NDArray[np.uint8], list[tuple[float, ...]]]:
    """The photograph and its boxes scaled so its median die box is `side` px (never up)."""
    median = float(np.median([max(x1 - x0, y1 - y0) for x0, y0, x1, y1 in boxes]))
    scale = min(side / median, 1.0)
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return small, [tuple(v * scale for v in box) for box in boxes]


def background(image: NDArray[np.uint8], boxes: list[tuple[float, float, float, float]]) -> float:
    """The photograph's median grey outside its dice."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    outside = np.ones(grey.shape, bool)
    for x0, y0, x1, y1 in boxes:
        outside[max(int(y0), 0) : int(np.ceil(y1)), max(int(x0), 0) : int(np.ceil(x1))] = False
    return float(np.median(grey[outside])) if outside.any() else float(np.median(grey))


def write_photo(
    folder: Path,
    name: str,
    image: NDArray[np.uint8],
    boxes: list[tuple[float, float, float, float]],
    values: list[int],
) -> None:
    """Store one photograph shrunk, and its record in `folder/photos.jsonl`."""
    folder.mkdir(parents=True, exist_ok=True)
    small, scaled = shrink(image, boxes)
    cv2.imwrite(str(folder / f"{name}.jpg"), small, [cv2.IMWRITE_JPEG_QUALITY, 92])
    record = {"photo": f"{name}.jpg", "boxes": [[round(v, 2) for v in b] for b in scaled],
              "values": values, "background": round(background(image, boxes), 1)}  # fmt: skip
    with (folder / "photos.jsonl").open("a") as out:
        out.write(json.dumps(record) + "\n")


def photos(folder: Path) -> list[Photo]:
    """The stored photographs of one split, in file order."""
    records = (json.loads(x) for x in (folder / "photos.jsonl").read_text().splitlines())
    return [Photo(folder / r["photo"], tuple(tuple(b) for b in r["boxes"]), tuple(r["values"]),
                  r["background"]) for r in records]  # fmt: skip


def free_place(size: tuple[int, int], frame: tuple[int, int],
               objects: list[NDArray[np.float64]], rng: np.random.Generator,
               ) -> tuple[int, int] | None:  # fmt: skip
    """A top-left corner where a `size` (w, h) patch fits in the frame (w, h) over none of the
    objects' corners' bounding boxes, or None."""
    w, h = size
    if w >= frame[0] or h >= frame[1]:
        return None
    spans = [(c[:, 0].min(), c[:, 1].min(), c[:, 0].max(), c[:, 1].max()) for c in objects]
    for _ in range(PASTE_TRIES):
        x, y = int(rng.integers(0, frame[0] - w)), int(rng.integers(0, frame[1] - h))
        if all(x1 < x or x0 > x + w or y1 < y or y0 > y + h for x0, y0, x1, y1 in spans):
            return x, y
    return None


@functools.lru_cache(maxsize=4)
def _image(path: Path) -> NDArray[np.uint8]:
    """A stored photograph, read once for its size and its pasting (never changed in place)."""
    return cv2.imread(str(path))  # type: ignore[return-value]


def paste(frame: NDArray[np.uint8], photo: Photo, scale: float, at: tuple[int, int],
          ) -> list[NDArray[np.float64]]:  # fmt: skip
    """Paste the photograph, scaled, with its top-left corner `at`; its dice's corners there."""
    image = _image(photo.path)
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    x, y = at
    frame[y : y + small.shape[0], x : x + small.shape[1]] = small
    return [np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]) * scale + [x, y]
            for x0, y0, x1, y1 in photo.boxes]  # fmt: skip


def scaled_size(photo: Photo, scale: float) -> tuple[int, int]:
    h, w = _image(photo.path).shape[:2]
    return round(w * scale), round(h * scale)


def table_scenes(chosen: list[Photo], frames: Path, seed: int = 0):  # type: ignore[no-untyped-def]
    """Each photograph shrunk to the table's scale (`TABLE_BOX_PX`) and pasted onto the next
    held-out frame of `frames` where it covers nothing (a photograph with no such place is
    passed over): the photograph, the frame, where and how large it lies, its dice's corners."""
    rng = np.random.default_rng(seed)
    entries = [json.loads(x) for x in (frames / "annotations.jsonl").read_text().splitlines()]
    for index, photo in enumerate(chosen):
        entry = entries[index % len(entries)]
        frame = cv2.imread(str(frames / entry["image"]))
        scale = TABLE_BOX_PX / photo.box_side()
        size = scaled_size(photo, scale)
        objects = [np.asarray(o["corners"]) for o in entry["objects"]]
        at = free_place(size, (frame.shape[1], frame.shape[0]), objects, rng)
        if at is not None:
            yield photo, frame, at, size, paste(frame, photo, scale, at)


def found_at_table_scale(detector, reader, photo_folder: Path, frames: Path, dark: bool = True,
                         limit: int | None = None, seed: int = 0) -> dict[str, float]:  # type: ignore[no-untyped-def]  # fmt: skip
    """Each photograph of `photo_folder` (the dark or the light ones) shrunk to the table's
    scale and pasted onto a held-out frame (in turn) where it covers nothing; the frame then
    goes through the detector and reader as the box runs them. Counts the photographs' dice
    found (a die box centred on the die, `FOUND_MARGIN`), found and read right, and the other
    die boxes in the photograph (on no die, or a second on one)."""
    chosen = [p for p in photos(photo_folder) if p.dark == dark][:limit]
    counts = {"photos": 0, "dice": 0, "found": 0, "read_right": 0, "other_boxes": 0}
    for photo, frame, at, size, boxes in table_scenes(chosen, frames, seed):
        seen = reader.read(frame, detector.detect(frame))
        dice = [i for i, label in enumerate(seen.labels) if label.startswith("die-")]
        centres = seen.corners[dice].mean(1) if dice else np.zeros((0, 2))
        used: set[int] = set()
        for box, value in zip(boxes, photo.values, strict=True):
            grow = FOUND_MARGIN * (box[2] - box[0])
            inside = [k for k, (cx, cy) in enumerate(centres) if k not in used
                      and box[0, 0] - grow[0] <= cx <= box[2, 0] + grow[0]
                      and box[0, 1] - grow[1] <= cy <= box[2, 1] + grow[1]]  # fmt: skip
            counts["dice"] += 1
            if inside:
                centre = (box[0] + box[2]) / 2
                k = min(inside, key=lambda k: float(np.hypot(*(centres[k] - centre))))
                used.add(k)
                counts["found"] += 1
                counts["read_right"] += int(seen.labels[dice[k]] == f"die-{value}")
        x, y = at
        within = [(x <= cx <= x + size[0] and y <= cy <= y + size[1]) for cx, cy in centres]
        counts["other_boxes"] += sum(bool(w) for k, w in enumerate(within) if k not in used)
        counts["photos"] += 1
    total = max(counts["dice"], 1)
    return {**counts, "found_share": counts["found"] / total,
            "read_right_share": counts["read_right"] / total}  # fmt: skip


def picture(detector, reader, photo_folder: Path, frames: Path, out: Path,
            count: int = 10) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    """Every few dark photographs of `photo_folder` as `found_at_table_scale` pastes them, each
    cut out of its frame and enlarged four times: the labels green, the die boxes red."""
    chosen = [p for p in photos(photo_folder) if p.dark][: count * 6 : 6]
    views = []
    for _, frame, at, size, boxes in table_scenes(chosen, frames):
        seen = reader.read(frame, detector.detect(frame))
        left, top = max(at[0] - 20, 0), max(at[1] - 20, 0)
        view = frame[top : at[1] + size[1] + 20, left : at[0] + size[0] + 20]
        view = cv2.resize(view, None, fx=4, fy=4, interpolation=cv2.INTER_NEAREST)
        dice = [
            c
            for c, label in zip(seen.corners, seen.labels, strict=True)
            if label.startswith("die-")
        ]
        for corners, colour, width in [(b, (0, 255, 0), 1) for b in boxes] + [
            (c, (0, 0, 255), 2) for c in dice
        ]:
            points = ((corners - [left, top]) * 4).astype(np.int32)
            cv2.polylines(view, [points], True, colour, width)
        views.append(cv2.resize(view, (240, 240)))
    views += [np.zeros((240, 240, 3), np.uint8)] * (-len(views) % 5)
    rows = [np.hstack(views[k : k + 5]) for k in range(0, len(views), 5)]
    cv2.imwrite(str(out), np.vstack(rows), [cv2.IMWRITE_JPEG_QUALITY, 85])


TWIN_APART = 0.02
"""Share of a photograph's side within which each die of one photograph must lie of a die of
another, for the two to be one photograph twice (`twins`): 13 px of the published 640. The
stored photographs are 50-60 px across, and rounding their side moves a die's centre up to 1%
of it. Photographs of two dice or more are told so. Of the test split's 528 such photographs,
468 have a train photograph with the same values at the same places (465 within 6 px on the
published labels). Their greys at 32 x 32 px agree with that photograph's (one minus the
correlation) within 0.06, half of them within 0.002; the 60 without one lie 0.038 or more from
every train photograph."""
SHEET_CELL, SHEET_ROW, SHEET_CAPTION = 128, 12, 18
"""Each misread crop's side on the sheet (`misread_sheet`, twice the reader's 64 px, so a
person sees its pips, or that there are none), the crops a row, and the px above each crop
for its caption."""


def misread_sheet(readings: list[tuple[Path, str, str]], out: Path) -> int:
    """Every misread crop of `readings` (`crop_readings`: path, label, read) drawn on one
    sheet at `out`, each under `label>read`, in the order read: for a person to judge whether
    the photograph shows the die's pips at all, or shows other pips than its label says.
    Returns how many were drawn; no sheet where none was misread."""
    cells = []
    for path, truth, read in readings:
        if read == truth:
            continue
        crop = cv2.resize(_image(path), (SHEET_CELL, SHEET_CELL), interpolation=cv2.INTER_CUBIC)
        cell = np.full((SHEET_CELL + SHEET_CAPTION, SHEET_CELL, 3), 255, np.uint8)
        cell[SHEET_CAPTION:] = crop
        caption = f"{truth.removeprefix('die-')}>{read.removeprefix('die-')} {path.stem[-12:]}"
        cv2.putText(cell, caption, (2, 13), cv2.FONT_HERSHEY_PLAIN, 0.8, (0, 0, 0), 1)
        cells.append(cell)
    drawn = len(cells)
    if cells:
        cells += [np.full_like(cells[0], 255)] * (-drawn % SHEET_ROW)
        rows = [np.hstack(cells[k : k + SHEET_ROW]) for k in range(0, len(cells), SHEET_ROW)]
        out.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(out), np.vstack(rows), [cv2.IMWRITE_JPEG_QUALITY, 90])
    return drawn


CARRIED_LIGHT_EVERY, CARRIED_VAL = 12, 200
"""What travels to a GPU machine (the working tree and everything carried fit in 64 MiB): every
dark training photograph (8 MiB), every 12th light one (their dice are small in the photograph,
so they stay large once shrunk) and 200 of the val split to validate on."""


def carry(table: Path, out: Path) -> dict[str, int]:
    """Copy the photographs a GPU run takes (`CARRIED_LIGHT_EVERY`, `CARRIED_VAL`) to `out`."""
    import shutil

    counts = {}
    for split in ("train", "val"):
        chosen = photos(table / split)
        if split == "train":
            light = [p for p in chosen if not p.dark][::CARRIED_LIGHT_EVERY]
            kept = [p for p in chosen if p.dark] + light
        else:  # every 7th: the val split's 1,453 spread over the 200 kept
            kept = chosen[::7][:CARRIED_VAL]
        folder = out / split
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        names = {p.path.name for p in kept}
        with (folder / "photos.jsonl").open("w") as listed:
            for line in (table / split / "photos.jsonl").read_text().splitlines():
                if json.loads(line)["photo"] in names:
                    listed.write(line + "\n")
        for photo in kept:
            shutil.copy2(photo.path, folder / photo.path.name)
        counts[split] = len(kept)
    return counts


def read_by_size(reader: Reader, crops: Path, table: Path) -> list[dict[str, float]]:
    """The reader on the labelled dice's crops (`crops`: a split of `OUT/reader`), by the die's
    size in its published photograph, which the same split's stored photographs (`table`) give:
    for each band of `SIZE_BANDS`, the dice and the share read right."""
    from vision.training.families import crop_readings

    side = {}
    for photo in photos(table):
        width = _image(photo.path).shape[1]
        stem = photo.path.stem[:40]  # the crops' names keep 40 characters of the stem
        for index, (x0, y0, x1, y1) in enumerate(photo.boxes):
            side[f"{stem}_{index}"] = max(x1 - x0, y1 - y0) * SOURCE_SIDE / width
    counts = np.zeros((len(SIZE_BANDS), 2), int)
    for path, truth, read in crop_readings(reader, crops):
        band = int(np.searchsorted(SIZE_BANDS, side[path.stem.rsplit("_", 1)[0]], "right")) - 1
        counts[band] += (1, read == truth)
    return [{"from_px": low, "dice": int(n), "read_right": round(float(r / n), 4) if n else 0.0}
            for low, (n, r) in zip(SIZE_BANDS, counts, strict=True)]  # fmt: skip


def _centres(photo: Photo) -> NDArray[np.float64]:
    """Its dice's centres as shares of the photograph's side (every one is square)."""
    side = _image(photo.path).shape[1]
    return np.array([((x0 + x1) / 2, (y0 + y1) / 2) for x0, y0, x1, y1 in photo.boxes]) / side


def _turned(centres: NDArray[np.float64]) -> list[NDArray[np.float64]]:
    """The centres under each of the square's eight turns and mirrorings."""
    x, y = centres.T
    quarter = [(x, y), (1 - y, x), (1 - x, 1 - y), (y, 1 - x)]
    return [np.stack(p, 1) for a, b in quarter for p in ((a, b), (1 - a, b))]


def twins(split: list[Photo], train: list[Photo]) -> list[bool | None]:
    """For each photograph of `split`: whether `train` holds it again, its dice at the same
    places (within `TWIN_APART`, turned or mirrored as a whole) with the same values; None for
    a photograph of one die, whose twin its place cannot tell."""
    by_count: dict[int, list[tuple[NDArray[np.float64], NDArray[np.int64]]]] = {}
    for photo in train:
        by_count.setdefault(len(photo.values), []).append((_centres(photo), np.array(photo.values)))
    found: list[bool | None] = []
    for photo in split:
        if len(photo.values) < 2:
            found.append(None)
            continue
        values, turns = np.array(photo.values), _turned(_centres(photo))
        found.append(
            any(_same_dice(turns, values, *theirs) for theirs in by_count.get(len(values), []))
        )
    return found


def _same_dice(
    turns: list[NDArray[np.float64]],
    values: NDArray[np.int64],
    centres: NDArray[np.float64],
    their_values: NDArray[np.int64],
) -> bool:
    """Whether one of a photograph's turns puts each of its dice within `TWIN_APART` of one of
    another's and each of those within it of one of its own, with the same values there."""
    for turned in turns:
        apart = np.linalg.norm(turned[:, None] - centres[None], axis=2)
        if (apart.min(1) < TWIN_APART).all() and (apart.min(0) < TWIN_APART).all():
            return bool((values == their_values[apart.argmin(1)]).all())
    return False


def read_by_twin(
    reader: Reader, crops: Path, table: Path, train: Path
) -> dict[str, dict[str, float]]:
    """The reader on a split's labelled dice (`crops`), apart by whether their photograph
    (`table`: the split's stored photographs) is one the train split's (`train`) holds again
    (`twins`): a reader measured on photographs it trained on measures what it learnt of
    them, not how it reads dice it never saw."""
    from vision.training.families import crop_readings

    stored = photos(table)
    group = {"twin": "in train too", "apart": "not in train", "one": "one die (not told)"}
    of_photo = {
        photo.path.stem[:40]: group["one" if twin is None else "twin" if twin else "apart"]
        for photo, twin in zip(stored, twins(stored, photos(train)), strict=True)
    }
    counts = {name: [0, 0] for name in group.values()}
    for path, truth, read in crop_readings(reader, crops):
        tally = counts[of_photo[path.stem.rsplit("_", 2)[0]]]
        tally[0] += 1
        tally[1] += read == truth
    return {name: {"dice": n, "read_right": round(r / n, 4) if n else 0.0}
            for name, (n, r) in counts.items()}  # fmt: skip


def read_at_table_scale(reader: Reader, table: Path) -> dict[str, dict[str, float]]:
    """The reader on each stored photograph's labelled dice, the photograph shrunk to the
    table's scale as `table_scenes` shrinks it: the reading `found_at_table_scale` would get
    from a detector that boxed every die exactly. By dark and light surroundings."""
    from vision.detections import Detections

    counts = {"dark": [0, 0], "light": [0, 0]}
    for photo in photos(table):
        scale = TABLE_BOX_PX / photo.box_side()
        small = cv2.resize(_image(photo.path), None, fx=scale, fy=scale,
                           interpolation=cv2.INTER_AREA)  # fmt: skip
        corners = np.array([[[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
                            for x0, y0, x1, y1 in photo.boxes]) * scale  # fmt: skip
        exact = Detections(corners, np.ones(len(corners)), ("die",) * len(corners))
        read = reader.read(small, exact).labels  # as the box reads a die box
        tally = counts["dark" if photo.dark else "light"]
        tally[0] += len(read)
        tally[1] += sum(r == f"die-{v}" for r, v in zip(read, photo.values, strict=True))
    return {kind: {"dice": n, "read_right": round(r / n, 4) if n else 0.0}
            for kind, (n, r) in counts.items()}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--carry", type=Path, metavar="TABLE",
                        help="copy TABLE's photographs for a GPU run to --out instead")  # fmt: skip
    parser.add_argument("--out", type=Path, default=Path(".carry/real-table"))
    parser.add_argument(
        "--photos", type=Path, help="a split of stored photographs (datasets/real-dice/table/test)"
    )
    parser.add_argument("--frames", type=Path, help="a held-out data set")
    parser.add_argument("--light", action="store_true", help="the light photographs instead")
    parser.add_argument("--limit", type=int, help="at most this many photographs")
    parser.add_argument("--picture", type=Path, help="also draw ten dark ones found to this JPEG")
    parser.add_argument("--reader-by-size", type=Path, metavar="CROPS",
                        help="read the split's labelled crops (datasets/real-dice/reader/test) "
                        "as the box reads dice, by the die's size in its photograph (--photos: "
                        "the same split's stored photographs)")  # fmt: skip
    parser.add_argument("--misreads", type=Path, metavar="CROPS",
                        help="draw the split's misread crops (datasets/real-dice/reader/test), "
                        "as the box reads dice, on one sheet (--sheet)")  # fmt: skip
    parser.add_argument("--sheet", type=Path, default=Path("runs/real-dice/misreads.jpg"))
    parser.add_argument("--reader-by-twin", type=Path, metavar="CROPS",
                        help="read the split's labelled crops as the box reads dice, apart by "
                        "whether their photograph (--photos) is in the train split too "
                        "(--train)")  # fmt: skip
    parser.add_argument("--train", type=Path, default=Path("datasets/real-dice/table/train"))
    parser.add_argument("--reader-at-table-scale", action="store_true",
                        help="read --photos' labelled dice, shrunk to the table's scale, on "
                        "their true boxes (no detector)")  # fmt: skip
    args = parser.parse_args()
    if args.carry:
        print(json.dumps(carry(args.carry, args.out)))
        return 0
    if args.misreads:
        if not args.misreads.is_dir():
            print(f"no {args.misreads}: fetch the photographs (scripts/fetch_real_dice.py)",
                  file=sys.stderr)  # fmt: skip
            return 2
        from vision.detector import Reader
        from vision.training.families import crop_readings

        readings = crop_readings(Reader(), args.misreads)
        drawn = misread_sheet(readings, args.sheet)
        print(f"{drawn} of {len(readings)} crops misread" + (f": {args.sheet}" if drawn else ""))
        return 0
    if args.reader_by_size or args.reader_at_table_scale or args.reader_by_twin:
        needed = [args.photos] + ([args.train] if args.reader_by_twin else [])
        if any(p is None or not (p / "photos.jsonl").is_file() for p in needed):
            print("--reader-by-size, --reader-by-twin and --reader-at-table-scale need --photos "
                  "(and --train): splits' stored photographs (scripts/fetch_real_dice.py)",
                  file=sys.stderr)  # fmt: skip
            return 2
        from vision.detector import Reader

        if args.reader_by_twin:
            read = read_by_twin(Reader(), args.reader_by_twin, args.photos, args.train)
        elif args.reader_by_size:
            read = read_by_size(Reader(), args.reader_by_size, args.photos)
        else:
            read = read_at_table_scale(Reader(), args.photos)
        print(json.dumps(read, indent=2))
        return 0
    if args.photos is None or args.frames is None:
        parser.error("--photos and --frames are needed to measure")
    for need in (args.photos / "photos.jsonl", args.frames / "annotations.jsonl"):
        if not need.is_file():
            print(f"no {need}: fetch the photographs (scripts/fetch_real_dice.py) or render "
                  "the frames (paigow synth dataset)", file=sys.stderr)  # fmt: skip
            return 2
    from vision.detector import Detector, Reader

    measured = found_at_table_scale(Detector(), Reader(), args.photos, args.frames,
                                    dark=not args.light, limit=args.limit)  # fmt: skip
    print(json.dumps(measured, indent=2))
    if args.picture:
        picture(Detector(), Reader(), args.photos, args.frames, args.picture)
    return 0


if __name__ == "__main__":
    sys.exit(main())
