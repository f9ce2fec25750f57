"""How well rounds are followed: simulated rounds with fresh seeds, each clean or with one
injected irregularity, through calibration and the round follower; the report goes to
runs/accuracy/report.md (`--out`), never over `docs/accuracy.md`, whose tables are chosen from
such reports by hand.

    python3 -m vision.training.accuracy --rounds 330 --workers 2              # perfect detections
    python3 -m vision.training.accuracy --rounds 60 --source models --out ... # the shipped models

`--source labels` feeds the simulator's own labels in place of the detector and reader: it
measures the round logic alone (an upper bound); `--source models` runs the whole pipeline.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import inspect
import json
import pickle
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
import onnxruntime

from rules import CUTS, FULL_SET, CutChoice, Irregularity, Tile, find_ruleset, stack_signature
from vision import crops, detector, refine
from vision import reuse as reuse_module
from vision.detections import Detections
from vision.detector import MODEL_FILES, MODELS
from vision.follow import RoundFollower
from vision.follow.delivery import CUT
from vision.follow.judge import permitted_choices
from vision.follow.records import Alert, RoundRecord
from vision.layout import TableLayout
from vision.progress import each
from vision.synth.round import (
    DELIVERY_EACH,
    EXPOSE_EACH,
    EXPOSED_EARLY,
    FPS,
    INJECTABLE,
    SWAP_MOVE,
    TABLE_CUTS,
    Plan,
    Studio,
    Timeline,
    ground_truth,
    plan_round,
)
from vision.table import CalibrationError, TableConfig, calibrate

RULES = ("nz-1998", "act-2005", "rws-2018", "mbs-2020")
SEED_BASE = 700_000  # data sets and fixtures use seeds below 10,000
LATENCY_TARGET = 1.0
"""Seconds from when an irregularity shows to its alert (issue 5)."""


@dataclass(frozen=True)
class Outcome:
    seed: int
    rules: str
    injected: str | None
    raised: list[str]
    latency: dict[str, float]
    hands_exact: int
    hands_checked: int
    record_found: bool
    seconds: float
    frames: int
    error: str | None = None
    confidence: dict[str, float] = field(default_factory=dict)
    """Each raised kind's first alert's confidence."""
    layers_only: bool = False
    """A wrong cut order that leaves every group taking as many tiles from each stack as the
    cut says (`layers_only`)."""
    flat_flights_only: bool = False
    """A wrong cut order only flights too flat to trace would show (`flat_flights_only`)."""
    missing_set_aside: bool = False
    """The tile missing from the set was dealt to the box out of play (`missing_set_aside`)."""
    foreign_set_aside: bool = False
    """The foreign tile's face shows in play no more often than the set holds it
    (`foreign_set_aside`)."""
    context: bool = False
    """The round drew who banks and its cut as its rule book has them chosen, and the follower
    was told nothing but the table's configuration (`plan_round(context=True)`)."""
    cut_known: str = ""
    cut_right: bool = False
    """The round record's cut deals the same blocks from the same stacks as the one dealt."""
    cut_fits: int = 1
    """Permitted cut choices the record says the delivery fits (itself included)."""
    other_cut_fits: bool = False
    """A wrong cut order whose delivery is exactly some other permitted cut's, seen from above."""
    banker_right: bool = False
    """The round record's banker box is the one the chung lay on."""
    co_bank_right: bool = False
    """The record says co-bank exactly when the chung's face said co-banker."""
    banker_known: str = ""
    bank: str = ""
    """Who banked: house, player or co-bank."""
    bank_read: str | None = None
    """Who the round record says banks (None: not known)."""
    bank_known: str = ""
    adjust: int = 0
    """The +4 or -4 a player/banker nominated (NZ 9.6), its button on the table."""
    adjust_right: bool = False
    """The round record's `adjust` is the one nominated."""
    set_up: list[int] = field(default_factory=list)
    """The stacks (1-8) the dealer pushed to show the cut before delivery (MBS App. D)."""
    set_up_read: list[int] = field(default_factory=list)
    """The stacks the round record says were pushed."""
    off_box: int | None = None
    """The box out of play, its "Off" button on it (NZ 12.10, MBS 5.6.1)."""
    off_right: bool = False
    """The round record's `off_box` is that box (or None, where there was none)."""
    swap_misplaced: list[int] = field(default_factory=list)
    """Boxes a `hands-swapped` alert was raised at (the lower of the two it names) whose hand
    was not one of the two swapped: the kind right, the boxes wrong (a hand in flight taken for
    one set down on its way)."""
    declined: str | None = None
    """The irregularity planned for the round that its bank makes none: a player/banker sets
    their own hand as they like (`rules.house_sets_bank`), so the round is followed as clean."""


def layers_only(plan: Plan) -> bool:
    """Whether the cut order dealt differs from the cut's only in which layer of a stack went
    to which group: each group still takes as many tiles from each stack, at its own turn. A
    camera looking down sees such a delivery exactly as the right one (the backs are alike;
    telling the layers apart takes a side view or depth), so the report counts these apart."""
    right = meant_grid(plan)
    return right != plan.grid and stack_signature(right) == stack_signature(plan.grid)


def meant_grid(plan: Plan) -> tuple[tuple[int, ...], ...]:
    """The group each cell goes to under the round's cut as meant, whatever was dealt."""
    cut = CUTS[plan.cut]
    return cut.grid(cut.options(**plan.cut_options))


def flat_flights_only(plan: Plan, layout: TableLayout | None = None) -> bool:
    """Whether the cut order dealt shows only in blocks flown to boxes whose flights meet the
    stacks' row too flat to trace (`vision.follow.delivery.CUT.shallow`: boxes 1 and 8): every
    group it moves goes to such a box, and each stack still loses its last tile to the group
    the cut says, so no stack stands or goes out of turn. The follower, as built, has nothing
    to see there (round 1580015: `dai-pin`, groups 5 and 6, the third layer's two halves, to
    boxes 8 and 1), so the report counts these apart."""
    layout = layout or TableLayout()  # the simulated table's (`Studio.of`)
    right = meant_grid(plan)
    if right == plan.grid or layers_only(plan):
        return False
    moved = {group for row, dealt in zip(right, plan.grid, strict=True)
             for a, b in zip(row, dealt, strict=True) if a != b for group in (a, b)}  # fmt: skip
    stacks = np.array(layout.stack_area)
    flat = set()
    for position, spot in enumerate(layout.hand_spots, 1):
        flight = np.asarray(spot) - stacks
        if abs(flight[1]) < CUT.shallow * np.linalg.norm(flight):
            flat.add(position)
    if any(plan.group_positions[group - 1] not in flat for group in moved):
        return False

    def emptied_by(grid: tuple[tuple[int, ...], ...]) -> list[int]:
        return [max(layer[stack] for layer in grid) for stack in range(len(grid[0]))]

    return emptied_by(right) == emptied_by(plan.grid)


def missing_set_aside(plan: Plan) -> bool:
    """Whether the tile missing from the set was one dealt to the box out of play, whose hand is
    set aside face down unplayed (MBS 3.12, NZ 11.1(a)): no face of it shows and its blocks lie
    two high, so seen from above the hands in play hold every tile the round expects. The
    report counts these apart."""
    aside = plan.set_aside
    missing = any(i["kind"] == "missing-tile" for i in plan.irregularities)
    return missing and aside is not None and len(plan.hands[aside]) < 4


def foreign_set_aside(plan: Plan) -> bool:
    """Whether a foreign tile (a face of the set, once too often) shows in play no more often
    than the set holds its face: the copy too many, or the tile it doubles, lies in the hand of
    the box out of play, set aside face down unplayed, so seen from above the hands in play are
    part of a genuine set (1610235, 1010247). The report counts these apart."""
    aside = plan.set_aside
    if aside is None or not any(i["kind"] == "foreign-tile" for i in plan.irregularities):
        return False
    shown = Counter(
        Tile.parse(plan.faces[tile])
        for position, tiles in plan.hands.items()
        if position != aside
        for tile in tiles
    )
    return all(count <= FULL_SET[face] for face, count in shown.items())


def other_cut_fits(plan: Plan, table: TableConfig) -> bool:
    """Whether a wrong cut order's delivery is, seen from above, exactly some cut the table may
    deal: then no camera could call it wrong without seeing the set-up or being told the cut."""
    dealt = CUTS[plan.cut].options(**plan.cut_options)
    if stack_signature(CutChoice(plan.cut, dealt)) == stack_signature(plan.grid):
        return False
    cuts = [table.cut, *table.cuts]
    choices = permitted_choices(table.rules, table.bank, cuts)
    return stack_signature(plan.grid) in {stack_signature(c) for c in choices}


def evidence_time(studio: Studio, kind: str) -> float:
    """When the simulated irregularity first becomes visible: the bar for alert latency."""
    plan, tl = studio.plan, Timeline.of()
    exposed = {plan.banker: tl.bank} | {
        p: tl.exposure + (k - 1) * EXPOSE_EACH for k, p in enumerate(plan.exposure_order) if k
    }
    found = next(i for i in plan.irregularities if i["kind"] == kind)
    if kind in ("dice-not-flat", "wrong-dice-count"):
        return tl.dice
    if kind == "wrong-first-position":
        return tl.delivery + DELIVERY_EACH
    if kind == "wrong-cut-order":  # the first block out of turn is lifted
        first = min(found["groups_swapped"])  # type: ignore[call-overload]
        return tl.delivery + (first - 1) * DELIVERY_EACH
    if kind == "exposed-tile-stacking":
        return tl.stacking - EXPOSED_EARLY
    if kind == "exposed-tile-dealing":
        tid = plan.exposed_while_dealing
        assert tid is not None
        layer, stack = plan.cells[tid]
        return tl.delivery + (plan.grid[layer][stack] - 1) * DELIVERY_EACH
    if kind == "house-way-violation":
        return tl.bank
    if kind == "foreign-tile":
        holders = [
            p for p, ids in plan.hands.items() if any(plan.faces[i] == found["tile"] for i in ids)
        ]
        return sorted(exposed[p] for p in holders)[-1]
    if kind == "wrong-hand-size":  # a hand of five shows it; one of three may be a tile missing
        sizes = found["sizes"].items()  # type: ignore[attr-defined]
        over = next(int(p) for p, size in sizes if size > 4)
        if over in exposed:
            return exposed[over]
        # the box out of play's, never exposed: its third stack shows once both the tile and
        # the box's own block have landed
        assert plan.moved_tile is not None
        layer, stack = plan.cells[plan.moved_tile[0]]
        own = plan.group_positions.index(over) + 1
        return tl.delivery + max(plan.grid[layer][stack], own) * DELIVERY_EACH
    if kind == "missing-tile":
        return max(exposed.values())
    if kind == "off-box-played":  # the box out of play's hand is turned face up
        return exposed[int(found["position"])]  # type: ignore[call-overload]
    # hands-swapped: each hand is put down in the other's box (until then hands carried over
    # the table could still be going to the bank area or back)
    return tl.setting + SWAP_MOVE


def run_round(
    args: tuple[int, str, str | None, str, tuple[int, int], tuple[str, str, bool] | None, bool],
) -> Outcome:
    """Follow one simulated round. With context (the last of `args`), the round draws who banks
    and its cut as its rule book says, and the follower is told only the table's configuration
    (the simulated table's `cuts` list); without, it is told the round's cut."""
    seed, rules, injected, source, resolution, cached, context = args
    started = time.perf_counter()
    studio = Studio.of(seed, rules, [injected] if injected else [], resolution, context=context)
    truth = ground_truth(studio.plan)
    key = _round_key(seed, rules, injected, resolution, context)
    planned, declined = injected, None
    if injected and injected not in {i["kind"] for i in truth["irregularities"]}:  # type: ignore[attr-defined]
        injected, declined = None, planned
    path, detect = (Path(cached[0]) / f"{key}-{cached[1]}", cached[2]) if cached else (None, True)
    seen = _seen(studio, rules, source, path, detect=detect)
    if isinstance(seen.table, str):
        return Outcome(seed, rules, injected, [], {}, 0, 0, False, 0.0, 0, seen.table)
    if context:
        table = seen.table.model_copy(update={"cuts": list(TABLE_CUTS.get(rules, ()))})
        follower = RoundFollower(table, run=str(seed))
    else:
        table = seen.table
        follower = RoundFollower(
            table, run=str(seed), cut=studio.plan.cut, cut_options=studio.plan.cut_options
        )
    raised = []
    try:
        for index, found in enumerate(seen.frames):
            raised += follower.follow(round(index / FPS, 3), found, None)
        raised += follower.finish(round(studio.frame_count / FPS, 3))
    except Exception as error:  # a follower bug: the round counts as failed, the run goes on
        failure = f"the follower failed: {type(error).__name__}: {error}"
        return Outcome(seed, rules, injected, [], {}, 0, 0, False, 0.0, 0, failure)
    alerts = [r.record for r in raised if isinstance(r.record, Alert)]
    records = [r.record for r in raised if isinstance(r.record, RoundRecord)]
    latency = {}
    for alert in alerts:
        if alert.kind == injected and alert.kind not in latency:
            shown = evidence_time(studio, alert.kind)
            if alert.kind in EXPOSED and seen.first_face is not None:
                shown = seen.first_face  # the tile may show later than its block moves
            latency[alert.kind] = alert.raised_time_s - shown
    exact = checked = 0
    if records:
        seen = records[0].hands
        for position, hand in truth["hands"].items():  # type: ignore[attr-defined]
            if len(hand["tiles"]) != 4 or hand.get("set_aside"):  # a burnt hand is not played
                continue
            checked += 1
            got = seen.get(position)
            exact += got is not None and _same_hand(got.high, got.low, hand["high"], hand["low"])
    sure: dict[str, float] = {}
    for alert in alerts:
        sure.setdefault(alert.kind, alert.confidence)
    plan = studio.plan
    cut = {"cut_known": "", "cut_right": False, "cut_fits": 0}
    set_up = sorted(s + 1 for s in plan.set_up.pushed) if plan.set_up is not None else []
    bank = {"banker_right": False, "co_bank_right": False, "banker_known": "",
            "bank": plan.bank, "bank_read": None, "bank_known": "",
            "adjust": plan.adjust, "adjust_right": False, "off_box": plan.off_box,
            "off_right": False}  # fmt: skip
    if records:
        record = records[0]
        bank |= {
            "banker_right": record.banker == plan.banker,
            "co_bank_right": (record.bank == "co-bank") == (plan.bank == "co-bank"),
            "banker_known": record.banker_known,
            "bank_read": record.bank,
            "bank_known": record.bank_known,
            "adjust_right": record.adjust == plan.adjust,
            "off_right": record.off_box == plan.off_box,
        }
        recorded = CutChoice(record.cut, CUTS[record.cut].options(**record.cut_options))
        dealt = CutChoice(plan.cut, CUTS[plan.cut].options(**plan.cut_options))
        cut = {
            "cut_known": record.cut_known,
            "cut_right": stack_signature(recorded) == stack_signature(dealt),
            "cut_fits": 1 + len(record.cut_alternatives),
            "set_up_read": record.set_up,
        }
    return Outcome(
        seed,
        rules,
        injected,
        sorted({a.kind for a in alerts}),
        latency,
        exact,
        checked,
        bool(records),
        time.perf_counter() - started,
        studio.frame_count,
        confidence=sure,
        layers_only=layers_only(plan),
        flat_flights_only=injected == "wrong-cut-order" and flat_flights_only(plan),
        missing_set_aside=missing_set_aside(plan),
        foreign_set_aside=foreign_set_aside(plan),
        swap_misplaced=(
            boxes_alerted_not_swapped(alerts, plan.swapped) if injected == "hands-swapped" else []
        ),
        declined=declined,
        context=context,
        other_cut_fits=injected == "wrong-cut-order" and other_cut_fits(plan, table),
        set_up=set_up,
        **cut,  # type: ignore[arg-type]
        **bank,  # type: ignore[arg-type]
    )


def boxes_alerted_not_swapped(alerts: list[Alert], swapped: tuple[int, int] | None) -> list[int]:
    """The boxes `hands-swapped` alerts were raised at that are not among the `swapped`."""
    named = {a.position for a in alerts if a.kind == "hands-swapped" and a.position is not None}
    return sorted(named - set(swapped or ()))


@dataclass(frozen=True)
class Seen:
    """What a round looks like to the follower: its calibrated table (or why calibration
    failed), each analysed frame's detections, and when a face-up tile first showed before
    the setting."""

    table: TableConfig | str
    frames: list[Detections]
    first_face: float | None


def _round_key(
    seed: int, rules: str, injected: str | None, resolution: tuple[int, int], context: bool
) -> str:
    """A planned round's name in the cache, before its stamp."""
    key = f"{seed}-{rules}-{injected or 'clean'}-{resolution[0]}x{resolution[1]}"
    return key + ("-context" if context else "")


def _seen(
    studio: Studio, rules: str, source: str, cache: Path | None, *, detect: bool = True
) -> Seen:
    """Calibrate and detect a round's frames; with `cache` (a round's key and `_cache_stamp`),
    they are kept on disk, so that a change to the round logic alone is measured over hundreds
    of rounds from pixels in minutes instead of an hour. Without `detect`, a round the cache
    does not hold fails: its detections were to come from models no longer shipped."""
    path = None
    if cache is not None:
        path = cache.with_name(cache.name + ".pkl")
        if path.is_file():  # plain fields: `Seen` is `__main__.Seen` under `python3 -m`
            return Seen(*pickle.loads(path.read_bytes()))
        if not detect:
            stamp = "-".join(cache.name.rsplit("-", 2)[-2:])
            return Seen(f"not in the cache under stamp {stamp}", [], None)
    table: TableConfig | str = "no frame"
    for t in (0.0, 1.0, 2.0, 25.0):  # as an installer would: a frame where the markers show
        image, _, _ = studio.frame(t)
        try:
            # with context the table says box 1, as most tables would: the chung says where
            # the bank is, and with the chips on the betting boxes who holds it
            banker = 1 if studio.plan.chung else studio.plan.banker
            table = calibrate(image, table_id="sim", rules=rules, banker=banker)
            break
        except CalibrationError as error:
            table = str(error)
    frames: list[Detections] = []
    first_face = None
    if not isinstance(table, str):
        models = None
        if source != "labels":
            from vision.replay import ModelSource

            models = ModelSource(threads=1, reuse=source == REUSE)
        for index in range(studio.frame_count):
            t = round(index / FPS, 3)
            image, objects, _ = studio.frame(t)
            if first_face is None and t < Timeline.of().setting and any(map(_is_face, objects)):
                first_face = t
            found = (
                models.detections(index, t, image) if models else _labels(objects + studio.markers)
            )
            frames.append(found)
    seen = Seen(table, frames, first_face)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps((seen.table, seen.frames, seen.first_face)))
    return seen


def _note_stale(
    cache: Path,
    stamp: str,
    planned: list[tuple[int, str, str | None]],
    resolution: tuple[int, int],
    context: bool,
) -> None:
    """Say, on one line, when the cache holds planned rounds only under other stamps: they are
    detected again (an hour for a few hundred from pixels) unless `--cache-stamp` names one."""
    keys = [_round_key(seed, rules, kind, resolution, context) for seed, rules, kind in planned]
    other = Counter(
        rest
        for key in keys
        if not (cache / f"{key}-{stamp}.pkl").is_file()
        for found in cache.glob(f"{key}-*.pkl")
        if (rest := found.name[len(key) + 1 : -len(".pkl")]).count("-") == stamp.count("-")
    )
    if other:
        stamps = ", ".join(f"{s} ({n})" for s, n in other.most_common())
        print(
            f"note: {cache} holds planned rounds only under other stamps: {stamps}; they are "
            "detected again (--cache-stamp STAMP follows those instead)",
            file=sys.stderr,
        )


def _cache_stamp(source: str) -> str:
    """What made a round's detections: the source (the digests of the models and, looking again,
    of the code that chooses where) and the simulator's digest. Taken once, when a run starts,
    so that an edit made while it runs cannot name rounds it did not make."""
    made_by = _models_digest(source == REUSE) if source != "labels" else source
    return f"{made_by}-{_simulator_digest()}"


def _models_digest(reuse: bool) -> str:
    """The models, the sizes of the crops cut for them (`vision/crops.py`, `vision/refine.py`),
    the columns detections hold and the onnxruntime that runs them, and with `reuse` what counts
    as a change worth looking at again, how a part is cut for a look and which of its objects
    are taken (`vision/reuse.py`, `vision.detector.part_blob`, `Detector.resolve`): a change to
    any makes other detections."""
    digest = hashlib.sha256()
    digest.update(repr([f.name for f in dataclasses.fields(Detections)]).encode())
    digest.update(onnxruntime.__version__.encode())
    for name in MODEL_FILES:
        if (MODELS / name).exists():
            digest.update((MODELS / name).read_bytes())
    marker_looks = (detector.MARKER_CONFIDENCE, detector.CHIPS_CONFIDENCE,
                    detector.MARKER_EVERY_S, detector.CHIPS_EVERY_S)  # fmt: skip
    watching = (detector.MarkerWatch, detector.MarkerDetector.detect)
    digest.update((repr(marker_looks) + "".join(map(inspect.getsource, watching))).encode())
    geometry = (
        (crops.CROP, crops.TILE_MARGIN, crops.DIE_MARGIN, crops.REFINED_LEAN_MARGIN),
        (refine.REFINE_CROP, refine.FIRST.tile, refine.FIRST.die, refine.FIRST.most_shift),
    )
    digest.update(repr(geometry).encode())
    if reuse:
        r = reuse_module
        settings = (r.SIDE, r.BLOCK, r.CHANGED, r.MARGIN, r.MOST, r.REFRESH, r.DOUBT, r.EDGE)
        digest.update(repr(settings).encode())
        code = (
            *(r.Reuse, r.Region, r.changed_regions, r._merged, r._grey, r._exchange, r._within),
            *(r._tiles, r._lost_unchanged, r._changed_blocks, r._block_pixels, r._blocks_under),
            r._regions_around,
        )
        for part in (*code, detector.part_blob, detector.Detector.resolve):
            digest.update(inspect.getsource(part).encode())
    return digest.hexdigest()[:12]


def _models_named() -> str:
    """The models a report was measured with: the shipped ones, or those $PAIGOW_MODELS names
    (a candidate measured before it ships)."""
    files = [f for f in MODEL_FILES if (MODELS / f).exists()]
    if MODELS.resolve() == (Path(__file__).parents[2] / "models").resolve():
        return "**the shipped models** (" + ", ".join(f"`models/{f}`" for f in files) + ")"
    return f"**the models in `{MODELS}`** ($PAIGOW_MODELS: {', '.join(files)}), not shipped ones"


SIMULATOR = Path(__file__).parents[1] / "synth"


def _simulator_digest() -> str:
    """The simulator's code and the OpenCV that draws for it: a change to either renders other
    frames (OpenCV 5 draws a few pixels in a thousand otherwise than 4.14)."""
    digest = hashlib.sha256(cv2.__version__.encode())
    for source in sorted(SIMULATOR.glob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


EXPOSED = ("exposed-tile-stacking", "exposed-tile-dealing")
REUSE = "models-reuse"
"""The source: the shipped models, looking again only where the frame changed."""


def _is_face(obj: dict[str, object]) -> bool:
    label = str(obj["label"])
    return label != "back" and not label.startswith("die-")


def _labels(objects: list[dict[str, object]]) -> Detections:
    if not objects:
        return Detections.empty()
    return Detections(
        np.array([o["corners"] for o in objects], np.float64).reshape(-1, 4, 2),
        np.ones(len(objects)),
        tuple(str(o["label"]) for o in objects),
    )


def _same_hand(high: list[str], low: list[str], want_high: list[str], want_low: list[str]) -> bool:
    return {tuple(sorted(high)), tuple(sorted(low))} == {
        tuple(sorted(want_high)),
        tuple(sorted(want_low)),
    }


def plan_rounds(
    count: int,
    clean_share: float,
    first: int = SEED_BASE,
    kinds: Sequence[Irregularity] = INJECTABLE,
) -> list[tuple[int, str, str | None]]:
    """Seeds, rule books and injections: a share clean, the rest cycling through the kinds
    (every kind, or those measured alone), each kind's books taking turns from one cycle to the
    next. (Books drawn by the round's number alone paired each kind with one book whenever the
    kinds' count is a multiple of the books'.)"""
    clean = round(count * clean_share)
    jobs = []
    for k in range(count):
        if k < clean:
            jobs.append((first + k, RULES[k % len(RULES)], None))
            continue
        turn, index = divmod(k - clean, len(kinds))
        kind = kinds[index]
        off = kind == Irregularity.OFF_BOX_PLAYED  # only some books have an Off button
        books = [b for b in RULES if not off or find_ruleset(b).off_clause is not None]
        jobs.append((first + k, books[(index + turn) % len(books)], kind.value))
    return jobs


def _quiet_line(quiet: int, followed: int, clean: int) -> str:
    """The clean rounds that raised nothing, of those followed: a round that failed (a camera
    framing a marker out of view, 1736039) raised nothing because nothing watched it."""
    share = quiet / max(followed, 1)
    line = f"- Clean rounds without any alert: {quiet} of {followed} followed ({share:.1%})"
    if clean > followed:
        line += f"; {clean - followed} of {clean} not followed (failed, below)"
    return line + "."


def report(
    outcomes: list[Outcome], source: str, resolution: tuple[int, int], command: str, wall: float
) -> str:
    kinds = [k.value for k in INJECTABLE]
    first = min((o.seed for o in outcomes), default=SEED_BASE)
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    injected: Counter[str] = Counter()
    late: dict[str, list[float]] = defaultdict(list)
    for o in outcomes:
        if o.injected:
            injected[o.injected] += 1
        for kind in o.raised:
            if kind == o.injected:
                tp[kind] += 1
            else:
                fp[kind] += 1
        for kind, seconds in o.latency.items():
            late[kind].append(seconds)
    clean = [o for o in outcomes if o.injected is None]
    followed = [o for o in clean if not o.error]  # a round never followed raised nothing
    quiet = sum(not o.raised for o in followed)
    exact = sum(o.hands_exact for o in outcomes)
    checked = sum(o.hands_checked for o in outcomes)
    frames = sum(o.frames for o in outcomes)
    failed = [o for o in outcomes if o.error]
    lines = [
        "# Round following: accuracy",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} over {len(outcomes)} simulated rounds with fresh "
        f"seeds ({first} on, never used for training or fixtures), all four rule books, "
        f"{resolution[0]}x{resolution[1]}, 10 analysed frames a second, each round calibrated "
        "from its own first frame's markers, "
        + (
            "**who banks and the cut drawn as each rule book has them chosen, the follower "
            "told nothing but the table's configuration**. "
            if any(o.context for o in outcomes)
            else "**the follower told each round's cut** (a live box is not). "
        )
        + "Detections: "
        + (
            "**the simulator's labels** (a perfect detector and reader), so these numbers "
            "measure the round logic alone and are an upper bound for the product."
            if source == "labels"
            else _models_named()
            + (
                ", looking again only where the frame changed (`vision/reuse.py`)."
                if source == REUSE
                else ", on every frame whole."
            )
        ),
        "",
        f"Reproduce: `{command}` ({wall / 60:.0f} min here).",
        "",
        "| irregularity | injected | caught | recall | false alerts | precision "
        "| latency p50 / max (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in kinds:
        n, hit, wrong = injected[kind], tp[kind], fp[kind]
        recall = f"{hit / n:.1%}" if n else "-"
        precision = f"{hit / (hit + wrong):.1%}" if hit + wrong else "-"
        times = late.get(kind, [])
        lat = f"{np.median(times):.2f} / {max(times):.2f}" if times else "-"
        lines.append(f"| {kind} | {n} | {hit} | {recall} | {wrong} | {precision} | {lat} |")
    lines += [
        "",
        _quiet_line(quiet, len(followed), len(clean)),
        f"- Hands reconstructed exactly (four tiles and the split): {exact} of {checked} "
        f"positions ({exact / max(checked, 1):.2%}).",
        f"- Rounds with a round record: {sum(o.record_found for o in outcomes)} "
        f"of {len(outcomes)}.",
        f"- Rounds that failed (calibration, or the follower itself): {len(failed)}"
        + "".join(f"; {o.seed}: {o.error}" for o in failed)
        + ".",
        _confidence_line(outcomes),
        *_layers_line(outcomes),
        *_set_aside_line(outcomes),
        *_misplaced_lines(outcomes),
        *_declined_lines(outcomes),
        *_bank_lines(outcomes),
        *_cut_lines(outcomes),
        _late_line(outcomes),
        f"- Frames analysed: {frames}; simulation and following together took "
        f"{sum(o.seconds for o in outcomes):.0f} s of CPU.",
        "",
    ]
    return "\n".join(lines)


def _layers_line(outcomes: list[Outcome]) -> list[str]:
    """wrong-cut-order counted apart for the swaps a camera looking down can see: the table
    above counts every swap; this line says how many of them no overhead view could catch."""
    kind = "wrong-cut-order"
    swaps = [o for o in outcomes if o.injected == kind]
    if not swaps:
        return []
    hidden = [o for o in swaps if o.layers_only]
    other = [o for o in swaps if o.other_cut_fits and not o.layers_only]
    flat = [o for o in swaps if o.flat_flights_only and not o.other_cut_fits]
    seen = [o for o in swaps if not (o.layers_only or o.other_cut_fits or o.flat_flights_only)]
    return [
        f"- {kind}: {len(hidden)} of {len(swaps)} injected swaps only exchange layers (each "
        "group still takes as many tiles from each stack, at its own turn: seen from above, "
        f"the right delivery), of which {sum(kind in o.raised for o in hidden)} caught; "
        + (
            f"{len(other)} deal exactly as another cut the table may deal (seen from above: "
            f"{', '.join(str(o.seed) for o in other)}), of which "
            f"{sum(kind in o.raised for o in other)} caught; "
            if other
            else ""
        )
        + (
            f"{len(flat)} show only in blocks flown to boxes 1 and 8, too flat to trace, every "
            f"stack emptied in turn ({', '.join(str(o.seed) for o in flat)}), of which "
            f"{sum(kind in o.raised for o in flat)} caught; "
            if flat
            else ""
        )
        + _of_the_other(kind, seen),
    ]


def _of_the_other(kind: str, seen: list[Outcome]) -> str:
    """How many of the rounds a view from above can judge raised `kind`, and which did not."""
    caught = sum(kind in o.raised for o in seen)
    missed = ", ".join(str(o.seed) for o in seen if kind not in o.raised) or "none"
    return (
        f"of the other {len(seen)}, {caught} caught ({caught / max(len(seen), 1):.1%}): "
        f"{missed} missed."
    )


def _set_aside_line(outcomes: list[Outcome]) -> list[str]:
    """missing-tile and foreign-tile counted apart where what shows the fault lies in the hand
    set aside unplayed, which no overhead view shows (`missing_set_aside`,
    `foreign_set_aside`); nothing where there were none."""
    lines = []
    cases: tuple[tuple[str, Callable[[Outcome], bool], str, str], ...] = (
        ("missing-tile", lambda o: o.missing_set_aside, "were missing from",
         "every hand in play whole"),
        ("foreign-tile", lambda o: o.foreign_set_aside, "doubled a face with a tile in",
         "every hand in play part of a genuine set"),
    )  # fmt: skip
    for kind, hidden, what, shows in cases:
        injected = [o for o in outcomes if o.injected == kind]
        aside = [o for o in injected if hidden(o)]
        if not aside:
            continue
        seen = [o for o in injected if not hidden(o)]
        lines.append(
            f"- {kind}: {len(aside)} of {len(injected)} injected tiles {what} the hand of the "
            f"box out of play, set aside face down unplayed (seen from above, {shows}: "
            f"{', '.join(str(o.seed) for o in aside)}), of which "
            f"{sum(kind in o.raised for o in aside)} caught; " + _of_the_other(kind, seen)
        )
    return lines


def _misplaced_lines(outcomes: list[Outcome]) -> list[str]:
    """Swaps caught, but with an alert naming a box whose hand stayed put (counted caught in
    the table above, which checks the kind alone)."""
    swaps = [o for o in outcomes if o.injected == "hands-swapped"]
    if not swaps:
        return []
    wrong = [o for o in swaps if o.swap_misplaced]
    named = ", ".join(f"{o.seed}: box {', '.join(map(str, o.swap_misplaced))}" for o in wrong)
    return [
        f"- hands-swapped: {len(wrong)} of {len(swaps)} swaps also alerted at a box whose "
        "hand was not swapped" + (f" ({named})." if named else ".")
    ]


def _declined_lines(outcomes: list[Outcome]) -> list[str]:
    """Rounds planned with an irregularity their bank makes none (counted clean above)."""
    declined = Counter(o.declined for o in outcomes if o.declined)
    if not declined:
        return []
    return [
        "- Planned but no irregularity for the round's bank, so followed and counted as clean "
        "rounds: "
        + ", ".join(f"{n} {kind}" for kind, n in sorted(declined.items()))
        + " (a player/banker banking alone sets their own hand as they like: NZ 11.2, MBS "
        "3.27); alerts on them: " + str(sum(bool(o.raised) for o in outcomes if o.declined)) + "."
    ]


def _bank_lines(outcomes: list[Outcome]) -> list[str]:
    """Where the bank was, read from the chung, when the follower was told the table's box 1
    and nothing of who banks."""
    told = [o for o in outcomes if o.context and o.record_found]
    if not told:
        return []
    known = Counter(o.banker_known for o in told)
    right = sum(o.banker_right for o in told)
    co = sum(o.co_bank_right for o in told)
    return [
        f"- The banker's box, told box 1 ({len(told)} rounds with a record): right in {right} "
        f"({right / len(told):.1%}; "
        + ", ".join(f"{n} {k}" for k, n in sorted(known.items()))
        + f"); co-bank told apart in {co} ({co / len(told):.1%}).",
        *_who_banks_lines(told),
        *_adjust_lines(told),
    ]


def _who_banks_lines(told: list[Outcome]) -> list[str]:
    """Who banks as the record says it, by who banked: read from the chung and the chips on the
    betting boxes (`rules.bank_shown`), or not known."""
    parts = []
    for bank in ("house", "player", "co-bank"):
        these = [o for o in told if o.bank == bank]
        if these:
            right = sum(o.bank_read == bank for o in these)
            unknown = Counter(o.rules for o in these if o.bank_read is None)
            where = ", ".join(f"{n} {rules}" for rules, n in sorted(unknown.items()))
            parts.append(f"{bank} {right} of {len(these)} ({unknown.total()} not known"
                         f"{': ' + where if where else ''})")  # fmt: skip
    wrong = sum(o.bank_read is not None and o.bank_read != o.bank for o in told)
    return [f"- Who banks, in the record: {'; '.join(parts)}; said wrong in {wrong}."]


def _adjust_lines(told: list[Outcome]) -> list[str]:
    """The +4 or -4 a player/banker nominated, read from its button (NZ 9.6-9.7)."""
    nominated = [o for o in told if o.adjust]
    if not nominated:
        return []
    right = sum(o.adjust_right for o in nominated)
    first = [o for o in nominated if o.injected == "wrong-first-position"]
    clean = [o for o in nominated if o.injected is None or o.declined]
    quiet = sum(not o.raised for o in clean)
    none_read = sum(o.adjust_right for o in told if not o.adjust)
    return [
        f"- A player/banker's +4 or -4 (NZ 9.6), read from its button: right in {right} of "
        f"{len(nominated)} rounds that had one ({none_read} of {len(told) - len(nominated)} "
        f"without one recorded none); {quiet} of {len(clean)} of those rounds planned clean "
        f"raised nothing, and wrong-first-position was caught in "
        f"{sum('wrong-first-position' in o.raised for o in first)} of {len(first)} injected there."
    ]


def _cut_lines(outcomes: list[Outcome]) -> list[str]:
    """How well the round record names the cut when the follower was told none: right means it
    deals the same blocks from the same stacks as the cut dealt (layers cannot be told apart
    from above). Rounds with a wrong cut order are left out: they were dealt with no cut."""
    told = [o for o in outcomes if o.context and o.record_found and o.injected != "wrong-cut-order"]
    if not told:
        return []
    known = Counter(o.cut_known for o in told)
    inferred = [o for o in told if o.cut_known in ("seen", "inferred", "configured")]
    right = sum(o.cut_right for o in inferred)
    undecided = [o for o in told if o.cut_known == "undecided"]
    return [
        f"- The cut, told nothing but the table's configuration ({len(told)} rounds with a "
        "record and no wrong cut order): "
        + ", ".join(f"{n} {k}" for k, n in sorted(known.items()))
        + f"; named right where one permitted cut fitted: {right} of {len(inferred)} "
        f"({right / max(len(inferred), 1):.1%})"
        + (
            f"; where several fitted ({len(undecided)}), the record names one of them and lists "
            f"the rest (2-{max(o.cut_fits for o in undecided)} fitted; the named one the cut "
            f"dealt in {sum(o.cut_right for o in undecided)})"
            if undecided
            else ""
        )
        + ".",
        *_set_up_lines([o for o in outcomes if o.context and o.record_found]),
    ]


def _set_up_lines(told: list[Outcome]) -> list[str]:
    """How well the set-up (the stacks pushed before delivery, MBS App. D) was read."""
    shown = [o for o in told if o.set_up]
    if not shown:
        return []
    right = sum(o.set_up_read == o.set_up for o in shown)
    phantom = sum(bool(o.set_up_read) for o in told if not o.set_up)
    return [
        f"- The set-up, the stacks pushed before delivery (MBS App. D): read right in {right} of "
        f"{len(shown)} rounds that showed one; a set-up read where none was shown in {phantom} "
        f"of {len(told) - len(shown)}.",
    ]


def _late_line(outcomes: list[Outcome]) -> str:
    """The alerts that missed the latency target, each with its round: the table shows only
    the latest of each kind, and a reviewer wants every late round to look at."""
    late = sorted(
        ((seconds, kind, o.seed) for o in outcomes for kind, seconds in o.latency.items()
         if round(seconds, 2) > LATENCY_TARGET),
        reverse=True,
    )  # fmt: skip
    return (
        f"- Alerts later than {LATENCY_TARGET:g} s after their evidence showed: "
        + (
            ", ".join(f"{kind} {seconds:.2f} s (round {seed})" for seconds, kind, seed in late)
            if late
            else "none"
        )
        + "."
    )


def _confidence_line(outcomes: list[Outcome]) -> str:
    """How sure the alerts were, right against wrong: the confidence each alert carries comes
    from its evidence (the reader's or detector's certainty, the dice votes), so an operator
    can take the least sure first."""
    right = sorted(o.confidence[k] for o in outcomes for k in o.raised if k == o.injected)
    wrong = sorted((o.confidence[k], k, o.seed) for o in outcomes for k in o.raised
                   if k != o.injected)  # fmt: skip
    line = "- How sure the alerts were (each alert's confidence, taken from its evidence): "
    if right:
        line += (f"{len(right)} right alerts, lowest {right[0]:.2f}, 5th percentile "
                 f"{np.percentile(right, 5):.2f}, median {np.median(right):.2f}")  # fmt: skip
    if wrong:
        line += "; false alerts " + ", ".join(f"{k} {c:.2f} (round {s})" for c, k, s in wrong)
    return line + "."


def one_line(outcome: Outcome) -> str:
    """A round's outcome as a reader of single rounds wants it: what was injected, what was
    raised, how late and how sure."""
    raised = ", ".join(
        f"{kind} ({outcome.confidence.get(kind, 0):.2f}"
        + (f", {outcome.latency[kind]:.1f} s)" if kind in outcome.latency else ")")
        for kind in outcome.raised
    )
    return (f"{outcome.seed} {outcome.rules} {outcome.injected or 'clean'}: "
            f"raised {raised or 'nothing'}; hands {outcome.hands_exact}/{outcome.hands_checked}"
            + (f"; off box {outcome.off_box} {'recorded' if outcome.off_right else 'MISSED'}"
               if outcome.off_box else "")
            + (f"; banker {'right' if outcome.banker_right else 'WRONG'} ({outcome.banker_known}),"
               f" co-bank {'right' if outcome.co_bank_right else 'WRONG'}, cut "
               f"{'right' if outcome.cut_right else 'WRONG'} ({outcome.cut_known}"
               f"{f', {outcome.cut_fits} fit' if outcome.cut_fits > 1 else ''})"
               if outcome.context else "")
            + (f"; swap alerted at box {', '.join(map(str, outcome.swap_misplaced))}, not "
               "swapped" if outcome.swap_misplaced else "")
            + (f"; error: {outcome.error}" if outcome.error else ""))  # fmt: skip


def _has_off_box(seed: int, rules: str, injected: str | None) -> bool:
    return plan_round(seed, rules, [injected] if injected else [], context=True).off_box is not None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=330)
    parser.add_argument("--clean-share", type=float, default=1 / 3)
    parser.add_argument(
        "--first-seed",
        type=int,
        default=SEED_BASE,
        help="other rounds than the usual: to check a change on rounds it was not tuned on",
    )
    parser.add_argument(
        "--source",
        choices=("labels", "models", REUSE),
        default="labels",
        help=f"{REUSE}: the models looking again only where the frame changed",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        help="follow only these of the planned rounds and print what each raised (no report)",
    )
    parser.add_argument(
        "--context",
        action="store_true",
        help="each round draws who banks and its cut as its rule book says, and the follower "
        "is told nothing but the table's configuration (without: it is told the round's cut)",
    )
    parser.add_argument(
        "--with-off",
        action="store_true",
        help="with --context: follow only the planned rounds that have a box out of play (an "
        '"Off" button, NZ 12.10, MBS 5.6.1) and print what each raised (no report)',
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=[kind.value for kind in INJECTABLE],
        metavar="KIND",
        help="inject only these kinds in the rounds that are not clean (a check's recall and "
        "latency over more of its rounds)",
    )
    parser.add_argument("--resolution", default="1280x720")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", default="runs/accuracy/report.md", help="the report (Markdown)")
    parser.add_argument("--json", help="also write each round's outcome here")
    parser.add_argument(
        "--cache",
        help="keep each round's detections here: a rerun after a change to the round logic "
        "alone then takes minutes",
    )
    parser.add_argument(
        "--cache-stamp",
        metavar="STAMP",
        help="follow the detections --cache holds under this stamp (made by models or a "
        "simulator since changed; the stamp ends each cached file's name) instead of detecting "
        "the rounds again; a round not cached under it fails",
    )
    args = parser.parse_args(argv)
    if args.cache_stamp and not args.cache:
        parser.error("--cache-stamp needs --cache: the folder the stamped rounds are in")
    width, height = (int(v) for v in args.resolution.split("x"))
    kinds = [Irregularity(kind) for kind in args.only] if args.only else INJECTABLE
    planned = plan_rounds(args.rounds, args.clean_share, args.first_seed, kinds)
    if args.seeds:
        unknown = sorted(set(args.seeds) - {seed for seed, _, _ in planned})
        if unknown:
            parser.error(f"--seeds {' '.join(map(str, unknown))}: not among the planned rounds "
                         f"{args.first_seed}-{args.first_seed + args.rounds - 1}")  # fmt: skip
        planned = [job for job in planned if job[0] in args.seeds]
    if args.with_off:
        if not args.context:
            parser.error("--with-off needs --context: only a drawn context has a box out of play")
        planned = [job for job in planned if _has_off_box(*job)]
    cached = None
    if args.cache:
        cached = (args.cache, args.cache_stamp or _cache_stamp(args.source), not args.cache_stamp)
        if not args.cache_stamp:
            _note_stale(Path(args.cache), cached[1], planned, (width, height), args.context)
    jobs = [(*job, args.source, (width, height), cached, args.context) for job in planned]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        outcomes = list(each(pool.map(run_round, jobs), len(jobs), "rounds", "round"))
    wall = time.perf_counter() - started
    if args.json:
        Path(args.json).write_text(json.dumps([o.__dict__ for o in outcomes], indent=1))
    if args.seeds or args.with_off:
        print("\n".join(map(one_line, outcomes)))
        return 0
    command = "python3 -m vision.training.accuracy " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(report(outcomes, args.source, (width, height), command, wall))
    print(Path(args.out).read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
