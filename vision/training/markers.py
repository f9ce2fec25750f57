"""The round's markers (the chung by its face, the +4 and -4 buttons) taught to a detector that
was trained before them, as a small branch of its head.

At each of its three strides the detector's neck hands the head a feature map; the head's class
branch ends in a float 1x1 convolution to one score per class (the 8-bit export keeps it in
float: `quantize.float_head`). The markers get a branch of their own beside it: from the same
neck features, a float 1x1 convolution to `HIDDEN` features, SiLU, and a 1x1 convolution to one
score per marker, joined to the class scores. Every tile, back and die score, every box and
every 8-bit weight stays exactly as shipped, and it trains on this CPU in minutes: a GPU run
that went on training the whole detector with the markers lost dice it had found, and a linear
probe on the class branch's own last features could not see the plaques (they are trained to
ignore them) (models/MODEL_CARD.md).

`python3 -m vision.training.markers --data DATA [DATA ...] --out FILE`: neck features of every
training frame of the data sets (rendered with markers: `paigow synth dataset`), one branch per
stride fitted on its train split, written into a copy of the detector.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detector import DETECTOR_INPUT, MODELS, letterbox
from vision.labels import MARKERS
from vision.progress import each

STRIDES = (8, 16, 32)
"""The detector's three output strides, in the order of its class convolutions cv3.0-cv3.2."""
CENTRE = 0.6
"""An anchor is a marker's example where its centre lies in the middle `CENTRE` of the marker's
box (each side scaled about the box's centre): near the edge the features see the cloth as much
as the plaque, and the detector's own training (task-aligned assignment) also takes the anchors
nearest a box's centre."""
BACKGROUND_PER_FRAME = 400
"""Anchors on no object drawn per frame and stride as negatives (a frame has some 10,700);
every anchor on a tile, back or die is kept: those are the ones a marker must not claim."""
HIDDEN = 32
"""The branch's hidden features: a 1x1 convolution from the neck's 64-256 to these costs under
0.1% of the detector's operations."""
STEPS, RATE, DECAY = 800, 0.01, 1e-4
"""The branch's full-batch training: `STEPS` Adam steps at `RATE`, L2 `DECAY`."""
POSITIVE_WEIGHT = 30.0
"""How much more a marker's anchor counts than one on anything else: they are some 0.4% of the
anchors kept, and with equal weight the branch learnt to score every anchor low (a marker's
own anchors at a median 0.02 on its training frames); at 30 they score 0.97 on 169 anchors of
the data's validation frames, with 0.2% of the others above 0.5."""


@dataclass(frozen=True)
class ClassHead:
    """Where the detector's class scores are made: at each stride the neck's features (the
    head's input), the class convolution's output, and the constant that reshapes it."""

    features: tuple[str, ...]
    scores: tuple[str, ...]
    count: str


def class_head(graph) -> ClassHead:  # type: ignore[no-untyped-def]
    """The head of an ultralytics OBB export, found by its initialisers' names."""
    scores: dict[int, str] = {}
    features: dict[int, str] = {}
    for node in graph.node:
        if node.op_type != "Conv":
            continue
        for i in range(len(STRIDES)):
            if node.input[1] == f"model.23.cv3.{i}.2.weight":
                scores[i] = node.output[0]
            if node.input[1].startswith(f"model.23.cv2.{i}.0.conv.weight"):
                features[i] = node.input[0]
    if len(scores) != len(STRIDES) or len(features) != len(STRIDES):
        raise ValueError("not a YOLO11 OBB export: its head is not model.23.cv2/cv3")
    shapes = {n.input[1] for n in graph.node
              if n.op_type == "Reshape" and n.input[0] in scores.values()}  # fmt: skip
    (shape,) = shapes
    concat = next(n for n in graph.node if n.output[0] == shape)
    count = concat.input[1]  # the shape is (batch, classes, -1)
    if count not in {i.name for i in graph.initializer}:
        raise ValueError("not a YOLO11 OBB export: its class count is not a constant")
    order = range(len(STRIDES))
    return ClassHead(tuple(features[i] for i in order), tuple(scores[i] for i in order), count)


def feature_session(model: Path, folder: Path):  # type: ignore[no-untyped-def]
    """An onnxruntime session of `model` that returns each stride's neck features."""
    import onnx
    import onnxruntime as ort

    exported = onnx.load(str(model))
    head = class_head(exported.graph)
    del exported.graph.output[:]
    exported.graph.output.extend(onnx.ValueInfoProto(name=name) for name in head.features)
    path = folder / "features.onnx"
    onnx.save(exported, str(path))
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]), head


def anchor_targets(
    objects: list[dict],
    scale: float,
    left: int,
    top: int,
    shape: tuple[int, int],
    stride: int,  # type: ignore[type-arg]
) -> tuple[NDArray[np.int64], NDArray[np.bool_], NDArray[np.bool_]]:
    """Per anchor of one stride's grid (row-major): the marker it is an example of (index into
    `MARKERS`, -1 none); whether it lies on some object (the negatives worth keeping every one
    of: a tile, back or die must not be taken for a marker); and whether it lies on a marker's
    rim, outside its middle, which is neither an example nor fairly a negative."""
    rows, cols = shape
    ys, xs = np.mgrid[0:rows, 0:cols]
    centres = np.stack([(xs.ravel() + 0.5) * stride, (ys.ravel() + 0.5) * stride], 1)
    target = np.full(len(centres), -1, np.int64)
    on_object = np.zeros(len(centres), bool)
    rim = np.zeros(len(centres), bool)
    for obj in objects:
        if not obj["labelled"]:
            continue
        corners = np.asarray(obj["corners"], np.float64) * scale + [left, top]
        inside = _inside(centres, corners)
        on_object |= inside
        if obj["label"] in MARKERS:
            middle = corners.mean(0)
            core = _inside(centres, middle + (corners - middle) * CENTRE)
            target[core] = MARKERS.index(obj["label"])
            rim |= inside & ~core
    return target, on_object, rim & (target < 0)


def _inside(points: NDArray[np.float64], polygon: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Which points lie inside a convex quadrilateral (either winding)."""
    edges = np.roll(polygon, -1, 0) - polygon
    cross = edges[:, 0][None] * (points[:, None, 1] - polygon[None, :, 1]) - edges[:, 1][None] * (
        points[:, None, 0] - polygon[None, :, 0]
    )
    return (cross >= 0).all(1) | (cross <= 0).all(1)  # type: ignore[no-any-return]


def examples(model: Path, data: Path, split: str, seed: int = 0) -> list[tuple[NDArray, NDArray]]:  # type: ignore[type-arg]
    """Per stride, the features (N x 64) and targets (N, -1 none) of the split's frames."""
    rng = np.random.default_rng(seed)
    entries = [json.loads(x) for x in (data / "annotations.jsonl").read_text().splitlines()]
    entries = [e for e in entries if e["split"] == split]
    gathered: list[list[tuple[NDArray, NDArray]]] = [[] for _ in STRIDES]  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as folder:
        session, head = feature_session(model, Path(folder))
        name = session.get_inputs()[0].name
        for entry in each(entries, len(entries), f"features ({split})", "frame"):
            image = cv2.imread(str(data / entry["image"]))
            blob, scale, left, top = letterbox(image, *DETECTOR_INPUT)
            features = session.run(list(head.features), {name: blob})
            for level, (stride, grid) in enumerate(zip(STRIDES, features, strict=True)):
                rows, cols = grid.shape[2:]
                flat = grid[0].reshape(grid.shape[1], -1).T
                target, on_object, rim = anchor_targets(entry["objects"], scale, left, top,
                                                        (rows, cols), stride)  # fmt: skip
                background = np.flatnonzero(~on_object)
                drawn = rng.choice(background, min(BACKGROUND_PER_FRAME, len(background)),
                                   replace=False)  # fmt: skip
                keep = np.concatenate([np.flatnonzero(on_object & ~rim), drawn])
                gathered[level].append((flat[keep], target[keep]))
    return [(np.concatenate([f for f, _ in level]), np.concatenate([t for _, t in level]))
            for level in gathered]  # fmt: skip


Branch = list  # per stride: [hidden weights, hidden biases, score weights, score biases]


def fit(features: NDArray[np.float32], targets: NDArray[np.int64]) -> Branch:  # type: ignore[type-arg]
    """One stride's branch, a sigmoid per marker as the detector scores its classes: hidden
    weights (`HIDDEN` x C) and biases, score weights (markers x `HIDDEN`) and biases."""
    import torch

    torch.manual_seed(0)
    x = torch.from_numpy(features.astype(np.float32))
    mean, spread = x.mean(0), x.std(0) + 1e-3  # standardised, folded into the weights below
    x = (x - mean) / spread
    y = torch.zeros(len(targets), len(MARKERS))
    hit = targets >= 0
    y[torch.from_numpy(np.flatnonzero(hit)), torch.from_numpy(targets[hit])] = 1.0
    hidden, score = torch.nn.Linear(x.shape[1], HIDDEN), torch.nn.Linear(HIDDEN, len(MARKERS))
    torch.nn.init.constant_(score.bias, -4.0)  # rare, as a class of the detector starts
    net = torch.nn.Sequential(hidden, torch.nn.SiLU(), score)
    optimiser = torch.optim.Adam(net.parameters(), lr=RATE, weight_decay=DECAY)
    loss = torch.nn.BCEWithLogitsLoss(pos_weight=torch.full((len(MARKERS),), POSITIVE_WEIGHT))
    for _ in range(STEPS):
        optimiser.zero_grad()
        value = loss(net(x), y)
        value.backward()
        optimiser.step()
    with torch.no_grad():
        weights = hidden.weight / spread
        biases = hidden.bias - weights @ mean
    return [t.detach().numpy().astype(np.float32)
            for t in (weights, biases, score.weight, score.bias)]  # fmt: skip


def with_markers(model: Path, branches: list[Branch], out: Path) -> Path:
    """A copy of `model` that also scores the markers (`branches`, one per stride): every other
    weight, and so every other output, as it was."""
    import onnx
    from onnx import helper, numpy_helper

    exported = onnx.load(str(model))
    graph = exported.graph
    names = class_names({p.key: p.value for p in exported.metadata_props}["names"])
    if set(names) & set(MARKERS):
        raise ValueError(f"{model} scores {names}: no markers can be added to it")
    head = class_head(graph)
    stored = {i.name: i for i in graph.initializer}
    count = numpy_helper.to_array(stored[head.count])
    if len(names) != int(count.ravel()[0]):
        raise ValueError(f"{model} names {len(names)} classes and scores {count}")
    for stride, branch, features, scores in zip(STRIDES, branches, head.features, head.scores,
                                                strict=True):  # fmt: skip
        w1, b1, w2, b2 = branch
        tag = f"/markers/s{stride}"
        graph.initializer.extend([
            numpy_helper.from_array(w1.reshape(*w1.shape, 1, 1), f"{tag}/hidden.weight"),
            numpy_helper.from_array(b1, f"{tag}/hidden.bias"),
            numpy_helper.from_array(w2.reshape(*w2.shape, 1, 1), f"{tag}/score.weight"),
            numpy_helper.from_array(b2, f"{tag}/score.bias"),
        ])  # fmt: skip
        joined = f"{tag}/joined"
        for node in graph.node:  # the class scores' reader now reads them joined
            if node.op_type == "Reshape" and node.input[0] == scores:
                node.input[0] = joined
        graph.node.extend([
            helper.make_node("Conv", [features, f"{tag}/hidden.weight", f"{tag}/hidden.bias"],
                             [f"{tag}/hidden"], name=f"{tag}/hidden"),
            helper.make_node("Sigmoid", [f"{tag}/hidden"], [f"{tag}/gate"], name=f"{tag}/gate"),
            helper.make_node("Mul", [f"{tag}/hidden", f"{tag}/gate"], [f"{tag}/silu"],
                             name=f"{tag}/silu"),
            helper.make_node("Conv", [f"{tag}/silu", f"{tag}/score.weight", f"{tag}/score.bias"],
                             [f"{tag}/score"], name=f"{tag}/score"),
            helper.make_node("Concat", [scores, f"{tag}/score"], [joined], name=joined, axis=1),
        ])  # fmt: skip
    total = len(names) + len(MARKERS)
    stored[head.count].CopyFrom(numpy_helper.from_array(np.full_like(count, total), head.count))
    for prop in exported.metadata_props:
        if prop.key == "names":
            prop.value = str(dict(enumerate([*names, *MARKERS])))
    kept = [v for v in graph.value_info if not v.name.startswith("/model.23/")]
    del graph.value_info[:]  # the head's shapes change: onnxruntime infers them again
    graph.value_info.extend(kept)
    for output in graph.output:  # the output's class rows grow by the markers
        dims = output.type.tensor_type.shape.dim
        if len(dims) == 3 and dims[1].HasField("dim_value"):
            dims[1].dim_value += len(MARKERS)
    sorted_graph = _topologically_sorted(graph)
    del graph.node[:]
    graph.node.extend(sorted_graph)
    onnx.checker.check_model(exported)
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(exported, str(out))
    return out


def _topologically_sorted(graph):  # type: ignore[no-untyped-def]
    """The graph's nodes in an order where each comes after what it reads (ONNX requires it;
    the branch's nodes were appended at the end)."""
    ready = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {""}
    waiting, done = list(graph.node), []
    while waiting:
        left = []
        for node in waiting:
            if all(name in ready for name in node.input):
                done.append(node)
                ready.update(node.output)
            else:
                left.append(node)
        if len(left) == len(waiting):
            raise ValueError("the graph has a cycle or reads a tensor nothing makes")
        waiting = left
    return done


def class_names(text: str) -> list[str]:
    """The class names of an export's metadata, in class order."""
    from vision.detector import names_of

    return [name for _, name in sorted(names_of(text).items())]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, nargs="+", required=True)
    parser.add_argument("--model", type=Path, default=MODELS / "detector.onnx")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    for data in args.data:
        if not (data / "annotations.jsonl").is_file():
            print(f"error: {data} is no data set (no annotations.jsonl)", file=sys.stderr)
            return 2
    per_set = [examples(args.model, data, "train") for data in args.data]
    branches = []
    for level, stride in enumerate(STRIDES):
        features = np.concatenate([s[level][0] for s in per_set])
        targets = np.concatenate([s[level][1] for s in per_set])
        print(f"stride {stride}: {len(targets)} anchors, "
              f"{int((targets >= 0).sum())} on markers", flush=True)  # fmt: skip
        branches.append(fit(features, targets))
    print(f"detector with markers: {with_markers(args.model, branches, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
