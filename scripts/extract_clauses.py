"""Write rules/clauses.json: the text of every clause the irregularity catalogue cites, taken
from the rule books' texts in ../shared/regulations, so that an incident shows what a clause
says beside its number.

python3 scripts/extract_clauses.py [--check]

--check exits 1 when the committed file differs from what the texts give today (the tests run
it when ../shared is beside the project).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rules import CATALOGUE  # noqa: E402
from rules.clauses import CLAUSES_FILE, split_refs  # noqa: E402

TEXTS = ROOT.parent / "shared" / "regulations"
BOOKS = {
    "nz-1998": "nz-1998-casino-control-authority-pai-gow.txt",
    "act-2005": "act-2005-casino-canberra-pai-gow.txt",
    "rws-2018": "rws-2018-resorts-world-sentosa-pai-gow.txt",
    "mbs-2020": "mbs-2020-marina-bay-sands-pai-gow-tiles.txt",
}
LONGEST = 600
"""Characters kept of a clause: the longest cited one (NZ 10.1) whole, a page never."""

CLAUSE_START = re.compile(r"(?:^\s*(?:-\s+|#+\s*)?\**|\*\*)(\d+(?:\.\d+)+)\s+(?=\S)")
SUB_ITEM = re.compile(r"^\s*-\s+\(([a-z]+)\)\s+(.*)")


def clauses_of(text: str) -> tuple[dict[str, str], list[str], dict[str, dict[str, str]]]:
    """Each numbered clause's text, the numbers in the order they appear, and each clause's
    lettered items ((a), (b), ...) where it has them. A section's own clause ("8.0 Opening of
    Table for Gaming") is its title and the paragraphs under it."""
    texts: dict[str, str] = {}
    order: list[str] = []
    items: dict[str, dict[str, str]] = {}
    current = None
    for line in text.splitlines():
        starts = list(CLAUSE_START.finditer(line))
        if starts:
            last = starts[-1]
            number = last.group(1)
            body = _plain(line[last.end() :])
            if number not in texts:  # the first time a number opens a clause (not a reference)
                texts[number], current = body, number
                order.append(number)
            continue
        item = SUB_ITEM.match(line)
        if item and current is not None:
            items.setdefault(current, {})[item.group(1)] = _plain(item.group(2))
            texts[current] += f" ({item.group(1)}) {_plain(item.group(2))}"
        elif current is not None and current.endswith(".0") and line.strip():
            texts[current] += (": " if ":" not in texts[current] else " ") + _plain(line)
    return texts, order, items


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("**", "").replace("###", "")).strip()


def appendix(text: str, name: str) -> str | None:
    lines = text.splitlines()
    heading = re.compile(rf"^#*\s*\**Appendix\s*[\"“”]?{re.escape(name)}[\"“”]?\**\s*[:\t ]*(.*)$")
    found = [(k, m) for k, line in enumerate(lines) if (m := heading.match(line.strip()))]
    for k, match in found[::-1]:  # the appendix itself, after any table of contents
        title = _plain(match.group(1)).strip(": ")
        if not title:
            title = next((_plain(x) for x in lines[k + 1 : k + 4] if x.strip()), "")
        if title:
            return f"Appendix {name}: {title}"
    return None


def definition(text: str, term: str) -> str | None:
    lines = text.splitlines()
    marks = (f"**{term}**", f'"{term}"', f"“{term}”")
    for k, line in enumerate(lines):
        if any(mark in line for mark in marks):
            if line.lstrip().startswith("#"):  # a heading: the definition is the next line
                body = next((x for x in lines[k + 1 : k + 4] if x.strip()), "")
                return _plain(f"{term}: {body}")
            return _plain(line)
    return None


def section(text: str, number: str) -> str | None:
    match = re.search(rf"^#+\s*{number}\.\s+(.+)$", text, re.MULTILINE)
    return f"Section {number}: {_plain(match.group(1)).capitalize()}" if match else None


def resolve(text: str, ref: str) -> list[tuple[str, str]]:
    """(number, text) for one cited reference: a clause, a lettered item, a range, an
    appendix, a defined term or a section."""
    texts, order, items = clauses_of(text)
    if match := re.fullmatch(r"(\d+(?:\.\d+)+)\(([a-z]+)\)", ref):
        number, letter = match.groups()
        head = texts[number].split(" (a) ")[0]
        return [(ref, f"{head} ({letter}) {items[number][letter]}")]
    if match := re.fullmatch(r"(\d+(?:\.\d+)+)-(\d+(?:\.\d+)+)", ref):
        first, last = match.groups()
        span = order[order.index(first) : order.index(last) + 1]
        return [(number, texts[number]) for number in span]
    if re.fullmatch(r"\d+(?:\.\d+)+", ref):
        return [(ref, texts[ref])]
    if match := re.fullmatch(r"App\. (\w+)", ref):
        found = appendix(text, match.group(1))
        return [(ref, found)] if found else []
    if match := re.fullmatch(r"(?:[\w.]+ )?'([^']+)'", ref):  # "1.0 'Hand'": a defined term
        found = definition(text, match.group(1))
        return [(ref, found)] if found else []
    if re.fullmatch(r"\d+", ref):
        found = section(text, ref)
        return [(ref, found)] if found else []
    return []


def extract() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for book, name in BOOKS.items():
        text = (TEXTS / name).read_text()
        cited = {ref for info in CATALOGUE.values() for ref in split_refs(info.clause(book))}
        found: dict[str, str] = {}
        for ref in sorted(cited):
            resolved = resolve(text, ref)
            if not resolved:
                raise SystemExit(f"{book} {ref}: not found in {name}")
            for number, body in resolved:
                found[number] = body if len(body) <= LONGEST else body[: LONGEST - 1] + "…"
        out[book] = dict(sorted(found.items()))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    if not TEXTS.is_dir():
        print(f"no rule book texts at {TEXTS}", file=sys.stderr)
        return 2
    made = json.dumps(extract(), indent=1, ensure_ascii=False) + "\n"
    if args.check:
        return 0 if CLAUSES_FILE.read_text() == made else 1
    CLAUSES_FILE.write_text(made)
    print(f"{CLAUSES_FILE}: {sum(len(v) for v in json.loads(made).values())} clauses")
    return 0


if __name__ == "__main__":
    sys.exit(main())
