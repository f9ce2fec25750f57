"""An enrolment from the table to the room: the simulator's opening display, read by the shipped
models, `paigow enrol` keeping and sending it, the box reading by it, the room showing it."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import subprocess
import sys
from collections import Counter
from contextlib import closing
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from vision.detector import Reader
from vision.enrol import DISPLAY_ORDER, LOOK_FAR, KnownSet, enrol
from vision.synth.display import render_display
from vision.table import calibrate

ROUND = Path(__file__).parent / "fixtures" / "rounds" / "nz-irregular"
WHOLE, DOUBLED = ("house", "rows", None), ("house", "rows", "doubled")
SEED = 2
"""A display the shipped detector boxes tile by tile (in some of the house look's displays it
boxes a gap between two tiles instead: docs/enrolment.md)."""


@pytest.fixture(scope="module")
def models():  # type: ignore[no-untyped-def]
    from vision.detector import Detector, Reader

    return Detector(), Reader()


@pytest.mark.parametrize(
    ("arrangement", "fault", "tiles"),
    [
        ("rows", None, 32),
        ("line", None, 32),
        ("scattered", None, 32),
        ("rows", "missing", 31),
        ("rows", "doubled", 32),
        ("rows", "foreign", 32),
        ("rows", "face-down", 32),
    ],
)
def test_the_simulator_lays_a_display_with_its_truth(
    arrangement: str, fault: str | None, tiles: int
) -> None:
    shown, rendering, _ = render_display(5, "ivory", arrangement, fault)  # type: ignore[arg-type]
    laid = [lab for lab in rendering.labels if lab.kind == "tile" and lab.labelled]
    assert len(laid) == len(shown.faces) == tiles
    backs = [lab for lab in laid if lab.label == "back"]
    assert len(backs) == (fault == "face-down")
    faces = [str(lab.label) for lab in laid if lab.label != "back"]
    for back in backs:  # the face the dealer laid there, face down
        assert f"place {back.tags['place']} ({shown.faces[back.tags['place'] - 1]})" in (
            shown.fault_detail
        )
        faces.append(shown.faces[back.tags["place"] - 1])
    assert sorted(faces) == sorted(shown.faces)
    assert len(shown.dice) == 3 and bool(shown.fault_detail) == bool(fault)
    counts = Counter(shown.faces)
    if fault == "doubled":
        assert max(counts[f] - DISPLAY_ORDER.count(f) for f in counts) == 1
    else:
        assert all(counts[f] <= DISPLAY_ORDER.count(f) for f in counts)
    if fault is None and arrangement != "scattered":  # laid in order of rank, mixed pairs aside
        assert [sorted(shown.faces[k : k + 2]) for k in range(0, 32, 2)] == [
            sorted(DISPLAY_ORDER[k : k + 2]) for k in range(0, 32, 2)
        ]
    foreign = [lab for lab in rendering.labels if lab.tags.get("foreign")]
    assert len(foreign) == (fault == "foreign")


def test_the_shipped_models_enrol_a_whole_display_and_refuse_a_doubled_face(models) -> None:  # type: ignore[no-untyped-def]
    shown, rendering, _ = render_display(SEED, *WHOLE)  # type: ignore[arg-type]
    enrolment = enrol(rendering.image, *models)
    assert enrolment.whole, enrolment.problems
    assert [t.face for t in sorted(enrolment.tiles, key=lambda t: t.place or 0)] == list(
        shown.faces
    )
    shown, rendering, _ = render_display(SEED, *DOUBLED)  # type: ignore[arg-type]
    refused = enrol(rendering.image, *models)
    assert not refused.whole and any("a face twice" in p for p in refused.problems)


def _at_round_table(seed: int, rules: str, foreign: str) -> np.ndarray:
    from vision.training.setlook import round_display

    return round_display(seed, rules, foreign)[2]


@pytest.mark.parametrize(
    "display",
    [
        lambda: _at_round_table(974005, "rws-2018", "navy"),  # the 5th of its run
        lambda: _at_round_table(974011, "act-2005", "classic"),  # the 11th
        lambda: render_display(880019, "house", "rows")[1].image,
        lambda: render_display(884018, "house", "rows")[1].image,
        lambda: render_display(886012, "house", "rows")[1].image,
    ],
    ids=["cloth-as-back", "word-as-die", "cut-edge-as-back", "across-two-as-tile", "big-dice"],
)
def test_a_box_on_the_bare_cloth_does_not_refuse_a_whole_display(models, display) -> None:  # type: ignore[no-untyped-def]
    """Displays where the detector boxed the bare cloth beside the tiles as a face-down tile
    twice a tile's width (974005), the cloth's printed word as a fourth die (974011), and, in
    its second, closer look, the strip of cloth between the look's cut and a row's first tile
    as a face-down tile (880019), a box across two tiles' ends as a 33rd tile (884018), and
    two boxes on the cloth 1.8-1.9 times a die's side as a fourth and fifth die (886012):
    boxes sized as no tile or die of the display, on the cut, or inside surer tiles' boxes are
    left out, and the set is accepted whole."""
    enrolment = enrol(display(), *models)
    assert enrolment.problems == () and len(enrolment.tiles) == 32 and len(enrolment.dice) == 3


@pytest.mark.parametrize(("seed", "place"), [(8, 20), (10, 20)], ids=["navy", "charcoal"])
def test_another_sets_tile_is_told_by_its_look_at_enrolment_and_in_play(  # type: ignore[no-untyped-def]
    models, seed: int, place: int
) -> None:
    """A house display with one dark tile of another family's set (a navy or a charcoal `1-6`,
    the body colour check blind to it): enrolment names its place by its look; and a box
    reading by the house's enrolled set finds that tile, alone of the display's, outside it."""
    detector, reader = models
    _, rendering, _ = render_display(seed, "house", "rows", "foreign")
    refused = enrol(rendering.image, detector, reader)
    assert any(p.startswith(f"place {place} ") and "looks unlike the rest of the set" in p
               for p in refused.problems), refused.problems  # fmt: skip
    _, whole, _ = render_display(SEED, *WHOLE)  # type: ignore[arg-type]
    reading = Reader()
    reading.known_set = KnownSet.of(enrol(whole.image, detector, reader))
    found = reading.read(rendering.image, detector.detect(rendering.image))
    (odd,) = [lab.corners.mean(0) for lab in rendering.labels if lab.tags.get("foreign")]
    nearest = int(np.argmin(np.linalg.norm(found.corners.mean(1) - odd, axis=1)))
    assert found.set_distance[nearest] >= LOOK_FAR
    assert np.delete(found.set_distance, nearest).max() < LOOK_FAR


def enrol_cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paigow.cli", "enrol", "--config", str(folder / "edge.yaml"), *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.fixture
def box(tmp_path: Path) -> Path:
    """A box's folder: edge.yaml, table.yaml from a display's frame, two frames to enrol."""
    for name, case in (("whole", WHOLE), ("doubled", DOUBLED)):
        _, rendering, _ = render_display(SEED, *case)  # type: ignore[arg-type]
        cv2.imwrite(str(tmp_path / f"{name}.png"), rendering.image)
    _, image = cv2.VideoCapture(str(ROUND / "round.mp4")).read()  # the table's own camera
    calibrate(image, table_id="t1", rules="nz-1998", banker=1).write(tmp_path / "table.yaml")
    (tmp_path / "edge.yaml").write_text(yaml.safe_dump({
        "table": "table.yaml", "camera": {"source": "whole.png"},
        "mqtt": {"site": "s1"}, "outbox": {"path": "outbox.sqlite", "min_free_mb": 0},
    }))  # fmt: skip
    return tmp_path


def sent(folder: Path) -> list[dict]:  # type: ignore[type-arg]
    with closing(sqlite3.connect(folder / "outbox.sqlite")) as db:
        rows = db.execute("SELECT topic, payload FROM outbox ORDER BY seq").fetchall()
    return [{"topic": topic, **json.loads(payload)} for topic, payload in rows]


def test_enrol_keeps_sends_and_accepts_a_whole_set_and_refuses_a_doubled_one(box: Path) -> None:
    run = enrol_cli(box, "--image", str(box / "whole.png"), "--accept", "--by", "ann")
    assert run.returncode == 0, run.stderr
    assert "The set is whole" in run.stdout and "accepted by ann" in run.stdout
    assert "6-6        2" in run.stdout  # the text table: each face and its count
    current = json.loads((box / "enrolments" / "current.json").read_text())
    kept = box / "enrolments" / current["id"]
    assert {p.name for p in kept.iterdir()} == {
        "display.jpg",
        "picture.jpg",
        "enrolment.json",
        "set.npz",
    }
    assert current["accepted_by"] == "ann"

    run = enrol_cli(box, "--image", str(box / "doubled.png"), "--accept", "--by", "ann")
    assert run.returncode == 1 and "Refused:" in run.stdout
    assert "stays on its previous enrolment" in run.stdout
    assert json.loads((box / "enrolments" / "current.json").read_text()) == current

    messages = sent(box)
    assert [m["topic"] for m in messages] == ["paigow/s1/t1/enrolment"] * 2
    assert [m["kind"] for m in messages] == ["enrolment", "enrolment"]
    assert [m["body"]["accepted_by"] for m in messages] == ["ann", None]
    assert [m["body"]["whole"] for m in messages] == [True, False]
    assert all(m["evidence_jpeg"] for m in messages)  # the picture travels with it


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--image", "whole.png", "--accept"], "--accept needs --by NAME"),
        (["--image", "nothing.png"], "cannot read a frame from"),
        ([], "one of the arguments --image --camera is required"),
    ],
)
def test_enrol_says_what_is_wrong_with_its_arguments_in_one_line(
    box: Path, args: list[str], said: str
) -> None:
    run = enrol_cli(box, *[str(box / a) if a.endswith(".png") else a for a in args])
    assert run.returncode == 2
    assert said in run.stderr and len(run.stderr.strip().splitlines()) <= 2  # usage + the error
    assert not (box / "enrolments" / "current.json").exists()


def test_the_box_reads_by_the_enrolment_in_force_and_says_so_in_its_health(box: Path) -> None:
    from edge.app import EdgeApp
    from edge.comms import MemoryTransport
    from edge.config import EdgeConfig

    config = EdgeConfig.load(box / "edge.yaml")
    app = EdgeApp(config, transport=MemoryTransport())
    assert app.health().enrolment is None
    assert app.source.reader.known_set is None  # type: ignore[union-attr]
    assert (
        enrol_cli(box, "--image", str(box / "whole.png"), "--accept", "--by", "ann").returncode == 0
    )
    app._take_enrolment()  # as its health loop does every report
    current = json.loads((box / "enrolments" / "current.json").read_text())
    assert app.health().enrolment == current["id"]
    assert app.source.reader.known_set is not None  # type: ignore[union-attr]
    assert np.asarray(app.source.reader.known_set.vectors).shape[0] == 64  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "made_with",
    [
        pytest.param(lambda held: held + 0.01, id="another reader"),
        pytest.param(None, id="a set saved before sets kept their models"),
    ],
)
def test_the_box_does_not_read_by_a_set_that_other_models_enrolled(  # type: ignore[no-untyped-def]
    box: Path, made_with, caplog
) -> None:
    """A reader trained again puts every tile's embedding elsewhere: matched against a set its
    predecessor enrolled, a tile in play would be read by vectors it cannot be compared with."""
    from edge.app import EdgeApp
    from edge.comms import MemoryTransport
    from edge.config import EdgeConfig

    assert (
        enrol_cli(box, "--image", str(box / "whole.png"), "--accept", "--by", "ann").returncode == 0
    )
    current = json.loads((box / "enrolments" / "current.json").read_text())
    path = box / "enrolments" / current["id"] / "set.npz"
    known = KnownSet.load(path)
    assert known.made_with is not None
    stale = None if made_with is None else made_with(known.made_with)
    dataclasses.replace(known, made_with=stale).save(path)
    app = EdgeApp(EdgeConfig.load(box / "edge.yaml"), transport=MemoryTransport())
    assert app.source.reader.known_set is None  # type: ignore[union-attr]
    assert app.health().enrolment is None  # the room shows a table without an enrolment
    assert "enrolment-stale" in app.health().alarms  # and why
    assert f"enrolment {current['id']} was made by other models" in caplog.text
    known.save(path)  # the set as the box's own models made it
    app.enrolment_seen = -1  # taken again, as when another is accepted
    app._take_enrolment()
    assert app.health().enrolment == current["id"]
    assert "enrolment-stale" not in app.health().alarms


def test_synth_display_renders_a_display_with_its_truth_and_refuses_an_unknown_family(
    tmp_path: Path,
) -> None:
    def synth(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "paigow.cli", "synth", "display", "--out", str(tmp_path)]
        return subprocess.run([*command, *args], capture_output=True, text=True, check=False)

    run = synth(
        "--family", "cream", "--fault", "missing", "--seed", "3", "--resolution", "1280x720"
    )
    assert run.returncode == 0, run.stderr
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert len(truth["faces"]) == 31 and truth["fault"] == "missing" and "is empty" in run.stdout
    assert cv2.imread(str(tmp_path / "display.png")).shape == (720, 1280, 3)
    run = synth("--family", "marble")
    assert run.returncode == 2 and "--family: no family 'marble'" in run.stderr


def test_a_refused_enrolment_cannot_be_accepted_later(tmp_path: Path) -> None:
    from edge.enrolments import EnrolmentError, Enrolments, record_of
    from vision.detector import Detector, Reader

    _, rendering, _ = render_display(SEED, *DOUBLED)  # type: ignore[arg-type]
    seen = enrol(rendering.image, Detector(), Reader())
    record = record_of(seen, table_id="t1", at=1.0)
    kept = Enrolments(tmp_path / "enrolments")
    kept.keep(seen, rendering.image, record)
    with pytest.raises(EnrolmentError, match="was refused"):
        kept.accept(record.id, "ann")
    assert kept.current() is None
