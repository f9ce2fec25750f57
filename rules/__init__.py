"""The Pai Gow tiles domain: tiles, hands, house ways, deal order, cuts, who may
choose them, and irregularities.

Standard library only. `vision/` and `edge/` import this package; it imports neither.

Exceptions, all `ValueError`s raised only for malformed input (verdicts are returned as data):

    InvalidTileError      a tile that is not in the 32-tile set
    InvalidHandError      a hand or setting of the wrong size or shape, or a draw no set can deal
    UnknownRulesetError   a ruleset id we do not encode
    DealError             dice, positions, cuts or cut options that cannot be
"""

from rules.context import (
    Bank,
    BankShown,
    CutChoice,
    CutRegime,
    bank_shown,
    cut_regime,
    house_sets_bank,
    stack_signature,
)
from rules.deal import (
    CUTS,
    Cut,
    CutOptions,
    DealError,
    DeliveryCheck,
    DeliveryOrder,
    Dice,
    Mismatch,
    SetUp,
    find_cut,
    first_position,
    removed_box,
)
from rules.hands import Hand, HandKind, InvalidHandError, Setting, all_settings
from rules.houseway import Clause, HouseWay, HouseWayCheck
from rules.integrity import IntegrityReport, SetFault, check_set
from rules.irregularities import CATALOGUE, Irregularity, IrregularityInfo, Severity
from rules.matching import Match, PartResult, Result
from rules.rulesets import Ruleset, UnknownRulesetError, find_ruleset, ruleset_ids
from rules.tiles import FACES, FULL_SET, InvalidTileError, Suit, Tile, parse_tiles

__all__ = [
    "CATALOGUE",
    "CUTS",
    "FACES",
    "FULL_SET",
    "Bank",
    "BankShown",
    "Clause",
    "Cut",
    "CutChoice",
    "CutOptions",
    "CutRegime",
    "DealError",
    "DeliveryCheck",
    "DeliveryOrder",
    "Dice",
    "Hand",
    "HandKind",
    "HouseWay",
    "HouseWayCheck",
    "IntegrityReport",
    "InvalidHandError",
    "InvalidTileError",
    "Irregularity",
    "IrregularityInfo",
    "Match",
    "Mismatch",
    "PartResult",
    "Result",
    "Ruleset",
    "SetFault",
    "SetUp",
    "Setting",
    "Severity",
    "Suit",
    "Tile",
    "UnknownRulesetError",
    "all_settings",
    "bank_shown",
    "check_set",
    "cut_regime",
    "find_cut",
    "find_ruleset",
    "first_position",
    "house_sets_bank",
    "parse_tiles",
    "removed_box",
    "ruleset_ids",
    "stack_signature",
]
