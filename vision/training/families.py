"""Training on every appearance family, and the number that predicts a new casino: each
family's tiles and dice read by a reader trained without that family.

`python3 -m vision.training.families --out runs/gpu --results OUT --seconds 500` is what
`scripts/train-gpu` runs on a GPU machine: it renders a family data set with every core,
goes on training the shipped detector and reader on it (plus real dice photographs, when
`--real-dice` names their crops, and crops mined from simulated rounds), trains a reader of dice
alone from scratch, then trains one reader per family without it and reads that family's crops
with it. Each result is written
to `--results` the moment it exists, so a run cut short keeps what it finished.

`python3 -m vision.training.families --measure MODEL --crops FOLDER` reads a folder of class
crops (as `scripts/fetch_real_dice.py` writes them) with a reader and prints its accuracy.

`python3 -m vision.training.families --judge DETECTOR... --house FRAMES [--looks FRAMES]
[--photos SPLIT]` measures detector candidates (a GPU run's kept epochs) on validation sets.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from itertools import zip_longest
from pathlib import Path

import cv2
import numpy as np
import onnxruntime as ort
from numpy.typing import NDArray

from vision.crops import as_input
from vision.detector import MODELS, Reader, names_of
from vision.synth.appearance import FAMILIES

SEED = 31_000
"""The family data set's seed: apart from every other data set's (`docs/accuracy.md`)."""
REAL_PER_CLASS = {"train": 1000, "val": 150}
"""Real die crops added to the reader's folders per value: as many as a face's synthetic
crops, so real photographs teach without crowding out the renderer's dice."""
HELD_PER_CLASS = 200
"""A left-out family's crops measured per class (train and val images alike: none trained)."""


def crop_accuracy(model: Path | Reader, root: Path) -> dict[str, object]:
    """Every crop under `root` read (`crop_readings`): right and total by kind (faces, back,
    dice) and by class, with the commonest misreads."""
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    wrong: Counter[str] = Counter()
    for _, truth, read in crop_readings(model, root):
        total[truth] += 1
        right[truth] += read == truth
        if read != truth:
            wrong[f"{truth}->{read}"] += 1

    def kind(label: str) -> str:
        return "dice" if label.startswith("die-") else "back" if label == "back" else "faces"

    by_kind: dict[str, list[int]] = {}
    for label, count in total.items():
        seen = by_kind.setdefault(kind(label), [0, 0])
        seen[0] += right[label]
        seen[1] += count
    return {
        "by_kind": {
            k: {"right": r, "total": t, "accuracy": r / t} for k, (r, t) in by_kind.items()
        },
        "by_class": {k: [right[k], total[k]] for k in sorted(total)},
        "misreads": dict(wrong.most_common(8)),
    }


def crop_readings(model: Path | Reader, root: Path) -> list[tuple[Path, str, str]]:
    """Read every crop under `root` (any depth, class folder = label) with the reader at
    `model` (or as the box reads them: a `Reader`, its dice by the reader of dice alone),
    choosing among die values for die crops and among tile classes for the rest, as
    `vision.detector.Reader` does; a kind the model has no class for is left out (a reader of
    dice alone). Each crop's path, its label and what was read."""
    if isinstance(model, Reader):
        names = model.names

        def probabilities(crops: list[NDArray[np.uint8]], dice: list[bool]) -> NDArray:  # type: ignore[type-arg]
            return model.look_at(crops, embed=False, dice=dice)[0]
    else:
        session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        names = names_of(session.get_modelmeta().custom_metadata_map["names"])

        def probabilities(crops: list[NDArray[np.uint8]], dice: list[bool]) -> NDArray:  # type: ignore[type-arg]
            blob = as_input(crops)
            return session.run(None, {session.get_inputs()[0].name: blob})[0]

    dice = np.array([i for i, n in names.items() if n.startswith("die-")])
    tiles = np.array([i for i, n in names.items() if not n.startswith("die-")])
    paths = sorted(p for p in root.rglob("*") if p.suffix in (".png", ".jpg"))
    readings = []
    for start in range(0, len(paths), 256):
        batch = paths[start : start + 256]
        crops = [cv2.imread(str(p)) for p in batch]
        probs = probabilities(crops, [p.parent.name.startswith("die-") for p in batch])
        for path, row in zip(batch, probs, strict=True):
            truth = path.parent.name
            allowed = dice if truth.startswith("die-") else tiles
            if len(allowed):  # a reader of dice alone reads no tile
                readings.append((path, truth, names[int(allowed[int(np.argmax(row[allowed]))])]))
    return readings


class Budget:
    """Seconds left of the run, and a log line with the time for every step."""

    def __init__(self, seconds: float, results: Path) -> None:
        self.start, self.seconds, self.results = time.monotonic(), seconds, results
        results.mkdir(parents=True, exist_ok=True)

    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.start)

    def log(self, line: str) -> None:
        stamped = f"[{time.monotonic() - self.start:6.0f} s] {line}"
        print(stamped, flush=True)
        with (self.results / "run.log").open("a") as log:
            log.write(stamped + "\n")

    def save(self, name: str, value: object) -> None:
        (self.results / name).write_text(json.dumps(value, indent=2) + "\n")


LOFO_MARGIN, LOFO_MOST = 75.0, 300.0
"""Seconds a left-out reader leaves of the run (for its export and reading its held crops; the
full reader must be done before its figures are kept), and the most it trains: on a GPU the
five train beside the detector and the full reader."""
FULL_READER_MARGIN = 60.0
"""Seconds the full reader leaves of the run, for its export."""
FIRST_STAGE = 0.55
"""The full reader's share of its training time (its hours less the minings) before it is
hardened."""
HARDENING_ROUNDS, MINING_SHARE = 24, 0.4
"""The most rounds mined with the full reader itself for the boxes over no face it reads as
faces, and the share of the full reader's time that mining (these and the first `rounds`) may
take: fewer rounds where the run is short, so that the reader still trains. The reader the first
H100 run trained read 26 faces over backs at the follower's 0.8 bar where the shipped one read 1
(`benchmarks/false_faces.py`); 6 more epochs on this CPU with 68 such rounds brought it to 1
(`models/MODEL_CARD.md`). A 495-s run leaves the full reader some 330 s: 8 rounds and 8 more."""
MINING_SECONDS_PER_ROUND, MINING_WORKERS = 8.0, 6
"""Wall seconds mining one round's crops takes the full reader, and its processes (the
detector's loaders and the left-out readers want the rest of the cores): measured on the H100
machine with all 16 cores shared, 8 rounds in 65 s and 24 in 160 s. The full reader's training
time is what is left of its share after both minings."""
DETECTOR_MARGIN = 75.0
"""Seconds the detector leaves of the run: the last validation and the ONNX export."""
READER_SHARE_ONE_AT_A_TIME = 0.4
"""Of the time left after rendering and cutting crops, the full reader's share when the
readers train one after another (a CPU): it goes on from the shipped one, each left-out
reader from the same start, and five of them share the rest."""


def run(out: Path, results: Path, seconds: float, images: int, real: Path | None,
        rounds: int, device: str, detector: bool = True, one_at_a_time: bool = False,
        real_table: Path | None = None) -> int:  # fmt: skip
    """Everything `scripts/train-gpu` does; the full reader and the leave-one-family-out readers
    train in processes of their own beside the detector, on the same GPU. `one_at_a_time`
    (a CPU, no detector): the full reader first, then each left-out reader in turn."""
    from vision.synth.dataset import write_dataset
    from vision.training.train import (
        checkpoint_from_shipped,
        prepare_detector,
        train_detector,
    )

    budget = Budget(seconds, results)
    workers = os.cpu_count() or 2
    data = out / "families"
    card = write_dataset(data, images, SEED, families=("house", *FAMILIES), workers=workers,
                         progress=False)  # fmt: skip
    budget.log(f"rendered {images} images: {card['families']}")
    crops = reader_data(data, out / "reader", None, real, workers)
    reader_start = checkpoint_from_shipped(
        MODELS / "reader.onnx", crops / "train", out / "reader.pt"
    )
    budget.log("reader crops cut")
    if one_at_a_time:
        return _one_at_a_time(budget, data, crops, out, results, reader_start, rounds, real,
                              device, workers)  # fmt: skip
    lofo_hours = max(min(budget.left() - LOFO_MARGIN, LOFO_MOST), 30) / 3600
    left_out = {
        family: subprocess.Popen(
            [sys.executable, "-m", "vision.training.families", "--leave-out", family,
             "--data", str(data), "--out", str(out / f"without-{family}"), "--start",
             str(reader_start), "--hours", str(lofo_hours), "--device", device,
             *(["--real-dice", str(real)] if real else [])],
            stdout=(out / f"without-{family}.log").open("w"), stderr=subprocess.STDOUT)
        for family in FAMILIES
    }  # fmt: skip
    reader_hours = max(budget.left() - FULL_READER_MARGIN, 40) / 3600
    dice = subprocess.Popen(
        [sys.executable, "-m", "vision.training.families", "--dice-reader", str(data),
         "--out", str(out / "dice"), "--results", str(results), "--hours", str(reader_hours),
         "--device", device, *(["--real-dice", str(real)] if real else [])],
        stdout=(out / "dice.log").open("w"), stderr=subprocess.STDOUT)  # fmt: skip
    full_reader = subprocess.Popen(
        [sys.executable, "-m", "vision.training.families", "--full-reader", str(crops),
         "--out", str(out / "reader"), "--results", str(results), "--start", str(reader_start),
         "--hours", str(reader_hours), "--device", device, "--rounds", str(rounds)],
        stdout=(out / "reader.log").open("w"), stderr=subprocess.STDOUT)  # fmt: skip
    if detector:
        det_yaml = prepare_detector([data], out, workers=workers, real_dice=real_table)
        shown = det_yaml.parent / "images" / "train"
        start = checkpoint_from_shipped(MODELS / "detector.onnx", shown, out / "detector.pt")
        detector_hours = max(budget.left() - DETECTOR_MARGIN, 60) / 3600
        try:
            trained = train_detector(det_yaml, out, epochs=100, hours=detector_hours,
                                     batch=128, weights=start, device=device,
                                     workers=workers // 2)  # fmt: skip
            shutil.copy2(trained, results / "detector-fp32.onnx")
            budget.log(f"detector trained ({detector_hours * 60:.1f} min)")
        except RuntimeError as error:  # the readers' results are still worth keeping
            budget.log(f"detector not trained: {error}")
    try:
        full_reader.wait(timeout=max(budget.left() - 30, 1))
    except subprocess.TimeoutExpired:
        full_reader.kill()
    if not (results / "reader.onnx").exists():
        kept = " (its first stage is kept: reader-first.onnx)" if (
            results / "reader-first.onnx").exists() else ""  # fmt: skip
        budget.log(f"reader on every family: not finished{kept} (see reader.log)")
        return 1
    budget.log(f"reader trained on every family ({reader_hours * 60:.1f} min)")
    try:
        dice.wait(timeout=max(budget.left() - 15, 1))
    except subprocess.TimeoutExpired:
        dice.kill()
    done = (results / "dice.onnx").exists()
    budget.log(f"reader of dice alone: {'trained' if done else 'not finished (see dice.log)'}")
    measured: dict[str, object] = {}
    for family, process in left_out.items():
        try:
            process.wait(timeout=max(budget.left() - 15, 1))
        except subprocess.TimeoutExpired:
            process.kill()
            budget.log(f"{family} left out: not finished in time")
            continue
        done = out / f"without-{family}" / "measured.json"
        if not done.exists():
            budget.log(f"{family} left out: failed (see its log)")
            continue
        _keep_left_out(budget, measured, family, out, results, "")
    budget.log("done")
    return 0


DETECTOR_LOOKS = ("house", "house", *FAMILIES)
"""The looks a detectors-only run renders, in turn: the house look twice (its held-out set is
the product's own target, and the runs on a sixth of house frames lost its dice:
`models/MODEL_CARD.md`) and each family once."""
DETECTOR_ARMS: dict[str, tuple[str, ...]] = {"photos-beside-house": FAMILIES, "no-photos": ()}
"""The detectors trained side by side, each going on from the same start at
`train.NEW_LOOKS_RATE`, named by the looks whose frames get a real photograph of dice pasted in.
Every run that pasted one on every frame lost the house look's small dice in the whole-frame
pass (88.6% found -> 52-72%, `models/MODEL_CARD.md`); these two arms asked whether the
photographs do it. They do not: the H100 run's arm without them lost the dice as fast (51.0%
against 44.5%). Nor are the norms' statistics: on this CPU, going on loses the dice with the
norms held too, at any rate, as the rate times the steps: the dice's boxes grow and their class
scores follow, and the families' tile faces, which the shipped detector boxes as dice, push the
die class down (`vision.training.going_on`, `models/MODEL_CARD.md`, "Where the house dice go").
`train.train_detector` now goes on with two mends that keep most of the house dice through six
epochs of the looks at the CPU's rate (86.5% with the closer look; 29.3% after two before them);
the families' dice found still fall. Without photographs (no `--real-dice-table`) only the
second trains."""
DETECTOR_BATCH = 128
"""Crops a step on the GPU: what the earlier GPU runs trained at, and enough for the norms'
statistics to move with the new looks (`train.HELD_NORMS_BELOW`)."""
RETURNED_BYTES, RETURNED_FILE_BYTES, RETURNED_FILES = 58e6, 15e6, 5
"""What the kept epochs may take of a GPU machine's results: bytes in all, bytes a file, files
(its files come back as at most 8 of 16 MB, 64 MB together; the run's logs take the rest)."""


def detectors(out: Path, results: Path, seconds: float, images: int, real_table: Path | None,
              device: str, seed: int = SEED,
              start_from: Path = MODELS / "detector.onnx") -> int:  # fmt: skip
    """Render `DETECTOR_LOOKS` from `seed`, cut the detector's crops for each of
    `DETECTOR_ARMS` (real photographs of dice pasted in from `real_table`) and train one detector
    per arm, side by side on the GPU, each going on from `start_from` (the shipped one, or an
    earlier candidate's ONNX export) with its three classes (the markers have a model of their
    own). Every epoch's weights are kept (`pack_epochs`), to be measured on whole frames."""
    from vision.synth.dataset import write_dataset
    from vision.training.train import NEW_LOOKS_RATE, checkpoint_from_shipped, prepare_detector

    budget = Budget(seconds, results)
    workers = os.cpu_count() or 2
    data = out / "looks"
    card = write_dataset(data, images, seed, families=DETECTOR_LOOKS, workers=workers,
                         progress=False)  # fmt: skip
    budget.log(f"rendered {images} images: {card['families']}")
    arms = {name: looks for name, looks in DETECTOR_ARMS.items() if real_table or not looks}
    crops = {}
    for name, looks in arms.items():
        crops[name] = prepare_detector([data], out / name, workers=workers,
                                       real_dice=real_table, photo_looks=looks)  # fmt: skip
    shown = next(iter(crops.values())).parent / "images" / "train"
    start = checkpoint_from_shipped(start_from, shown, out / "detector.pt")
    budget.log(f"detector crops cut: {len(list(shown.iterdir()))} for training, arms {list(arms)}")
    hours = max(budget.left() - DETECTOR_MARGIN, 60) / 3600
    each = max(workers // len(arms) - 1, 1)
    running = {}
    for name, data_yaml in crops.items():
        running[name] = subprocess.Popen(
            [sys.executable, "-m", "vision.training.families", "--train-detector", str(data_yaml),
             "--start", str(start), "--rate", str(NEW_LOOKS_RATE), "--hours", str(hours),
             "--device", device, "--workers", str(each), "--out", str(out / f"detector-{name}")],
            stdout=(out / f"detector-{name}.log").open("w"), stderr=subprocess.STDOUT,
        )  # fmt: skip
    for name, process in running.items():
        try:
            process.wait(timeout=max(budget.left() - 10, 1))
        except subprocess.TimeoutExpired:
            process.kill()
        kept = sorted((out / f"detector-{name}" / "epochs").glob("epoch-*.pt"))
        ended = "" if process.returncode == 0 else f", exit {process.returncode}"
        budget.log(f"detector {name}: {len(kept)} epochs kept{ended}")
    logs = [out / f"detector-{name}.log" for name in arms]
    figures = [out / f"detector-{name}" / "detector" / "results.csv" for name in arms]
    pack_epochs({name: out / f"detector-{name}" / "epochs" for name in arms}, results,
                [p for p in logs + figures if p.exists()])  # fmt: skip
    budget.log("done")
    return 0


def one_detector(data_yaml: Path, start: Path, rate: float, hours: float, device: str,
                 workers: int, out: Path) -> int:  # fmt: skip
    """Train one detector of `detectors`, keeping every epoch's weights under `out/epochs`."""
    from vision.training.train import train_detector

    train_detector(data_yaml, out, epochs=100, hours=hours, batch=DETECTOR_BATCH,
                   weights=start, device=device, workers=workers, rate=rate,
                   keep_epochs=out / "epochs")  # fmt: skip
    return 0


def pack_epochs(kept: dict[str, Path], results: Path, logs: list[Path]) -> list[Path]:
    """The arms' kept epochs into tar files under `results` within `RETURNED_*`, the latest
    epochs first (the earliest are dropped where they do not all fit), arms taking turns, and
    `logs` into `logs.tar.gz` (each arm's log and epoch figures, named by its arm)."""
    import tarfile

    latest = [sorted(folder.glob("epoch-*.pt"), key=lambda p: -int(p.stem.split("-")[1]))
              for folder in kept.values()]  # fmt: skip
    names = {folder: name for name, folder in kept.items()}
    size = {path: path.stat().st_size for paths in latest for path in paths}
    chosen, total = [], 0
    for path in (p for turn in zip_longest(*latest) for p in turn if p is not None):
        if total + size[path] <= RETURNED_BYTES:
            chosen.append(path)
            total += size[path]
    packs: list[list[Path]] = [[]]
    for path in sorted(chosen):
        if packs[-1] and sum(size[p] for p in packs[-1]) + size[path] > RETURNED_FILE_BYTES:
            packs.append([])
        packs[-1].append(path)
    written = []
    for index, pack in enumerate(packs[:RETURNED_FILES]):
        if pack:
            written.append(results / f"epochs-{index + 1}.tar")
            with tarfile.open(written[-1], "w") as tar:
                for path in pack:
                    tar.add(path, arcname=f"{names[path.parent]}-{path.name}")
    with tarfile.open(results / "logs.tar.gz", "w:gz") as tar:
        for path in logs:
            arm = path.parent.parent.name if path.name == "results.csv" else path.stem
            tar.add(path, arcname=f"{arm}{path.suffix}")
    return written


def _keep_left_out(budget: Budget, measured: dict[str, object], family: str, out: Path,
                   results: Path, took: str) -> None:  # fmt: skip
    """A left-out reader's figures, beside the full reader's on the same crops, saved at once."""
    measured[family] = json.loads((out / f"without-{family}" / "measured.json").read_text())
    held = out / f"without-{family}" / "held"
    measured[family]["trained_on_all"] = crop_accuracy(results / "reader.onnx", held)  # type: ignore[index]
    budget.save("families.json", measured)
    kinds = measured[family]["left_out"]["by_kind"]  # type: ignore[index]
    budget.log(f"{family} left out{took}: " + json.dumps(
        {k: round(v["accuracy"], 4) for k, v in kinds.items()}))  # fmt: skip


def _one_at_a_time(budget: Budget, data: Path, crops: Path, out: Path, results: Path,
                   start: Path, rounds: int, real: Path | None, device: str,
                   workers: int) -> int:  # fmt: skip
    from vision.training.train import prepare_round_crops, train_reader

    if rounds:
        mined = prepare_round_crops(crops, rounds, workers=workers)
        budget.log(f"crops mined from {rounds} rounds: {sum(mined.values())}")
    reader_hours = max(budget.left() * READER_SHARE_ONE_AT_A_TIME, 60) / 3600
    reader = train_reader(crops, out / "reader", epochs=8, weights=start, device=device,
                          workers=workers, hours=reader_hours)  # fmt: skip
    shutil.copy2(reader, results / "reader.onnx")
    budget.log(f"reader trained on every family ({reader_hours * 60:.1f} min)")
    measured: dict[str, object] = {}
    for k, family in enumerate(FAMILIES):
        hours = max((budget.left() - 60) / (len(FAMILIES) - k), 60) / 3600
        leave_out(family, data, out / f"without-{family}", start, hours, device, real)
        _keep_left_out(budget, measured, family, out, results, f" ({hours * 60:.1f} min)")
    budget.log("done")
    return 0


def reader_data(data: Path, root: Path, keep, real: Path | None, workers: int) -> Path:  # type: ignore[no-untyped-def]
    from vision.training.train import copy_real_dice, prepare_reader

    crops = prepare_reader([data], root, keep=keep, workers=workers)
    if real is not None:
        copy_real_dice(real, crops, REAL_PER_CLASS)
    return crops


def hardening_rounds(seconds: float, rounds: int) -> int:
    """How many rounds the full reader mines to harden itself in `seconds` after `rounds`."""
    fitting = int(seconds * MINING_SHARE / MINING_SECONDS_PER_ROUND) - rounds
    return max(min(HARDENING_ROUNDS, fitting), 1)


def full_reader(crops: Path, out: Path, results: Path, start: Path, hours: float,
                device: str, rounds: int) -> int:  # fmt: skip
    """Train the reader on every family's crops and on crops mined from `rounds` simulated
    rounds, then harden it: mine up to `HARDENING_ROUNDS` more rounds for the boxes over no face
    that this reader takes for faces, and go on training with them (a process of its own beside the
    detector), all within `hours`. The first stage's reader is kept beside the results at once,
    in case the hardened one does not finish."""
    from vision.training.train import checkpoint_from_shipped, prepare_round_crops, train_reader

    deadline = time.monotonic() + hours * 3600
    hardening = hardening_rounds(hours * 3600, rounds)
    mining = (rounds + hardening) * MINING_SECONDS_PER_ROUND
    training = hours * 3600 - mining
    print(f"{hours * 3600:.0f} s: {mining:.0f} s mining {rounds} + {hardening} rounds, "
          f"{training:.0f} s training", flush=True)  # fmt: skip
    if rounds:
        mined = prepare_round_crops(crops, rounds, workers=MINING_WORKERS)
        print(f"crops mined from {rounds} rounds: {sum(mined.values())}", flush=True)
    first = train_reader(crops, out / "first", epochs=8, weights=start, device=device,
                         workers=4, hours=max(training * FIRST_STAGE, 60) / 3600)  # fmt: skip
    shutil.copy2(first, results / "reader-first.onnx")
    hard = prepare_round_crops(crops, hardening, first=rounds, workers=MINING_WORKERS,
                               reader=first)  # fmt: skip
    print(f"crops mined for hardening from {hardening} rounds: {sum(hard.values())}",
          flush=True)  # fmt: skip
    going_on = checkpoint_from_shipped(first, crops / "train", out / "hardening.pt")
    left = max((deadline - time.monotonic()) / 3600, 1 / 60)
    reader = train_reader(crops, out / "hardened", epochs=6, weights=going_on, device=device,
                          workers=4, hours=left)  # fmt: skip
    shutil.copy2(reader, results / "reader.onnx")
    return 0


def leave_out(family: str, data: Path, out: Path, start: Path, hours: float, device: str,
              real: Path | None, recolour: bool = False) -> int:  # fmt: skip
    """Train a reader on every family but `family` and read `family`'s crops with it (its
    training crops repainted as other sets where `recolour`)."""
    from vision.training.train import prepare_reader, train_reader

    held = prepare_reader([data], out / "held-data", per_class=HELD_PER_CLASS,
                          keep=lambda f: f == family, workers=2)  # fmt: skip
    shutil.rmtree(out / "held", ignore_errors=True)
    held.rename(out / "held")
    crops = reader_data(data, out, lambda f: f != family, real, 2)
    model = train_reader(crops, out, epochs=5, weights=start, device=device, workers=2,
                         hours=hours, recolour=recolour)  # fmt: skip
    measured = {
        "left_out": crop_accuracy(model, out / "held"),
        "shipped": crop_accuracy(MODELS / "reader.onnx", out / "held"),
    }
    (out / "measured.json").write_text(json.dumps(measured, indent=2) + "\n")
    return 0


def dice_reader(data: Path, out: Path, results: Path, hours: float, device: str,
                real: Path | None) -> int:  # fmt: skip
    """Train a reader of dice alone from scratch on every family's dice and the real
    photographs' (`vision.training.train.prepare_dice`): at the full rate, which a new task
    wants (going on from the reader at the low rate held it at 44-50% on real dice)."""
    from vision.training.train import prepare_dice, train_reader

    crops = prepare_dice([data], out, real=real)
    model = train_reader(crops, out, epochs=DICE_EPOCHS, name="dice", device=device, workers=4,
                         hours=hours)  # fmt: skip
    results.mkdir(parents=True, exist_ok=True)
    shutil.copy2(model, results / "dice.onnx")
    return 0


DICE_EPOCHS = 60
"""The dice reader's epochs where its hours allow: on a CPU 20 epochs of 37,000 crops took
70 minutes; a GPU run's few minutes set its length (`hours`) before these do."""


MEASURED_PER_CLASS = 100
"""Crops a class per look when measuring by family: 40 1080p frames a look give about this many
of the commoner faces."""


JUDGED = ("map50_95", "tile_face_accuracy", "tile_face_found", "dice_accuracy", "dice_found")
"""The figures `judge` reports of each set, as `vision.training.evaluate` names them."""
JUDGED_PHOTOS = 150
"""Real photographs of dice `judge` pastes, dark and light each: enough to tell detectors
apart by tens of points (the GPU candidates differ so) in a minute on a 2-core CPU."""


def judge(
    detector: Path, house: Path, looks: Path | None, photos: Path | None
) -> dict[str, object]:
    """A detector candidate (ONNX, or a kept epoch's `.pt`, exported first) on validation sets
    never trained on: the house look's frames with the whole-frame pass alone (where the GPU
    runs lose small dice) and with the closer look, the families' frames, and real photographs
    of dice pasted on the house frames. Never the held-out test sets: this chooses."""
    from vision.detector import Detector
    from vision.training.evaluate import evaluate
    from vision.training.real_dice import found_at_table_scale

    if detector.suffix == ".pt":
        from vision.detector import DETECTOR_INPUT
        from vision.training.train import export_onnx

        detector = export_onnx(detector, list(DETECTOR_INPUT))
    reader, found = Reader(), Detector(detector)
    whole = evaluate(house, Detector(detector, zoom=False), reader)
    judged: dict[str, object] = {
        "detector": str(detector),
        "house_dice_found_whole_frame": round(whole["dice_found"], 4),
    }
    for name, data in (("house", house), ("families", looks)):
        if data is not None:
            figures = evaluate(data, found, reader)
            judged[name] = {k: round(figures[k], 4) for k in JUDGED}
    for dark in (True, False) if photos is not None else ():
        counts = found_at_table_scale(found, reader, photos, house, dark=dark, limit=JUDGED_PHOTOS)  # type: ignore[arg-type]
        judged["real_dark" if dark else "real_light"] = {
            k: counts[k] for k in ("dice", "found", "other_boxes")
        }
    return judged


def by_family(model: Path | Reader, data: Path, out: Path) -> dict[str, object]:
    """The reader at `model` (or as the box reads: a `Reader`) on each look of a family data
    set (`paigow synth dataset --families ...`), by kind: faces, backs, dice."""
    from vision.training.train import prepare_reader

    card = json.loads((data / "card.json").read_text())
    measured: dict[str, object] = {}
    for family in card["families"]:
        crops = prepare_reader([data], out / f"measure-{family}", per_class=MEASURED_PER_CLASS,
                               keep=lambda f, look=family: f == look)  # fmt: skip
        kinds = crop_accuracy(model, crops)["by_kind"]
        measured[family] = {k: round(v["accuracy"], 4) for k, v in kinds.items()}  # type: ignore[attr-defined]
    return measured


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/families", help="working folder (never committed)")
    parser.add_argument("--results", default="runs/families/results")
    parser.add_argument("--seconds", type=float, default=500, help="time for the whole run")
    parser.add_argument("--images", type=int, default=3600)
    parser.add_argument("--real-dice", help="crops from scripts/fetch_real_dice.py (train, val)")
    parser.add_argument("--rounds", type=int, default=32, help="simulated rounds mined for crops")
    parser.add_argument("--device", default="0", help="'cpu' or a CUDA device number")
    parser.add_argument("--no-detector", action="store_true", help="train the readers only")
    parser.add_argument("--one-at-a-time", action="store_true",
                        help="the readers one after another, no detector (a CPU)")  # fmt: skip
    parser.add_argument("--measure", help="a reader to measure on --crops instead of training")
    parser.add_argument("--judge", nargs="+", type=Path, metavar="DETECTOR",
                        help="detector candidates (.onnx, or a kept epoch's .pt) to measure "
                        "on --house, --looks and --photos, sets never trained on")  # fmt: skip
    parser.add_argument("--house", type=Path, help="with --judge: house-look frames")
    parser.add_argument("--looks", type=Path, help="with --judge: the families' frames")
    parser.add_argument("--photos", type=Path,
                        help="with --judge: a split of the dice photographs")  # fmt: skip
    parser.add_argument("--crops", help="class folders of crops to measure on")
    parser.add_argument("--by-family", help="with --measure: a family data set, measured per look "
                        "on crops cut from its truth boxes as the detector's move")  # fmt: skip
    parser.add_argument("--as-the-box", action="store_true",
                        help="with --measure: read as the box reads (`vision.detector.Reader`: "
                        "unsure tiles both ways round, dice by models/dice.onnx)")  # fmt: skip
    parser.add_argument("--leave-out", choices=tuple(FAMILIES), help=argparse.SUPPRESS)
    parser.add_argument("--full-reader", help=argparse.SUPPRESS)
    parser.add_argument("--dice-reader", help=argparse.SUPPRESS)
    parser.add_argument("--detectors", action="store_true",
                        help="the detector alone (a GPU; DETECTOR_ARMS)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=SEED,
                        help="with --detectors: the rendered frames' first seed")  # fmt: skip
    parser.add_argument("--start-detector", type=Path, default=MODELS / "detector.onnx",
                        help="with --detectors: the ONNX detector to go on from")  # fmt: skip
    parser.add_argument("--real-dice-table", help="table-scale photographs of dice for the "
                        "detectors (vision.training.real_dice), with train/ and val/")  # fmt: skip
    parser.add_argument("--train-detector", help=argparse.SUPPRESS)
    parser.add_argument("--rate", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=2, help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--start", help=argparse.SUPPRESS)
    parser.add_argument("--hours", type=float, default=0.05, help=argparse.SUPPRESS)
    parser.add_argument("--recolour", action="store_true", help="with --leave-out: repaint "
                        "training crops as other sets (vision.training.recolour)")  # fmt: skip
    args = parser.parse_args()
    real = Path(args.real_dice) if args.real_dice else None
    if args.train_detector:
        return one_detector(Path(args.train_detector), Path(args.start), args.rate, args.hours,
                            args.device, args.workers, Path(args.out))  # fmt: skip
    if args.full_reader:
        return full_reader(Path(args.full_reader), Path(args.out), Path(args.results),
                           Path(args.start), args.hours, args.device, args.rounds)  # fmt: skip
    if args.dice_reader:
        return dice_reader(Path(args.dice_reader), Path(args.out), Path(args.results),
                           args.hours, args.device, real)  # fmt: skip
    if args.leave_out:
        return leave_out(args.leave_out, Path(args.data), Path(args.out), Path(args.start),
                         args.hours, args.device, real, args.recolour)  # fmt: skip
    if args.judge:
        missing = [p for p in [*args.judge, args.house, args.looks, args.photos]
                   if p is not None and not p.exists()]  # fmt: skip
        if args.house is None or missing:
            problem = f"no such path: {missing[0]}" if missing else "--judge needs --house FRAMES"
            print(problem, file=sys.stderr)
            return 2
        for candidate in args.judge:
            print(json.dumps(judge(candidate, args.house, args.looks, args.photos)), flush=True)
        return 0
    if args.measure and not Path(args.measure).is_file():
        print(f"--measure: no reader file {args.measure}", file=sys.stderr)
        return 2
    measured: Path | Reader = Path(args.measure or ".")
    if args.measure and args.as_the_box:
        measured = Reader(Path(args.measure), flatness=None)
    if args.measure and args.by_family:
        print(json.dumps(by_family(measured, Path(args.by_family), Path(args.out)), indent=2))
        return 0
    if args.measure:
        if not args.crops or not Path(args.crops).is_dir():
            print("--measure needs --crops FOLDER of class folders", file=sys.stderr)
            return 2
        print(json.dumps(crop_accuracy(measured, Path(args.crops)), indent=2))
        return 0
    if real is not None and not (real / "train").is_dir():
        print(f"--real-dice: no train/ folder in {real}", file=sys.stderr)
        return 2
    table = Path(args.real_dice_table) if args.real_dice_table else None
    if table is not None and not (table / "train" / "photos.jsonl").is_file():
        print(f"--real-dice-table: no train/photos.jsonl in {table}", file=sys.stderr)
        return 2
    if args.detectors:
        if not args.start_detector.is_file():
            print(f"--start-detector: no such file {args.start_detector}", file=sys.stderr)
            return 2
        return detectors(Path(args.out), Path(args.results), args.seconds, args.images, table,
                         args.device, args.seed, args.start_detector)  # fmt: skip
    return run(Path(args.out), Path(args.results), args.seconds, args.images, real, args.rounds,
               args.device, detector=not (args.no_detector or args.one_at_a_time),
               one_at_a_time=args.one_at_a_time, real_table=table)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
