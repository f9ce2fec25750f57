"""The reader's last layer taught again: features (and so every enrolment) kept, reading moved."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.detector import MODELS
from vision.labels import CLASSES

onnx = pytest.importorskip("onnx")

from vision.training.reader_head import judge, last_layer  # noqa: E402

BACK, ONE_ONE, THREE_THREE = CLASSES.index("back"), CLASSES.index("1-1"), CLASSES.index("3-3")
DIE = CLASSES.index("die-3")


def test_the_last_layer_is_the_map_from_the_embedding_to_the_classes() -> None:
    from onnx import numpy_helper

    model = onnx.load(str(MODELS / "reader.onnx"))
    weight, bias = last_layer(model)
    found = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    assert found[weight].shape == (len(CLASSES), 1280)
    assert found[bias].shape == (len(CLASSES),)


def _probs(rows: list[tuple[int, float]]) -> np.ndarray:
    """Rows putting `sure` on one class and the rest evenly on the others."""
    out = np.zeros((len(rows), len(CLASSES)), np.float32)
    for k, (index, sure) in enumerate(rows):
        out[k] = (1 - sure) / (len(CLASSES) - 1)
        out[k, index] = sure
    return out


@pytest.mark.parametrize(
    ("rows", "labels", "expected"),
    [
        (
            [(ONE_ONE, 0.85)],
            [BACK],
            {
                "backs": 1,
                "backs_read_face_0.5": 1,
                "backs_read_face_0.8": 1,
                "backs_read_face_0.9": 0,
            },
        ),
        ([(BACK, 0.95)], [BACK], {"backs": 1, "backs_read_face_0.5": 0}),
        ([(ONE_ONE, 0.6)], [ONE_ONE], {"faces": 1, "faces_right": 1, "backs": 0}),
        ([(BACK, 0.6)], [ONE_ONE], {"faces": 1, "faces_right": 0}),
        ([(DIE, 0.9)], [THREE_THREE], {"faces": 1, "faces_right": 0}),  # a tile box reads no die
        ([(DIE, 0.9)], [DIE], {"faces": 0, "backs": 0}),  # dice are not judged here
    ],
)
def test_judging_counts_faces_read_right_and_backs_read_as_faces_at_each_bar(
    rows: list[tuple[int, float]], labels: list[int], expected: dict[str, int]
) -> None:
    result = judge(_probs(rows), np.array(labels))
    assert {k: result[k] for k in expected} == expected


def _folder(root: Path) -> Path:
    """Train and val crops: plain grey labelled `back`, noise labelled `1-1`."""
    rng = np.random.default_rng(0)
    for split in ("train", "val"):
        for label in ("back", "1-1"):
            (root / split / label).mkdir(parents=True)
            for k in range(12):
                crop = (np.full((64, 64, 3), 90 + 3 * k, np.uint8) if label == "back"
                        else rng.integers(0, 256, (64, 64, 3), np.uint8))  # fmt: skip
                cv2.imwrite(str(root / split / label / f"{k}.png"), crop)
    return root


def test_teaching_moves_the_reading_and_keeps_every_embedding(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    import onnxruntime as ort

    from vision.training.embedding import EMBEDDING
    from vision.training.reader_head import teach

    crops = _folder(tmp_path / "crops")
    taught = tmp_path / "taught.onnx"
    report = teach(MODELS / "reader.onnx", [crops], taught)
    before, after = report[f"{crops} shipped"], report[f"{crops} taught"]
    assert after["faces_right"] == after["faces"] == 24  # each tile crop as cut and turned
    assert after["backs"] == 24 and after["backs_read_face_0.5"] == 0
    assert before["faces_right"] < 24 or before["backs_read_face_0.5"] > 0  # it had to move
    blob = cv2.dnn.blobFromImages([cv2.imread(str(p)) for p in sorted(crops.rglob("*.png"))],
                                  1 / 255, (64, 64), swapRB=True)  # fmt: skip
    outputs = []
    for model in (MODELS / "reader.onnx", taught):
        session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name
        outputs.append(session.run([session.get_outputs()[0].name, EMBEDDING], {name: blob}))
    np.testing.assert_array_equal(outputs[0][1], outputs[1][1])
    assert not np.allclose(outputs[0][0], outputs[1][0])


def test_a_missing_crops_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vision.training.reader_head", "--reader",
         str(MODELS / "reader.onnx"), "--crops", str(tmp_path / "none"), "--out",
         str(tmp_path / "out.onnx")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "does not exist" in done.stderr
