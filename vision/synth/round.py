"""`paigow synth round`: a whole simulated round on video, with its ground truth.

The round follows the rule book: shuffle, stacking into 8 stacks of 4, dice, the cut and the
delivery of the groups to positions in the order `rules.deal` gives for the dice, banker and cut,
players setting their hands, the bank's hand set the house way (`rules`) and exposed, each
position exposed in turn, clearing. Irregularities can be injected; each is recorded.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from rules import (
    CUTS,
    Bank,
    DeliveryOrder,
    Dice,
    InvalidHandError,
    Irregularity,
    Setting,
    SetUp,
    Tile,
    all_settings,
    cut_regime,
    find_ruleset,
    first_position,
    house_sets_bank,
    removed_box,
)
from rules.rulesets import Ruleset
from vision.labels import CHUNG_BANKER, CHUNG_CO, MINUS_4, OFF, PLUS_4, WAGER
from vision.layout import TableLayout
from vision.progress import each
from vision.synth.appearance import Appearance, dress
from vision.synth.camera import Camera
from vision.synth.render import Look, Renderer
from vision.synth.sampler import CHIP, SKIN, TileSize
from vision.synth.scene import CHIP_RADIUS, Box, Thing, arm, chip_stack, die, disc, rotation_z, tile
from vision.synth.textures import FACES_IN_SET, cloth_image, plaque, random_cloth

INJECTABLE = (
    Irregularity.HOUSE_WAY_VIOLATION,
    Irregularity.WRONG_FIRST_POSITION,
    Irregularity.WRONG_CUT_ORDER,
    Irregularity.EXPOSED_TILE_STACKING,
    Irregularity.EXPOSED_TILE_DEALING,
    Irregularity.FOREIGN_TILE,
    Irregularity.MISSING_TILE,
    Irregularity.WRONG_HAND_SIZE,
    Irregularity.DICE_NOT_FLAT,
    Irregularity.WRONG_DICE_COUNT,
    Irregularity.HANDS_SWAPPED,
    Irregularity.OFF_BOX_PLAYED,
)

# Phase lengths in seconds.
SHUFFLE, STACKING, DICE, CUT, DELIVERY_EACH, DEALT, SETTING, BANK, EXPOSE_EACH, CLEARING = (
    2.0,
    2.5,
    2.0,
    1.0,
    0.7,
    0.7,
    3.0,
    1.5,
    1.0,
    1.5,
)


SWAP_MOVE = 1.2
"""Seconds swapped hands take to be carried from one box to the other, at the start of setting."""
EXPOSED_EARLY = 1.0
"""A tile exposed while stacking is turned up this long before stacking starts: while it still
lies among the washed tiles, where the camera can see it whatever layer it goes to."""


BANKS = {Bank.HOUSE: 0.6, Bank.PLAYER: 0.3, Bank.CO_BANK: 0.1}
"""How often each banker holds the bank in a simulated round with its context drawn: mostly the
house, as at the tables the rule books describe, often enough a player that every regime shows."""
HOUSE_BOX = 1
"""Where the chung lies when the house banks: box 1 (NZ 11.1(a))."""
CHUNG_SIZE = (80.0, 32.0, 10.0)
"""An acrylic plaque, mm: long side along the box."""
CHUNG_COLOUR = (40, 40, 190)
"""BGR: the red acrylic of the chung the table's kit carries."""
CHUNG_ASIDE = 85.0
"""How far beside the hand spot, along the row of boxes, the chung lies: inside the position's
zone (110 mm either side; the plaque, long side towards the player, reaches 16 mm either way)
and clear of the hand's tiles (about 60 mm either side)."""
ADJUSTS = {0: 0.5, 4: 0.25, -4: 0.25}
"""How often a player/banker nominates +4 or -4 where the rule book offers it (NZ 9.6)."""
ADJUST_SPOT = (-200.0, 340.0)
"""Where the +4 or -4 button lies: "a central position on the table" (NZ 9.7), clear of the
stacks, the dice and the delivery's paths, in table mm."""
MARKER_KINDS = ("chung", "button", "chip")
"""Things that say the round's context, kept apart from tiles and dice in the labels."""
WAGER_CHANCE = 0.6
"""How often a box other than the banker's holds a wager in a round with its context drawn: most
boxes, as at a busy table; none on the house's box while the house banks (NZ 11.1(b), ACT 7.3,
MBS 3.25.1), the banker's own wager in its box where a player banks (NZ 11.2(b), 11.3(b))."""
CHIP_AT = 25.0
"""Millimetres a stack of chips lies from its betting box's centre at most, either way."""
CAPITAL_CHIPS = 2
"""Chips a stack of a player-banker's capital holds at most (high-value chips): lower than a
tile, so the tiles delivered across the centre circle, one tile above the cloth, pass over it."""
BUTTON_SIZE = (50.0, 50.0, 6.0)
BUTTON_COLOUR = (150, 90, 20)
"""BGR: a blue acrylic button (the chung is red)."""
PUSH = 20.0
"""Millimetres a stack of the set-up is pushed towards the players ("slightly", MBS App. D): a
third of a tile's length, plain from above, and short of the cloth between the stacks and the
boxes."""
PULL = 8.0
"""Millimetres the upper tiles of a pushed stack are pulled back where the first group lies
under them (MBS App. D: "pulling the top four tiles ... back slightly")."""
SET_UP_AT = (0.1, 0.3)
"""Seconds into the cut phase over which the dealer pushes the set-up's stacks forward."""
DIAGONAL_SHOWN = (0.3, 0.8)
"""Seconds into the cut phase during which Fong May's diagonal tile lies across the stacks; it
is returned before delivery (MBS App. D)."""
OFF_CHANCE = 0.25
"""How often a round whose book has the "Off" button (NZ 12.9-12.10, MBS 5.6) and whose bank
allows it is played with a box out of play: often enough that every book that has one shows it
in a few dozen rounds; at a real table it is rare."""
OFF_THROWS = 16
"""Throws drawn for the box removed (`rules.removed_box`): a throw naming the house's box is
thrown again (about one in eight), so 16 all naming it (1 in 10^14) never happen."""
BURNT_BOX = (-560.0, 150.0)
"""Table mm where the dealer sets aside the hand dealt to a box out of play (the "Burnt Box" of
MBS 3.12 and App. A): on the dealer's side, left of the bank area, outside every zone."""
TABLE_CUTS = {"rws-2018": ("yat-dong-dong", "cup-say", "chee-yee", "dai-pin", "jung-quat")}
"""The simulated table's own list of cuts (`table.yaml` `cuts`), where its book names none."""


@dataclass(frozen=True)
class Context:
    """Who banks and which cuts the rule book lets the round use (`rules.cut_regime`)."""

    bank: Bank
    cuts: tuple[str, ...]
    clause: str
    adjust: int = 0
    """+4 or -4 nominated by a player/banker where the rule book offers it (NZ 9.6), else 0."""
    off: bool = False
    """Whether a box is out of play, marked "Off" (NZ 12.9, MBS 5.6: only while the house banks)."""

    @classmethod
    def draw(cls, ruleset: Ruleset, rng: np.random.Generator) -> Context:
        bank = list(BANKS)[int(rng.choice(len(BANKS), p=list(BANKS.values())))]
        regime = cut_regime(ruleset, bank, TABLE_CUTS.get(ruleset.id, ()))
        adjust = 0
        if ruleset.delivery_adjustment and bank is Bank.PLAYER:
            adjust = list(ADJUSTS)[int(rng.choice(len(ADJUSTS), p=list(ADJUSTS.values())))]
        house = bank is Bank.HOUSE or (bank is Bank.CO_BANK and ruleset.off_with_co_bank)
        off = ruleset.off_clause is not None and house and bool(rng.random() < OFF_CHANCE)
        return cls(bank, regime.checkable, regime.clause, adjust, off)


class RoundError(ValueError):
    """A round that cannot be simulated as asked (unknown ruleset, cut or irregularity)."""


@dataclass
class Pose:
    x: float
    y: float
    yaw: float
    level: int
    face_up: bool


@dataclass
class Plan:
    """Everything decided before the first frame: who gets which tiles, and when things happen."""

    rules: str
    banker: int
    dice: tuple[int, ...]
    tilt: float
    cut: str
    cut_options: dict[str, str]
    grid: tuple[tuple[int, ...], ...]
    first_position: int
    group_positions: tuple[int, ...]  # the positions the groups actually went to
    faces: list[str]  # by tile id
    cells: dict[int, tuple[int, int]]  # tile id -> (layer, stack)
    hands: dict[int, list[int]]  # position -> tile ids after delivery (and any tampering)
    settings: dict[int, tuple[list[int], list[int]]]  # position -> (high ids, low ids)
    exposure_order: list[int]
    events: list[dict[str, object]] = field(default_factory=list)
    irregularities: list[dict[str, object]] = field(default_factory=list)
    bank: str = Bank.HOUSE.value
    adjust: int = 0
    """+4 or -4 on the dice total for the first position, shown by a button (NZ 9.6-9.7)."""
    chung: bool = False
    """The chung lies on the banker's box, its face saying banker or co-banker (drawn with the
    round's context; NZ 11.1(a), 11.2(a), 11.3(a), MBS 3.24.1)."""
    cut_clause: str = ""
    """The rule book's clause that let the round use its cut; empty where the cut was given."""
    set_up: SetUp | None = None
    """How the dealer shows the cut before delivering it, where the rule book has the cut
    drawn every round (MBS 3.9, App. D); from the cut meant, whatever the delivery then does."""
    exposed_while_stacking: int | None = None
    exposed_while_dealing: int | None = None
    swapped: tuple[int, int] | None = None
    moved_tile: tuple[int, int, int] | None = None  # tile id, from position, to position
    off_box: int | None = None
    """The box out of play, its "Off" button on it (NZ 12.10, MBS 5.6.1): its hand is dealt with
    the others and then set aside in the burnt box, unplayed (MBS 3.12, NZ 11.1(a))."""
    off_played: bool = False
    """Injected: the hand of the box out of play is set and exposed as if it were in play."""
    wagers: tuple[int, ...] = ()
    """The boxes holding a wager (chips on the betting box), drawn with the round's context."""
    capital: bool = False
    """A player-banker's capital lies in the centre circle (RWS 3.16, MBS 3.26.1) from the
    stacks' building to the clearing."""

    @property
    def set_aside(self) -> int | None:
        """The box whose hand goes to the burnt box unplayed: the box out of play, unless its
        hand is (irregularly) played."""
        return None if self.off_played else self.off_box


def plan_round(
    seed: int,
    rules_id: str,
    irregularities: list[str],
    cut: str | None = None,
    banker: int = 1,
    *,
    context: bool = False,
) -> Plan:
    """What happens in the round. With `context`, who banks and the cut are drawn the way the
    rule book has them chosen (`Context`), from a stream of their own: the seed's tiles and dice
    are the same with or without it."""
    ruleset = find_ruleset(rules_id)
    kinds = []
    for name in irregularities:
        try:
            kinds.append(Irregularity(name))
        except ValueError:
            known = ", ".join(k.value for k in INJECTABLE)
            raise RoundError(f"unknown irregularity {name!r}; known: {known}") from None
    rng = np.random.default_rng([seed, 0x2011])
    usable = [c for c in (ruleset.cuts or CUTS) if CUTS[c].drawn is not None]
    cut_id = cut or ("yat-dong-dong" if rng.random() < 0.5 else str(rng.choice(usable)))
    if cut_id not in CUTS or CUTS[cut_id].drawn is None:
        raise RoundError(f"cut {cut_id!r} has no delivery order to simulate")
    found = CUTS[cut_id]
    options = found.all_options()[int(rng.integers(len(found.all_options())))]
    drawn = Context.draw(ruleset, np.random.default_rng([seed, 0x36])) if context else None
    if drawn is not None and cut is None:
        pick = np.random.default_rng([seed, 0x37])
        cut_id = str(pick.choice(drawn.cuts))
        found = CUTS[cut_id]
        options = found.all_options()[int(pick.integers(len(found.all_options())))]
    if drawn is not None and drawn.bank is not Bank.HOUSE:  # a player's box (NZ 11.2(a), 11.3(a))
        banker = int(np.random.default_rng([seed, 0x38]).integers(1, 9))
    elif drawn is not None:
        banker = HOUSE_BOX
    dice = tuple(int(v) for v in rng.integers(1, 7, 3))
    adjust = drawn.adjust if drawn is not None else 0
    off_box = None
    if (drawn is not None and drawn.off) or (
        Irregularity.OFF_BOX_PLAYED in kinds and ruleset.off_clause is not None
    ):  # the box the dealer's throws name (NZ 12.10, MBS 5.6.1), from a stream of its own
        throws = np.random.default_rng([seed, 0x39]).integers(1, 7, (OFF_THROWS, 3)).sum(1)
        off_box = removed_box([int(total) for total in throws], banker)
    order = DeliveryOrder.build(found, options, Dice.of(dice), banker, adjust)
    faces = list(FACES_IN_SET)
    rng.shuffle(faces)
    plan_irregular: list[dict[str, object]] = []
    tilt = 0.0

    if Irregularity.WRONG_DICE_COUNT in kinds:  # a die short, or one too many thrown
        count = np.random.default_rng([seed, 0x39])  # a stream of its own: the rest as before
        dice = dice[:2] if count.random() < 0.5 else (*dice, int(count.integers(1, 7)))
        plan_irregular.append({"kind": "wrong-dice-count", "dice": list(dice)})
    if Irregularity.DICE_NOT_FLAT in kinds:
        tilt = 0.6
        plan_irregular.append({"kind": "dice-not-flat", "die": 0})
    total = sum(dice)
    first = first_position(total, banker, adjust)
    if Irregularity.WRONG_FIRST_POSITION in kinds:
        first = first % 8 + 1 + int(rng.integers(0, 6))
        first = (first - 1) % 8 + 1
        plan_irregular.append(
            {"kind": "wrong-first-position", "delivered_first_to": first, "required": order.first}
        )
    group_positions = tuple((first - 1 + g) % 8 + 1 for g in range(8))
    grid = found.grid(options)
    if Irregularity.WRONG_CUT_ORDER in kinds:
        a, b = sorted(int(x) for x in rng.choice(8, 2, replace=False) + 1)
        grid = tuple(tuple(b if g == a else a if g == b else g for g in row) for row in grid)
        plan_irregular.append({"kind": "wrong-cut-order", "groups_swapped": [a, b]})

    cells = {layer * 8 + stack: (layer, stack) for layer in range(4) for stack in range(8)}
    tile_ids = list(range(32))
    if Irregularity.MISSING_TILE in kinds:
        gone = int(rng.integers(32))
        tile_ids.remove(gone)
        plan_irregular.append({"kind": "missing-tile", "tile": faces[gone]})
    if Irregularity.FOREIGN_TILE in kinds:
        victim = int(rng.choice(tile_ids))
        military = [f for f in sorted(set(faces)) if faces.count(f) == 1 and f != faces[victim]]
        civil = [f for f in sorted(set(faces)) if faces.count(f) == 2 and f != faces[victim]]
        foreign = str(rng.choice(military if rng.random() < 0.5 else civil))
        plan_irregular.append({"kind": "foreign-tile", "tile": foreign, "replaced": faces[victim]})
        faces[victim] = foreign

    hands: dict[int, list[int]] = {p: [] for p in range(1, 9)}
    for tid in tile_ids:
        layer, stack = cells[tid]
        hands[group_positions[grid[layer][stack] - 1]].append(tid)

    plan = Plan(
        rules_id,
        banker,
        dice,
        tilt,
        cut_id,
        {k: v.value for k, v in vars(options).items() if v is not None},
        grid,
        first,
        group_positions,
        faces,
        {t: cells[t] for t in tile_ids},
        hands,
        {},
        [],
    )
    plan.irregularities = plan_irregular
    if drawn is not None:
        plan.bank, plan.cut_clause = drawn.bank.value, drawn.clause
        plan.chung = ruleset.house_chung or drawn.bank is not Bank.HOUSE  # MBS 3.24.1
        plan.wagers = draw_wagers(drawn.bank, banker, off_box, np.random.default_rng([seed, 0x3A]))
        plan.capital = ruleset.player_capital is not None and drawn.bank is Bank.PLAYER
        plan.adjust = adjust
        if ruleset.cut_set_up:
            plan.set_up = found.set_up(options)
    plan.events.append({"kind": "cut", "cut": cut_id, "options": str(options)})

    if Irregularity.EXPOSED_TILE_STACKING in kinds:
        plan.exposed_while_stacking = int(rng.choice(tile_ids))
        plan.irregularities.append(
            {"kind": "exposed-tile-stacking", "tile": faces[plan.exposed_while_stacking]}
        )
    if Irregularity.EXPOSED_TILE_DEALING in kinds:
        plan.exposed_while_dealing = int(rng.choice(tile_ids))
        plan.irregularities.append(
            {"kind": "exposed-tile-dealing", "tile": faces[plan.exposed_while_dealing]}
        )
    if Irregularity.WRONG_HAND_SIZE in kinds:
        src, dst = (int(p) for p in rng.choice([p for p in range(1, 9) if hands[p]], 2, False))
        moved = hands[src].pop()
        hands[dst].append(moved)
        plan.moved_tile = (moved, src, dst)
        plan.irregularities.append(
            {"kind": "wrong-hand-size", "sizes": {src: len(hands[src]), dst: len(hands[dst])}}
        )
    plan.off_box = off_box
    if Irregularity.OFF_BOX_PLAYED in kinds and off_box is not None:
        plan.off_played = True
        plan.irregularities.append({"kind": "off-box-played", "position": off_box})
    if Irregularity.HANDS_SWAPPED in kinds:
        a, b = (int(p) for p in rng.choice(8, 2, replace=False) + 1)
        hands[a], hands[b] = hands[b], hands[a]
        plan.swapped = (a, b)
        plan.irregularities.append({"kind": "hands-swapped", "positions": [a, b]})

    house_sets = house_sets_bank(Bank(plan.bank))
    for position, ids in hands.items():
        plan.settings[position] = _set_hand(
            plan,
            position,
            ids,
            ruleset.id,
            rng,
            bank=position == banker and house_sets,  # a player/banker sets as they like
            wrong=Irregularity.HOUSE_WAY_VIOLATION in kinds and house_sets,  # so it is no breach
        )
    plan.exposure_order = [p for k in range(8) if (p := (banker - 1 + k) % 8 + 1) != plan.set_aside]
    return plan


def draw_wagers(
    bank: Bank, banker: int, off_box: int | None, rng: np.random.Generator
) -> tuple[int, ...]:
    """The boxes holding a wager: the banker's own where a player banks, most others (at least
    one: someone plays against the bank), never a box out of play or the house's own box."""
    others = [b for b in range(1, 9) if b not in (banker, off_box)]
    wagered = [b for b in others if rng.random() < WAGER_CHANCE]
    if not wagered:
        wagered = [int(rng.choice(others))]
    if bank is not Bank.HOUSE:
        wagered.append(banker)
    return tuple(sorted(wagered))


def _set_hand(
    plan: Plan,
    position: int,
    ids: list[int],
    rules_id: str,
    rng: np.random.Generator,
    *,
    bank: bool,
    wrong: bool,
) -> tuple[list[int], list[int]]:
    """Split a position's tiles into high and low: the bank the house way (or, when injected,
    another way), players the house way most of the time."""
    tiles = [Tile.parse(plan.faces[i]) for i in ids]
    ruleset = find_ruleset(rules_id)
    try:
        expected = ruleset.house_way(tiles).setting
    except InvalidHandError:  # a hand of the wrong size, or two of a face a set holds once
        half = len(ids) // 2
        return ids[:half], ids[half:]
    choice = expected
    if bank and wrong:
        others = [s for s in all_settings(tiles) if s.signature != expected.signature]
        if others:
            choice = others[int(rng.integers(len(others)))]
            plan.irregularities.append(
                {
                    "kind": "house-way-violation",
                    "position": position,
                    "observed": str(choice),
                    "expected": str(expected),
                }
            )
    elif not bank and rng.random() < 0.35:
        choice = all_settings(tiles)[int(rng.integers(3))]
    high = _ids_for(choice, ids, plan)
    return high, [i for i in ids if i not in high]  # two of a face may be split between hands


def _ids_for(setting: Setting, ids: list[int], plan: Plan) -> list[int]:
    pool = list(ids)
    chosen = []
    for t in setting.high.tiles:
        match = next(i for i in pool if plan.faces[i] == str(t))
        pool.remove(match)
        chosen.append(match)
    return chosen


# -- the timeline ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Timeline:
    stacking: float
    dice: float
    cut: float
    delivery: float
    setting: float
    bank: float
    exposure: float
    clearing: float
    end: float

    @classmethod
    def of(cls) -> Timeline:
        t = SHUFFLE
        stacking, t = t, t + STACKING
        dice, t = t, t + DICE
        cut, t = t, t + CUT
        delivery, t = t, t + 8 * DELIVERY_EACH + DEALT  # the last block lies a while, as dealt
        setting, t = t, t + SETTING
        bank, t = t, t + BANK
        exposure, t = t, t + 7 * EXPOSE_EACH
        clearing, t = t, t + CLEARING
        return cls(stacking, dice, cut, delivery, setting, bank, exposure, clearing, t)


class RoundScene:
    """The things on the table at time t."""

    def __init__(self, plan: Plan, layout: TableLayout, size: TileSize, seed: int) -> None:
        self.plan = plan
        self.layout = layout
        self.size = size
        self.time = Timeline.of()
        rng = np.random.default_rng([seed, 0x5CE])
        self.scatter = {
            t: (
                float(rng.normal(0, 200)),
                float(rng.normal(450, 120)),
                float(rng.uniform(0, 2 * math.pi)),
            )
            for t in plan.cells
        }
        self.wobble = rng.normal(0, 1, (64, 3))
        self.skin = SKIN[int(rng.integers(len(SKIN)))]
        cut = CUTS[plan.cut]
        self.meant = cut.grid(cut.options(**plan.cut_options))
        """The delivery order the set-up shows: the cut's own, before any injected swap."""
        chips = np.random.default_rng([seed, 0x3B])
        self.chips = {
            box: (
                CHIP[int(chips.integers(len(CHIP)))],
                int(chips.integers(1, 12)),
                *(float(v) for v in chips.uniform(-CHIP_AT, CHIP_AT, 2)),
            )
            for box in plan.wagers
        }
        """Each wager's chips: colour, how many, and where on its betting box."""
        capital = np.random.default_rng([seed, 0x3C])
        self.capital = [
            (CHIP[int(capital.integers(len(CHIP)))], int(capital.integers(1, CAPITAL_CHIPS + 1)))
            for _ in range(int(capital.integers(1, 4)) if plan.capital else 0)
        ]
        """The capital's stacks of chips, side by side in the centre circle: colour, how many."""

    def stack_pose(self, tid: int, t: float) -> Pose:
        """Where a tile lies in its stack at time t: pushed forward from the cut phase on where
        the set-up shows its stack (and pulled back a little above the first group's tiles)."""
        layer, stack = self.plan.cells[tid]
        sx, sy = self.layout.stack_area
        x = sx + (stack - 3.5) * (self.size.width + 1.5)
        set_up = self.plan.set_up
        if set_up is None or stack not in set_up.pushed:
            return Pose(x, sy, 0.0, 3 - layer, False)
        start, end = (self.time.cut + s for s in SET_UP_AT)
        pushed = min(max((t - start) / (end - start), 0.0), 1.0)
        under = min(k for k in range(4) if self.meant[k][stack] == 1)
        pulled = PULL if stack in set_up.pulled and layer < under else 0.0
        return Pose(x, sy + pushed * (PUSH - pulled), 0.0, 3 - layer, False)

    def diagonal(self, t: float) -> int | None:
        """The tile laid across the stacks at time t (Fong May's mark), if any: the top tile of
        the stack at the end away from the pushed ones."""
        set_up = self.plan.set_up
        start, end = (self.time.cut + s for s in DIAGONAL_SHOWN)
        if set_up is None or not set_up.diagonal or not start <= t < end:
            return None
        stack = 7 if min(set_up.pushed) < 4 else 0
        return next(tid for tid, cell in self.plan.cells.items() if cell == (0, stack))

    def hand_pose(self, position: int, slot: int, mode: str) -> Pose:
        """Where tile `slot` (0..3; 4+ for extra tiles) of a position lies in a layout mode."""
        if position == self.plan.banker and mode in ("set", "exposed"):
            hx, hy = self.layout.bank_area
            angle = 0.0
        else:
            hx, hy = self.layout.hand_spots[position - 1]
            angle = self.layout.hand_angle(position) - math.pi / 2
        w = self.size.width
        if mode == "block":
            offsets = [
                (-w / 2, 0, 0),
                (-w / 2, 0, 1),
                (w / 2, 0, 0),
                (w / 2, 0, 1),
                (w * 1.5, 0, 0),
                (w * 1.5, 0, 1),
            ]
        elif mode == "set":
            offsets = [
                (-w * 0.9, 0, 0),
                (-w * 0.9, 0, 1),
                (w * 0.9, 0, 0),
                (w * 0.9, 0, 1),
                (w * 2.0, 0, 0),
                (w * 2.0, 0, 1),
            ]
        else:  # exposed: high hand (two tiles touching), a gap, low hand
            gap = 30.0
            offsets = [
                (-gap / 2 - w * 1.5, 0, 0),
                (-gap / 2 - w / 2, 0, 0),
                (gap / 2 + w / 2, 0, 0),
                (gap / 2 + w * 1.5, 0, 0),
                (gap / 2 + w * 2.5 + 6, 0, 0),
                (gap / 2 + w * 3.5 + 6, 0, 0),
            ]
        dx, dy, level = offsets[min(slot, len(offsets) - 1)]
        ox, oy = rotation_z(angle)[:2, :2] @ np.array([dx, dy])
        return Pose(hx + ox, hy + oy, angle, level, mode == "exposed")

    def things(self, t: float) -> tuple[list[Thing], list[str]]:
        """The scene at time t, and the events that are true at t (phase names)."""
        plan, tl = self.plan, self.time
        poses: dict[int, Pose] = {}
        dealer_hand: tuple[float, float] | None = None
        phase = "shuffle"
        for tid in plan.cells:
            home = self.stack_pose(tid, t)
            if t < tl.stacking:
                k = int(t * 5) % 64
                sx, sy, yaw = self.scatter[tid]
                w = self.wobble[(tid + k) % 64]
                poses[tid] = Pose(sx + w[0] * 15, sy + w[1] * 15, yaw + w[2] * 0.2, 0, False)
            elif t < tl.dice:
                phase = "stacking"
                done = (t - tl.stacking) / STACKING * 8
                stack = plan.cells[tid][1]
                if stack < done:
                    poses[tid] = home
                else:
                    sx, sy, yaw = self.scatter[tid]
                    poses[tid] = Pose(sx, sy, yaw, 0, False)
            elif t < tl.delivery:
                phase = "dice" if t < tl.cut else "cut"
                poses[tid] = home
                if tid == self.diagonal(t):  # across the three stacks beside it, on top
                    step = (self.size.width + 1.5) * (2 if home.x < 0 else -2)
                    poses[tid] = Pose(home.x + step, home.y, math.pi / 4, 4, False)
            else:
                poses[tid] = home
        if tl.delivery <= t:
            phase = self._delivery_poses(t, poses)
            if t < tl.delivery + 8 * DELIVERY_EACH:
                dealer_hand = self._dealer_hand_target(t)
        for tid, pose in poses.items():
            if plan.exposed_while_stacking == tid and tl.stacking - EXPOSED_EARLY <= t < tl.dice:
                pose.face_up = True
        things: list[Thing] = []
        for tid, pose in poses.items():
            things.append(
                tile(
                    plan.faces[tid],
                    pose.x,
                    pose.y,
                    pose.yaw,
                    level=pose.level,
                    size=self.size.size,
                    face_up=pose.face_up,
                    tags={"id": tid},
                )
            )
        things += self._dice(t)
        if plan.chung:
            things.append(self._chung())
        if t < self.time.clearing:  # wagers are paid and taken as the table clears
            things += self._wagers()
            if t >= self.time.dice:  # laid once the stacks are built, clear of the wash
                things += self._capital()
        if plan.adjust:
            things.append(self._adjust_button())
        if plan.off_box is not None:
            things.append(self._off_button())
        if dealer_hand is not None:
            x, y = dealer_hand
            things.append(arm(x * 0.3, -300, x, y - 40, 110, 85, self.skin))
        return things, [phase]

    def _delivery_poses(self, t: float, poses: dict[int, Pose]) -> str:
        plan, tl = self.plan, self.time
        for position, ids in plan.hands.items():
            high, low = plan.settings[position]
            order = high + low
            for slot, tid in enumerate(ids):
                layer, stack = plan.cells[tid]
                group = plan.grid[layer][stack]
                start = tl.delivery + (group - 1) * DELIVERY_EACH
                delivered_to = plan.group_positions[group - 1]
                if plan.moved_tile is not None and plan.moved_tile[0] == tid:
                    delivered_to = plan.moved_tile[2]  # dealt with its group, to the wrong box
                if t < start:
                    continue
                block = sorted(
                    (
                        i
                        for i in plan.cells
                        if plan.grid[plan.cells[i][0]][plan.cells[i][1]] == group
                    ),
                    key=lambda i: (plan.cells[i][1], -plan.cells[i][0]),
                )
                block_slot = block.index(tid)
                if tid == plan.exposed_while_dealing and block_slot % 2 == 0:
                    block_slot += 1  # face up on top of its pair, where it shows
                elif plan.exposed_while_dealing in block[block_slot - 1 : block_slot] and (
                    block_slot % 2 == 1
                ):
                    block_slot -= 1
                if plan.moved_tile is not None and plan.moved_tile[0] == tid:
                    block_slot = 4
                target = self.hand_pose(delivered_to, block_slot, "block")
                if t < start + DELIVERY_EACH:
                    home = self.stack_pose(tid, start)
                    f = (t - start) / DELIVERY_EACH
                    poses[tid] = Pose(
                        home.x + (target.x - home.x) * f,
                        home.y + (target.y - home.y) * f,
                        target.yaw * f,
                        max(home.level, target.level) + 1,
                        plan.exposed_while_dealing == tid,
                    )
                    continue
                poses[tid] = Pose(
                    target.x,
                    target.y,
                    target.yaw,
                    target.level,
                    plan.exposed_while_dealing == tid and t < tl.setting,
                )
                if t >= tl.setting and position == plan.set_aside:
                    poses[tid] = self._set_aside(target, slot, t)
                elif t >= tl.setting:
                    mode = "set"
                    if t >= self._exposed_at(position):
                        mode = "exposed"
                    spot = order.index(tid) if tid in order else slot
                    poses[tid] = self.hand_pose(position, spot, mode)
                    carried = (t - tl.setting) / SWAP_MOVE
                    if delivered_to != position and carried < 1:  # hands swapped: carried over
                        end = poses[tid]
                        poses[tid] = Pose(
                            target.x + (end.x - target.x) * carried,
                            target.y + (end.y - target.y) * carried,
                            target.yaw + (end.yaw - target.yaw) * carried,
                            3,
                            False,
                        )
                if t >= tl.clearing + CLEARING * (position - 1) / 8:
                    poses.pop(tid, None)
        if t < tl.setting:
            return "delivery"
        if t < tl.bank:
            return "setting"
        if t < tl.exposure:
            return "bank-exposed"
        if t < tl.clearing:
            return "exposure"
        return "clearing"

    def _set_aside(self, dealt: Pose, slot: int, t: float) -> Pose:
        """A tile of the box out of play, carried face down to the burnt box as setting begins
        and left there, two by two, until the table clears (MBS 3.12, NZ 11.1(a))."""
        bx, by = BURNT_BOX
        w = self.size.width
        end = Pose(bx + (slot // 2 - 0.5) * (w + 2), by, 0.0, slot % 2, False)
        carried = min((t - self.time.setting) / SWAP_MOVE, 1.0)
        if carried >= 1:
            return end
        return Pose(dealt.x + (end.x - dealt.x) * carried, dealt.y + (end.y - dealt.y) * carried,
                    dealt.yaw * (1 - carried), 3, False)  # fmt: skip

    def _exposed_at(self, position: int) -> float:
        tl = self.time
        if position == self.plan.banker:
            return tl.bank
        k = self.plan.exposure_order.index(position)
        return tl.exposure + (k - 1) * EXPOSE_EACH

    def _dealer_hand_target(self, t: float) -> tuple[float, float]:
        tl, plan = self.time, self.plan
        group = min(int((t - tl.delivery) / DELIVERY_EACH), 7)
        f = (t - tl.delivery) / DELIVERY_EACH - group
        sx, sy = self.layout.stack_area
        px, py = self.layout.hand_spots[plan.group_positions[group] - 1]
        return sx + (px - sx) * f, sy + (py - sy) * f

    def _chung(self) -> Box:
        """The chung on the banker's box, face up: banker, or co-banker (NZ 3.3(f))."""
        plan, layout = self.plan, self.layout
        co = plan.bank == Bank.CO_BANK.value
        angle = layout.hand_angle(plan.banker)
        x, y = self._beside_hand(plan.banker, -1)
        word = plaque("CO-BANKER" if co else "BANKER", CHUNG_COLOUR)
        top = np.ascontiguousarray(word[::-1, ::-1])  # turned half round: reads right from above
        return Box("chung", (x, y, CHUNG_SIZE[2] / 2), CHUNG_SIZE,
                   rotation_z(angle), top, top, ((20, 20, 120),) * 4,
                   CHUNG_CO if co else CHUNG_BANKER, {"id": "chung"})  # fmt: skip

    def _wagers(self) -> list[Thing]:
        """A stack of chips on each betting box that holds a wager."""
        things: list[Thing] = []
        for box, (colour, count, dx, dy) in self.chips.items():
            x, y = self.layout.box_centres[box - 1]
            stack = chip_stack(x + dx, y + dy, colour, count)
            stack.label, stack.tags = WAGER, {"id": f"wager-{box}"}
            things.append(stack)
        return things

    def _capital(self) -> list[Thing]:
        """The player-banker's capital: its stacks side by side in the centre circle."""
        cx, cy = self.layout.capital_area
        things: list[Thing] = []
        for k, (colour, count) in enumerate(self.capital):
            x = cx + (k - (len(self.capital) - 1) / 2) * (CHIP_RADIUS * 2 + 4)
            stack = chip_stack(x, cy, colour, count)
            stack.label, stack.tags = WAGER, {"id": f"capital-{k}"}
            things.append(stack)
        return things

    def _beside_hand(self, box: int, side: int) -> tuple[float, float]:
        """`CHUNG_ASIDE` beside a box's hand spot along the row of boxes: the chung's side
        (-1) or the other (+1)."""
        angle = self.layout.hand_angle(box)
        x, y = self.layout.hand_spots[box - 1]
        return x + side * CHUNG_ASIDE * math.sin(angle), y - side * CHUNG_ASIDE * math.cos(angle)

    def _adjust_button(self) -> Box:
        """The +4 or -4 button, in a central position on the table (NZ 9.7)."""
        label = PLUS_4 if self.plan.adjust > 0 else MINUS_4
        return _button(f"{self.plan.adjust:+d}", label, ADJUST_SPOT, 0.0, "adjust")

    def _off_button(self) -> Box:
        """The "Off" button on the box out of play (NZ 3.3(e), 12.10; MBS 5.6.1), beside its hand
        spot on the side away from where a chung lies. A hand played there anyway (exposed in a
        line) may cover it."""
        box = self.plan.off_box
        assert box is not None
        return _button("OFF", OFF, self._beside_hand(box, 1), self.layout.hand_angle(box), "off")

    def _dice(self, t: float) -> list[Thing]:
        plan, tl = self.plan, self.time
        dx, dy = self.layout.dice_area
        things: list[Thing] = []
        if t < tl.dice or t >= tl.clearing:
            if t < tl.delivery:
                things.append(disc("cup", dx, dy, 55, 0, 45, (30, 40, 120), (40, 50, 150)))
            return things
        for k, value in enumerate(plan.dice):
            tilt = plan.tilt if k == 0 else 0.0
            things.append(
                die(value, dx + (k - 1) * 24, dy + (8 if k == 1 else -6), 0.3 + k, tilt=tilt)
            )
        things.append(disc("cup", dx + 130, dy + 20, 55, 0, 30, (30, 40, 120), (40, 50, 150)))
        return things


# -- output ------------------------------------------------------------------------------------


def _button(word: str, label: str, spot: tuple[float, float], angle: float, key: str) -> Box:
    """A button of the table's kit (+4, -4, Off) lying at `spot`, its word read from the
    players' side."""
    top = np.ascontiguousarray(plaque(word, BUTTON_COLOUR, BUTTON_SIZE[:2])[::-1, ::-1])
    return Box("button", (*spot, BUTTON_SIZE[2] / 2), BUTTON_SIZE, rotation_z(angle), top, top,
               ((90, 50, 10),) * 4, label, {"id": key})  # fmt: skip


def ground_truth(plan: Plan) -> dict[str, object]:
    ruleset = find_ruleset(plan.rules)
    hands = {}
    bank_setting = None
    for position in range(1, 9):
        high, low = plan.settings[position]
        ids = plan.hands[position]
        entry: dict[str, object] = {
            "tiles": [plan.faces[i] for i in ids],
            "high": [plan.faces[i] for i in high],
            "low": [plan.faces[i] for i in low],
        }
        if len(ids) == 4 and len(high) == 2:
            setting = Setting.parse(" ".join(entry["high"]) + " / " + " ".join(entry["low"]))  # type: ignore[arg-type]
            try:
                check = ruleset.check_setting(setting)
                entry["house_way"] = check.is_house_way
                entry["house_way_setting"] = str(check.expected)
            except ValueError:
                entry["house_way"] = None
            if position == plan.banker:
                bank_setting = setting
        if position == plan.set_aside:
            entry["set_aside"] = True  # dealt, then burnt unplayed (MBS 3.12)
        hands[str(position)] = entry
    outcomes = {}
    if bank_setting is not None:
        for position in range(1, 9):
            entry = hands[str(position)]
            if position in (plan.banker, plan.set_aside) or "house_way" not in entry:
                continue
            player = Setting.parse(" ".join(entry["high"]) + " / " + " ".join(entry["low"]))  # type: ignore[arg-type]
            outcomes[str(position)] = ruleset.match(player, bank_setting).result.value
    tl = Timeline.of()
    events = [
        {"t": 0.0, "kind": "shuffle"},
        {"t": tl.stacking, "kind": "stacking"},
        {"t": tl.dice, "kind": "dice-shown", "dice": list(plan.dice)},
        {"t": tl.cut, "kind": "cut", "cut": plan.cut},
        *(
            {
                "t": round(tl.delivery + g * DELIVERY_EACH, 3),
                "kind": "delivery",
                "group": g + 1,
                "position": plan.group_positions[g],
            }
            for g in range(8)
        ),
        {"t": tl.setting, "kind": "setting"},
        *(
            [{"t": tl.setting, "kind": "set-aside", "position": plan.set_aside}]
            if plan.set_aside is not None
            else []
        ),
        {"t": tl.bank, "kind": "bank-exposed"},
        *(
            {
                "t": round(tl.exposure + k * EXPOSE_EACH, 3),
                "kind": "position-exposed",
                "position": p,
            }
            for k, p in enumerate(plan.exposure_order[1:])
        ),
        {"t": tl.clearing, "kind": "clearing"},
        {"t": tl.end, "kind": "end"},
    ]
    expected_first = first_position(sum(plan.dice), plan.banker, plan.adjust)
    truth = {
        "rules": plan.rules,
        "banker": plan.banker,
        "dice": list(plan.dice),
        "dice_flat": plan.tilt == 0.0,
        "bank": plan.bank,
        "cut": plan.cut,
        "cut_options": plan.cut_options,
        "cut_clause": plan.cut_clause,
        "table_cuts": list(TABLE_CUTS.get(plan.rules, ())),
        "required_first_position": expected_first,
        "first_position": plan.first_position,
        "grid": [list(r) for r in plan.grid],
        "delivery": {
            str(p): [
                list(plan.cells[i])
                for i in sorted(plan.cells)
                if plan.group_positions[plan.grid[plan.cells[i][0]][plan.cells[i][1]] - 1] == p
            ]
            for p in range(1, 9)
        },
        "hands": hands,
        "outcomes": outcomes,
        "events": events,
        "irregularities": plan.irregularities,
    }
    if plan.set_up is not None:  # the stacks pushed forward before delivery (MBS App. D)
        truth["set_up"] = {
            "pushed": sorted(plan.set_up.pushed),
            "pulled": sorted(plan.set_up.pulled),
            "diagonal": plan.set_up.diagonal,
        }
    if plan.adjust:  # the button showing the player/banker's +4 or -4
        truth["adjust"] = plan.adjust
    if plan.off_box is not None:  # the box out of play, its "Off" button on it
        truth["off_box"] = plan.off_box
    if plan.chung:  # where the chung lies and its face up
        truth["chung"] = {"box": plan.banker, "label": CHUNG_CO if plan.bank == "co-bank"
                          else CHUNG_BANKER}  # fmt: skip
    if plan.wagers:
        truth["wagers"] = list(plan.wagers)
    if plan.capital:
        truth["capital"] = True
    return truth


def round_camera(rng: np.random.Generator, width: int, height: int) -> Camera:
    """The table's fixed overhead camera, framing all eight positions and the dealer's area."""
    return Camera.look_at(
        width,
        height,
        (rng.normal(0, 40), 330.0, 1800.0),
        (0.0, 560.0, 0.0),
        float(rng.uniform(64, 70)),
        (math.sin(rng.normal(0, 0.05)), 1, 0),
        float(rng.uniform(-0.08, 0.0)),
    )


@dataclass
class Studio:
    """Everything that draws one simulated round: its plan, scene, camera and look."""

    plan: Plan
    scene: RoundScene
    camera: Camera
    renderer: Renderer
    look: Look
    rng: np.random.Generator
    markers: list[dict[str, object]] = field(default_factory=list)
    """The last frame's context markers (`frame`)."""
    foreign: dict[int, Appearance] = field(default_factory=dict)
    """Tiles (by id) drawn in another maker's set's look: slipped in, of a face the set holds,
    so that only their look gives them away (`vision.training.setlook`)."""

    @classmethod
    def of(cls, seed: int, rules_id: str, irregularities: list[str],
           resolution: tuple[int, int], cut: str | None = None,
           context: bool = False) -> Studio:  # fmt: skip
        plan = plan_round(seed, rules_id, irregularities, cut, context=context)
        layout = TableLayout()
        rng = np.random.default_rng([seed, 0xF0A])
        size = TileSize.random(rng)
        scene = RoundScene(plan, layout, size, seed)
        width, height = resolution
        camera = round_camera(rng, width, height)
        renderer = Renderer(camera, cloth_image(random_cloth(rng), layout), layout)
        # A fixed camera's video: the encoder smooths sensor grain, so keep it light.
        look = dataclasses.replace(
            Look.random(rng, blur_chance=0.0), noise=float(rng.uniform(0, 1.2))
        )
        return cls(plan, scene, camera, renderer, look, rng)

    @property
    def frame_count(self) -> int:
        return int(self.scene.time.end * FPS)

    def frame(self, t: float) -> tuple[NDArray[np.uint8], list[dict[str, object]], str]:
        """The image at time t, its labelled tiles and dice, and the phase. The markers that
        say the round's context (the chung) are kept apart in `markers`: no tile or die class
        of the detector's, and every tool that reads tiles and dice reads `objects`."""
        things, phase = self.scene.things(t)
        if self.foreign:
            things = [
                dress([thing], self.foreign[thing.tags["id"]])[0]  # type: ignore[index]
                if isinstance(thing, Box) and thing.tags.get("id") in self.foreign
                else thing
                for thing in things
            ]
        rendering = self.renderer.render(things, self.look, self.rng)
        objects = [
            {
                "id": label.tags.get("id", f"{label.kind}-{label.index}"),
                "label": label.label,
                "kind": label.kind,
                "box": [round(v, 1) for v in label.box],
                "corners": np.round(label.corners, 1).tolist(),
                "visible": round(label.visible, 3),
            }
            for label in rendering.labels
            if label.labelled
        ]
        self.markers = [o for o in objects if o["kind"] in MARKER_KINDS]
        return rendering.image, [o for o in objects if o["kind"] not in MARKER_KINDS], phase[0]


FPS = 10.0


def simulate_round(
    out: Path,
    seed: int,
    rules_id: str,
    irregularities: list[str],
    *,
    fps: float = FPS,
    resolution: tuple[int, int] = (1280, 720),
    cut: str | None = None,
    context: bool = False,
    progress: bool = True,
) -> dict[str, object]:
    """Render the round to OUT/round.mp4 with OUT/truth.json and per-frame OUT/frames.json.gz."""
    studio = Studio.of(seed, rules_id, irregularities, resolution, cut, context)
    plan, camera = studio.plan, studio.camera
    width, height = resolution
    out.mkdir(parents=True, exist_ok=True)
    writer = cv2.VideoWriter(
        str(out / "round.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), fps, (width, height)
    )
    frames = []
    count = int(studio.scene.time.end * fps)
    for index in each(range(count), count, "round", "frame", enabled=progress):
        t = index / fps
        image, objects, phase = studio.frame(t)
        writer.write(image)
        entry: dict[str, object] = {"t": round(t, 3), "phase": phase, "objects": objects}
        if studio.markers:
            entry["markers"] = studio.markers
        frames.append(entry)
    writer.release()
    truth = ground_truth(plan)
    truth.update(
        {
            "fps": fps,
            "frames": count,
            "resolution": [width, height],
            "seed": seed,
            "camera": {
                "focal": camera.focal,
                "position": camera.position.tolist(),
                "rotation": camera.rotation.tolist(),
                "k1": camera.k1,
            },
        }
    )
    (out / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    with gzip.open(out / "frames.json.gz", "wt") as handle:
        json.dump(frames, handle)
    return truth
