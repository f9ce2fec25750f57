"""Set integrity: do the tiles seen on the table fit one genuine 32-tile set?"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Flag, auto

from rules.tiles import FULL_SET, Tile

__all__ = ["IntegrityReport", "SetFault", "check_set"]


class SetFault(Flag):
    NONE = 0
    FOREIGN_TILE = auto()
    """More copies of a face than a set holds: a third civil tile or a second military one."""
    MISSING_TILE = auto()
    """A face the whole set should show that never appeared."""
    TOO_MANY_TILES = auto()
    """More than 32 tiles in play."""


@dataclass(frozen=True)
class IntegrityReport:
    faults: SetFault
    tiles_seen: int
    foreign: tuple[tuple[Tile, int], ...]
    """Each over-represented face and how many copies too many."""
    missing: tuple[tuple[Tile, int], ...]
    """Each face short of its copies, and by how many (only for a whole set)."""

    @property
    def ok(self) -> bool:
        return self.faults == SetFault.NONE

    def __str__(self) -> str:
        if self.ok:
            return f"{self.tiles_seen} tiles, all from one genuine set"
        parts = [f"foreign {t} x{n}" for t, n in self.foreign]
        parts += [f"missing {t} x{n}" for t, n in self.missing]
        if SetFault.TOO_MANY_TILES in self.faults:
            parts.append(f"{self.tiles_seen} tiles in play, a set has 32")
        return "; ".join(parts)


def check_set(tiles: Iterable[Tile], *, whole_set: bool) -> IntegrityReport:
    """Check the tiles seen. With `whole_set`, all 32 should be there, so absences count too."""
    seen = Counter(tiles)
    total = sum(seen.values())
    foreign = tuple(sorted((t, n - FULL_SET[t]) for t, n in seen.items() if n > FULL_SET[t]))
    missing: tuple[tuple[Tile, int], ...] = ()
    if whole_set:
        missing = tuple(sorted((t, n - seen[t]) for t, n in FULL_SET.items() if seen[t] < n))
    faults = SetFault.NONE
    if foreign:
        faults |= SetFault.FOREIGN_TILE
    if missing:
        faults |= SetFault.MISSING_TILE
    if total > sum(FULL_SET.values()):
        faults |= SetFault.TOO_MANY_TILES
    return IntegrityReport(faults, total, foreign, missing)
