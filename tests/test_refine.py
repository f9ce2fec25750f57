"""The refiner: its box geometry, and the shipped model tightening real detector boxes."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.detections import polygon_iou
from vision.detector import MODELS, REFINERS, Detector
from vision.refine import FIRST, REFINE_CROP, SECOND, View, crop, decode, encode

FRAME = Path(__file__).parent / "fixtures" / "frames" / "table-1080.jpg"
TRUTH = json.loads(FRAME.with_suffix(".json").read_text())


def rectangle(centre: tuple[float, float], sides: tuple[float, float], turn: float) -> np.ndarray:
    u = np.array([np.cos(turn), np.sin(turn)])
    v = np.array([-u[1], u[0]])
    c, (w, h) = np.asarray(centre, float), sides
    return np.array([c - u * w / 2 - v * h / 2, c + u * w / 2 - v * h / 2,
                     c + u * w / 2 + v * h / 2, c - u * w / 2 + v * h / 2])  # fmt: skip


@pytest.mark.parametrize(
    ("box", "truth", "die"),
    [
        (rectangle((500, 300), (22, 54), 0.3), rectangle((503, 296), (24, 50), 0.38), False),
        (rectangle((500, 300), (54, 22), 1.2), rectangle((497, 306), (22, 57), 2.7), False),
        (
            np.roll(rectangle((80, 90), (20, 60), -0.4), 1, 0),
            rectangle((84, 90), (23, 55), -0.5),
            False,
        ),
        (rectangle((700, 500), (15, 15), 0.7), rectangle((703, 498), (13, 13), 0.1), True),
        (rectangle((700, 500), (11, 12), 0.0), rectangle((698, 502), (13, 13), 1.5), True),
    ],
)
def test_a_true_box_encoded_in_a_detected_boxs_frame_decodes_to_itself(
    box: np.ndarray, truth: np.ndarray, die: bool
) -> None:
    assert polygon_iou(decode(box, encode(box, truth, die), die), truth) > 0.999


@pytest.mark.parametrize("die", [False, True])
def test_a_wild_answer_moves_a_box_by_at_most_half_its_side(die: bool) -> None:
    box = rectangle((400, 400), (20, 20) if die else (22, 54), 0.2)
    moved = decode(box, np.array([9.0, -9.0, 9.0, 9.0, 9.0], np.float32), die)
    shift = np.abs(moved.mean(0) - box.mean(0))
    assert shift.max() <= FIRST.most_shift * 54 + 1e-6
    assert np.linalg.norm(moved[1] - moved[0]) <= np.exp(FIRST.most_shift) * 54 + 1e-6


@pytest.mark.parametrize("text", ["1.6 2.0 0.5", "1.3 1.6 0.25"])
def test_a_view_reads_back_from_its_text(text: str) -> None:
    assert str(View.parse(text)) == text


@pytest.mark.parametrize("view", [FIRST, SECOND])
@pytest.mark.parametrize("die", [False, True])
def test_a_box_fills_its_stages_crop_as_the_view_says(view: View, die: bool) -> None:
    """A white box on black: it spans 1/view of the crop each way (a second stage looks closer)."""
    box = rectangle((300, 200), (40, 40) if die else (30, 74), 0.4)
    image = np.zeros((400, 600, 3), np.uint8)
    cv2.fillPoly(image, [np.round(box).astype(np.int32)], (255, 255, 255))
    white = crop(image, box, die, view)[..., 0] > 127
    grow = view.die if die else view.tile
    assert white.mean() == pytest.approx(1 / grow**2, abs=0.04)


def test_the_crop_is_square_and_upright_for_a_die_whatever_its_boxs_turn() -> None:
    image = cv2.imread(str(FRAME))
    dice = [o for o in TRUTH["objects"] if o["labelled"] and o["label"].startswith("die-")]
    die = np.asarray(dice[0]["corners"])
    a = crop(image, die, True)
    b = crop(image, np.roll(die, 1, 0), True)
    assert a.shape == (REFINE_CROP, REFINE_CROP, 3)
    assert np.abs(a.astype(int) - b.astype(int)).mean() < 2


def _mean_best_iou(corners: np.ndarray, dice: bool) -> float:
    """How well the boxes fit the fully visible objects of a kind they found (IoU >= 0.3)."""
    truth = [np.asarray(o["corners"]) for o in TRUTH["objects"]
             if o["labelled"] and o["visible"] >= 0.9 and o["label"] != "back"
             and o["label"].startswith("die-") == dice]  # fmt: skip
    best = [max(polygon_iou(c, t) for c in corners) for t in truth]
    return float(np.mean([b for b in best if b >= 0.3]))


@pytest.mark.skipif(not (MODELS / "refiner.onnx").exists(), reason="no refiner shipped")
@pytest.mark.parametrize("dice", [False, True])
def test_the_shipped_refiner_fits_the_fixture_frames_boxes_tighter(dice: bool) -> None:
    """Measured on this frame: faces 0.83 -> 0.93 mean IoU, dice 0.68 -> 0.94."""
    image = cv2.imread(str(FRAME))
    loose = Detector(refiner=None).detect(image).corners
    tight = Detector().detect(image).corners
    assert _mean_best_iou(tight, dice) > _mean_best_iou(loose, dice) + 0.03


@pytest.mark.skipif(not REFINERS[1].exists(), reason="no second refiner stage shipped")
def test_the_second_stage_reads_its_view_from_its_file_and_tightens_the_first_stages_boxes() -> (
    None
):
    """Measured on this frame: faces 0.928 -> 0.966 mean IoU, dice 0.942 -> 0.933 (the held-out
    set's dice gain, 0.880 -> 0.903, does not show on this frame's few), so the mean is asserted."""
    image = cv2.imread(str(FRAME))
    assert [view for *_, view in Detector().refiner.stages] == [FIRST, SECOND]  # type: ignore[union-attr]
    once = Detector(refiner=REFINERS[:1]).detect(image).corners
    twice = Detector().detect(image).corners
    fit = [np.mean([_mean_best_iou(c, dice) for dice in (False, True)]) for c in (once, twice)]
    assert fit[1] > fit[0]
