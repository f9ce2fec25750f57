"""Marina Bay Sands Pai Gow Tiles v3 (2020) Appendix C, and Resorts World Sentosa v2 (2018)
Appendix C, whose house way is the same text with its own clause numbers."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rules.hands import HandKind, Setting
from rules.houseway import (
    Chooser,
    Clause,
    Tokens,
    count,
    in_high,
    in_low,
    is_split,
    pairs_in,
    plain_points,
    points_at_least,
    together,
)
from rules.rulesets import (
    CHONG_3,
    Ruleset,
    has_special,
    highest_tile,
    listed,
    others,
    pair_family,
    pair_kept,
    play_first_kind,
    reaches,
    split_not_weaker,
)
from rules.tiles import Tile

__all__ = ["MBS2020", "RWS2018"]

P = points_at_least
HIGH_NINE_FIRST = (HandKind.HIGH_NINE, HandKind.GONG, HandKind.WONG)
WONG_FIRST = (HandKind.WONG, HandKind.GONG, HandKind.HIGH_NINE)

# (combination, what to play, how to recognise it among the settings)
Assignment = dict[str, Tile]
ListedException = tuple[tuple[str, ...], str, Callable[[Setting, Assignment], bool]]

EXCEPTIONS: tuple[ListedException, ...] = (
    (("Teen", "Low 4", "8", "9"), "Teen, Low 4, 8 and 9: play 3 & Gong",
     lambda s, a: together(s, a["Teen"], a["8"])),
    (("Teen", "Day", "6", "4|5"), "Teen, Day, 6 with 4 or 5: Teen in the high hand",
     lambda s, a: in_high(s, a["Teen"])),
    (("Teen/Day", "5", "6", "Gee"), "Teen or Day, 5, 6 and Gee: play 7 & 9, not 8 & 8",
     lambda s, a: plain_points(s) == (7, 9)),
    (("High 4", "Low 4", "5", "7|Low 8"), "High 4, Low 4, 5 with 7 or Low 8: play 1 (2) & High 9",
     lambda s, a: together(s, a["High 4"], a["5"])),
    (("High 4", "Low 4", "5", "9|Gee"), "High 4, Low 4, 5 with 9 or Gee: High 3 (High 7) & 9",
     lambda s, a: together(s, a["High 4"], a["9|Gee"])),
    (("High 4", "High 8", "Low 8", "6|7"), "High 4, High 8, Low 8 with 6 or 7: High 8 high",
     lambda s, a: in_high(s, a["High 8"])),
    (("Low 4", "High 8", "Low 8", "9"), "Low 4, High 8, Low 8 and 9: play 2 & High 7",
     lambda s, a: together(s, a["High 8"], a["9"])),
    (("5", "High 6", "Low 6", "11"), "5, High 6, Low 6 and 11: play 1 & High 7",
     lambda s, a: together(s, a["High 6"], a["11"])),
    (("High 6", "High 10", "Low 10", "7|Low 8|9"),
     "High 6, High 10, Low 10 with 7, Low 8 or 9: High 10 in the high hand",
     lambda s, a: in_high(s, a["High 10"])),
    (("7", "High 8", "High 10", "11"), "7, High 8, High 10 and 11: play 7 & 9",
     lambda s, a: plain_points(s) == (7, 9)),
    (("9", "High 10", "Low 10", "11"), "9, High 10, Low 10 and 11: play 1 & High 9",
     lambda s, a: together(s, a["9"], a["High 10"])),
)  # fmt: skip

EXCEPTION_INDEX = Tokens.index(tuple(e[0] for e in EXCEPTIONS), gee_joon_counts=False)

# Pair family -> (row of the split table, summary, does this split qualify?)
SplitTest = Callable[[Setting, list[Tile]], bool]
SPLITS: dict[str, tuple[int, str, SplitTest]] = {
    "Gee Jun": (1, "split Gee Jun if the other tiles are 6 & 4, 6 & 5 or 6 & 6",
                lambda s, rest: listed(rest, (("6", "4"), ("6", "5"), ("6", "6")),
                                       gee_joon_counts=False)),
    "Teen or Day": (2, "split Teen or Day to make 6 & 8 or better, or with 9 & 11",
                    lambda s, rest: reaches(s, P(6), P(8))
                    or listed(rest, (("9", "11"),), gee_joon_counts=False)),
    "Nines": (3, "split nines to make 9 & 9 or better", lambda s, rest: reaches(s, P(9), P(9))),
    "Eights": (4, "split eights to make 7 & 9, 8 & 8 or better",
               lambda s, rest: reaches(s, P(7), P(9)) or reaches(s, P(8), P(8))),
    "Sevens": (5, "split sevens to make 7 & 7 or better", lambda s, rest: reaches(s, P(7), P(7))),
}  # fmt: skip


class MBS2020(Ruleset):
    id = "mbs-2020"
    title = "Marina Bay Sands, Pai Gow Tiles Game Rules v3 (1 July 2020)"
    source = "mbs-2020-marina-bay-sands-pai-gow-tiles.txt"
    match_clause = "3.17-3.23"
    deal_clause = "3.10, 3.11"
    random_cut = True
    cut_set_up = True
    cut_clause = "3.9"
    off_clause: ClassVar[str | None] = "5.6-5.6.2, 3.12"
    house_box_unwagered: ClassVar[str | None] = "3.25.1"
    house_chung: ClassVar[bool] = False  # 3.24.1: a chung only where there is a Player-Banker
    player_capital: ClassVar[str | None] = "3.26.1"
    cuts: ClassVar[tuple[str, ...] | None] = (
        "yat-dong-dong", "cup-say", "chee-yee", "dai-pin", "jung-quat", "long-tau-fong-may",
        "wui-fung-bank", "foot-say", "harbour-bridge", "ghan-dong-ping-say", "pong-jun",
        "bo-bo-go-sing", "ghan-dong-cup-say", "yat-kai-sum-may", "arn-lok-peng-sar", "tower",
        "china-bank", "chong-wan-sup-lok", "seung-gwai-pak-moon", "gum-un-que",
    )  # fmt: skip
    pairs_ref: ClassVar[str] = "App. C split pairs"
    special_ref: ClassVar[str] = "App. C wongs"
    exceptions_ref: ClassVar[str] = "App. C exceptions"

    def _clause(self, ref: str, number: object, summary: str) -> Clause:
        return Clause(f"{ref} #{number}", summary)

    def _set(self, c: Chooser) -> None:
        self._exceptions(c)
        if c.settled:
            return
        pairs = pairs_in(c.tiles)
        if pairs:
            self._pairs(c, pairs)
            return
        if c.any(has_special):
            self._specials(c)
        self._general(c)

    def _exceptions(self, c: Chooser) -> None:
        number = EXCEPTION_INDEX.get(tuple(sorted(str(t) for t in c.tiles)))
        if number is None:
            return
        combination, summary, prefer = EXCEPTIONS[number]
        found = Tokens.assign(combination, c.tiles, gee_joon_counts=False)
        assert found is not None
        clause = self._clause(self.exceptions_ref, number + 1, summary)
        c.keep(clause, lambda s: prefer(s, found))

    def _pairs(self, c: Chooser, pairs: list[tuple[Tile, Tile]]) -> None:
        for pair in pairs:
            family = pair_family(pair)
            if family not in SPLITS:
                continue
            row, summary, qualifies = SPLITS[family]
            rest = others(c.tiles, pair)
            split = [s for s in c.candidates if is_split(s, pair)]
            if any(qualifies(s, rest) for s in split) and split_not_weaker(c, pair):
                c.keep(self._clause(self.pairs_ref, row, summary), lambda s, p=pair: is_split(s, p))  # type: ignore[misc]
                return
        c.keep(
            self._clause(self.pairs_ref, "-", "a pair not listed for splitting is played together"),
            lambda s: pair_kept(s, pairs),
        )

    def _specials(self, c: Chooser) -> None:
        c.keep(self._clause(self.special_ref, 1, "play High Nine, Gong or Wong"), has_special)
        ordered = self._clause(self.special_ref, 2, "High Nine before Gong before Wong")
        if not play_first_kind(c, ordered, HIGH_NINE_FIRST, low_at_least=CHONG_3):
            fallback = self._clause(
                self.special_ref, 2, "low hand below Chong 3: Wong before Gong before High Nine"
            )
            play_first_kind(c, fallback, WONG_FIRST)
        teen = next((t for t in c.tiles if str(t) == "6-6"), None)
        if teen is not None and any(str(t) == "1-1" for t in c.tiles):
            c.keep(
                self._clause(self.special_ref, 3, "choice of Teen or Day: Teen in the high hand"),
                lambda s: in_high(s, teen),
            )

    def _general(self, c: Chooser) -> None:
        ref = self.special_ref
        if c.any(lambda s: s.low.strength >= CHONG_3):
            close = self._clause(ref, 4, "make the low and high hands as close as possible")
            c.keep(close, lambda s: s.low.strength >= CHONG_3)
            c.best(close, lambda s: count(s.low))
        elif c.any(lambda s: s.high.strength >= P(7)):
            c.best(
                self._clause(ref, "4a", "low hand below Chong 3: increase the high hand"),
                lambda s: count(s.high),
            )
        else:
            c.best(
                self._clause(ref, "4b", "no high hand of 7 or better: balance the hands"),
                lambda s: (-abs(s.high.points - s.low.points), s.low.points),
            )
        top = highest_tile(c)
        if c.candidates[0].low.strength < P(8):
            c.keep(
                self._clause(ref, "4c", "up to 7 & 9: highest-ranking tile in the low hand"),
                lambda s: in_low(s, top),
            )
        else:
            c.keep(
                self._clause(ref, "4d", "8 & 9 or better: highest-ranking tile in the high hand"),
                lambda s: in_high(s, top),
            )


class RWS2018(MBS2020):
    id = "rws-2018"
    title = "Resorts World Sentosa, Pai Gow Game Rules v2 (1 February 2018)"
    source = "rws-2018-resorts-world-sentosa-pai-gow.txt"
    match_clause = "3.5, 3.13"
    deal_clause = "3.7, 3.8"
    random_cut = False
    cut_set_up = False
    cut_clause = "the table's list"
    off_clause = None  # RWS has no "Off" button (3.9 burns the tiles of a box without a bet)
    house_box_unwagered = None  # RWS takes no stand on wagers on the dealer-banker's box
    house_chung = True  # 3.3: "A marker will be used to indicate the Banker"
    player_capital = "3.16"
    cuts = None  # RWS names no cuts: the table's configured cut is accepted as given
    pairs_ref = "App. C 1.2"
    special_ref = "App. C 1.3"
    exceptions_ref = "App. C 1.4"
