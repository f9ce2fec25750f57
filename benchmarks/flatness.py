"""Measure: flatness readers side by side, on dice fully in view in sharp frames.

    python3 benchmarks/flatness.py --data datasets/flat-test datasets/flat-families \
        [--model models/flatness.onnx runs/flat/flatness/weights/best.onnx]

For each model and data set (rendered with `--cocked-dice`), how often a flat die reads flat
and a cocked one cocked, on the dice's true boxes and on the detector's boxes that match one
(`vision.training.evaluate.flatness`). A flat die read as cocked is a false `dice-not-flat`
alert in the making, a cocked one read as flat a missed re-roll, so both columns matter.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.detector import MODELS, Detector, Reader  # noqa: E402
from vision.training.evaluate import flatness  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, nargs="+", required=True, help="`paigow synth dataset` folders"
    )
    parser.add_argument("--model", type=Path, nargs="+", default=[MODELS / "flatness.onnx"])
    args = parser.parse_args()
    missing = [d for d in args.data if not (d / "annotations.jsonl").is_file()]
    missing += [m for m in args.model if not m.is_file()]
    if missing:
        print(f"error: {missing[0]} is not a data set folder or model file", file=sys.stderr)
        return 2
    detector = Detector()
    print("| model | data | flat read flat: true boxes / detector's | cocked read cocked: "
          "true boxes / detector's |\n|---|---|---:|---:|")  # fmt: skip
    for model in args.model:
        reader = Reader(flatness=model)
        for data in args.data:
            m = flatness(data, detector, reader)
            cells = [
                " / ".join(f"{m[f'{boxes}_{kind}']:.1%} of {m[f'{boxes}_{kind}_n']:.0f}"
                           for boxes in ("truth", "detected"))
                for kind in ("flat", "cocked")
            ]  # fmt: skip
            print(f"| `{model}` | `{data}` | {cells[0]} | {cells[1]} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
