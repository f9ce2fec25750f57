"""House way: golden examples from each rule book, every draw, and the documented readings."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rules import InvalidHandError, Setting, Tile, all_settings, find_ruleset, parse_tiles
from rules.houseway import TIE_READING
from tests.conftest import FIXTURES, RULESETS


def golden_lines(path: Path) -> list[tuple[str, str, str]]:
    """A golden file's `TILES -> HIGH HIGH / LOW LOW  # CLAUSES` lines, comments skipped."""
    lines = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        left, clauses = line.split("  # ")
        tiles, expected = left.split(" -> ")
        lines.append((tiles, expected, clauses.strip()))
    return lines


def golden_cases() -> list[tuple[str, str, str, list[str]]]:
    return [
        (path.stem, tiles, expected, [c.strip() for c in clauses.split(" > ")])
        for path in sorted((FIXTURES / "house_way").glob("*.txt"))
        for tiles, expected, clauses in golden_lines(path)
    ]


CASES = golden_cases()


@pytest.mark.parametrize(
    ("ruleset_id", "tiles", "expected", "clauses"),
    CASES,
    ids=[f"{c[0]}:{c[1]}" for c in CASES],
)
def test_golden_house_way(ruleset_id: str, tiles: str, expected: str, clauses: list[str]) -> None:
    way = find_ruleset(ruleset_id).house_way(parse_tiles([tiles]))
    wanted = Setting.parse(expected)
    assert Counter(wanted.tiles) == Counter(parse_tiles([tiles])), "fixture line is inconsistent"
    assert way.accepts(wanted), f"engine set {way.setting} by {way.clause}"
    assert way.clause.ref == clauses[-1]
    assert set(clauses[:-1]) <= {c.ref for c in way.trail}


def test_every_rule_book_has_golden_examples() -> None:
    assert {c[0] for c in CASES} == set(RULESETS)


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_every_draw_gets_a_legal_setting_of_its_own_tiles(
    ruleset_id: str, all_draws: list[tuple[Tile, ...]]
) -> None:
    ruleset = find_ruleset(ruleset_id)
    for draw in all_draws:
        way = ruleset.house_way(draw)
        assert way.setting.is_legal, draw
        assert Counter(way.setting.tiles) == Counter(draw)
        assert ruleset.check_setting(way.setting).is_house_way


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_check_setting_rejects_every_other_way_with_the_expected_one(ruleset_id: str) -> None:
    ruleset = find_ruleset(ruleset_id)
    draw = parse_tiles(["6-6 2-2 3-5 4-5"])
    expected = ruleset.house_way(draw)
    others = [s for s in all_settings(draw) if s.signature != expected.setting.signature]
    assert others
    for observed in others:
        check = ruleset.check_setting(observed)
        assert not check.is_house_way
        assert check.expected == expected.setting
        assert check.clause == expected.clause


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_a_draw_no_set_can_deal_is_refused(ruleset_id: str) -> None:
    with pytest.raises(InvalidHandError, match="foreign"):
        find_ruleset(ruleset_id).house_way(parse_tiles(["4-5 4-5 1-1 6-6"]))
    with pytest.raises(InvalidHandError, match="4 tiles"):
        find_ruleset(ruleset_id).house_way(parse_tiles(["6-6 1-1 4-5"]))


# The readings written down in docs/house-way.md, one test each. ---------------------------


def test_reading_gee_joon_counts_as_a_six_in_nz_split_lists() -> None:
    way = find_ruleset("nz-1998").house_way(parse_tiles(["6-6 6-6 4-5 2-4"]))
    assert way.accepts(Setting.parse("6-6 4-5 / 6-6 2-4"))  # Teen Wong / 8
    assert way.clause.ref == "App. 4 2.3 Teen or Day"


@pytest.mark.parametrize(("ruleset_id", "low_ref"), [("mbs-2020", "App. C split pairs #-")])
def test_reading_a_split_never_weakens_the_low_hand(ruleset_id: str, low_ref: str) -> None:
    ruleset = find_ruleset(ruleset_id)
    # Eights with Teen and 9 would "make 7 & Gong", but the pair keeps a Teen Wong low.
    way = ruleset.house_way(parse_tiles(["4-4 4-4 6-6 4-5"]))
    assert way.accepts(Setting.parse("4-4 4-4 / 6-6 4-5"))
    assert way.clause.ref == low_ref
    # Two pairs stay two pairs even where splitting one "makes 9 & 9 or better".
    assert ruleset.house_way(parse_tiles(["6-6 6-6 4-5 3-6"])).accepts(
        Setting.parse("6-6 6-6 / 4-5 3-6")
    )


def test_reading_act_split_guard_applies_to_the_low_hand() -> None:
    # Splitting always lowers the high hand, so the guard of 10.1(a) must mean the low one.
    way = find_ruleset("act-2005").house_way(parse_tiles(["6-6 6-6 4-5 3-6"]))
    assert way.accepts(Setting.parse("6-6 6-6 / 4-5 3-6"))
    assert way.clause.ref == "10.1(a)"


def test_reading_mbs_without_chong_three_plays_wong_before_gong_before_high_nine() -> None:
    way = find_ruleset("mbs-2020").house_way(parse_tiles(["6-6 1-6 4-5 2-2"]))
    assert way.accepts(Setting.parse("6-6 4-5 / 1-6 2-2"))


def test_reading_act_literal_gong_before_wong_without_chong_three() -> None:
    # Teen, 8, 9 and 11: a High Nine is impossible; the Gong leaves 9+11 = 0 and the Wong
    # leaves 8+11 = 9 (Chong 3+), so the first pass already plays the Wong.
    way = find_ruleset("act-2005").house_way(parse_tiles(["6-6 4-4 4-5 5-6"]))
    assert way.accepts(Setting.parse("6-6 4-5 / 4-4 5-6"))
    assert way.clause.ref == "10.1(b)"


@pytest.mark.parametrize("ruleset_id", ["mbs-2020", "rws-2018"])
def test_reading_as_close_as_possible_means_the_stronger_low_hand(ruleset_id: str) -> None:
    # App. C "as close as possible": 4 & 8 is played, not the closer but weaker 1 & 1.
    way = find_ruleset(ruleset_id).house_way(parse_tiles(["1-6 1-3 3-4 2-2"]))
    assert way.accepts(Setting.parse("1-3 2-2 / 1-6 3-4"))


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_final_tie_reading_is_rare(ruleset_id: str, all_draws: list[tuple[Tile, ...]]) -> None:
    ruleset = find_ruleset(ruleset_id)
    tied = [d for d in all_draws if ruleset.house_way(d).clause == TIE_READING]
    assert len(tied) < 0.05 * len(all_draws)


@pytest.mark.parametrize(
    ("ruleset_id", "draw", "stronger_low", "weaker_low"),
    [
        # App. C wongs #1 ("play High Nine, Gong or Wong") leaves two gongs: 6-6 with 3-5 or
        # with 4-4. The lows left, 4-4 1-3 and 1-3 3-5, are both 2 points; 4-4 outranks 3-5,
        # so at equal points the first is the stronger low (its highest tile decides).
        ("mbs-2020", "6-6 4-4 1-3 3-5", "6-6 3-5 / 4-4 1-3", "6-6 4-4 / 1-3 3-5"),
        ("rws-2018", "6-6 4-4 2-2 2-6", "6-6 2-6 / 4-4 2-2", "6-6 4-4 / 2-2 2-6"),
        # 10.1(b) leaves two high nines: 6-6 with 3-4 or with 1-6. The lows, 1-6 1-5 and
        # 1-5 3-4, are both 3 points; 1-6 (high seven) outranks 3-4 (a mixed seven).
        ("act-2005", "6-6 1-6 1-5 3-4", "6-6 3-4 / 1-6 1-5", "6-6 1-6 / 1-5 3-4"),
        ("act-2005", "6-6 1-6 3-6 2-5", "6-6 2-5 / 1-6 3-6", "6-6 1-6 / 3-6 2-5"),
    ],
)
def test_final_tie_reading_plays_the_stronger_low(
    ruleset_id: str, draw: str, stronger_low: str, weaker_low: str
) -> None:
    """Where every clause leaves two settings of different worth, the stronger low hand is
    played (docs/house-way.md#final-tie): the two readings differ on each of these draws."""
    way = find_ruleset(ruleset_id).house_way(parse_tiles([draw]))
    assert way.clause == TIE_READING
    assert str(way.setting) == stronger_low
    strong, weak = (Setting.parse(text) for text in (stronger_low, weaker_low))
    assert strong.low.strength > weak.low.strength
    assert strong.low.points == weak.low.points  # the tie the reading breaks


def test_fixture_files_cover_each_split_line_and_exception() -> None:
    refs = {c[3][0] for c in CASES} | {r for c in CASES for r in c[3]}
    for n in range(1, 12):
        assert f"App. C exceptions #{n}" in refs
        assert f"App. C 1.4 #{n}" in refs
    for letter in "abcdefghi":
        assert f"10.2({letter})" in refs
    for n in range(1, 6):
        assert f"App. C split pairs #{n}" in refs
    assert Path(FIXTURES / "house_way" / "nz-1998.txt").exists()


def fixture_round_readings() -> list[tuple[str, str, str, str, str]]:
    """Each fixture round's hands with the setting read from the rule text by hand
    (tests/fixtures/rounds/<round>/house_way.txt), so the rounds' truth.json is checked against
    something the engine did not write."""
    cases = []
    for path in sorted((FIXTURES / "rounds").glob("*/house_way.txt")):
        for placed, expected, clause in golden_lines(path):
            position, tiles = placed.split(": ")
            cases.append((path.parent.name, position, tiles, expected, clause))
    return cases


READINGS = fixture_round_readings()


def test_every_fixture_round_hand_has_a_reading_from_the_rule_text() -> None:
    rounds = sorted(p.name for p in (FIXTURES / "rounds").iterdir() if p.is_dir())
    for name in rounds:
        truth = json.loads((FIXTURES / "rounds" / name / "truth.json").read_text())
        assert {c[1] for c in READINGS if c[0] == name} == set(truth["hands"]), name


@pytest.mark.parametrize(
    ("round_name", "position", "tiles", "expected", "clause"),
    READINGS,
    ids=[f"{c[0]}:{c[1]}" for c in READINGS],
)
def test_fixture_round_truth_agrees_with_the_rule_text(
    round_name: str, position: str, tiles: str, expected: str, clause: str
) -> None:
    truth = json.loads((FIXTURES / "rounds" / round_name / "truth.json").read_text())
    hand = truth["hands"][position]
    read = Setting.parse(expected)
    dealt_tiles = Counter(parse_tiles(hand["tiles"]))
    assert dealt_tiles == Counter(parse_tiles([tiles])) == Counter(read.tiles)
    recorded = Setting.parse(hand["house_way_setting"])
    assert recorded.signature == read.signature, f"truth says {recorded}, the rule text {read}"
    dealt = Setting.parse(f"{' '.join(hand['high'])} / {' '.join(hand['low'])}")
    assert hand["house_way"] == (dealt.signature == read.signature)
    way = find_ruleset(truth["rules"]).house_way(parse_tiles([tiles]))
    assert way.clause.ref == clause, f"engine decided by {way.clause.ref}"
