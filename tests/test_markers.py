"""The markers taught to the shipped detector as a branch of its head."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import onnxruntime as ort
import pytest

from vision.detector import DETECTOR_CLASSES, DETECTOR_INPUT, MODELS, Detector, letterbox
from vision.labels import CHUNG_BANKER, MARKERS, PLUS_4
from vision.training.markers import HIDDEN, anchor_targets, with_markers

IMAGES = Path(__file__).parent / "fixtures" / "images"
pytest.importorskip("onnx")


def _outputs(model: Path, blob: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: blob})[0][0]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped detector with a branch that scores every anchor whose first neck feature is
    high as a chung."""
    branches = []
    for channels in (64, 128, 256):
        hidden = np.zeros((HIDDEN, channels), np.float32)
        hidden[0, 0] = 1.0
        score = np.zeros((len(MARKERS), HIDDEN), np.float32)
        score[0, 0] = 4.0
        branches.append([hidden, np.zeros(HIDDEN, np.float32), score,
                         np.full(len(MARKERS), -2.0, np.float32)])  # fmt: skip
    return with_markers(MODELS / "detector.onnx", branches, tmp_path_factory.mktemp("m") / "d.onnx")


def test_the_branch_adds_the_markers_and_leaves_every_other_output_as_shipped(
    probed: Path,
) -> None:
    entry = json.loads((IMAGES / "annotations.jsonl").read_text().splitlines()[0])
    blob = letterbox(cv2.imread(str(IMAGES / entry["image"])), *DETECTOR_INPUT)[0]
    shipped, grown = _outputs(MODELS / "detector.onnx", blob), _outputs(probed, blob)
    old = 4 + len(DETECTOR_CLASSES) - len(MARKERS)
    assert grown.shape[0] == shipped.shape[0] + len(MARKERS)
    assert np.array_equal(grown[:old], shipped[:old])  # boxes, tile, back, die: bit for bit
    assert np.array_equal(grown[-1], shipped[-1])  # the angle
    assert grown[old].max() > 0.5  # the chung row scores what the branch says
    assert grown[old + 1 : -1].max() < 0.2
    assert Detector(path=probed).names == dict(enumerate(DETECTOR_CLASSES))


def test_a_detector_that_scores_markers_gets_no_second_set(probed: Path, tmp_path: Path) -> None:
    branches = [[np.zeros((HIDDEN, c), np.float32), np.zeros(HIDDEN, np.float32),
                 np.zeros((len(MARKERS), HIDDEN), np.float32), np.zeros(len(MARKERS), np.float32)]
                for c in (64, 128, 256)]  # fmt: skip
    with pytest.raises(ValueError, match="no markers can be added"):
        with_markers(probed, branches, tmp_path / "twice.onnx")


def _square(x: float, y: float, side: float) -> list[list[float]]:
    return [[x, y], [x + side, y], [x + side, y + side], [x, y + side]]


@pytest.mark.parametrize(
    ("label", "anchor", "target", "on_object", "rim"),
    [
        (CHUNG_BANKER, (5, 5), 0, True, False),  # the plaque's middle: its example
        (PLUS_4, (5, 5), MARKERS.index(PLUS_4), True, False),
        (CHUNG_BANKER, (3, 5), -1, True, True),  # its rim: neither example nor negative
        (CHUNG_BANKER, (11, 11), -1, False, False),  # the cloth beside it
        ("1-3", (5, 5), -1, True, False),  # a tile: a negative kept every time
    ],
)
def test_anchors_take_a_marker_from_its_middle_only(
    label: str, anchor: tuple[int, int], target: int, on_object: bool, rim: bool
) -> None:
    """A 64-px object at (24, 24) on the stride-8 grid (anchor centres at 8k + 4)."""
    objects = [{"label": label, "labelled": True, "corners": _square(24, 24, 64)}]
    targets, objects_at, rims = anchor_targets(objects, 1.0, 0, 0, (12, 12), 8)
    index = anchor[1] * 12 + anchor[0]
    assert (targets[index], objects_at[index], rims[index]) == (target, on_object, rim)


def test_the_branch_learns_a_marker_its_features_tell_apart() -> None:
    pytest.importorskip("torch")
    from vision.training.markers import fit

    rng = np.random.default_rng(1)
    features = rng.normal(0, 1, (4000, 64)).astype(np.float32)
    targets = np.full(4000, -1)
    targets[:200] = 1  # the co-banker face: feature 3 is high
    features[:200, 3] += 4
    w1, b1, w2, b2 = fit(features, targets)
    hidden = features @ w1.T + b1
    scores = 1 / (1 + np.exp(-((hidden / (1 + np.exp(-hidden))) @ w2.T + b2)))
    assert (scores[:200, 1] > 0.5).mean() > 0.9
    assert (scores[200:, 1] > 0.5).mean() < 0.01
    assert (scores[:, [0, 2, 3]] > 0.5).mean() < 0.01
