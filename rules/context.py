"""A round's context: who banks, and which cuts the rule book lets that round be dealt with.

The rule books differ in who chooses the cut (each book's `house_cut`, `random_cut` and
`cut_clause`). NZ 9.5 and ACT 8.6-8.7: a house bank is cut Yat Dong Dong (NZ: or another
approved cut the game supervisor directs), a player/banker or co-banker may choose any approved
cut. MBS 3.9: the pit supervisor selects any cut of App. D at random, every round. RWS names no
cuts: the table's own list applies. A camera that has not seen who banks must allow every cut
any banker could have chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from rules.deal import CUTS, CutOptions, DealError, Grid
from rules.rulesets import Ruleset

__all__ = ["Bank", "CutChoice", "CutRegime", "cut_regime", "house_sets_bank", "stack_signature"]


class Bank(Enum):
    """Who holds the bank this round: the chung's box and face say (NZ 3.3(f), ACT 8.11)."""

    HOUSE = "house"
    PLAYER = "player"
    CO_BANK = "co-bank"
    """A player banks with the house: the chung's face reads co-banker (NZ 3.3(f))."""


@dataclass(frozen=True)
class CutRegime:
    """The cuts a round may be dealt with, the clause that allows them, and whether the cut is
    drawn at random each round (then a shift's cuts can be tested for randomness)."""

    cuts: tuple[str, ...]
    clause: str
    random: bool = False

    def __str__(self) -> str:
        return f"{', '.join(self.cuts)} ({self.clause})"

    @property
    def checkable(self) -> tuple[str, ...]:
        """The cuts whose delivery order a rule book publishes: the only ones a camera can
        follow (and a simulator deal)."""
        return tuple(cut for cut in self.cuts if CUTS[cut].drawn is not None)


@dataclass(frozen=True)
class CutChoice:
    """One cut with the options it was called with; written `cup-say (right, top)`."""

    cut: str
    options: CutOptions

    def __str__(self) -> str:
        chosen = str(self.options)
        return self.cut if chosen == "no options" else f"{self.cut} ({chosen})"

    @property
    def grid(self) -> Grid:
        return CUTS[self.cut].grid(self.options)

    def as_dict(self) -> dict[str, str]:
        """The options as `table.yaml` and the round record write them: `{"side": "right"}`."""
        return {k: v.value for k, v in vars(self.options).items() if v is not None}


def house_sets_bank(bank: Bank | None) -> bool:
    """Whether the bank's hand must be set the house way. The house's own hand and a co-bank's
    are set by the dealer the house way (NZ 11.1(e), 11.3(e); ACT 9.4-9.5; RWS 3.13; MBS 3.15); a
    player/banker who banks alone sets as they like (NZ 11.2; MBS 3.27; RWS 1 'House Way': on
    request only). Not known (no chung seen, nothing announced): the house, a table's usual
    bank."""
    return bank is not Bank.PLAYER


def cut_regime(ruleset: Ruleset, bank: Bank | None, table_cuts: Sequence[str] = ()) -> CutRegime:
    """Which cuts this round may use. `bank` None: not known (no chung seen), so any cut some
    banker could choose. `table_cuts`: the table's own list, the cuts a supervisor may direct
    for a house bank (NZ 9.5) and the only list where the book names none (RWS)."""
    for cut in table_cuts:
        if cut not in CUTS:
            raise DealError(f"unknown cut {cut!r} in the table's list")
    if ruleset.cuts is None:
        if not table_cuts:
            raise DealError(f"{ruleset.id} names no cuts: the table must list the cuts it deals")
        return CutRegime(tuple(table_cuts), ruleset.cut_clause)
    if bank is Bank.HOUSE and ruleset.house_cut is not None:
        directed = [c for c in table_cuts if c != ruleset.house_cut and c in ruleset.cuts]
        house = (ruleset.house_cut, *(directed if ruleset.house_cut_directed else ()))
        return CutRegime(house, ruleset.cut_clause)
    return CutRegime(ruleset.cuts, ruleset.cut_clause, random=ruleset.random_cut)


Signature = tuple[tuple[tuple[int, int], ...], ...]


def stack_signature(choice: CutChoice | Grid) -> Signature:
    """What a camera above the stacks can tell of a cut (or of a grid as dealt, which may be no
    cut at all): for each group, how many tiles it takes from each stack. Two with one signature
    deal the same blocks from the same stacks, only from other layers, and cannot be told apart
    from above."""
    grid = choice.grid if isinstance(choice, CutChoice) else choice
    return tuple(
        tuple(
            (stack, count)
            for stack in range(len(grid[0]))
            if (count := sum(row[stack] == group for row in grid))
        )
        for group in range(1, 9)
    )
