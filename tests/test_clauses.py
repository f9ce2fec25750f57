"""The clause texts an incident shows beside a clause's number (rules/clauses.json)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rules import CATALOGUE
from rules.clauses import clause_texts, split_refs

ROOT = Path(__file__).resolve().parents[1]
BOOKS = ("nz-1998", "act-2005", "rws-2018", "mbs-2020")


@pytest.mark.parametrize("book", BOOKS)
def test_every_clause_the_catalogue_cites_has_its_text(book: str) -> None:
    for info in CATALOGUE.values():
        citation = info.clause(book)
        found = clause_texts(book, citation)
        numbers = {number for number, _ in found}
        for ref in split_refs(citation):
            assert ref in numbers or "-" in ref, (book, ref)
        assert all(len(text) > 15 for _, text in found), (book, citation)


@pytest.mark.parametrize(
    ("book", "citation", "numbers", "words"),
    [
        ("nz-1998", "9.9, 10.1, 12.13", ["9.9", "10.1", "12.13"], "counter clockwise"),
        ("act-2005", "8.2, 8.6-8.8, 15.12", ["8.2", "8.6", "8.7", "8.8", "15.12"], "Yat Dong Dong"),
        ("rws-2018", "5.1-5.3", ["5.1", "5.1.1", "5.1.2", "5.1.3", "5.1.4", "5.2", "5.3"], "void"),
        ("nz-1998", "11.1(e), 12.8, App. 4", ["11.1(e)", "12.8", "App. 4"], "house way"),
        ("nz-1998", "3.3(a), 8.0, 10.17", ["3.3(a)", "8.0", "10.17"], "order of rank"),
        ("mbs-2020", "not addressed by the rule book (6.1: referred to the shift manager)", [], ""),
        ("nz-1998", "App. 4 2.2: never split fours, fives, sixes, tens or elevens", [], ""),
    ],
)
def test_a_citation_is_read_clause_by_clause(
    book: str, citation: str, numbers: list[str], words: str
) -> None:
    found = clause_texts(book, citation)
    assert [number for number, _ in found] == numbers
    assert words in " ".join(text for _, text in found)


def test_the_clause_texts_are_what_the_rule_books_say_today() -> None:
    """scripts/extract_clauses.py writes the same file from ../shared/regulations."""
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "extract_clauses.py"),
                          "--check"], capture_output=True, text=True, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr or "rules/clauses.json differs: run the script"
