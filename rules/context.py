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

__all__ = [
    "Bank",
    "BankShown",
    "CutChoice",
    "CutRegime",
    "bank_shown",
    "cut_regime",
    "house_sets_bank",
    "stack_signature",
]


class Bank(Enum):
    """Who holds the bank this round: the chung's box and face say (NZ 3.3(f), ACT 8.11)."""

    HOUSE = "house"
    PLAYER = "player"
    CO_BANK = "co-bank"
    """A player banks with the house: the chung's face reads co-banker (NZ 3.3(f))."""


@dataclass(frozen=True)
class BankShown:
    """Who banks as the table shows it, and the clause that decided; `bank` None where the
    table shows nothing to tell by."""

    bank: Bank | None
    clause: str

    def __str__(self) -> str:
        return f"{self.bank.value if self.bank else 'not shown'} ({self.clause})"


def bank_shown(
    ruleset: Ruleset,
    house_box: int,
    chung: tuple[int, bool] | None,
    wagered: frozenset[int],
    capital: bool | None = None,
) -> BankShown:
    """Who banks, from the chung (its box and whether its face reads co-banker; None where none
    is seen), the boxes seen holding a wager and the centre circle (chips seen there True, seen
    bare False, not watched None). A chung on a player's box, or any chung where the book gives
    the house none, is a player's bank. Where the book lays a player-banker's capital in the
    centre circle (RWS 3.16, MBS 3.26.1), chips there say a player banks, and a bare circle
    while wagers are seen on the boxes that the house does (unless a wager on the house's box
    where the chung would say otherwise). On the house's box, chips say which: the books that
    take no wager there while the house banks (NZ 11.1(b), ACT 7.3, MBS 3.25.1) make chips on
    it a player/banker's wager (NZ 11.2(b)), and wagers elsewhere with none on it the house's
    bank. Nobody seen wagering says nothing: the table may be unseen or empty, or its models
    blind to chips."""
    if chung is not None and chung[1]:
        return BankShown(Bank.CO_BANK, "the chung's co-banker face")
    if chung is not None and not ruleset.house_chung:
        return BankShown(Bank.PLAYER, "a chung only for a player-banker")
    if chung is not None and chung[0] != house_box:
        return BankShown(Bank.PLAYER, "the chung on a player's box")
    circle = ruleset.player_capital
    if circle is not None and capital is not None:
        if capital:
            return BankShown(Bank.PLAYER, f"a player-banker's capital in the centre circle "
                                          f"({circle})")  # fmt: skip
        house_box_agrees = chung is not None if ruleset.house_chung else house_box not in wagered
        if wagered and house_box_agrees:
            return BankShown(Bank.HOUSE, f"wagers and no capital in the centre circle ({circle})")
    unwagered = ruleset.house_box_unwagered
    if unwagered is None or not wagered:
        return BankShown(None, "nothing to tell by")
    if house_box in wagered:
        if chung is None and not ruleset.house_chung:  # a wager there and no chung: either
            return BankShown(None, "a wager on the house's box, no chung")  # one is unseen
        return BankShown(Bank.PLAYER, f"a wager on the banker's box ({unwagered})")
    return BankShown(Bank.HOUSE, f"no wager on the banker's box ({unwagered})")


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
