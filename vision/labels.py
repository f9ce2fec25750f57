"""The detector's classes, shared by every later stage: 21 tile faces, `back`, `die-1`..`die-6`;
and where the pips lie on a tile's end, which the simulator draws and the room's pages show."""

from __future__ import annotations

FACES = (
    "1-1",
    "1-2",
    "1-3",
    "1-4",
    "1-5",
    "1-6",
    "2-2",
    "2-3",
    "2-4",
    "2-5",
    "2-6",
    "3-3",
    "3-4",
    "3-5",
    "3-6",
    "4-4",
    "4-5",
    "4-6",
    "5-5",
    "5-6",
    "6-6",
)
CLASSES: tuple[str, ...] = (*FACES, "back", *(f"die-{v}" for v in range(1, 7)))
CLASS_ID = {name: index for index, name in enumerate(CLASSES)}
CHUNG_BANKER, CHUNG_CO = "chung-banker", "chung-co-banker"
"""The chung as it lies on the banker's box, by its face up (NZ 3.3(f)): the round's context,
not a tile or a die. The simulator labels it and the buttons below; a detector of their own
finds them (`vision.detector.MarkerDetector`), not the tiles' detector."""
PLUS_4, MINUS_4 = "button-plus-4", "button-minus-4"
"""The button showing a player/banker's +4 or -4 (NZ 9.6-9.7), laid centrally on the table."""
ADJUST = {PLUS_4: 4, MINUS_4: -4}
OFF = "button-off"
"""The button marking a box out of play (NZ 3.3(e), 12.10; MBS 5.6.1): its hand is set aside."""
MARKERS = (CHUNG_BANKER, CHUNG_CO, PLUS_4, MINUS_4, OFF)
WAGER = "wager"
"""Chips on a betting box: who banks where the books take no wager on the house's box (NZ
11.1(b), ACT 7.3, MBS 3.25.1). The simulator labels them; no shipped model finds them yet."""
CONTEXT = (*MARKERS, WAGER)
"""Everything that says the round's context rather than being a tile or a die."""
NOT_A_MARKER = "none"
"""The marker face reader's answer for a box on no marker (a card, a chip, a tile)."""

# Pip centres inside one end, (across, along) in 0..1, "along" measured from the tile's end.
END_PIPS: dict[int, list[tuple[float, float]]] = {
    1: [(0.5, 0.5)],
    2: [(0.28, 0.3), (0.72, 0.3)],
    3: [(0.25, 0.22), (0.5, 0.5), (0.75, 0.78)],
    4: [(0.28, 0.28), (0.72, 0.28), (0.28, 0.72), (0.72, 0.72)],
    5: [(0.25, 0.22), (0.75, 0.22), (0.5, 0.5), (0.25, 0.78), (0.75, 0.78)],
    6: [(0.28, 0.2), (0.72, 0.2), (0.28, 0.5), (0.72, 0.5), (0.28, 0.8), (0.72, 0.8)],
}
