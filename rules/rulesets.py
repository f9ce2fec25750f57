"""One class per rule book, found by id: house way, matching and the cut list it names."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from rules.hands import HandKind, Setting, Strength
from rules.houseway import (
    Chooser,
    Clause,
    HouseWay,
    HouseWayCheck,
    Tokens,
    is_split,
    plays,
    together,
    top_tiles,
    validate_draw,
)
from rules.matching import Match, combine
from rules.tiles import Tile

__all__ = ["Ruleset", "UnknownRulesetError", "find_ruleset", "ruleset_ids"]

CHONG_3: Strength = (0, 3, 17 - 6)
"""A point total of 3 whose higher tile ranks High 6 (Chong) or better."""


class UnknownRulesetError(ValueError):
    """A ruleset id that names none of the rule books we encode."""


class Ruleset:
    """A casino's rule book. Subclasses set the class attributes and the house-way clauses."""

    id: ClassVar[str]
    title: ClassVar[str]
    source: ClassVar[str]
    cuts: ClassVar[tuple[str, ...] | None]
    """Cut ids the rule book names; None where it names none (any catalogued cut is accepted)."""
    house_cut: ClassVar[str | None] = None
    """The cut a house bank is dealt (NZ 9.5, ACT 8.6); None where the book does not tie the cut
    to who banks."""
    house_cut_directed: ClassVar[bool] = False
    """Whether the game supervisor may direct another approved cut for a house bank (NZ 9.5)."""
    random_cut: ClassVar[bool] = False
    """Whether the cut is selected at random every round (MBS 3.9)."""
    cut_set_up: ClassVar[bool] = False
    """Whether the dealer shows the cut's set-up before delivering (MBS App. D, `SetUp`)."""
    cut_clause: ClassVar[str] = ""
    """Where the book says which cut a round is dealt with."""
    delivery_adjustment: ClassVar[bool] = False
    """Whether the banker may add or take 4 from the dice total (NZ 9.6)."""
    off_clause: ClassVar[str | None] = None
    """Where the book lets the house take a box out of play, marked by an "Off" button on the box
    the dice name (NZ 12.9-12.10, MBS 5.6-5.6.2); None where it has no such button."""
    off_with_co_bank: ClassVar[bool] = False
    """Whether a box may be taken out of play while a player co-banks with the house (NZ 12.9(b):
    "either alone or with a co-banker"); MBS 5.6 asks that the dealer hold the bank."""
    house_chung: ClassVar[bool] = True
    """Whether a chung marks the house's own bank too (NZ 11.1(a): on box 1); MBS 3.24.1 places
    one only where a player banks."""
    house_box_unwagered: ClassVar[str | None] = None
    """Where the book takes no wager on box 1 while the house banks (NZ 11.1(b), ACT 7.3, MBS
    3.25.1), so that chips on box 1 say a player banks there; None where it does not say."""
    player_capital: ClassVar[str | None] = None
    """Where the book has a player-banker's capital laid in the centre circle (RWS 3.16, MBS
    3.26.1), so that chips there say a player banks and none there that nobody does; None where
    it does not say."""
    match_clause: ClassVar[str]
    deal_clause: ClassVar[str]

    _registry: ClassVar[dict[str, type[Ruleset]]] = {}
    _house_ways: ClassVar[dict[tuple[Tile, ...], HouseWay]]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "id" in cls.__dict__:
            Ruleset._registry[cls.id] = cls
            cls._house_ways = {}

    def __repr__(self) -> str:
        return f"find_ruleset({self.id!r})"

    def house_way(self, tiles: Iterable[Tile]) -> HouseWay:
        """How the house sets these four tiles, and the clause that says so."""
        draw = tuple(sorted(tiles))
        validate_draw(draw)
        # The verdict depends only on the faces, so each of the 8,130 distinct draws is
        # worked out once per rule book and then looked up.
        known = self._house_ways.get(draw)
        if known is None:
            chooser = Chooser(self.id, draw)
            if not chooser.settled:
                self._set(chooser)
            known = self._house_ways[draw] = chooser.verdict()
        return known

    def check_setting(self, observed: Setting) -> HouseWayCheck:
        """Was the observed setting the house way? If not, what was expected and why."""
        expected = self.house_way(observed.tiles)
        return HouseWayCheck(
            self.id, observed, expected.setting, expected.accepts(observed), expected.clause
        )

    def match(self, player: Setting, bank: Setting) -> Match:
        """The player's result against the bank's set hand."""
        return combine(player, bank, self.match_clause)

    def _set(self, chooser: Chooser) -> None:
        raise NotImplementedError


def find_ruleset(ruleset_id: str) -> Ruleset:
    """The rule book with this id (`nz-1998`, `act-2005`, `rws-2018`, `mbs-2020`)."""
    import rules.rulebooks  # noqa: F401  (defines the rule books)

    try:
        return Ruleset._registry[ruleset_id]()
    except KeyError:
        known = ", ".join(sorted(Ruleset._registry))
        raise UnknownRulesetError(f"unknown ruleset {ruleset_id!r}; known: {known}") from None


def ruleset_ids() -> list[str]:
    import rules.rulebooks  # noqa: F401

    return sorted(Ruleset._registry)


# Helpers the rule books share. ---------------------------------------------------------------


def pair_family(pair: tuple[Tile, Tile]) -> str:
    """The name the split tables use for a pair: `Teen or Day`, `Nines`, `Eights`, ..."""
    tile = pair[0]
    if tile.is_gee_joon:
        return "Gee Jun"
    if str(tile) in ("6-6", "1-1"):
        return "Teen or Day"
    return {9: "Nines", 8: "Eights", 7: "Sevens"}.get(tile.points, "other")


def others(tiles: Sequence[Tile], pair: tuple[Tile, Tile]) -> list[Tile]:
    rest = list(tiles)
    for tile in pair:
        rest.remove(tile)
    return rest


def listed(
    rest: Sequence[Tile], entries: Sequence[tuple[str, ...]], *, gee_joon_counts: bool
) -> bool:
    """Are the tiles one of the listed combinations (`("9", "11")`, ...)?"""
    return any(
        Tokens.assign(entry, rest, gee_joon_counts=gee_joon_counts) is not None for entry in entries
    )


def pair_kept(setting: Setting, pairs: Sequence[tuple[Tile, Tile]]) -> bool:
    return all(together(setting, *pair) for pair in pairs)


def split_not_weaker(chooser: Chooser, pair: tuple[Tile, Tile]) -> bool:
    """Splitting must not leave a weaker low hand than keeping the pair (ACT 10.1(a))."""
    kept = [s for s in chooser.candidates if together(s, *pair)]
    split = [s for s in chooser.candidates if is_split(s, pair)]
    if not kept or not split:
        return bool(split)
    return max(s.low.strength for s in split) >= max(s.low.strength for s in kept)


def reaches(setting: Setting, low: Strength, high: Strength) -> bool:
    return setting.low.strength >= low and setting.high.strength >= high


def has_special(setting: Setting) -> bool:
    """A wong, gong or high nine in either hand."""
    return any(plays(setting, kind) for kind in (HandKind.WONG, HandKind.GONG, HandKind.HIGH_NINE))


def play_first_kind(
    chooser: Chooser,
    clause: Clause,
    kinds: Sequence[HandKind],
    *,
    low_at_least: Strength | None = None,
    in_high_hand: bool = False,
) -> bool:
    """Keep the settings that play the first kind in `kinds` any setting can play."""
    for kind in kinds:

        def prefer(setting: Setting, kind: HandKind = kind) -> bool:
            placed = setting.high.kind is kind if in_high_hand else plays(setting, kind)
            return placed and (low_at_least is None or setting.low.strength >= low_at_least)

        if chooser.keep(clause, prefer):
            return True
    return False


def highest_tile(chooser: Chooser) -> Tile:
    return top_tiles(chooser.tiles, 1)[0]


def two_highest_apart(setting: Setting, tiles: Sequence[Tile]) -> bool:
    first, second = top_tiles(tiles, 2)
    return not together(setting, first, second)
