"""Tiles in pip notation and the 32-tile set the rule books assume (see shared/domain/tiles.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

__all__ = [
    "FACES",
    "FULL_SET",
    "InvalidTileError",
    "Suit",
    "Tile",
    "parse_tiles",
]


class InvalidTileError(ValueError):
    """A tile written in a way that names no tile of the set."""


class Suit(Enum):
    CIVIL = "civil"
    MILITARY = "military"


# (pips, single rank, copies, names) in single-rank order; the first name is the one we print.
_FACE_TABLE: tuple[tuple[str, int, int, tuple[str, ...]], ...] = (
    ("6-6", 1, 2, ("Teen", "Heaven", "12")),
    ("1-1", 2, 2, ("Day", "Earth", "2")),
    ("4-4", 3, 2, ("Yun", "Man", "High 8")),
    ("1-3", 4, 2, ("Gor", "Ngor", "Goose", "High 4")),
    ("5-5", 5, 2, ("Mooy", "Flower", "High 10")),
    ("3-3", 6, 2, ("Chong", "Cheong", "Cheong Sum", "Long", "High 6")),
    ("2-2", 7, 2, ("Bon", "Ban Tang", "Bench", "Low 4")),
    ("5-6", 8, 2, ("Foo", "Foo Tau", "Hatchet", "11")),
    ("4-6", 9, 2, ("Ping", "Hoong Tau Sap", "Partition", "Low 10")),
    ("1-6", 10, 2, ("Tit", "Ko Kiok Chaat", "Long Leg 7", "High 7")),
    ("1-5", 11, 2, ("Look", "Lim Lum Lok", "Big Head 6", "Low 6")),
    ("4-5", 12, 1, ("Chop Gow", "9")),
    ("3-6", 12, 1, ("Chop Gow", "9")),
    ("3-5", 13, 1, ("Chop Bot", "Chap Paat", "Low 8")),
    ("2-6", 13, 1, ("Chop Bot", "Chap Paat", "Low 8")),
    ("3-4", 14, 1, ("Chop Chit", "Chap Chaat", "Low 7")),
    ("2-5", 14, 1, ("Chop Chit", "Chap Chaat", "Low 7")),
    ("1-4", 15, 1, ("Chop Ng", "5")),
    ("2-3", 15, 1, ("Chop Ng", "5")),
    ("1-2", 16, 1, ("Gee Joon", "Gee Jun")),
    ("2-4", 16, 1, ("Gee Joon", "Gee Jun")),
)

_RANK = {pips: rank for pips, rank, _, _ in _FACE_TABLE}
_COPIES = {pips: copies for pips, _, copies, _ in _FACE_TABLE}
_NAMES = {pips: names for pips, _, _, names in _FACE_TABLE}


def _alias_key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _build_aliases() -> dict[str, tuple[str, ...]]:
    aliases: dict[str, list[str]] = {}
    for pips, _, _, names in _FACE_TABLE:
        for name in names:
            if name.isdigit():
                continue  # "12" or "9" would be mistaken for pip counts
            aliases.setdefault(_alias_key(name), []).append(pips)
    return {key: tuple(faces) for key, faces in aliases.items()}


_ALIASES = _build_aliases()


@dataclass(frozen=True, order=True)
class Tile:
    """One tile face, written by its two pip counts, smaller first (`6-6`, `1-3`)."""

    low_end: int
    high_end: int

    def __post_init__(self) -> None:
        pips = f"{self.low_end}-{self.high_end}"
        if pips not in _RANK:
            raise InvalidTileError(f"no tile {pips!r} in the 32-tile set")
        # Looked up once: rank and text are read in every house-way comparison.
        object.__setattr__(self, "_text", pips)
        object.__setattr__(self, "_rank", _RANK[pips])
        object.__setattr__(self, "_hash", hash((self.low_end, self.high_end)))

    def __hash__(self) -> int:
        value: int = self.__dict__["_hash"]
        return value

    @classmethod
    def parse(cls, text: str) -> Tile:
        """Read pip notation (`4-5`, `5-4`) or an unambiguous name (`teen`, `gor`)."""
        cleaned = text.strip()
        parts = cleaned.split("-")
        if len(parts) == 2 and all(p.strip().isascii() and p.strip().isdigit() for p in parts):
            a, b = sorted(int(p) for p in parts)
            if f"{a}-{b}" not in _RANK:
                raise InvalidTileError(f"unknown tile {text!r}: no such face in the 32-tile set")
            return cls(a, b)
        faces = _ALIASES.get(_alias_key(cleaned))
        if faces is None:
            raise InvalidTileError(f"unknown tile {text!r}: write tiles as pips such as 6-6 or 4-5")
        if len(faces) > 1:
            raise InvalidTileError(
                f"{text!r} names {len(faces)} tiles ({' or '.join(faces)}): write the pips"
            )
        a, b = (int(p) for p in faces[0].split("-"))
        return cls(a, b)

    def __str__(self) -> str:
        text: str = self.__dict__["_text"]
        return text

    def __repr__(self) -> str:
        return f"Tile.parse({str(self)!r})"

    @property
    def pips(self) -> int:
        return self.low_end + self.high_end

    @property
    def points(self) -> int:
        """Face value used for hand totals; Gee Joon may also count as 3 or 6 (see Hand)."""
        return self.pips

    @property
    def rank(self) -> int:
        """Single-tile rank, 1 (Teen) to 16 (Gee Joon); the two military tiles of a rank tie."""
        rank: int = self.__dict__["_rank"]
        return rank

    @property
    def copies(self) -> int:
        """How many of this face a genuine set holds."""
        return _COPIES[str(self)]

    @property
    def suit(self) -> Suit:
        return Suit.CIVIL if self.copies == 2 else Suit.MILITARY

    @property
    def is_gee_joon(self) -> bool:
        return self.rank == 16

    @property
    def name(self) -> str:
        return _NAMES[str(self)][0]

    @property
    def names(self) -> tuple[str, ...]:
        return _NAMES[str(self)]


def parse_tiles(texts: Iterable[str]) -> tuple[Tile, ...]:
    """Parse several tiles; each item may itself hold space-separated tiles."""
    return tuple(Tile.parse(word) for text in texts for word in text.split())


FACES: tuple[Tile, ...] = tuple(Tile.parse(pips) for pips, _, _, _ in _FACE_TABLE)
FULL_SET: Counter[Tile] = Counter({tile: tile.copies for tile in FACES})
"""The genuine 32-tile set as a multiset of faces."""
