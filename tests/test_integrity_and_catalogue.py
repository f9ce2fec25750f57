"""Set integrity, the irregularity catalogue, and the shape of the rules package."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import rules
from rules import CATALOGUE, FULL_SET, Irregularity, SetFault, Severity, check_set, parse_tiles
from tests.conftest import RULESETS, physical_tiles

WHOLE = physical_tiles()
FOREIGN, MISSING, TOO_MANY = SetFault.FOREIGN_TILE, SetFault.MISSING_TILE, SetFault.TOO_MANY_TILES


@pytest.mark.parametrize(
    ("change", "whole_set", "faults"),
    [
        (lambda t: t, True, SetFault.NONE),
        (lambda t: [*t, *parse_tiles(["6-6"])], True, FOREIGN | TOO_MANY),
        (lambda t: [*t[:-1], *parse_tiles(["4-5"])], True, FOREIGN | MISSING),
        (lambda t: t[1:], True, SetFault.MISSING_TILE),
        (lambda t: t[1:], False, SetFault.NONE),
        (lambda t: parse_tiles(["4-5 4-5"]), False, SetFault.FOREIGN_TILE),
        (lambda t: parse_tiles(["6-6 6-6 6-6"]), False, SetFault.FOREIGN_TILE),
        (lambda t: parse_tiles(["6-6 6-6 3-6"]), False, SetFault.NONE),
    ],
)  # fmt: skip
def test_set_integrity(change: object, whole_set: bool, faults: SetFault) -> None:
    tiles = change(list(WHOLE))  # type: ignore[operator]
    report = check_set(tiles, whole_set=whole_set)
    assert report.faults == faults
    assert report.ok is (faults == SetFault.NONE)


def test_integrity_names_the_foreign_and_missing_faces() -> None:
    tiles = [*WHOLE[:-1], *parse_tiles(["4-5"])]
    report = check_set(tiles, whole_set=True)
    assert [str(t) for t, _ in report.foreign] == ["4-5"]
    assert len(report.missing) == 1
    assert "foreign 4-5" in str(report)


@pytest.mark.parametrize("kind", list(Irregularity))
def test_catalogue_gives_every_irregularity_a_severity_and_a_clause_per_rule_book(
    kind: Irregularity,
) -> None:
    info = CATALOGUE[kind]
    assert isinstance(info.severity, Severity)
    assert set(info.clauses) == set(RULESETS)
    assert all(info.clause(r) for r in RULESETS)


def test_integrity_threats_are_critical() -> None:
    for kind in (Irregularity.FOREIGN_TILE, Irregularity.MISSING_TILE, Irregularity.HANDS_SWAPPED):
        assert CATALOGUE[kind].severity is Severity.CRITICAL


def test_public_surface_is_listed_and_present() -> None:
    assert sorted(rules.__all__) == sorted(set(rules.__all__))
    for name in rules.__all__:
        assert hasattr(rules, name), name


def test_rules_imports_only_the_standard_library_and_itself() -> None:
    allowed = set(sys.stdlib_module_names) | {"rules"}
    for path in Path(rules.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"


def test_full_set_is_the_documented_multiset() -> None:
    assert FULL_SET[parse_tiles(["6-6"])[0]] == 2
    assert FULL_SET[parse_tiles(["1-2"])[0]] == 1
