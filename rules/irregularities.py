"""The irregularities the product alerts on, with severity and the clause of each rule book."""
# ruff: noqa: E501  (one row of the catalogue per line reads best)

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

__all__ = ["CATALOGUE", "Irregularity", "IrregularityInfo", "Severity"]


class Severity(Enum):
    """How urgently the surveillance room should look; CRITICAL means integrity of the game."""

    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Irregularity(Enum):
    HOUSE_WAY_VIOLATION = "house-way-violation"
    WRONG_FIRST_POSITION = "wrong-first-position"
    WRONG_CUT_ORDER = "wrong-cut-order"
    FOREIGN_TILE = "foreign-tile"
    MISSING_TILE = "missing-tile"
    EXPOSED_TILE_STACKING = "exposed-tile-stacking"
    EXPOSED_TILE_DEALING = "exposed-tile-dealing"
    DICE_NOT_FLAT = "dice-not-flat"
    WRONG_DICE_COUNT = "wrong-dice-count"
    WRONG_HAND_SIZE = "wrong-hand-size"
    HANDS_SWAPPED = "hands-swapped"
    OFF_BOX_PLAYED = "off-box-played"


@dataclass(frozen=True)
class IrregularityInfo:
    kind: Irregularity
    severity: Severity
    description: str
    clauses: Mapping[str, str]
    """Ruleset id -> the clause the irregularity falls under ("not addressed" where silent)."""

    def clause(self, ruleset_id: str) -> str:
        return self.clauses[ruleset_id]


_SILENT = "not addressed by the rule book"


def _info(
    kind: Irregularity, severity: Severity, description: str, clauses: tuple[str, str, str, str]
) -> IrregularityInfo:
    """Clauses in the order nz-1998, act-2005, rws-2018, mbs-2020."""
    books = ("nz-1998", "act-2005", "rws-2018", "mbs-2020")
    return IrregularityInfo(kind, severity, description, dict(zip(books, clauses, strict=True)))


K, S = Irregularity, Severity
CATALOGUE: dict[Irregularity, IrregularityInfo] = {
    info.kind: info
    for info in (
        _info(K.HOUSE_WAY_VIOLATION, S.HIGH, "a hand the house sets was not set the house way",
              ("11.1(e), 12.8, App. 4", "9.4, 9.5, 15.9, 10", "3.13, App. C", "3.15, 5.14, App. C")),
        _info(K.WRONG_FIRST_POSITION, S.HIGH, "the first group went to another position than dice and banker require",
              ("9.9, 10.1, 12.13", "8.11, 8.12, 15.12", "3.7, 5.1.4", "3.10, 3.11, 5.2, 5.7")),
        _info(K.WRONG_CUT_ORDER, S.HIGH, "stacks were delivered out of the cut's order",
              ("9.5, 10.1, 12.13", "8.2, 8.6-8.8, 15.12", "5.1.4", "3.9, App. D, 5.2, 5.7")),
        _info(K.FOREIGN_TILE, S.CRITICAL, "a face seen more often than a set holds it (third civil or second military tile)",
              ("3.3(a), 8.0, 10.15", "2.1-2.3", "2.2", "2.2")),
        _info(K.MISSING_TILE, S.CRITICAL, "a tile of the set never appeared in the round",
              ("3.3(a), 8.0, 10.17", "2.1-2.2", "2.2", "2.2")),
        _info(K.EXPOSED_TILE_STACKING, S.MEDIUM, "a tile was face up while the tiles were stacked",
              ("12.1-12.2", "15.2-15.3", _SILENT, "5.5")),
        _info(K.EXPOSED_TILE_DEALING, S.MEDIUM, "a tile was face up while the tiles were dealt",
              ("12.3-12.4, 12.7", "15.7-15.8", "5.1-5.3", "5.1, 5.5.2")),
        _info(K.DICE_NOT_FLAT, S.MEDIUM, "a die came to rest not lying flat",
              ("9.8", "15.1", _SILENT, _SILENT + " (6.1: referred to the shift manager)")),
        _info(K.WRONG_DICE_COUNT, S.HIGH, "other than three dice were thrown",
              ("3.3(b), 9.4", "2.1", "3.6", "2.3, 3.10")),
        _info(K.WRONG_HAND_SIZE, S.HIGH, "a position holds other than four tiles, two per hand",
              ("1.0 'Hand', 10.1, 10.3(b)", "A 'Hand', 8.2, 8.12", "1 'Low Hand', 3.10", "1.1.8, 1.1.12, 3.11")),
        _info(K.HANDS_SWAPPED, S.CRITICAL, "tiles or hands moved between positions after delivery",
              ("10.8-10.9, 12.15", "14.1-14.2, 15.12", "3.10", "5.7, 5.9")),
        _info(K.OFF_BOX_PLAYED, S.HIGH, "the hand dealt to a box marked \"Off\" was played, not set aside",
              ("3.3(e), 11.1(a), 12.9-12.10", _SILENT, _SILENT + " (3.9: tiles of a box without a bet are burnt)", "3.12, 5.6.1")),
    )
}  # fmt: skip
