"""Real dice photographs at the table's scale: stored small with their boxes, pasted where they
cover nothing, taught to the detector and counted when it finds them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.detections import Detections
from vision.detector import DETECTOR_CLASSES
from vision.labels import PLUS_4
from vision.training.real_dice import (
    CARRIED_LIGHT_EVERY,
    DARK_BACKGROUND,
    SHEET_CELL,
    SHEET_ROW,
    STORED_BOX_PX,
    TABLE_BOX_PX,
    background,
    carry,
    found_at_table_scale,
    free_place,
    misread_sheet,
    paste,
    photos,
    read_at_table_scale,
    read_by_size,
    shrink,
    twins,
    write_photo,
)
from vision.training.train import prepare_detector

IMAGES = Path(__file__).parent / "fixtures" / "images"


def photograph(grey: int, dice: list[tuple[int, int, int]]) -> tuple[np.ndarray, list]:  # type: ignore[type-arg]
    """A 640 x 640 photograph of `grey` surroundings with white square dice (x, y, side)."""
    image = np.full((640, 640, 3), grey, np.uint8)
    boxes = []
    for x, y, side in dice:
        image[y : y + side, x : x + side] = 250
        boxes.append((float(x), float(y), float(x + side), float(y + side)))
    return image, boxes


@pytest.mark.parametrize(
    ("side", "stored_side"),
    [
        (200, STORED_BOX_PX),  # a close-up: shrunk to the stored size
        (40, STORED_BOX_PX),
        (15, 15),  # already smaller than stored: never enlarged
    ],
)
def test_a_photograph_is_stored_with_its_median_die_at_the_stored_size(
    side: int, stored_side: float
) -> None:
    image, boxes = photograph(60, [(50, 50, side), (300, 300, side)])
    small, scaled = shrink(image, boxes)
    assert max(b[2] - b[0] for b in scaled) == pytest.approx(stored_side, rel=0.01)
    assert small.shape[0] == pytest.approx(640 * stored_side / side, abs=1)


@pytest.mark.parametrize(("grey", "dark"), [(70, True), (120, True), (185, False)])
def test_the_background_is_measured_outside_the_dice(grey: int, dark: bool) -> None:
    image, boxes = photograph(grey, [(50, 50, 300)])  # white dice cover a fifth of it
    assert background(image, boxes) == pytest.approx(grey, abs=1)
    assert (background(image, boxes) < DARK_BACKGROUND) is dark


def test_stored_photographs_come_back_with_their_boxes_values_and_darkness(tmp_path: Path) -> None:
    image, boxes = photograph(60, [(100, 100, 200), (350, 350, 200)])
    write_photo(tmp_path, "a", image, boxes, [3, 6])
    image, boxes = photograph(190, [(100, 100, 40)])
    write_photo(tmp_path, "b", image, boxes, [1])
    first, second = photos(tmp_path)
    assert first.values == (3, 6) and first.dark
    assert first.box_side() == pytest.approx(STORED_BOX_PX, rel=0.01)
    assert cv2.imread(str(first.path)).shape[0] == 64  # 640 px at a tenth
    assert second.values == (1,) and not second.dark


def test_a_photograph_is_placed_over_no_object() -> None:
    rng = np.random.default_rng(0)
    tile = np.array([[0, 0], [300, 0], [300, 200], [0, 200]], float)
    for _ in range(50):
        at = free_place((40, 40), (400, 300), [tile], rng)
        assert at is not None
        x, y = at
        assert x > 300 or y > 200  # clear of the tile's span
        assert x + 40 < 400 and y + 40 < 300
    assert free_place((40, 40), (400, 300), [tile * 2], rng) is None  # nowhere free
    assert free_place((500, 40), (400, 300), [], rng) is None  # too large for the frame


def test_pasting_moves_and_scales_the_dice_boxes(tmp_path: Path) -> None:
    image, boxes = photograph(60, [(100, 200, 200)])
    write_photo(tmp_path, "a", image, boxes, [4])
    (photo,) = photos(tmp_path)  # stored at a tenth: a 20-px die at (10, 20)
    frame = np.zeros((300, 400, 3), np.uint8)
    (corners,) = paste(frame, photo, 0.5, (100, 50))
    assert corners[0] == pytest.approx([105, 60], abs=0.5)
    assert corners[2] == pytest.approx([115, 70], abs=0.5)
    assert frame[65, 110].min() > 200  # the die, white
    assert frame[52, 102].max() < 90  # its surroundings, dark
    assert frame[10, 10].max() == 0  # the frame elsewhere untouched


def test_a_gpu_run_carries_every_dark_photograph_and_some_light_ones(tmp_path: Path) -> None:
    table = tmp_path / "table"
    for split, count in (("train", 30), ("val", 10)):
        for k in range(count):
            grey = 60 if k % 3 == 0 else 190
            image, boxes = photograph(grey, [(100, 100, 100)])
            write_photo(table / split, f"p{k}", image, boxes, [k % 6 + 1])
    counts = carry(table, tmp_path / "carried")
    carried = photos(tmp_path / "carried" / "train")
    assert sum(p.dark for p in carried) == 10
    assert sum(not p.dark for p in carried) == -(-20 // CARRIED_LIGHT_EVERY)
    assert counts == {"train": len(carried), "val": 2}
    assert all(p.path.exists() for p in carried)


def test_the_reader_is_measured_by_each_dies_size_in_its_published_photograph(
    tmp_path: Path,
) -> None:
    from vision.crops import cut
    from vision.detector import Reader

    image, boxes = photograph(60, [(50, 50, 20), (200, 50, 40), (350, 300, 100)])
    stem = "a-photograph-with-a-name-longer-than-forty-characters.rf.0123"
    write_photo(tmp_path / "table", stem, image, boxes, [1, 2, 3])  # stored at half size
    for index, (x0, y0, x1, y1) in enumerate(boxes):
        corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
        folder = tmp_path / "crops" / f"die-{index + 1}"
        folder.mkdir(parents=True)
        cv2.imwrite(str(folder / f"{stem[:40]}_{index}_0.png"), cut(image, corners, die=True))
    bands = read_by_size(Reader(), tmp_path / "crops", tmp_path / "table")
    assert [(b["from_px"], b["dice"]) for b in bands] == [(0, 1), (24, 0), (32, 1), (48, 0),
                                                          (64, 1)]  # fmt: skip
    assert all(b["read_right"] in (0.0, 1.0) for b in bands)


def test_the_reader_at_the_tables_scale_counts_dark_and_light_photographs_apart(
    tmp_path: Path,
) -> None:
    from vision.detector import Reader

    dark, dark_boxes = photograph(60, [(100, 100, 80), (300, 300, 80)])
    light, light_boxes = photograph(190, [(200, 200, 80)])
    write_photo(tmp_path, "dark", dark, dark_boxes, [1, 2])
    write_photo(tmp_path, "light", light, light_boxes, [3])
    read = read_at_table_scale(Reader(), tmp_path)
    assert (read["dark"]["dice"], read["light"]["dice"]) == (2, 1)
    assert read["dark"]["read_right"] in (0.0, 0.5, 1.0) and read["light"]["read_right"] in (0, 1)


@pytest.mark.parametrize(
    ("reads", "drawn", "rows"),
    [
        (["die-1", "die-2", "die-3"], 0, 0),  # every crop read right: no sheet
        (["die-6", "die-2", "die-3"], 1, 1),
        (["die-6", "die-6", "die-6"], 3, 1),
        (["die-6", "die-6", "die-6"] * (SHEET_ROW // 3 + 1), SHEET_ROW + 3, 2),
    ],
)
def test_the_misread_sheet_shows_each_misread_crop_and_no_other(
    tmp_path: Path, reads: list[str], drawn: int, rows: int
) -> None:
    readings = []
    for index, read in enumerate(reads):
        truth = f"die-{index % 3 + 1}"
        crop = np.full((64, 64, 3), 40 * (index % 3 + 1), np.uint8)  # grey by its label
        path = tmp_path / truth / f"crop_{index}_0.png"
        path.parent.mkdir(exist_ok=True)
        cv2.imwrite(str(path), crop)
        readings.append((path, truth, read))
    sheet = tmp_path / "sheet.jpg"
    assert misread_sheet(readings, sheet) == drawn
    if not drawn:
        assert not sheet.exists()
        return
    image = cv2.imread(str(sheet))
    assert image.shape[:2] == (rows * (SHEET_CELL + 18), SHEET_ROW * SHEET_CELL)
    first_misread = next(i for i, r in enumerate(reads) if r != f"die-{i % 3 + 1}")
    centre = image[18 + SHEET_CELL // 2, SHEET_CELL // 2]
    assert abs(int(centre[0]) - 40 * (first_misread % 3 + 1)) <= 3  # that crop, first


DICE = [(100, 80, 40), (300, 400, 40), (500, 150, 40)]


def quarter_turned(dice: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    return [(y, 640 - x - side, side) for x, y, side in dice]  # as np.rot90 turns the image


def mirrored(dice: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    return [(640 - x - side, y, side) for x, y, side in dice]


@pytest.mark.parametrize(
    ("theirs", "their_values", "ours", "our_values", "twin"),
    [
        (DICE, [1, 2, 3], DICE, [1, 2, 3], True),
        (DICE, [1, 2, 3], quarter_turned(DICE), [1, 2, 3], True),
        (DICE, [1, 2, 3], mirrored(quarter_turned(DICE)), [1, 2, 3], True),
        (DICE, [1, 2, 3], [(x + 8, y, s) for x, y, s in DICE], [1, 2, 3], True),  # 1.25% off
        (DICE, [1, 2, 3], [(x + 20, y, s) for x, y, s in DICE], [1, 2, 3], False),  # 3% off
        (DICE, [1, 2, 3], DICE, [1, 2, 4], False),  # the same places, a die of another value
        (DICE, [1, 2, 3], DICE[:2], [1, 2], False),  # a die fewer
        (DICE[:1], [1], DICE[:1], [1], None),  # one die: its place tells nothing
    ],
)
def test_a_photograph_is_a_twin_where_the_same_dice_lie_at_the_same_places_turned_or_not(
    tmp_path: Path,
    theirs: list[tuple[int, int, int]],
    their_values: list[int],
    ours: list[tuple[int, int, int]],
    our_values: list[int],
    twin: bool | None,
) -> None:
    write_photo(tmp_path / "train", "theirs", *photograph(60, theirs), their_values)
    write_photo(
        tmp_path / "other", "other", *photograph(60, [(40, 40, 40), (560, 560, 40)]), [1, 2]
    )
    write_photo(tmp_path / "test", "ours", *photograph(60, ours), our_values)
    train = photos(tmp_path / "train") + photos(tmp_path / "other")
    assert twins(photos(tmp_path / "test"), train) == [twin]


def table_photos(tmp_path: Path) -> Path:
    folder = tmp_path / "photos" / "train"
    for k in range(4):
        image, boxes = photograph(60, [(100, 100, 200), (350, 300, 200)])
        write_photo(folder, f"p{k}", image, boxes, [2, 5])
    (tmp_path / "photos" / "val").mkdir()
    (tmp_path / "photos" / "val" / "photos.jsonl").write_text("")
    return tmp_path / "photos"


def labels(data_yaml: Path) -> list[int]:
    files = sorted((data_yaml.parent / "labels" / "train").glob("*.txt"))
    return [int(v.split()[0]) for f in files for v in f.read_text().splitlines() if v]


def with_a_button(tmp_path: Path) -> Path:
    """The fixture frames, the first with a +4 button labelled on the cloth."""
    shutil.copytree(IMAGES, tmp_path / "images")
    entries = [json.loads(x) for x in (IMAGES / "annotations.jsonl").read_text().splitlines()]
    button = [[600, 300], [640, 300], [640, 340], [600, 340]]
    entries[0]["objects"].append({"label": PLUS_4, "corners": button, "labelled": True})
    (tmp_path / "images" / "annotations.jsonl").write_text(
        "\n".join(json.dumps(e) for e in entries) + "\n"
    )
    return tmp_path / "images"


def test_detector_crops_gain_the_pasted_dice_and_lose_the_markers(tmp_path: Path) -> None:
    frames = with_a_button(tmp_path)
    plain = prepare_detector([frames], tmp_path / "plain")
    real = prepare_detector([frames], tmp_path / "real", real_dice=table_photos(tmp_path))
    without_button = prepare_detector([IMAGES], tmp_path / "without")
    assert labels(plain) == labels(without_button)  # the button: background, no class of any kind
    dice = DETECTOR_CLASSES.index("die")
    before, after = labels(plain), labels(real)
    entries = (IMAGES / "annotations.jsonl").read_text().splitlines()
    pasted = after.count(dice) - before.count(dice)
    assert 2 * len(entries) <= pasted <= 8 * len(entries)  # two dice a frame, cut by crop edges
    assert [k for k in after if k != dice] == [k for k in before if k != dice]
    assert max(after) < 3  # three classes: the markers stay unlabelled
    assert "names:\n  0: tile\n  1: back\n  2: die\n" in real.read_text()


def test_detector_crops_with_photographs_are_cut_the_same_every_time(tmp_path: Path) -> None:
    photos_folder = table_photos(tmp_path)
    one = prepare_detector([IMAGES], tmp_path / "one", real_dice=photos_folder)
    two = prepare_detector([IMAGES], tmp_path / "two", real_dice=photos_folder)
    for label in (one.parent / "labels" / "train").glob("*.txt"):
        assert label.read_text() == (two.parent / "labels" / "train" / label.name).read_text()


def frames_of_two_looks(tmp_path: Path) -> Path:
    """The fixture frames, the first two of the `classic` family and the rest of the house look."""
    shutil.copytree(IMAGES, tmp_path / "images")
    entries = [json.loads(x) for x in (IMAGES / "annotations.jsonl").read_text().splitlines()]
    for k, entry in enumerate(entries):
        entry["family"] = "classic" if k < 2 else "house"
    (tmp_path / "images" / "annotations.jsonl").write_text(
        "\n".join(json.dumps(e) for e in entries) + "\n"
    )
    return tmp_path / "images"


@pytest.mark.parametrize(
    ("looks", "frames_pasted"),
    [(None, 4), (("classic",), 2), (("house",), 2), (("house", "classic"), 4), ((), 0)],
)
def test_photographs_are_pasted_on_the_frames_of_the_looks_named(
    tmp_path: Path, looks: tuple[str, ...] | None, frames_pasted: int
) -> None:
    frames = frames_of_two_looks(tmp_path)
    plain = prepare_detector([frames], tmp_path / "plain")
    real = prepare_detector([frames], tmp_path / "real", real_dice=table_photos(tmp_path),
                            photo_looks=looks)  # fmt: skip
    gained = set()
    for label in (real.parent / "labels" / "train").glob("*.txt"):
        before = (plain.parent / "labels" / "train" / label.name).read_text()
        if label.read_text() != before:
            gained.add(label.stem.rsplit("-", 2)[0])  # the frame, without the crop's place
    assert len(gained) == frames_pasted


class DiceAt:
    """A fake detector that finds a die at each of the given frame points, or nothing."""

    def __init__(self, shift: float | None) -> None:
        self.shift = shift
        self.frame: np.ndarray | None = None

    def detect(self, frame: np.ndarray) -> Detections:
        if self.shift is None:
            return Detections.empty()
        white = np.argwhere(frame.min(2) > 240)  # the pasted dice: the only pure white
        ys, xs = white[:, 0], white[:, 1]
        centres = []
        for half in (xs < np.median(xs), xs >= np.median(xs)):
            centres.append((xs[half].mean() + self.shift, ys[half].mean()))
        corners = np.array([[[x - 6, y - 6], [x + 6, y - 6], [x + 6, y + 6], [x - 6, y + 6]]
                            for x, y in centres])  # fmt: skip
        return Detections(corners, np.ones(len(centres)), ("die-2", "die-3"))


class ReadAsFound:
    def read(self, frame: np.ndarray, found: Detections) -> Detections:
        return found


@pytest.mark.parametrize(
    ("shift", "found", "read_right", "other_boxes"),
    [
        (0.0, 2, 1, 0),  # both found where they are, one read right (die-2)
        (TABLE_BOX_PX * 0.6, 2, 1, 0),  # a centre off by 60% of the box: within the margin
        (TABLE_BOX_PX * 2.0, 0, 0, 1),  # two boxes beside the dice: one in the photo, on nothing
        (None, 0, 0, 0),
    ],
)
def test_dice_are_found_where_a_die_box_is_centred_on_them(
    tmp_path: Path, shift: float | None, found: int, read_right: int, other_boxes: int
) -> None:
    folder = tmp_path / "photos"
    image, boxes = photograph(60, [(100, 100, 200), (400, 300, 200)])
    write_photo(folder, "p", image, boxes, [2, 5])
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "f.png"), np.full((540, 960, 3), 30, np.uint8))
    (frames / "annotations.jsonl").write_text(json.dumps({"image": "f.png", "objects": []}))
    measured = found_at_table_scale(DiceAt(shift), ReadAsFound(), folder, frames)
    assert (measured["photos"], measured["dice"]) == (1, 2)
    assert (measured["found"], measured["read_right"]) == (found, read_right)
    assert measured["other_boxes"] == other_boxes
    assert json.loads(json.dumps(measured)) == measured  # kept in models/metrics.json


def test_the_picture_shows_each_photograph_enlarged(tmp_path: Path) -> None:
    from vision.training.real_dice import picture

    folder = tmp_path / "photos"
    for k in range(7):  # every sixth dark one: two of them
        image, boxes = photograph(60, [(100, 100, 200), (400, 300, 200)])
        write_photo(folder, f"p{k}", image, boxes, [2, 5])
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "f.png"), np.full((540, 960, 3), 30, np.uint8))
    (frames / "annotations.jsonl").write_text(json.dumps({"image": "f.png", "objects": []}))
    picture(DiceAt(0.0), ReadAsFound(), folder, frames, tmp_path / "p.jpg")
    drawn = cv2.imread(str(tmp_path / "p.jpg"))
    assert drawn.shape == (240, 5 * 240, 3)  # one row: two views and three blanks
    assert drawn[:, :480, 2].max() > 200 and drawn[:, 480:].max() < 30  # red boxes, then blank
