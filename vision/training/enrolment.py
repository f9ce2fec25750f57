"""How well enrolment works, per appearance family, with a reader that never saw that family.

For each family: opening displays drawn in it (`vision.synth.display`), whole and with one tile
foreign, missing or doubled, enrolled with the family's left-out reader; then play scenes drawn
in each enrolled set, their tiles read with and without the set (`vision.enrol.KnownSet`), and a
tile of another maker's set slipped in.

Boxes: the true ones moved as the detector's boxes move (`vision.training.train.jitter`), then
moved back onto their tiles by the shipped refiner as `Detector.detect` moves the detector's
own (`--unrefined` leaves them where the move put them), so the numbers measure enrolment and
reading, not the detector; `--detector` finds the display's tiles with the shipped detector
instead (the end-to-end number, which the detector limits until it is trained on the families,
issue 37).

Written to `--out`: `enrolment.json` (the counts), `problems.txt` (why each display was refused)
and `tiles.jsonl` (each display's tiles: place, placed face, reading, how sure, the reader's
chance of the placed face, the face laid at that place in order, how far its set look lies from
the rest's and from its copy's; what is wrong with the display), from which enrolment's bars
are chosen, and `play.jsonl` (each enrolled set: how many of its display's tiles the reader
read as placed, and its play tiles read right at each weight of the set), from which
`SET_WEIGHT` is chosen.

`python3 -m vision.training.enrolment --readers runs/cpu --displays 20 --out runs/enrol`: the
five families, each with its left-out reader; `--families house --detector` (no `--readers`):
the shipped models end to end on the look they were trained on.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from vision.crops import cut
from vision.detections import Detections
from vision.detector import REFINERS, Detector, Reader, Refiner
from vision.enrol import (
    FACE_NAMES,
    Enrolment,
    KnownSet,
    columns,
    enrol,
    enrol_found,
    looks_apart,
)
from vision.progress import each
from vision.synth.appearance import FAMILIES, dress, finish, looks_named, shadow_strength
from vision.synth.dataset import LAYOUT, _cloth, cloth_styles
from vision.synth.display import FAULTS, render_display
from vision.synth.render import Look, Renderer, Rendering
from vision.synth.sampler import random_camera, random_scene
from vision.training.embedding import add_embedding
from vision.training.train import jitter

SEED = 880_000
"""Displays and their play scenes: apart from every other data set's seeds (docs/accuracy.md)."""
PLAY_SCENES = 3
"""Play scenes drawn in each enrolled set (each some 20-30 face-up tiles)."""
PERCENTILES = (0, 1, 5, 50, 95, 99, 100)
SHOWN = 0.9
"""A play tile is read when this share of its face is in view."""


def truth_boxes(
    rendering: Rendering, rng: np.random.Generator, shown: float = 0.0,
    refiner: Refiner | None = None,
) -> tuple[Detections, list[str]]:  # fmt: skip
    """The rendering's tiles and dice with at least `shown` of their face in view, as the
    detector would box them (and `refiner` then move them), with their true labels."""
    kept = [lab for lab in rendering.labels if lab.labelled and lab.visible >= shown]
    corners = np.array([jitter(lab.corners, rng, lab.kind == "die") for lab in kept])
    kinds = tuple("die" if lab.kind == "die" else "tile" for lab in kept)
    found = Detections(corners.reshape(-1, 4, 2), np.ones(len(kept)), kinds)
    if refiner is not None:
        found = refiner.refine(rendering.image, found)
    return found, [str(lab.label) for lab in kept]


def play_scene(
    seed: int, look_seed: int, family: str, at: tuple[Renderer, Look] | None = None
) -> Rendering:
    """A random moment of play in the set a display of `look_seed` showed; with `at`, at that
    table (its camera and cloth, `vision.synth.display.display_table`) and in that light."""
    from vision.synth.display import set_look

    rng = np.random.default_rng([seed, 0x91A])
    look = set_look(look_seed, family)
    things = dress(random_scene(rng, LAYOUT), look)
    if at is None:
        camera = random_camera(rng, LAYOUT, (1920, 1080), zone=False)
        styles = cloth_styles(seed)
        renderer = Renderer(camera, _cloth(styles[int(rng.integers(len(styles)))]), LAYOUT)
        light = replace(Look.random(rng, blur_chance=0.0), shadow=shadow_strength(look.scene, rng))
    else:
        renderer, light = at
    rendering = renderer.render(things, light, rng)
    return replace(rendering, image=finish(rendering.image, look.scene, rng))


WEIGHTS = (0.0, 0.3, 0.5, 0.7, 0.85, 0.95, 1.0)
"""The set's weight against the classifier's (`vision.enrol.SET_WEIGHT`), each measured."""


def play_crops(
    rendering: Rendering, rng: np.random.Generator, refiner: Refiner | None = None
) -> tuple[list[np.ndarray], list[str]]:  # type: ignore[type-arg]
    """Crops of a play scene's face-up tiles in full view, boxed as the detector would."""
    found, truth = truth_boxes(rendering, rng, SHOWN, refiner)
    tiles = [i for i, t in enumerate(truth) if t in FACE_NAMES]
    return [cut(rendering.image, found.corners[i], False) for i in tiles], [truth[i] for i in tiles]


def read_play(reader: Reader, known: KnownSet, crops: list[np.ndarray], truth: list[str],  # type: ignore[type-arg]
              tally: Counter[str], nearest: list[float]) -> None:  # fmt: skip
    """Count play tiles read right: as cut only; as the box reads them without a set (unsure
    tiles both ways round); by the set matched by one end, as cut (the box before tiles were
    matched end to end); and with the set as the box reads now, at each of `WEIGHTS` (0: the
    classifier both ways round) and at the set's own weight (`vision.enrol.set_weight`). Keep
    how like its nearest enrolled tile each one was."""
    if not crops:
        return
    faces_at = columns(reader.names, FACE_NAMES)
    kinds = ("tile",) * len(crops)

    def count(key: str, probs: np.ndarray) -> None:  # type: ignore[type-arg]
        read = [FACE_NAMES[int(np.argmax(row))] for row in probs[:, faces_at]]
        tally[key] += sum(r == t for r, t in zip(read, truth, strict=True))

    as_cut, one_end = reader.look_at(crops, half_turn_below=0.0)
    assert one_end is not None
    count("right as cut", as_cut)
    count("right by one end at 0.3", known.combine(as_cut, one_end, reader.names, kinds, 0.3))
    probs, embedding = reader.look_at(crops, both_ways=True)  # as `Reader.read` with a set
    assert embedding is not None
    count("right alone", probs)  # both ways only shapes the embedding: the same reading
    for weight in WEIGHTS:
        count(f"right at {weight}", known.combine(probs, embedding, reader.names, kinds, weight))
    count("right as the box reads", known.combine(probs, embedding, reader.names, kinds))
    tally["tiles"] += len(crops)
    nearest += known.likeness(embedding).max(1).tolist()


def _reader(readers: Path | None, family: str, out: Path) -> Reader | None:
    """The family's left-out reader with its embedding; the shipped one without `readers`, or
    a reader file with its embedding that `readers` names (one for every family)."""
    if readers is None:
        return Reader(flatness=None)
    if readers.is_file():
        return Reader(readers, flatness=None)
    model = readers / f"without-{family}" / "reader" / "weights" / "best.onnx"
    if not model.is_file():
        print(f"{family}: no left-out reader at {model}; skipped", file=sys.stderr)
        return None
    with_embedding = out / f"reader-without-{family}.onnx"
    add_embedding(model, with_embedding)
    return Reader(with_embedding, flatness=None)


def measure(
    readers: Path | None,
    out: Path,
    displays: int,
    detector: bool,
    families: tuple[str, ...],
    first_seed: int = SEED,
    refined: bool = True,
) -> dict[str, object]:
    """Every family's numbers, written to `out/enrolment.json` as each family finishes."""
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, object] = {}
    problems: list[str] = []
    shipped = Detector() if detector else None
    refiner = None  # refines the play crops' boxes, and without `detector` the display's
    if refined:
        stages = [p for p in REFINERS if p.exists()]
        refiner = shipped.refiner if shipped is not None else Refiner(stages)
    cases = [("whole", "rows"), ("whole", "line"), ("whole", "scattered"),
             *((fault, "rows") for fault in FAULTS)]  # fmt: skip
    tiles = out / "tiles.jsonl"  # every display's tiles, for choosing enrolment's bars
    tiles.write_text("")
    (out / "play.jsonl").write_text("")  # each enrolled set's play tiles, read at each weight
    for family in families:
        reader = _reader(readers, family, out)
        if reader is None:
            continue
        tally: dict[str, Counter[str]] = {}
        play: Counter[str] = Counter()
        genuine: list[float] = []
        foreign: list[float] = []
        jobs = [(case, arrangement, k) for case, arrangement in cases for k in range(displays)]
        started = time.monotonic()
        for case, arrangement, k in each(jobs, len(jobs), f"{family} displays", "display"):
            seed = first_seed + k
            shown, rendering, _ = render_display(
                seed,
                family,
                arrangement,
                None if case == "whole" else case,  # type: ignore[arg-type]
            )
            rng = np.random.default_rng([seed, 0xB0C])
            if shipped is not None:
                enrolment = enrol(rendering.image, shipped, reader)
            else:
                found = truth_boxes(rendering, rng, refiner=refiner)[0]
                enrolment = enrol_found(rendering.image, found, reader)
            key = f"{case} {arrangement}" if case == "whole" else case
            counts = tally.setdefault(key, Counter())
            counts["displays"] += 1
            counts["accepted"] += enrolment.whole
            counts["in order"] += enrolment.in_order
            counts["tiles"] += len(enrolment.tiles)
            laid = dict(enumerate(shown.faces, 1))
            if case == "whole":
                counts["read right"] += sum(
                    t.read == laid.get(t.place or 0) for t in enrolment.tiles
                )
                counts["placed right"] += sum(
                    t.face == laid.get(t.place or 0) for t in enrolment.tiles
                )
            for problem in enrolment.problems:
                problems.append(f"{family} {seed} {key}: {problem}")
            with tiles.open("a") as written:
                line = _display_line(family, seed, key, enrolment, laid) | {
                    "fault": shown.fault_detail
                }
                written.write(json.dumps(line) + "\n")
            if case == "whole" and arrangement == "rows" and enrolment.whole:
                known = KnownSet.of(enrolment)
                read: Counter[str] = Counter()
                for scene in range(PLAY_SCENES):
                    scene_drawn = play_scene(seed * 10 + scene, seed, family)
                    crops, truth = play_crops(scene_drawn, rng, refiner)
                    read_play(reader, known, crops, truth, read, genuine)
                play.update(read)
                agreement = sum(t.agrees for t in enrolment.tiles) / len(enrolment.tiles)
                with (out / "play.jsonl").open("a") as written:
                    line = {"family": family, "seed": seed, "agreement": agreement, **read}
                    written.write(json.dumps(line) + "\n")
                other = [f for f in FAMILIES if f != family][k % (len(FAMILIES) - 1)]
                crops, _ = play_crops(play_scene(seed * 10 + 9, seed + 1, other), rng, refiner)
                seen = reader.look_at(crops, both_ways=True)[1] if crops else None
                foreign += known.likeness(seen).max(1).tolist() if seen is not None else []
        results[family] = {key: dict(value) for key, value in tally.items()} | {
            "play": dict(play),
            "nearest genuine": np.round(np.percentile(genuine, PERCENTILES), 3).tolist()
            if genuine
            else [],
            "nearest foreign": np.round(np.percentile(foreign, PERCENTILES), 3).tolist()
            if foreign
            else [],
            "seconds": round(time.monotonic() - started),
        }
        (out / f"likeness-{family}.json").write_text(
            json.dumps({"genuine": genuine, "foreign": foreign})
        )
        (out / "enrolment.json").write_text(json.dumps(results, indent=1))
        (out / "problems.txt").write_text("\n".join(problems) + "\n")
        print(f"{family}: {json.dumps(results[family])}", flush=True)
    return results


def _display_line(
    family: str, seed: int, case: str, enrolment: Enrolment, laid: dict[int, str]
) -> dict[str, object]:
    """One display's verdict and each of its tiles: place, placed face, reading, how sure, the
    reader's chance of the placed face, the face the dealer laid at that place (`laid`: the
    truth only where the display is laid in order, for a scattered one's places are the
    finder's guess, not the dealer's), and how far its set look lies from the rest of the
    display's and from its face's other copy (`vision.enrol.looks_apart`; None where not
    judged)."""
    rest, copy = looks_apart(enrolment.tiles)
    far = [None if np.isnan(d) else round(float(d), 4) for d in rest]
    copies = [None if np.isnan(d) else round(float(d), 4) for d in copy]
    return {
        "family": family,
        "seed": seed,
        "case": case,
        "in_order": enrolment.in_order,
        "problems": list(enrolment.problems),
        "tiles": [
            [
                t.place,
                t.placed,
                t.read,
                round(t.read_score, 6),
                t.placed_score,
                laid.get(t.place or 0),
                distance,
                from_copy,
            ]
            for t, distance, from_copy in zip(enrolment.tiles, far, copies, strict=True)
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readers", type=Path,
                        help="folder with each family's without-FAMILY/reader run, or one "
                        "reader .onnx with its embedding for every family (default: the "
                        "shipped reader)")  # fmt: skip
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated")
    parser.add_argument("--displays", type=int, default=20, help="displays per case and family")
    parser.add_argument("--out", type=Path, default=Path("runs/enrol"))
    parser.add_argument("--detector", action="store_true", help="the shipped detector's boxes")
    parser.add_argument("--unrefined", action="store_true",
                        help="the true boxes moved as the detector's, not refined")  # fmt: skip
    parser.add_argument("--first-seed", type=int, default=SEED,
                        help="the first display's seed (another range to confirm on)")  # fmt: skip
    args = parser.parse_args()
    if args.readers is not None and not args.readers.exists():
        print(f"no folder or reader file {args.readers}", file=sys.stderr)
        return 2
    try:
        families = looks_named(args.families)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    first, refined = args.first_seed, not args.unrefined
    measure(args.readers, args.out, args.displays, args.detector, families, first, refined)
    return 0


if __name__ == "__main__":
    sys.exit(main())
