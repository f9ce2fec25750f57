"""Table calibration: markers or given points to a homography, and table.yaml validation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.detections import Detections
from vision.layout import TableLayout
from vision.synth.camera import Camera
from vision.synth.render import Look, Renderer
from vision.synth.round import Studio, round_camera
from vision.synth.textures import cloth_image, random_cloth
from vision.table import CalibrationError, Locate, TableConfig, calibrate

LAYOUT = TableLayout()


def frame(seed: int, k1: float) -> tuple[np.ndarray, Camera]:
    rng = np.random.default_rng(seed)
    base = round_camera(rng, 1920, 1080)
    camera = Camera(base.width, base.height, base.focal, base.centre, base.rotation,
                    base.position, k1)  # fmt: skip
    renderer = Renderer(camera, cloth_image(random_cloth(rng), LAYOUT), LAYOUT)
    return renderer.render([], Look.random(rng, blur_chance=0), rng).image, camera


def hand_spot_error(config: TableConfig, camera: Camera) -> float:
    spots = np.asarray(LAYOUT.hand_spots)
    truth = camera.project(np.column_stack([spots, np.zeros(len(spots))]))
    return float(np.linalg.norm(config.to_image(spots) - truth, axis=1).max())


@pytest.mark.parametrize(("k1", "limit"), [(0.0, 1.5), (-0.06, 10.0)])
def test_markers_give_the_homography(k1: float, limit: float) -> None:
    image, camera = frame(1, k1)
    config = calibrate(image, table_id="t1", rules="mbs-2020")
    assert hand_spot_error(config, camera) < limit  # lens distortion is not modelled
    back = config.to_table(config.to_image(np.asarray(LAYOUT.hand_spots)))
    assert np.allclose(back, LAYOUT.hand_spots, atol=1e-6)


@pytest.mark.parametrize("seed", [700047, 700114])
def test_a_marker_near_the_frames_edge_is_found(seed: int) -> None:
    """These simulated tables put a whole marker near the frame's bottom edge, where the
    detector's default margin dropped it and calibration failed."""
    studio = Studio.of(seed, "nz-1998", [], (1920, 1080))
    image, _, _ = studio.frame(0.0)
    config = calibrate(image, table_id="t1", rules="nz-1998")
    assert config.reprojection_error_px < 2.0


def test_given_points_give_the_homography() -> None:
    image, camera = frame(2, 0.0)
    centres = np.asarray(LAYOUT.marker_centres)
    points = camera.project(np.column_stack([centres, np.zeros(4)]))
    config = calibrate(np.zeros_like(image), table_id="t1", rules="nz-1998",
                       points=[tuple(p) for p in points])  # fmt: skip
    assert hand_spot_error(config, camera) < 1.0


def test_each_point_lies_in_the_zone_that_holds_it() -> None:
    """Every zone's centre, its corners pulled a millimetre in, and a zone given in the other
    winding, all in one call; between zones and off the table, none."""
    image, camera = frame(2, 0.0)
    centres = np.asarray(LAYOUT.marker_centres)
    points = camera.project(np.column_stack([centres, np.zeros(4)]))
    config = calibrate(np.zeros_like(image), table_id="t1", rules="nz-1998",
                       points=[tuple(p) for p in points])  # fmt: skip
    locate = Locate(config)
    locate.zones["bank"] = locate.zones["bank"][::-1]
    asked, expected = [], []
    for name, polygon in locate.zones.items():
        centre = polygon.mean(axis=0)
        inward = polygon + (centre - polygon) / np.linalg.norm(centre - polygon, axis=1)[:, None]
        asked += [centre, *inward]
        expected += [name] * (1 + len(polygon))
    asked += [np.array([-12.0, 500.0]), np.array([5000.0, 5000.0])]
    expected += ["", ""]
    assert locate.zones_of(np.asarray(asked)) == tuple(expected)
    assert locate.zone_of(asked[0]) == expected[0]


@pytest.mark.parametrize(
    ("length", "width", "turn", "spot"),
    [(66.0, 26.0, 0.0, 0), (58.0, 26.0, 30.0, 3), (66.0, 26.0, 90.0, 7), (70.0, 24.0, 135.0, 5)],
)
def test_a_box_measures_its_tile_on_the_cloth(
    length: float, width: float, turn: float, spot: int
) -> None:
    """A tile's box, however turned and wherever it lies in view, measures the tile's own
    length and width in millimetres: the size check of another set's tile rests on it."""
    image, camera = frame(2, 0.0)
    centres = np.asarray(LAYOUT.marker_centres)
    points = camera.project(np.column_stack([centres, np.zeros(4)]))
    config = calibrate(np.zeros_like(image), table_id="t1", rules="nz-1998",
                       points=[tuple(p) for p in points])  # fmt: skip
    angle = np.radians(turn)
    along, across = (
        np.array([np.cos(angle), np.sin(angle)]),
        np.array([-np.sin(angle), np.cos(angle)]),
    )
    centre = np.asarray(LAYOUT.hand_spots[spot])
    corners = [centre + a * length / 2 * along + b * width / 2 * across
               for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))]  # fmt: skip
    boxes = Detections(config.to_image(np.asarray(corners))[None], np.ones(1), ("back",))
    assert np.allclose(Locate(config).sizes(boxes), [[length, width]], atol=0.05)
    assert Locate(config).sizes(Detections.empty()).shape == (0, 2)


def test_no_markers_is_a_named_error() -> None:
    with pytest.raises(CalibrationError, match="corner markers"):
        calibrate(np.zeros((720, 1280, 3), np.uint8), table_id="t1", rules="mbs-2020")


def test_yaml_round_trip_and_validation(tmp_path: Path) -> None:
    image, _ = frame(3, 0.0)
    config = calibrate(image, table_id="t7", rules="act-2005", banker=3)
    config.write(tmp_path / "table.yaml")
    assert TableConfig.read(tmp_path / "table.yaml") == config
    text = (tmp_path / "table.yaml").read_text()
    (tmp_path / "bad.yaml").write_text(text.replace("rules: act-2005", "rules: vegas"))
    with pytest.raises(CalibrationError, match="rules"):
        TableConfig.read(tmp_path / "bad.yaml")
    (tmp_path / "extra.yaml").write_text(text + "colour: green\n")
    with pytest.raises(CalibrationError, match="colour"):
        TableConfig.read(tmp_path / "extra.yaml")


def test_calibrate_cli(tmp_path: Path) -> None:
    image, _ = frame(4, 0.0)
    cv2.imwrite(str(tmp_path / "f.png"), image)
    run = subprocess.run(
        [sys.executable, "-m", "paigow.cli", "calibrate", str(tmp_path / "f.png"), "--out",
         str(tmp_path / "table.yaml"), "--table-id", "pgt-01", "--rules", "mbs-2020", "--json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["reprojection_error_px"] < 2
    written = TableConfig.read(tmp_path / "table.yaml")
    assert (written.table_id, written.cut, written.cut_options) == ("pgt-01", "yat-dong-dong", {})
    run = subprocess.run(
        [sys.executable, "-m", "paigow.cli", "calibrate", str(tmp_path / "f.png"), "--out",
         str(tmp_path / "cut.yaml"), "--table-id", "pgt-01", "--rules", "mbs-2020",
         "--cut", "dai-pin", "--cut-option", "side=right"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    written = TableConfig.read(tmp_path / "cut.yaml")
    assert (written.cut, written.cut_options) == ("dai-pin", {"side": "right"})
    for wrong, said in ((["--cut", "no-such-cut"], "no-such-cut"),
                        (["--cut", "dai-pin", "--cut-option", "side=up"], "up"),
                        (["--cut-option", "layer=top"], "no layer option")):  # fmt: skip
        run = subprocess.run(
            [sys.executable, "-m", "paigow.cli", "calibrate", str(tmp_path / "f.png"), "--out",
             str(tmp_path / "bad.yaml"), "--table-id", "pgt-01", "--rules", "mbs-2020", *wrong],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert run.returncode == 2 and said in run.stderr and "Traceback" not in run.stderr
        assert not (tmp_path / "bad.yaml").exists()
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.zeros((100, 100, 3), np.uint8))
    run = subprocess.run([sys.executable, "-m", "paigow.cli", "calibrate", str(blank),
                          "--table-id", "x", "--rules", "mbs-2020"],
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert run.returncode == 2 and "markers" in run.stderr and "Traceback" not in run.stderr
