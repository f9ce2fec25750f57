"""The set-look model's training batches, its measurement's counting, and its command's errors
(`vision.training.setlook`); the model at work is in test_enrol.py, test_enrolment_flow.py and
test_follow.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import one_line_error
from vision.training.setlook import (
    BATCH_SETS,
    DRAWN_LOOKS,
    PER_SET,
    _batch,
    _load,
    _rounds_summary,
    _share_done,
    outcomes,
    train,
)


def test_a_batch_shows_its_sets_the_same_faces() -> None:
    """A face cannot stand in for its set when several sets show it in one batch."""
    rng = np.random.default_rng(0)
    faces = np.tile(np.arange(21), 60)  # 60 sets, every face once
    by_set = {s: np.arange(s * 21, (s + 1) * 21) for s in range(60)}
    rows = _batch(rng, by_set, faces)
    sets = rows // 21
    assert len(rows) == BATCH_SETS * PER_SET
    assert sorted(np.bincount(sets)[np.unique(sets)]) == [PER_SET] * BATCH_SETS
    shown_by = {int(f): len(set(sets[faces[rows] == f])) for f in np.unique(faces[rows])}
    assert sum(count == BATCH_SETS for count in shown_by.values()) >= 3


def looks(count: int, towards: int = 0, far: float = 0.0) -> np.ndarray:
    """`count` unit vectors a few hundredths from axis 0, or `far` from it towards `towards`."""
    rng = np.random.default_rng(count)
    out = np.eye(8)[0] + rng.normal(0, 0.02, (count, 8))
    if far:
        out[:] = (1 - far) * np.eye(8)[0] + np.sqrt(1 - (1 - far) ** 2) * np.eye(8)[towards]
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize(
    ("odd_play", "foreign_far", "odd_display", "counts"),
    [
        (0.0, 0.8, 0.0, (0, 1, 0, 1)),
        (0.6, 0.8, 0.0, (1, 1, 0, 1)),
        (0.0, 0.2, 0.0, (0, 0, 0, 1)),
        (0.0, 0.8, 0.6, (0, 1, 1, 1)),
    ],
    ids=["clean", "a-genuine-tile-far", "foreign-too-near", "whole-display-tile-far"],
)
def test_the_measurement_counts_rounds_tiles_and_displays(
    odd_play: float, foreign_far: float, odd_display: float, counts: tuple[int, ...]
) -> None:
    enrolled = looks(32)
    if odd_display:
        enrolled[5] = looks(1, 3, odd_display)[0]
    genuine = looks(10)
    if odd_play:
        genuine[4] = looks(1, 2, odd_play)[0]
    faulty = np.concatenate([looks(31), looks(1, 4, 0.8)])
    result = outcomes(
        enrolled[None],
        genuine,
        np.array([(0, 0)] * 10),
        looks(1, 1, foreign_far),
        faulty,
        np.zeros(32, np.int64),
    )
    assert (
        result["clean rounds flagged"],
        result["foreign caught"],
        result["whole display tiles flagged"],
        result["foreign displays refused"],
    ) == counts


@pytest.mark.parametrize(
    ("read_as", "by_face", "any_face"),
    [("4-4", 0, 0), ("3-6", 1, 0)],
    ids=["a-face-held-twice", "a-face-held-once"],
)
def test_the_measurement_judges_a_play_tile_at_the_bar_of_the_face_it_reads_as(
    read_as: str, by_face: int, any_face: int
) -> None:
    """0.3 from the set passes `LOOK_FAR` and fails `SINGLE_FAR`: a tile read as a face the
    set holds once is flagged only where the faces read are given."""
    enrolled = looks(32)
    genuine = looks(10)
    genuine[4] = looks(1, 2, 0.3)[0]
    read = np.array(["1-1"] * 10)
    read[4] = read_as
    measured = (enrolled[None], genuine, np.array([(0, 0)] * 10), looks(1, 1, 0.8),
                looks(32), np.zeros(32, np.int64))  # fmt: skip
    judged = outcomes(*measured, genuine_read=read, foreign_read=np.array(["1-1"]))
    assert judged["clean rounds flagged"] == by_face
    assert judged["genuine tiles flagged"] == by_face
    assert outcomes(*measured)["clean rounds flagged"] == any_face


def _alert(position: int, observed: str) -> dict[str, object]:
    return {"position": position, "observed": observed, "summary": ""}


def test_the_rounds_count_a_catch_at_the_foreign_tiles_box_and_say_by_what() -> None:
    """A foreign tile counts as caught only by an alert at its own box; one caught by its
    size (evidence in mm) is counted apart from one caught by its look, and one flagged at its
    box only by another kind apart from the rest; a clean round with any foreign-tile alert is
    a false one; a refused display follows no round."""
    rows = [
        {"enrolled": True, "foreign": "navy", "position": 3,
         "foreign alerts": [_alert(3, "a 2-4 0.92 from the set's look")], "other alerts": []},
        {"enrolled": True, "foreign": "classic", "position": 5,
         "foreign alerts": [_alert(5, "a 1-6 58 x 26 mm")], "other alerts": []},
        {"enrolled": True, "foreign": "ivory", "position": 2,
         "foreign alerts": [_alert(6, "a 1-1 58 x 26 mm")],
         "other alerts": [{"kind": "missing-tile"}]},
        {"enrolled": True, "foreign": "cream", "position": 4, "foreign alerts": [],
         "other alerts": [{"kind": "missing-tile", "position": 4}]},
        {"enrolled": True, "foreign alerts": [_alert(1, "a 3-3 70 x 26 mm")], "other alerts": []},
        {"enrolled": True, "foreign alerts": [], "other alerts": []},
        {"enrolled": False},
    ]  # fmt: skip
    summary = _rounds_summary(rows)  # type: ignore[arg-type]
    assert summary == {
        "rounds": 7,
        "enrolment refused": 1,
        "foreign rounds": 4,
        "foreign caught at its box": 2,
        "of them by its size": 1,
        "foreign rounds raising only another kind": 2,
        "of them at its box": 1,
        "rounds without a foreign tile": 2,
        "of them with a foreign-tile alert": 1,
    }


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["train", "--data", "nowhere.npz"], "no data set nowhere.npz"),
        (["train", "--data", "models/MODEL_CARD.md", "gone.npz"], "no data set gone.npz"),
        (["measure", "--model", "nowhere.onnx"], "no model nowhere.onnx"),
        (["rounds", "--model", "nowhere.onnx"], "no model nowhere.onnx"),
        (["measure", "--model", "models/setlook.onnx", "--families", "tartan"], "no appearance"),
        (["train", "--data", "models/MODEL_CARD.md", "--steps", "0"], "at least one step"),
    ],
    ids=[
        "no-data",
        "one-of-two-data-sets-absent",
        "no-model",
        "no-model-for-rounds",
        "no-family",
        "no-steps",
    ],
)
def test_the_command_says_what_is_wrong_in_one_line(args: list[str], said: str) -> None:
    assert said in one_line_error("vision.training.setlook", *args)


def test_training_takes_the_sets_of_every_file_it_is_given(tmp_path: Path) -> None:
    def rendered(name: str, sets: list[int], families: list[int]) -> Path:
        path = tmp_path / name
        crops = np.zeros((len(sets), 4, 4, 3), np.uint8)
        np.savez(path, crops=crops, face=np.arange(len(sets)), set=np.array(sets),
                 family=np.array(families), looks=np.array(DRAWN_LOOKS))  # fmt: skip
        return path

    first = rendered("a.npz", [-1, 940001, 940001], [0, 1, 1])
    second = rendered("b.npz", [-1, 943002], [0, 2])
    crops, faces, sets = _load([first, second], None)
    assert len(crops) == 5 and sorted(set(sets.tolist())) == [-1, 940001, 943002]
    crops, faces, sets = _load([first, second], DRAWN_LOOKS[1])
    assert sets.tolist() == [-1, -1, 943002] and faces.tolist() == [0, 0, 1]


@pytest.mark.parametrize(
    ("step", "steps", "seconds", "done"),
    [
        (0, 100, 50.0, 0.0),  # a step budget ignores the clock, however long the steps took
        (25, 100, 0.0, 0.25),
        (100, 100, 1.0, 1.0),
        (999, None, 30.0, 0.5),  # a time budget ignores the steps
        (0, None, 60.0, 1.0),
    ],
    ids=["steps-not-clock", "steps-quarter", "steps-all", "time-half", "time-all"],
)
def test_training_spends_its_budget_of_steps_or_of_time(
    step: int, steps: int | None, seconds: float, done: float
) -> None:
    assert _share_done(step, steps, now=100.0 + seconds, started=100.0, deadline=160.0) == done


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's legacy ONNX export
def test_training_by_steps_takes_exactly_that_many(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    sets = [set_ for set_ in range(940000, 940006) for _ in range(8)]
    data = tmp_path / "sets.npz"
    np.savez(data, crops=rng.integers(0, 255, (len(sets), 64, 64, 3), np.uint8),
             face=np.tile(np.arange(8), 6), set=np.array(sets), family=np.ones(len(sets), int),
             looks=np.array(DRAWN_LOOKS))  # fmt: skip
    train([data], tmp_path / "out", minutes=None, steps=3)
    assert json.loads((tmp_path / "out" / "training.json").read_text())["steps"] == 3
    with pytest.raises(ValueError, match="one of them"):
        train([data], tmp_path / "out", minutes=1.0, steps=3)
