"""House-way machinery shared by the rule books: candidate settings narrowed clause by clause.

A rule book's house way is a sequence of clauses. Each clause keeps the candidate settings it
prefers; the clause after which every remaining candidate is worth the same is the one that
decided the setting, and it is reported with the verdict so an alert can cite it.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

from rules.hands import Hand, HandKind, InvalidHandError, Setting, Strength, all_settings
from rules.tiles import FACES, Tile

__all__ = [
    "Clause",
    "HouseWay",
    "HouseWayCheck",
    "Tokens",
    "count",
    "plain_points",
    "points_at_least",
]

Predicate = Callable[[Setting], bool]


@dataclass(frozen=True)
class Clause:
    """A rule-book clause: where it stands (`App. C 1.2 #3`) and what it says, briefly."""

    ref: str
    summary: str

    def __str__(self) -> str:
        return f"{self.ref}: {self.summary}"


FORCED = Clause("-", "every way of setting these tiles is worth the same")
TIE_READING = Clause(
    "docs/house-way.md#final-tie",
    "rule book silent: the stronger low hand, then the stronger high hand",
)


@dataclass(frozen=True)
class HouseWay:
    """The house way for four tiles under one rule book, with the clause that decided it."""

    ruleset: str
    setting: Setting
    clause: Clause
    trail: tuple[Clause, ...]

    def accepts(self, observed: Setting) -> bool:
        """Is the observed setting worth exactly the house-way setting (same tiles, same play)?"""
        return (
            Counter(observed.tiles) == Counter(self.setting.tiles)
            and observed.signature == self.setting.signature
        )


@dataclass(frozen=True)
class HouseWayCheck:
    """Verdict on an observed setting: house way or not, with the expected one and the clause."""

    ruleset: str
    observed: Setting
    expected: Setting
    is_house_way: bool
    clause: Clause


def count(hand: Hand) -> tuple[int, int]:
    """A hand's point count for "maximise the points" clauses: the high tile is left out, and
    a pair, wong, gong or high nine counts above every point total."""
    return (hand.strength[0], hand.strength[1])


def plain_points(setting: Setting) -> tuple[int, int] | None:
    """(low, high) point totals when neither hand is a pair, wong, gong or high nine."""
    if setting.high.is_special or setting.low.is_special:
        return None
    return (setting.low.points, setting.high.points)


def points_at_least(points: int) -> Strength:
    """The weakest hand of the given point total: `6 or better` means strength >= this."""
    return (0, points, 0)


def value_options(tile: Tile) -> tuple[int, ...]:
    """Point values a rule book's lists may call this tile: Gee Joon is a 3 or a 6."""
    return (3, 6) if tile.is_gee_joon else (tile.points,)


class Tokens:
    """Tile descriptions as the rule books write them in their lists of combinations."""

    _NAMED: ClassVar[dict[str, frozenset[str]]] = {
        "Teen": frozenset({"6-6"}),
        "Day": frozenset({"1-1"}),
        "Teen/Day": frozenset({"6-6", "1-1"}),
        "High 4": frozenset({"1-3"}),
        "Low 4": frozenset({"2-2"}),
        "High 6": frozenset({"3-3"}),
        "Low 6": frozenset({"1-5"}),
        "High 8": frozenset({"4-4"}),
        "Low 8": frozenset({"3-5", "2-6"}),
        "High 10": frozenset({"5-5"}),
        "Low 10": frozenset({"4-6"}),
        "Gee": frozenset({"1-2", "2-4"}),
        "any": frozenset(),
    }

    @classmethod
    def matches(cls, token: str, tile: Tile, *, gee_joon_counts: bool) -> bool:
        """Does `tile` fit `token`? `7|Low 8` is either; a number is a tile of that value."""
        return str(tile) in cls._faces(token, gee_joon_counts)

    @staticmethod
    @cache
    def _faces(token: str, gee_joon_counts: bool) -> frozenset[str]:
        faces: set[str] = set()
        for option in token.split("|"):
            if option == "any":
                faces.update(str(t) for t in FACES)
            elif option in Tokens._NAMED:
                faces.update(Tokens._NAMED[option])
            elif option.isdigit():
                faces.update(
                    str(t)
                    for t in FACES
                    if (
                        int(option) in value_options(t)
                        if gee_joon_counts
                        else not t.is_gee_joon and t.points == int(option)
                    )
                )
            else:
                raise ValueError(f"unknown tile description {option!r}")
        return frozenset(faces)

    @staticmethod
    @cache
    def _draws(tokens: tuple[str, ...], gee_joon_counts: bool) -> frozenset[tuple[str, ...]]:
        """Every sorted list of faces that is this combination, worked out once."""
        options = [sorted(Tokens._faces(token, gee_joon_counts)) for token in tokens]
        return frozenset(tuple(sorted(pick)) for pick in itertools.product(*options))

    @staticmethod
    @cache
    def index(
        combinations: tuple[tuple[str, ...], ...], *, gee_joon_counts: bool
    ) -> dict[tuple[str, ...], int]:
        """For a list of combinations: each sorted draw that is one of them -> its position.
        A draw matching two combinations is listed under the first."""
        found: dict[tuple[str, ...], int] = {}
        for number, tokens in enumerate(combinations):
            for draw in Tokens._draws(tokens, gee_joon_counts):
                found.setdefault(draw, number)
        return found

    @classmethod
    def assign(
        cls, tokens: Sequence[str], tiles: Sequence[Tile], *, gee_joon_counts: bool
    ) -> dict[str, Tile] | None:
        """Give each token its own tile, or None when the tiles are not that combination."""
        texts = [str(tile) for tile in tiles]
        if tuple(sorted(texts)) not in cls._draws(tuple(tokens), gee_joon_counts):
            return None
        allowed = [cls._faces(token, gee_joon_counts) for token in tokens]
        for order in itertools.permutations(range(len(tiles))):
            if all(texts[i] in faces for i, faces in zip(order, allowed, strict=True)):
                return {token: tiles[i] for token, i in zip(tokens, order, strict=True)}
        return None


class Chooser:
    """The candidate settings of one four-tile hand, narrowed by one clause after another."""

    def __init__(self, ruleset: str, tiles: Sequence[Tile]) -> None:
        self.ruleset = ruleset
        self.tiles = tuple(tiles)
        self.candidates: list[Setting] = list(all_settings(self.tiles))
        self.trail: list[Clause] = []
        self.decisive: Clause | None = FORCED if self.settled else None

    @property
    def settled(self) -> bool:
        first = self.candidates[0].signature
        return all(s.signature == first for s in self.candidates)

    def keep(self, clause: Clause, prefer: Predicate) -> bool:
        """Keep the candidates the clause prefers; a clause no candidate meets changes nothing."""
        kept = [s for s in self.candidates if prefer(s)]
        if not kept:
            return False
        self._narrow(clause, kept)
        return True

    def best(self, clause: Clause, key: Callable[[Setting], tuple[int, ...] | int]) -> None:
        """Keep the candidates that score highest under the clause."""
        top = max(key(s) for s in self.candidates)
        self._narrow(clause, [s for s in self.candidates if key(s) == top])

    def any(self, prefer: Predicate) -> bool:
        return any(prefer(s) for s in self.candidates)

    def _narrow(self, clause: Clause, kept: list[Setting]) -> None:
        if self.decisive is not None:
            return
        if len(kept) < len(self.candidates):
            self.trail.append(clause)
            self.candidates = kept
        if self.settled:
            self.decisive = clause

    def verdict(self) -> HouseWay:
        if self.decisive is None:
            self.best(TIE_READING, lambda s: (*s.low.strength, *s.high.strength))
        if self.decisive is None:  # only the order of equal tiles is left to choose
            self.decisive = TIE_READING
        setting = min(self.candidates, key=lambda s: tuple(str(t) for t in s.tiles))
        assert self.decisive is not None
        return HouseWay(self.ruleset, setting, self.decisive, tuple(self.trail))


def validate_draw(tiles: Sequence[Tile]) -> None:
    """Four tiles that one genuine set can deal; anything else is not a hand to set."""
    if len(tiles) != 4:
        raise InvalidHandError(f"a hand is 4 tiles, got {len(tiles)}")
    for tile, count in Counter(tiles).items():
        if count > tile.copies:
            raise InvalidHandError(
                f"{tile} appears {count} times but a set holds {tile.copies}: a foreign tile"
            )


def pairs_in(tiles: Iterable[Tile]) -> list[tuple[Tile, Tile]]:
    """The pairs (two tiles of one single rank) among the tiles."""
    by_rank: dict[int, list[Tile]] = {}
    for tile in tiles:
        by_rank.setdefault(tile.rank, []).append(tile)
    return [(group[0], group[1]) for group in by_rank.values() if len(group) >= 2]


def together(setting: Setting, *tiles: Tile) -> bool:
    """Are these tiles (counted with repeats: a Teen pair is two Teens) in one hand?"""
    for hand in (setting.high, setting.low):
        rest = list(hand.tiles)
        for tile in tiles:
            if tile not in rest:
                break
            rest.remove(tile)
        else:
            return True
    return False


def is_split(setting: Setting, pair: tuple[Tile, Tile]) -> bool:
    return not together(setting, *pair)


def plays(setting: Setting, kind: HandKind) -> bool:
    return setting.high.kind is kind or setting.low.kind is kind


def top_tiles(tiles: Sequence[Tile], n: int) -> list[Tile]:
    return sorted(tiles, key=lambda t: t.rank)[:n]


def in_high(setting: Setting, tile: Tile) -> bool:
    return tile in setting.high.tiles


def in_low(setting: Setting, tile: Tile) -> bool:
    return tile in setting.low.tiles
