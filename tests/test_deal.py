"""Dice, first position, the cut catalogue and checking a delivery."""

from __future__ import annotations

import pytest

from rules import (
    CUTS,
    Bank,
    CutChoice,
    DealError,
    DeliveryOrder,
    Dice,
    cut_regime,
    find_cut,
    find_ruleset,
    first_position,
    removed_box,
    stack_signature,
)
from rules.deal import parse_grid
from tests.conftest import FIXTURES, RULESETS


def walk(total: int, banker: int) -> int:
    """Count box by box counter-clockwise from the banker, who is 1 (and 9 and 17)."""
    position = banker
    for _ in range(total - 1):
        position = position % 8 + 1
    return position


@pytest.mark.parametrize("banker", range(1, 9))
@pytest.mark.parametrize("total", range(3, 19))
def test_first_position_counts_from_the_banker(total: int, banker: int) -> None:
    assert first_position(total, banker) == walk(total, banker)


@pytest.mark.parametrize(
    ("total", "banker", "adjust", "first"),
    [(9, 1, 0, 1), (17, 1, 0, 1), (3, 1, 0, 3), (12, 5, 0, 8), (12, 1, 4, 8), (12, 1, -4, 8),
     (3, 1, -4, 7), (18, 8, 4, 5)],
)  # fmt: skip
def test_first_position_examples(total: int, banker: int, adjust: int, first: int) -> None:
    assert first_position(total, banker, adjust) == first


@pytest.mark.parametrize(
    ("throws", "house_box", "off"),
    [([3], 1, 3), ([8], 1, 8), ([10], 1, 2), ([9, 4], 1, 4), ([17, 9, 18], 1, 2), ([12, 5], 4, 5),
     ([12], 8, 4)],
    ids=["3", "8", "10 is 2", "9 names the house: again", "twice again",
         "the co-banker's box: again", "counted from box 1, not the banker's"],
)  # fmt: skip
def test_the_box_removed_counts_from_box_1_and_never_the_house(
    throws: list[int], house_box: int, off: int
) -> None:
    """NZ 12.10, MBS 5.6.1-5.6.2: counted counter-clockwise from box 1, thrown again while the
    throw names the house's box."""
    assert removed_box(throws, house_box) == off


@pytest.mark.parametrize(
    ("throws", "message"),
    [([9, 17], "throw again"), ([2], "3 to 18"), ([19], "3 to 18")],
)
def test_a_box_removed_needs_a_throw_that_names_another(throws: list[int], message: str) -> None:
    with pytest.raises(DealError, match=message):
        removed_box(throws, 1)


@pytest.mark.parametrize(
    ("call", "message"),
    [(lambda: first_position(10, 9), "banker"), (lambda: first_position(10, 1, 3), "adjust"),
     (lambda: Dice.of([1, 2]), "three"), (lambda: Dice.of([1, 2, 7]), "1 to 6"),
     (lambda: Dice.parse("a b c"), "three numbers"), (lambda: find_cut("nope"), "unknown cut"),
     (lambda: CUTS["tower"].options(side="left"), "no side"),
     (lambda: CUTS["cup-say"].options(side="up"), "left or right"),
     (CUTS["harbour-bridge"].grid, "no rule book describes"),
     (lambda: parse_grid("1 2 3"), "32 group numbers"),
     (lambda: parse_grid(" ".join(["1"] * 32)), "exactly four")],
)  # fmt: skip
def test_bad_deal_input_is_a_named_error(call: object, message: str) -> None:
    with pytest.raises(DealError, match=message):
        call()  # type: ignore[operator]


def drawn_grids() -> list[tuple[str, dict[str, str], tuple[tuple[int, ...], ...]]]:
    blocks = (FIXTURES / "cuts" / "mbs-2020.txt").read_text().split("\n\n")
    found = []
    for block in blocks:
        lines = [line for line in block.splitlines() if line and not line.startswith("#")]
        name, *options = lines[0].split()
        rows = tuple(tuple(int(x) for x in row.split()) for row in lines[1:])
        found.append((name, dict(o.split("=") for o in options), rows))
    return found


@pytest.mark.parametrize(("name", "options", "rows"), drawn_grids(), ids=lambda v: str(v)[:24])
def test_mbs_drawn_cuts(
    name: str, options: dict[str, str], rows: tuple[tuple[int, ...], ...]
) -> None:
    cut, implied = find_cut(name)
    assert cut.grid(cut.options(**{**implied, **options})) == rows


@pytest.mark.parametrize("cut_id", [c for c in CUTS if CUTS[c].drawn is not None])
def test_every_option_of_every_cut_deals_each_group_four_tiles(cut_id: str) -> None:
    cut = CUTS[cut_id]
    for options in cut.all_options():
        grid = cut.grid(options)
        assert sorted(g for row in grid for g in row) == sorted(list(range(1, 9)) * 4)


@pytest.mark.parametrize("cut_id", [c for c in CUTS if CUTS[c].defaults.side is not None])
def test_left_is_the_mirror_of_right(cut_id: str) -> None:
    cut = CUTS[cut_id]
    if cut.drawn is None:
        pytest.skip("no published order")
    left, right = cut.grid(cut.options(side="left")), cut.grid(cut.options(side="right"))
    assert left == tuple(tuple(reversed(row)) for row in right)


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_every_cut_a_rule_book_names_is_catalogued(ruleset_id: str) -> None:
    named = find_ruleset(ruleset_id).cuts
    assert named is None or set(named) <= set(CUTS)


def test_every_catalogued_cut_is_named_by_some_rule_book() -> None:
    named = {c for r in RULESETS for c in (find_ruleset(r).cuts or ())}
    assert named == set(CUTS)


def order(cut: str = "cup-say", dice: str = "3 4 5", banker: int = 1) -> DeliveryOrder:
    found = CUTS[cut]
    return DeliveryOrder.build(found, found.options(), Dice.parse(dice), banker)


def observe(delivery: DeliveryOrder) -> dict[tuple[int, int], int]:
    cells = [(layer, stack) for layer in range(4) for stack in range(8)]
    return {cell: delivery.position_of(cell) for cell in cells}


def test_deal_order_positions_and_cells() -> None:
    delivery = order()
    assert delivery.first == 4
    assert delivery.positions == (4, 5, 6, 7, 8, 1, 2, 3)
    assert delivery.position_of((0, 7)) == 4  # group 1: top of the two right-hand stacks
    assert delivery.position_of((3, 0)) == 3  # group 8


def test_a_faithful_delivery_has_no_mismatch() -> None:
    delivery = order()
    check = delivery.check(observe(delivery))
    assert check.ok and check.cells_checked == 32


def test_a_delivery_started_at_the_wrong_position_is_named_as_such() -> None:
    wrong = observe(order(dice="3 4 6"))  # one more pip: everything shifted by one position
    check = order().check(wrong)
    assert len(check.mismatches) == 32
    assert check.wrong_first_position and check.observed_first_position == 5


def test_stacks_out_of_cut_order_are_each_reported() -> None:
    delivery = order()
    seen = observe(delivery)
    seen[(0, 7)], seen[(0, 5)] = seen[(0, 5)], seen[(0, 7)]  # two cells swapped
    check = delivery.check(seen)
    assert {m.cell for m in check.mismatches} == {(0, 7), (0, 5)}
    assert not check.wrong_first_position
    assert "went to position" in str(check.mismatches[0])


def test_a_partial_observation_checks_only_what_was_seen() -> None:
    delivery = order()
    check = delivery.check({(0, 7): 4, (3, 0): 3})
    assert check.ok and check.cells_checked == 2


NZ_CUTS = find_ruleset("nz-1998").cuts
ACT_CUTS = find_ruleset("act-2005").cuts
MBS_CUTS = find_ruleset("mbs-2020").cuts


@pytest.mark.parametrize(
    ("rules", "bank", "table_cuts", "cuts", "clause", "random"),
    [
        # NZ 9.5: a house bank is cut Yat Dong Dong "or such other approved cut as the game
        # supervisor directs" (the table's list)
        ("nz-1998", Bank.HOUSE, (), ("yat-dong-dong",), "9.5", False),
        ("nz-1998", Bank.HOUSE, ("cup-say",), ("yat-dong-dong", "cup-say"), "9.5", False),
        # ACT 8.6: a house bank is always Yat Dong Dong, whatever the table lists
        ("act-2005", Bank.HOUSE, ("cup-say",), ("yat-dong-dong",), "8.6, 8.7", False),
        # NZ 9.5, ACT 8.7: a player/banker or co-banker may choose any approved cut
        ("nz-1998", Bank.PLAYER, (), NZ_CUTS, "9.5", False),
        ("act-2005", Bank.CO_BANK, (), ACT_CUTS, "8.6, 8.7", False),
        # not known who banks: every cut some banker could choose
        ("nz-1998", None, (), NZ_CUTS, "9.5", False),
        # MBS 3.9: any cut of App. D, selected at random by the pit supervisor
        ("mbs-2020", Bank.HOUSE, (), MBS_CUTS, "3.9", True),
        ("mbs-2020", Bank.PLAYER, ("cup-say",), MBS_CUTS, "3.9", True),
        # RWS names no cuts: the table's list, whoever banks
        ("rws-2018", Bank.HOUSE, ("cup-say", "dai-pin"), ("cup-say", "dai-pin"), "the table's list",
         False),
    ],
)  # fmt: skip
def test_cut_regime_per_rule_book(
    rules: str,
    bank: Bank | None,
    table_cuts: tuple[str, ...],
    cuts: tuple[str, ...],
    clause: str,
    random: bool,
) -> None:
    regime = cut_regime(find_ruleset(rules), bank, table_cuts)
    assert (regime.cuts, regime.clause, regime.random) == (cuts, clause, random)


@pytest.mark.parametrize(
    ("rules", "table_cuts", "message"),
    [
        ("rws-2018", (), "rws-2018 names no cuts: the table must list the cuts it deals"),
        ("nz-1998", ("one-stack",), "unknown cut 'one-stack' in the table's list"),
    ],
)
def test_a_cut_regime_that_cannot_be_is_a_named_error(
    rules: str, table_cuts: tuple[str, ...], message: str
) -> None:
    with pytest.raises(DealError, match=message):
        cut_regime(find_ruleset(rules), None, table_cuts)


def choice(cut: str, **options: str) -> CutChoice:
    return CutChoice(cut, CUTS[cut].options(**options))


@pytest.mark.parametrize(
    ("one", "other", "alike"),
    [
        # layers cannot be told apart from above: top or bottom first deal the same stacks
        (choice("chee-yee", layer="top"), choice("chee-yee", layer="bottom"), True),
        # Yat Dong Dong takes stack 8 whole with group 1; Cup Say takes its top half then
        (choice("yat-dong-dong", side="right"), choice("cup-say", side="right"), False),
        (choice("yat-dong-dong", side="right"), choice("yat-dong-dong", side="left"), False),
        (choice("cup-say", layer="top"), choice("cup-say", layer="bottom"), True),
    ],
)
def test_stack_signature_tells_apart_what_a_camera_above_can(
    one: CutChoice, other: CutChoice, alike: bool
) -> None:
    assert (stack_signature(one) == stack_signature(other)) is alike


def test_a_cut_choice_is_written_with_its_options() -> None:
    assert str(choice("cup-say", side="left")) == "cup-say (left, top)"
    assert str(choice("tower")) == "tower"
    assert choice("cup-say", side="left").as_dict() == {"side": "left", "layer": "top"}


@pytest.mark.parametrize(
    ("cut_id", "options", "shown"),
    [
        # App. D: "the first stack of tiles on the right is pushed forward"
        ("yat-dong-dong", {"side": "right"}, "stacks 8 pushed"),
        # "the first two stacks are pushed forward"; Di Chut "pulling the top four tiles of the
        # two protruding stacks back slightly"
        ("cup-say", {"side": "right", "layer": "top"}, "stacks 7 8 pushed"),
        ("cup-say", {"side": "right", "layer": "bottom"},
         "stacks 7 8 pushed, tops of 7 8 pulled back"),
        # "the first stack on the left and the first stack on the right"
        ("chee-yee", {"layer": "top"}, "stacks 1 8 pushed"),
        ("jung-quat", {"layer": "top"}, "stacks 4 5 pushed"),  # "the middle two stacks"
        # "stacks 1, 3, 5 and 7 on the right"; "the first stack and the third stack"
        ("ghan-dong-ping-say", {"side": "right"}, "stacks 2 4 6 8 pushed"),
        ("ghan-dong-cup-say", {"side": "right", "layer": "top"}, "stacks 6 8 pushed"),
        # Fong May: "a diagonal placement of one tile across the lower stack"
        ("long-tau-fong-may", {"side": "left", "end": "tail"},
         "stacks 1 2 3 4 pushed, a tile across"),
        ("long-tau-fong-may", {"side": "left", "end": "head"}, "stacks 5 6 pushed"),
    ],
)  # fmt: skip
def test_each_cut_shows_its_set_up_as_app_d_says(
    cut_id: str, options: dict[str, str], shown: str
) -> None:
    cut = CUTS[cut_id]
    assert str(cut.set_up(cut.options(**options))) == shown
