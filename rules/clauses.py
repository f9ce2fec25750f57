"""What the clauses an alert cites say, so a reviewer reads the rule beside its number.

The texts are the rule books' own words, extracted once from `../shared/regulations` into
`clauses.json` by `scripts/extract_clauses.py` (only the clauses the catalogue cites).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

__all__ = ["CLAUSES_FILE", "clause_texts", "split_refs"]

CLAUSES_FILE = Path(__file__).with_name("clauses.json")
_RANGE = re.compile(r"(\d+(?:\.\d+)+)-(\d+(?:\.\d+)+)")


def split_refs(clause: str) -> list[str]:
    """A citation's references: '9.9, 10.1, 12.13' -> ['9.9', '10.1', '12.13']. A citation
    that carries its own words ('App. 4 2.2: never split fours ...') or says the book is
    silent names nothing to look up."""
    if clause.startswith("not addressed") or ":" in clause:
        return []
    return [ref.strip() for ref in clause.split(",") if ref.strip()]


@cache
def _texts() -> dict[str, dict[str, str]]:
    texts: dict[str, dict[str, str]] = json.loads(CLAUSES_FILE.read_text(encoding="utf-8"))
    return texts


def _key(number: str) -> tuple[int, ...]:
    return tuple(int(part) for part in number.split("."))


def clause_texts(ruleset_id: str, clause: str) -> list[tuple[str, str]]:
    """(number, text) for each clause the citation names, a range as the clauses in it, in
    the citation's order; a number without a known text is left out."""
    book = _texts().get(ruleset_id, {})
    found: list[tuple[str, str]] = []
    for ref in split_refs(clause):
        if span := _RANGE.fullmatch(ref):
            low, high = (_key(end) for end in span.groups())
            numbers = [n for n in book if re.fullmatch(r"[\d.]+", n) and low <= _key(n) <= high]
            found += [(n, book[n]) for n in sorted(numbers, key=_key)]
        elif ref in book:
            found.append((ref, book[ref]))
    return found
