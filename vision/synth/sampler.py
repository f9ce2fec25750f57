"""Random table scenes for detector training: every stage of a round, mixed, with distractors."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vision.labels import CHUNG_BANKER, CHUNG_CO, MINUS_4, OFF, PLUS_4, WAGER
from vision.layout import TableLayout
from vision.synth.camera import Camera
from vision.synth.scene import CHIP_RADIUS, Box, Thing, arm, chip_stack, die, disc, rotation_z, tile
from vision.synth.textures import FACES_IN_SET, plaque

RESOLUTIONS = ((1280, 720), (1920, 1080), (2560, 1440), (3840, 2160))
SKIN = ((110, 150, 205), (80, 120, 175), (60, 90, 140), (140, 170, 215), (45, 60, 90))
SLEEVE = ((30, 30, 30), (200, 200, 200), (40, 40, 120), (90, 30, 30))
ACRYLIC = (
    (40, 40, 190),
    (30, 30, 140),
    (40, 140, 40),
    (150, 90, 20),
    (30, 30, 30),
    (40, 170, 210),
    (120, 40, 120),
)
"""BGR: the coloured acrylic a table's chung and buttons are cut from (red, dark red, green,
blue, black, gold, purple): each casino's kit is its own, so the detector learns the plaque and
its word, not one colour."""
BUTTONS = (("+4", PLUS_4), ("-4", MINUS_4), ("OFF", OFF))
"""The buttons a table's kit carries, drawn alike: a player/banker's +4 and -4 (NZ 9.7) and the
"Off" of a box out of play (NZ 3.3(e), MBS 5.6.1)."""
MARKER_CHANCE = {"chung": 0.6, "button": 0.3}
"""How often a training scene shows the chung and a +4/-4 button (NZ 9.6): often enough that the
detector sees each face a few hundred times in a data set, rarely enough that most scenes show
what most rounds show."""
CHIP = ((40, 40, 200), (200, 80, 30), (30, 150, 30), (30, 30, 30), (200, 200, 200), (150, 40, 150))
CAPITAL_CHANCE = 0.3
"""How often a training scene shows a player-banker's capital in the centre circle (RWS 3.16,
MBS 3.26.1): one to three stacks of chips there, labelled as a wager's chips are, so the marker
detector finds chips on the circle's print as well as on a betting box's."""
FLIGHT_CHANCE = 0.7
"""How often a training scene with four tiles or more lying loose has four of them taken up as
a block in flight (`_flight`): about four scenes in ten have them, so about a third show a
flight, more than a round's share (a block is carried through all of its delivery, a fifth of
its frames) because that is where the detector goes wrong: the tiles raised over the cloth,
their shadow cast beside them and their near ends under the hand. Without such scenes the
detector boxed the shadow as a tile and the hidden tile by its visible part (7.9% of the backs
it boxed during deliveries lay on no tile, `benchmarks/flight_boxes.py`)."""


@dataclass(frozen=True)
class TileSize:
    width: float
    length: float
    thickness: float

    @classmethod
    def random(cls, rng: np.random.Generator) -> TileSize:
        return cls(
            float(rng.uniform(24, 27)), float(rng.uniform(60, 70)), float(rng.uniform(8, 12))
        )

    @property
    def size(self) -> tuple[float, float, float]:
        return (self.width, self.length, self.thickness)


def random_camera(
    rng: np.random.Generator,
    layout: TableLayout,
    resolution: tuple[int, int] | None = None,
    zone: bool | None = None,
    things: list[Thing] | None = None,
) -> Camera:
    """An overhead table camera: full-table views and, a third of the time, a close-up of a
    zone (one of the things on the table, when given)."""
    width, height = resolution or RESOLUTIONS[int(rng.choice(4, p=[0.3, 0.35, 0.15, 0.2]))]
    yaw = math.radians(rng.uniform(-15, 15))
    up = (math.sin(yaw), math.cos(yaw), 0.0)
    k1 = float(rng.uniform(-0.12, 0.04))
    if zone if zone is not None else rng.random() < 0.35:
        targets = [*layout.hand_spots, layout.stack_area, layout.dice_area, layout.bank_area]
        near = [b.centre[:2] for b in things or [] if isinstance(b, Box) and b.label]
        if near and rng.random() < 0.8:
            targets = near
        tx, ty = targets[int(rng.integers(len(targets)))]
        tx, ty = tx + rng.normal(0, 60), ty + rng.normal(0, 60)
        distance = rng.uniform(500, 1100)
        hfov = rng.uniform(40, 65)
        tilt = math.radians(rng.uniform(0, 30))
        position = (tx, ty - distance * math.sin(tilt), distance * math.cos(tilt))
        return Camera.look_at(width, height, position, (tx, ty, 0), hfov, up, k1)
    hfov = rng.uniform(55, 80)
    tilt = math.radians(rng.uniform(0, 28))
    span = layout.width * rng.uniform(0.8, 1.05)
    distance = (span / 2) / math.tan(math.radians(hfov) / 2)
    target = (rng.normal(0, 60), rng.uniform(500, 700), 0.0)
    position = (
        target[0] + rng.normal(0, 80),
        target[1] - distance * math.sin(tilt),
        distance * math.cos(tilt),
    )
    return Camera.look_at(width, height, position, target, hfov, up, k1)


COCKED_DICE = 0.05
"""The share of dice that lean on an edge (not flat) in a random scene."""


def random_scene(
    rng: np.random.Generator,
    layout: TableLayout,
    cocked_dice: float = COCKED_DICE,
    plaques: bool = True,
) -> list[Thing]:
    """A genuine set of 32 tiles dealt out in a random mix of round stages, plus dice (this
    share of them cocked) and distractors; without `plaques`, the same scene with its chung and
    button left off the table."""
    size = TileSize.random(rng)
    faces = list(FACES_IN_SET)
    rng.shuffle(faces)
    things: list[Thing] = []
    stacks = int(rng.integers(0, 9))
    things += _stacks(faces[: stacks * 4], layout, size, rng)
    rest = faces[stacks * 4 :]
    positions = list(rng.permutation(8) + 1)
    while len(rest) >= 4 and positions and rng.random() < 0.85:
        group, rest = rest[:4], rest[4:]
        position = int(positions.pop())
        style = rng.choice(["stack", "block", "set", "exposed", "exposed"])
        things += _hand(group, position, str(style), layout, size, rng)
    loose = _loose(rest, layout, size, rng, face_up_chance=float(rng.uniform(0.3, 1.0)))
    things += loose
    things += _dice(layout, rng, cocked_dice)
    things += _distractors(layout, rng, plaques)
    capital, carried = rng.spawn(2)  # the rest of the scene drawn as without them
    if len(rest) >= 4 and carried.random() < FLIGHT_CHANCE:  # four loose tiles taken up
        taken = {id(t) for t in loose[-4:]}
        things = [t for t in things if id(t) not in taken]
        things += _flight(rest[-4:], int(carried.integers(1, 9)), layout, size, carried)
    things += _capital(layout, capital, things)
    return things


def _stacks(
    faces: list[str], layout: TableLayout, size: TileSize, rng: np.random.Generator
) -> list[Thing]:
    sx, sy = layout.stack_area
    gap = size.width + rng.uniform(0.5, 2.5)
    n = len(faces) // 4
    things: list[Thing] = []
    jitter = rng.normal(0, 0.02)
    for k in range(n):
        x = sx + (k - 3.5) * gap
        for level in range(4):
            face = faces[k * 4 + level]
            exposed = level == 3 and rng.random() < 0.04  # an exposed tile on a stack
            things.append(
                tile(
                    face,
                    x + rng.normal(0, 0.6),
                    sy + rng.normal(0, 0.8),
                    jitter + rng.normal(0, 0.01),
                    level=level,
                    size=size.size,
                    face_up=exposed,
                )
            )
    return things


def _hand(
    faces: list[str],
    position: int,
    style: str,
    layout: TableLayout,
    size: TileSize,
    rng: np.random.Generator,
) -> list[Thing]:
    hx, hy = layout.hand_spots[position - 1]
    hx, hy = hx + rng.normal(0, 25), hy + rng.normal(0, 25)
    angle = layout.hand_angle(position) - math.pi / 2 + rng.normal(0, 0.15)
    w = size.width
    things: list[Thing] = []
    if style == "stack":
        for level, face in enumerate(faces):
            things.append(tile(face, hx, hy, angle, level=level, size=size.size, face_up=False))
        return things
    if style == "block":  # two stacks of two, side by side
        offsets = [(-w / 2, 0, 0), (-w / 2, 0, 1), (w / 2, 0, 0), (w / 2, 0, 1)]
        face_up = False
    elif style == "set":  # low and high hands as two stacks of two, a little apart
        gap = rng.uniform(5, 40)
        offsets = [
            (-(w + gap) / 2, 0, 0),
            (-(w + gap) / 2, 0, 1),
            ((w + gap) / 2, 0, 0),
            ((w + gap) / 2, 0, 1),
        ]
        face_up = False
    else:  # exposed: two hands of two tiles side by side, face up, touching or nearly
        gap = rng.uniform(8, 60)
        touch = rng.uniform(0, 1.5)
        offsets = [
            (-gap / 2 - w * 1.5 - touch, 0, 0),
            (-gap / 2 - w / 2, 0, 0),
            (gap / 2 + w / 2, 0, 0),
            (gap / 2 + w * 1.5 + touch, 0, 0),
        ]
        face_up = True
    rot = rotation_z(angle)[:2, :2]
    for face, (dx, dy, level) in zip(faces, offsets, strict=True):
        ox, oy = rot @ np.array([dx, dy + rng.normal(0, 2)])
        spin = angle + rng.normal(0, 0.05) + (math.pi if rng.random() < 0.5 else 0)
        things.append(
            tile(face, hx + ox, hy + oy, spin, level=level, size=size.size, face_up=face_up)
        )
    return things


def _flight(
    faces: list[str], position: int, layout: TableLayout, size: TileSize, rng: np.random.Generator
) -> list[Thing]:
    """A block of two stacks of two carried face down from the stacks towards a box, as a round
    delivers it (`vision.synth.round`): one to three tiles above the cloth, so that its shadow
    falls beside it on the cloth (unlabelled: not a tile), turning towards the box as it goes,
    and the dealer's arm reaching in from the near edge with the hand just behind the block,
    over its near ends or beside them (the hand goes from the row's middle, the block from its
    stack) (a tile labelled whole where `MIN_VISIBLE` of it shows, as in a round)."""
    sx, sy = layout.stack_area
    px, py = layout.hand_spots[position - 1]
    along = float(rng.uniform(0.05, 0.95))
    home = sx + (int(rng.integers(0, 8)) - 3.5) * (size.width + 1.5)  # the stack it left
    x = home + (px - home) * along + rng.normal(0, 15)
    y = sy + (py - sy) * along + rng.normal(0, 15)
    hand_x = sx + (px - sx) * along  # the dealer's hand goes from the row's middle
    yaw = (layout.hand_angle(position) - math.pi / 2) * along + rng.normal(0, 0.1)
    lift = int(rng.integers(1, 4))
    w = size.width
    rot = rotation_z(yaw)[:2, :2]
    things: list[Thing] = []
    for face, (dx, level) in zip(
        faces, [(-w / 2, 0), (-w / 2, 1), (w / 2, 0), (w / 2, 1)], strict=True
    ):
        ox, oy = rot @ np.array([dx + rng.normal(0, 1), rng.normal(0, 2)])
        things.append(
            tile(face, x + ox, y + oy, yaw + rng.normal(0, 0.03), level=lift + level,
                 size=size.size, face_up=False)
        )  # fmt: skip
    behind = float(rng.uniform(25, 55))
    colour = SKIN[int(rng.integers(len(SKIN)))]
    reach = float(rng.uniform(100, 130)), float(rng.uniform(75, 95))
    things.append(arm(hand_x * 0.3, -300, hand_x, y - behind, *reach, colour))
    return things


def _loose(
    faces: list[str],
    layout: TableLayout,
    size: TileSize,
    rng: np.random.Generator,
    face_up_chance: float,
) -> list[Thing]:
    """Tiles lying about: a shuffle, or tiles pushed together, rotated any way."""
    things: list[Thing] = []
    cx, cy = rng.uniform(-500, 500), rng.uniform(300, 650)
    for face in faces:
        if rng.random() < 0.5 and things:  # touch the previous tile
            prev = things[-1]
            assert isinstance(prev, Box)
            yaw = math.atan2(prev.rotation[1, 0], prev.rotation[0, 0]) + rng.normal(0, 0.1)
            offset = rotation_z(yaw)[:2, :2] @ np.array([size.width + rng.uniform(0, 2), 0])
            x, y = prev.centre[0] + offset[0], prev.centre[1] + offset[1]
        else:
            x, y, yaw = (
                cx + rng.normal(0, 220),
                cy + rng.normal(0, 150),
                rng.uniform(0, 2 * math.pi),
            )
        things.append(tile(face, x, y, yaw, size=size.size, face_up=rng.random() < face_up_chance))
    return things


def _dice(layout: TableLayout, rng: np.random.Generator, cocked: float) -> list[Thing]:
    dx, dy = layout.dice_area
    if rng.random() < 0.3:
        dx, dy = rng.uniform(-600, 600), rng.uniform(150, 800)
    count = int(rng.choice([3, 3, 3, 2, 1, 0]))
    side = float(rng.uniform(13, 17))
    things: list[Thing] = []
    for k in range(count):
        tilt = float(rng.uniform(0.4, 0.8)) if rng.random() < cocked else 0.0
        x = dx + (k - 1) * side * rng.uniform(1.05, 1.8)
        things.append(
            die(
                int(rng.integers(1, 7)),
                x,
                dy + rng.normal(0, side * 0.5),
                float(rng.uniform(0, 2 * math.pi)),
                size=side,
                tilt=tilt,
            )
        )
    if rng.random() < 0.3:  # the dice cup: over the dice, or set aside
        over = rng.random() < 0.3
        cx, cy = (dx, dy) if over else (dx + rng.uniform(80, 160), dy + rng.uniform(-60, 60))
        things.append(disc("cup", cx, cy, 55, 0, 45 if over else 30, (30, 40, 120), (40, 50, 150)))
    return things


def _marker(layout: TableLayout, rng: np.random.Generator, chung: bool) -> Box:
    """The chung (either face, NZ 3.3(f)) beside a box, or a +4/-4 button anywhere on the
    cloth, labelled: a coloured acrylic plaque of its own size with its word printed on it."""
    colour = ACRYLIC[int(rng.integers(len(ACRYLIC)))]
    if chung:
        co = bool(rng.random() < 0.5)
        word, label = ("CO-BANKER", CHUNG_CO) if co else ("BANKER", CHUNG_BANKER)
        size = (float(rng.uniform(60, 100)), float(rng.uniform(25, 40)), float(rng.uniform(6, 12)))
        x, y = layout.box_centres[int(rng.integers(8))]
        x, y = x + rng.normal(0, 50), y + rng.normal(0, 50)
    else:  # +4, -4 (NZ 9.7) or Off (NZ 3.3(e)): the same acrylic button, its word apart
        word, label = BUTTONS[int(rng.integers(len(BUTTONS)))]
        side = float(rng.uniform(40, 60))
        size = (side, side, float(rng.uniform(4, 8)))
        x, y = rng.uniform(-700, 700), rng.uniform(150, 900)
    top = plaque(word, colour, size[:2])
    if rng.random() < 0.5:  # laid to be read from the dealer's side, or from the players'
        top = np.ascontiguousarray(top[::-1, ::-1])
    edge = tuple(int(c * 0.6) for c in colour)
    return Box("chung" if chung else "button", (float(x), float(y), size[2] / 2), size,
               rotation_z(rng.uniform(0, 2 * math.pi)), top, top, (edge,) * 4,
               label)  # type: ignore[arg-type]  # fmt: skip


def _capital(layout: TableLayout, rng: np.random.Generator, things: list[Thing]) -> list[Thing]:
    """A player-banker's capital in the centre circle, `CAPITAL_CHANCE` of scenes where no tile
    lies on the circle: one to three stacks of chips side by side. Drawn from a stream spawned
    off the scene's (spawning does not advance it), so every other thing of a seed's scene is
    drawn as it was before the capital was."""
    cx, cy = layout.capital_area
    clear = layout.capital_radius + 40
    on_circle = any(isinstance(t, Box) and math.dist(t.centre[:2], (cx, cy)) < clear
                    for t in things)  # fmt: skip
    if on_circle or rng.random() >= CAPITAL_CHANCE:
        return []
    count = int(rng.integers(1, 4))
    stacks: list[Thing] = []
    for k in range(count):
        colour = CHIP[int(rng.integers(len(CHIP)))]
        x = cx + (k - (count - 1) / 2) * (CHIP_RADIUS * 2 + rng.uniform(2, 10))
        y = cy + rng.normal(0, 15)
        stack = chip_stack(x, y, colour, int(rng.integers(1, 16)))
        stack.label = WAGER
        stacks.append(stack)
    return stacks


def _distractors(layout: TableLayout, rng: np.random.Generator, plaques: bool) -> list[Thing]:
    things: list[Thing] = []
    for x, y in layout.box_centres:
        if rng.random() < 0.5:  # a stack of chips on the box
            colour = CHIP[int(rng.integers(len(CHIP)))]
            count = int(rng.integers(1, 12))
            stack = chip_stack(x + rng.normal(0, 20), y + rng.normal(0, 20), colour, count)
            stack.label = WAGER
            things.append(stack)
    for kind in ("chung", "button"):  # drawn either way: the rest of the scene stays the same
        if rng.random() < MARKER_CHANCE[kind]:
            plaque = _marker(layout, rng, chung=kind == "chung")
            things += [plaque] if plaques else []
    for _ in range(int(rng.integers(0, 3))):  # cards of other games
        card = np.full((88, 63, 4), 255, np.uint8)
        things.append(
            Box(
                "card",
                (rng.uniform(-900, 900), rng.uniform(100, 1100), 0.3),
                (63, 88, 0.6),
                rotation_z(rng.uniform(0, 3)),
                card,
                card,
                ((230, 230, 230),) * 4,
            )
        )
    for _ in range(int(rng.choice([0, 0, 1, 1, 2]))):  # arms reaching in
        side = rng.random()
        if side < 0.5:  # the dealer's, from the near edge
            x0, y0 = rng.uniform(-600, 600), -250
        else:  # a player's, from beyond the boxes
            angle = rng.uniform(0.2, math.pi - 0.2)
            x0, y0 = 1300 * math.cos(angle), 230 + 1300 * math.sin(angle)
        tx, ty = rng.uniform(-700, 700), rng.uniform(150, 900)
        colour = SKIN[int(rng.integers(len(SKIN)))]
        things.append(
            arm(x0, y0, tx, ty, float(rng.uniform(60, 160)), float(rng.uniform(70, 95)), colour)
        )
    return things


__all__ = ["RESOLUTIONS", "random_camera", "random_scene"]
