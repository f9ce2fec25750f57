"""8-bit detector: which nodes stay float, which frames calibrate, and a real quantisation of a
small model shaped like an ultralytics export."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import onnxruntime as ort
import pytest

from vision.detector import MODELS, letterbox
from vision.training.quantize import (
    calibration_frames,
    float_from_qdq,
    float_head,
    quantize_detector,
)

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
            h.make_node("Sigmoid", ["a"], ["s"], "/model.0/act/Sigmoid"),  # SiLU, as in YOLO11
            h.make_node("Mul", ["a", "s"], ["b"], "/model.0/act/Mul"),
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


def _largest_weight(model: Path) -> int:
    stored = onnx.load(str(model)).graph.initializer
    int8 = onnx.TensorProto.INT8
    weights = [onnx.numpy_helper.to_array(t) for t in stored if t.data_type == int8]
    assert weights
    return max(int(np.abs(w.astype(np.int16)).max()) for w in weights)


def test_weights_fit_in_seven_bits_so_no_cpu_saturates(tmp_path: Path) -> None:
    """An AVX2 CPU without VNNI sums pairs of 8-bit products in 16 bits: 255 x 64 x 2 fits,
    255 x 127 x 2 does not (the detector saw 30 dice a frame where there were 2)."""
    source, out = tmp_path / "float.onnx", tmp_path / "int8.onnx"
    _tiny_export(source)
    quantize_detector(source, out, calibration_frames([_dataset(tmp_path / "data", 8)], count=8))
    assert _largest_weight(out) <= 64


def test_the_shipped_detector_has_seven_bit_weights() -> None:
    assert _largest_weight(MODELS / "detector.onnx") <= 64


def test_a_quantised_model_taken_back_to_float_answers_as_it_did(tmp_path: Path) -> None:
    source, int8, back = tmp_path / "float.onnx", tmp_path / "int8.onnx", tmp_path / "back.onnx"
    _tiny_export(source)
    frames = calibration_frames([_dataset(tmp_path / "data", 8)], count=8)
    quantize_detector(source, int8, frames)
    float_from_qdq(int8, back)
    ops = {n.op_type for n in onnx.load(str(back)).graph.node}
    assert "Conv" in ops
    assert not ops & {"QuantizeLinear", "DequantizeLinear"}
    x = letterbox(cv2.imread(str(frames[0])), 32, 32)[0]
    want = ort.InferenceSession(str(source)).run(None, {"images": x})[0]
    got = ort.InferenceSession(str(back)).run(None, {"images": x})[0]
    assert np.abs(got - want).max() < 0.02 * np.abs(want).max()  # the weights' rounding only
    quantize_detector(int8, tmp_path / "again.onnx", frames)  # and a QDQ file quantises again
