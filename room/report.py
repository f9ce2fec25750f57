"""`paigow report`: a shift report as HTML and PDF, with charts.

Incidents per table and kind, house-way compliance of the bank per table, rounds played, the
dice totals against the fair distribution of three dice (chi-square test with its p-value),
the first-position distribution, and outcomes per position.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import io
import itertools
import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from room.store import Store
from rules import CutRegime, cut_regime, find_ruleset

SIGNIFICANCE = 0.01
"""A chi-square p-value under this flags the dice or the cut draw for review: one honest table
in a hundred is flagged a shift, few enough for a surveillance room to look at each."""
LOOK_TWICE = 0.85
"""Alerts less sure than this are counted apart for a second look: from pixels over 231
simulated rounds the false alerts carried 0.52-0.80 and 95% of the right ones 0.85 or more
(docs/accuracy.md)."""
FAIR = Counter(sum(d) for d in itertools.product(range(1, 7), repeat=3))
"""How many of the 216 throws of three dice give each total, 3 to 18."""


def chi2_sf(x: float, k: int) -> float:
    """P(X >= x) for a chi-square variable with k degrees of freedom (closed forms)."""
    if x <= 0:
        return 1.0
    if k % 2 == 0:
        term = total = math.exp(-x / 2)
        for j in range(1, k // 2):
            term *= (x / 2) / j
            total += term
        return min(total, 1.0)
    total = math.erfc(math.sqrt(x / 2))
    term = math.sqrt(2 * x / math.pi) * math.exp(-x / 2)
    for j in range(1, (k + 1) // 2):
        total += term
        term *= x / (2 * j + 1)
    return min(total, 1.0)


@dataclass(frozen=True)
class DiceTest:
    """Pearson's chi-square of counts against the shares a fair draw gives them."""

    throws: int
    statistic: float
    dof: int
    p_value: float
    bins: list[tuple[str, int, float]]  # label, observed, expected


def pearson(counts: list[tuple[str, int]], shares: list[float]) -> DiceTest | None:
    """Pearson's chi-square of the counts (in a fixed order) against their shares; neighbours
    are pooled until every bin expects at least 5, the rule of thumb for the test to hold."""
    n = sum(count for _, count in counts)
    bins: list[tuple[list[int], float]] = []
    current: list[int] = []
    expected = 0.0
    for index, share in enumerate(shares):
        current.append(index)
        expected += n * share
        if expected >= 5:
            bins.append((current, expected))
            current, expected = [], 0.0
    if current:
        if bins:
            last, e = bins.pop()
            bins.append((last + current, e + expected))
        else:
            bins.append((current, expected))
    if len(bins) < 2:
        return None
    rows = []
    statistic = 0.0
    for members, e in bins:
        observed = sum(counts[k][1] for k in members)
        statistic += (observed - e) ** 2 / e
        head, tail = counts[members[0]][0], counts[members[-1]][0]
        rows.append((head if len(members) == 1 else f"{head}-{tail}", observed, e))
    dof = len(bins) - 1
    return DiceTest(n, statistic, dof, chi2_sf(statistic, dof), rows)


def dice_fairness(totals: list[int]) -> DiceTest | None:
    """The totals of three dice against three fair dice, neighbouring totals pooled."""
    if len(totals) < 10:
        return None
    seen = Counter(totals)
    return pearson([(str(t), seen[t]) for t in range(3, 19)], [FAIR[t] / 216 for t in range(3, 19)])


CUTS_TESTED_FROM = 10
"""Rounds a table needs before its cuts are tested: fewer cannot make two bins of 5."""


def _random_draw(rules: str) -> CutRegime | None:
    """The cuts a table draws at random from, where its rule book says so (MBS 3.9)."""
    book = find_ruleset(rules)
    return cut_regime(book, None) if book.random_cut and book.cuts is not None else None


def cut_randomness(cuts: list[str], permitted: tuple[str, ...]) -> DiceTest | None:
    """A shift's cuts against a uniform draw from the rule book's list (MBS 3.9: the pit
    supervisor selects the cut at random every round), neighbours in the book's order pooled.
    `permitted`: the cuts a box can name (`CutRegime.checkable`); a round dealt with any other
    is no draw the box saw (it is alerted on or left undecided), so it is left out."""
    drawn = [cut for cut in cuts if cut in permitted]
    if len(drawn) < CUTS_TESTED_FROM:
        return None
    seen = Counter(drawn)
    return pearson([(cut, seen[cut]) for cut in permitted], [1 / len(permitted)] * len(permitted))


@dataclass
class Shift:
    since: float
    until: float
    table: str | None
    rounds: int
    alerts_by_table_kind: dict[str, Counter[str]]
    compliance: dict[str, tuple[int, int]]  # table -> (bank hands set the house way, judged)
    dice: DiceTest | None
    dice_totals: list[int]
    first_positions: Counter[int]
    outcomes: dict[int, Counter[str]]
    severities: Counter[str]
    statuses: Counter[str]
    unsure: tuple[int, int]  # alerts under `LOOK_TWICE`, and how many of them are still new
    incidents: list[Incident]
    tables: list[TableLine]


@dataclass(frozen=True)
class Incident:
    """One alert of the shift as the report lists it, with the decision taken on it."""

    received_at: float
    table_id: str
    position: int | None
    kind: str
    severity: str
    summary: str
    status: str
    decided: str
    """Who decided, and their note: the newest decision in the audit log, or empty."""


@dataclass(frozen=True)
class TableLine:
    """One table's shift: rounds, alerts, the bank's house way, the cuts dealt, the dice."""

    table_id: str
    rounds: int
    alerts: int
    house_way: tuple[int, int]
    cuts: Counter[str]
    dice_mean: float | None
    """Mean total of three dice (fair: 10.5)."""
    bankers: Counter[int]
    """The boxes the bank was held at, round by round."""
    cut_test: DiceTest | None
    """Whether the cuts look drawn at random, where the rule book says they are (MBS 3.9)."""
    cut_drawn: bool
    """The rule book has the cut drawn at random each round."""


def gather(store: Store, since: float, until: float, table: str | None) -> Shift:
    rounds = store.rounds(since=since, until=until, table=table)
    alerts = store.alerts(since=since, until=until, table=table, limit=1_000_000)
    by_table: dict[str, Counter[str]] = defaultdict(Counter)
    for alert in alerts:
        by_table[alert.table_id][alert.kind] += 1
    hands = store.hands([r.round_id for r in rounds])
    banker = {r.round_id: (r.banker, r.table_id) for r in rounds}
    compliance: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    outcomes: dict[int, Counter[str]] = defaultdict(Counter)
    for hand in hands:
        position, table_id = banker[hand.round_id]
        if hand.position == position and hand.house_way is not None:
            compliance[table_id][1] += 1
            compliance[table_id][0] += int(hand.house_way)
        if hand.outcome:
            outcomes[hand.position][hand.outcome] += 1
    totals = [sum(r.dice) for r in rounds if len(r.dice) == 3]
    unsure = [a for a in alerts if a.confidence < LOOK_TWICE]
    incidents = []
    decisions = store.decisions([a.id for a in alerts])
    for alert in sorted(alerts, key=lambda a: a.received_at):
        last = decisions.get(alert.id)
        decided = f"{last.username}: {last.note}".strip(": ") if last else ""
        incidents.append(Incident(alert.received_at, alert.table_id, alert.position, alert.kind,
                                  alert.severity, alert.summary or alert.observed or "",
                                  alert.status, decided))  # fmt: skip
    lines = []
    for table_id in sorted({r.table_id for r in rounds} | set(by_table)):
        mine = [r for r in rounds if r.table_id == table_id]
        sums = [sum(r.dice) for r in mine if len(r.dice) == 3]
        made = compliance.get(table_id, [0, 0])
        regime = _random_draw(mine[0].rules) if mine else None
        known = [r.cut for r in mine if r.record.get("cut_known") != "undecided"]  # not guesses
        lines.append(TableLine(table_id, len(mine), sum(by_table.get(table_id, Counter()).values()),
                               (made[0], made[1]), Counter(r.cut for r in mine if r.cut),
                               sum(sums) / len(sums) if sums else None,
                               Counter(r.banker for r in mine),
                               cut_randomness(known, regime.checkable) if regime else None,
                               regime is not None))  # fmt: skip
    return Shift(
        since,
        until,
        table,
        len(rounds),
        dict(by_table),
        {t: (c[0], c[1]) for t, c in compliance.items()},
        dice_fairness(totals),
        totals,
        Counter(r.first_position for r in rounds if r.first_position),
        dict(outcomes),
        Counter(a.severity for a in alerts),
        Counter(a.status for a in alerts),
        (len(unsure), sum(a.status == "new" for a in unsure)),
        incidents,
        lines,
    )


def _title(shift: Shift) -> str:
    def fmt(ts: float) -> str:
        return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")

    where = f"table {shift.table}" if shift.table else "all tables"
    return f"Shift report, {fmt(shift.since)} to {fmt(shift.until)}, {where}"


def _summary_lines(shift: Shift) -> list[str]:
    lines = [
        f"Rounds played: {shift.rounds}",
        "Alerts: " + (", ".join(f"{n} {s}" for s, n in shift.severities.most_common()) or "none"),
        "Review: " + (", ".join(f"{n} {s}" for s, n in shift.statuses.most_common()) or "-"),
        f"Alerts less than {LOOK_TWICE:.0%} sure (look twice): {shift.unsure[0]}, "
        f"{shift.unsure[1]} not yet reviewed",
    ]
    if shift.dice is not None:
        d = shift.dice
        fair = d.p_value >= SIGNIFICANCE
        verdict = "consistent with fair dice" if fair else "UNLIKELY from fair dice"
        lines.append(
            f"Dice totals: chi-square {d.statistic:.1f} on {d.dof} d.f., "
            f"p = {d.p_value:.3f} over {d.throws} throws ({verdict})"
        )
    else:
        lines.append("Dice totals: too few throws for a fairness test")
    return lines


def first_page(shift: Shift) -> Figure:
    figure = plt.figure(figsize=(8.27, 11.69))  # A4
    figure.text(0.06, 0.965, _title(shift), fontsize=13, weight="bold")
    for i, line in enumerate(_summary_lines(shift)):
        figure.text(0.06, 0.935 - i * 0.018, line, fontsize=9.5)
    axes = figure.add_axes((0.1, 0.56, 0.85, 0.26))
    tables = sorted(shift.alerts_by_table_kind)
    kinds = sorted({k for c in shift.alerts_by_table_kind.values() for k in c})
    bottom = [0] * len(tables)
    palette = plt.get_cmap("tab20")
    for i, kind in enumerate(kinds):
        counts = [shift.alerts_by_table_kind[t][kind] for t in tables]
        axes.bar(tables, counts, bottom=bottom, label=kind, color=palette(i % 20))
        bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
    axes.set_title("Incidents per table and kind")
    axes.set_ylabel("alerts")
    if kinds:
        axes.legend(fontsize=7, ncols=2)
    axes = figure.add_axes((0.1, 0.2, 0.38, 0.26))
    ctables = sorted(shift.compliance)
    rates = [100 * shift.compliance[t][0] / max(shift.compliance[t][1], 1) for t in ctables]
    axes.bar(ctables, rates, color="#2e7d32")
    axes.set_ylim(0, 105)
    axes.set_title("Bank set the house way (%)")
    axes.tick_params(axis="x", labelrotation=45)
    axes = figure.add_axes((0.58, 0.2, 0.38, 0.26))
    totals = list(range(3, 19))
    seen = Counter(shift.dice_totals)
    n = len(shift.dice_totals)
    axes.bar(totals, [seen[t] for t in totals], color="#1565c0", label="observed")
    axes.plot(
        totals, [n * FAIR[t] / 216 for t in totals], "o-", color="#e65100", label="fair three dice"
    )
    axes.set_title("Dice totals")
    axes.legend(fontsize=7)
    return figure


def second_page(shift: Shift) -> Figure:
    figure = plt.figure(figsize=(8.27, 11.69))
    axes = figure.add_axes((0.1, 0.58, 0.85, 0.32))
    positions = list(range(1, 9))
    axes.bar(positions, [shift.first_positions[p] for p in positions], color="#6a1b9a")
    axes.axhline(
        sum(shift.first_positions.values()) / 8, color="k", ls="--", lw=1, label="even share"
    )
    axes.set_title("First position served")
    axes.set_xlabel("position")
    axes.legend(fontsize=7)
    axes = figure.add_axes((0.1, 0.12, 0.85, 0.32))
    bottom = [0] * 8
    for result, colour in (("win", "#2e7d32"), ("push", "#9e9e9e"), ("lose", "#c62828")):
        counts = [shift.outcomes.get(p, Counter())[result] for p in positions]
        axes.bar(positions, counts, bottom=bottom, label=result, color=colour)
        bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
    axes.set_title("Players' outcomes against the bank, per position")
    axes.set_xlabel("position")
    axes.legend(fontsize=7)
    return figure


def _png(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    return base64.b64encode(buffer.getvalue()).decode()


INCIDENTS_ON_PAPER = 45
"""Incidents the PDF's list page holds; the HTML lists them all."""


def incidents_page(shift: Shift) -> Figure:
    """The shift's incidents, oldest first, with the decision on each (the first
    `INCIDENTS_ON_PAPER`)."""
    figure = plt.figure(figsize=(8.27, 11.69))
    figure.text(0.06, 0.965, f"Incidents ({len(shift.incidents)})", fontsize=13, weight="bold")
    for i, x in enumerate(shift.incidents[:INCIDENTS_ON_PAPER]):
        when = dt.datetime.fromtimestamp(x.received_at).strftime("%H:%M")
        text = f"{when} {x.table_id} {x.kind} ({x.severity}, {x.status}): {x.summary}"
        if x.decided:
            text += f" - {x.decided}"
        figure.text(0.06, 0.94 - i * 0.0195, text[:150], fontsize=6.5)
    if len(shift.incidents) > INCIDENTS_ON_PAPER:
        more = len(shift.incidents) - INCIDENTS_ON_PAPER
        figure.text(0.06, 0.04, f"... and {more} more: report.html lists them all", fontsize=8)
    return figure


def _cut_verdict(line: TableLine) -> str:
    """Whether a table's cuts look drawn at random, in words."""
    if not line.cut_drawn:
        return "not drawn at random under this rule book"
    test = line.cut_test
    if test is None:
        return f"too few rounds to tell (fewer than {CUTS_TESTED_FROM} cuts known)"
    random = test.p_value >= SIGNIFICANCE
    verdict = "looks random" if random else "NOT random: review the pit's draw"
    return (f"{verdict}: chi-square {test.statistic:.1f}, {test.dof} d.f., p = {test.p_value:.3f} "
            f"over {test.throws} cuts")  # fmt: skip


def report_body(shift: Shift, images: list[str]) -> str:
    """The report as HTML inside a page's body: summary, per-table lines, incidents, charts
    (base64 PNGs). Shared by report.html and the review UI's report page."""
    e = html.escape
    summary = "".join(f"<li>{e(line)}</li>" for line in _summary_lines(shift))
    tables = "".join(
        f"<tr><td>{e(t.table_id)}</td><td>{t.rounds}</td><td>{t.alerts}</td>"
        f"<td>{t.house_way[0]} of {t.house_way[1]}</td>"
        f"<td>{e(', '.join(f'{c} x{n}' for c, n in t.cuts.most_common()))}</td>"
        f"<td>{e(_cut_verdict(t))}</td>"
        f"<td>{e(', '.join(f'box {b} x{n}' for b, n in t.bankers.most_common()))}</td>"
        f"<td>{'' if t.dice_mean is None else f'{t.dice_mean:.2f}'}</td></tr>"
        for t in shift.tables
    )
    incidents = "".join(
        f"<tr><td>{dt.datetime.fromtimestamp(x.received_at):%Y-%m-%d %H:%M:%S}</td>"
        f"<td>{e(x.table_id)}</td><td>{x.position or ''}</td><td>{e(x.kind)}</td>"
        f"<td>{e(x.severity)}</td><td>{e(x.summary)}</td><td>{e(x.status)}</td>"
        f"<td>{e(x.decided)}</td></tr>"
        for x in shift.incidents
    )
    dice = ""
    if shift.dice is not None:
        dice = "".join(
            f"<tr><td>{b}</td><td>{o}</td><td>{v:.1f}</td></tr>" for b, o, v in shift.dice.bins
        )
    charts = "".join(
        f'<img alt="report page {i + 1}" src="data:image/png;base64,{b}">'
        for i, b in enumerate(images)
    )
    return f"""<h1 id="report-title">{e(_title(shift))}</h1><ul>{summary}</ul>
<h2>Tables</h2>
<table id="report-tables"><tr><th>table</th><th>rounds</th><th>alerts</th>
<th>bank set the house way</th><th>cuts dealt</th><th>cuts drawn at random? (MBS 3.9)</th>
<th>bank held at</th><th>mean dice total (fair 10.5)</th></tr>
{tables}</table>
<h2>Incidents</h2>
<table id="report-incidents"><tr><th>received</th><th>table</th><th>position</th><th>kind</th>
<th>severity</th><th>what happened</th><th>status</th><th>decision</th></tr>{incidents}</table>
<h2>Dice totals against three fair dice</h2>
<table><tr><th>total</th><th>observed</th><th>expected</th></tr>{dice}</table>
<h2>Charts</h2>{charts}"""


def render(shift: Shift) -> tuple[list[Figure], list[str]]:
    """The PDF's pages and the PNGs of its chart pages."""
    pages = [first_page(shift), second_page(shift), incidents_page(shift)]
    return pages, [_png(f) for f in pages[:2]]


def shift_report_html(store: Store, since: float, until: float, table: str | None) -> str:
    """The report's body for the review UI, made on demand (charts included)."""
    shift = gather(store, since, until, table)
    pages, images = render(shift)
    for figure in pages:
        plt.close(figure)
    return report_body(shift, images)


def write_report(
    store: Store, since: float, until: float, table: str | None, out: Path
) -> tuple[Path, Path, Path]:
    """report.html, report.pdf and first-page.png under `out`."""
    shift = gather(store, since, until, table)
    out.mkdir(parents=True, exist_ok=True)
    pages, images = render(shift)
    pdf = out / "report.pdf"
    with PdfPages(pdf) as document:
        for figure in pages:
            document.savefig(figure)
    picture = out / "first-page.png"
    pages[0].savefig(picture, dpi=80)
    for figure in pages:
        plt.close(figure)
    page = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>{html.escape(_title(shift))}</title>
<style>body{{font:14px system-ui,sans-serif;margin:2rem;max-width:70rem}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2rem .6rem}}
img{{max-width:100%}}</style></head><body>
{report_body(shift, images)}
</body></html>"""
    html_path = out / "report.html"
    html_path.write_text(page)
    return html_path, pdf, picture
