"""The one place where what the camera saw becomes `rules/` types and gets judged.

Everything the round follower decides about the game (house way, first position, cut order,
set integrity, outcomes) is asked of `rules/` here, so vision code never re-implements a rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rules import (
    CATALOGUE,
    CUTS,
    Bank,
    CutChoice,
    DealError,
    Dice,
    Hand,
    HouseWayCheck,
    IntegrityReport,
    InvalidHandError,
    Irregularity,
    Setting,
    Tile,
    check_set,
    cut_regime,
    find_ruleset,
    first_position,
    stack_signature,
)


def is_face(label: str) -> bool:
    """A label naming a tile's face (`4-5`), not `back` or a die."""
    return label != "back" and not label.startswith("die-")


def clause(kind: Irregularity, rules: str) -> str:
    return CATALOGUE[kind].clause(rules)


def severity(kind: Irregularity) -> str:
    return CATALOGUE[kind].severity.value


@dataclass(frozen=True)
class SetHand:
    """A position's exposed tiles as the camera laid them out: the two groups either side of the
    widest gap. `setting` is None when they do not form two hands of two."""

    groups: tuple[tuple[str, ...], tuple[str, ...]]
    setting: Setting | None

    @classmethod
    def of(cls, first: Sequence[str], second: Sequence[str]) -> SetHand:
        groups = (tuple(first), tuple(second))
        if len(first) != 2 or len(second) != 2:
            return cls(groups, None)
        try:
            one = Hand.of(Tile.parse(first[0]), Tile.parse(first[1]))
            other = Hand.of(Tile.parse(second[0]), Tile.parse(second[1]))
        except (InvalidHandError, ValueError):
            return cls(groups, None)
        return cls(groups, Setting.of(one, other))

    @property
    def tiles(self) -> tuple[str, ...]:
        return self.groups[0] + self.groups[1]


@dataclass(frozen=True)
class CutView:
    """The permitted cut choices a camera above the stacks cannot tell apart (one
    `stack_signature`): for each stack the group that takes its last tiles, for each group the
    stacks it takes tiles from."""

    choices: tuple[CutChoice, ...]
    last_groups: dict[int, int]
    """Stack (0-7) -> the group that takes its last tiles: once delivered the stack is gone."""
    stacks: dict[int, set[int]]
    """Group (1-8) -> the stacks (0-7) it takes tiles from."""
    last_alone: frozenset[int]
    """Stacks whose last group takes one tile of them: only there does a stack one tile short
    (a tile missing from the set) go a group early under this cut. Where the last group takes
    two or more, the tiles above the gap leave with their own groups and the last still finds
    one (Yat Dong Dong, Cup Say)."""

    @classmethod
    def of(cls, choices: Sequence[CutChoice]) -> CutView:
        grid = choices[0].grid
        columns = [[row[stack] for row in grid] for stack in range(len(grid[0]))]
        return cls(
            tuple(choices),
            {stack: max(column) for stack, column in enumerate(columns)},
            {
                group: {s for s, column in enumerate(columns) if group in column}
                for group in range(1, 9)
            },
            frozenset(s for s, column in enumerate(columns) if column.count(max(column)) == 1),
        )


def cut_views(choices: Sequence[CutChoice]) -> tuple[CutView, ...]:
    """The choices grouped by what a camera above can tell of them, in the order given."""
    grouped: dict[object, list[CutChoice]] = {}
    for choice in choices:
        grouped.setdefault(stack_signature(choice), []).append(choice)
    return tuple(CutView.of(group) for group in grouped.values())


def permitted_choices(
    rules: str, bank: str | None, table_cuts: Sequence[str]
) -> tuple[CutChoice, ...]:
    """Every cut and option a round at this table may be dealt with (`rules.cut_regime`), for
    the bank the table names (None: any banker's choice). Cuts whose delivery order no rule
    book describes cannot be checked and are left out."""
    regime = cut_regime(find_ruleset(rules), None if bank is None else Bank(bank), table_cuts)
    return tuple(
        CutChoice(cut, options) for cut in regime.checkable for options in CUTS[cut].all_options()
    )


class Judge:
    """One rule book's verdicts on what was seen at one table."""

    def __init__(self, rules: str, banker: int, choices: Sequence[CutChoice]) -> None:
        if not choices:
            raise DealError("no cut to check the delivery against")
        self.rules = rules
        self.ruleset = find_ruleset(rules)
        self.banker = banker
        self.choices = tuple(choices)
        self.views = cut_views(self.choices)

    def first_position(self, dice: Sequence[int], adjust: int = 0) -> int | None:
        """The position the dice require first, with a player/banker's +4 or -4 where the rule
        book offers it (NZ 9.6; a button on a table whose book has no such option changes
        nothing); None when the dice cannot decide it."""
        adjust = adjust if self.ruleset.delivery_adjustment else 0
        try:
            return first_position(Dice.of(dice).total, self.banker, adjust)
        except DealError:
            return None

    def house_way(self, setting: Setting) -> HouseWayCheck:
        return self.ruleset.check_setting(setting)

    def integrity(self, faces: Sequence[str], *, whole_set: bool) -> IntegrityReport:
        tiles = []
        for face in faces:
            try:
                tiles.append(Tile.parse(face))
            except ValueError:
                continue
        return check_set(tiles, whole_set=whole_set)

    def outcome(self, player: Setting, bank: Setting) -> str:
        return self.ruleset.match(player, bank).result.value
