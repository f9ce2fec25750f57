"""The opening display of NZ 8.0: a set's 32 tiles face up in order of rank, and its dice, as a
dealer lays them out before play. `paigow enrol` learns the table's own set from this picture;
the simulator draws it in any appearance family, whole or with one tile wrong, so that
enrolment can be measured (`vision.training.enrolment`).

A display is drawn with its truth: each tile's face and its place in the order the dealer laid
them. The dealer may lay the order from either end, in rows or in one line; the enrolment has to
find the order, so each display draws where it starts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from vision.enrol import DISPLAY_ORDER
from vision.layout import TableLayout
from vision.synth.appearance import FAMILIES, Appearance, appearance, dress, finish, shadow_strength
from vision.synth.camera import Camera
from vision.synth.dataset import LAYOUT, _cloth, cloth_styles, light_cloth
from vision.synth.render import Look, Renderer, Rendering
from vision.synth.sampler import TileSize, random_camera
from vision.synth.scene import Thing, die, tile

Arrangement = Literal["rows", "line", "scattered"]
ARRANGEMENTS: tuple[Arrangement, ...] = ("rows", "line", "scattered")
Fault = Literal["foreign", "missing", "doubled", "face-down"]
FAULTS: tuple[Fault, ...] = ("foreign", "missing", "doubled", "face-down")

CENTRE = (0.0, 560.0)
"""Where the display lies: the middle of the table, clear of the dealer's chips, in mm."""
ROW_LENGTH = 8
"""Tiles in a row when the display is laid in rows: four rows of eight."""
GAP = (6.0, 14.0)
"""Space between neighbouring tiles (mm): across a row, and between rows."""
DICE_Y = 330.0
"""The dice lie nearer the dealer than the tiles, in a row (mm)."""
LAY_JITTER = (1.5, 0.03)
"""How untidily a dealer lays them: mm off the grid, radians of turn."""


@dataclass(frozen=True)
class Display:
    """A drawn opening display: its scene and its truth."""

    things: list[Thing]
    faces: tuple[str, ...]
    """Each tile's face, in the order the dealer laid them."""
    arrangement: Arrangement
    fault: Fault | None
    fault_detail: str
    """What is wrong, in words ('' for a whole set)."""
    dice: tuple[int, ...]


def laid_faces(rng: np.random.Generator) -> list[str]:
    """The display order with each mixed rank's two tiles in a random order."""
    faces = list(DISPLAY_ORDER)
    for start in range(22, 32, 2):
        if rng.random() < 0.5:
            faces[start], faces[start + 1] = faces[start + 1], faces[start]
    return faces


def _grid(
    arrangement: Arrangement, size: TileSize, rng: np.random.Generator
) -> list[tuple[float, float, float]]:
    """Each of 32 places (x, y, yaw) in the order laid, starting at a random corner."""
    if arrangement == "scattered":
        return _scattered(size, rng)
    per_row = ROW_LENGTH if arrangement == "rows" else 32
    rows = 32 // per_row
    pitch_x, pitch_y = size.width + GAP[0], size.length + GAP[1]
    from_right, from_far = rng.random() < 0.5, rng.random() < 0.5
    places = []
    for k in range(32):
        row, column = divmod(k, per_row)
        column = per_row - 1 - column if from_right else column
        row = rows - 1 - row if from_far else row
        x = CENTRE[0] + (column - (per_row - 1) / 2) * pitch_x
        y = CENTRE[1] + (row - (rows - 1) / 2) * pitch_y
        places.append((
            x + rng.normal(0, LAY_JITTER[0]),
            y + rng.normal(0, LAY_JITTER[0]),
            float(rng.normal(0, LAY_JITTER[1])),
        ))  # fmt: skip
    return places


def _scattered(size: TileSize, rng: np.random.Generator) -> list[tuple[float, float, float]]:
    """32 places in the middle of the table, any turn, apart from each other: a jittered grid
    of 8 x 4 cells, each wider than a tile is long, so that no two tiles touch."""
    cell = size.length * 1.15
    cells = [(column, row) for row in range(4) for column in range(8)]
    order = rng.permutation(len(cells))
    places = []
    for k in order:
        column, row = cells[int(k)]
        slack = (cell - size.length) / 2
        places.append((
            CENTRE[0] + (column - 3.5) * cell * 1.6 + rng.uniform(-slack, slack),
            CENTRE[1] + (row - 1.5) * cell + rng.uniform(-slack, slack),
            float(rng.uniform(0, 2 * math.pi)),
        ))  # fmt: skip
    return places


def display_scene(
    rng: np.random.Generator,
    look: Appearance,
    arrangement: Arrangement = "rows",
    fault: Fault | None = None,
    foreign_look: Appearance | None = None,
) -> Display:
    """One opening display dressed in `look`. With a `fault`, one tile is wrong: `missing`
    leaves its place empty; `doubled` puts there a second tile of a face that already has all
    its copies (from the same set, so it looks like the set's own); `foreign` puts there the
    same face from another maker's set (`foreign_look`); `face-down` lays its tile back up, so
    the camera sees a back where a face should be shown."""
    size = TileSize.random(rng)
    faces = laid_faces(rng)
    places = _grid(arrangement, size, rng)
    wrong = int(rng.integers(32)) if fault else -1
    detail = ""
    if fault == "doubled":
        twice = str(rng.choice([f for f in DISPLAY_ORDER if f != faces[wrong]]))
        detail = f"place {wrong + 1} ({faces[wrong]}) holds a second {twice}"
        faces[wrong] = twice
    elif fault == "missing":
        detail = f"place {wrong + 1} ({faces[wrong]}) is empty"
    elif fault == "foreign":
        if foreign_look is None:
            raise ValueError("a foreign tile needs the look of the set it comes from")
        detail = f"place {wrong + 1} holds a {faces[wrong]} of a {foreign_look.family} set"
    elif fault == "face-down":
        detail = f"place {wrong + 1} ({faces[wrong]}) lies face down"
    things: list[Thing] = []
    laid: list[str] = []
    for k, (face, (x, y, yaw)) in enumerate(zip(faces, places, strict=True)):
        if k == wrong and fault == "missing":
            continue
        up = not (k == wrong and fault == "face-down")
        piece = tile(face, x, y, yaw, size=size.size, face_up=up, tags={"place": k + 1})
        if k == wrong and fault == "foreign":
            assert foreign_look is not None
            piece = replace(piece, tags={**piece.tags, "foreign": True})
        things += dress([piece], foreign_look if piece.tags.get("foreign") else look)  # type: ignore[arg-type]
        laid.append(face)
    values = tuple(int(v) for v in rng.integers(1, 7, 3))
    side = float(rng.uniform(13, 17))
    things += dress(
        [die(v, CENTRE[0] + (k - 1) * side * 2.2, DICE_Y, float(rng.uniform(0, 6)), size=side)
         for k, v in enumerate(values)],
        look,
    )  # fmt: skip
    return Display(things, tuple(laid), arrangement, fault, detail, values)


def render_display(
    seed: int,
    family: str,
    arrangement: Arrangement = "rows",
    fault: Fault | None = None,
    resolution: tuple[int, int] = (1920, 1080),
    layout: TableLayout = LAYOUT,
    camera: Camera | None = None,
) -> tuple[Display, Rendering, Appearance]:
    """Display `seed` of `family` drawn through a full-table camera: the same pixels for the
    same arguments. Also returns the set's look, so that play can be drawn in the same set."""
    shown, table, light, look, rng = display_table(
        seed, family, arrangement, fault, resolution, layout, camera
    )
    rendering = table.render(shown.things, light, rng)
    rendering = replace(rendering, image=finish(rendering.image, look.scene, rng))
    return shown, rendering, look


def display_table(
    seed: int,
    family: str,
    arrangement: Arrangement = "rows",
    fault: Fault | None = None,
    resolution: tuple[int, int] = (1920, 1080),
    layout: TableLayout = LAYOUT,
    camera: Camera | None = None,
) -> tuple[Display, Renderer, Look, Appearance, np.random.Generator]:
    """Display `seed` of `family` before it is drawn: the display, the table it lies on (its
    camera and cloth), the light, the set's look and the generator that draws on; play at the
    same table is drawn through the same renderer and light."""
    rng = np.random.default_rng([seed, 0xD15])
    look = set_look(seed, family)
    foreign_look = None
    if fault == "foreign":
        others = [f for f in FAMILIES if f != family]
        other = others[int(rng.integers(len(others)))]
        foreign_look = appearance(other, np.random.default_rng([seed, 0xF0E]))
    shown = display_scene(rng, look, arrangement, fault, foreign_look)
    camera = camera or random_camera(rng, layout, resolution, zone=False)
    styles = cloth_styles(seed)
    cloth = _cloth(styles[int(rng.integers(len(styles)))])
    if rng.random() < look.scene.light_cloth:
        cloth = _cloth(light_cloth(rng))
    light = replace(Look.random(rng, blur_chance=0.0), shadow=shadow_strength(look.scene, rng))
    return shown, Renderer(camera, cloth, layout), light, look, rng


def set_look(seed: int, family: str) -> Appearance:
    """The look of the set a display of `seed` shows: play in the same set uses it too."""
    return appearance(family, np.random.default_rng([seed, 0x5E7]))
