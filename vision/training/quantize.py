"""The detector in 8 bits: most of a frame's CPU time is the detector, and a CPU with 8-bit dot
products (AVX-512 VNNI) runs it much faster than in float.

Static post-training quantisation with onnxruntime (no retraining): weights per channel, and
activations calibrated on training frames, never test frames. The detection head's last layers
and its decoding stay in float: they emit box coordinates (hundreds of pixels) next to scores
(0 to 1) in one tensor, which no single 8-bit scale can hold. Measured on 80 held-out frames:
the same mAP and accuracy as the float model, 40% less time (docs/detector.md).

Weights are kept to 7 bits (`reduce_range`). A CPU without VNNI (AVX2 only, as the 2-core
machine of session 23: AMD EPYC) multiplies 8-bit activations by 8-bit weights in pairs summed
into 16 bits, which saturate: with full 8-bit weights the shipped detector saw 30 dice a frame
where there were 2 (docs/detector.md). With 7-bit weights no pair can overflow, on any CPU.

The quantised file's box decoding is then rewritten to run along the tensor's last axis
(`expectation_on_last_axis`): the same numbers, to the bit, a tenth less time a pass on a CPU
without VNNI.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import onnxruntime as ort
from numpy.typing import NDArray
from tqdm import tqdm

from vision.detector import DETECTOR_INPUT, letterbox

INNER_HEAD_BLOCK = re.compile(r"/cv\d\.\d/cv\d\.\d\.[01]/")
"""The head's inner convolutions (quantised); its last convolution per branch and the decoding
after them are not."""


def float_head(node_names: Sequence[str]) -> list[str]:
    """Nodes of the last module (the detection head) to keep in float."""
    modules = [int(m.group(1)) for n in node_names if (m := re.match(r"/model\.(\d+)/", n))]
    if not modules:
        raise ValueError("not an ultralytics export: no /model.N/ node names")
    head = f"/model.{max(modules)}/"
    return [n for n in node_names if n.startswith(head) and not INNER_HEAD_BLOCK.search(n)]


def calibration_frames(datasets: Sequence[Path], count: int = 40) -> list[Path]:
    """Training frames spread evenly over the data sets (never their validation split)."""
    frames = sorted(p for d in datasets for p in (d / "images" / "train").glob("*.jpg"))
    if not frames:
        where = ", ".join(map(str, datasets))
        raise ValueError(f"no training frames (images/train/*.jpg) in {where}")
    step = max(1, len(frames) // count)
    return frames[::step][:count]


def quantize_detector(model: Path, out: Path, frames: Sequence[Path]) -> Path:
    """Write `model` quantised to `out`, its activations calibrated on `frames`. A model already
    quantised is taken back to float first (`float_from_qdq`)."""
    import onnx  # the [train] and [dev] extras: quantising is build work, not edge work
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    feed = session.get_inputs()[0]
    _, _, height, width = feed.shape
    if not (isinstance(height, int) and isinstance(width, int)):  # a dynamic export
        height, width = DETECTOR_INPUT

    class Frames(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self.left = tqdm(frames, desc="calibrating", unit="frame")
            self.frames = iter(self.left)

        def get_next(self) -> dict[str, NDArray[np.float32]] | None:
            path = next(self.frames, None)
            if path is None:
                self.left.close()
                return None
            image = cv2.imread(str(path))
            if image is None:
                raise ValueError(f"cannot read calibration frame {path}")
            return {feed.name: letterbox(image, height, width)[0]}

    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        if is_quantised(onnx.load(str(model))):
            model = float_from_qdq(model, Path(scratch) / "float.onnx")
        prepared = Path(scratch) / "prepared.onnx"
        quant_pre_process(str(model), str(prepared), skip_symbolic_shape=True)
        names = [n.name for n in onnx.load(str(prepared)).graph.node]
        quantize_static(
            str(prepared),
            str(out),
            Frames(),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            reduce_range=True,
            nodes_to_exclude=float_head(names),
        )
    expectation_on_last_axis(out)
    return out


BOX_BINS = 16
"""YOLO11's distribution of each box side's distance over bins (`reg_max`): the decoding takes
the expectation over them."""


def expectation_on_last_axis(model: Path) -> bool:
    """Rewrite an ultralytics export's box decoding in place so that its softmax runs along the
    last axis; whether the file held one to rewrite. The export takes each side's softmax
    over its `BOX_BINS` bins along axis 1 of (batch, bins, 4, anchors) and the expectation as a
    1x1 convolution; onnxruntime's softmax off the last axis transposes on its own, and on the
    2-core EPYC without VNNI that node alone took 15.7 ms of the 137 ms whole-frame pass, the
    same softmax on the last axis 1.7 ms. Transposed to (batch, 4, anchors, bins), the softmax
    is the same sums in the same order and the expectation a MatMul with the convolution's
    weights: the outputs are equal to the bit (`tests/test_quantize.py`)."""
    import onnx
    from onnx import helper, numpy_helper

    onnx.checker.check_model(str(model))  # a file that is no ONNX model is refused here
    proto = onnx.load(str(model))
    graph = proto.graph
    stored = {t.name: t for t in graph.initializer}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    produced_by = {name: node for node in graph.node for name in node.output}
    rewritten = False
    for softmax in [n for n in graph.node if n.op_type == "Softmax"]:
        transpose = produced_by.get(softmax.input[0])
        users = consumers.get(softmax.output[0], [])
        if not (_is_bins_transpose(transpose, softmax) and len(users) == 1):
            continue
        if len(consumers[transpose.output[0]]) != 1:
            continue
        expectation = users[0]
        weight = stored.get(expectation.input[1]) if len(expectation.input) > 1 else None
        if expectation.op_type != "Conv" or weight is None or len(expectation.input) > 2:
            continue
        bins = numpy_helper.to_array(weight)
        if bins.shape != (1, BOX_BINS, 1, 1):
            continue
        reshaped_by = consumers.get(expectation.output[0], [])
        if not reshaped_by or any(n.op_type != "Reshape" for n in reshaped_by):
            continue  # the MatMul's (batch, 4, anchors, 1) serves only where reshaped
        stem = softmax.name.rsplit("/", 1)[0] + "/last_axis"
        weights = numpy_helper.from_array(bins.reshape(BOX_BINS, 1), stem + "/bins")
        replacement = [
            helper.make_node(
                "Transpose",
                [transpose.input[0]],
                [stem + "/bins_last"],
                stem + "/Transpose",
                perm=[0, 1, 3, 2],
            ),
            helper.make_node(
                "Softmax", [stem + "/bins_last"], [stem + "/softmax"], stem + "/Softmax", axis=-1
            ),
            helper.make_node(
                "MatMul",
                [stem + "/softmax", weights.name],
                [expectation.output[0]],
                stem + "/Expectation",
            ),
        ]
        nodes = list(graph.node)
        at = nodes.index(transpose)
        gone = {id(transpose), id(softmax), id(expectation)}
        kept = nodes[:at] + replacement + [n for n in nodes[at:] if id(n) not in gone]
        del graph.node[:]
        graph.node.extend(kept)
        graph.initializer.append(weights)
        if not any(weight.name in n.input for n in kept):
            graph.initializer.remove(weight)
        rewritten = True
    if rewritten:
        del graph.value_info[:]  # the rewritten tensors' shapes are inferred again on load
        onnx.checker.check_model(proto)
        onnx.save(proto, str(model))
    return rewritten


def _is_bins_transpose(node: Any, softmax: Any) -> bool:
    """Whether `node` turns (batch, 4, bins, anchors) into (batch, bins, 4, anchors) for a
    softmax along axis 1: the export's decoding, as `expectation_on_last_axis` finds it."""
    if node is None or node.op_type != "Transpose":
        return False
    perm = next((list(a.ints) for a in node.attribute if a.name == "perm"), None)
    axis = next((a.i for a in softmax.attribute if a.name == "axis"), -1)
    return perm == [0, 2, 1, 3] and axis == 1


def is_quantised(model: Any) -> bool:
    """Whether an ONNX model holds quantise nodes (a QDQ file, as `quantize_detector` writes)."""
    return any(node.op_type == "QuantizeLinear" for node in model.graph.node)


def float_from_qdq(model: Path, out: Path) -> Path:
    """Write the float model inside a QDQ-quantised one to `out`: each stored weight dequantised,
    each activation's quantise-dequantise pair dropped. Only the detector's 8-bit file ships, so
    this is the float model to quantise again (or to run where 8 bits do not pay). A ReLU the
    quantiser folded into an activation's range is not restored; YOLO11's SiLU keeps its nodes."""
    import onnx
    from onnx import numpy_helper

    proto = onnx.load(str(model))
    graph = proto.graph
    stored = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    quantised_by = {n.output[0]: n.input[0] for n in graph.node if n.op_type == "QuantizeLinear"}
    weights, bypass, kept = [], {}, []
    for node in graph.node:
        if node.op_type == "DequantizeLinear" and node.input[0] in stored:
            weights.append(numpy_helper.from_array(_dequantised(node, stored), node.output[0]))
        elif node.op_type == "DequantizeLinear":
            bypass[node.output[0]] = quantised_by[node.input[0]]
        elif node.op_type != "QuantizeLinear":
            kept.append(node)
    for node in kept:
        for k, name in enumerate(node.input):
            source = name
            while source in bypass:  # a pair can follow a pair where scales change
                source = bypass[source]
            node.input[k] = source
    used = {name for node in kept for name in node.input}
    dequantised = {t.name for t in weights}
    initializers = [t for t in graph.initializer if t.name in used and t.name not in dequantised]
    del graph.node[:], graph.initializer[:], graph.value_info[:]
    graph.node.extend(kept)
    graph.initializer.extend(initializers + [t for t in weights if t.name in used])
    onnx.checker.check_model(proto)
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, str(out))
    return out


def _dequantised(node: Any, stored: dict[str, NDArray[Any]]) -> NDArray[np.float32]:
    """A DequantizeLinear of a stored tensor, computed: (x - zero point) * scale, per axis."""
    x = stored[node.input[0]].astype(np.float64)
    scale = stored[node.input[1]].astype(np.float64)
    zero = stored[node.input[2]].astype(np.float64) if len(node.input) > 2 else np.zeros(1)
    if scale.ndim == 1 and x.ndim > 1:
        axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
        shape = [1] * x.ndim
        shape[axis] = -1
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    return ((x - zero) * scale).astype(np.float32)
