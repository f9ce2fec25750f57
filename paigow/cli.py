"""`paigow` subcommands. Human-readable output by default, `--json` for machines.

Malformed input ends the program with exit status 2 and one line naming the problem.
"""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from rules import (
    CATALOGUE,
    CUTS,
    FULL_SET,
    DealError,
    DeliveryOrder,
    Dice,
    Hand,
    HouseWay,
    InvalidHandError,
    Setting,
    check_set,
    find_cut,
    find_ruleset,
    first_position,
    parse_tiles,
    ruleset_ids,
)
from rules.deal import parse_grid

Handler = Callable[[argparse.Namespace], int]


class UsageError(Exception):
    """Bad command-line input, reported in one line."""


class _HelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the text already says it or there is
    none worth saying (a flag, an empty list, no default)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        quiet = default in (None, argparse.SUPPRESS) or default is False or default == []
        quiet = quiet or not action.option_strings
        if quiet or "(default" in text or "default:" in text or action.help == argparse.SUPPRESS:
            return action.help
        return f"{text} (default: %(default)s)".lstrip()


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _number(text: str, kind: Callable[[str], float], low: float, high: float, what: str) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}") from None
    if not (math.isfinite(value) and low <= value <= high):
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}")
    return value


def _count(text: str) -> int:
    """A whole number from 1 up: images, workers, epochs, frames."""
    return int(_number(text, int, 1, math.inf, "a whole number from 1"))


def _rate(text: str) -> float:
    """Frames a second, days, hours, speed: positive and finite (0 and nan make no sense)."""
    value = _number(text, float, 0.0, math.inf, "a positive number")
    if value == 0:
        raise argparse.ArgumentTypeError(f"a positive number, got {text!r}")
    return value


def _share(text: str) -> float:
    return _number(text, float, 0.0, 1.0, "a share between 0 and 1")


def _port(text: str) -> int:
    return int(_number(text, int, 1, 65535, "a port from 1 to 65535"))


def _position(text: str) -> int:
    return int(_number(text, int, 1, 8, "a position from 1 to 8"))


def _emit(args: argparse.Namespace, data: dict[str, Any], human: str) -> int:
    print(json.dumps(data, indent=2) if args.json else human)
    return 0


def _hand_json(hand: Hand) -> list[str]:
    return [str(t) for t in hand.tiles]


def _setting_json(setting: Setting) -> dict[str, list[str]]:
    return {"high": _hand_json(setting.high), "low": _hand_json(setting.low)}


def _setting_lines(setting: Setting) -> str:
    return (
        f"  high: {setting.high!s:<9} {setting.high.describe()}\n"
        f"  low:  {setting.low!s:<9} {setting.low.describe()}"
    )


def _clause_json(way: HouseWay) -> dict[str, Any]:
    return {"ref": way.clause.ref, "summary": way.clause.summary}


def cmd_house_way(args: argparse.Namespace) -> int:
    ruleset = find_ruleset(args.rules)
    tiles = parse_tiles(args.tiles)
    way = ruleset.house_way(tiles)
    data = {
        "rules": ruleset.id,
        "tiles": [str(t) for t in tiles],
        "high": _hand_json(way.setting.high),
        "low": _hand_json(way.setting.low),
        "high_hand": way.setting.high.describe(),
        "low_hand": way.setting.low.describe(),
        "clause": _clause_json(way),
        "trail": [{"ref": c.ref, "summary": c.summary} for c in way.trail],
    }
    human = (
        f"{ruleset.id} house way for {' '.join(str(t) for t in tiles)}\n"
        f"{_setting_lines(way.setting)}\n  clause: {way.clause}"
    )
    return _emit(args, data, human)


def cmd_check_setting(args: argparse.Namespace) -> int:
    ruleset = find_ruleset(args.rules)
    check = ruleset.check_setting(Setting.parse(args.setting))
    data = {
        "rules": ruleset.id,
        "is_house_way": check.is_house_way,
        "observed": {
            "high": _hand_json(check.observed.high),
            "low": _hand_json(check.observed.low),
        },
        "expected": {
            "high": _hand_json(check.expected.high),
            "low": _hand_json(check.expected.low),
        },
        "clause": {"ref": check.clause.ref, "summary": check.clause.summary},
    }
    verdict = "house way" if check.is_house_way else "NOT house way"
    human = f"{check.observed}: {verdict} under {ruleset.id}"
    if not check.is_house_way:
        human += f"\n expected:\n{_setting_lines(check.expected)}"
    human += f"\n  clause: {check.clause}"
    return _emit(args, data, human)


def cmd_compare(args: argparse.Namespace) -> int:
    ruleset = find_ruleset(args.rules)
    bank, player = Setting.parse(args.bank), Setting.parse(args.player)
    for name, setting in (("bank", bank), ("player", player)):
        if not setting.is_legal:
            raise InvalidHandError(
                f"the {name}'s high hand {setting.high} ranks below its low hand {setting.low}"
            )
    _check_copies([*bank.tiles, *player.tiles])
    match = ruleset.match(player, bank)
    data = {
        "rules": ruleset.id,
        "result": match.result.value,
        "high": match.high.value,
        "low": match.low.value,
        "reasons": {"high": match.high_reason, "low": match.low_reason},
        "clause": match.clause,
    }
    human = (
        f"player: {match.result.value} under {ruleset.id} ({match.clause})\n"
        f"  high: {match.high.value} ({match.high_reason})\n"
        f"  low:  {match.low.value} ({match.low_reason})"
    )
    return _emit(args, data, human)


def _check_copies(tiles: Sequence[Any]) -> None:
    for tile, count in Counter(tiles).items():
        if count > FULL_SET[tile]:
            raise InvalidHandError(
                f"{tile} appears {count} times but a set holds {FULL_SET[tile]}: a foreign tile"
            )


def cmd_deal_order(args: argparse.Namespace) -> int:
    ruleset = find_ruleset(args.rules)
    cut, implied = find_cut(args.cut)
    if ruleset.cuts is not None and cut.id not in ruleset.cuts:
        raise DealError(f"cut {cut.id!r} is not named in {ruleset.id}")
    if args.adjust and not ruleset.delivery_adjustment:
        raise DealError(f"{ruleset.id} has no +4/-4 delivery adjustment (that is NZ 9.6)")
    options = cut.options(
        side=args.side or implied.get("side"),
        layer=args.layer or implied.get("layer"),
        end=args.end or implied.get("end"),
    )
    dice = Dice.of(args.dice)
    if args.grid:
        first = first_position(dice.total, args.banker, args.adjust or 0)
        order = DeliveryOrder(first, parse_grid(args.grid), cut.id, options)
        source = "the table's approved order (--grid)"
    else:
        order = DeliveryOrder.build(cut, options, dice, args.banker, args.adjust or 0)
        source = cut.source
    data = {
        "rules": ruleset.id,
        "dice": list(dice.values),
        "total": dice.total,
        "banker": args.banker,
        "adjust": args.adjust or 0,
        "first_position": order.first,
        "cut": cut.id,
        "options": {
            k: v.value
            for k, v in (("side", options.side), ("layer", options.layer), ("end", options.end))
            if v is not None
        },
        "positions": list(order.positions),
        "grid": [list(row) for row in order.grid],
        "clause": ruleset.deal_clause,
        "source": source,
    }
    adjust = f" {args.adjust:+d}" if args.adjust else ""
    rows = "\n".join("    " + " ".join(str(g) for g in row) for row in order.grid)
    human = (
        f"dice {dice} = {dice.total}{adjust}, banker at {args.banker}: "
        f"first group to position {order.first} ({ruleset.id} {ruleset.deal_clause})\n"
        f"cut {cut.id} ({options}; layout: {source})\n"
        f"  group:    {' '.join(str(g) for g in range(1, 9))}\n"
        f"  position: {' '.join(str(p) for p in order.positions)}\n"
        f"  groups by stack (top layer first, dealer's left to right):\n{rows}"
    )
    return _emit(args, data, human)


def cmd_check_set(args: argparse.Namespace) -> int:
    tiles = parse_tiles(args.tiles)
    report = check_set(tiles, whole_set=args.whole_set)
    data = {
        "ok": report.ok,
        "tiles_seen": report.tiles_seen,
        "faults": [f.name.lower() for f in type(report.faults) if f in report.faults and f.name],
        "foreign": [{"tile": str(t), "extra": n} for t, n in report.foreign],
        "missing": [{"tile": str(t), "short": n} for t, n in report.missing],
    }
    return _emit(args, data, str(report))


def cmd_rulesets(args: argparse.Namespace) -> int:
    books = [find_ruleset(i) for i in ruleset_ids()]
    data = {
        "rulesets": [
            {"id": r.id, "title": r.title, "source": r.source, "cuts": r.cuts} for r in books
        ]
    }
    return _emit(args, data, "\n".join(f"{r.id:<9} {r.title}" for r in books))


def cmd_cuts(args: argparse.Namespace) -> int:
    named = find_ruleset(args.rules).cuts if args.rules else None
    cuts = [c for c in CUTS.values() if named is None or c.id in named]
    data = {
        "cuts": [
            {"id": c.id, "names": c.names, "source": c.source, "has_order": c.drawn is not None}
            for c in cuts
        ]
    }
    human = "\n".join(f"{c.id:<28} {c.names}  [{c.source}]" for c in cuts)
    return _emit(args, data, human)


def cmd_irregularities(args: argparse.Namespace) -> int:
    infos = list(CATALOGUE.values())
    data = {
        "irregularities": [
            {
                "kind": i.kind.value,
                "severity": i.severity.value,
                "description": i.description,
                "clauses": dict(i.clauses),
            }
            for i in infos
        ]
    }
    human = "\n".join(
        f"{i.kind.value:<22} {i.severity.value:<8} {i.description}"
        + (f"  [{args.rules} {i.clause(args.rules)}]" if args.rules else "")
        for i in infos
    )
    if args.rules:
        find_ruleset(args.rules)
    return _emit(args, data, human)


def _resolution(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise UsageError(
            f"a resolution is written WIDTHxHEIGHT, e.g. 1280x720, got {text!r}"
        ) from None
    if not (320 <= width <= 7680 and 240 <= height <= 4320):
        raise UsageError(f"resolution {text} is outside 320x240 .. 7680x4320")
    return width, height


def cmd_synth_dataset(args: argparse.Namespace) -> int:
    from vision.synth.dataset import write_dataset

    resolution = _resolution(args.resolution) if args.resolution else None
    families = _families(args.families)
    card = write_dataset(
        Path(args.out),
        args.n,
        args.seed,
        resolution=resolution,
        close_ups=args.close_ups,
        cocked_dice=args.cocked_dice,
        families=families,
        workers=args.workers,
        progress=sys.stderr.isatty(),
    )
    labelled = sum(sum(c.values()) for c in card["objects"].values())
    return _emit(
        args,
        card,
        f"{args.n} images, {labelled} labelled objects in {args.out} "
        f"(card: {Path(args.out) / 'README.md'})",
    )


def _families(text: str | None) -> tuple[str, ...]:
    """`all`, `house`, or a comma-separated list of appearance families."""
    from vision.synth.appearance import FAMILIES

    if not text:
        return ()
    names = tuple(FAMILIES) if text == "all" else tuple(n.strip() for n in text.split(","))
    unknown = [n for n in names if n != "house" and n not in FAMILIES]
    if unknown or not names:
        raise UsageError(f"--families: no family {', '.join(unknown) or '(none)'}; "
                         f"one or more of house, {', '.join(FAMILIES)}, or all")  # fmt: skip
    return names


def cmd_synth_round(args: argparse.Namespace) -> int:
    from vision.synth.round import simulate_round

    find_ruleset(args.rules)
    truth = simulate_round(
        Path(args.out),
        args.seed,
        args.rules,
        args.irregularity or [],
        fps=args.fps,
        resolution=_resolution(args.resolution),
        cut=args.cut,
        context=args.context,
    )
    human = (
        f"round {args.seed} under {args.rules}: {truth['bank']} bank, dice {truth['dice']}, "
        f"cut {truth['cut']} {truth['cut_options'] or ''}, "
        f"first position {truth['first_position']}, {truth['frames']} frames -> "
        f"{Path(args.out) / 'round.mp4'}"
    )
    injected = truth.get("irregularities") or []
    human += "\ninjected: " + ("; ".join(
        ", ".join(f"{k} {v}" if k != "kind" else str(v) for k, v in found.items())
        for found in injected) or "nothing (a clean round)")  # fmt: skip
    return _emit(args, truth, human)


def cmd_synth_display(args: argparse.Namespace) -> int:
    import cv2

    from vision.synth.appearance import FAMILIES
    from vision.synth.display import render_display

    if args.family != "house" and args.family not in FAMILIES:
        raise UsageError(
            f"--family: no family {args.family!r}; one of house, {', '.join(FAMILIES)}"
        )
    shown, rendering, _ = render_display(
        args.seed, args.family, args.arrangement, args.fault, _resolution(args.resolution)
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out / "display.png"), rendering.image)
    truth = {"seed": args.seed, "family": args.family, "arrangement": shown.arrangement,
             "faces": list(shown.faces), "dice": list(shown.dice), "fault": shown.fault,
             "fault_detail": shown.fault_detail}  # fmt: skip
    (out / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    human = (
        f"{args.family} display {args.seed}, {shown.arrangement}: {len(shown.faces)} tiles, dice "
        f"{' '.join(map(str, shown.dice))}; {shown.fault_detail or 'a whole set'} -> "
        f"{out / 'display.png'}"
    )
    return _emit(args, truth, human)


def cmd_synth_gallery(args: argparse.Namespace) -> int:
    from vision.synth.gallery import gallery

    path = gallery(Path(args.out), seed=args.seed)
    return _emit(args, {"gallery": str(path)}, f"gallery written to {path}")


def cmd_detect(args: argparse.Namespace) -> int:
    import cv2

    from vision.detector import MODELS
    from vision.replay import ModelSource

    if not (MODELS / "detector.onnx").exists():
        raise UsageError(f"{MODELS / 'detector.onnx'} is missing (set PAIGOW_MODELS?)")
    image = _read_image(args.image)
    if image is None:
        raise UsageError(f"cannot read an image from {args.image!r}")
    found = ModelSource().look(image)
    if args.annotate:
        from vision.annotate import annotate

        if not cv2.imwrite(args.annotate, annotate(image, found)):
            raise UsageError(f"cannot write {args.annotate!r}")
    rows = found.to_json()
    counts = Counter(found.labels)
    human = f"{len(rows)} detections in {args.image}: " + ", ".join(
        f"{label} x{n}" for label, n in sorted(counts.items())
    )
    print(json.dumps(rows, indent=2) if args.json else human)
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    import importlib.util

    from vision.training.train import (
        MINED_ROUNDS,
        prepare_detector,
        prepare_dice,
        prepare_flatness,
        prepare_reader,
        prepare_refiner,
        prepare_round_crops,
        train_detector,
        train_reader,
        train_refiner,
    )

    datasets = [Path(d) for d in args.data]
    for data in datasets:
        if not (data / "annotations.jsonl").exists():
            raise UsageError(f"{data} is not a `paigow synth dataset` folder (no annotations)")
    out = Path(args.out)
    weights = Path(args.weights) if args.weights else None
    if weights and not weights.is_file():
        raise UsageError(f"no checkpoint at {weights}")
    if not 0 <= args.rounds <= MINED_ROUNDS:
        raise UsageError(f"--rounds: 0 to {MINED_ROUNDS} (later seeds are held out for "
                         "benchmarks/false_faces.py)")  # fmt: skip
    real = Path(args.real_dice) if args.real_dice else None
    if real is not None and args.stage != "dice":
        raise UsageError("--real-dice: only with --stage dice (the reader's stages take them "
                         "through vision.training.families)")  # fmt: skip
    if real is not None and not (real / "train").is_dir():
        raise UsageError(f"--real-dice: no train/ folder in {real} (scripts/fetch_real_dice.py)")
    if importlib.util.find_spec("ultralytics") is None:
        raise UsageError("training needs the [train] extra: see README (torch, then ultralytics)")
    if args.stage in ("detector", "both"):
        prepared = prepare_detector(datasets, out)
        going_on = _going_on(
            weights, prepared.parent / "images" / "train", out / "detector-from-onnx.pt"
        )
        onnx = train_detector(prepared, out, args.epochs, args.hours, weights=going_on)
        print(f"detector: {onnx}")
        print(f"detector, 8-bit: {_quantize(onnx, datasets, onnx.with_name('detector-int8.onnx'))}")
    if args.stage in ("reader", "both"):
        crops = prepare_reader(datasets, out)
        if args.rounds:
            mined = prepare_round_crops(crops, args.rounds)
            print(f"crops from {args.rounds} simulated rounds: {sum(mined.values())}")
        going_on = (_going_on(weights, crops / "train", out / "reader-from-onnx.pt")
                    if args.stage == "reader" else None)  # fmt: skip
        onnx = train_reader(crops, out, args.reader_epochs, weights=going_on)
        print(f"reader: {onnx}")
    if args.stage == "flatness":
        crops = prepare_flatness(datasets, out)
        going_on = _going_on(weights, crops / "train", out / "flatness-from-onnx.pt")
        onnx = train_reader(crops, out, args.reader_epochs, name="flatness", flips=True,
                            weights=going_on)  # fmt: skip
        print(f"flatness reader: {onnx}")
    if args.stage == "dice":
        crops = prepare_dice(datasets, out, real=real)
        going_on = _going_on(weights, crops / "train", out / "dice-from-onnx.pt")
        onnx = train_reader(crops, out, args.reader_epochs, name="dice", weights=going_on)
        print(f"dice reader: {onnx}")
    if args.stage in ("refiner", "refiner-2"):
        stage = 1 if args.stage == "refiner" else 2
        data = prepare_refiner(datasets, out, stage=stage)
        onnx = train_refiner(data, out, args.reader_epochs, stage=stage)
        print(f"{args.stage}: {onnx}")
    return 0


def _going_on(weights: Path | None, shown: Path, out: Path) -> Path | None:
    """The checkpoint a stage goes on from: an exported model (`models/*.onnx`) rebuilt as one,
    its norms measured on 256 of the training images under `shown`."""
    if weights is None or weights.suffix != ".onnx":
        return weights
    from vision.training.train import checkpoint_from_shipped

    try:
        rebuilt: Path = checkpoint_from_shipped(weights, shown, out)
    except ValueError as error:
        raise UsageError(str(error)) from error
    return rebuilt


def cmd_quantize(args: argparse.Namespace) -> int:
    model = Path(args.model)
    if not model.is_file():
        raise UsageError(f"no model at {model}")
    if args.decoding_only:
        return _rewrite_decoding(model)
    if not args.data:
        raise UsageError("--data is required (training data sets to calibrate on)")
    datasets = [Path(d) for d in args.data]
    print(f"detector, 8-bit: {_quantize(model, datasets, Path(args.out), args.frames)}")
    return 0


def _rewrite_decoding(model: Path) -> int:
    """The shipped file's box decoding made faster in place, its answers unchanged
    (`vision.training.quantize.expectation_on_last_axis`)."""
    _need_onnx("rewriting a model")
    from onnx.checker import ValidationError

    from vision.training.quantize import expectation_on_last_axis

    try:
        rewritten = expectation_on_last_axis(model)
    except (ValidationError, OSError) as error:
        raise UsageError(f"{model}: not an ONNX model ({type(error).__name__})") from None
    done = "rewritten" if rewritten else "already on the last axis, unchanged"
    print(f"{model}: decoding {done}")
    return 0


def _need_onnx(doing: str) -> None:
    """The onnx package is build work's (the [train] and [dev] extras), not the box's."""
    import importlib.util

    if importlib.util.find_spec("onnx") is None:
        raise UsageError(f"{doing} needs the onnx package: pip install -e '.[train]'")


def _quantize(model: Path, datasets: list[Path], out: Path, frames: int = 40) -> Path:
    _need_onnx("quantising")
    from vision.training.quantize import calibration_frames, quantize_detector

    try:
        quantize_detector(model, out, calibration_frames(datasets, frames))
    except ValueError as error:
        raise UsageError(str(error)) from None
    return out


def _read_image(path: str) -> Any:
    """The image, or None where the file is no image OpenCV reads. One too large to decode
    (a header claiming 100000x100000) is refused in one line rather than a cv2 traceback."""
    import cv2

    try:
        return cv2.imread(path)
    except cv2.error:
        raise UsageError(f"{path!r}: larger than this tool reads (2**30 pixels)") from None


def _table_id(text: str) -> str:
    from vision.table import ID_PATTERN

    if not re.fullmatch(ID_PATTERN, text):
        raise argparse.ArgumentTypeError(
            f"1-64 letters, digits and _.:- starting with a letter or digit, got {text!r}"
        )
    return text


def _points(text: str) -> list[tuple[float, float]]:
    try:
        points = [(float(x), float(y)) for x, y in (p.split(",") for p in text.split())]
    except ValueError:
        raise UsageError(f"write points as 'x,y x,y x,y x,y', got {text!r}") from None
    return points


def cmd_calibrate(args: argparse.Namespace) -> int:
    import cv2

    from vision.table import calibrate

    image = _read_image(args.image)
    if image is None:  # a video: its first frame
        capture = cv2.VideoCapture(args.image)
        ok, image = capture.read()
        capture.release()
        if not ok:
            raise UsageError(f"cannot read an image or a video from {args.image!r}")
    points = _points(args.points) if args.points else None
    options = _cut_options(args.cut, args.cut_option)
    config = calibrate(
        image, table_id=args.table_id, rules=args.rules, banker=args.banker, points=points
    )
    config = type(config).model_validate(  # the cut checked as table.yaml's would be
        {**config.model_dump(), "cut": args.cut, "cut_options": options}
    )
    config.write(Path(args.out))
    data = {"out": args.out, "reprojection_error_px": config.reprojection_error_px,
            "cut": config.cut, "cut_options": config.cut_options}  # fmt: skip
    human = (
        f"{args.out}: table {config.table_id}, {config.rules}, banker at {config.banker}, "
        f"cut {config.cut}{''.join(f' {k}={v}' for k, v in options.items())}; "
        f"reference points fit to {config.reprojection_error_px:.2f} px"
    )
    return _emit(args, data, human)


def _frame(args: argparse.Namespace, source: str) -> Any:
    """The frame to enrol from: `--image` (an image, or a video's first frame) or, with
    `--camera`, one grabbed from the box's camera."""
    import cv2

    where = args.image if args.image else source
    image = _read_image(where) if args.image else None
    if image is None:
        capture = cv2.VideoCapture(int(where) if where.isdigit() else where)
        ok, image = capture.read()
        capture.release()
        if not ok:
            raise UsageError(f"cannot read a frame from {where!r}")
    return image


def cmd_enrol(args: argparse.Namespace) -> int:
    import base64
    import time

    from edge.config import EdgeConfig
    from edge.enrolments import EnrolmentError, Enrolments, record_of
    from edge.outbox import Outbox, OutboxError
    from vision.detector import Detector, Reader
    from vision.enrol import enrol
    from vision.table import TableConfig

    if args.accept and not args.by:
        raise UsageError("--accept needs --by NAME: who checked the display")
    config = EdgeConfig.load(Path(args.config))
    table = TableConfig.read(config.table)
    image = _frame(args, config.camera.source)
    started = time.monotonic()
    seen = enrol(image, Detector(), Reader())
    took = time.monotonic() - started
    record = record_of(seen, table_id=table.table_id, at=time.time())
    enrolments = Enrolments(config.outbox.path.parent / "enrolments")
    folder = enrolments.keep(seen, image, record)
    if args.accept and seen.whole:
        try:
            record = enrolments.accept(record.id, args.by)
        except EnrolmentError as error:
            raise UsageError(str(error)) from None
    jpeg_b64 = base64.b64encode(enrolments.picture_jpeg(record.id)).decode()
    try:
        outbox = Outbox(config.outbox.path, config.outbox.min_free_mb)
        body = record.model_dump(mode="json")
        topic = config.topic(table.table_id, "enrolment")
        outbox.put(topic, body, table_id=record.table_id, kind="enrolment", evidence_jpeg=jpeg_b64)
        outbox.close()
    except OutboxError as error:  # kept, and in force if accepted; the room was not told
        raise UsageError(
            f"{error}: enrolment {record.id} is kept in {folder} but the room was not told"
        ) from None
    if record.accepted_by:
        verdict = f"accepted by {record.accepted_by}: the box reads by it from now on"
    elif seen.whole:
        verdict = "not accepted yet: check the picture, then run again with --accept --by NAME"
    else:
        verdict = "refused: the box stays on its previous enrolment"
    data = {**record.model_dump(mode="json"), "folder": str(folder), "seconds": round(took, 2)}
    human = "\n".join([
        seen.summary(), "", seen.table(), "",
        f"{record.id}: {verdict}",
        f"picture: {folder / 'picture.jpg'} ({took:.1f} s)",
    ])  # fmt: skip
    _emit(args, data, human)
    return 0 if seen.whole else 1


def cmd_replay(args: argparse.Namespace) -> int:
    from vision.replay import LabelSource, ModelSource, Source, replay
    from vision.table import TableConfig

    video = Path(args.video)
    if not video.is_file():
        raise UsageError(f"no video at {video}")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is a file: give a folder")
    table = TableConfig.read(Path(args.table))
    options = _cut_options(args.cut, args.cut_option)
    source: Source
    if args.labels:
        source = LabelSource(Path(args.labels))
    else:
        try:
            source = ModelSource(reuse=not args.whole_frames)
        except FileNotFoundError as error:
            raise UsageError(
                f"{error}: no detector is shipped yet (docs/detector.md); a simulated round "
                "replays with --labels ITS/frames.json.gz"
            ) from None
    summary = replay(
        video,
        table,
        Path(args.out),
        source,
        fps=args.fps,
        cut=args.cut,
        cut_options=options or None,
        progress=not args.json,
    )
    data = {"out": args.out, **vars(summary)}
    human = (
        f"{args.out}: {summary.rounds} round(s), {summary.alerts} alert(s) from "
        f"{summary.analysed} analysed frames of {summary.frames}"
    )
    for line in (Path(args.out) / "alerts.jsonl").read_text().splitlines():
        alert = json.loads(line)
        human += (f"\n  {alert['evidence_time_s']:7.1f} s  {alert['kind']} ({alert['severity']}): "
                  f"{alert.get('summary') or alert.get('observed')}")  # fmt: skip
    return _emit(args, data, human)


class _JsonLogs(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(
            {
                "at": round(record.created, 3),
                "level": record.levelname.lower(),
                "logger": record.name,
                "message": record.getMessage(),
            }
        )


def cmd_run(args: argparse.Namespace) -> int:
    from edge.app import EdgeApp
    from edge.comms import TransportError
    from edge.config import EdgeConfig
    from edge.outbox import OutboxError

    config = EdgeConfig.load(Path(args.config))
    handler = logging.StreamHandler()
    if config.observability.log_format == "json":
        handler.setFormatter(_JsonLogs())
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    try:
        EdgeApp(config).run()
    except (TransportError, OutboxError) as error:
        raise UsageError(str(error)) from None
    return 0


def _setting(name: str) -> str | None:
    """A setting from the environment: NAME, or the contents of the file NAME_FILE (how
    Docker hands over secrets, so a password never shows in `ps` or `docker inspect`)."""
    path = os.environ.get(f"{name}_FILE")
    if path:
        try:
            return Path(path).read_text().strip()
        except OSError as error:
            raise UsageError(f"cannot read {name}_FILE {path}: {error.strerror}") from None
    return os.environ.get(name)


def _store(url: str | None, *, existing: bool = False) -> Any:
    """The incident store; `existing`: refuse a SQLite file that is not there rather than make
    an empty one (a report or a review of nothing, quietly)."""
    from room.store import Store

    url = url or _setting("PAIGOW_STORE") or "paigow-room.sqlite"
    if "://" not in url:
        if existing and not Path(url).is_file():
            raise UsageError(f"no incident store at {url} (give --store)")
        url = f"sqlite:///{Path(url).resolve()}"
    try:
        return Store.open(url)
    except Exception as error:  # SQLAlchemy and the drivers raise many kinds, over many lines
        from sqlalchemy.engine import make_url

        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        try:
            shown = make_url(url).render_as_string(hide_password=True)
        except Exception:  # not even a URL: nothing in it to hide
            shown = url
        raise UsageError(f"cannot open the incident store {shown}: {first}") from None


CUT_OPTIONS_HELP = "a cut's option, repeatable: side=left|right, layer=top|bottom, end=head|tail"


def _cut_options(cut_id: str | None, items: list[str]) -> dict[str, str]:
    """`--cut-option KEY=VALUE` items, checked against the cut they belong to."""
    options = {}
    for item in items:
        key, _, value = item.partition("=")
        if not value:
            raise UsageError(f"write cut options as key=value (side=right), got {item!r}")
        options[key] = value
    if options and not cut_id:
        raise UsageError("--cut-option needs --cut: options belong to a cut")
    if cut_id:
        cut, implied = find_cut(cut_id)  # an unknown cut or option: DealError, one line
        unknown = set(options) - {"side", "layer", "end"}
        if unknown:
            raise UsageError(f"cut options are side, layer and end, got {sorted(unknown)}")
        cut.options(**{**implied, **options})
    return options


def _when(text: str) -> float:
    import datetime as dt

    try:
        return dt.datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise UsageError(f"write times as 2026-11-22 or 2026-11-22T06:00, got {text!r}") from None


def _broker(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise UsageError(f"write the broker as HOST:PORT with a port from 1 to 65535, got {text!r}")
    return host, int(port)


def cmd_demo(args: argparse.Namespace) -> int:
    from room.demo import run_demo

    broker = _broker(args.broker) if args.broker else None
    run_demo(
        Path(args.dir), port=args.port, broker=broker, speed=args.speed, serve=not args.no_serve
    )
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    import secrets

    import uvicorn

    from room.web import create_app

    if (args.tls_cert is None) != (args.tls_key is None):
        raise UsageError("give both --tls-cert and --tls-key, or neither")
    for path in filter(None, (args.tls_cert, args.tls_key)):
        if not Path(path).is_file():
            raise UsageError(f"no file at {path}")
    if args.tls_cert and args.plain_http:
        raise UsageError("--plain-http and --tls-cert contradict each other")
    secret = _setting("PAIGOW_SECRET") or secrets.token_urlsafe(32)
    app = create_app(_store(args.store, existing=True), secret, secure_cookie=not args.plain_http)
    if args.tls_cert:
        print(f"Review UI: https://{args.host}:{args.port}/")
    else:
        cookie = "" if args.plain_http else " (behind an HTTPS proxy: its cookie is HTTPS-only)"
        print(f"Review UI: http://{args.host}:{args.port}/{cookie}")
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        ssl_certfile=args.tls_cert,
        ssl_keyfile=args.tls_key,
    )
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    import threading

    from room.ingest import Ingest

    host, port = _broker(args.broker)
    password = None
    if args.password_file:
        try:
            password = Path(args.password_file).read_text().strip()
        except OSError as error:
            raise UsageError(
                f"cannot read --password-file {args.password_file}: {error.strerror}"
            ) from None
    if args.ca_file and not Path(args.ca_file).is_file():
        raise UsageError(f"no CA file at {args.ca_file}")
    ingest = Ingest(
        _store(args.store),
        host=host,
        port=port,
        group=args.group,
        client_id=args.client_id,
        username=args.username,
        password=password,
        ca_file=args.ca_file,
    )
    stop = threading.Event()
    import signal

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    shown = ingest.store.engine.url.render_as_string(hide_password=True)
    print(f"ingesting from mqtt://{host}:{port} into {shown}", file=sys.stderr)
    ingest.run(stop)
    print(json.dumps(vars(ingest.stats)))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from room.report import write_report

    since, until = _when(args.since), _when(args.until)
    if until <= since:
        raise UsageError("--to must be after --from")
    html, pdf, picture = write_report(
        _store(args.store, existing=True), since, until, args.table, Path(args.out)
    )
    data = {"html": str(html), "pdf": str(pdf), "first_page": str(picture)}
    return _emit(args, data, f"{html}\n{pdf}")


def cmd_retention(args: argparse.Namespace) -> int:
    deleted = _store(args.store, existing=True).expire_evidence(args.days)
    return _emit(
        args,
        {"deleted": deleted},
        f"deleted {deleted} evidence images older than {args.days:g} days",
    )


def cmd_users(args: argparse.Namespace) -> int:
    from room.store import StoreError

    store = _store(args.store)  # a store that cannot be opened is said before asking
    try:
        password = os.environ.get("PAIGOW_NEW_PASSWORD") or getpass.getpass(
            f"password for {args.name}: "
        )
    except EOFError:
        raise UsageError("no password typed (or set PAIGOW_NEW_PASSWORD)") from None
    try:
        store.add_user(args.name, password, args.role, by="cli")
    except StoreError as error:
        raise UsageError(str(error)) from None
    return _emit(args, {"user": args.name, "role": args.role}, f"{args.name} is a {args.role}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="paigow", description="Pai Gow tiles table monitor.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    def command(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--json", action="store_true", help="print JSON instead of text")
        sub.set_defaults(handler=handler)
        return sub

    def rules_option(sub: argparse.ArgumentParser, required: bool = True) -> None:
        sub.add_argument(
            "--rules", required=required, metavar="RULESET", help="nz-1998, act-2005, ..."
        )

    sub = command("house-way", cmd_house_way, "Set four tiles the house way, citing the clause.")
    rules_option(sub)
    sub.add_argument("tiles", nargs="+", metavar="TILE", help="four tiles in pips, e.g. 6-6")

    sub = command("check-setting", cmd_check_setting, "Was an observed setting the house way?")
    rules_option(sub)
    sub.add_argument("setting", metavar="'HIGH HIGH / LOW LOW'")

    sub = command("compare", cmd_compare, "Match a player's set hand against the bank's.")
    rules_option(sub)
    sub.add_argument("--bank", required=True, metavar="'HIGH HIGH / LOW LOW'")
    sub.add_argument("--player", required=True, metavar="'HIGH HIGH / LOW LOW'")

    sub = command("deal-order", cmd_deal_order, "Which position gets each group and stack.")
    rules_option(sub)
    sub.add_argument("--dice", required=True, nargs="+", type=int, metavar="DIE", help="e.g. 2 4 1")
    sub.add_argument("--banker", required=True, type=_position, help="the banker's position, 1..8")
    sub.add_argument("--adjust", type=int, choices=(4, -4), help="NZ 9.6: +4 or -4")
    sub.add_argument("--cut", default="yat-dong-dong", help="cut id (`paigow cuts` lists them)")
    sub.add_argument("--side", choices=("left", "right"), help="default: as the rule book draws")
    sub.add_argument("--layer", choices=("top", "bottom"), help="default: as the rule book draws")
    sub.add_argument("--end", choices=("head", "tail"), help="default: as the rule book draws")
    sub.add_argument("--grid", metavar="'G G ... / G ...'", help="the table's own order: 32 groups")

    sub = command("check-set", cmd_check_set, "Check tiles seen against the 32-tile set.")
    sub.add_argument("tiles", nargs="+", metavar="TILE", help="tiles in pips, e.g. 6-6 4-5")
    sub.add_argument("--whole-set", action="store_true", help="all 32 should be present")

    synth = commands.add_parser("synth", help="The synthetic table: data sets, rounds, gallery.")
    synth_commands = synth.add_subparsers(
        dest="synth_command", metavar="WHAT", parser_class=_Parser
    )
    synth_commands.required = True

    def synth_command(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        sub = synth_commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--json", action="store_true", help="print JSON instead of text")
        sub.add_argument("--seed", type=int, default=0, help="the same seed draws the same")
        sub.add_argument("--out", required=True, help="output folder (file for gallery)")
        sub.set_defaults(handler=handler)
        return sub

    sub = synth_command("dataset", cmd_synth_dataset, "Render a labelled data set for YOLO.")
    sub.add_argument("--n", type=_count, required=True, help="number of images")
    sub.add_argument(
        "--resolution",
        metavar="WxH",
        help="fix every image's size, e.g. 1920x1080 (default: mixed)",
    )
    sub.add_argument("--close-ups", type=_share, default=0.35, help="share of zone close-ups")
    sub.add_argument(
        "--cocked-dice", type=_share, default=0.05, help="share of dice leaning on an edge"
    )
    sub.add_argument(
        "--families",
        help="appearance families the images take turns in: 'all' or a comma-separated list of "
        "house, classic, ivory, navy, charcoal, cream (default: the house look only)",
    )
    sub.add_argument("--workers", type=_count, default=1, help="rendering processes (default 1)")
    sub = synth_command("round", cmd_synth_round, "Render a whole round: video + ground truth.")
    rules_option(sub)
    sub.add_argument(
        "--irregularity",
        action="append",
        metavar="KIND",
        help="inject one (repeatable): " + ", ".join(k.value for k in CATALOGUE),
    )
    sub.add_argument("--cut", help="cut id (default: drawn from the rule book's cuts)")
    sub.add_argument(
        "--context",
        action="store_true",
        help="draw who banks and the cut as the rule book has them chosen (NZ 9.5, ACT "
        "8.6-8.7, MBS 3.9, RWS the table's list)",
    )
    sub.add_argument("--fps", type=_rate, default=10.0, help="frames a second (default 10)")
    sub.add_argument("--resolution", metavar="WxH", default="1280x720", help="video size")
    synth_command("gallery", cmd_synth_gallery, "Render the gallery contact sheet.")
    sub = synth_command(
        "display",
        cmd_synth_display,
        "Render a table's opening display (NZ 8.0) for `paigow enrol`: image + truth.json.",
    )
    sub.add_argument("--family", default="house", help="an appearance family: house, classic, …")
    sub.add_argument("--arrangement", choices=("rows", "line", "scattered"), default="rows",
                     help="rows of eight or one line in order of rank, or scattered")  # fmt: skip
    sub.add_argument("--fault", choices=("foreign", "missing", "doubled", "face-down"),
                     help="one tile wrong: another set's, missing, a face twice, or laid face "
                     "down")  # fmt: skip
    sub.add_argument("--resolution", metavar="WxH", default="1920x1080", help="image size")

    sub = command("calibrate", cmd_calibrate, "Write table.yaml from an overhead frame.")
    sub.add_argument("image", metavar="IMAGE")
    sub.add_argument("--out", default="table.yaml", help="where the calibration goes")
    sub.add_argument(
        "--table-id",
        required=True,
        type=_table_id,
        help="as alerts name it: 1-64 of A-Z a-z 0-9 _.:-",
    )
    rules_option(sub)
    sub.add_argument("--banker", type=_position, default=1, help="default banker's position (1..8)")
    sub.add_argument(
        "--cut", default="yat-dong-dong", help="the table's usual cut (`paigow cuts` lists them)"
    )
    sub.add_argument("--cut-option", action="append", default=[], metavar="KEY=VALUE",
                     help=CUT_OPTIONS_HELP)  # fmt: skip
    sub.add_argument(
        "--points",
        metavar="'x,y x,y x,y x,y'",
        help="image points of the 4 marker centres (near left, near right, far "
        "right, far left) when the markers cannot be seen",
    )

    sub = command("detect", cmd_detect, "Detect and read the tiles and dice in an image.")
    sub.add_argument("image", metavar="IMAGE")
    sub.add_argument("--annotate", metavar="OUT.png", help="also draw the detections")

    sub = command("replay", cmd_replay, "Follow the rounds in a table video; write alerts.")
    sub.add_argument("video", metavar="VIDEO")
    sub.add_argument("--table", required=True, help="the table's table.yaml (paigow calibrate)")
    sub.add_argument("--out", required=True, help="folder for alerts.jsonl, rounds.jsonl, evidence")
    sub.add_argument("--fps", type=_rate, default=10.0, help="frames analysed a second")
    sub.add_argument("--cut", help="the cut dealt (default: any the table may deal)")
    sub.add_argument("--cut-option", action="append", default=[], metavar="KEY=VALUE",
                     help=CUT_OPTIONS_HELP)  # fmt: skip
    sub.add_argument(
        "--labels",
        metavar="FRAMES.json.gz",
        help="a simulated round's own labels instead of the models",
    )
    sub.add_argument(
        "--whole-frames",
        action="store_true",
        help="the models look at every frame whole (by default they look again only where it "
        "changed, about 4x faster on a 2-core CPU: docs/benchmarks.md)",
    )

    sub = command("run", cmd_run, "Run the table box: camera in, alerts out over MQTT.")
    sub.add_argument("--config", required=True, metavar="edge.yaml")

    sub = command("demo", cmd_demo, "The whole product on this machine, nothing configured.")
    sub.add_argument("--dir", default="paigow-demo", help="where the demo keeps its files")
    sub.add_argument("--port", type=_port, default=8000, help="the review UI's port on 127.0.0.1")
    sub.add_argument(
        "--broker",
        metavar="HOST:PORT",
        help="go through MQTT and ingest (default: straight to the store)",
    )
    sub.add_argument("--speed", type=_rate, default=1.0, help="replay speed (1 = real time)")
    sub.add_argument("--no-serve", action="store_true", help="stop after the replay")

    store_help = (
        "SQLAlchemy URL or SQLite file (default: PAIGOW_STORE, or the file PAIGOW_STORE_FILE "
        "names, else paigow-room.sqlite)"
    )
    sub = command("review", cmd_review, "Serve the surveillance room's review UI.")
    sub.add_argument("--store", help=store_help)
    sub.add_argument("--host", default="127.0.0.1", help="address to listen on")
    sub.add_argument("--port", type=_port, default=8000, help="port to listen on")
    sub.add_argument(
        "--plain-http",
        action="store_true",
        help="send the session cookie over plain HTTP too (loopback or a trusted network "
        "only; by default it is HTTPS-only and browsers are told to keep to HTTPS)",
    )
    sub.add_argument("--tls-cert", metavar="PEM", help="serve HTTPS with this certificate chain")
    sub.add_argument("--tls-key", metavar="PEM", help="and this private key")

    sub = command("ingest", cmd_ingest, "Store every table's alerts and rounds from MQTT.")
    sub.add_argument("--broker", required=True, metavar="HOST:PORT", help="e.g. localhost:1883")
    sub.add_argument("--store", help=store_help)
    sub.add_argument("--group", default="ingest", help="shared subscription group")
    sub.add_argument(
        "--client-id",
        default="paigow-ingest",
        help="MQTT client id: one per worker, kept across restarts",
    )
    sub.add_argument("--username", help="broker user (default: none)")
    sub.add_argument("--password-file", metavar="FILE", help="the broker user's password")
    sub.add_argument(
        "--ca-file", metavar="PEM", help="verify the broker's TLS certificate (TLS on)"
    )

    sub = command("report", cmd_report, "Write a shift report (HTML and PDF).")
    when = "local time, as 2026-11-22 or 2026-11-22T06:00"
    sub.add_argument("--from", dest="since", required=True, metavar="WHEN", help=f"start, {when}")
    sub.add_argument("--to", dest="until", required=True, metavar="WHEN", help=f"end, {when}")
    sub.add_argument("--table", help="one table's id (default: every table)")
    sub.add_argument("--store", help=store_help)
    sub.add_argument("--out", default="report", help="folder for report.html and report.pdf")

    sub = command(
        "enrol",
        cmd_enrol,
        "Learn the table's own tile set from its opening display (NZ 8.0): the 32 tiles face up "
        "in order of rank and the dice. Exit 1 when the set is refused.",
    )
    sub.add_argument("--config", required=True, help="the box's edge.yaml")
    frame = sub.add_mutually_exclusive_group(required=True)
    frame.add_argument(
        "--image", help="a frame of the display (an image, or a video's first frame)"
    )
    frame.add_argument("--camera", action="store_true", help="grab a frame from the box's camera")
    sub.add_argument(
        "--accept", action="store_true", help="accept a whole set: the box reads by it"
    )
    sub.add_argument("--by", help="who checked the display and accepts it (with --accept)")

    sub = command("retention", cmd_retention, "Delete evidence images older than N days.")
    sub.add_argument("--days", type=_rate, required=True, help="keep evidence this many days")
    sub.add_argument("--store", help=store_help)

    sub = command("users", cmd_users, "Add or change a review UI user.")
    sub.add_argument("name")
    sub.add_argument("--role", choices=("viewer", "reviewer", "admin"), required=True)
    sub.add_argument("--store", help=store_help)

    sub = command("train", cmd_train, "Train the detector and reader (needs the [train] extra).")
    sub.add_argument("--data", required=True, nargs="+", help="`paigow synth dataset` folders")
    sub.add_argument("--epochs", type=_count, default=30, help="detector epochs")
    sub.add_argument("--hours", type=_rate, help="stop the detector after this many hours")
    sub.add_argument(
        "--weights",
        help="start the stage's model from this checkpoint (.pt; with `both`, the detector's); "
        "a reader checkpoint with other classes passes on all but its last layer; the detector "
        "and the reader also go on from an exported one (models/detector.onnx, "
        "models/reader.onnx)",
    )
    sub.add_argument("--reader-epochs", type=_count, default=12, help="reader epochs")
    sub.add_argument(
        "--rounds",
        type=int,
        default=80,
        help="simulated rounds whose frames, boxed by the shipped detector, add reader crops",
    )
    sub.add_argument(
        "--stage",
        choices=("detector", "reader", "both", "flatness", "dice", "refiner", "refiner-2"),
        default="both",
        help="both: the detector and the reader; flatness: the dice flatness reader; dice: a "
        "reader of dice alone (with --real-dice, real photographs' dice too); refiner: "
        "the box refiner, on the shipped detector's boxes; refiner-2: its second, closer stage, "
        "on the boxes the shipped refiner gives (--reader-epochs sets a refiner's epochs)",
    )
    sub.add_argument(
        "--real-dice",
        help="with --stage dice: real dice crops (scripts/fetch_real_dice.py's reader/ folder)",
    )
    sub.add_argument("--out", default="runs", help="where training runs go (never committed)")

    sub = command("quantize", cmd_quantize, "Quantise an exported detector to 8 bits (needs onnx).")
    sub.add_argument(
        "model", help="the detector as `paigow train` exports it, or an 8-bit one to quantise anew"
    )
    sub.add_argument("--data", nargs="+", help="training data sets to calibrate on")
    sub.add_argument("--frames", type=_count, default=40, help="calibration frames")
    sub.add_argument("--out", default="models/detector.onnx", help="the 8-bit model")
    sub.add_argument(
        "--decoding-only",
        action="store_true",
        help="only rewrite MODEL's box decoding in place, to run faster with the same answers",
    )

    command("rulesets", cmd_rulesets, "List the rule books.")
    sub = command("cuts", cmd_cuts, "List the cuts (those a rule book names, with --rules).")
    rules_option(sub, required=False)
    sub = command("irregularities", cmd_irregularities, "List the irregularity catalogue.")
    rules_option(sub, required=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # One line per failure: OpenCV's and FFmpeg's own warnings ("moov atom not found") would
    # print before ours. Set either variable to see them.
    os.environ.setdefault("OPENCV_LOG_LEVEL", "ERROR")
    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        handler: Handler = args.handler
        return handler(args)
    except (UsageError, ValueError) as error:
        print(f"paigow: error: {error}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:  # an install without the extra this command needs
        print(
            f"paigow: error: this command needs the package {error.name!r}, not installed here: "
            "the room's commands need `pip install 'paigow-monitor[room]'`, training '[train]'",
            file=sys.stderr,
        )
        return 2
    except OSError as error:  # a path the command cannot use, named with the system's reason
        where = f" {error.filename}" if error.filename else ""
        said = f"cannot use{where}: {error.strerror}" if error.strerror else str(error)
        print(f"paigow: error: {said}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
