"""Tiles, dice and boxes drawn for the review pages, so a reviewer sees the hands, the dice and
the positions an alert names, not just pip notation."""

from __future__ import annotations

import re
from html import escape

from rules import InvalidTileError, Tile
from vision.labels import END_PIPS

FACT = re.compile(
    r"(?P<tile>\b[1-6]-[1-6]\b)|(?P<box>\b(?:position|box) (?P<number>[1-8])\b)"
    r"|(?P<dice>\bdice (?P<values>[1-6](?: [1-6]){1,3})\b)"
    r"|(?P<backs>\b(?P<tiles>[1-8]) tiles?\b)|(?P<unread>\b(?P<many>[1-5]) dice\b)"
    r"|(?P<tilted>\bdie (?P<die>[1-3]) not flat\b)",
    re.IGNORECASE,
)
"""What is drawn: a tile named by its pips, a box or position, dice with their values; a
count of tiles (a hand's size) as that many backs, a count of dice as blank dice, a die not
lying flat as a leaning die."""
DIE_PIPS = {
    1: ((0.5, 0.5),),
    2: ((0.25, 0.25), (0.75, 0.75)),
    3: ((0.25, 0.25), (0.5, 0.5), (0.75, 0.75)),
    4: ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)),
    5: ((0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)),
    6: ((0.25, 0.22), (0.75, 0.22), (0.25, 0.5), (0.75, 0.5), (0.25, 0.78), (0.75, 0.78)),
}
"""Where a die's pips lie on its face, as shares of its side."""


def _pips(count: int, top: float, face: str) -> str:
    dots = []
    for index, (across, along) in enumerate(END_PIPS[count]):
        red = (index % 2 == 0) if face == "6-6" else count in (1, 4)
        colour = "#c62828" if red else "#f5f5f5"
        dots.append(
            f'<circle cx="{4 + across * 28:.1f}" cy="{top + 4 + along * 28:.1f}" '
            f'r="3.2" fill="{colour}"/>'
        )
    return "".join(dots)


def tile_svg(face: str) -> str:
    """One face-up tile, 36 x 72, with its pip notation as the title."""
    try:
        Tile.parse(face)
    except InvalidTileError:
        return f'<span class="unknown-tile">{escape(face)}</span>'
    a, b = (int(v) for v in face.split("-"))
    return (
        f'<svg class="tile" width="36" height="72" viewBox="0 0 36 72" role="img" '
        f'aria-label="{face}"><title>{face}</title>'
        '<rect x="1" y="1" width="34" height="70" rx="5" fill="#1b1b1b" stroke="#777"/>'
        '<line x1="4" y1="36" x2="32" y2="36" stroke="#555"/>'
        f"{_pips(a, 0, face)}{_pips(b, 36, face)}</svg>"
    )


def die_svg(value: int) -> str:
    """One die's face, 24 x 24, the 1 and 4 red as on the table's dice."""
    colour = "#c62828" if value in (1, 4) else "#1b1b1b"
    radius = 3.4 if value == 1 else 2.3
    pips = "".join(
        f'<circle cx="{2 + x * 20:.1f}" cy="{2 + y * 20:.1f}" r="{radius}" fill="{colour}"/>'
        for x, y in DIE_PIPS[value]
    )
    return (
        f'<svg class="die" width="24" height="24" viewBox="0 0 24 24" role="img" '
        f'aria-label="die {value}"><title>{value}</title>'
        '<rect x="1" y="1" width="22" height="22" rx="4" fill="#fafafa" stroke="#555"/>'
        f"{pips}</svg>"
    )


def back_svg() -> str:
    """A face-down tile, 18 x 36: a hand's size is counted in these."""
    return (
        '<svg class="back" width="18" height="36" viewBox="0 0 18 36" role="img" '
        'aria-label="a tile face down"><rect x="1" y="1" width="16" height="34" rx="3" '
        'fill="#6d4c2f" stroke="#3e2a19"/></svg>'
    )


def blank_die_svg(tilt: float = 0.0) -> str:
    """A die whose face is not read (counted, or leaning `tilt` degrees), 24 x 24."""
    return (
        f'<svg class="die" width="24" height="24" viewBox="0 0 24 24" role="img" '
        f'aria-label="a die"><rect x="3" y="3" width="18" height="18" rx="4" fill="#fafafa" '
        f'stroke="#555" transform="rotate({tilt:g} 12 12)"/></svg>'
    )


LEANING_DEG = 30
"""How far the drawn die leans: plainly not flat at 24 px."""


def facts_html(text: str | None) -> str:
    """An alert's Expected or Observed line as a reviewer reads it: its words, with each tile
    drawn, each box as a numbered badge and the dice drawn; everything else escaped."""
    if not text:
        return ""
    parts, at = [], 0
    for match in FACT.finditer(text):
        parts.append(escape(text[at : match.start()]))
        if match["tile"]:
            parts.append(tile_svg(match["tile"]))
        elif match["box"]:
            parts.append(f'<span class="box">box {match["number"]}</span>')
        elif match["backs"]:
            backs = back_svg() * int(match["tiles"])
            parts.append(f'<span class="backs">{escape(match["backs"])} {backs}</span>')
        elif match["unread"]:
            dice = blank_die_svg() * int(match["many"])
            parts.append(f'<span class="dice">{escape(match["unread"])} {dice}</span>')
        elif match["tilted"]:
            leaning = blank_die_svg(LEANING_DEG)
            parts.append(f'<span class="dice">{escape(match["tilted"])} {leaning}</span>')
        else:
            dice = "".join(die_svg(int(v)) for v in match["values"].split())
            parts.append(f'<span class="dice">dice {dice}</span>')
        at = match.end()
    parts.append(escape(text[at:]))
    return "".join(parts)
