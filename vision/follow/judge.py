"""The one place where what the camera saw becomes `rules/` types and gets judged.

Everything the round follower decides about the game (house way, first position, cut order,
set integrity, outcomes) is asked of `rules/` here, so vision code never re-implements a rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rules import (
    CATALOGUE,
    CUTS,
    DealError,
    DeliveryOrder,
    Dice,
    Hand,
    HouseWayCheck,
    IntegrityReport,
    InvalidHandError,
    Irregularity,
    Setting,
    Tile,
    check_set,
    find_ruleset,
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


class Judge:
    """One rule book's verdicts on what was seen at one table."""

    def __init__(self, rules: str, banker: int, cut: str, cut_options: Mapping[str, str]) -> None:
        self.rules = rules
        self.ruleset = find_ruleset(rules)
        self.banker = banker
        if cut not in CUTS:
            raise DealError(f"unknown cut {cut!r}")
        self.cut = CUTS[cut]
        self.options = self.cut.options(**cut_options)

    def order(self, dice: Sequence[int]) -> DeliveryOrder | None:
        """The delivery the dice require; None when the dice cannot decide it (not three)."""
        try:
            return DeliveryOrder.build(self.cut, self.options, Dice.of(dice), self.banker)
        except DealError:
            return None

    def last_groups(self) -> dict[int, int]:
        """For each stack (0-7), the group that takes its last tiles: once that group is
        delivered the stack must be gone."""
        grid = self.cut.grid(self.options)
        return {stack: max(row[stack] for row in grid) for stack in range(len(grid[0]))}

    def stacks_of(self, group: int) -> set[int]:
        """The stacks (0-7) that group takes tiles from."""
        grid = self.cut.grid(self.options)
        return {stack for stack in range(len(grid[0])) if any(row[stack] == group for row in grid)}

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
