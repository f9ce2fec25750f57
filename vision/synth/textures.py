"""Textures: tile faces with their real pip patterns, tile backs, die faces, the layout cloth."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.labels import END_PIPS
from vision.layout import TableLayout

Image = NDArray[np.uint8]

FACES_IN_SET = (
    *("6-6", "1-1", "4-4", "1-3", "5-5", "3-3", "2-2", "5-6", "4-6", "1-6", "1-5") * 2,
    *("4-5", "3-6", "3-5", "2-6", "3-4", "2-5", "1-4", "2-3", "1-2", "2-4"),
)
"""The 32 tiles of one set, by face."""

TILE_PX = (48, 112)  # sprite width, height: one end is a 48 x 56 square
RED = (40, 40, 215)  # BGR
WHITE = (235, 235, 235)
BLACK = (22, 20, 20)

# On 3-3 the pips pair up: 2 across, 2 along (one each side of the middle), 2 across.
CHONG_END = [(0.28, 0.25), (0.72, 0.25), (0.5, 0.8)]


def _pip_colour(count: int, index: int, face: str) -> tuple[int, int, int]:
    if face == "6-6":
        return RED if index % 2 == 0 else WHITE  # half red: three red, three white per end
    return RED if count in (1, 4) else WHITE


@cache
def tile_face(face: str) -> Image:
    """BGRA sprite of a face-up tile, long axis vertical, `a` pips on the top end."""
    w, h = TILE_PX
    sprite = np.zeros((h, w, 4), np.uint8)
    _rounded_rect(sprite, (*BLACK, 255), radius=7)
    a, b = (int(x) for x in face.split("-"))
    half = h // 2
    for end, count, flip in ((0, a, False), (1, b, True)):
        pips = CHONG_END if face == "3-3" else END_PIPS[count]
        for index, (u, v) in enumerate(pips):
            along = 1 - v if flip else v
            x = round(4 + u * (w - 8))
            y = round(end * half + 3 + along * (half - 6))
            radius = 8 if count == 1 else 4
            colour = _pip_colour(count, index, face)
            cv2.circle(sprite, (x, y), radius + 1, (8, 8, 8, 255), -1, cv2.LINE_AA)
            cv2.circle(sprite, (x, y), radius, (*colour, 255), -1, cv2.LINE_AA)
    return sprite


@cache
def tile_back() -> Image:
    w, h = TILE_PX
    sprite = np.zeros((h, w, 4), np.uint8)
    _rounded_rect(sprite, (30, 27, 27, 255), radius=7)
    return sprite


def _rounded_rect(sprite: Image, colour: tuple[int, int, int, int], radius: int) -> None:
    h, w = sprite.shape[:2]
    cv2.rectangle(sprite, (radius, 0), (w - radius - 1, h - 1), colour, -1)
    cv2.rectangle(sprite, (0, radius), (w - 1, h - radius - 1), colour, -1)
    for cx, cy in (
        (radius, radius),
        (w - radius - 1, radius),
        (radius, h - radius - 1),
        (w - radius - 1, h - radius - 1),
    ):
        cv2.circle(sprite, (cx, cy), radius, colour, -1, cv2.LINE_AA)


PLAQUE_PX_PER_MM = 3
"""Texture pixels a millimetre of a plaque: its printed word stays sharp when seen close."""


@cache
def plaque(
    word: str, colour: tuple[int, int, int], size_mm: tuple[float, float] = (80, 32)
) -> Image:
    """An acrylic plaque's top (the chung, a +4 or Off button): a coloured face with its word
    printed in white, centred, as large as fits."""
    w, h = (round(v * PLAQUE_PX_PER_MM) for v in size_mm)
    sprite = np.zeros((h, w, 4), np.uint8)
    _rounded_rect(sprite, (*colour, 255), radius=h // 6)
    font = cv2.FONT_HERSHEY_DUPLEX
    (tw, th), _ = cv2.getTextSize(word, font, 1.0, 2)
    scale = min(0.8 * w / tw, 0.55 * h / th)
    (tw, th), _ = cv2.getTextSize(word, font, scale, 2)
    cv2.putText(sprite, word, ((w - tw) // 2, (h + th) // 2), font, scale, (245, 245, 245, 255),
                max(1, round(scale * 2)), cv2.LINE_AA)  # fmt: skip
    return sprite


DIE_PX = 40
DIE_PIPS: dict[int, list[tuple[float, float]]] = {
    1: [(0.5, 0.5)],
    2: [(0.27, 0.27), (0.73, 0.73)],
    3: [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)],
    4: [(0.28, 0.28), (0.72, 0.28), (0.28, 0.72), (0.72, 0.72)],
    5: [(0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)],
    6: [(0.28, 0.22), (0.72, 0.22), (0.28, 0.5), (0.72, 0.5), (0.28, 0.78), (0.72, 0.78)],
}


@cache
def die_face(value: int) -> Image:
    """BGRA sprite of one die face: Asian dice have red 1 and 4, the 1 large."""
    s = DIE_PX
    sprite = np.zeros((s, s, 4), np.uint8)
    _rounded_rect(sprite, (236, 240, 242, 255), radius=5)
    colour = RED if value in (1, 4) else (25, 25, 25)
    for u, v in DIE_PIPS[value]:
        radius = 9 if value == 1 else 4
        cv2.circle(sprite, (int(u * s), int(v * s)), radius, (*colour, 255), -1, cv2.LINE_AA)
    return sprite


@dataclass(frozen=True)
class ClothStyle:
    felt: tuple[int, int, int]
    ink: tuple[int, int, int]
    texture: float
    seed: int


FELTS = [
    (48, 110, 30),
    (60, 95, 20),
    (95, 70, 20),
    (40, 40, 120),
    (60, 60, 60),
    (90, 110, 40),
    (30, 80, 40),
    (110, 60, 30),
]  # fmt: skip  BGR greens, blues, burgundy, grey, teal


def random_cloth(rng: np.random.Generator) -> ClothStyle:
    felt = FELTS[int(rng.integers(len(FELTS)))]
    jitter = rng.integers(-15, 16, 3)
    felt = tuple(int(np.clip(c + j, 10, 200)) for c, j in zip(felt, jitter, strict=True))
    ink = (215, 225, 230) if rng.random() < 0.7 else (40, 190, 230)
    return ClothStyle(felt, ink, float(rng.uniform(4, 14)), int(rng.integers(1 << 30)))  # type: ignore[arg-type]


MM_PER_PX = 1.25


def cloth_image(style: ClothStyle, layout: TableLayout) -> Image:
    """The layout cloth in table coordinates, MM_PER_PX per pixel, row 0 at the far side."""
    rng = np.random.default_rng(style.seed)
    w = int(layout.width / MM_PER_PX)
    h = int(layout.depth / MM_PER_PX)
    coarse = rng.normal(0, 1, (h // 40 + 2, w // 40 + 2, 1)).astype(np.float32)
    fine = rng.normal(0, 1, (h // 2 + 1, w // 2 + 1, 1)).astype(np.float32)
    noise = cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC) * 0.6
    noise += cv2.resize(fine, (w, h), interpolation=cv2.INTER_NEAREST) * 0.4
    image = np.empty((h, w, 3), np.float32)
    image[:] = style.felt
    image += noise[..., None] * style.texture
    cloth = np.clip(image, 0, 255).astype(np.uint8)

    def px(x: float, y: float) -> tuple[int, int]:
        return layout.to_cloth_px(x, y, MM_PER_PX)

    cv2.rectangle(cloth, (0, 0), (w - 1, h - 1), (25, 30, 45), int(60 / MM_PER_PX))  # the rail
    thick = 3
    for number, (x, y) in enumerate(layout.box_centres, start=1):
        half = layout.box_size / 2
        cv2.rectangle(cloth, px(x - half, y + half), px(x + half, y - half), style.ink, thick)
        cv2.putText(
            cloth,
            str(number),
            px(x - 25, y - 35),
            cv2.FONT_HERSHEY_SIMPLEX,
            2.2,
            style.ink,
            4,
            cv2.LINE_AA,
        )
    sx, sy = layout.stack_area
    cv2.rectangle(cloth, px(sx - 180, sy + 70), px(sx + 180, sy - 70), style.ink, 2)
    dx, dy = layout.dice_area
    cv2.circle(cloth, px(dx, dy), int(90 / MM_PER_PX), style.ink, 2, cv2.LINE_AA)
    cx, cy = layout.capital_area
    cv2.circle(cloth, px(cx, cy), int(layout.capital_radius / MM_PER_PX), style.ink, 2, cv2.LINE_AA)
    bx, by = layout.bank_area
    cv2.rectangle(cloth, px(bx - 120, by + 60), px(bx + 120, by - 60), style.ink, 2)
    cv2.putText(
        cloth,
        "BANKER",
        px(bx - 95, by - 90),
        cv2.FONT_HERSHEY_SIMPLEX,
        1.3,
        style.ink,
        3,
        cv2.LINE_AA,
    )
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    side = int(layout.marker_size / MM_PER_PX)
    quiet = int(15 / MM_PER_PX)
    for marker in range(len(layout.marker_centres)):
        left, top = px(*layout.marker_corners(marker)[0])
        cv2.rectangle(cloth, (left - quiet, top - quiet), (left + side + quiet, top + side + quiet),
                      (235, 235, 235), -1)  # fmt: skip
        pattern = cv2.aruco.generateImageMarker(dictionary, marker, side)
        cloth[top : top + side, left : left + side] = pattern[..., None]
    cv2.ellipse(
        cloth,
        px(0, 0),
        (int(layout.width / 2.6 / MM_PER_PX), int(100 / MM_PER_PX)),
        0,
        180,
        360,
        style.ink,
        2,
        cv2.LINE_AA,
    )
    return cloth
