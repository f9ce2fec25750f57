"""Measure: the reader's input cut at the cloth's scale against the box's own (issue 37, item 5).

    python3 benchmarks/reader_scale.py --train DATA --tests DATA [DATA ...] --out runs/reader-scale
        [--hours 0.3] [--epochs 6]

The box crop (`vision.crops.cut`) stretches each box to the reader's input, so a box a few
percent long or short shows the tile a few percent smaller or larger. The scale crops
(`vision.crops.cut_to_scale`) take only the box's centre and turn and cut a patch of cloth
through the table's homography: a fixed patch (`TILE_VIEW_MM`), or one the size of the image's
own tiles grown by the box crop's margin (`set_view`, as a box that has measured its set
would). A reader per kind goes on from the shipped one for the same time on the same images of
`--train` (`paigow synth dataset ... --families all`, rendered with their homographies), with
the boxes moved as the detector's are, the same moves for every kind. Each then reads its own
kind of crop of every look of each `--tests` set, cut around the same moved boxes, beside the
shipped reader on box crops; with `--detector-boxes`, also around the boxes the shipped detector
and refiners give there. Every reader starts from one trained on box crops only, which favours
the box crop. Writes `report.md` and `measured.json` under `--out`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.detector import MODELS  # noqa: E402
from vision.training.families import MEASURED_PER_CLASS, crop_accuracy  # noqa: E402

KINDS = {"box": None, "scale": "fixed", "set": "set"}
"""Each crop kind and how it is cut at the cloth's scale (`prepare_reader`'s `to_scale`)."""
KEPT = ("faces", "back", "dice")


def _log(started: float, line: str) -> None:
    print(f"[{time.monotonic() - started:6.0f} s] {line}", flush=True)


def train_readers(
    train: Path, out: Path, hours: float, epochs: int, started: float
) -> dict[str, Path]:
    """A reader per crop kind, each going on from the shipped reader for `hours`."""
    from vision.training.train import checkpoint_from_shipped, prepare_reader, train_reader

    readers = {}
    for kind, to_scale in KINDS.items():
        model = out / kind / "reader.onnx"
        if model.exists():
            _log(started, f"{kind}: reader already trained, {model}")
            readers[kind] = model
            continue
        crops = prepare_reader([train], out / kind, workers=2, to_scale=to_scale)
        _log(started, f"{kind}: crops cut under {crops}")
        start = checkpoint_from_shipped(
            MODELS / "reader.onnx", crops / "train", out / kind / "start.pt"
        )
        trained = train_reader(crops, out / kind, epochs=epochs, weights=start, hours=hours)
        model.write_bytes(trained.read_bytes())
        _log(started, f"{kind}: reader trained, {model}")
        readers[kind] = model
    return readers


def read_by_kind(readers: dict[str, Path], kind: str, crops: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    """The reader of crops of `kind` on `crops` (and the shipped reader, on box crops), by kind
    of object."""
    contenders = {kind: readers[kind]} | ({"shipped": MODELS / "reader.onnx"}
                                          if kind == "box" else {})  # fmt: skip
    read = {}
    for name, model in contenders.items():
        kinds = crop_accuracy(model, crops)["by_kind"]
        read[name] = {k: v for k, v in kinds.items() if k in KEPT}  # type: ignore[union-attr]
    return read


def measure(readers: dict[str, Path], tests: list[Path], out: Path, started: float) -> dict:  # type: ignore[type-arg]
    """Every reader on its own kind of crop of each look of each test set (the shipped reader
    on box crops), by kind of object."""
    from vision.training.train import prepare_reader

    measured: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for test in tests:
        card = json.loads((test / "card.json").read_text())
        for family in card["families"]:
            row = measured.setdefault(test.name, {}).setdefault(family, {})
            for kind, to_scale in KINDS.items():
                crops = prepare_reader([test], out / "held" / test.name / family / kind,
                                       per_class=MEASURED_PER_CLASS, to_scale=to_scale,
                                       keep=lambda f, look=family: f == look)  # fmt: skip
                row |= read_by_kind(readers, kind, crops)
            _log(
                started,
                f"{test.name} {family}: "
                + ", ".join(
                    f"{name} faces {v['faces']['accuracy']:.1%}" for name, v in row.items()
                ),
            )
    return measured


def detector_crops(tests: list[Path], out: Path, started: float) -> dict[str, dict[str, Path]]:
    """Every kind of crop around the boxes the shipped detector and refiners give on each look
    of each test set, in the folder of the object each box lies on (`under`): the boxes the
    reader is given at run time, not a model of them. Each test set and look's folders, by kind."""
    from types import SimpleNamespace

    import cv2
    import numpy as np

    from vision.crops import cut, cut_to_scale, set_view
    from vision.detector import Detector
    from vision.training.train import CLASS_ID, _own_sizes, under

    detector = Detector()
    folders: dict[str, dict[str, Path]] = {}
    for test in tests:
        counts: dict[str, dict[str, int]] = {}
        for line in (test / "annotations.jsonl").read_text().splitlines():
            entry = json.loads(line)
            family = entry.get("family", "house")
            seen = counts.setdefault(family, {})
            root = out / "found" / test.name / family
            folders[f"{test.name}/{family}"] = {kind: root / kind for kind in KINDS}
            image = cv2.imread(str(test / entry["image"]))
            homography = np.asarray(entry["homography"])
            sizes = _own_sizes(entry, homography)
            truth = [SimpleNamespace(label=o["label"], visible=o["visible"],
                                     corners=np.asarray(o["corners"], np.float64))
                     for o in entry["objects"] if o["label"] in CLASS_ID]  # fmt: skip
            found = detector.detect(image)
            for index, (corners, kind) in enumerate(zip(found.corners, found.labels, strict=True)):
                lies = under(corners, truth)
                die = kind == "die"
                if lies is None or lies.label.startswith("die-") != die:
                    continue
                if seen.get(lies.label, 0) >= MEASURED_PER_CLASS:
                    continue
                seen[lies.label] = seen.get(lies.label, 0) + 1
                name = f"{Path(entry['image']).stem}_{index}.png"
                crops = {"box": cut(image, corners, die),
                         "scale": cut_to_scale(image, corners, die, homography),
                         "set": cut_to_scale(image, corners, die, homography,
                                             set_view(sizes[die], die))}  # fmt: skip
                for kind_name, crop in crops.items():
                    folder = root / kind_name / lies.label
                    folder.mkdir(parents=True, exist_ok=True)
                    cv2.imwrite(str(folder / name), crop)
        _log(started, f"{test.name}: crops cut around the detector's boxes")
    return folders


def measure_found(readers: dict[str, Path], folders: dict[str, dict[str, Path]]) -> dict:  # type: ignore[type-arg]
    """Every reader on its own kind of crop around the detector's boxes (the shipped reader on
    box crops)."""
    measured: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for where, kinds in folders.items():
        test, family = where.split("/")
        row = measured.setdefault(f"{test}, detector's boxes", {}).setdefault(family, {})
        for kind, crops in kinds.items():
            row |= read_by_kind(readers, kind, crops)
    return measured


def report(measured: dict, command: str) -> str:  # type: ignore[type-arg]
    lines = [f"`{command}`", "", "faces / backs / dice read right, each on its own crops:", ""]
    lines += [
        "| test set | look | shipped (box crops) | box crops | fixed patch | the set's size |",
        "|---|---|---|---|---|---|",
    ]
    for test, families in measured.items():
        totals: dict[str, dict[str, list[int]]] = {}
        for family, row in families.items():
            cells = []
            for name in ("shipped", "box", "scale", "set"):
                kinds = row[name]
                cells.append(" / ".join(f"{kinds[k]['accuracy']:.1%}" if k in kinds else "-"
                                        for k in KEPT))  # fmt: skip
                for k in KEPT:
                    if k in kinds:
                        pair = totals.setdefault(name, {}).setdefault(k, [0, 0])
                        pair[0] += kinds[k]["right"]
                        pair[1] += kinds[k]["total"]
            lines.append(f"| {test} | {family} | " + " | ".join(cells) + " |")
        cells = [" / ".join(f"{totals[name][k][0] / totals[name][k][1]:.1%} of {totals[name][k][1]}"
                            for k in KEPT if k in totals[name])
                 for name in ("shipped", "box", "scale", "set")]  # fmt: skip
        lines.append(f"| {test} | **all** | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, required=True)
    parser.add_argument("--tests", type=Path, nargs="+", required=True)
    parser.add_argument("--out", type=Path, default=Path("runs/reader-scale"))
    parser.add_argument("--hours", type=float, default=0.3, help="training time per reader")
    parser.add_argument("--epochs", type=int, default=6, help="the most epochs per reader")
    parser.add_argument(
        "--detector-boxes",
        action="store_true",
        help="also read crops around the shipped detector's refined boxes",
    )
    args = parser.parse_args()
    for data in (args.train, *args.tests):
        if not (data / "annotations.jsonl").is_file():
            print(f"reader_scale: {data} is not a `paigow synth dataset` folder", file=sys.stderr)
            return 2
    started = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    readers = train_readers(args.train, args.out, args.hours, args.epochs, started)
    measured = measure(readers, args.tests, args.out, started)
    if args.detector_boxes:
        measured |= measure_found(readers, detector_crops(args.tests, args.out, started))
    (args.out / "measured.json").write_text(json.dumps(measured, indent=2) + "\n")
    command = "python3 benchmarks/reader_scale.py " + " ".join(sys.argv[1:])
    (args.out / "report.md").write_text(report(measured, command))
    print(report(measured, command))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
