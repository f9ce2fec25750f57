"""Tiles drawn as SVG for the review pages, so a reviewer sees the hands, not just pip notation."""

from __future__ import annotations

import re
from html import escape

from rules import InvalidTileError, Tile
from vision.labels import END_PIPS

TILE = re.compile(r"\b[1-6]-[1-6]\b")


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


def hand_svg(text: str | None) -> str:
    """Every tile named in a line such as `1-4 2-3 / 1-3 5-5`, drawn, keeping the `/`."""
    if not text:
        return ""
    parts = []
    for group in text.split("/"):
        tiles = TILE.findall(group)
        if tiles:
            parts.append('<span class="hand">' + "".join(tile_svg(t) for t in tiles) + "</span>")
    return '<span class="split">/</span>'.join(parts)
