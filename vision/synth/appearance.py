"""Appearance families: named, seeded distributions of how a set of tiles, its dice and the
table around them look, wide enough that a real casino's set falls inside one of them.

A model trained on one renderer's idea of a tile reads what that renderer drew and little else
(`docs/detector.md`: 73-85% on other makers' designs). Each family here varies what real sets
vary (`../shared/domain/tiles.md`, "How real sets differ"): the `3-3`'s layout, the `1`'s size
and place, which of the `6-6`'s pips are red, the 3s' diagonal, pip size, inset and finish,
body and ink colours, proportions; for dice Asian or Western pips, body colours, corners and
size. Every option appears in at least two families, so leaving one family out of training
(`vision.training.families`) measures reading an unseen *combination*, as a new casino is; and
every tile design is drawn on dark and on light bodies, so that no design is learnt together
with one body colour (`models/MODEL_CARD.md`: charcoal's small `1`, shown only on light bodies
with charcoal left out, read as a back).

`dress` repaints a scene drawn by `vision.synth.sampler` in one family's look; the scene's
positions and the random stream that drew them are untouched, so the house look (`HOUSE`)
renders exactly what the data sets and held-out sets always rendered.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import Literal

import cv2
import numpy as np

from vision.labels import END_PIPS
from vision.synth.scene import _DIE_LAYOUT, Box, Thing
from vision.synth.textures import DIE_PIPS, DIE_PX, TILE_PX, Image, _rounded_rect

BGR = tuple[int, int, int]
DoubleThree = Literal["ends", "centre-line"]
"""`3-3` as pairs across both ends (house) or four pips along the centre line with a pair
across the middle."""
One = Literal["large-centre", "small-near-end"]
SixRed = Literal["column", "by-ends", "middle-row"]
"""Which three pips of each `6` end are red on the `6-6`: one column (house), the whole top end
red and the bottom white ('by ends'), or the middle row and one corner pair."""
Finish = Literal["painted", "engraved", "domed"]


@dataclass(frozen=True)
class TileLook:
    body: BGR
    ink: BGR  # the non-red pips: white on dark bodies, black on ivory ones
    red: BGR
    back: BGR
    side: BGR
    double_three: DoubleThree = "ends"
    one: One = "large-centre"
    six_red: SixRed = "column"
    mirrored_threes: bool = False  # the 3s' diagonal runs the other way
    pip_scale: float = 1.0  # pip radius against the house's
    inset: float = 1.0  # pip spread about the end's centre: below 1 crowds them inward
    finish: Finish = "painted"
    corner: int = 7  # corner radius, sprite pixels
    aspect: float | None = None  # length / width; None keeps the scene's tile


@dataclass(frozen=True)
class DiceLook:
    body: BGR
    ink: BGR
    asian: bool = True  # red 1 and 4, the 1 large; Western: every pip `ink`, the 1 normal
    corner: int = 5
    size: float | None = None  # mm; None keeps the scene's dice


@dataclass(frozen=True)
class SceneLook:
    light_cloth: float = 0.0  # chance the cloth is a light one
    colour_temperature: float = 0.0  # -1 tungsten .. +1 daylight-blue, 0 neutral
    shadow: tuple[float, float] = (0.2, 0.5)  # harsh light: dark shadows
    defocus: float = 0.0  # Gaussian sigma in pixels at 1080p
    compression: bool = False  # H.264-like: chroma halved, blocky low-quality coding


@dataclass(frozen=True)
class Appearance:
    family: str
    tiles: TileLook
    dice: DiceLook
    scene: SceneLook


RED = (40, 40, 215)
WHITE = (235, 235, 235)
BLACK = (22, 20, 20)
HOUSE = Appearance(
    "house",
    TileLook(BLACK, WHITE, RED, back=(30, 27, 27), side=(24, 22, 22)),
    DiceLook((236, 240, 242), (25, 25, 25)),
    SceneLook(),
)
"""The look every data set had before families: `dress` with it changes nothing."""


def _shade(rng: np.random.Generator, colour: BGR, spread: int = 18) -> BGR:
    return tuple(int(np.clip(c + rng.integers(-spread, spread + 1), 0, 255)) for c in colour)  # type: ignore[return-value]


def _pick(rng: np.random.Generator, options: tuple) -> object:  # type: ignore[type-arg]
    return options[int(rng.integers(len(options)))]


BODIES = {"black": BLACK, "charcoal": (48, 46, 46), "navy": (70, 35, 20), "ivory": (200, 228, 238)}
DICE_BODIES = {"white": (236, 240, 242), "ivory": (190, 222, 236), "red": (40, 40, 190),
               "green": (60, 140, 40), "blue": (160, 80, 30), "amber": (40, 150, 220)}  # fmt: skip


def _tiles(rng: np.random.Generator, bodies: tuple[str, ...], double_three: tuple[str, ...],
           one: tuple[str, ...], six_red: tuple[str, ...], finish: tuple[str, ...],
           pips: tuple[float, float], inset: tuple[float, float]) -> TileLook:  # fmt: skip
    name = str(_pick(rng, bodies))
    body = _shade(rng, BODIES[name], 10)
    ivory = name == "ivory"
    ink = _shade(rng, (30, 30, 30) if ivory else WHITE, 14)
    back = _shade(rng, body, 8) if rng.random() < 0.7 else _shade(rng, (40, 60, 110), 20)
    return TileLook(
        body=body,
        ink=ink,
        red=_shade(rng, RED, 25),
        back=back,
        side=tuple(int(c * 0.8) for c in body),  # type: ignore[arg-type]
        double_three=_pick(rng, double_three),  # type: ignore[arg-type]
        one=_pick(rng, one),  # type: ignore[arg-type]
        six_red=_pick(rng, six_red),  # type: ignore[arg-type]
        mirrored_threes=bool(rng.random() < 0.5),
        pip_scale=float(rng.uniform(*pips)),
        inset=float(rng.uniform(*inset)),
        finish=_pick(rng, finish),  # type: ignore[arg-type]
        corner=int(rng.integers(3, 12)),
        aspect=float(rng.uniform(2.0, 2.6)),
    )


def _dice(rng: np.random.Generator, bodies: tuple[str, ...], asian: float) -> DiceLook:
    name = str(_pick(rng, bodies))
    light = name in ("white", "ivory")
    return DiceLook(
        body=_shade(rng, DICE_BODIES[name], 12),
        ink=_shade(rng, (25, 25, 25) if light else (235, 235, 235), 12),
        asian=bool(rng.random() < asian),
        corner=int(rng.integers(1, 10)),
        size=float(rng.uniform(12, 20)),
    )


def _scene(rng: np.random.Generator, light_cloth: float) -> SceneLook:
    return SceneLook(
        light_cloth=light_cloth,
        colour_temperature=float(rng.uniform(-1, 1)),
        shadow=(0.1, 0.75),
        defocus=float(rng.uniform(0, 1.6)) if rng.random() < 0.4 else 0.0,
        compression=bool(rng.random() < 0.35),
    )


def _classic(rng: np.random.Generator) -> Appearance:
    """Dark tiles much like the house's, pips larger or smaller; Asian dice."""
    return Appearance(
        "classic",
        _tiles(
            rng,
            bodies=("black", "charcoal"),
            double_three=("ends",),
            one=("large-centre", "small-near-end"),
            six_red=("column", "middle-row"),
            finish=("painted", "domed", "engraved"),
            pips=(0.7, 1.3),
            inset=(0.85, 1.05),
        ),
        _dice(rng, ("white", "ivory"), asian=0.9),
        _scene(rng, 0.2),
    )


def _ivory(rng: np.random.Generator) -> Appearance:
    """Ivory tiles with black and red pips, the `3-3` either way, engraved pips among others."""
    return Appearance(
        "ivory",
        _tiles(
            rng,
            bodies=("ivory",),
            double_three=("centre-line", "ends"),
            one=("small-near-end", "large-centre"),
            six_red=("by-ends", "column", "middle-row"),
            finish=("engraved", "painted", "domed"),
            pips=(0.75, 1.2),
            inset=(0.8, 1.0),
        ),
        _dice(rng, ("white", "ivory"), asian=0.3),
        _scene(rng, 0.5),
    )


def _navy(rng: np.random.Generator) -> Appearance:
    """Navy tiles, domed pips, the `3-3` either way; translucent coloured Western dice."""
    return Appearance(
        "navy",
        _tiles(
            rng,
            bodies=("navy",),
            double_three=("centre-line", "ends"),
            one=("large-centre",),
            six_red=("middle-row", "column", "by-ends"),
            finish=("domed", "painted"),
            pips=(0.9, 1.45),
            inset=(0.85, 1.05),
        ),
        _dice(rng, ("red", "green", "blue", "amber"), asian=0.2),
        _scene(rng, 0.3),
    )


def _charcoal(rng: np.random.Generator) -> Appearance:
    """Charcoal or black tiles with small engraved dots set well in, the `1` small near the end."""
    return Appearance(
        "charcoal",
        _tiles(
            rng,
            bodies=("charcoal", "black"),
            double_three=("ends", "centre-line"),
            one=("small-near-end",),
            six_red=("by-ends", "middle-row"),
            finish=("engraved",),
            pips=(0.55, 0.9),
            inset=(0.7, 0.95),
        ),
        _dice(rng, ("ivory", "white", "red"), asian=0.7),
        _scene(rng, 0.4),
    )


def _cream(rng: np.random.Generator) -> Appearance:
    """Cream tiles with large discs; white Western dice, and now and then coloured ones."""
    return Appearance(
        "cream",
        _tiles(
            rng,
            bodies=("ivory",),
            double_three=("ends", "centre-line"),
            one=("large-centre", "small-near-end"),
            six_red=("column", "by-ends", "middle-row"),
            finish=("painted", "domed", "engraved"),
            pips=(1.0, 1.45),
            inset=(0.9, 1.05),
        ),
        _dice(rng, ("white", "white", "green", "blue"), asian=0.4),
        _scene(rng, 0.6),
    )


FAMILIES = {"classic": _classic, "ivory": _ivory, "navy": _navy, "charcoal": _charcoal,
            "cream": _cream}  # fmt: skip
"""Each family's sampler; `house` is the one fixed look and no family."""


def looks_named(text: str, house: bool = True) -> tuple[str, ...]:
    """The looks a comma-separated `--families` list names (`house` among them where allowed);
    ValueError naming the first unknown one, for a command to print in one line."""
    named = tuple(name.strip() for name in text.split(",") if name.strip())
    known = ("house", *FAMILIES) if house else tuple(FAMILIES)
    unknown = [name for name in named if name not in known]
    if unknown:
        raise ValueError(f"no appearance family {unknown[0]!r}")
    return named


def appearance(family: str, rng: np.random.Generator) -> Appearance:
    if family == "house":
        return HOUSE
    if family not in FAMILIES:
        raise ValueError(f"no appearance family {family!r}: one of house, {', '.join(FAMILIES)}")
    return FAMILIES[family](rng)


# -- sprites -------------------------------------------------------------------------------

CENTRE_LINE_THREE = [(0.5, 0.18), (0.5, 0.5), (0.28, 0.93)]
"""One end of a `3-3` drawn as four along the centre line with a pair across the middle: the
other end mirrors this one along the tile, so its third pip sits at the other side (0.72 after
`_end_pips` mirrors across for the second end)."""


def _end_pips(look: TileLook, face: str, count: int, end: int) -> list[tuple[float, float]]:
    if face == "3-3" and look.double_three == "centre-line":
        pips = list(CENTRE_LINE_THREE)
        return [(1 - u, v) for u, v in pips] if end else pips
    if face == "3-3":
        return [(0.28, 0.25), (0.72, 0.25), (0.5, 0.8)]
    if count == 1 and look.one == "small-near-end":
        return [(0.5, 0.3)]
    pips = END_PIPS[count]
    if count == 3 and look.mirrored_threes:
        pips = [(1 - u, v) for u, v in pips]
    return [(0.5 + (u - 0.5) * look.inset, 0.5 + (v - 0.5) * look.inset) for u, v in pips]


def _red(look: TileLook, face: str, count: int, index: int, end: int) -> bool:
    if face != "6-6":
        return count in (1, 4)
    if look.six_red == "by-ends":
        return end == 0
    if look.six_red == "middle-row":
        return index in (2, 3) or index == (0 if end == 0 else 5)
    return index % 2 == 0


def _pip(sprite: Image, x: int, y: int, radius: int, colour: BGR, finish: Finish,
         body: BGR) -> None:  # fmt: skip
    rim = tuple(int(c * 0.3) for c in body)
    if finish == "engraved":
        cv2.circle(sprite, (x, y), radius + 2, (*rim, 255), -1, cv2.LINE_AA)
    else:
        cv2.circle(sprite, (x, y), radius + 1, (8, 8, 8, 255), -1, cv2.LINE_AA)
    cv2.circle(sprite, (x, y), radius, (*colour, 255), -1, cv2.LINE_AA)
    if finish == "domed":  # a highlight towards the light
        glint = tuple(min(255, int(c * 0.5 + 128)) for c in colour)
        cv2.circle(sprite, (x - radius // 3, y - radius // 3), max(1, radius // 3), (*glint, 255),
                   -1, cv2.LINE_AA)  # fmt: skip


@cache
def tile_face(face: str, look: TileLook) -> Image:
    """BGRA sprite of a face-up tile in this look, long axis vertical, `a` pips on top."""
    w, h = TILE_PX
    sprite = np.zeros((h, w, 4), np.uint8)
    _rounded_rect(sprite, (*look.body, 255), radius=look.corner)
    a, b = (int(x) for x in face.split("-"))
    half = h // 2
    for end, count in ((0, a), (1, b)):
        for index, (u, v) in enumerate(_end_pips(look, face, count, end)):
            along = 1 - v if end else v
            x = round(4 + u * (w - 8))
            y = round(end * half + 3 + along * (half - 6))
            large = count == 1 and look.one == "large-centre" and face != "3-3"
            radius = max(2, round((8 if large else 4) * look.pip_scale))
            colour = look.red if _red(look, face, count, index, end) else look.ink
            _pip(sprite, x, y, radius, colour, look.finish, look.body)
    return sprite


@cache
def tile_back(look: TileLook) -> Image:
    w, h = TILE_PX
    sprite = np.zeros((h, w, 4), np.uint8)
    _rounded_rect(sprite, (*look.back, 255), radius=look.corner)
    return sprite


@cache
def die_face(value: int, look: DiceLook) -> Image:
    s = DIE_PX
    sprite = np.zeros((s, s, 4), np.uint8)
    _rounded_rect(sprite, (*look.body, 255), radius=look.corner)
    red = look.asian and value in (1, 4)
    colour = (40, 40, 215) if red else look.ink
    if red and look.body[2] > 150 and look.body[0] < 100:  # red pips on a red die: gold paint
        colour = (60, 200, 235)
    for u, v in DIE_PIPS[value]:
        radius = 9 if (value == 1 and look.asian) else 4
        cv2.circle(sprite, (int(u * s), int(v * s)), radius, (*colour, 255), -1, cv2.LINE_AA)
    return sprite


# -- dressing a scene -------------------------------------------------------------------------


def dress(things: list[Thing], look: Appearance) -> list[Thing]:
    """The scene with every tile and die repainted (and resized) in `look`; positions kept."""
    if look is HOUSE:
        return things
    dressed: list[Thing] = []
    for thing in things:
        if isinstance(thing, Box) and thing.kind == "tile":
            dressed.append(_dress_tile(thing, look.tiles))
        elif isinstance(thing, Box) and thing.kind == "die":
            dressed.append(_dress_die(thing, look.dice))
        else:
            dressed.append(thing)
    return dressed


def _dress_tile(tile: Box, look: TileLook) -> Box:
    face, face_up = tile.tags.get("face"), bool(tile.tags.get("face_up"))
    front = tile_face(str(face), look) if face is not None else tile_back(look)
    up, down = (front, tile_back(look)) if face_up else (tile_back(look), front)
    width, length, thickness = tile.size
    if look.aspect is not None:
        length = min(length, width * look.aspect)  # never longer: stacked tiles stay apart
    return replace(tile, size=(width, length, thickness), top=up, bottom=down,
                   sides=(look.side,) * 4)  # fmt: skip


def _dress_die(die: Box, look: DiceLook) -> Box:
    value = int(die.tags["value"])  # type: ignore[call-overload]
    top, bottom, px, nx, py, ny = _DIE_LAYOUT[value]
    side = die.size[0]
    size = look.size if look.size is not None else side
    x, y, z = die.centre
    z = z * size / side  # lying flat or leaning, the lift scales with the die
    return replace(
        die,
        centre=(x, y, z),
        size=(size, size, size),
        top=die_face(top, look),
        bottom=die_face(bottom, look),
        sides=(die_face(px, look), die_face(nx, look), die_face(py, look), die_face(ny, look)),
    )


# -- the camera's side --------------------------------------------------------------------------

LIGHT_FELTS = [
    (170, 190, 200),
    (200, 200, 200),
    (150, 200, 160),
    (210, 180, 150),
    (140, 170, 215),
]  # fmt: skip  BGR beige, light grey, pale green, pale blue, sand


def colour_temperature(image: Image, warmth: float) -> Image:
    """Tungsten (-1) lifts red and drops blue; daylight-blue (+1) the reverse."""
    gains = np.array([1 + 0.22 * warmth, 1.0, 1 - 0.22 * warmth], np.float32)
    return cv2.convertScaleAbs(image.astype(np.float32) * gains)


def defocus(image: Image, sigma: float) -> Image:
    if sigma <= 0:
        return image
    return cv2.GaussianBlur(image, (0, 0), sigma * image.shape[0] / 1080)


def compress(image: Image, rng: np.random.Generator) -> Image:
    """What a cheap H.264 stream does to a frame: chroma at half resolution, then coding at a
    low quality (8 x 8 blocks, ringing around pips)."""
    ycc = cv2.cvtColor(image, cv2.COLOR_BGR2YCrCb)
    h, w = image.shape[:2]
    for channel in (1, 2):
        half = cv2.resize(ycc[..., channel], (w // 2, h // 2), interpolation=cv2.INTER_AREA)
        ycc[..., channel] = cv2.resize(half, (w, h), interpolation=cv2.INTER_LINEAR)
    image = cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR)
    quality = int(rng.integers(18, 45))
    ok, coded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return cv2.imdecode(coded, cv2.IMREAD_COLOR) if ok else image


def finish(image: Image, scene: SceneLook, rng: np.random.Generator) -> Image:
    """The family's camera and light applied to a rendered frame."""
    if scene.colour_temperature:
        image = colour_temperature(image, scene.colour_temperature)
    image = defocus(image, scene.defocus)
    if scene.compression:
        image = compress(image, rng)
    return image


def shadow_strength(scene: SceneLook, rng: np.random.Generator) -> float:
    return float(rng.uniform(*scene.shadow))
