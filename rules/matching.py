"""Matching a player's set hand against the bank's: win, lose or push, part by part."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rules.hands import Hand, Setting

__all__ = ["Match", "PartResult", "Result", "match_part"]


class Result(Enum):
    """The player's result; the bank's is the mirror image."""

    WIN = "win"
    LOSE = "lose"
    PUSH = "push"


class PartResult(Enum):
    PLAYER = "player"
    BANK = "bank"


@dataclass(frozen=True)
class Match:
    """The outcome of one player's hand against the bank, with the reason for each part."""

    result: Result
    high: PartResult
    low: PartResult
    high_reason: str
    low_reason: str
    clause: str

    def __str__(self) -> str:
        return f"{self.result.value} (high: {self.high_reason}; low: {self.low_reason})"


def match_part(player: Hand, bank: Hand) -> tuple[PartResult, str]:
    """Who takes one part. The player must be strictly higher: copies and 0-0 go to the bank."""
    if player.strength > bank.strength:
        return PartResult.PLAYER, f"{player.describe()} beats {bank.describe()}"
    if player.strength < bank.strength:
        return PartResult.BANK, f"{bank.describe()} beats {player.describe()}"
    if player.points == 0 and not player.is_special:
        return PartResult.BANK, "0 against 0 goes to the bank"
    return PartResult.BANK, f"copy ({player.describe()}) goes to the bank"


def combine(player: Setting, bank: Setting, clause: str) -> Match:
    high, high_reason = match_part(player.high, bank.high)
    low, low_reason = match_part(player.low, bank.low)
    if high is low:
        result = Result.WIN if high is PartResult.PLAYER else Result.LOSE
    else:
        result = Result.PUSH
    return Match(result, high, low, high_reason, low_reason, clause)
