"""Training data preparation: what the detector learns from must match what it will see."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import ClassVar

import cv2
import numpy as np
import pytest

from vision.detections import Detections
from vision.detector import DETECTOR_CLASSES, DETECTOR_SCALE
from vision.labels import CHUNG_BANKER, CHUNG_CO, MINUS_4, PLUS_4
from vision.synth.render import Label
from vision.training.train import (
    DETECTOR_CROP,
    _crop_origins,
    _inside,
    detector_class,
    prepare_detector,
)

IMAGES = Path(__file__).parent / "fixtures" / "images"
GOING_ON = json.loads((IMAGES.parent / "going-on-parameters.json").read_text())
"""Each shipped model's architecture as `checkpoint_from_onnx` rebuilds it to go on training:
every parameter's PyTorch name and shape (fused, as exported)."""
MODELS = Path(__file__).parents[1] / "models"


@pytest.mark.parametrize(
    ("width", "height", "origins"),
    [
        (960, 540, [(0, 0), (320, 0), (640, 0), (0, 220), (320, 220), (640, 220)]),
        (640, 360, [(0, 0), (320, 0), (0, 40), (320, 40)]),
        (320, 320, [(0, 0)]),
        (200, 100, [(0, 0)]),
    ],
)
def test_crops_cover_the_frame(width: int, height: int, origins: list[tuple[int, int]]) -> None:
    assert _crop_origins(width, height) == origins


def box(x: float, y: float, w: float = 20, h: float = 50) -> np.ndarray:
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float64)


@pytest.mark.parametrize(
    ("corners", "expected"),
    [
        (box(100, 100), box(100, 100) / DETECTOR_CROP),  # wholly inside: unchanged
        (box(-8, 100), box(0, 100, 12, 50) / DETECTOR_CROP),  # 60% inside: the inside part
        (box(310, 290), None),  # 10 x 30 of 20 x 50 inside (30%): dropped
        (box(400, 100), None),  # outside
    ],
)
def test_an_object_cut_by_a_crop_edge_keeps_its_inside_part(
    corners: np.ndarray, expected: np.ndarray | None
) -> None:
    got = _inside(corners)
    if expected is None:
        assert got is None
    else:
        assert got is not None
        for point in expected:  # the same four corners, in any order
            assert np.abs(got - point).sum(1).min() < 1e-5


def test_detector_crops_carry_every_whole_object_at_the_detectors_scale(tmp_path: Path) -> None:
    data_yaml = prepare_detector([IMAGES], tmp_path)
    root = data_yaml.parent
    assert f"path: {root.resolve()}" in data_yaml.read_text()
    entries = [json.loads(x) for x in (IMAGES / "annotations.jsonl").read_text().splitlines()]
    crops = sorted((root / "images" / "train").glob("*.jpg"))
    assert len(crops) == 4 * len(entries)  # 1280x720 at half size: 2 x 2 crops each
    for entry in entries:
        stem = f"images-{Path(entry['image']).stem}"
        whole = [o for o in entry["objects"] if o["labelled"]]
        for x, y in _crop_origins(640, 360):
            image = cv2.imread(str(root / "images" / "train" / f"{stem}-{x}-{y}.jpg"))
            assert image.shape == (DETECTOR_CROP, DETECTOR_CROP, 3)
            lines = (root / "labels" / "train" / f"{stem}-{x}-{y}.txt").read_text().split("\n")
            labelled = [np.array(v.split()[1:], float).reshape(4, 2) for v in lines if v]
            for obj in whole:
                corners = np.asarray(obj["corners"]) * DETECTOR_SCALE - [x, y]
                if (corners >= 0).all() and (corners <= DETECTOR_CROP).all():
                    expected = corners / DETECTOR_CROP
                    assert any(np.allclose(b, expected, atol=1e-5) for b in labelled), obj


@pytest.mark.parametrize(("share", "folder"), [(1.0, "cocked"), (0.0, "flat")])
def test_flatness_crops_go_to_the_folder_of_how_the_die_lies(
    tmp_path: Path, share: float, folder: str
) -> None:
    from vision.synth.dataset import write_dataset
    from vision.training.train import DIE_COPIES, prepare_flatness

    data = tmp_path / "data"
    write_dataset(data, 6, 3, resolution=(1280, 720), close_ups=0.0, cocked_dice=share,
                  progress=False)  # fmt: skip
    entries = [json.loads(x) for x in (data / "annotations.jsonl").read_text().splitlines()]
    dice = sum(o["labelled"] and o["label"].startswith("die-") for e in entries
               if not e["motion_blur"] for o in e["objects"])  # fmt: skip
    assert dice > 0 and any(e["motion_blur"] for e in entries)  # shaken frames are left out
    root = prepare_flatness([data], tmp_path / "out")
    crops = {name: len(list(root.glob(f"*/{name}/*.png"))) for name in ("flat", "cocked")}
    copies = DIE_COPIES if folder == "cocked" else 1
    assert crops == {"flat": 0, "cocked": 0} | {folder: dice * copies}


def test_dice_crops_are_every_labelled_die_by_value_with_the_real_photographs(
    tmp_path: Path,
) -> None:
    """Each labelled die, shaken frames too, in its value's folder (two moved copies in
    training, one in validation), and the real dice beside them up to the cap per value."""
    from vision.synth.dataset import write_dataset
    from vision.training.train import DICE_CLASSES, DIE_COPIES, in_frame, prepare_dice

    data = tmp_path / "data"
    write_dataset(data, 6, 3, resolution=(1280, 720), close_ups=0.0, progress=False)
    entries = [json.loads(x) for x in (data / "annotations.jsonl").read_text().splitlines()]
    want: Counter[tuple[str, str]] = Counter()
    for entry in entries:
        for obj in entry["objects"]:
            if obj["labelled"] and obj["label"] in DICE_CLASSES and in_frame(obj, entry):
                copies = DIE_COPIES if entry["split"] == "train" else 1
                want[entry["split"], obj["label"]] += copies
    real = tmp_path / "real"
    for k in range(3):
        (real / "train" / "die-2").mkdir(parents=True, exist_ok=True)
        suffix = ".jpg" if k else ".png"  # the GPU machine's carry is JPEG
        cv2.imwrite(str(real / "train" / "die-2" / f"{k}{suffix}"), np.zeros((8, 8, 3), np.uint8))
    root = prepare_dice([data], tmp_path / "out", real=real)
    got: Counter[tuple[str, str]] = Counter()
    for path in root.glob("*/die-*/*.png"):
        if not path.name.startswith("real-"):
            got[path.parent.parent.name, path.parent.name] += 1
    assert sum(want.values()) > 0 and got == want
    assert len(list(root.glob("train/die-2/real-*"))) == 3
    assert not list(root.glob("val/*/real-*.png"))


@pytest.mark.parametrize(
    ("left", "cut"),
    [(100.0, True), (-4.0, True), (-40.0, False), (-75.0, False)],
    ids=["inside", "a tenth over the edge", "half over", "nearly all over"],
)
def test_a_face_mostly_over_the_frames_edge_is_not_cut_for_the_reader(
    left: float, cut: bool
) -> None:
    """The renderer labels a face by how much of its in-frame part shows; a crop of one cut
    by the frame's edge is that edge smeared, and its pips are off the frame."""
    from vision.training.train import in_frame

    face = {"corners": [[left, 10.0], [left + 80.0, 10.0], [left + 80.0, 50.0], [left, 50.0]]}
    assert in_frame(face, {"width": 640, "height": 360}) is cut


def test_reader_crops_at_the_cloths_scale_take_each_images_set_size(tmp_path: Path) -> None:
    """An image's tiles measured through its homography give its set's size (the renderer's
    tiles are 24-27 x 48-70 mm); a data set rendered before homographies were written is
    refused, not cut at a made-up scale."""
    from vision.synth.dataset import write_dataset
    from vision.training.train import _own_sizes, prepare_reader

    data = tmp_path / "data"
    write_dataset(data, 2, 3, resolution=(1280, 720), close_ups=0.0, progress=False)
    entries = [json.loads(x) for x in (data / "annotations.jsonl").read_text().splitlines()]
    for entry in entries:
        sizes = _own_sizes(entry, np.asarray(entry["homography"]))
        width, length = sizes[False]
        assert 23 < width < 28 and 47 < length < 71
        assert 11 < sizes[True][0] < 21  # dice 12-20 mm
    made = {}
    for kind in ("fixed", "set"):
        root = prepare_reader([data], tmp_path / kind, to_scale=kind)
        made[kind] = sorted(p.relative_to(root) for p in root.rglob("*.png"))
    assert made["fixed"] == made["set"] and made["set"]
    (data / "annotations.jsonl").write_text(
        "".join(
            json.dumps({k: v for k, v in e.items() if k != "homography"}) + "\n" for e in entries
        )
    )
    with pytest.raises(ValueError, match="has no homography"):
        prepare_reader([data], tmp_path / "old", to_scale="set")


def test_flatness_crops_draw_on_every_data_set_when_the_cap_is_reached(tmp_path: Path) -> None:
    """Without taking turns, the first data set named fills the cap and a second look given
    beside it is never trained on."""
    from vision.synth.dataset import write_dataset
    from vision.training.train import prepare_flatness

    for name, seed in (("first", 3), ("second", 4)):
        write_dataset(tmp_path / name, 6, seed, resolution=(1280, 720), close_ups=0.0,
                      cocked_dice=1.0, progress=False)  # fmt: skip
    root = prepare_flatness([tmp_path / "first", tmp_path / "second"], tmp_path / "out",
                            per_class=4)  # fmt: skip
    crops = [p.name for p in root.glob("train/cocked/*.png")]
    assert len(crops) == 4
    assert {name.split("-")[0] for name in crops} == {"first", "second"}


SQUARE = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], np.float64)


@pytest.mark.parametrize(
    ("other", "overlap"),
    [
        (SQUARE, 1.0),
        (SQUARE[::-1], 1.0),  # either winding
        (np.add(SQUARE, [5, 0]), 1 / 3),
        (np.add(SQUARE, [20, 0]), 0.0),
        (SQUARE * 0.5, 0.25),
    ],
)
def test_box_overlap_is_shared_area_over_union(other: np.ndarray, overlap: float) -> None:
    from vision.training.train import _iou

    assert _iou(SQUARE, other) == pytest.approx(overlap, abs=1e-6)


def test_round_crops_are_labelled_with_what_lies_under_each_box() -> None:
    """The simulator's truth under each detector box, checked against the shipped reader: a
    mismatched box (a back labelled a face, one face labelled another) would show as
    disagreement."""
    from vision.detector import Reader
    from vision.labels import CLASSES
    from vision.training.train import HARD_FACE, ROUND_SEEDS, round_crops

    mined = list(round_crops(ROUND_SEEDS, every=2.0))
    kinds = {kind for kind, _, _ in mined}
    assert {"face", "back"} <= kinds
    assert all(label in CLASSES and not label.startswith("die-") for _, label, _ in mined)
    assert all(label == "back" for kind, label, _ in mined if kind != "face")
    reader = Reader(threads=1, flatness=None)
    probs = reader.look_at([c for _, _, c in mined], embed=False)[0]  # as the miner reads them
    read = probs.argmax(1)
    agree = [
        reader.names[int(i)] == label
        for i, (kind, label, _) in zip(read, mined, strict=True)
        if kind in ("face", "back")
    ]
    assert sum(agree) >= 0.95 * len(agree)
    hard = np.array([kind == "hard" for kind, _, _ in mined])
    tiles = probs[:, reader._tiles].sum(1)
    face_up = (tiles - probs[:, reader.back_index]) / tiles
    assert (face_up[hard] >= HARD_FACE - 1e-3).all()  # the reader's own errors (if any left)


class AskedReader:
    """A reader that says every box shows a face `face_up` sure, and keeps the boxes it read."""

    def __init__(self, face_up: float) -> None:
        self.face_up, self.asked = face_up, np.zeros((0, 4, 2))

    def read(self, image: np.ndarray, found: Detections) -> Detections:
        self.asked = found.corners
        return dataclasses.replace(found, face_up=np.full(len(found), self.face_up))


@pytest.mark.parametrize(("face_up", "kept"), [(0.9, True), (0.3, True), (0.29, False)])
def test_hard_crops_are_boxes_over_no_face_that_the_reader_takes_for_one(
    face_up: float, kept: bool
) -> None:
    from vision.training.train import (
        HARD_TRIES,
        ROUND_SEEDS,
        _iou,
        hard_crops,
        round_frames,
        straddles,
    )

    rendering, seen = next(  # the dice out among the backs
        (r, seen)
        for r, seen in round_frames(ROUND_SEEDS, None, every=1.0, dice=True)
        if any(t.label.startswith("die-") for t in seen)
    )
    reader = AskedReader(face_up)
    crops = hard_crops(rendering.image, seen, reader, np.random.default_rng(0))  # type: ignore[arg-type]
    backs = sum(t.label == "back" and t.visible >= 0.9 for t in seen)
    others = [t.corners for t in seen if t.label != "back"]
    assert backs >= 8 and others  # the stacks to try around, and dice to keep off
    pairs = len(straddles(seen, np.random.default_rng(0)))
    assert 0 < len(reader.asked) <= 2 * HARD_TRIES * backs + pairs
    assert all(_iou(box, other) == 0 for box in reader.asked for other in others)
    assert len(crops) == (len(reader.asked) if kept else 0)


def _lying(label: str, x: float, y: float, turned: bool = False, visible: float = 1.0) -> Label:
    """A 26 x 65 px tile lying at (x, y), upright or turned a quarter."""
    w, h = (65, 26) if turned else (26, 65)
    corners = np.array([[x - w / 2, y - h / 2], [x + w / 2, y - h / 2], [x + w / 2, y + h / 2],
                        [x - w / 2, y + h / 2]])  # fmt: skip
    low, high = corners.min(0), corners.max(0)
    return Label(0, label, "tile", corners, (*low, *high), visible, {})


@pytest.mark.parametrize(
    ("tiles", "boxes"),
    [
        ([_lying("back", 100, 100), _lying("back", 120, 130)], 1),  # overlapping
        ([_lying("back", 100, 100), _lying("back", 100, 164)], 1),  # end to end, touching
        ([_lying("back", 100, 100), _lying("back", 100, 166)], 0),  # a back's length apart
        ([_lying("back", 100, 100), _lying("3-3", 120, 130)], 0),  # a face is not a back
        ([_lying("back", 100, 100), _lying("back", 120, 130, visible=0.4)], 0),  # mostly hidden
        ([_lying("back", 100, 100), _lying("back", 110, 110), _lying("back", 90, 120)], 3),
    ],
)
def test_two_backs_closer_than_a_backs_length_are_boxed_as_one_between_them(
    tiles: list[Label], boxes: int
) -> None:
    """The detector boxed two washed backs across the printed circle as one tile (1550007)."""
    from vision.training.train import straddles

    found = straddles(tiles, np.random.default_rng(0))
    assert len(found) == boxes
    if boxes == 1:
        middle = (tiles[0].corners.mean(0) + tiles[1].corners.mean(0)) / 2
        assert np.linalg.norm(found[0].mean(0) - middle) < 8  # moved as the detector's are


@pytest.mark.parametrize(("face_up", "misread"), [(0.9, True), (0.3, True), (0.29, False)])
def test_detector_boxes_over_no_face_the_reader_takes_for_faces_are_mined_as_misreads(
    face_up: float, misread: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The false faces of `benchmarks/false_faces.py` are the detector's own boxes over washed
    backs: each one the judge reads as a face is kept, with boxes moved about it, and no box
    the judge reads as a back is."""
    from vision.training import train

    monkeypatch.setattr(train, "Reader", lambda *args, **kwargs: AskedReader(face_up))
    monkeypatch.setattr(train, "hard_crops", lambda *args: [])
    mined = Counter(kind for kind, _, _ in train.round_crops(train.ROUND_SEEDS, 1.0, until=2.0))
    plain = mined["back"] + mined["no face"]
    if misread:
        assert plain == 0 and mined["misread"] > 0
        assert mined["misread"] % (train.HARD_TRIES + 1) == 0
    else:
        assert plain > 0 and mined["misread"] == 0


def test_refiner_examples_encode_the_true_box_of_what_they_show(tmp_path: Path) -> None:
    """Each example is a detected (or moved) box and where its object really lies: decoded, it
    must land on a labelled object of the fixture frames."""
    from vision.detections import polygon_iou
    from vision.refine import FIRST, REFINE_CROP, decode
    from vision.training.train import prepare_refiner

    root = prepare_refiner([IMAGES], tmp_path)
    truth = [np.asarray(o["corners"]) for line in (IMAGES / "annotations.jsonl").read_text()
             .splitlines() for o in json.loads(line)["objects"] if o["labelled"]]  # fmt: skip
    examples = [np.load(root / f"{split}.npz") for split in ("train", "val")]
    total = sum(len(e["targets"]) for e in examples)
    assert total > 50 and sum(int(e["dice"].sum()) for e in examples) >= 3
    landed = 0
    for e in examples:
        assert e["crops"].shape[1:] == (REFINE_CROP, REFINE_CROP, 3)
        for box, target, die in zip(e["boxes"], e["targets"], e["dice"], strict=True):
            if np.abs(target[:3] if die else target).max() > FIRST.most_shift:
                continue  # beyond what the refiner may move a box
            landed += 1
            assert max(polygon_iou(decode(box, target, die), t) for t in truth) > 0.9
    assert landed > 0.9 * total


@pytest.mark.parametrize(("stage", "view"), [(1, "1.6 2.0 0.5"), (2, "1.3 1.6 0.25")])
def test_each_refiner_stage_trains_and_exports_for_onnxruntime_with_its_view(
    tmp_path: Path, stage: int, view: str
) -> None:
    pytest.importorskip("torch")
    import onnxruntime as ort

    from vision.detector import Refiner
    from vision.refine import OUTPUTS, REFINE_CROP, View
    from vision.training.train import prepare_refiner, train_refiner

    data = prepare_refiner([IMAGES], tmp_path, stage=stage)
    path = train_refiner(data, tmp_path, epochs=1, batch=16, stage=stage)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    out = session.run(None, {"images": np.zeros((3, 3, REFINE_CROP, REFINE_CROP), np.float32)})
    assert out[0].shape == (3, OUTPUTS)
    assert Refiner([path]).stages[0][-1] == View.parse(view)


def test_the_shipped_detector_goes_on_training_from_a_checkpoint_that_sees_what_it_sees(
    tmp_path: Path,
) -> None:
    pytest.importorskip("ultralytics")
    import onnxruntime as ort
    import torch

    from vision.detector import DETECTOR_INPUT, letterbox
    from vision.training.train import checkpoint_from_onnx

    shipped = Path(__file__).parents[1] / "models" / "detector.onnx"
    crops = sorted((prepare_detector([IMAGES], tmp_path).parent / "images" / "train").glob("*"))
    checkpoint = checkpoint_from_onnx(shipped, crops, tmp_path / "detector.pt")
    model = torch.load(checkpoint, weights_only=False)["model"].eval()
    frame = cv2.imread(str(next((IMAGES / "images").rglob("*.jpg"))))
    blob = letterbox(frame, *DETECTOR_INPUT)[0]
    session = ort.InferenceSession(str(shipped), providers=["CPUExecutionProvider"])
    exported = session.run(None, {"images": blob})[0][0, 4:7]
    with torch.no_grad():
        everything = model(torch.from_numpy(blob))[0].numpy()[0]
    rebuilt = everything[4 : 4 + len(DETECTOR_CLASSES)]
    assert tuple(model.names.values()) == DETECTOR_CLASSES and everything.shape[0] == 4 + 3 + 1
    # the 8-bit export rounds its activations, the rebuilt model computes in float: close, not equal
    found, refound = exported.max(0) > 0.5, rebuilt.max(0) > 0.5
    assert np.quantile(np.abs(exported - rebuilt), 0.999) < 0.05
    assert found.sum() > 20 and (found != refound).sum() <= 0.1 * found.sum()
    assert any(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules())  # trainable again

    with pytest.raises(ValueError, match=f"not a {len(DETECTOR_CLASSES)}-class YOLO11n-OBB"):
        checkpoint_from_onnx(shipped.with_name("refiner.onnx"), crops, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="no training images"):  # not a KeyError deep inside
        checkpoint_from_onnx(shipped, [], tmp_path / "empty.pt")


@pytest.mark.parametrize(
    ("label", "cls"),
    [("3-5", "tile"), ("back", "back"), ("die-4", "die"), (CHUNG_BANKER, None), (CHUNG_CO, None),
     (PLUS_4, None), (MINUS_4, None)],
)  # fmt: skip
def test_each_label_trains_its_detector_class_and_a_marker_none(
    label: str, cls: str | None
) -> None:  # the markers have their own detector
    found = detector_class(label)
    assert (None if found is None else DETECTOR_CLASSES[found]) == cls


@pytest.mark.parametrize("model", ["reader.onnx", "flatness.onnx"])
def test_a_shipped_reader_goes_on_training_from_a_checkpoint_that_reads_as_it_does(
    tmp_path: Path, model: str
) -> None:
    pytest.importorskip("ultralytics")
    import onnxruntime as ort
    import torch

    from vision.crops import CROP
    from vision.detector import _names
    from vision.training.train import checkpoint_from_onnx, prepare_reader

    shipped = Path(__file__).parents[1] / "models" / model
    crops = sorted(prepare_reader([IMAGES], tmp_path).rglob("*.png"))
    checkpoint = checkpoint_from_onnx(shipped, crops, tmp_path / "reader.pt")
    rebuilt = torch.load(checkpoint, weights_only=False)
    blob = cv2.dnn.blobFromImages([cv2.imread(str(c)) for c in crops], 1 / 255, (CROP, CROP),
                                  swapRB=True)  # fmt: skip
    session = ort.InferenceSession(str(shipped), providers=["CPUExecutionProvider"])
    exported = session.run(None, {session.get_inputs()[0].name: blob})[0]
    with torch.no_grad():
        read = rebuilt["model"].eval()(torch.from_numpy(blob))
    read = (read[0] if isinstance(read, tuple) else read).numpy()
    assert len(crops) > 50 and np.abs(exported - read).max() < 1e-4
    assert rebuilt["train_args"] == {"task": "classify", "imgsz": CROP}
    assert rebuilt["model"].names == _names(session)
    assert any(isinstance(m, torch.nn.BatchNorm2d) for m in rebuilt["model"].modules())


@pytest.mark.parametrize(("losses", "named", "stops"),
                         [([1.2, 0.8, 2.0], False, False),
                          ([float("nan"), 0.8, 2.0], False, True),
                          ([1.2, float("inf"), 2.0], False, True),
                          ([0.7], True, False),  # ultralytics 8.4 names a classifier's loss
                          ([float("nan")], True, True)])  # fmt: skip
def test_training_stops_at_a_loss_that_is_not_a_number(
    losses: list[float], named: bool, stops: bool
) -> None:
    torch = pytest.importorskip("torch")
    from vision.training.train import _stop_on_non_finite_loss

    items = {"loss": torch.tensor(losses[0])} if named else torch.tensor(losses)
    trainer = dataclasses.make_dataclass("Trainer", ["loss_items", "epoch"])(items, 0)
    if stops:
        with pytest.raises(RuntimeError, match="not kept"):
            _stop_on_non_finite_loss(trainer)
    else:
        _stop_on_non_finite_loss(trainer)


@pytest.mark.parametrize(
    ("predicted", "true", "real"),
    [
        ([5.0, 5.0, 0.6, 2.0, 0.3], [5.1, 5.0, 0.6, 2.0, 0.3], True),  # a die on its own box
        ([5.0, 5.0, 0.4, 0.4, 0.0], [5.2, 5.1, 0.375, 0.375, 0.5], True),  # a 3-px die
        ([5.0, 5.0, 1.0, 2.5, 0.0], [6.0, 4.0, 1.2, 2.0, 1.2], True),  # a tile beside another
        ([5.0, 5.0, 1e-21, 2.0, 0.0], [5.0, 5.0, 0.6, 2.0, 0.3], False),  # predicted a hair wide
        ([5.0, 5.0, 0.0, 2.0, 0.7], [5.0, 5.0, 0.6, 2.0, 0.3], False),  # and with no width
    ],
)
def test_the_rotated_box_loss_keeps_a_finite_gradient_and_ultralytics_overlap(
    predicted: list[float], true: list[float], real: bool
) -> None:
    """ultralytics' own loss turns NaN for the hair-wide box (its determinants' product
    underflows under a square root); the floored one gives any real box's overlap as before."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("ultralytics")
    from ultralytics.utils import loss
    from ultralytics.utils.metrics import probiou

    from vision.training.train import _floor_probiou

    _floor_probiou()
    box = torch.tensor([predicted], requires_grad=True)
    overlap = loss.probiou(box, torch.tensor([true]))
    (1 - overlap).sum().backward()
    assert torch.isfinite(box.grad).all()
    if real:
        upstream = probiou(torch.tensor([predicted]), torch.tensor([true]))
        assert float(overlap.detach()) == pytest.approx(float(upstream), abs=1e-6)


def test_the_floored_loss_takes_the_floor_ultralytics_8_4_passes() -> None:
    """ultralytics 8.4's rotated-box loss calls `probiou(..., floor=...)`: the floored one takes
    it, and adds it to each box's variance as 8.4's own does (8.3 passes none)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("ultralytics")
    import inspect

    from ultralytics.utils.metrics import probiou

    from vision.training.train import _floored_probiou

    box, true = torch.tensor([[5.0, 5.0, 0.4, 0.4, 0.0]]), torch.tensor([[5.2, 5.1, 0.4, 0.4, 0.5]])
    plain = float(_floored_probiou(box, true, floor=0.0))
    assert plain == pytest.approx(float(probiou(box, true)), abs=1e-6)
    if "floor" in inspect.signature(probiou).parameters:
        widened = float(_floored_probiou(box, true, floor=0.05))
        assert widened == pytest.approx(float(probiou(box, true, floor=0.05)), abs=1e-6)
        assert widened != pytest.approx(plain, abs=1e-4)


@pytest.mark.parametrize("off", [0.25, 0.375], ids=["two-pixels-off", "three-pixels-off"])
def test_a_tiny_off_centre_box_is_paid_to_grow_unless_its_shape_counts(off: float) -> None:
    """A die 0.8 of a stride-8 cell wide (6-7 px), predicted 2-3 px off its centre each way
    (the shipped detector's dice are boxed a median 2.2 px off):
    ultralytics' rotated-box loss is lowest for a box wider than the die; with the shape term
    (`box_shape_term`) it is lowest at the die's own size, and the loss is ultralytics' own again
    outside it."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("ultralytics")
    from ultralytics.utils import loss

    from vision.training.train import _floor_probiou, box_shape_term

    _floor_probiou()
    boxes = loss.RotatedBboxLoss(16)

    def cost(side: float) -> float:
        predicted = torch.tensor([[[5.0 + off, 5.0 + off, side, side, 0.0]]])
        die = torch.tensor([[[5.0, 5.0, 0.8, 0.8, 0.0]]])
        scores, sizes = torch.tensor([[[0.0, 0.0, 1.0]]]), ()
        if hasattr(boxes, "floor"):  # 8.4 passes the input's size and the strides
            sizes = (torch.tensor([320.0, 320.0]), torch.tensor([[8.0]]))
        iou_loss, _ = boxes(torch.zeros(1, 1, 64), predicted, torch.tensor([[5.5, 5.5]]), die,
                            scores, scores.sum(), torch.tensor([[True]]), *sizes)  # fmt: skip
        return float(iou_loss)

    plain = [cost(side) for side in (0.8, 1.0, 1.2)]
    assert plain[1] < plain[0]  # paid to grow
    with box_shape_term():
        shaped = [cost(side) for side in (0.8, 1.0, 1.2)]
    assert shaped[0] < shaped[1] < shaped[2]
    assert [cost(side) for side in (0.8, 1.0, 1.2)] == plain


def test_dice_are_trained_to_full_class_targets_and_tiles_to_their_boxes_fit() -> None:
    """ultralytics' assigner scales each positive anchor's class target by how well its object's
    boxes fit; within `full_class_targets` a die's anchors get 1, a tile's keep the aligned
    target, and outside it the dice's are aligned again."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("ultralytics")
    from ultralytics.utils.tal import RotatedTaskAlignedAssigner

    from vision.training.train import FULL_TARGETS, _floor_probiou, full_class_targets

    _floor_probiou()
    ys, xs = torch.meshgrid(torch.arange(20) + 0.5, torch.arange(20) + 0.5, indexing="ij")
    anchors = torch.stack((xs.reshape(-1), ys.reshape(-1)), -1)
    truths = torch.tensor([[[5.0, 5.0, 3.0, 8.0, 0.0], [14.0, 14.0, 2.0, 2.0, 0.0]]])
    classes = torch.tensor([[[0.0], [2.0]]])  # a tile and a die (`DETECTOR_CLASSES`)
    predicted = torch.cat((anchors, torch.tensor([[2.6, 7.0, 0.1]]).expand(len(anchors), 3)), -1)
    near_die = (anchors - 14).abs().amax(-1) < 3
    predicted[near_die, 2:4] = torch.tensor([2.8, 2.8])  # a die's boxes, too wide
    assigner = RotatedTaskAlignedAssigner(topk=10, num_classes=3)

    def targets() -> tuple[torch.Tensor, torch.Tensor]:
        scores = torch.full((1, len(anchors), 3), 0.5)
        found = assigner(scores, predicted[None], anchors, classes, truths, torch.ones(1, 2, 1))
        labels, _, scores, positive, _ = found
        best = scores[0].amax(-1)
        return best[positive[0] & (labels[0] == 2)], best[positive[0] & (labels[0] == 0)]

    dice, tiles = targets()
    assert FULL_TARGETS == ("die",)
    assert len(dice) and (dice < 1).all() and len(tiles) and (tiles < 1).all()
    with full_class_targets(FULL_TARGETS):
        full_dice, same_tiles = targets()
    assert (full_dice == 1).all() and torch.equal(same_tiles, tiles)
    assert torch.equal(targets()[0], dice)


def test_round_crops_are_mined_from_the_rounds_asked_for_judged_by_the_reader_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hardening a reader mines rounds no earlier mining used, for that reader's own mistakes."""
    from vision.training import train

    judge = tmp_path / "reader.onnx"

    def fake_round_crops(seed: int, every: float, reader: Path | None, until: float | None):  # type: ignore[no-untyped-def]
        assert (reader, every, until) == (judge, 0.1, 4.5)
        yield "no face", "back", np.full((8, 8, 3), seed % 251, np.uint8)

    monkeypatch.setattr(train, "round_crops", fake_round_crops)
    counts = train.prepare_round_crops(
        tmp_path, 2, workers=1, first=5, reader=judge, every=0.1, until=4.5
    )
    assert counts == {"back": 2}
    mined = sorted(p.name for p in (tmp_path / "train" / "back").iterdir())
    assert mined == [
        f"round{train.ROUND_SEEDS + 5}_0.1s_0.png",
        f"round{train.ROUND_SEEDS + 6}_0.1s_0.png",
    ]


@pytest.mark.parametrize("model", sorted(GOING_ON))
def test_a_shipped_model_holds_every_parameter_training_goes_on_from(model: str) -> None:
    """Without torch: each shipped export still holds every parameter of the architecture a
    checkpoint rebuilds, so a rewrite of the file that drops or renames one fails here and not
    on a GPU machine (moving the box decoding onto the last axis turned its bins into a MatMul's
    and stopped every run going on from the shipped detector; CI, without torch, passed)."""
    onnx = pytest.importorskip("onnx")
    from vision.training.train import _onnx_weights, fits_architecture

    weights = _onnx_weights(onnx.load(str(MODELS / model)).graph)
    shapes = {k: tuple(v) for k, v in GOING_ON[model]["parameters"].items()}
    assert fits_architecture(weights, shapes)
    assert not fits_architecture({**weights, "model.0.conv.weight": np.zeros((1, 1))}, shapes)


@pytest.mark.parametrize("model", sorted(GOING_ON))
def test_the_parameter_list_is_the_architectures_ultralytics_builds(model: str) -> None:
    """The list above is what ultralytics builds where it is installed, so it cannot go stale."""
    pytest.importorskip("torch")
    pytest.importorskip("ultralytics")
    from ultralytics.nn.tasks import ClassificationModel, OBBModel

    wanted = GOING_ON[model]
    kind = ClassificationModel if "cls" in wanted["architecture"] else OBBModel
    built = kind(wanted["architecture"], nc=wanted["classes"], verbose=False).eval()
    built.fuse(verbose=False)
    assert {k: list(v.shape) for k, v in built.state_dict().items()} == wanted["parameters"]


class _RecordingYolo:
    """Stands in for ultralytics' YOLO: keeps what it was asked to train with."""

    asked: ClassVar[dict[str, object]] = {}

    def __init__(self, model: str) -> None:
        self.trainer = None

    def add_callback(self, event: str, callback: object) -> None:
        pass

    def train(self, **asked: object) -> None:
        _RecordingYolo.asked = asked
        self.trainer = type("Trainer", (), {"save_dir": str(asked["project"])})()


def test_the_readers_training_never_crops_away_an_ends_pips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The random resized crop may take at most a tenth of a crop (ultralytics' default takes
    up to half, an end's outer pips with it, and the label stays); nothing erases or paints
    over pips; a tile is not mirrored (its 3s lean one way)."""
    from vision.training import train

    monkeypatch.setattr(train, "_yolo", lambda: _RecordingYolo)
    monkeypatch.setattr(train, "export_onnx", lambda best, imgsz: best)
    train.train_reader(tmp_path / "crops", tmp_path / "out", epochs=1)
    asked = _RecordingYolo.asked
    assert float(asked["scale"]) <= 0.1  # type: ignore[arg-type]
    assert asked["erasing"] == 0.0 and asked["auto_augment"] is None and asked["fliplr"] == 0.0
