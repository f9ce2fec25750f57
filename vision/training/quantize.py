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
    return out


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
