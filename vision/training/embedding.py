"""The reader's embedding: the pooled features its classifier reads, given as a second output.

Enrolment (`vision.enrol`) keeps each face of a table's own set as such a vector and reads a
tile in play by the nearest of them; the classifier's last layer is one linear map of the same
vector, so nothing is retrained and the class output is unchanged.

`python3 -m vision.training.embedding MODEL [OUT]` adds the output to an exported YOLO-cls
reader (in place without OUT); a model that has it already is left as it is.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import onnx

EMBEDDING = "embedding"
"""The added output's name, as `vision.detector.Reader` looks for it."""


def add_embedding(model: Path, out: Path) -> bool:
    """Write `model` with the input of its last Gemm (the pooled features) as the output
    `embedding`. False when it already had one."""
    graph = onnx.load(str(model))
    if any(o.name == EMBEDDING for o in graph.graph.output):
        if out != model:
            onnx.save(graph, str(out))
        return False
    gemm = [node for node in graph.graph.node if node.op_type == "Gemm"]
    if not gemm:
        raise ValueError(f"{model} has no Gemm layer: not a classifier reader")
    features = gemm[-1].input[0]
    width = next(init.dims[1] for init in graph.graph.initializer if init.name == gemm[-1].input[1])
    graph.graph.node.append(onnx.helper.make_node("Identity", [features], [EMBEDDING]))
    graph.graph.output.append(
        onnx.helper.make_tensor_value_info(EMBEDDING, onnx.TensorProto.FLOAT, ["batch", width])
    )
    onnx.checker.check_model(graph)
    onnx.save(graph, str(out))
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("out", type=Path, nargs="?")
    args = parser.parse_args()
    if not args.model.is_file():
        sys.exit(f"no model file {args.model}")
    added = add_embedding(args.model, args.out or args.model)
    print(f"{args.out or args.model}: embedding {'added' if added else 'already there'}")


if __name__ == "__main__":
    main()
