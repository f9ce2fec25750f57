"""Shared fixtures: the whole 32-tile set and every four-tile draw from it."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from rules import FULL_SET, Tile

FIXTURES = Path(__file__).parent / "fixtures"
RULESETS = ("nz-1998", "act-2005", "rws-2018", "mbs-2020")


def physical_tiles() -> list[Tile]:
    return [tile for tile, copies in FULL_SET.items() for _ in range(copies)]


@pytest.fixture(scope="session")
def all_draws() -> list[tuple[Tile, ...]]:
    """All C(32, 4) = 35,960 four-tile draws, counting the two copies of a civil tile apart."""
    return list(itertools.combinations(physical_tiles(), 4))
