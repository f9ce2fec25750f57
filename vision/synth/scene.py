"""What is on the table at one instant: boxes (tiles, dice, cards, chung), prisms (chips, the dice
cup, arms), with the label each visible object should carry."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from vision.synth.textures import Image, die_face, tile_back, tile_face

Kind = Literal["tile", "die", "card", "chung", "button", "chip", "cup", "arm"]
BGR = tuple[int, int, int]


def rotation_z(angle: float) -> NDArray[np.float64]:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rotation_x(angle: float) -> NDArray[np.float64]:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


UNIT_CUBE = np.array(
    [[(i & 1) - 0.5, ((i >> 1) & 1) - 0.5, ((i >> 2) & 1) - 0.5] for i in range(8)]
)


@dataclass
class Box:
    """A box: size along its own x (across), y (along) and z (thickness) axes, in mm."""

    kind: Kind
    centre: tuple[float, float, float]
    size: tuple[float, float, float]
    rotation: NDArray[np.float64]
    top: Image | BGR
    bottom: Image | BGR
    sides: tuple[Image | BGR, Image | BGR, Image | BGR, Image | BGR]  # +x, -x, +y, -y
    label: str | None = None
    tags: dict[str, object] = field(default_factory=dict)

    def corners(self) -> NDArray[np.float64]:
        """The 8 corners in table mm: index bit 0 = +x, bit 1 = +y, bit 2 = +z."""
        local = UNIT_CUBE * np.asarray(self.size)
        return local @ self.rotation.T + np.asarray(self.centre)


@dataclass
class Prism:
    """A vertical prism: a polygon footprint (table mm) raised from z0 to z1."""

    kind: Kind
    footprint: NDArray[np.float64]  # N x 2, convex, counter-clockwise
    z0: float
    z1: float
    colour: BGR
    top_colour: BGR | None = None
    tags: dict[str, object] = field(default_factory=dict)
    label: str | None = None


Thing = Box | Prism


def tile(
    face: str | None,
    x: float,
    y: float,
    yaw: float,
    *,
    level: int = 0,
    size: tuple[float, float, float] = (25.0, 62.0, 10.0),
    face_up: bool = True,
    tags: dict[str, object] | None = None,
) -> Box:
    """A tile lying flat, `level` tiles up a stack; face None means an unknown face-down tile."""
    t = size[2]
    front = tile_face(face) if face is not None else tile_back()
    up = front if face_up else tile_back()
    down = tile_back() if face_up else front
    side = (24, 22, 22)
    label = face if (face_up and face is not None) else "back"
    return Box(
        "tile",
        (x, y, t * (level + 0.5)),
        size,
        rotation_z(yaw),
        up,
        down,
        (side,) * 4,
        label,
        dict(tags or {}, face=face, face_up=face_up),
    )


# The die's faces by local axis for each top value: (+z, -z, +x, -x, +y, -y), opposites sum 7.
_DIE_LAYOUT = {
    1: (1, 6, 2, 5, 3, 4),
    2: (2, 5, 1, 6, 4, 3),
    3: (3, 4, 2, 5, 6, 1),
    4: (4, 3, 2, 5, 1, 6),
    5: (5, 2, 1, 6, 3, 4),
    6: (6, 1, 5, 2, 3, 4),
}


def die(
    value: int, x: float, y: float, yaw: float, *, size: float = 15.0, tilt: float = 0.0
) -> Box:
    """A die showing `value` on top; `tilt` (radians) leans it on an edge (not lying flat)."""
    top, bottom, px, nx, py, ny = _DIE_LAYOUT[value]
    rotation = rotation_z(yaw) @ rotation_x(tilt)
    lift = size / 2 * (abs(math.cos(tilt)) + abs(math.sin(tilt)))
    box = Box(
        "die",
        (x, y, lift),
        (size, size, size),
        rotation,
        die_face(top),
        die_face(bottom),
        (die_face(px), die_face(nx), die_face(py), die_face(ny)),
        f"die-{value}",
        {"value": value, "flat": tilt == 0.0},
    )
    return box


def disc(
    kind: Kind,
    x: float,
    y: float,
    radius: float,
    z0: float,
    z1: float,
    colour: BGR,
    top_colour: BGR | None = None,
    sides: int = 20,
) -> Prism:
    angles = np.linspace(0, 2 * np.pi, sides, endpoint=False)
    footprint = np.stack([x + radius * np.cos(angles), y + radius * np.sin(angles)], 1)
    return Prism(kind, footprint, z0, z1, colour, top_colour)


CHIP_RADIUS = 20.0
"""A casino chip is 39-43 mm across."""
CHIP_THICK = 3.3


def chip_stack(x: float, y: float, colour: BGR, count: int) -> Prism:
    """`count` chips of one colour stacked at (x, y), their top face a lighter shade."""
    b, g, r = (min(255, int(c * 1.2) + 20) for c in colour)
    return disc("chip", x, y, CHIP_RADIUS, 0, CHIP_THICK * count, colour, (b, g, r))


def arm(x0: float, y0: float, x1: float, y1: float, z: float, width: float, colour: BGR) -> Prism:
    """A forearm and hand reaching from (x0, y0) to (x1, y1): a long rounded slab."""
    direction = np.array([x1 - x0, y1 - y0])
    length = float(np.linalg.norm(direction)) or 1.0
    d = direction / length
    n = np.array([-d[1], d[0]])
    half = width / 2
    tip = np.array([x1, y1])
    cap = [
        tip + half * (np.sin(a) * n + np.cos(a) * d) for a in np.linspace(-np.pi / 2, np.pi / 2, 9)
    ]
    elbow = np.array([x0, y0])
    points = np.array([elbow - 1.3 * half * n, *cap, elbow + 1.3 * half * n])
    return Prism("arm", points, z - 35, z + 35, colour)
