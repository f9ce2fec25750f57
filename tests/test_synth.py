"""The synthetic table: determinism, labels against geometry, ground truth from rules/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest

from rules import CUTS, DeliveryOrder, Dice, Irregularity, SetFault, check_set, find_ruleset
from rules import Tile as RulesTile
from vision.labels import CLASS_ID, CLASSES, CONTEXT, WAGER
from vision.synth.dataset import render_sample, write_dataset, yolo_lines
from vision.synth.render import MIN_VISIBLE
from vision.synth.round import INJECTABLE, ground_truth, plan_round, simulate_round

SAMPLES = [render_sample(11, i, (1280, 720)) for i in range(8)]


def test_classes_are_the_shared_labels() -> None:
    assert len(CLASSES) == 28
    assert CLASSES[:21] == tuple(sorted(CLASSES[:21]))
    assert {"back", "die-1", "die-6", "6-6", "1-2"} <= set(CLASSES)


def test_a_sample_is_the_same_pixels_every_time() -> None:
    again = render_sample(11, 3, (1280, 720))
    assert np.array_equal(again.rendering.image, SAMPLES[3].rendering.image)
    assert [lb.label for lb in again.rendering.labels] == [
        lb.label for lb in SAMPLES[3].rendering.labels
    ]


def test_training_scenes_show_every_marker_by_its_face_and_no_reader_class_for_it() -> None:
    """The chung either face up, every button and stacks of chips are in the marker detector's
    data, and never in the reader's class files, which have no class for them."""
    seen: Counter[str] = Counter()
    for sample in [*SAMPLES, *(render_sample(11, i, (1280, 720)) for i in range(8, 24))]:
        rendering = sample.rendering
        labelled = [lb for lb in rendering.labels if lb.labelled]
        seen.update(lb.label for lb in labelled if lb.label in CONTEXT)
        boxes, oriented = yolo_lines(rendering, 1280, 720)
        readable = [lb for lb in labelled if lb.label in CLASS_ID]
        assert len(oriented) == len(readable) and len(boxes) <= len(readable)
        assert all(int(line.split()[0]) < len(CLASSES) for line in oriented)
    assert set(seen) == set(CONTEXT), seen


def test_a_training_scene_lays_capital_in_the_centre_circle_only_where_no_tile_lies() -> None:
    """Chips in the centre circle (a player-banker's capital, RWS 3.16) in some scenes, as
    labelled as a wager's; never through a tile."""
    from vision.layout import TableLayout
    from vision.synth.sampler import random_scene
    from vision.synth.scene import Box

    layout = TableLayout()
    centre, reach = np.array(layout.capital_area), layout.capital_radius + 40
    with_capital = 0
    for index in range(60):
        things = random_scene(np.random.default_rng([5, index]), layout)
        chips = [t for t in things if t.label == WAGER]
        in_circle = [c for c in chips if np.linalg.norm(c.footprint.mean(0) - centre) < reach]
        tiles = [t for t in things if isinstance(t, Box) and t.kind == "tile"]
        near = [t for t in tiles if np.linalg.norm(np.array(t.centre[:2]) - centre) < reach]
        assert not (in_circle and near), index
        with_capital += bool(in_circle)
    assert 5 <= with_capital <= 30, with_capital


def test_a_training_scene_sometimes_carries_a_block_in_flight_with_the_dealers_hand_behind_it() -> (
    None
):
    """A block raised over the cloth with the hand at it, as a delivery carries one: its shadow
    falls beside it and the hand hides its near ends, the scenes behind the detector's boxes on
    no tile during deliveries (`FLIGHT_CHANCE`)."""
    from vision.layout import TableLayout
    from vision.synth.sampler import random_scene
    from vision.synth.scene import Box, Prism

    layout, carried = TableLayout(), 0
    for index in range(60):
        things = random_scene(np.random.default_rng([11, index]), layout)
        tiles = [t for t in things if isinstance(t, Box) and t.kind == "tile"]
        arms = [t for t in things if isinstance(t, Prism) and t.kind == "arm"]
        raised = [  # above the cloth with no tile under it
            t
            for t in tiles
            if t.centre[2] > t.size[2]
            and not any(
                o.centre[2] < t.centre[2]
                and np.linalg.norm(np.array(o.centre[:2]) - t.centre[:2]) < 12
                for o in tiles
            )
        ]
        if not raised:
            continue
        carried += 1
        assert all(t.label == "back" for t in raised), index
        centre = np.mean([t.centre[:2] for t in raised], axis=0).astype(np.float32)
        reach = [cv2.pointPolygonTest(a.footprint.astype(np.float32), centre, True) for a in arms]
        assert max(reach, default=-1e9) >= -60, (index, reach)  # the hand at the block
    assert 8 <= carried <= 30, carried


def test_a_scene_without_plaques_is_the_same_scene_with_its_chung_and_button_left_off() -> None:
    """The going-on ablation's `house-no-plaques` set: the same tiles, dice, chips and arms where
    they lay, only the plaques gone (the rest of the scene is drawn as before)."""
    from vision.labels import MARKERS
    from vision.layout import TableLayout
    from vision.synth.sampler import random_scene
    from vision.synth.scene import Box

    layout, plaques_seen = TableLayout(), 0
    for index in range(12):
        whole = random_scene(np.random.default_rng([7, index]), layout)
        bare = random_scene(np.random.default_rng([7, index]), layout, plaques=False)
        kept = [t for t in whole if t.label not in MARKERS]
        plaques_seen += len(whole) - len(kept)
        assert not any(t.label in MARKERS for t in bare)
        where = [(t.label, (t.corners() if isinstance(t, Box) else t.footprint).tolist())
                 for t in bare]  # fmt: skip
        assert where == [(t.label, (t.corners() if isinstance(t, Box) else t.footprint).tolist())
                         for t in kept]  # fmt: skip
    assert plaques_seen > 0


def test_different_indices_differ() -> None:
    assert not np.array_equal(SAMPLES[0].rendering.image, SAMPLES[1].rendering.image)


@pytest.mark.parametrize("sample", range(len(SAMPLES)))
def test_labels_agree_with_the_pixels(sample: int) -> None:
    rendering = SAMPLES[sample].rendering
    counts = np.bincount(rendering.mask.ravel(), minlength=2 * len(rendering.labels) + 4)
    for lb in rendering.labels:
        seen = int(counts[2 * (lb.index + 1)])
        if lb.labelled:
            assert lb.label in CLASS_ID or lb.label in CONTEXT
            assert seen > 0, "a labelled object must show some of its face"
            assert lb.visible >= MIN_VISIBLE
        if seen == 0:
            assert not lb.labelled, "a fully hidden object is never labelled"
        if not lb.labelled:
            continue
        ys, xs = np.nonzero(rendering.mask == 2 * (lb.index + 1))
        x1, y1, x2, y2 = lb.box
        # every pixel of the face lies inside its box (rasterising rounds by up to 2 px) ...
        assert xs.min() >= x1 - 2 and ys.min() >= y1 - 2
        assert xs.max() + 1 <= x2 + 2 and ys.max() + 1 <= y2 + 2
        height, width = rendering.mask.shape
        inside = (lb.corners >= 0).all() and (lb.corners <= [width, height]).all()
        if lb.visible >= 0.99 and inside:  # ... and a face in full view fills it (a face the
            # frame's edge cuts fills only the clipped box of its corners where it is a thin sliver;
            # a chip's round top is labelled by the square around it, turned any way, whose
            # upright box is up to 1.41 times as wide as the disc)
            fills = 0.85 / np.sqrt(2) if lb.kind == "chip" else 0.85
            assert xs.max() + 1 - xs.min() >= fills * (x2 - x1) - 2
            assert ys.max() + 1 - ys.min() >= fills * (y2 - y1) - 2


@pytest.mark.parametrize("sample", range(len(SAMPLES)))
def test_label_names_follow_what_is_up(sample: int) -> None:
    for lb in SAMPLES[sample].rendering.labels:
        if lb.kind == "tile":
            expected = lb.tags["face"] if lb.tags["face_up"] else "back"
            assert lb.label == expected
        if lb.kind == "die":
            assert lb.label == f"die-{lb.tags['value']}"


def test_only_the_top_tile_of_a_stack_is_labelled() -> None:
    for sample in SAMPLES:
        tiles = [lb for lb in sample.rendering.labels if lb.kind == "tile"]
        # A tile with another tile lying on it shows none of its face.
        for lb in tiles:
            if lb.visible == 0.0:
                assert not lb.labelled
    assert any(lb.visible == 0.0 for s in SAMPLES for lb in s.rendering.labels)


def test_yolo_lines_are_normalised_and_match_the_labels() -> None:
    rendering = SAMPLES[0].rendering
    boxes, oriented = yolo_lines(rendering, 1280, 720)
    readable = sum(lb.labelled and lb.label in CLASS_ID for lb in rendering.labels)
    assert len(boxes) == len(oriented) == readable
    for line in boxes:
        cls, *values = line.split()
        assert 0 <= int(cls) < len(CLASSES)
        assert len(values) == 4 and all(0 <= float(v) <= 1 for v in values)
    for line in oriented:
        assert len(line.split()) == 9


def test_write_dataset(tmp_path: Path) -> None:
    card = write_dataset(tmp_path, 6, 5, resolution=(640, 360), progress=False)
    images = sorted(tmp_path.glob("images/*/*.jpg"))
    assert len(images) == 6
    for image in images:
        split = image.parent.name
        assert (tmp_path / "labels" / split / f"{image.stem}.txt").exists()
        assert (tmp_path / "obb" / "labels" / split / f"{image.stem}.txt").exists()
    lines = [ln for f in tmp_path.glob("labels/*/*.txt") for ln in f.read_text().splitlines() if ln]
    readable = [c[label] for c in card["objects"].values() for label in CLASSES]
    assert sum(readable) == len(lines)  # the markers are counted apart, and in no class file
    linked = tmp_path / "obb" / "images" / images[0].relative_to(tmp_path / "images")
    assert linked.exists() and not linked.is_symlink()
    assert "| `back` |" in (tmp_path / "README.md").read_text()
    assert len((tmp_path / "annotations.jsonl").read_text().splitlines()) == 6


@pytest.mark.parametrize(("share", "flat"), [(0.0, {True}), (1.0, {False})])
def test_a_share_of_the_dice_lean_on_an_edge(share: float, flat: set[bool]) -> None:
    """Data for telling a cocked die from a flat one needs many more than the usual 5%."""
    seen = set()
    for index in range(8):
        sample = render_sample(7, index, (640, 360), close_ups=0.0, cocked_dice=share)
        seen |= {bool(x.tags["flat"]) for x in sample.rendering.labels if "flat" in x.tags}
    assert seen == flat


# Rounds: the plan and its ground truth come from rules/. ---------------------------------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rules_id", ["nz-1998", "act-2005", "rws-2018", "mbs-2020"])
def test_clean_round_deals_and_sets_by_the_rules(seed: int, rules_id: str) -> None:
    plan = plan_round(seed, rules_id, [])
    truth = ground_truth(plan)
    cut = CUTS[str(truth["cut"])]
    options = cut.options(**truth["cut_options"])  # type: ignore[arg-type]
    order = DeliveryOrder.build(cut, options, Dice.of(truth["dice"]), plan.banker)  # type: ignore[arg-type]
    assert truth["first_position"] == order.first == truth["required_first_position"]
    for position, cells in truth["delivery"].items():  # type: ignore[attr-defined]
        assert len(cells) == 4
        assert {order.position_of(tuple(c)) for c in cells} == {int(position)}
    bank = truth["hands"][str(plan.banker)]  # type: ignore[index]
    assert bank["house_way"] is True
    ruleset = find_ruleset(rules_id)
    way = ruleset.house_way([RulesTile.parse(t) for t in bank["tiles"]])
    assert sorted(bank["high"]) == sorted(str(t) for t in way.setting.high.tiles) or way.accepts(
        __import__("rules").Setting.parse(" ".join(bank["high"]) + " / " + " ".join(bank["low"]))
    )
    assert truth["irregularities"] == []
    assert set(truth["outcomes"]) == {str(p) for p in range(1, 9)} - {str(plan.banker)}  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", INJECTABLE, ids=lambda k: k.value)
def test_each_injected_irregularity_is_recorded(kind: Irregularity) -> None:
    for seed in range(40):  # some draws cannot show a given irregularity (no other setting...)
        plan = plan_round(seed, "mbs-2020", [kind.value])
        truth = ground_truth(plan)
        recorded = [i["kind"] for i in truth["irregularities"]]  # type: ignore[attr-defined]
        if kind.value in recorded:
            break
    else:
        pytest.fail(f"{kind.value} never injected")
    hands = truth["hands"]  # type: ignore[assignment]
    sizes = sorted(len(h["tiles"]) for h in hands.values())  # type: ignore[attr-defined]
    tiles = [RulesTile.parse(t) for h in hands.values() for t in h["tiles"]]  # type: ignore[attr-defined]
    if kind is Irregularity.WRONG_FIRST_POSITION:
        assert truth["first_position"] != truth["required_first_position"]
    if kind is Irregularity.MISSING_TILE:
        assert sizes[0] == 3 and SetFault.MISSING_TILE in check_set(tiles, whole_set=True).faults
    if kind is Irregularity.FOREIGN_TILE:
        assert SetFault.FOREIGN_TILE in check_set(tiles, whole_set=True).faults
    if kind is Irregularity.WRONG_HAND_SIZE:
        assert sizes[0] == 3 and sizes[-1] == 5
    if kind is Irregularity.WRONG_DICE_COUNT:
        assert len(truth["dice"]) in (2, 4)  # type: ignore[arg-type]
    if kind is Irregularity.DICE_NOT_FLAT:
        assert truth["dice_flat"] is False
    if kind is Irregularity.HOUSE_WAY_VIOLATION:
        assert hands[str(plan.banker)]["house_way"] is False  # type: ignore[index]
    if kind is Irregularity.HANDS_SWAPPED:
        a, b = plan.swapped  # type: ignore[misc]
        assert sorted(c for c in truth["delivery"][str(a)]) != []  # type: ignore[index]
        delivered = {tuple(c) for c in truth["delivery"][str(a)]}  # type: ignore[index]
        held = {plan.cells[i] for i in plan.hands[b]}
        assert delivered == held


def test_a_round_is_the_same_in_every_process() -> None:
    """A seed names one round: the accuracy run caches rounds and compares them across
    processes, and Python salts string hashes per process (a foreign tile was once drawn from
    a set's order)."""
    script = (
        "from vision.synth.round import INJECTABLE, ground_truth, plan_round\n"
        "import json\n"
        "print(json.dumps([ground_truth(plan_round(s, 'nz-1998', [k.value])) "
        "for s in range(3) for k in INJECTABLE], sort_keys=True))"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(salt)},
        ).stdout
        for salt in range(4)
    }
    assert len(runs) == 1


def test_a_short_round_renders_video_and_truth(tmp_path: Path) -> None:
    truth = simulate_round(tmp_path, 2, "nz-1998", ["dice-not-flat"], fps=2,
                           resolution=(640, 360), progress=False)  # fmt: skip
    assert (tmp_path / "round.mp4").stat().st_size > 10_000
    saved = json.loads((tmp_path / "truth.json").read_text())
    assert saved["dice"] == truth["dice"] and saved["frames"] == truth["frames"]
    import cv2

    capture = cv2.VideoCapture(str(tmp_path / "round.mp4"))
    assert int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) == truth["frames"]
    kinds = Counter(e["kind"] for e in saved["events"])
    assert kinds["delivery"] == 8 and kinds["position-exposed"] == 7


@pytest.mark.parametrize(
    ("args", "names"),
    [(["synth", "round", "--rules", "mbs-2020", "--out", "x", "--irregularity", "cheat"], "cheat"),
     (["synth", "dataset", "--n", "0", "--out", "x"], "--n"),
     (["synth", "round", "--rules", "mbs-2020", "--out", "x", "--resolution", "big"], "WIDTHx")],
)  # fmt: skip
def test_synth_cli_rejects_bad_input(args: list[str], names: str, tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "paigow.cli", *args], capture_output=True,
                         text=True, check=False, cwd=tmp_path)  # fmt: skip
    assert run.returncode == 2 and names in run.stderr and "Traceback" not in run.stderr


def test_a_wrong_dice_count_is_a_die_short_or_one_too_many() -> None:
    """Both happen at a table: a die left in the shaker, or a fourth from the spare set."""
    plans = [plan_round(seed, "nz-1998", ["wrong-dice-count"]) for seed in range(40)]
    counts = Counter(len(plan.dice) for plan in plans)
    assert set(counts) == {2, 4} and min(counts.values()) >= 10


FIXTURE_ROUNDS = Path(__file__).parent / "fixtures" / "rounds"


@pytest.mark.parametrize("name", ["mbs-clean", "nz-irregular"])
def test_fixture_rounds_are_current(name: str) -> None:
    """Committed fixture rounds match what the simulator makes today (scripts/make_fixtures.py)."""
    import gzip

    import cv2

    saved = json.loads((FIXTURE_ROUNDS / name / "truth.json").read_text())
    plan = plan_round(saved["seed"], saved["rules"],
                      [i["kind"] for i in saved["irregularities"]])  # fmt: skip
    fresh = ground_truth(plan)
    for key, value in fresh.items():
        assert saved[key] == json.loads(json.dumps(value)), key
    capture = cv2.VideoCapture(str(FIXTURE_ROUNDS / name / "round.mp4"))
    assert int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) == saved["frames"]
    with gzip.open(FIXTURE_ROUNDS / name / "frames.json.gz", "rt") as handle:
        assert len(json.load(handle)) == saved["frames"]


def test_fixtures_stay_small() -> None:
    root = Path(__file__).parent / "fixtures"
    assert sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) < 8_000_000
