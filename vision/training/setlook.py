"""The set-look model: which set a tile belongs to, whatever its face.

The reader's embedding brings one face of every maker's set together (that is what reads a
design it never saw); telling a foreign tile from the table's own needs the opposite, a vector
that keeps sets apart and lets faces go. This small network is trained for that alone: tile
crops of many drawn sets (the house look and every appearance family, each draw its own set),
a supervised contrastive loss (Khosla et al. 2020) whose classes are the sets, in batches that
show several sets the same faces so that a face cannot stand in for its set.

    python3 -m vision.training.setlook render --out runs/setlook/data.npz --sets 1200
    python3 -m vision.training.setlook train --data runs/setlook/data.npz --out runs/setlook/all
        [--without FAMILY] [--minutes 8 | --steps N]
    python3 -m vision.training.setlook measure --model MODEL --sets 30 --out runs/setlook/m
    python3 -m vision.training.setlook rounds --model MODEL --rounds 40 --out runs/setlook/r

`measure` enrols fresh sets from their displays, then measures how far the face-up tiles of
play scenes in each set, and one tile of another family's set slipped in, lie from it
(`vision.enrol.look_distance`); `rounds` follows simulated rounds from pixels with such a tile
in a hand (`docs/enrolment.md` has the results).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from vision.crops import cut
from vision.detections import Detections
from vision.enrol import FACE_NAMES, LOOK_FAR, SetLook, allowed_far, look_distance
from vision.progress import each
from vision.synth.appearance import FAMILIES, looks_named
from vision.synth.render import Rendering
from vision.synth.round import Studio
from vision.table import CalibrationError, TableConfig, calibrate

if TYPE_CHECKING:
    from vision.follow.base import Round

SEED = 940_000
"""Training sets' seeds: apart from every other data set's and round's."""
MEASURE_SEED = 960_000
"""Measured sets' seeds: never trained on."""
DRAWN_LOOKS = ("house", *FAMILIES)
SHOWN = 0.9
"""A tile is cut when this share of its face is in view (as `vision.training.enrolment`)."""
PLAY_SCENES = 2
"""Play scenes drawn in each training set beside its display: the same set under another
camera, cloth and light, so that the model learns the set rather than the picture."""
BATCH_SETS, PER_SET, SHARED_FACES = 24, 8, 3
"""A batch: 24 sets, 8 crops of each, half of them of 3 faces every set in the batch shows."""
TEMPERATURE = 0.1
"""The contrastive loss's temperature, as Khosla et al. use it."""
LEARNING_RATE = 2e-3
"""AdamW's rate at the start, cosine down to nothing: a small network trained from scratch."""


def _set_crops(seed: int, family: str) -> tuple[list[NDArray[np.uint8]], list[int]]:
    """The face-up tiles of one set's display and play scenes, boxed as the detector boxes
    them: crops and face indices."""
    from vision.synth.display import ARRANGEMENTS, render_display
    from vision.training.enrolment import play_scene, truth_boxes

    rng = np.random.default_rng([seed, 0x10C])
    arrangement = ARRANGEMENTS[int(rng.integers(len(ARRANGEMENTS)))]
    renderings = [render_display(seed, family, arrangement)[1]]
    renderings += [play_scene(seed * 10 + k, seed, family) for k in range(PLAY_SCENES)]
    crops, faces = [], []
    for rendering in renderings:
        found, truth = truth_boxes(rendering, rng, SHOWN)
        for corners, label in zip(found.corners, truth, strict=True):
            if label in FACE_NAMES:
                crops.append(cut(rendering.image, corners, False))
                faces.append(FACE_NAMES.index(label))
    return crops, faces


def _render_one(job: tuple[int, str]) -> tuple[int, str, list[NDArray[np.uint8]], list[int]]:
    seed, family = job
    return (seed, family, *_set_crops(seed, family))


def render(out: Path, sets: int, first_seed: int = SEED, workers: int = 2) -> None:
    """`sets` sets, the looks taking turns, written as one npz: crops, face, set, family. The
    house look is one set however often it is drawn (it has no draws)."""
    jobs = [(first_seed + k, DRAWN_LOOKS[k % len(DRAWN_LOOKS)]) for k in range(sets)]
    crops: list[NDArray[np.uint8]] = []
    faces: list[int] = []
    set_of: list[int] = []
    family_of: list[int] = []
    with ProcessPoolExecutor(workers) as pool:
        done = pool.map(_render_one, jobs, chunksize=4)
        for seed, family, cut_crops, cut_faces in each(done, len(jobs), "sets", "set"):
            crops += cut_crops
            faces += cut_faces
            set_of += [-1 if family == "house" else seed] * len(cut_crops)
            family_of += [DRAWN_LOOKS.index(family)] * len(cut_crops)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, crops=np.stack(crops), face=np.array(faces), set=np.array(set_of),
             family=np.array(family_of), looks=np.array(DRAWN_LOOKS))  # fmt: skip
    print(f"{len(crops)} crops of {sets} sets -> {out}", file=sys.stderr)


def _network(dim: int = 64):  # type: ignore[no-untyped-def]
    """Five 3x3 convolutions (the first two halving the crop, then the fourth), mean and max
    pooled, one linear map to a unit vector: 78 thousand weights, 7.5 million multiply-adds a
    crop, so that a frame's face-up tiles cost a few milliseconds."""
    import torch
    from torch import nn

    def block(inputs: int, outputs: int, stride: int) -> list[nn.Module]:
        return [nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False), nn.BatchNorm2d(outputs),
                nn.ReLU(inplace=True)]  # fmt: skip

    class LookNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(*block(3, 16, 2), *block(16, 32, 2), *block(32, 32, 1),
                                          *block(32, 64, 2), *block(64, 64, 1))  # fmt: skip
            self.head = nn.Linear(128, dim)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            f = self.features(x)
            pooled = torch.cat([f.mean((2, 3)), f.amax((2, 3))], 1)
            return nn.functional.normalize(self.head(pooled), dim=1)

    return LookNet()


def _batch(
    rng: np.random.Generator, by_set: dict[int, NDArray[np.int64]], faces: NDArray[np.int64]
) -> NDArray[np.int64]:
    """Indices of one batch: `BATCH_SETS` sets, `PER_SET` crops each, half of them of
    `SHARED_FACES` faces drawn for the whole batch where the set shows them."""
    keys = list(by_set)
    chosen = rng.choice(len(keys), min(BATCH_SETS, len(keys)), replace=False)
    shared = rng.choice(len(FACE_NAMES), SHARED_FACES, replace=False)
    rows = []
    for k in chosen:
        own = by_set[keys[int(k)]]
        same_faces = own[np.isin(faces[own], shared)]
        half = rng.choice(same_faces, min(PER_SET // 2, len(same_faces)), replace=False)
        rest = rng.choice(own, PER_SET - len(half), replace=len(own) < PER_SET)
        rows += [*half, *rest]
    return np.asarray(rows, np.int64)


def _tensor(crops: NDArray[np.uint8], rng: np.random.Generator | None):  # type: ignore[no-untyped-def]
    """Crops as the network takes them: RGB in 0..1, N x 3 x 64 x 64 (what
    `cv2.dnn.blobFromImages(..., 1 / 255, swapRB=True)` gives at run time). With `rng`, each
    turned half round at random (a crop's turn is a guess) and its light moved a little."""
    import torch

    x = torch.from_numpy(crops[..., ::-1].copy()).permute(0, 3, 1, 2).float() / 255
    if rng is not None:
        turned = torch.from_numpy(rng.random(len(x)) < 0.5)
        x[turned] = x[turned].flip(2, 3)
        gain = torch.from_numpy(rng.uniform(0.85, 1.15, (len(x), 1, 1, 1))).float()
        x = (x * gain).clamp(0, 1)
    return x


def _supcon(z, labels, temperature: float = TEMPERATURE):  # type: ignore[no-untyped-def]
    """Supervised contrastive loss: each crop pulled towards its set's other crops in the
    batch, pushed from every other set's."""
    import torch

    sims = z @ z.T / temperature
    eye = torch.eye(len(z), dtype=torch.bool)
    sims = sims.masked_fill(eye, -1e9)
    log_prob = sims - torch.logsumexp(sims, 1, keepdim=True)
    positive = (labels[:, None] == labels[None, :]) & ~eye
    return -((log_prob * positive).sum(1) / positive.sum(1).clamp(min=1)).mean()


def _load(
    data: list[Path], without: str | None
) -> tuple[NDArray[np.uint8], NDArray[np.int64], NDArray[np.int64]]:
    """Crops, faces and sets of every rendered file, `without`'s family left out. Sets keep
    their seeds, so files of other seed ranges add sets (the house look stays one set)."""
    crops, faces, sets = [], [], []
    for path in data:
        held = np.load(path)
        looks = tuple(str(name) for name in held["looks"])
        family = held["family"]
        keep = family != looks.index(without) if without else np.ones(len(family), bool)
        crops.append(held["crops"][keep])
        faces.append(held["face"][keep])
        sets.append(held["set"][keep])
    return np.concatenate(crops), np.concatenate(faces), np.concatenate(sets)


def _share_done(step: int, steps: int | None, now: float, started: float, deadline: float) -> float:
    """How much of the training budget is spent: steps taken of `steps`, else time of the
    deadline."""
    if steps is not None:
        return step / steps
    return (now - started) / (deadline - started)


def train(
    data: list[Path],
    out: Path,
    minutes: float | None = 8.0,
    without: str | None = None,
    steps: int | None = None,
) -> Path:
    """Train on `data`'s sets (all but `without`'s) for `minutes`, or for exactly `steps` steps
    (a budget that does not shrink when other work shares the machine, so that runs compare);
    export `out/setlook.onnx`."""
    import torch

    if (minutes is None) == (steps is None):
        raise ValueError("train for minutes or for steps, one of them")
    torch.set_num_threads(2)
    torch.manual_seed(0)
    crops, faces, sets = _load(data, without)
    by_set = {int(s): np.flatnonzero(sets == s) for s in np.unique(sets)}
    print(f"{len(crops)} crops of {len(by_set)} sets, {without or 'no family'} left out",
          file=sys.stderr)  # fmt: skip
    model = _network()
    optimiser = torch.optim.AdamW(model.parameters(), LEARNING_RATE, weight_decay=1e-4)
    rng = np.random.default_rng(0)
    started = time.monotonic()
    deadline = started + (minutes or 0) * 60
    step, said, losses = 0, started, []
    model.train()
    while (share := _share_done(step, steps, time.monotonic(), started, deadline)) < 1:
        for group in optimiser.param_groups:  # cosine down to nothing at the end
            group["lr"] = LEARNING_RATE * 0.5 * (1 + np.cos(np.pi * share))
        rows = _batch(rng, by_set, faces)
        loss = _supcon(model(_tensor(crops[rows], rng)), torch.from_numpy(sets[rows]))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
        step += 1
        if (now := time.monotonic()) - said >= 10:
            said = now
            print(f"step {step}, {now - started:.0f} s, {share:.0%}, loss "
                  f"{np.mean(losses[-50:]):.3f}", file=sys.stderr, flush=True)  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    model.eval()
    path = out / "setlook.onnx"
    torch.onnx.export(model, _tensor(crops[:2], None), str(path), input_names=["images"],
                      output_names=["look"], dynamic_axes={"images": {0: "n"}, "look": {0: "n"}},
                      opset_version=17, dynamo=False)  # fmt: skip
    (out / "training.json").write_text(json.dumps({
        "data": [str(path) for path in data], "without": without, "minutes": minutes, "steps": step,
        "seconds": round(time.monotonic() - started),
        "crops": len(crops), "sets": len(by_set), "last loss": float(np.mean(losses[-50:])),
    }, indent=1))  # fmt: skip
    print(f"{step} steps -> {path}", file=sys.stderr)
    return path


CONDITIONS = ("same table", "another camera and light")
"""Play drawn at the display's own table (its camera, cloth and light, as at a casino, where the
box that enrolled the set watches its play), and through another camera under another light
(a harder test: the look must hold across pictures)."""


def measure(model: Path, out: Path, sets: int, first_seed: int = MEASURE_SEED,
            families: tuple[str, ...] = tuple(FAMILIES)) -> dict[str, object]:  # fmt: skip
    """For each family, `sets` fresh sets: each enrolled from a display in rows; then, in each
    of `CONDITIONS`, two play scenes' face-up tiles scored against it (a clean round's tiles)
    and one tile of another family's set (the next family in turn) scored as if slipped in;
    and a display of the same set with one tile of another family's set in it. Each play tile
    is judged at `LOOK_FAR` whatever its face, as the follower judges it, and at the bar a
    display holds for the face the shipped reader reads it as (`allowed_far`). The looks and
    the faces read go to
    `out/FAMILY.npz`, so that other rules can be tried on them, the counts to
    `out/setlook.json`."""
    from vision.detector import Reader
    from vision.synth.display import display_table, render_display
    from vision.training.enrolment import play_crops, play_scene

    looker = SetLook(model)
    reader = Reader()
    faces_at = [next(k for k, n in reader.names.items() if n == face) for face in FACE_NAMES]

    def read(crops: list[NDArray[np.uint8]]) -> list[str]:
        if not crops:
            return []
        probs = reader.look_at(crops, embed=False)[0][:, faces_at]
        return [FACE_NAMES[int(k)] for k in probs.argmax(1)]

    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, object] = {}
    for family in families:
        looks: dict[str, list] = {}  # type: ignore[type-arg]
        others = [f for f in FAMILIES if f != family]
        for k in each(range(sets), sets, f"{family} sets", "set"):
            seed = first_seed + k
            rng = np.random.default_rng([seed, 0x5C0])
            whole = render_display(seed, family, "rows")[1]
            looks.setdefault("enrolled", []).append(looker.embed(_display_crops(whole, rng)))
            _, table, light, _, _ = display_table(seed, family, "rows")
            draws = {
                "same table": lambda s, of, f: play_scene(s, of, f, (table, light)),  # noqa: B023
                "another camera and light": play_scene,
            }
            for condition, draw in draws.items():
                key = condition.split()[0]
                for scene in range(PLAY_SCENES):
                    crops, _ = play_crops(draw(seed * 10 + scene, seed, family), rng)
                    looks.setdefault(f"genuine {key}", []).append(looker.embed(crops))
                    looks.setdefault(f"round {key}", []).extend([(k, scene)] * len(crops))
                    looks.setdefault(f"read {key}", []).extend(read(crops))
                crops = _foreign_crops(seed, others[k % len(others)], rng, draw)
                pick = crops[int(rng.integers(len(crops)))]
                looks.setdefault(f"foreign {key}", []).append(looker.embed([pick])[0])
                looks.setdefault(f"foreign read {key}", []).extend(read([pick]))
            shown = _display_crops(render_display(seed, family, "rows", "foreign")[1], rng)
            looks.setdefault("faulty", []).append(looker.embed(shown))
            looks.setdefault("faulty_of", []).extend([k] * len(shown))
        held = {name: np.concatenate(v) if name.startswith("genuine") or name == "faulty"
                else np.array(v) for name, v in looks.items()}  # fmt: skip
        np.savez(out / f"{family}.npz", **held)  # type: ignore[arg-type]
        results[family] = {}
        for condition in CONDITIONS:
            key = condition.split()[0]
            measured = (held["enrolled"], held[f"genuine {key}"], held[f"round {key}"],
                        held[f"foreign {key}"], held["faulty"], held["faulty_of"])  # fmt: skip
            results[family][condition] = {  # type: ignore[index]
                "by face": outcomes(*measured, genuine_read=held[f"read {key}"],
                                    foreign_read=held[f"foreign read {key}"]),
                "any face": outcomes(*measured)}  # fmt: skip
        print(f"{family}: {json.dumps(results[family])}", flush=True)
    (out / "setlook.json").write_text(json.dumps(results, indent=1))
    return results


def _foreign_crops(
    seed: int,
    family: str,
    rng: np.random.Generator,
    draw: Callable[[int, int, str], Rendering],
) -> list[NDArray[np.uint8]]:
    """Face-up tiles of play in another set of `family`: the first scene that shows any."""
    from vision.training.enrolment import play_crops

    for scene in range(7, 30):
        crops, _ = play_crops(draw(seed * 10 + scene, seed + 1, family), rng)
        if crops:
            return crops
    raise RuntimeError(f"no face in full view in 23 scenes of play of seed {seed}")


def _display_crops(rendering: Rendering, rng: np.random.Generator) -> list[NDArray[np.uint8]]:
    """A display's face-up tiles, boxed as the detector boxes them."""
    from vision.training.enrolment import truth_boxes

    found, truth = truth_boxes(rendering, rng)
    return [cut(rendering.image, found.corners[i], False)
            for i, label in enumerate(truth) if label in FACE_NAMES]  # fmt: skip


def outcomes(enrolled: NDArray[np.float32], genuine: NDArray[np.float32],
             round: NDArray[np.int64], foreign: NDArray[np.float32],
             faulty: NDArray[np.float32], faulty_of: NDArray[np.int64],
             far: float = LOOK_FAR, genuine_read: NDArray[np.str_] | None = None,
             foreign_read: NDArray[np.str_] | None = None) -> dict[str, object]:  # fmt: skip
    """Per set: its clean rounds flagged (any genuine tile `far` or further from the set), its
    foreign tile caught, its whole display's tiles flagged (each against the rest), and its
    display with a foreign tile refused (any tile flagged). With the faces the play tiles were
    read as, each play tile is judged at its face's bar (`allowed_far`) instead of `far`."""
    genuine_far_at = np.array([allowed_far(f) for f in genuine_read]) if genuine_read is not None \
        else np.full(len(genuine), far)  # fmt: skip
    foreign_far_at = np.array([allowed_far(f) for f in foreign_read]) if foreign_read is not None \
        else np.full(len(foreign), far)  # fmt: skip
    flagged_rounds, rounds, caught, own_flagged, refused = 0, 0, 0, 0, 0
    flagged_tiles = 0
    genuine_far, foreign_far = [], []
    for k, looks in enumerate(enrolled):
        own_flagged += int((look_distance(looks, looks, leave_out=True) >= far).sum())
        shown = faulty[faulty_of == k]
        refused += bool((look_distance(shown, shown, leave_out=True) >= far).any())
        mine = round[:, 0] == k
        for scene in np.unique(round[mine, 1]):
            in_scene = mine & (round[:, 1] == scene)
            distances = look_distance(looks, genuine[in_scene])
            genuine_far += distances.tolist()
            flagged = distances >= genuine_far_at[in_scene]
            flagged_tiles += int(flagged.sum())
            rounds += 1
            flagged_rounds += bool(flagged.any())
        foreign_far.append(float(look_distance(looks, foreign[k : k + 1])[0]))
        caught += foreign_far[-1] >= foreign_far_at[k]
    return {"sets": len(enrolled), "clean rounds": rounds, "clean rounds flagged": flagged_rounds,
            "genuine tiles": len(genuine_far), "genuine tiles flagged": flagged_tiles,
            "foreign caught": int(caught), "whole display tiles flagged": own_flagged,
            "foreign displays refused": refused, "auc": _auc(genuine_far, foreign_far)}  # fmt: skip


ROUND_SEED = 970_000
"""Rounds followed from pixels with a foreign tile slipped in: never used elsewhere."""


def follow_rounds(
    model: Path, out: Path, rounds: int, first_seed: int = ROUND_SEED,
    resolution: tuple[int, int] = (1920, 1080), others: str | None = None,
) -> dict[str, object]:  # fmt: skip
    """Rounds `follow_round` follows, one after another: every other one has a foreign tile,
    the families taking turns; the rest are clean, or have the irregularity `others` (a tile
    missing, a hand short: a short hand with no foreign tile beside it). Each round's row goes
    to `out/rounds.json` as it ends."""
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, object]] = []
    for k in each(range(rounds), rounds, "rounds", "round"):
        foreign = tuple(FAMILIES)[(k // 2) % len(FAMILIES)] if k % 2 else None
        injected = others if foreign is None else None
        rows.append(follow_round(model, first_seed + k, k, foreign, resolution, injected))
        (out / "rounds.json").write_text(json.dumps(rows, indent=1))
    summary = _rounds_summary(rows)
    (out / "rounds-summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary), flush=True)
    return summary


def follow_round(
    model: Path,
    seed: int,
    k: int,
    foreign: str | None,
    resolution: tuple[int, int],
    injected: str | None = None,
) -> dict[str, object]:
    """Round `seed` (the `k`th of a run: its rule book, each book twice running, so that clean
    and foreign rounds meet every book) in the house look followed from pixels by
    the shipped models, the table's set enrolled first from a display laid at the same table
    (its camera and light); with `foreign`, one tile, of a face the set holds, drawn in a set
    of that family; with `injected`, that irregularity. Its foreign-tile alerts, its other
    alerts, where the foreign tile was and how far it looked from the set, frame by frame."""
    from vision.enrol import KnownSet, enrol
    from vision.follow import RoundFollower
    from vision.follow.records import Alert
    from vision.replay import ModelSource
    from vision.synth.round import FPS
    from vision.training.accuracy import RULES

    rules = RULES[(k // 2) % len(RULES)]
    row: dict[str, object] = {"seed": seed, "rules": rules, "injected": injected}
    source = ModelSource(reuse=True)
    source.reader.looker = SetLook(model)
    studio, victim, display = round_display(seed, rules, foreign, resolution, injected)
    if victim is not None:
        holder = next(p for p, ids in studio.plan.hands.items() if victim in ids)
        row |= {"foreign": foreign, "face": studio.plan.faces[victim], "position": holder}
    enrolment = enrol(display, source.detector, source.reader)
    row["enrolled"] = enrolment.whole
    table = _calibrated(studio, rules)
    if not enrolment.whole or table is None:
        row["refused"] = list(enrolment.problems) or ["no frame calibrates"]
        return row
    source.reader.known_set = KnownSet.of(enrolment)
    follower = RoundFollower(table, run=str(seed), cut=studio.plan.cut,
                             cut_options=studio.plan.cut_options)  # fmt: skip
    raised, distances, followed = [], [], None
    for index in range(studio.frame_count):
        t = round(index / FPS, 3)
        image, objects, _ = studio.frame(t)
        found = source.detections(index, t, image)
        raised += follower.follow(t, found, image)  # as the edge box does
        followed = follower.round or followed
        distances += _distance_of(studio.foreign, objects, found)
    raised += follower.finish(round(studio.frame_count / FPS, 3))
    size = studio.scene.size
    row["set size"] = [round(size.length, 1), round(size.width, 1)]
    if studio.foreign:  # how far the slipped-in tile looked, frame by frame, once judged
        row["foreign distance"] = _spread(distances)
        aspect = studio.foreign[victim].tiles.aspect  # as `dress` cuts it: never longer
        length = size.length if aspect is None else min(size.length, size.width * aspect)
        row["foreign size"] = [round(length, 1), round(size.width, 1)]
    if followed is not None:
        row["measured"] = _measured(followed)
    alerts = [r.record for r in raised if isinstance(r.record, Alert)]
    row["foreign alerts"] = [
        {"position": a.position, "observed": a.observed, "summary": a.summary}
        for a in alerts if a.kind == "foreign-tile"
    ]  # fmt: skip
    row["other alerts"] = [{"kind": a.kind, "position": a.position, "observed": a.observed}
                           for a in alerts if a.kind != "foreign-tile"]  # fmt: skip
    return row


def round_display(
    seed: int,
    rules: str,
    foreign: str | None,
    resolution: tuple[int, int] = (1920, 1080),
    injected: str | None = None,
) -> tuple[Studio, int | None, NDArray[np.uint8]]:
    """Round `seed`'s studio (with the irregularity `injected`, if any), with one tile (its id
    returned) drawn in a `foreign` family's set, and the opening display of its house-look
    set, laid at its table (its camera, cloth and light)."""
    from vision.synth.appearance import HOUSE, appearance
    from vision.synth.display import display_scene

    studio = Studio.of(seed, rules, [injected] if injected else [], resolution)
    rng = np.random.default_rng([seed, 0xF07])
    victim = None
    if foreign is not None:
        victim = int(rng.integers(32))
        studio.foreign[victim] = appearance(foreign, rng)
    shown = display_scene(rng, HOUSE, "rows")
    return studio, victim, studio.renderer.render(shown.things, studio.look, rng).image


def _measured(followed: Round) -> dict[str, object]:
    """What the hands' tiles measured on the cloth: the median of every tile box in them, and
    each face-up tile's place, face, frames and median length and width (mm)."""
    reference = np.median(np.asarray(followed.tile_sizes), axis=0) if followed.tile_sizes else []
    return {
        "hands": [round(float(v), 2) for v in reference],
        "tiles": [
            {"zone": zone, "face": slot.label, "frames": len(slot.sizes),
             "size": [round(v, 2) for v in slot.size] if slot.sizes else None}
            for zone, watch in followed.watches.items() for slot in watch.slots
        ],
    }  # fmt: skip


def _distance_of(
    foreign: dict[int, object], objects: list[dict[str, object]], found: Detections
) -> list[float]:
    """The set distance of the detection nearest each foreign tile, where it was judged."""
    if not foreign or not len(found.set_distance):
        return []
    centres = found.corners.mean(1)
    out = []
    for obj in objects:
        if obj.get("id") in foreign and obj["label"] != "back":
            gaps = np.linalg.norm(centres - np.mean(obj["corners"], axis=0), axis=1)  # type: ignore[call-overload]
            nearest = int(np.argmin(gaps))
            if gaps[nearest] < 10 and found.set_distance[nearest] > 0:  # px: the same tile
                out.append(float(found.set_distance[nearest]))
    return out


def _spread(values: list[float]) -> dict[str, object]:
    """How many values, and their median and range."""
    if not values:
        return {"frames": 0}
    return {"frames": len(values), "median": round(float(np.median(values)), 3),
            "min": round(min(values), 3), "max": round(max(values), 3)}  # fmt: skip


def _calibrated(studio: Studio, rules: str) -> TableConfig | None:
    """The round's table, calibrated as an installer would, from a frame its markers show in."""
    for t in (0.0, 1.0, 2.0, 25.0):
        try:
            return calibrate(studio.frame(t)[0], table_id="sim", rules=rules,
                             banker=studio.plan.banker)  # fmt: skip
        except CalibrationError:
            continue
    return None


def _rounds_summary(rows: list[dict[str, object]]) -> dict[str, object]:
    """Foreign rounds flagged at the foreign tile's box (by its look, its size or as an object
    no model boxed, the first check to raise at a box being the one its alert names), those
    flagged there only by another kind (`missing-tile` names the box of a hand short by the
    tiles missing), and the other rounds (clean, or with another irregularity) flagged
    anywhere: false foreign-tile alerts."""
    followed = [r for r in rows if r["enrolled"]]
    foreign = [r for r in followed if "foreign" in r]
    others = [r for r in followed if "foreign" not in r]
    caught = [r for r in foreign if any(a["position"] == r["position"]
                                        for a in r["foreign alerts"])]  # type: ignore[attr-defined]  # fmt: skip
    return {
        "rounds": len(rows),
        "enrolment refused": len(rows) - len(followed),
        "foreign rounds": len(foreign),
        "foreign caught at its box": len(caught),
        "of them by its size": sum(
            any(
                a["position"] == r["position"] and a["observed"].endswith("mm")
                for a in r["foreign alerts"]
            )
            for r in caught
        ),  # type: ignore[attr-defined]
        "foreign rounds raising only another kind": sum(
            bool(r["other alerts"]) for r in foreign if r not in caught
        ),
        "of them at its box": sum(
            any(a.get("position") == r["position"] for a in r["other alerts"])  # type: ignore[attr-defined]
            for r in foreign
            if r not in caught
        ),
        "rounds without a foreign tile": len(others),
        "of them with a foreign-tile alert": sum(bool(r["foreign alerts"]) for r in others),
    }


def _auc(genuine: list[float], foreign: list[float]) -> float:
    """How often a foreign tile scores above a genuine one (ties half)."""
    if not genuine or not foreign:
        return float("nan")
    g, f = np.asarray(genuine)[None, :], np.asarray(foreign)[:, None]
    return round(float((f > g).mean() + 0.5 * (f == g).mean()), 4)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    make = verbs.add_parser("render", help="draw training sets' tile crops")
    make.add_argument("--out", type=Path, default=Path("runs/setlook/data.npz"))
    make.add_argument("--sets", type=int, default=1200)
    make.add_argument("--first-seed", type=int, default=SEED)
    make.add_argument("--workers", type=int, default=2)
    fit = verbs.add_parser("train", help="train the set-look model")
    fit.add_argument(
        "--data",
        type=Path,
        nargs="+",
        default=[Path("runs/setlook/data.npz")],
        help="rendered sets (several files: their sets together)",
    )
    fit.add_argument("--out", type=Path, default=Path("runs/setlook/all"))
    budget = fit.add_mutually_exclusive_group()
    budget.add_argument("--minutes", type=float, help="train this long (8 unless --steps)")
    budget.add_argument(
        "--steps", type=int, help="train exactly this many steps, however busy the machine"
    )
    fit.add_argument("--without", choices=FAMILIES, help="a family left out of training")
    judge = verbs.add_parser("measure", help="foreign tiles in play against enrolled sets")
    judge.add_argument("--model", type=Path, required=True)
    judge.add_argument("--out", type=Path, default=Path("runs/setlook/measure"))
    judge.add_argument("--sets", type=int, default=40, help="sets per family")
    judge.add_argument("--first-seed", type=int, default=MEASURE_SEED)
    judge.add_argument("--families", default=",".join(FAMILIES), help="comma-separated")
    follow = verbs.add_parser("rounds", help="rounds from pixels with a foreign tile slipped in")
    follow.add_argument("--model", type=Path, required=True)
    follow.add_argument("--out", type=Path, default=Path("runs/setlook/rounds"))
    follow.add_argument("--rounds", type=int, default=20)
    follow.add_argument("--first-seed", type=int, default=ROUND_SEED)
    follow.add_argument(
        "--others",
        choices=("missing-tile", "wrong-hand-size"),
        help="the rounds without a foreign tile have this irregularity (else they are clean)",
    )
    args = parser.parse_args()
    if args.verb in ("measure", "rounds") and not args.model.is_file():
        print(f"no model {args.model}", file=sys.stderr)
        return 2
    if args.verb == "rounds":
        follow_rounds(args.model, args.out, args.rounds, args.first_seed, others=args.others)
    elif args.verb == "render":
        render(args.out, args.sets, args.first_seed, args.workers)
    elif args.verb == "train":
        absent = [path for path in args.data if not path.is_file()]
        if absent:
            print(f"no data set {absent[0]}: render it first", file=sys.stderr)
            return 2
        if args.steps is not None and args.steps < 1:
            print(f"--steps {args.steps}: at least one step", file=sys.stderr)
            return 2
        minutes = None if args.steps is not None else (args.minutes or 8.0)
        train(args.data, args.out, minutes, args.without, steps=args.steps)
    else:
        try:
            families = looks_named(args.families, house=False)
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
        measure(args.model, args.out, args.sets, args.first_seed, families)
    return 0


if __name__ == "__main__":
    sys.exit(main())
