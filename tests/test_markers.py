"""The round's markers from pixels: the marker detector's decoding, its schedule beside the tile
detector, and its training crops."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.test_detector import fake_detector_model
from vision.crops import CROP
from vision.detections import Detections
from vision.detector import (
    DETECTOR_INPUT,
    MODELS,
    MarkerDetector,
    MarkerWatch,
    _inside,
)
from vision.labels import (
    CHUNG_BANKER,
    CHUNG_CO,
    CONTEXT,
    MARKERS,
    MINUS_4,
    NOT_A_MARKER,
    OFF,
    PLUS_4,
    WAGER,
)
from vision.training.markers import (
    FACE_COPIES,
    face_box,
    letterbox_scale,
    prepare_marker_faces,
    prepare_markers,
)
from vision.training.train import DETECTOR_CROP

SQUARE = np.array([[[0, 0], [10, 0], [10, 10], [0, 10]]], float)
TURNED = np.array([[[5, 0], [10, 5], [5, 10], [0, 5]]], float)  # a diamond


@pytest.mark.parametrize(
    ("point", "quads", "inside"),
    [
        ((5, 5), SQUARE, True),
        ((11, 5), SQUARE, False),
        ((1, 1), TURNED, False),  # inside the square around it, outside the diamond
        ((5, 2), TURNED, True),
        ((5, 5), SQUARE[:, ::-1], True),  # corners the other way round
        ((5, 5), np.zeros((0, 4, 2)), False),
    ],
)
def test_a_point_is_within_a_quadrilateral_only_inside_its_sides(
    point: tuple[float, float], quads: np.ndarray, inside: bool
) -> None:
    assert _inside(np.array([point], float), quads).any(-1).tolist() == [inside]


def _boxes(centres: list[tuple[float, float]], labels: tuple[str, ...]) -> Detections:
    corners = np.array([[[x - 5, y - 5], [x + 5, y - 5], [x + 5, y + 5], [x - 5, y + 5]]
                        for x, y in centres], float).reshape(-1, 4, 2)  # fmt: skip
    return Detections(corners, np.ones(len(labels)), labels)


class FakeMarkers:
    """Sees the chung at (100, 100) in every frame it is shown, and counts its looks; no chips
    model."""

    chips = None

    def __init__(self) -> None:
        self.looks = 0

    def detect(self, image: np.ndarray, chips: bool = True) -> Detections:
        self.looks += 1
        return _boxes([(100, 100)], (CHUNG_BANKER,))


class FakeMarkersAndChips(FakeMarkers):
    """Sees the chung at every look, and at each look for chips a stack one pixel further right
    than at the last (which look's stacks a frame reports)."""

    chips = "a chips model"

    def __init__(self) -> None:
        super().__init__()
        self.chip_looks = 0

    def detect(self, image: np.ndarray, chips: bool = True) -> Detections:
        chung = super().detect(image)
        if not chips:
            return chung
        self.chip_looks += 1
        return Detections.concat([chung, _boxes([(300 + self.chip_looks, 300)], (WAGER,))])


def test_chips_are_looked_for_once_a_second_and_the_looks_between_report_the_last_stacks() -> None:
    fake = FakeMarkersAndChips()
    watch = MarkerWatch(fake, every_s=0.5, chips_every_s=1.0)  # type: ignore[arg-type]
    image = np.zeros((8, 8, 3), np.uint8)
    looks = {t: watch.watch(t, image, Detections.empty()) for t in (0.0, 0.5, 1.0, 1.5, 2.0)}
    assert fake.looks == 5 and fake.chip_looks == 3  # chips at 0.0, 1.0 and 2.0
    stacks = {t: seen[np.isin(seen.labels, [WAGER])].corners.mean(1)[:, 0].tolist()
              for t, seen in looks.items()}  # fmt: skip
    assert stacks == {0.0: [301.0], 0.5: [301.0], 1.0: [302.0], 1.5: [302.0], 2.0: [303.0]}
    assert all(CHUNG_BANKER in seen.labels for seen in looks.values())


def test_markers_are_looked_for_on_their_schedule_and_boxes_on_them_dropped_between() -> None:
    fake = FakeMarkers()
    watch = MarkerWatch(fake, every_s=0.5)  # type: ignore[arg-type]
    image = np.zeros((8, 8, 3), np.uint8)
    tiles = _boxes([(100, 100), (300, 300)], ("6-6", "back"))  # the first lies on the plaque
    seen = {t: watch.watch(t, image, tiles).labels for t in (0.0, 0.2, 0.4, 0.5, 0.9, 1.0)}
    assert fake.looks == 3  # at 0.0, 0.5 and 1.0
    assert seen[0.0] == seen[0.5] == seen[1.0] == ("back", CHUNG_BANKER)
    assert seen[0.2] == seen[0.4] == seen[0.9] == ("back",)  # the plaque is not a tile meanwhile


@pytest.mark.parametrize(
    ("corners", "label", "dropped"),
    [
        ([[96, 94], [104, 94], [104, 106], [96, 106]], "5-5", True),  # the plaque boxed as a tile
        ([[101, 95], [107, 95], [107, 111], [101, 111]], "5-5", False),  # a tile half over it
        ([[106, 90], [112, 90], [112, 110], [106, 110]], "5-5", False),  # a tile beside it
        ([[101, 101], [104, 101], [104, 104], [101, 104]], "die-4", True),  # a die on its word
        ([[106, 101], [109, 101], [109, 104], [106, 104]], "die-4", False),  # a die beside it
    ],
)
def test_a_die_centred_on_a_marker_is_dropped_a_tile_only_where_each_holds_the_others_centre(
    corners: list[list[float]], label: str, dropped: bool
) -> None:
    """A tile of the hand played on a box out of play, set down half over its Off button, was
    dropped as the plaque boxed as a tile and read as a tile missing (round 1020072)."""
    watch = MarkerWatch(FakeMarkers(), every_s=0.5)  # type: ignore[arg-type]
    image = np.zeros((8, 8, 3), np.uint8)
    watch.watch(0.0, image, _boxes([(300, 300)], ("back",)))
    found = Detections(np.array([corners], float), np.ones(1), (label,))
    assert (watch.watch(0.2, image, found).labels == ()) == dropped


def test_markers_join_a_frame_read_by_the_reader_with_its_columns() -> None:
    """The reader's detections carry how sure it is, how flat and how face up each is; the
    markers join them with the same columns (a marker is no face-up tile)."""
    read = _boxes([(300, 300), (400, 400)], ("6-6", "die-3"))
    read = read.with_labels(read.labels, np.array([0.9, 0.8]), np.array([1.0, 0.95]),
                            np.array([0.99, 0.0]))  # fmt: skip
    joined = MarkerWatch(FakeMarkers()).watch(0.0, np.zeros((8, 8, 3), np.uint8), read)  # type: ignore[arg-type]
    assert joined.labels == ("6-6", "die-3", CHUNG_BANKER)
    assert joined.label_confidence.tolist() == [0.9, 0.8, 1.0]
    assert joined.face_up.tolist() == [0.99, 0.0, 0.0]
    assert joined.flat.tolist() == [1.0, 0.95, 1.0]


def test_the_marker_detector_reads_each_marker_by_its_class_in_frame_pixels(
    tmp_path: Path,
) -> None:
    fake_detector_model(tmp_path / "markers.onnx", [
        [480, 272, 40, 16, 0.1, 0.9, 0.0, 0.0, 0.0, 0.0],  # the chung, co-banker face, mid-frame
        [100, 100, 25, 25, 0.0, 0.0, 0.6, 0.0, 0.0, 0.0],  # a +4 button
        [700, 400, 25, 25, 0.0, 0.0, 0.0, 0.3, 0.0, 0.0],  # too unsure: dropped
    ], MARKERS, size=None)  # fmt: skip
    markers = MarkerDetector(tmp_path / "markers.onnx", faces=None, confidence=0.5, chips=None)
    found = markers.detect(np.zeros((1080, 1920, 3), np.uint8))
    assert found.labels == (CHUNG_CO, PLUS_4)
    assert np.allclose(found.corners[0].mean(0), [960, 540], atol=2)  # (272 - 2) * 2
    sides = np.linalg.norm(np.roll(found.corners[0], -1, 0) - found.corners[0], axis=1)
    assert np.allclose(sorted(sides), [32, 32, 80, 80], atol=1)


def _fake_face_reader(path: Path) -> None:
    """A classifier answering `chung-co-banker` for a bright crop and `none` for a dark one."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("ReduceMean", ["images"], ["mean"], axes=[1, 2, 3], keepdims=1),
         helper.make_node("Flatten", ["mean"], ["bright"], axis=1),
         helper.make_node("Mul", ["bright", "towards"], ["moved"]),
         helper.make_node("Add", ["moved", "start"], ["output0"])],
        "fake-faces",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["n", 3, 64, 64])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, ["n", 2])],
        [helper.make_tensor("towards", TensorProto.FLOAT, [1, 2], [-1.0, 1.0]),
         helper.make_tensor("start", TensorProto.FLOAT, [1, 2], [1.0, 0.0])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    helper.set_model_props(model, {"names": str({0: NOT_A_MARKER, 1: CHUNG_CO})})
    onnx.save(model, str(path))


def test_the_face_reader_reads_each_box_again_at_full_resolution_and_drops_non_markers(
    tmp_path: Path,
) -> None:
    fake_detector_model(tmp_path / "markers.onnx", [
        [480, 272, 40, 16, 0.9, 0.0, 0.0, 0.0, 0.0, 0.0],  # said banker; on a bright plaque
        [100, 100, 40, 16, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0],  # said banker; on dark cloth
    ], MARKERS, size=None)  # fmt: skip
    _fake_face_reader(tmp_path / "faces.onnx")
    image = np.zeros((1080, 1920, 3), np.uint8)
    image[500:580, 880:1040] = 255  # the plaque at (960, 540) in the full frame
    markers = MarkerDetector(tmp_path / "markers.onnx", faces=tmp_path / "faces.onnx", chips=None)
    found = markers.detect(image)
    assert found.labels == (CHUNG_CO,)
    assert np.allclose(found.corners[0].mean(0), [960, 540], atol=2)


def test_a_stack_of_chips_keeps_the_detectors_class_and_hides_no_tile(tmp_path: Path) -> None:
    """Chips have no word for the face reader, which would call a dark stack `none`: their box
    keeps the detector's `wager`; and a tile lying over chips is no plaque boxed as a tile."""
    fake_detector_model(tmp_path / "markers.onnx", [
        [480, 272, 40, 16, 0.9, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # said banker; a bright plaque
        [100, 100, 20, 20, 0.0, 0.0, 0.0, 0.0, 0.0, 0.8, 0.0],  # chips, on dark cloth
    ], CONTEXT, size=None)  # fmt: skip
    _fake_face_reader(tmp_path / "faces.onnx")
    image = np.zeros((1080, 1920, 3), np.uint8)
    image[500:580, 880:1040] = 255
    markers = MarkerDetector(tmp_path / "markers.onnx", faces=tmp_path / "faces.onnx", chips=None)
    found = markers.detect(image)
    assert found.labels == (CHUNG_CO, WAGER)
    assert found.label_confidence.tolist()[1] == 1.0  # as the detector said it

    class ChipsSeen:
        chips = None

        def detect(self, image: np.ndarray, chips: bool = True) -> Detections:
            return _boxes([(100, 100)], (WAGER,))

    watch = MarkerWatch(ChipsSeen(), every_s=0.5)  # type: ignore[arg-type]
    watch.watch(0.0, image, _boxes([(300, 300)], ("back",)))
    assert watch.watch(0.2, image, _boxes([(100, 100)], ("5-5",))).labels == ("5-5",)


def test_chips_come_from_the_chips_model_alone_and_plaques_from_the_marker_detector(
    tmp_path: Path,
) -> None:
    """The chips model was trained with the markers as its other classes but finds plaques
    worse than the marker detector: its plaque boxes are dropped, its chips kept at their own
    bar (a box on no chips has no face reader to drop it)."""
    fake_detector_model(tmp_path / "markers.onnx", [
        [480, 272, 40, 16, 0.0, 0.0, 0.9, 0.0, 0.0, 0.0],  # a +4 button
    ], MARKERS, size=None)  # fmt: skip
    fake_detector_model(tmp_path / "chips.onnx", [
        [480, 272, 40, 16, 0.0, 0.0, 0.0, 0.7, 0.0, 0.0, 0.0],  # the button, called -4
        [100, 100, 20, 20, 0.0, 0.0, 0.0, 0.0, 0.0, 0.8, 0.0],  # chips
        [700, 400, 20, 20, 0.0, 0.0, 0.0, 0.0, 0.0, 0.4, 0.0],  # over the markers' bar, not chips'
    ], CONTEXT, size=None)  # fmt: skip
    markers = MarkerDetector(tmp_path / "markers.onnx", faces=None, chips=tmp_path / "chips.onnx")
    found = markers.detect(np.zeros((1080, 1920, 3), np.uint8))
    assert found.labels == (PLUS_4, WAGER)
    assert markers.detect(np.zeros((1080, 1920, 3), np.uint8), chips=False).labels == (PLUS_4,)
    assert markers.classes == (*MARKERS, WAGER)
    assert np.allclose(found.corners[1].mean(0), [200, 200 - 2 * 2], atol=2)


def test_a_chips_model_without_chips_is_refused(tmp_path: Path) -> None:
    fake_detector_model(tmp_path / "markers.onnx", [[480, 272, 40, 16, 0, 0, 0.9, 0, 0, 0]],
                        MARKERS, size=None)  # fmt: skip
    with pytest.raises(ValueError, match="finds no chips"):
        MarkerDetector(tmp_path / "markers.onnx", faces=None, chips=tmp_path / "markers.onnx")


def test_stacks_of_chips_train_the_marker_detector_as_its_last_class(tmp_path: Path) -> None:
    data = _one_frame(tmp_path)
    entry = json.loads((data / "annotations.jsonl").read_text())
    chips = [[1500, 900], [1530, 900], [1530, 930], [1500, 930]]
    entry["objects"].append({"label": WAGER, "labelled": True, "corners": chips})
    (data / "annotations.jsonl").write_text(json.dumps(entry) + "\n")
    data_yaml = prepare_markers([data], tmp_path / "out", seed=3)
    assert f"{len(CONTEXT) - 1}: {WAGER}" in data_yaml.read_text()
    classes = {line.split()[0] for path in (data_yaml.parent / "labels" / "train").glob("*.txt")
               for line in path.read_text().split("\n") if line}  # fmt: skip
    assert classes == {str(CONTEXT.index(CHUNG_CO)), str(CONTEXT.index(WAGER))}


def test_a_detector_of_other_things_is_refused_as_the_marker_detector() -> None:
    with pytest.raises(ValueError, match="not the markers"):
        MarkerDetector(MODELS / "detector.onnx", faces=None)


CHUNG = [[1000, 700], [1100, 700], [1100, 740], [1000, 740]]


def _one_frame(root: Path) -> Path:
    """A data set of one 2560x1440 frame holding the chung (co-banker face) and a tile."""
    data = root / "data"
    (data / "images" / "train").mkdir(parents=True)
    cv2.imwrite(str(data / "images" / "train" / "0.jpg"), np.full((1440, 2560, 3), 90, np.uint8))
    tile = [[400, 400], [420, 400], [420, 450], [400, 450]]
    entry = {"image": "images/train/0.jpg", "split": "train", "objects": [
        {"label": CHUNG_CO, "labelled": True, "corners": CHUNG},
        {"label": "6-6", "labelled": True, "corners": tile},
    ]}  # fmt: skip
    (data / "annotations.jsonl").write_text(json.dumps(entry) + "\n")
    return data


def test_face_crops_are_cut_at_full_resolution_into_each_markers_folder(tmp_path: Path) -> None:
    root = prepare_marker_faces([_one_frame(tmp_path)], tmp_path / "out", seed=3)
    counts = {p.name: len(list(p.glob("*.png"))) for p in (root / "train").iterdir()}
    # the tile and a patch of cloth are no marker
    assert counts == {CHUNG_CO: FACE_COPIES, NOT_A_MARKER: 2, CHUNG_BANKER: 0, PLUS_4: 0,
                      MINUS_4: 0, OFF: 0}  # fmt: skip
    crop = cv2.imread(str(next((root / "train" / CHUNG_CO).glob("*.png"))))
    assert crop.shape == (CROP, CROP, 3)


def test_marker_crops_carry_each_marker_by_its_class_at_the_detectors_scale(
    tmp_path: Path,
) -> None:
    data_yaml = prepare_markers([_one_frame(tmp_path)], tmp_path / "out", seed=3)
    assert all(f"{i}: {name}" in data_yaml.read_text() for i, name in enumerate(MARKERS))
    labels = sorted((data_yaml.parent / "labels" / "train").glob("*.txt"))
    assert len(labels) == 2  # one around the chung, one anywhere
    scale = letterbox_scale(2560, 1440)
    assert scale == DETECTOR_INPUT[1] / 2560
    around = []
    for path in labels:
        x, y = (int(v) for v in path.stem.split("-")[-2:])
        for line in path.read_text().split("\n"):
            if line:
                cls, *values = line.split()
                assert int(cls) == MARKERS.index(CHUNG_CO)  # the tile is no marker
                around.append(np.array(values, float).reshape(4, 2) * DETECTOR_CROP + [x, y])
    assert around  # the crop around the chung holds it whole
    assert np.allclose(around[0], np.array(CHUNG) * scale, atol=1e-3)


def _top_or_bottom_reader(path: Path) -> None:
    """A classifier that sees which way up its crop is: `chung-banker` as bright as the crop's
    top half, `chung-co-banker` as its bottom half."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    halves = np.zeros((3, CROP, CROP, 2), np.float32)
    halves[:, : CROP // 2, :, 0] = halves[:, CROP // 2 :, :, 1] = 1 / (3 * CROP * CROP / 2)
    graph = helper.make_graph(
        [helper.make_node("Flatten", ["images"], ["flat"], axis=1),
         helper.make_node("MatMul", ["flat", "halves"], ["output0"])],
        "top-or-bottom",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["n", 3, CROP, CROP])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, ["n", 2])],
        [numpy_helper.from_array(halves.reshape(-1, 2), "halves")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    helper.set_model_props(model, {"names": str({0: CHUNG_BANKER, 1: CHUNG_CO})})
    onnx.save(model, str(path))


def test_a_plaque_reads_the_same_whichever_way_up_it_lies(tmp_path: Path) -> None:
    """A box says which way a plaque's long side runs, not which way up its word is: the face
    read must not change when the plaque lies turned half round (1120062: `BANKER` upside down
    read `co-banker`)."""
    fake_detector_model(tmp_path / "markers.onnx", [
        [480, 270, 40, 16, 0.9, 0.0, 0.0, 0.0, 0.0, 0.0],  # a plaque mid-frame
    ], MARKERS, size=None)  # fmt: skip
    _top_or_bottom_reader(tmp_path / "faces.onnx")
    image = np.zeros((1080, 1920, 3), np.uint8)
    image[500:580, 880:960] = 255  # one end of the plaque bright, as a word's ink is not even
    markers = MarkerDetector(tmp_path / "markers.onnx", faces=tmp_path / "faces.onnx", chips=None)
    found = markers.detect(image)
    turned = markers.detect(np.ascontiguousarray(image[::-1, ::-1]))
    assert len(found) == len(turned) == 1
    assert found.labels == turned.labels
    assert found.label_confidence == pytest.approx(turned.label_confidence)


@pytest.mark.parametrize("square", [False, True])
def test_a_face_readers_box_turns_any_way_only_on_a_square_button(square: bool) -> None:
    """The detector's box on a square button has no side to be turned by; on the chung it keeps
    the plaque's long axis (a chung read across would be a word on end)."""
    rng = np.random.default_rng(5)
    plaque = np.array([[0, 0], [80, 0], [80, 32], [0, 32]], float)
    off_axis = []  # each box's turn from the plaque's own axes, 0 to 45 degrees
    for _ in range(300):
        moved = face_box(plaque, rng, square)
        edge = moved[1] - moved[0]
        turn = np.arctan2(edge[1], edge[0]) % (np.pi / 2)
        off_axis.append(min(turn, np.pi / 2 - turn))
    most = np.percentile(off_axis, 95)
    assert most > 0.6 if square else most < 0.4


@pytest.mark.parametrize(("index", "shown"), [(0, ()), (1, (OFF,)), (3, (CHUNG_CO,))])
def test_the_shipped_marker_models_find_the_markers_a_rendered_table_shows(
    index: int, shown: tuple[str, ...]
) -> None:
    """Frames of the seed the speed is timed on (never trained on): the markers they show, each
    where it lies, and nothing where none lies."""
    from vision.synth.dataset import render_sample

    sample = render_sample(4242, index, (1920, 1080), close_ups=0.0)
    truth = [o for o in sample.rendering.labels if o.label in MARKERS]
    found = MarkerDetector().detect(sample.rendering.image)
    plaques = found[np.isin(found.labels, MARKERS)]
    assert plaques.labels == shown
    for label, corners in zip(plaques.labels, plaques.corners, strict=True):
        (where,) = [np.asarray(o.corners) for o in truth if o.label == label]
        assert np.linalg.norm(corners.mean(0) - where.mean(0)) < 10
