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
    BOX_BINS,
    calibration_frames,
    expectation_on_last_axis,
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


def _box_decoding(path: Path, bias: bool = False, perm: tuple[int, ...] = (0, 2, 1, 3)) -> None:
    """A head convolution and the export's box decoding after it, named as ultralytics names
    them: each side's softmax over its bins along axis 1, the expectation a 1x1 convolution."""
    h = onnx.helper
    rng = np.random.default_rng(2)
    anchors = 8 * 8
    stored = [
        h.make_tensor(
            "w",
            onnx.TensorProto.FLOAT,
            [4 * BOX_BINS, 3, 1, 1],
            rng.normal(0, 2.0, 4 * BOX_BINS * 3),
        ),
        h.make_tensor("bins", onnx.TensorProto.FLOAT, [1, BOX_BINS, 1, 1], np.arange(BOX_BINS)),
        h.make_tensor("flat", onnx.TensorProto.INT64, [3], [1, 4 * BOX_BINS, anchors]),
        h.make_tensor("sides", onnx.TensorProto.INT64, [4], [1, 4, BOX_BINS, anchors]),
        h.make_tensor("boxes", onnx.TensorProto.INT64, [3], [1, 4, anchors]),
        h.make_tensor("shift", onnx.TensorProto.FLOAT, [1], [0.5]),
    ]
    head = "/model.1/dfl"
    expectation = ["p", "bins", "shift"] if bias else ["p", "bins"]
    graph = h.make_graph(
        [
            h.make_node("Conv", ["images", "w"], ["c"], "/model.1/cv2.0/cv2.0.2/Conv"),
            h.make_node("Reshape", ["c", "flat"], ["f"], "/model.1/Reshape"),
            h.make_node("Reshape", ["f", "sides"], ["r"], f"{head}/Reshape"),
            h.make_node("Transpose", ["r"], ["t"], f"{head}/Transpose", perm=list(perm)),
            h.make_node("Softmax", ["t"], ["p"], f"{head}/Softmax", axis=1),
            h.make_node("Conv", expectation, ["e"], f"{head}/conv/Conv"),
            h.make_node("Reshape", ["e", "boxes"], ["out"], f"{head}/Reshape_1"),
        ],
        "decoding",
        [h.make_tensor_value_info("images", onnx.TensorProto.FLOAT, [1, 3, 8, 8])],
        [h.make_tensor_value_info("out", onnx.TensorProto.FLOAT, [1, 4, anchors])],
        stored,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _softmax_axes(model: Path) -> list[int]:
    nodes = onnx.load(str(model)).graph.node
    return [a.i for n in nodes if n.op_type == "Softmax" for a in n.attribute if a.name == "axis"]


def _answer(model: Path, x: np.ndarray) -> np.ndarray:
    return ort.InferenceSession(str(model)).run(None, {"images": x})[0]  # type: ignore[no-any-return]


def test_box_decoding_rewritten_on_the_last_axis_answers_to_the_bit(tmp_path: Path) -> None:
    source, rewritten = tmp_path / "export.onnx", tmp_path / "rewritten.onnx"
    _box_decoding(source)
    rewritten.write_bytes(source.read_bytes())
    assert expectation_on_last_axis(rewritten)
    assert _softmax_axes(rewritten) == [-1]
    ops = [n.op_type for n in onnx.load(str(rewritten)).graph.node]
    assert "MatMul" in ops and ops.count("Conv") == 1
    x = np.random.default_rng(3).normal(0, 1, (1, 3, 8, 8)).astype(np.float32)
    assert np.array_equal(_answer(rewritten, x), _answer(source, x))
    assert not expectation_on_last_axis(rewritten)  # once rewritten, left alone


@pytest.mark.parametrize(
    ("bias", "perm"),
    [(True, (0, 2, 1, 3)), (False, (0, 1, 3, 2))],
    ids=["expectation-with-a-bias", "another-transpose"],
)
def test_decoding_unlike_the_exports_is_left_alone(
    tmp_path: Path, bias: bool, perm: tuple[int, ...]
) -> None:
    source = tmp_path / "other.onnx"
    _box_decoding(source, bias=bias, perm=perm)
    before = source.read_bytes()
    assert not expectation_on_last_axis(source)
    assert source.read_bytes() == before


def test_quantising_rewrites_the_decoding(tmp_path: Path) -> None:
    source, out = tmp_path / "export.onnx", tmp_path / "int8.onnx"
    _box_decoding(source)
    quantize_detector(source, out, calibration_frames([_dataset(tmp_path / "data", 8)], count=8))
    assert _softmax_axes(out) == [-1]


@pytest.mark.parametrize("name", ["detector.onnx", "markers.onnx"])
def test_the_shipped_detectors_decode_on_the_last_axis(name: str) -> None:
    assert _softmax_axes(MODELS / name).count(1) == 0
