"""Matching a player's hand against the bank's: golden cases and properties over all hands."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import PartResult, Result, Setting, Tile, all_settings, find_ruleset
from tests.conftest import RULESETS, physical_tiles

# (bank, player, player's result) -- each decided by a sentence of the rule books
MATCHES = [
    ("6-6 4-5 / 1-1 1-6", "4-4 4-4 / 5-5 1-6", Result.PUSH),  # pair beats wong; H9 beats 7
    ("4-4 3-5 / 1-3 1-5", "6-6 6-6 / 1-1 1-1", Result.WIN),  # two pairs beat points
    ("6-6 6-6 / 1-1 1-1", "4-4 3-5 / 1-3 1-5", Result.LOSE),
    ("1-3 5-5 / 2-2 1-5", "2-2 5-5 / 1-3 1-5", Result.LOSE),  # 4 vs 4: Gor beats Bon; 0 vs 0
    ("2-2 5-5 / 1-3 1-5", "1-3 5-5 / 2-2 1-5", Result.PUSH),  # high won on tile; 0-0 to bank
    ("6-6 4-5 / 2-2 3-4", "6-6 3-6 / 2-2 3-4", Result.LOSE),  # Teen Wong copy, 1 copy: bank
    ("1-1 3-4 / 1-4 1-5", "1-1 2-5 / 2-3 1-5", Result.LOSE),  # copies both: bank
    ("5-6 4-5 / 1-5 3-6", "6-6 2-5 / 1-1 4-4", Result.WIN),  # high nine, gong
    ("1-2 2-4 / 6-6 1-1", "5-5 5-5 / 4-6 1-3", Result.LOSE),  # Gee Joon pair is the top pair
    ("6-6 1-2 / 1-3 1-3", "6-6 2-5 / 4-4 2-2", Result.PUSH),  # GJ as 6: 8 < high nine
]


@pytest.mark.parametrize("ruleset_id", RULESETS)
@pytest.mark.parametrize(("bank", "player", "result"), MATCHES)
def test_golden_matches(ruleset_id: str, bank: str, player: str, result: Result) -> None:
    match = find_ruleset(ruleset_id).match(Setting.parse(player), Setting.parse(bank))
    assert match.result is result, str(match)
    assert match.clause


def legal_settings(tiles: list[Tile]) -> list[Setting]:
    return [s for s in all_settings(tiles) if s.is_legal]


@st.composite
def two_hands(draw: st.DrawFn) -> tuple[Setting, Setting]:
    """A bank and a player hand dealt from one set, each set any legal way."""
    eight = draw(st.permutations(physical_tiles()))[:8]
    bank = draw(st.sampled_from(legal_settings(eight[:4])))
    player = draw(st.sampled_from(legal_settings(eight[4:])))
    return bank, player


@settings(max_examples=400, deadline=None)
@given(hands=two_hands(), ruleset_id=st.sampled_from(RULESETS))
def test_matching_is_antisymmetric_except_that_ties_go_to_the_bank(
    hands: tuple[Setting, Setting], ruleset_id: str
) -> None:
    bank, player = hands
    ruleset = find_ruleset(ruleset_id)
    forward, backward = ruleset.match(player, bank), ruleset.match(bank, player)
    for part in ("high", "low"):
        mine, theirs = getattr(player, part), getattr(bank, part)
        there, back = getattr(forward, part), getattr(backward, part)
        if mine.strength == theirs.strength:
            assert there is PartResult.BANK and back is PartResult.BANK
        else:
            assert there is not back
    if player.high.strength != bank.high.strength and player.low.strength != bank.low.strength:
        mirror = {Result.WIN: Result.LOSE, Result.LOSE: Result.WIN, Result.PUSH: Result.PUSH}
        assert backward.result is mirror[forward.result]


@settings(max_examples=200, deadline=None)
@given(hands=two_hands(), ruleset_id=st.sampled_from(RULESETS))
def test_a_player_copy_of_the_bank_never_wins(
    hands: tuple[Setting, Setting], ruleset_id: str
) -> None:
    bank, _ = hands
    assert find_ruleset(ruleset_id).match(bank, bank).result is Result.LOSE


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_zero_against_zero_goes_to_the_bank_whatever_the_tiles(ruleset_id: str) -> None:
    zeros = [Setting.parse(f"6-6 6-6 / {z}") for z in ("5-5 4-6", "1-3 1-5", "2-2 1-5")]
    for bank in zeros:
        for player in zeros:
            match = find_ruleset(ruleset_id).match(player, bank)
            assert match.low is PartResult.BANK
