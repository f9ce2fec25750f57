"""Casino Canberra Rules of Pai Gow (ACT Notifiable instrument NI2005-72), rule 10 house way."""

from __future__ import annotations

from collections.abc import Callable

from rules.hands import HandKind, Setting, Strength
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
    pair_family,
    pair_kept,
    play_first_kind,
    reaches,
    split_not_weaker,
)
from rules.tiles import Tile

__all__ = ["ACT2005"]

P = points_at_least
HIGH_NINE_FIRST = (HandKind.HIGH_NINE, HandKind.GONG, HandKind.WONG)
GONG_FIRST = (HandKind.GONG, HandKind.WONG, HandKind.HIGH_NINE)
HIGH_NINE: Strength = (1, 1, 0)
"""Day High Nine, the lowest of the wongs, gongs and high nines."""

Assignment = dict[str, Tile]


# (letter, combinations, summary, preferred setting, extra condition on the tiles)
EXCEPTIONS: tuple[
    tuple[str, tuple[tuple[str, ...], ...], str, Callable[[Setting, Assignment], bool]], ...
] = (
    ("a", (("Teen", "Teen", "9", "11"), ("Day", "Day", "9", "11")),
     "Teen, Teen, 9, 11 or Day, Day, 9, 11: set 3-Wong",
     lambda s, a: s.high.kind is HandKind.WONG and s.low.points == 3),
    ("b", (("High 8", "High 10", "11", "7"),), "high 8, high 10 and 11 with any 7: set 7-9",
     lambda s, a: plain_points(s) == (7, 9)),
    ("c", (("Gee", "6", "5", "Teen/Day"),), "Gee Jun, 6, 5 and Teen or Day: set 7-9",
     lambda s, a: plain_points(s) == (7, 9)),
    ("d", (("Gee", "4", "5", "any"),), "Gee Jun, 4, 5 and a non-pairing tile: 4 and 5 high",
     lambda s, a: in_high(s, a["4"]) and in_high(s, a["5"])),
    ("e", (("High 8", "Low 8", "9", "Low 10"),), "high 8, low 8, 9 and low 10: high 8 low",
     lambda s, a: in_low(s, a["High 8"])),
    ("f", (("High 6", "Low 6", "Gee", "7"),), "high 6, low 6 and Gee Jun with any 7: high 6 low",
     lambda s, a: in_low(s, a["High 6"])),
    ("g", (("Teen/Day", "8", "9", "Low 4"),), "Teen or Day, 8, 9 and low 4: set 3-Gong",
     lambda s, a: s.high.kind is HandKind.GONG and s.low.points == 3),
    ("h", (("High 6", "11", "Low 6", "5"),), "high 6, 11, low 6 and 5: high 6 in the high hand",
     lambda s, a: in_high(s, a["High 6"])),
    ("i", (("High 8", "9", "Low 8", "Low 4"),), "high 8, 9, low 8 and low 4: high 8 high",
     lambda s, a: in_high(s, a["High 8"])),
)  # fmt: skip

FLAT_EXCEPTIONS = [
    (letter, combination, summary, prefer)
    for letter, combinations, summary, prefer in EXCEPTIONS
    for combination in combinations
]
EXCEPTION_INDEX = Tokens.index(tuple(e[1] for e in FLAT_EXCEPTIONS), gee_joon_counts=False)

SPLITS: dict[str, tuple[str, str, Callable[[Setting], bool]]] = {
    "Teen or Day": ("10.1(a)(i)", "split Teen or Day to make 6-8 or higher",
                    lambda s: reaches(s, P(6), P(8))),
    "Nines": ("10.1(a)(ii)", "split nines to make 9-9 or higher", lambda s: reaches(s, P(9), P(9))),
    "Eights": ("10.1(a)(iii)", "split eights to make 7-9, 8-8 or higher",
               lambda s: reaches(s, P(7), P(9)) or reaches(s, P(8), P(8))),
    "Sevens": ("10.1(a)(iv)", "split sevens to make 7-High Nine or higher",
               lambda s: reaches(s, P(7), HIGH_NINE)),
}  # fmt: skip

PAIRS_TOGETHER = Clause("10.1(a)", "set pairs in the same part of the hand")
SPECIAL_ORDER = Clause("10.1(b)", "High Nine, Gong, Wong in the high part, with a Chong 3+ low")
SPECIAL_FALLBACK = Clause("10.1(b)", "low part below Chong 3: Gong, Wong, High Nine")
MAX_LOW = Clause("10.1(c)", "highest possible point count in the low part (Chong 3 or better)")
MAX_HIGH = Clause("10.1(c)(i)", "low part below Chong 3: highest point count in the high part")
CLOSE = Clause("10.1(c)(ii)", "no 7 in the high part: high and low as close as possible")
TOP_LOW = Clause("10.1(c) tiles (i)", "high part 7 or less: highest-ranking tile in the low part")
TOP_HIGH = Clause(
    "10.1(c) tiles (ii)", "high part 8 or more: highest-ranking tile in the high part"
)
CHONG_APART = Clause("10.1(c) tiles (iii)", "do not set two Chong-or-higher tiles together")


class ACT2005(Ruleset):
    id = "act-2005"
    title = "Casino Canberra, Rules of Pai Gow (ACT NI2005-72)"
    source = "act-2005-casino-canberra-pai-gow.txt"
    match_clause = "11.1-11.6"
    deal_clause = "8.11, 8.12"
    house_cut = "yat-dong-dong"
    cut_clause = "8.6, 8.7"
    house_box_unwagered = "7.3"
    cuts = (
        "yat-dong-dong", "cup-say", "foot-say", "chee-yee", "long-tau-fong-may", "dai-pin",
        "pong-jun", "wui-fung-bank", "china-bank", "jung-quat", "parliament-house",
        "seung-gwai-pak-moon", "bo-bo-go-sing", "gum-un-que", "ghan-dong-ping-say",
        "chong-wan-sup-lok", "yat-kai-sum-may", "ghan-dong-cup-say", "telstra-tower",
        "arn-lok-peng-sar",
    )  # fmt: skip

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
        letter, combination, summary, prefer = FLAT_EXCEPTIONS[number]
        if letter == "d" and pairs_in(c.tiles):
            return  # (d) asks for a fourth tile that makes no pair
        found = Tokens.assign(combination, c.tiles, gee_joon_counts=False)
        assert found is not None
        c.keep(Clause(f"10.2({letter})", summary), lambda s: prefer(s, found))

    def _pairs(self, c: Chooser, pairs: list[tuple[Tile, Tile]]) -> None:
        for pair in pairs:
            family = pair_family(pair)
            if family not in SPLITS:
                continue
            ref, summary, qualifies = SPLITS[family]
            split = [s for s in c.candidates if is_split(s, pair)]
            if any(qualifies(s) for s in split) and split_not_weaker(c, pair):
                c.keep(Clause(ref, summary), lambda s, p=pair: is_split(s, p))  # type: ignore[misc]
                return
        c.keep(PAIRS_TOGETHER, lambda s: pair_kept(s, pairs))

    def _specials(self, c: Chooser) -> None:
        # 10.1(b) names the order "in the high part of the hand".
        if not play_first_kind(
            c, SPECIAL_ORDER, HIGH_NINE_FIRST, low_at_least=CHONG_3, in_high_hand=True
        ):
            play_first_kind(c, SPECIAL_FALLBACK, GONG_FIRST, in_high_hand=True)

    def _general(self, c: Chooser) -> None:
        if c.any(lambda s: s.low.strength >= CHONG_3):
            c.keep(MAX_LOW, lambda s: s.low.strength >= CHONG_3)
            c.best(MAX_LOW, lambda s: count(s.low))
        else:
            c.best(MAX_HIGH, lambda s: count(s.high))
            if c.candidates[0].high.strength < P(7):
                c.best(CLOSE, lambda s: (-abs(s.high.points - s.low.points), s.low.points))
        top = highest_tile(c)
        if c.candidates[0].high.strength < P(8):
            c.keep(TOP_LOW, lambda s: in_low(s, top))
        else:
            c.keep(TOP_HIGH, lambda s: in_high(s, top))
        strong = [t for t in c.tiles if t.rank <= 6]
        if len(strong) >= 2:
            c.keep(
                CHONG_APART, lambda s: not together(s, *sorted(strong, key=lambda t: t.rank)[:2])
            )
