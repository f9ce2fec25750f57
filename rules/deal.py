"""Dice, first position and the delivery order of each cut over the 4 x 8 stack grid.

The grid is seen from the dealer's side: 4 rows, the stacks' top layer first, by 8 columns from
the dealer's left to right. Each cell holds the number (1..8) of the group of four it is
delivered in; group 1 goes to the first position, the rest follow counter-clockwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TypeVar

__all__ = [
    "CUTS",
    "Cell",
    "Cut",
    "CutOptions",
    "DealError",
    "DeliveryCheck",
    "DeliveryOrder",
    "Dice",
    "Mismatch",
    "SetUp",
    "find_cut",
    "first_position",
    "parse_grid",
    "removed_box",
]

POSITIONS = 8
LAYERS = 4
STACKS = 8
E = TypeVar("E", bound=Enum)
Grid = tuple[tuple[int, ...], ...]
Cell = tuple[int, int]
"""(layer, stack): layer 0 is the top tile, stack 0 the dealer's leftmost stack."""


class DealError(ValueError):
    """Dice, positions, cuts or cut options that cannot be."""


@dataclass(frozen=True)
class Dice:
    """The three dice shown; written `3 4 5`."""

    values: tuple[int, int, int]

    def __post_init__(self) -> None:
        if len(self.values) != 3:
            raise DealError(f"three dice are thrown, got {len(self.values)}")
        for value in self.values:
            if not 1 <= value <= 6:
                raise DealError(f"a die shows 1 to 6, got {value}")

    @classmethod
    def of(cls, values: Iterable[int]) -> Dice:
        found = tuple(values)
        if len(found) != 3:
            raise DealError(f"three dice are thrown, got {len(found)}")
        return cls((found[0], found[1], found[2]))

    @classmethod
    def parse(cls, text: str) -> Dice:
        words = text.split()
        if not all(w.isdigit() for w in words):
            raise DealError(f"dice are written as three numbers such as '3 4 5', got {text!r}")
        return cls.of(int(w) for w in words)

    def __str__(self) -> str:
        return " ".join(str(v) for v in self.values)

    def __repr__(self) -> str:
        return f"Dice.parse({str(self)!r})"

    @property
    def total(self) -> int:
        return sum(self.values)


def first_position(total: int, banker: int, adjust: int = 0) -> int:
    """The position receiving the first group: count counter-clockwise from the banker's
    position as 1, 9, 17 (NZ 9.9, ACT 8.11, RWS 3.7, MBS 3.10), with NZ 9.6's +4 or -4."""
    _check_position(banker, "banker's position")
    if adjust not in (-4, 0, 4):
        raise DealError(f"the delivery adjustment is +4 or -4 (NZ 9.6), got {adjust:+d}")
    return (banker - 1 + total + adjust - 1) % POSITIONS + 1


def removed_box(totals: Sequence[int], house_box: int) -> int:
    """The box removed from play and marked "Off": count counter-clockwise from box 1 by the
    dice total; a throw that names the house's box is thrown again (NZ 12.10, MBS 5.6.1-5.6.2).
    `totals` are the throws in order; the first that names another box decides."""
    _check_position(house_box, "house's box")
    for total in totals:
        if not 3 <= total <= 18:
            raise DealError(f"three dice total 3 to 18, got {total}")
        box = (total - 1) % POSITIONS + 1
        if box != house_box:
            return box
    raise DealError("every throw named the house's box: throw again (NZ 12.10, MBS 5.6.2)")


def _check_position(position: int, what: str) -> None:
    if not 1 <= position <= POSITIONS:
        raise DealError(f"{what} is 1 to {POSITIONS}, got {position}")


class Side(Enum):
    LEFT = "left"
    RIGHT = "right"


class Layer(Enum):
    TOP = "top"
    BOTTOM = "bottom"


class End(Enum):
    HEAD = "head"
    TAIL = "tail"


@dataclass(frozen=True)
class CutOptions:
    """The options a cut was called with; None where the cut has no such option."""

    side: Side | None = None
    layer: Layer | None = None
    end: End | None = None

    def __str__(self) -> str:
        chosen = [o.value for o in (self.side, self.layer, self.end) if o is not None]
        return ", ".join(chosen) if chosen else "no options"


def _grid(text: str) -> Grid:
    rows = tuple(tuple(int(x) for x in line.split()) for line in text.strip().splitlines())
    _check_grid(rows)
    return rows


def parse_grid(text: str) -> Grid:
    """A table's own delivery order: 32 group numbers, rows top layer first, `/` between rows
    optional (`7 7 5 5 3 3 1 1 / 7 7 5 5 ...`)."""
    words = text.replace("/", " ").split()
    if len(words) != LAYERS * STACKS or not all(w.isdigit() for w in words):
        raise DealError(f"a delivery grid is {LAYERS * STACKS} group numbers 1..8")
    numbers = [int(w) for w in words]
    rows = tuple(tuple(numbers[i : i + STACKS]) for i in range(0, len(numbers), STACKS))
    _check_grid(rows)
    return rows


def _check_grid(rows: Sequence[Sequence[int]]) -> None:
    if len(rows) != LAYERS or any(len(row) != STACKS for row in rows):
        raise DealError(f"a delivery grid is {LAYERS} rows of {STACKS} groups")
    counts = [sum(row.count(g) for row in rows) for g in range(1, POSITIONS + 1)]
    if counts != [4] * POSITIONS:
        raise DealError("a delivery grid gives each group 1..8 exactly four cells")


def _mirror(grid: Grid) -> Grid:
    return tuple(tuple(reversed(row)) for row in grid)


def _relabel(grid: Grid, mapping: Mapping[int, int]) -> Grid:
    return tuple(tuple(mapping[g] for g in row) for row in grid)


SWAP_PAIRS = {g: g + 1 if g % 2 else g - 1 for g in range(1, 9)}  # 1<->2, 3<->4, ...
SWAP_HALVES = {g: (g + 3) % 8 + 1 for g in range(1, 9)}  # 1..4 <-> 5..8
REVERSE = {g: 9 - g for g in range(1, 9)}


@dataclass(frozen=True)
class Cut:
    """A named cut: its options, and its delivery order where a rule book describes one."""

    id: str
    names: str
    drawn: Grid | None
    """The order as drawn (or, where marked, as we read the text), with the default options."""
    source: str
    defaults: CutOptions = field(default_factory=CutOptions)
    other_layer: Mapping[int, int] = field(default_factory=lambda: SWAP_PAIRS)
    other_end: Mapping[int, int] = field(default_factory=lambda: SWAP_PAIRS)
    marked_end: End | None = None
    """The end option the dealer marks with a tile laid diagonally across the stacks before
    delivering (MBS App. D: Fong May, which looks like Long Tau otherwise)."""

    def options(self, side: str | None = None, layer: str | None = None,
                end: str | None = None) -> CutOptions:  # fmt: skip
        """Resolve the options a caller gave against the ones this cut has."""
        return CutOptions(
            side=self._choose("side", Side, self.defaults.side, side),
            layer=self._choose("layer", Layer, self.defaults.layer, layer),
            end=self._choose("end", End, self.defaults.end, end),
        )

    def _choose(self, what: str, kind: type[E], default: E | None, given: str | None) -> E | None:
        if given is None:
            return default
        if default is None:
            raise DealError(f"cut {self.id!r} has no {what} option")
        try:
            return kind(given)
        except ValueError:
            allowed = " or ".join(str(m.value) for m in kind)
            raise DealError(f"{what} is {allowed}, got {given!r}") from None

    def grid(self, options: CutOptions | None = None) -> Grid:
        """The delivery order for these options."""
        chosen = options or self.defaults
        if self.drawn is None:
            raise DealError(
                f"cut {self.id!r} ({self.names}) is named but no rule book describes its "
                "delivery order: give the table's approved order as a grid (--grid)"
            )
        grid = self.drawn
        if chosen.side is not None and chosen.side != self.defaults.side:
            grid = _mirror(grid)
        if chosen.layer is not None and chosen.layer != self.defaults.layer:
            grid = _relabel(grid, self.other_layer)
        if chosen.end is not None and chosen.end != self.defaults.end:
            grid = _relabel(grid, self.other_end)
        return grid

    def set_up(self, options: CutOptions | None = None) -> SetUp:
        """How the dealer shows this cut before delivering it (`SetUp`)."""
        chosen = options or self.defaults
        grid = self.grid(chosen)
        pushed = frozenset(s for s in range(STACKS) if any(row[s] == 1 for row in grid))
        pulled = frozenset(s for s in pushed if grid[0][s] != 1)
        diagonal = self.marked_end is not None and chosen.end is self.marked_end
        return SetUp(pushed, pulled, diagonal)

    def all_options(self) -> list[CutOptions]:
        sides = [None] if self.defaults.side is None else list(Side)
        layers = [None] if self.defaults.layer is None else list(Layer)
        ends = [None] if self.defaults.end is None else list(End)
        return [CutOptions(s, la, e) for s in sides for la in layers for e in ends]


@dataclass(frozen=True)
class SetUp:
    """How a dealer shows the cut before delivering it, where the rule book has the cut drawn
    every round (MBS 3.9, App. D). Our reading of App. D's twenty set-ups as one rule
    (docs/cuts.md): the stacks the first group is taken from are pushed towards the players;
    where that group lies under other tiles, those are pulled back slightly; Fong May adds a
    tile laid diagonally across the stacks. Stacks are numbered 0-7 as the grid's columns."""

    pushed: frozenset[int]
    pulled: frozenset[int]
    diagonal: bool = False

    def __str__(self) -> str:
        words = ["stacks " + " ".join(str(s + 1) for s in sorted(self.pushed)) + " pushed"]
        if self.pulled:
            words.append(
                "tops of " + " ".join(str(s + 1) for s in sorted(self.pulled)) + " pulled back"
            )
        if self.diagonal:
            words.append("a tile across")
        return ", ".join(words)


RIGHT = CutOptions(side=Side.RIGHT)
MBS_D = "MBS App. D diagram"
READING = "our reading of the MBS App. D text (docs/cuts.md)"
UNPUBLISHED = "named only: no rule book describes it (docs/cuts.md)"

_CATALOGUE = (
    Cut("yat-dong-dong", "Yat Dong Dong / One Stack", _grid("""
        8 7 6 5 4 3 2 1
        8 7 6 5 4 3 2 1
        8 7 6 5 4 3 2 1
        8 7 6 5 4 3 2 1"""), MBS_D, RIGHT),
    Cut("cup-say", "Cup Say / Tiger Head (bottom: Di Chut)", _grid("""
        7 7 5 5 3 3 1 1
        7 7 5 5 3 3 1 1
        8 8 6 6 4 4 2 2
        8 8 6 6 4 4 2 2"""), MBS_D, CutOptions(side=Side.RIGHT, layer=Layer.TOP)),
    Cut("chee-yee", "Chee Yee / Chop the Ears", _grid("""
        1 3 5 7 7 5 3 1
        1 3 5 7 7 5 3 1
        2 4 6 8 8 6 4 2
        2 4 6 8 8 6 4 2"""), MBS_D, CutOptions(layer=Layer.TOP)),
    Cut("dai-pin", "Dai Pin / Big Slice", _grid("""
        2 2 2 2 1 1 1 1
        4 4 4 4 3 3 3 3
        6 6 6 6 5 5 5 5
        8 8 8 8 7 7 7 7"""), MBS_D, RIGHT),
    Cut("jung-quat", "Jung Quat / From the Heart", _grid("""
        7 5 3 1 1 3 5 7
        7 5 3 1 1 3 5 7
        8 6 4 2 2 4 6 8
        8 6 4 2 2 4 6 8"""), MBS_D, CutOptions(layer=Layer.TOP)),
    Cut("long-tau-fong-may", "Long Tau / Fong May, Dragon Head / Phoenix Tail", _grid("""
        1 1 1 1 2 2 6 6
        3 3 3 3 2 2 6 6
        5 5 5 5 4 4 8 8
        7 7 7 7 4 4 8 8"""), "MBS App. D diagram (Fong May from the left); stacks: our reading",
        CutOptions(side=Side.LEFT, end=End.TAIL), marked_end=End.TAIL),
    Cut("wui-fung-bank", "Wui Fung Bank / Hong Kong Bank", None,
        "MBS App. D text; its diagrams are lost"),
    Cut("foot-say", "Foot Say / Four Across", _grid("""
        1 1 5 5 5 5 1 1
        2 2 6 6 6 6 2 2
        3 3 7 7 7 7 3 3
        4 4 8 8 8 8 4 4"""), "MBS App. D diagram; stacks: our reading",
        CutOptions(layer=Layer.TOP), other_layer=REVERSE),
    Cut("harbour-bridge", "Harbour Bridge", None, UNPUBLISHED),
    Cut("ghan-dong-ping-say", "Ghan Dong Ping Say / Kangaroo Jump", _grid("""
        2 1 2 1 2 1 2 1
        4 3 4 3 4 3 4 3
        6 5 6 5 6 5 6 5
        8 7 8 7 8 7 8 7"""), MBS_D, RIGHT),
    Cut("pong-jun", "Pong Jun (Pong Yun) / Buddha's Signal", _grid("""
        1 1 5 5 7 5 3 1
        2 2 6 6 7 5 3 1
        3 3 7 7 8 6 4 2
        4 4 8 8 8 6 4 2"""), READING, RIGHT),
    Cut("bo-bo-go-sing", "Bo Bo Go Sing / Boy Walks Up Stairs", _grid("""
        1 6 5 4 3 2 1 1
        2 7 6 5 4 3 2 1
        7 8 7 6 5 4 3 2
        8 8 8 7 6 5 4 3"""), READING, RIGHT),
    Cut("ghan-dong-cup-say", "Ghan Dong Cup Say / Striped Tiger", _grid("""
        7 5 7 3 5 1 3 1
        7 5 7 3 5 1 3 1
        8 6 8 4 6 2 4 2
        8 6 8 4 6 2 4 2"""), MBS_D, CutOptions(side=Side.RIGHT, layer=Layer.TOP)),
    Cut("yat-kai-sum-may", "Yat Kai Sum May / Chicken Three Ways", _grid("""
        5 5 3 2 3 5 5 1
        6 6 3 2 3 6 6 1
        7 7 4 2 4 7 7 1
        8 8 4 2 4 8 8 1"""), READING, RIGHT),
    Cut("arn-lok-peng-sar", "Arn Lok Peng Sar / Flying Dragon", _grid("""
        2 4 2 4 5 5 1 1
        6 8 6 8 5 5 1 1
        2 4 2 4 7 7 3 3
        6 8 6 8 7 7 3 3"""), "MBS App. D diagrams", CutOptions(side=Side.RIGHT, end=End.HEAD)),
    Cut("tower", "Tower", _grid("""
        1 5 3 7 7 3 5 1
        1 5 3 7 7 3 5 1
        2 6 4 8 8 4 6 2
        2 6 4 8 8 4 6 2"""), READING),
    Cut("china-bank", "China Bank", _grid("""
        3 1 7 5 5 7 1 3
        3 1 7 5 5 7 1 3
        4 2 8 6 6 8 2 4
        4 2 8 6 6 8 2 4"""), "MBS App. D diagrams; stacks: our reading"),
    Cut("chong-wan-sup-lok", "Chong Wan Sup Lok / Sixteen Across", _grid("""
        8 7 6 5 5 6 7 8
        8 7 6 5 5 6 7 8
        4 3 2 1 1 2 3 4
        4 3 2 1 1 2 3 4"""), "MBS App. D diagram; which sixteen go first: our reading",
        CutOptions(layer=Layer.BOTTOM), other_layer=SWAP_HALVES),
    Cut("seung-gwai-pak-moon", "Seung Gwai Pak Moon / Ghost Closing the Door", None, UNPUBLISHED),
    Cut("gum-un-que", "Gum Un Que / Double Bridge", _grid("""
        6 7 2 3 4 1 8 5
        6 8 2 4 2 1 6 5
        7 7 3 3 2 1 6 5
        8 8 4 4 3 1 7 5"""), "MBS App. D diagrams, partly lost; our reading", RIGHT),
    Cut("parliament-house", "Parliament House", None, UNPUBLISHED),
    Cut("telstra-tower", "Telstra Tower", None, UNPUBLISHED),
    Cut("girl-on-the-right-and-left", "Girl on the Right and Left", None, UNPUBLISHED),
)  # fmt: skip

CUTS: dict[str, Cut] = {cut.id: cut for cut in _CATALOGUE}
ALIASES: dict[str, tuple[str, dict[str, str]]] = {
    "di-chut": ("cup-say", {"layer": "bottom"}),
    "chee-yee-di-chut": ("chee-yee", {"layer": "bottom"}),
    "die-pin": ("dai-pin", {}),
    "long-tau": ("long-tau-fong-may", {"end": "head"}),
    "fong-may": ("long-tau-fong-may", {"end": "tail"}),
    "long-tau-fung-may": ("long-tau-fong-may", {}),
    "hong-kong-bank": ("wui-fung-bank", {}),
    "pong-yun": ("pong-jun", {}),
}


def find_cut(name: str) -> tuple[Cut, dict[str, str]]:
    """The cut with this id or alias, and the options the alias implies."""
    if name in CUTS:
        return CUTS[name], {}
    if name in ALIASES:
        cut_id, implied = ALIASES[name]
        return CUTS[cut_id], dict(implied)
    known = ", ".join(sorted(CUTS))
    raise DealError(f"unknown cut {name!r}; known cuts: {known}")


@dataclass(frozen=True)
class Mismatch:
    """A stack cell that went to another position than the dice and cut require."""

    cell: Cell
    group: int
    expected: int
    observed: int

    def __str__(self) -> str:
        layer, stack = self.cell
        return (
            f"layer {layer + 1} of stack {stack + 1} (group {self.group}) went to position "
            f"{self.observed}, not {self.expected}"
        )


@dataclass(frozen=True)
class DeliveryCheck:
    """Which observed cells broke the delivery order, and what the observation fits instead."""

    mismatches: tuple[Mismatch, ...]
    cells_checked: int
    observed_first_position: int | None
    """Where group 1 went, when the cells kept to the cut but started at another position."""

    @property
    def ok(self) -> bool:
        return not self.mismatches

    @property
    def wrong_first_position(self) -> bool:
        return bool(self.mismatches) and self.observed_first_position is not None


@dataclass(frozen=True)
class DeliveryOrder:
    """Which position receives each group and each stack cell."""

    first: int
    grid: Grid
    cut: str
    options: CutOptions

    @property
    def positions(self) -> tuple[int, ...]:
        """The position for groups 1..8."""
        return tuple((self.first - 1 + g) % POSITIONS + 1 for g in range(POSITIONS))

    def position_of(self, cell: Cell) -> int:
        layer, stack = cell
        if not (0 <= layer < LAYERS and 0 <= stack < STACKS):
            raise DealError(f"no cell at layer {layer}, stack {stack} in the 4 x 8 grid")
        return self.positions[self.grid[layer][stack] - 1]

    @classmethod
    def build(
        cls, cut: Cut, options: CutOptions, dice: Dice, banker: int, adjust: int = 0
    ) -> DeliveryOrder:
        return cls(first_position(dice.total, banker, adjust), cut.grid(options), cut.id, options)

    def check(self, observed: Mapping[Cell, int]) -> DeliveryCheck:
        """Compare where the camera saw each stack cell go with where it should have gone."""
        mismatches = []
        for cell, position in sorted(observed.items()):
            _check_position(position, "a delivered position")
            expected = self.position_of(cell)
            if position != expected:
                layer, stack = cell
                mismatches.append(Mismatch(cell, self.grid[layer][stack], expected, position))
        shifted = {
            (position - self.grid[layer][stack]) % POSITIONS
            for (layer, stack), position in observed.items()
        }
        first = shifted.pop() + 1 if len(shifted) == 1 else None
        return DeliveryCheck(tuple(mismatches), len(observed), first)
