"""Tiles, two-tile hands and their ranking, against shared/domain/tiles.md."""

from __future__ import annotations

import pytest

from rules import (
    FACES,
    FULL_SET,
    Hand,
    HandKind,
    InvalidHandError,
    InvalidTileError,
    Setting,
    Suit,
    Tile,
)

# (pips, single rank, copies, points, suit) straight from the table in tiles.md
TILE_TABLE = [
    ("6-6", 1, 2, 12, Suit.CIVIL), ("1-1", 2, 2, 2, Suit.CIVIL), ("4-4", 3, 2, 8, Suit.CIVIL),
    ("1-3", 4, 2, 4, Suit.CIVIL), ("5-5", 5, 2, 10, Suit.CIVIL), ("3-3", 6, 2, 6, Suit.CIVIL),
    ("2-2", 7, 2, 4, Suit.CIVIL), ("5-6", 8, 2, 11, Suit.CIVIL), ("4-6", 9, 2, 10, Suit.CIVIL),
    ("1-6", 10, 2, 7, Suit.CIVIL), ("1-5", 11, 2, 6, Suit.CIVIL),
    ("4-5", 12, 1, 9, Suit.MILITARY), ("3-6", 12, 1, 9, Suit.MILITARY),
    ("3-5", 13, 1, 8, Suit.MILITARY), ("2-6", 13, 1, 8, Suit.MILITARY),
    ("3-4", 14, 1, 7, Suit.MILITARY), ("2-5", 14, 1, 7, Suit.MILITARY),
    ("1-4", 15, 1, 5, Suit.MILITARY), ("2-3", 15, 1, 5, Suit.MILITARY),
    ("1-2", 16, 1, 3, Suit.MILITARY), ("2-4", 16, 1, 6, Suit.MILITARY),
]  # fmt: skip


@pytest.mark.parametrize(("pips", "rank", "copies", "points", "suit"), TILE_TABLE)
def test_tile_facts(pips: str, rank: int, copies: int, points: int, suit: Suit) -> None:
    tile = Tile.parse(pips)
    assert (tile.rank, tile.copies, tile.points, tile.suit) == (rank, copies, points, suit)
    assert str(tile) == pips
    assert eval(repr(tile)) == tile


def test_the_set_holds_32_tiles_of_21_faces() -> None:
    assert len(FACES) == 21
    assert sum(FULL_SET.values()) == 32


@pytest.mark.parametrize(
    ("text", "pips"),
    [("5-4", "4-5"), (" 6-6 ", "6-6"), ("teen", "6-6"), ("Day", "1-1"), ("gor", "1-3"),
     ("Ban Tang", "2-2"), ("high 8", "4-4"), ("foo-tau", "5-6")],
)  # fmt: skip
def test_parse_accepts_reversed_pips_and_names(text: str, pips: str) -> None:
    assert str(Tile.parse(text)) == pips


@pytest.mark.parametrize(
    "text",
    ["7-7", "0-1", "6", "six", "", "1-2-3", "chop gow", "gee joon",
     "\uff16-\uff16", "\u0666-\u0666"],
)  # fmt: skip  # full-width and Arabic-Indic digits are digits to Python, not pips
def test_parse_rejects_what_is_not_one_tile(text: str) -> None:
    with pytest.raises(InvalidTileError):
        Tile.parse(text)


# (hand, kind, rank in the pairs/wongs table, points)
HAND_TABLE = [
    ("1-2 2-4", HandKind.PAIR, 1, 9), ("6-6 6-6", HandKind.PAIR, 2, 4),
    ("1-1 1-1", HandKind.PAIR, 3, 4), ("4-4 4-4", HandKind.PAIR, 4, 6),
    ("1-3 1-3", HandKind.PAIR, 5, 8), ("5-5 5-5", HandKind.PAIR, 6, 0),
    ("3-3 3-3", HandKind.PAIR, 7, 2), ("2-2 2-2", HandKind.PAIR, 8, 8),
    ("5-6 5-6", HandKind.PAIR, 9, 2), ("4-6 4-6", HandKind.PAIR, 10, 0),
    ("1-6 1-6", HandKind.PAIR, 11, 4), ("1-5 1-5", HandKind.PAIR, 12, 2),
    ("4-5 3-6", HandKind.PAIR, 13, 8), ("3-5 2-6", HandKind.PAIR, 14, 6),
    ("3-4 2-5", HandKind.PAIR, 15, 4), ("1-4 2-3", HandKind.PAIR, 16, 0),
    ("6-6 4-5", HandKind.WONG, 17, 1), ("6-6 3-6", HandKind.WONG, 17, 1),
    ("1-1 4-5", HandKind.WONG, 18, 1), ("6-6 4-4", HandKind.GONG, 19, 0),
    ("6-6 3-5", HandKind.GONG, 19, 0), ("1-1 2-6", HandKind.GONG, 20, 0),
    ("6-6 1-6", HandKind.HIGH_NINE, 21, 9), ("6-6 2-5", HandKind.HIGH_NINE, 21, 9),
    ("1-1 3-4", HandKind.HIGH_NINE, 22, 9),
    ("4-4 3-5", HandKind.POINTS, None, 6), ("1-3 2-2", HandKind.POINTS, None, 8),
    ("6-6 1-1", HandKind.POINTS, None, 4), ("6-6 1-2", HandKind.POINTS, None, 8),
    ("1-2 1-6", HandKind.POINTS, None, 3), ("2-4 5-5", HandKind.POINTS, None, 6),
    ("1-2 1-4", HandKind.POINTS, None, 8), ("5-5 4-6", HandKind.POINTS, None, 0),
    ("1-1 1-2", HandKind.POINTS, None, 8),
]  # fmt: skip


@pytest.mark.parametrize(("text", "kind", "rank", "points"), HAND_TABLE)
def test_hand_kind_rank_and_points(
    text: str, kind: HandKind, rank: int | None, points: int
) -> None:
    hand = Hand.parse(text)
    assert (hand.kind, hand.rank, hand.points) == (kind, rank, points)
    assert eval(repr(hand)) == hand


def test_table_ranks_order_strength() -> None:
    ranked = sorted((h for h in HAND_TABLE if h[2] is not None), key=lambda h: h[2])
    strengths = [Hand.parse(text).strength for text, *_ in ranked]
    assert strengths == sorted(strengths, reverse=True)
    assert Hand.parse("1-1 3-4").strength > Hand.parse("6-6 4-6").strength  # 22 beats any 9


@pytest.mark.parametrize(
    ("stronger", "weaker"),
    [("6-6 2-3", "1-1 2-3"),  # 7: Teen beats Day
     ("5-5 4-5", "4-6 3-6"),  # 9: Mooy beats Ping
     ("1-3 4-5", "2-2 4-5")],  # 3: Gor beats Bon
)  # fmt: skip
def test_equal_points_decided_by_the_higher_tile(stronger: str, weaker: str) -> None:
    a, b = Hand.parse(stronger), Hand.parse(weaker)
    assert a.points == b.points
    assert a.strength > b.strength


def test_zero_hands_have_no_ranking() -> None:
    zeros = [Hand.parse(text) for text in ("5-5 4-6", "1-3 1-5", "2-2 1-5")]
    assert {h.points for h in zeros} == {0}
    assert len({h.strength for h in zeros}) == 1
    assert Hand.parse("6-6 3-5").strength > zeros[0].strength  # a gong totals 0 but ranks


def test_military_tiles_of_one_rank_tie() -> None:
    assert Hand.parse("4-5 1-3").strength == Hand.parse("3-6 1-3").strength


def test_setting_notation_and_legality() -> None:
    setting = Setting.parse("6-6 3-5 / 2-2 4-5")
    assert str(setting) == "6-6 3-5 / 2-2 4-5"
    assert eval(repr(setting)) == setting
    assert setting.is_legal
    assert not Setting.parse("2-2 4-5 / 6-6 3-5").is_legal


@pytest.mark.parametrize("text", ["6-6 3-5 2-2 4-5", "6-6 / 2-2 4-5", "6-6 3-5 / 2-2 4-5 / 1-1"])
def test_setting_rejects_wrong_shapes(text: str) -> None:
    with pytest.raises(InvalidHandError):
        Setting.parse(text)
