"""8-bit detector: which nodes stay float, which frames calibrate, and a real quantisation of a
small model shaped like an ultralytics export."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import onnxruntime as ort
import pytest

from vision.detector import letterbox
from vision.quantize import calibration_frames, float_head, quantize_detector

onnx = pytest.importorskip("onnx")


@pytest.mark.parametrize(
    ("name", "stays_float"),
    [
        ("/model.0/conv/Conv", False),
        ("/model.22/m/m.0/cv1/conv/Conv", False),
        ("/model.23/cv2.0/cv2.0.0/conv/Conv", False),  # the head's inner blocks: quantised
        ("/model.23/cv3.1/cv3.1.1/cv3.1.1.0/act/Mul", False),
        ("/model.23/cv2.0/cv2.0.2/Conv", True),  # each branch's last convolution: float
        ("/model.23/cv4.2/cv4.2.2/Conv", True),
        ("/model.23/dfl/conv/Conv", True),
        ("/model.23/Concat_3", True),
        ("/model.23/Sigmoid", True),
    ],
)
def test_only_the_heads_output_layers_stay_float(name: str, stays_float: bool) -> None:
    names = [name, "/model.0/conv/Conv", "/model.23/Concat"]
    assert (name in float_head(names)) is stays_float


def test_a_model_without_ultralytics_names_is_refused() -> None:
    with pytest.raises(ValueError, match="not an ultralytics export"):
        float_head(["conv1", "relu1"])


def _dataset(root: Path, count: int) -> Path:
    for split in ("train", "val"):
        (root / "images" / split).mkdir(parents=True)
    rng = np.random.default_rng(0)
    for k in range(count):
        image = rng.integers(0, 255, (48, 64, 3), np.uint8)
        cv2.imwrite(str(root / "images" / "train" / f"{k:03d}.jpg"), image)
    cv2.imwrite(str(root / "images" / "val" / "000.jpg"), np.zeros((48, 64, 3), np.uint8))
    return root


def test_calibration_uses_training_frames_spread_over_the_sets(tmp_path: Path) -> None:
    a, b = _dataset(tmp_path / "a", 10), _dataset(tmp_path / "b", 10)
    frames = calibration_frames([a, b], count=5)
    assert len(frames) == 5
    assert {f.parent.name for f in frames} == {"train"}
    assert {f.parents[2].name for f in frames} == {"a", "b"}
    with pytest.raises(ValueError, match="no training frames"):
        calibration_frames([tmp_path], count=5)


def _tiny_export(path: Path) -> None:
    """Two convolutions named as ultralytics names them: a body one and the head's last one."""
    h = onnx.helper
    rng = np.random.default_rng(1)
    body = h.make_tensor("w0", onnx.TensorProto.FLOAT, [4, 3, 3, 3], rng.normal(0, 0.3, 108))
    head = h.make_tensor("w1", onnx.TensorProto.FLOAT, [2, 4, 1, 1], rng.normal(0, 0.3, 8))
    graph = h.make_graph(
        [
            h.make_node("Conv", ["images", "w0"], ["a"], "/model.0/conv/Conv", pads=[1, 1, 1, 1]),
            h.make_node("Relu", ["a"], ["b"], "/model.0/act/Relu"),
            h.make_node("Conv", ["b", "w1"], ["out"], "/model.1/cv2.0/cv2.0.2/Conv"),
        ],
        "tiny",
        [h.make_tensor_value_info("images", onnx.TensorProto.FLOAT, [1, 3, 32, 32])],
        [h.make_tensor_value_info("out", onnx.TensorProto.FLOAT, [1, 2, 32, 32])],
        [body, head],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_quantised_model_keeps_the_head_float_and_the_answers(tmp_path: Path) -> None:
    source, out = tmp_path / "float.onnx", tmp_path / "int8.onnx"
    _tiny_export(source)
    frames = calibration_frames([_dataset(tmp_path / "data", 8)], count=8)
    quantize_detector(source, out, frames)
    nodes = {n.name: n for n in onnx.load(str(out)).graph.node}
    dequantised = {o for n in nodes.values() if n.op_type == "DequantizeLinear" for o in n.output}
    assert nodes["/model.0/conv/Conv"].input[1] in dequantised  # 8-bit weights
    assert nodes["/model.1/cv2.0/cv2.0.2/Conv"].input[1] == "w1"  # float weights, float output
    x = letterbox(cv2.imread(str(frames[0])), 32, 32)[0]  # an input like those calibrated on
    want = ort.InferenceSession(str(source)).run(None, {"images": x})[0]
    got = ort.InferenceSession(str(out)).run(None, {"images": x})[0]
    assert np.abs(got - want).max() < 0.05 * np.abs(want).max()
