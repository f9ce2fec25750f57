"""Two-tile hands, their ranking, and a four-tile hand set as high / low."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cache

from rules.tiles import InvalidTileError, Tile, parse_tiles

__all__ = [
    "Hand",
    "HandKind",
    "InvalidHandError",
    "Setting",
    "Strength",
    "all_settings",
]

Strength = tuple[int, int, int]
"""Sortable hand strength; equal strengths are copies (the bank wins them)."""

_TEEN = Tile(6, 6)
_DAY = Tile(1, 1)


class InvalidHandError(ValueError):
    """A hand or setting written with the wrong number of tiles or badly formed."""


class HandKind(Enum):
    PAIR = "pair"
    WONG = "wong"
    GONG = "gong"
    HIGH_NINE = "high nine"
    POINTS = "points"


_SPECIAL_RANK = {  # (Teen or Day, kind) -> rank 17..22 in the pairs/wongs table
    (True, HandKind.WONG): 17,
    (False, HandKind.WONG): 18,
    (True, HandKind.GONG): 19,
    (False, HandKind.GONG): 20,
    (True, HandKind.HIGH_NINE): 21,
    (False, HandKind.HIGH_NINE): 22,
}
_KIND_BY_PARTNER_POINTS = {9: HandKind.WONG, 8: HandKind.GONG, 7: HandKind.HIGH_NINE}


@cache
def _classify(a: Tile, b: Tile) -> tuple[HandKind, int | None, int, Strength]:
    """Kind, table rank (1..22 or None), points and strength of the two tiles a and b."""
    best_single = min(a.rank, b.rank)
    if a.rank == b.rank:
        rank = 1 if a.is_gee_joon else a.rank + 1
        return HandKind.PAIR, rank, _points(a, b), (2, 17 - rank, 0)
    for head, partner in ((a, b), (b, a)):
        if head in (_TEEN, _DAY) and not partner.is_gee_joon:
            kind = _KIND_BY_PARTNER_POINTS.get(partner.points)
            if kind is not None:
                rank = _SPECIAL_RANK[(head == _TEEN, kind)]
                return kind, rank, _points(a, b), (1, 23 - rank, 0)
    points = _points(a, b)
    # A total of 0 has no ranking: every 0 is a copy of every other 0.
    return HandKind.POINTS, None, points, (0, points, 0 if points == 0 else 17 - best_single)


def _points(a: Tile, b: Tile) -> int:
    """Total mod 10, with each Gee Joon counted as 3 or 6, whichever helps the hand."""
    options_a = (3, 6) if a.is_gee_joon else (a.points,)
    options_b = (3, 6) if b.is_gee_joon else (b.points,)
    return max((x + y) % 10 for x in options_a for y in options_b)


@dataclass(frozen=True)
class Hand:
    """Two tiles played together; written `6-6 4-5` (the order of the tiles does not matter)."""

    first: Tile
    second: Tile

    def __post_init__(self) -> None:
        object.__setattr__(self, "_class", _classify(self.first, self.second))

    @classmethod
    def of(cls, a: Tile, b: Tile) -> Hand:
        """The hand in canonical order: higher-ranking tile first."""
        return _canonical_hand(a, b)

    @classmethod
    def parse(cls, text: str) -> Hand:
        try:
            tiles = parse_tiles([text])
        except InvalidTileError as error:
            raise InvalidHandError(str(error)) from None
        if len(tiles) != 2:
            raise InvalidHandError(f"a hand is 2 tiles, got {len(tiles)} in {text!r}")
        return cls.of(*tiles)

    def __str__(self) -> str:
        return f"{self.first} {self.second}"

    def __repr__(self) -> str:
        return f"Hand.parse({str(self)!r})"

    @property
    def tiles(self) -> tuple[Tile, Tile]:
        return (self.first, self.second)

    @property
    def _classification(self) -> tuple[HandKind, int | None, int, Strength]:
        found: tuple[HandKind, int | None, int, Strength] = self.__dict__["_class"]
        return found

    @property
    def kind(self) -> HandKind:
        return self._classification[0]

    @property
    def rank(self) -> int | None:
        """Rank 1..22 in the pairs, wongs, gongs and high nines table; None for a points hand."""
        return self._classification[1]

    @property
    def points(self) -> int:
        return self._classification[2]

    @property
    def strength(self) -> Strength:
        return self._classification[3]

    @property
    def high_tile(self) -> Tile:
        """The higher-ranking tile, which decides between equal point totals."""
        return min(self.tiles, key=_tile_order)

    @property
    def is_special(self) -> bool:
        """A pair, wong, gong or high nine: ranked by the table, not by points."""
        return self.kind is not HandKind.POINTS

    def describe(self) -> str:
        """Readable form for operators: `Teen Wong`, `Day pair`, `7 (Gor high)`."""
        if self.kind is HandKind.PAIR:
            return f"{self.first.name} pair"
        if self.kind is not HandKind.POINTS:
            return f"{self.high_tile.name} {self.kind.value.title()}"
        if self.points == 0:
            return "0"
        return f"{self.points} ({self.high_tile.name} high)"


@cache
def _canonical_hand(a: Tile, b: Tile) -> Hand:
    return Hand(*sorted((a, b), key=_tile_order))


def _tile_order(tile: Tile) -> tuple[int, int, int]:
    return (tile.rank, -tile.high_end, -tile.low_end)


@dataclass(frozen=True)
class Setting:
    """Four tiles set into a high hand and a low hand; written `HIGH HIGH / LOW LOW`."""

    high: Hand
    low: Hand

    @classmethod
    def of(cls, one: Hand, other: Hand) -> Setting:
        """The setting with the stronger of the two hands as high."""
        return _oriented_setting(one, other)

    @classmethod
    def parse(cls, text: str) -> Setting:
        parts = text.split("/")
        if len(parts) != 2:
            raise InvalidHandError(f"write a setting as 'HIGH HIGH / LOW LOW', got {text!r}")
        return cls(Hand.parse(parts[0]), Hand.parse(parts[1]))

    def __str__(self) -> str:
        return f"{self.high} / {self.low}"

    def __repr__(self) -> str:
        return f"Setting.parse({str(self)!r})"

    @property
    def tiles(self) -> tuple[Tile, Tile, Tile, Tile]:
        return (*self.high.tiles, *self.low.tiles)

    @property
    def is_legal(self) -> bool:
        """The high hand must outrank or equal the low hand."""
        return self.high.strength >= self.low.strength

    @property
    def signature(self) -> tuple[Strength, Strength]:
        """What the setting is worth: two settings with one signature play identically."""
        return (self.high.strength, self.low.strength)


@cache
def _oriented_setting(one: Hand, other: Hand) -> Setting:
    if _order_key(other) > _order_key(one):
        one, other = other, one
    return Setting(one, other)


def _order_key(hand: Hand) -> tuple[Strength, tuple[int, ...]]:
    # Equal strengths (two 0s, say) are ordered by tile so that `Setting.of` is deterministic.
    return (hand.strength, tuple(-x for x in _tile_order(hand.high_tile)))


def all_settings(tiles: Sequence[Tile]) -> tuple[Setting, ...]:
    """The three ways to split four tiles into two hands, each with its stronger hand high."""
    if len(tiles) != 4:
        raise InvalidHandError(f"a hand to set is 4 tiles, got {len(tiles)}")
    a, b, c, d = tiles
    return (
        Setting.of(Hand.of(a, b), Hand.of(c, d)),
        Setting.of(Hand.of(a, c), Hand.of(b, d)),
        Setting.of(Hand.of(a, d), Hand.of(b, c)),
    )
