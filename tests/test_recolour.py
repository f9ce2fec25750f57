"""The reader's training crops repainted as other makers' sets: each move keeps what makes the
face (where the pips are) and changes only how the set looks."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.training import recolour as paint

BLACK, WHITE, RED = (20, 20, 20), (240, 240, 240), (200, 30, 30)


def dark_tile() -> np.ndarray:
    """An RGB crop of a black tile end: a white pip and a red one."""
    crop = np.full((64, 64, 3), BLACK, np.uint8)
    cv2.circle(crop, (20, 20), 5, WHITE, -1)
    cv2.circle(crop, (44, 44), 5, RED, -1)
    return crop


def is_red(pixel: np.ndarray) -> bool:
    return int(pixel[0]) > int(pixel[1]) + 60 and int(pixel[0]) > int(pixel[2]) + 60


@pytest.mark.parametrize(
    ("where", "check"),
    [
        ((0, 0), lambda p: p.min() > 200),  # the black body turns light
        ((20, 20), lambda p: p.max() < 50),  # the white ink turns dark
        ((44, 44), is_red),  # the red pip stays red
    ],
    ids=["body light", "ink dark", "red kept"],
)
def test_lightness_turned_over_keeps_the_colours(where, check) -> None:
    assert check(paint.turn_lightness(dark_tile())[where])


def test_hues_turned_leave_greys_and_move_the_red() -> None:
    turned = paint.turn_hues(dark_tile(), 60)  # a third of the wheel: red to green
    assert tuple(turned[0, 0]) == BLACK and tuple(turned[20, 20]) == WHITE
    r, g, b = (int(c) for c in turned[44, 44])
    assert g > r + 60 and g > b + 60


@pytest.mark.parametrize(("grow", "more"), [(True, True), (False, False)], ids=["grow", "shrink"])
def test_pips_grow_or_shrink_by_a_pixel_and_stay_where_they_were(grow, more) -> None:
    crop = dark_tile()
    light = (crop[..., 0] > 128).sum()
    changed = paint.resize_pips(crop, grow=grow)
    after = (changed[..., 0] > 128).sum()
    assert bool(after > light) is more and after > 0
    ys, xs = np.nonzero(changed[..., 1] > 128)  # the white pip alone: green is low on red
    assert abs(ys.mean() - 20) < 1 and abs(xs.mean() - 20) < 1


def test_the_crops_not_repainted_come_back_as_they_were_as_often_as_drawn() -> None:
    rng = np.random.default_rng(7)
    crop = dark_tile()
    kept = sum(paint.recolour(crop, rng) is crop for _ in range(4000)) / 4000
    no_move = (1 - paint.LIGHTNESS_TURNED) * (1 - paint.HUE_TURNED) * (1 - paint.PIPS_RESIZED)
    assert abs(kept - (1 - paint.RECOLOURED * (1 - no_move))) < 0.03


def test_every_move_is_drawn_over_many_crops() -> None:
    rng = np.random.default_rng(11)
    crop = dark_tile()
    painted = [paint.recolour(crop, rng) for _ in range(400)]
    light_bodies = sum(int(p[0, 0].min()) > 200 for p in painted)
    coloured_bodies = sum(not is_red(p[44, 44]) and p[44, 44].std() > 30 for p in painted)
    grown = sum((p[..., 1] > 128).sum() > (crop[..., 1] > 128).sum() + 10 for p in painted)
    assert light_bodies > 50 and coloured_bodies > 30 and grown > 10


def test_the_training_split_alone_is_repainted_before_ultralytics_own_augmentations(
    tmp_path,
) -> None:
    pytest.importorskip("ultralytics")
    from vision.training.recolour import Recolour, recolouring_trainer

    for split in ("train", "val"):
        for label in ("1-1", "back"):
            (tmp_path / split / label).mkdir(parents=True)
            cv2.imwrite(str(tmp_path / split / label / "a.png"), dark_tile())
    trainer = recolouring_trainer()(overrides={
        "model": "yolo11n-cls.yaml", "data": str(tmp_path), "imgsz": 64, "device": "cpu",
        "workers": 0, "project": str(tmp_path / "runs"), "name": "t", "plots": False})  # fmt: skip
    train = trainer.build_dataset(str(tmp_path / "train"), "train")
    val = trainer.build_dataset(str(tmp_path / "val"), "val")
    assert isinstance(train.torch_transforms.transforms[0], Recolour)
    assert not any(isinstance(t, Recolour) for t in val.torch_transforms.transforms)
    assert tuple(train[0]["img"].shape) == (3, 64, 64)  # the whole chain runs on a real crop
