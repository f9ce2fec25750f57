"""Appearance families: the house look untouched, each family a distribution that really varies
what real sets vary, every option in at least two families (so leaving one out is a fair test),
real dice labels converted right, and the crop measurement able to say "wrong"."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.crops import cut
from vision.detector import MODELS
from vision.synth.appearance import FAMILIES, HOUSE, appearance, dress, looks_named, tile_face
from vision.synth.dataset import render_sample, write_dataset
from vision.synth.scene import tile
from vision.synth.textures import tile_face as house_tile_face

FIVE = tuple(FAMILIES)


def test_the_house_look_renders_what_it_always_rendered() -> None:
    plain = render_sample(11, 3, (1280, 720))
    housed = render_sample(11, 3, (1280, 720), families=("house",))
    assert np.array_equal(plain.rendering.image, housed.rendering.image)
    assert housed.family == "house"


def test_a_family_keeps_the_scene_and_changes_the_look() -> None:
    plain = render_sample(11, 1, (1280, 720), close_ups=0.0)
    dressed = render_sample(11, 1, (1280, 720), close_ups=0.0, families=("ivory",))
    assert dressed.family == "ivory"
    assert [lb.label for lb in plain.rendering.labels] == [
        lb.label for lb in dressed.rendering.labels
    ]
    assert not np.array_equal(plain.rendering.image, dressed.rendering.image)


@pytest.mark.parametrize("index", range(10))
def test_families_take_turns(index: int) -> None:
    sample = render_sample(5, index, (640, 360), close_ups=0.0, families=FIVE)
    assert sample.family == FIVE[index % len(FIVE)]


def _options(family: str, draws: int = 60) -> dict[str, set[object]]:
    seen: dict[str, set[object]] = defaultdict(set)
    for k in range(draws):
        look = appearance(family, np.random.default_rng([k, 7]))
        seen["double_three"].add(look.tiles.double_three)
        seen["one"].add(look.tiles.one)
        seen["six_red"].add(look.tiles.six_red)
        seen["finish"].add(look.tiles.finish)
        seen["ivory"].add(look.tiles.body[2] > 150)
        seen["asian_dice"].add(look.dice.asian)
    return seen


def test_every_option_is_in_at_least_two_families() -> None:
    """Leave-one-family-out measures an unseen combination, never an unseen option."""
    per_family = {f: _options(f) for f in FAMILIES}
    for aspect in ("double_three", "one", "six_red", "finish", "ivory", "asian_dice"):
        every = set().union(*(seen[aspect] for seen in per_family.values()))
        assert len(every) >= 2, f"{aspect} never varies"
        for option in every:
            holders = [f for f, seen in per_family.items() if option in seen[aspect]]
            assert len(holders) >= 2, f"{aspect}={option} only in {holders}"


TILE_DESIGN = ("double_three", "one", "six_red", "finish")


def test_every_tile_design_left_out_is_still_shown_on_a_body_as_light_as_its_own() -> None:
    """A design drawn on one lightness of body alone teaches the reader the design and the
    colour together: with charcoal left out, the small `1` near the end was shown only on ivory
    and cream, and the charcoal `1`s read as backs (`models/MODEL_CARD.md`)."""
    per_family = {f: _options(f) for f in FAMILIES}
    for family, seen in per_family.items():
        (light,) = seen["ivory"]
        alike = [s for f, s in per_family.items() if f != family and s["ivory"] == {light}]
        for aspect in TILE_DESIGN:
            for option in seen[aspect]:
                assert any(option in other[aspect] for other in alike), (
                    f"{family} left out: {aspect}={option} on no other "
                    f"{'light' if light else 'dark'} body"
                )


def _pip_mask(sprite: np.ndarray, body: tuple[int, int, int]) -> np.ndarray:
    colour = sprite[..., :3].astype(int)
    return np.abs(colour - np.array(body)).sum(axis=2) > 120


def test_the_double_three_layouts_differ_where_the_pips_sit() -> None:
    look = replace(appearance("ivory", np.random.default_rng(0)).tiles, double_three="centre-line")
    ends = tile_face("3-3", replace(look, double_three="ends"))
    centre = tile_face("3-3", look)
    centre_column = _pip_mask(centre, look.body)[:, 20:28].sum()
    ends_column = _pip_mask(ends, look.body)[:, 20:28].sum()
    assert centre_column > 1.5 * ends_column  # four pips on the centre line, not two


def test_dressing_repaints_tiles_and_resizes_dice() -> None:
    scene = [tile("1-3", 0, 500, 0.0), tile("4-4", 40, 500, 0.0, face_up=False)]
    look = appearance("navy", np.random.default_rng(3))
    dressed = dress(scene, look)
    assert dressed[0].top is tile_face("1-3", look.tiles)
    assert dressed[0].top is not house_tile_face("1-3")
    assert dressed[0].size[1] <= scene[0].size[1]
    assert dress(scene, HOUSE) is scene


def test_a_data_set_is_the_same_on_two_processes(tmp_path: Path) -> None:
    one = write_dataset(tmp_path / "one", 6, 3, resolution=(640, 360), families=FIVE,
                        progress=False)  # fmt: skip
    two = write_dataset(tmp_path / "two", 6, 3, resolution=(640, 360), families=FIVE, workers=2,
                        progress=False)  # fmt: skip
    assert one["families"] == two["families"] == {f: 1 for f in FIVE} | {"classic": 2}
    for image in sorted((tmp_path / "one" / "images").rglob("*.jpg")):
        twin = tmp_path / "two" / image.relative_to(tmp_path / "one")
        assert image.read_bytes() == twin.read_bytes()
    lines = (tmp_path / "two" / "annotations.jsonl").read_text().splitlines()
    assert [json.loads(x)["family"] for x in lines] == [FIVE[i % 5] for i in range(6)]


def test_real_dice_labels_become_corners() -> None:
    from scripts.fetch_real_dice import corners_of

    cls, corners = corners_of("2 0.5 0.25 0.2 0.1", 640, 640)
    assert cls == 2
    assert np.allclose(corners, [[256, 128], [384, 128], [384, 192], [256, 192]])


def test_crop_accuracy_tells_right_reads_from_wrong_ones(tmp_path: Path) -> None:
    from vision.training.families import crop_accuracy

    sample = render_sample(4242, 0, (1920, 1080), close_ups=0.0)
    faces = [lb for lb in sample.rendering.labels
             if lb.labelled and lb.visible > 0.95 and lb.label not in ("back",)
             and not lb.label.startswith("die-")][:6]  # fmt: skip
    assert len(faces) >= 3
    for name, shift in (("right", 0), ("wrong", 1)):
        for k, lb in enumerate(faces):
            others = sorted({f.label for f in faces} - {lb.label})
            label = lb.label if shift == 0 else others[0]
            folder = tmp_path / name / str(label)
            folder.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(folder / f"{k}.png"), cut(sample.rendering.image, lb.corners, False))
    right = crop_accuracy(Path("models/reader.onnx"), tmp_path / "right")["by_kind"]["faces"]
    wrong = crop_accuracy(Path("models/reader.onnx"), tmp_path / "wrong")["by_kind"]["faces"]
    assert right["accuracy"] >= 0.8
    assert wrong["accuracy"] <= 0.2


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--families", "marble"], "no family marble"),
        (["--families", "ivory", "--workers", "0"], "--workers: a whole number from 1"),
    ],
)
def test_bad_family_options_are_one_line_errors(
    tmp_path: Path, flags: list[str], says: str
) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "paigow.cli", "synth", "dataset", "--n", "1", "--out",
         str(tmp_path / "x"), *flags],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("seconds", "rounds", "hardening"),
    [(330, 8, 8), (2000, 8, 24), (60, 8, 1), (330, 0, 16)],
)
def test_the_full_reader_mines_as_many_rounds_as_its_time_allows(
    seconds: float, rounds: int, hardening: int
) -> None:
    """A short GPU run's reader must still train: the hardening mined only as fits its share."""
    from vision.training.families import hardening_rounds

    assert hardening_rounds(seconds, rounds) == hardening


def test_a_gpu_runs_epochs_come_back_latest_first_within_what_the_pipe_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each arm's latest epochs come back, arms taking turns, the earliest dropped where they do
    not all fit, each tar under the file limit; every arm's log comes back named by its arm."""
    import tarfile

    from vision.training import families

    monkeypatch.setattr(families, "RETURNED_BYTES", 20e6)
    monkeypatch.setattr(families, "RETURNED_FILE_BYTES", 9e6)
    kept = {}
    for arm in ("clean", "none"):
        kept[arm] = tmp_path / f"detector-{arm}" / "epochs"
        kept[arm].mkdir(parents=True)
        for epoch in range(1, 5):
            (kept[arm] / f"epoch-{epoch}.pt").write_bytes(b"\0" * 4_000_001)
        (tmp_path / f"detector-{arm}.log").write_text(f"{arm} trained\n")
    results = tmp_path / "results"
    results.mkdir()
    logs = [tmp_path / "detector-clean.log", tmp_path / "detector-none.log"]
    written = families.pack_epochs(kept, results, logs)
    members = []
    for path in written:
        with tarfile.open(path) as tar:
            members.append(sorted(tar.getnames()))
    assert members == [
        ["clean-epoch-3.pt", "clean-epoch-4.pt"],
        ["none-epoch-3.pt", "none-epoch-4.pt"],
    ]
    assert all(path.stat().st_size <= 9e6 for path in written)
    with tarfile.open(results / "logs.tar.gz") as tar:
        assert sorted(tar.getnames()) == ["detector-clean.log", "detector-none.log"]


def test_a_detector_candidate_is_judged_on_frames_with_the_whole_frame_pass_apart() -> None:
    """The shipped detector judged on the fixture frames: every figure a share, the whole-frame
    pass alone never finding more dice than with the closer look."""
    from vision.training.families import JUDGED, judge

    frames = Path(__file__).parent / "fixtures" / "images"
    judged = judge(MODELS / "detector.onnx", frames, frames, None)
    assert set(judged["house"]) == set(JUDGED) == set(judged["families"])  # type: ignore[arg-type]
    assert all(0.0 <= v <= 1.0 for v in judged["house"].values())  # type: ignore[attr-defined]
    assert judged["house_dice_found_whole_frame"] <= judged["house"]["dice_found"] + 1e-9  # type: ignore[index, operator]
    assert "real_dark" not in judged


def test_judging_a_candidate_that_is_not_there_is_one_line_and_exit_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vision.training.families", "--judge", "no-such.onnx",
         "--house", "tests/fixtures/images"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == "no such path: no-such.onnx"


@pytest.mark.parametrize(
    ("text", "house", "named"),
    [
        ("house, ivory,,navy", True, ("house", "ivory", "navy")),
        ("house,ivory", False, "no appearance family 'house'"),
        ("ivory,tartan", True, "no appearance family 'tartan'"),
    ],
    ids=["house-and-families", "house-not-allowed", "unknown"],
)
def test_a_families_list_names_known_looks_or_the_first_unknown(
    text: str, house: bool, named: tuple[str, ...] | str
) -> None:
    if isinstance(named, tuple):
        assert looks_named(text, house=house) == named
    else:
        with pytest.raises(ValueError, match=named):
            looks_named(text, house=house)
