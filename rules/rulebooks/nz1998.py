"""NZ Casino Control Authority, Division 12 Pai Gow (NZ Gazette, 29 January 1998), Appendix 4."""

from __future__ import annotations

from rules.hands import HandKind, Strength
from rules.houseway import (
    Chooser,
    Clause,
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
    Ruleset,
    has_special,
    highest_tile,
    listed,
    others,
    pair_family,
    pair_kept,
    play_first_kind,
    two_highest_apart,
)

P = points_at_least
HARMONY_3: Strength = (0, 3, 17 - 4)
"""App. 4 1: a point count of 3 whose higher tile ranks High 4 (Gor)."""

C = Clause

TWO_PAIRS = C("App. 4 2.1", "with 2 ranking pairs, play the 2 pairs as 2 hands")
NEVER_SPLIT = C("App. 4 2.2", "never split fours, fives, sixes, tens or elevens")
NOT_LISTED = C("App. 4 2.3", "a pair not listed for splitting with these tiles is played together")
# fmt: off
SPLITS: dict[str, tuple[Clause, tuple[tuple[str, str], ...]]] = {
    "Gee Jun": (
        C("App. 4 2.3 Gee Jun", "split Gee Jun with 6 and 6, 6 and 5, 6 and 4"),
        (("6", "6"), ("6", "5"), ("6", "4")),
    ),
    "Teen or Day": (
        C("App. 4 2.3 Teen or Day", "split Teen or Day with 9-11, 9-4..9, 8-4..8, 7-4..7, 6-4..6"),
        (("9", "11"), *((str(a), str(b)) for a in (9, 8, 7, 6) for b in range(a, 3, -1))),
    ),
    "Nines": (
        C("App. 4 2.3 Nines", "split nines with Teen and Day, Teen/Day and 10, 10 and 10"),
        (("Teen", "Day"), ("Teen/Day", "10"), ("10", "10")),
    ),
    "Eights": (
        C(
            "App. 4 2.3 Eights",
            "split eights with Teen and Day, Teen/Day and 11 or 10, 11-10, 11-9, 10-10",
        ),
        (
            ("Teen", "Day"),
            ("Teen/Day", "11"),
            ("Teen/Day", "10"),
            ("11", "10"),
            ("11", "9"),
            ("10", "10"),
        ),
    ),
    "Sevens": (
        C(
            "App. 4 2.3 Sevens",
            "split sevens with Teen and Day, Teen/Day and 11 or 10, 11-10, 10-10",
        ),
        (("Teen", "Day"), ("Teen/Day", "11"), ("Teen/Day", "10"), ("11", "10"), ("10", "10")),
    ),
}
# fmt: on
SPECIAL = C("App. 4 3.1", "if no pair play is possible, play Wong, Gong or High Nine")
SPECIAL_HARMONY = C(
    "App. 4 3.2", "High Nine, Gong, Wong in that order if the low hand is Harmony 3+"
)
SPECIAL_NO_HARMONY = C("App. 4 3.3", "Wong, Gong, High Nine in that order without Harmony 3 low")
MAX_LOW = C("App. 4 4.1", "maximise the low hand's points, providing it is Harmony 3 or better")
MAX_HIGH = C("App. 4 4.2", "no Harmony 3 low: maximise the high hand's points if 8+ is possible")
MAX_LOW_ANYWAY = C("App. 4 4.3", "no high hand of 8 or better: maximise the low hand's points")
TOP_TILE_LOW = C("App. 4 5.1", "low hand 7 or less: highest-ranking tile in the low hand")
TOP_TILE_HIGH = C("App. 4 5.2", "low hand 8 or better: highest-ranking tile in the high hand")
TOP_TWO_APART = C("App. 4 5.1-5.2", "do not play the 2 highest-ranking tiles in the same hand")
STRENGTHEN_HIGH = C("App. 4 5.3", "maximising the high hand: add the highest-ranking tile to it")
TEEN_DAY = C("App. 4 5.4", "Teen and Day apart: Teen high, unless the others are 4/5 or 10/11")
SIX_SEVEN_ELEVEN = C("App. 4 6.1", "6, 7, 11 and a non-pairing tile: maximise the low hand")
SEVEN_NINE = C("App. 4 6.2", "play 7/9 rather than 8/8 unless one tile is Low 10")

HIGH_NINE_FIRST = (HandKind.HIGH_NINE, HandKind.GONG, HandKind.WONG)
WONG_FIRST = (HandKind.WONG, HandKind.GONG, HandKind.HIGH_NINE)
NEVER_SPLIT_RANKS = frozenset({4, 7, 15, 6, 11, 5, 9, 8})  # fours, fives, sixes, tens, elevens


class NZ1998(Ruleset):
    id = "nz-1998"
    title = "NZ Casino Control Authority, Pai Gow (Gazette 29 January 1998)"
    source = "nz-1998-casino-control-authority-pai-gow.txt"
    delivery_adjustment = True
    house_cut = "yat-dong-dong"
    house_cut_directed = True
    cut_clause = "9.5"
    off_clause = "3.3(e), 12.9-12.10"
    off_with_co_bank = True
    house_box_unwagered = "11.1(b)"
    match_clause = "4.2, 6.1, 6.2"
    deal_clause = "9.9, 10.1"
    cuts = (
        "yat-dong-dong", "cup-say", "chee-yee", "dai-pin", "jung-quat", "long-tau-fong-may",
        "wui-fung-bank", "foot-say", "seung-gwai-pak-moon", "pong-jun", "china-bank",
        "harbour-bridge", "bo-bo-go-sing", "gum-un-que", "ghan-dong-ping-say",
        "chong-wan-sup-lok", "yat-kai-sum-may", "ghan-dong-cup-say", "arn-lok-peng-sar",
        "girl-on-the-right-and-left",
    )  # fmt: skip

    def _set(self, c: Chooser) -> None:
        pairs = pairs_in(c.tiles)
        if len(pairs) == 2:
            c.keep(TWO_PAIRS, lambda s: pair_kept(s, pairs))
            return
        if pairs:
            pair = pairs[0]
            family = pair_family(pair)
            rest = others(c.tiles, pair)
            if family in SPLITS and listed(rest, SPLITS[family][1], gee_joon_counts=True):
                c.keep(SPLITS[family][0], lambda s: is_split(s, pair))
            else:
                clause = NEVER_SPLIT if pair[0].rank in NEVER_SPLIT_RANKS else NOT_LISTED
                c.keep(clause, lambda s: pair_kept(s, [pair]))
            return
        if c.any(has_special):
            c.keep(SPECIAL, has_special)
            self._special_order(c)
            self._general(c, exceptions=False)
        else:
            self._general(c, exceptions=True)

    def _special_order(self, c: Chooser) -> None:
        if not play_first_kind(c, SPECIAL_HARMONY, HIGH_NINE_FIRST, low_at_least=HARMONY_3):
            play_first_kind(c, SPECIAL_NO_HARMONY, WONG_FIRST)

    def _general(self, c: Chooser, *, exceptions: bool) -> None:
        maximising_high = False
        if exceptions and listed(c.tiles, (("6", "7", "11", "any"),), gee_joon_counts=True):
            c.best(SIX_SEVEN_ELEVEN, lambda s: count(s.low))
        elif (
            exceptions
            and c.any(lambda s: plain_points(s) == (8, 8))
            and c.any(lambda s: plain_points(s) == (7, 9))
            and not any(str(t) == "4-6" for t in c.tiles)
        ):
            c.keep(SEVEN_NINE, lambda s: plain_points(s) == (7, 9))
        elif c.any(lambda s: s.low.strength >= HARMONY_3):
            c.keep(MAX_LOW, lambda s: s.low.strength >= HARMONY_3)
            c.best(MAX_LOW, lambda s: count(s.low))
        elif c.any(lambda s: s.high.strength >= points_at_least(8)):
            c.best(MAX_HIGH, lambda s: count(s.high))
            maximising_high = True
        else:
            c.best(MAX_LOW_ANYWAY, lambda s: count(s.low))

        teen_day = [t for t in c.tiles if str(t) in ("6-6", "1-1")]
        if len(teen_day) == 2 and all(not together(s, *teen_day) for s in c.candidates):
            teen = next(t for t in teen_day if str(t) == "6-6")
            rest = [t for t in c.tiles if t not in teen_day]
            teen_low = listed(rest, (("4", "5"), ("10", "11")), gee_joon_counts=False)
            c.keep(TEEN_DAY, lambda s: in_low(s, teen) if teen_low else in_high(s, teen))

        top = highest_tile(c)
        if maximising_high:
            c.keep(STRENGTHEN_HIGH, lambda s: in_high(s, top))
        elif c.candidates[0].low.strength < P(8):
            c.keep(TOP_TILE_LOW, lambda s: in_low(s, top))
        else:
            c.keep(TOP_TILE_HIGH, lambda s: in_high(s, top))
        c.keep(TOP_TWO_APART, lambda s: two_highest_apart(s, c.tiles))
