"""The tile reader's last layer taught again on crops it gets wrong, every other weight kept.

The reader's embedding (`vision.training.embedding`) is the input of its last layer, and
enrolment keeps each table's faces as such vectors (`vision.enrol`). Retraining the whole reader
to stop it reading backs across the cloth's printed lines as faces would move every enrolled
vector and every number measured with them; retraining only the last linear map over the same
vectors moves neither. The crops' vectors are computed once by the shipped model, then the map
is fitted on them (cross-entropy, pulled towards the shipped map so that what it read right it
goes on reading right) and written into a copy of the model.

    python3 -m vision.training.reader_head --reader models/reader.onnx \\
        --crops runs/head/face-crops/reader-data runs/head/crops --out runs/head/reader.onnx

Each `--crops` folder holds `train/` and `val/` class folders (`prepare_reader`,
`prepare_round_crops`). The validation split's reading, shipped against taught, is printed
and written beside the model as JSON: faces read right, and crops over no face read as a face
at the follower's bars.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np
import onnx
import onnxruntime as ort
from numpy.typing import NDArray
from onnx import numpy_helper

from vision.crops import as_input
from vision.labels import CLASSES, FACES
from vision.training.embedding import EMBEDDING

PULL = 1e-3
"""Weight of the squared distance from the shipped map, per weight, beside the mean
cross-entropy: the shipped map was trained on ten times the crops here, augmented; the pull
keeps what the new crops do not show (blurred dice, rare faces) where it was."""
STEPS = 200
"""L-BFGS steps over the whole training split: the loss is convex in the map, and it settles
well within this many (the loss printed at the end says whether it did)."""
FACE_BARS = (0.5, 0.8, 0.9)
"""Bars a crop over no face read as a face is counted at: the follower counts a face read at 0.8
(`FaceSettings.min_read`); `benchmarks/false_faces.py` reports these too."""
BATCH = 512


def last_layer(model: onnx.ModelProto) -> tuple[str, str]:
    """The names of the weight and bias of the model's last Gemm, the map from the embedding
    to the class scores."""
    gemm = [node for node in model.graph.node if node.op_type == "Gemm"][-1]
    transposed = any(a.name == "transB" and a.i == 1 for a in gemm.attribute)
    if not transposed:
        raise ValueError("the reader's last Gemm does not take its weight transposed")
    return gemm.input[1], gemm.input[2]


Read = tuple[NDArray[np.float32], NDArray[np.int64], NDArray[np.float32]]
"""Crops' embeddings, classes and class probabilities."""


def read_folder(session: ort.InferenceSession, folder: Path) -> Read:
    """Each crop's embedding, class and shipped class probabilities, for the class folders
    under `folder`; each tile crop a second time turned half round, as the reader reads an
    unsure tile (`Reader.look_at`)."""
    outputs = [session.get_outputs()[0].name, EMBEDDING]
    name = session.get_inputs()[0].name
    vectors, labels, probs = [], [], []
    for index, label in enumerate(CLASSES):
        paths = sorted((folder / label).glob("*.png")) if (folder / label).is_dir() else []
        for start in range(0, len(paths), BATCH):
            crops = [cv2.imread(str(p)) for p in paths[start : start + BATCH]]
            blob = as_input(crops)
            blobs = [blob] if label.startswith("die-") else [blob, blob[:, :, ::-1, ::-1].copy()]
            for one in blobs:
                seen, vector = session.run(outputs, {name: one})
                vectors.append(vector)
                probs.append(seen)
                labels.append(np.full(len(one), index))
    if not vectors:
        raise ValueError(f"{folder} holds no crops in class folders")
    return np.concatenate(vectors), np.concatenate(labels), np.concatenate(probs)


def fit(
    vectors: NDArray[np.float32],
    labels: NDArray[np.int64],
    weight: NDArray[np.float32],
    bias: NDArray[np.float32],
    pull: float = PULL,
) -> tuple[NDArray[np.float32], NDArray[np.float32], float]:
    """The map refitted from the shipped one: mean cross-entropy plus `pull` times its squared
    distance from it. Returns the weight, bias and final loss."""
    import torch

    x, y = torch.from_numpy(vectors), torch.from_numpy(labels)
    w0, b0 = torch.from_numpy(weight.copy()), torch.from_numpy(bias.copy())
    w, b = w0.clone().requires_grad_(True), b0.clone().requires_grad_(True)
    optimiser = torch.optim.LBFGS([w, b], max_iter=STEPS, history_size=20,
                                  line_search_fn="strong_wolfe")  # fmt: skip

    def loss() -> torch.Tensor:
        optimiser.zero_grad()
        value = torch.nn.functional.cross_entropy(x @ w.T + b, y)
        value = value + pull * (((w - w0) ** 2).sum() + ((b - b0) ** 2).sum())
        value.backward()  # type: ignore[no-untyped-call]
        return value

    optimiser.step(loss)  # type: ignore[no-untyped-call]
    return w.detach().numpy(), b.detach().numpy(), float(loss().detach())


def softmax(scores: NDArray[np.float32]) -> NDArray[np.float32]:
    scores = scores - scores.max(1, keepdims=True)
    exp = np.exp(scores)
    return exp / exp.sum(1, keepdims=True)  # type: ignore[no-any-return]


def judge(probs: NDArray[np.float32], labels: NDArray[np.int64]) -> dict[str, float | int]:
    """Faces read right (over the tile classes only, as a tile box is read), and crops over no
    face read as a face at each of `FACE_BARS`, as `Reader.read` labels a tile box."""
    tiles = np.array([CLASSES.index(f) for f in (*FACES, "back")])
    back = CLASSES.index("back")
    best = probs[:, tiles].argmax(1)
    read, sure = tiles[best], probs[:, tiles].max(1)
    faces = np.isin(labels, tiles) & (labels != back)
    backs = labels == back
    result: dict[str, float | int] = {
        "faces": int(faces.sum()),
        "faces_right": int((read[faces] == labels[faces]).sum()),
        "backs": int(backs.sum()),
    }
    for bar in FACE_BARS:
        result[f"backs_read_face_{bar}"] = int(((read != back) & (sure >= bar))[backs].sum())
    return result


def teach(
    reader: Path, crops: list[Path], out: Path, pull: float = PULL
) -> dict[str, dict[str, float | int]]:
    """Fit the reader's last layer on the crops' training splits, write the model to `out` and
    return the validation reading of the shipped and the taught model, per crops folder."""
    session = ort.InferenceSession(str(reader), providers=["CPUExecutionProvider"])
    if EMBEDDING not in [o.name for o in session.get_outputs()]:
        raise ValueError(f"{reader} has no embedding output: python3 -m vision.training.embedding")
    model = onnx.load(str(reader))
    weight_name, bias_name = last_layer(model)
    found = {i.name: i for i in model.graph.initializer}
    weight = numpy_helper.to_array(found[weight_name]).astype(np.float32)
    bias = numpy_helper.to_array(found[bias_name]).astype(np.float32)
    train = [read_folder(session, folder / "train") for folder in crops]
    vectors = np.concatenate([t[0] for t in train])
    labels = np.concatenate([t[1] for t in train])
    print(f"fitting the last layer on {len(vectors)} crops", file=sys.stderr)
    new_weight, new_bias, final = fit(vectors, labels, weight, bias, pull)
    found[weight_name].CopyFrom(numpy_helper.from_array(new_weight, weight_name))
    found[bias_name].CopyFrom(numpy_helper.from_array(new_bias, bias_name))
    onnx.save(model, str(out))
    report: dict[str, dict[str, float | int]] = {"fit": {"crops": len(vectors), "loss": final}}
    for folder in crops:
        vectors, labels, shipped = read_folder(session, folder / "val")
        report[f"{folder} shipped"] = judge(shipped, labels)
        report[f"{folder} taught"] = judge(softmax(vectors @ new_weight.T + new_bias), labels)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", type=Path, required=True, help="the shipped reader (.onnx)")
    parser.add_argument("--crops", type=Path, nargs="+", required=True,
                        help="folders of train/ and val/ class folders")  # fmt: skip
    parser.add_argument("--out", type=Path, required=True, help="the taught reader (.onnx)")
    parser.add_argument(
        "--pull", type=float, default=PULL, help=f"distance from the shipped map's weight ({PULL})"
    )
    args = parser.parse_args()
    missing = [p for p in (args.reader, *args.crops) if not p.exists()]
    if missing:
        print(f"error: {missing[0]} does not exist", file=sys.stderr)
        return 2
    try:
        report = teach(args.reader, args.crops, args.out, args.pull)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
