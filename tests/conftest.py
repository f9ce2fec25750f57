"""Shared fixtures: the whole 32-tile set and every four-tile draw from it."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from rules import FULL_SET, Tile

FIXTURES = Path(__file__).parent / "fixtures"
RULESETS = ("nz-1998", "act-2005", "rws-2018", "mbs-2020")


def one_line_error(module: str, *args: str) -> str:
    """Run `python3 -m module ARGS` from the repository's root, as a user would, and return the
    line it printed: a bad argument must end it with exit 2 and one line naming the problem."""
    run = subprocess.run([sys.executable, "-m", module, *args], cwd=FIXTURES.parents[1],
                         capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1, run.stderr
    return lines[0]


def physical_tiles() -> list[Tile]:
    return [tile for tile, copies in FULL_SET.items() for _ in range(copies)]


@pytest.fixture(scope="session")
def all_draws() -> list[tuple[Tile, ...]]:
    """All C(32, 4) = 35,960 four-tile draws, counting the two copies of a civil tile apart."""
    return list(itertools.combinations(physical_tiles(), 4))
