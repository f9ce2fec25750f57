"""Where things are on the table, in millimetres (x right, y away from the dealer)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TableLayout:
    width: float = 2400.0
    depth: float = 1300.0
    box_size: float = 170.0
    arc_radius: float = 920.0
    hand_radius: float = 700.0
    arc_centre: tuple[float, float] = (0.0, 230.0)
    stack_area: tuple[float, float] = (0.0, 210.0)
    dice_area: tuple[float, float] = (360.0, 260.0)
    bank_area: tuple[float, float] = (-330.0, 250.0)
    capital_area: tuple[float, float] = (0.0, 520.0)
    """The centre circle, where the dealer lays a player-banker's capital (RWS 2.1.4 and 3.16,
    MBS 2.1.3 and 3.26.1): clear of the stacks, the dice and the hands."""
    capital_radius: float = 110.0
    marker_size: float = 90.0
    marker_centres: tuple[tuple[float, float], ...] = (
        (-1000.0, 150.0), (1000.0, 150.0), (1000.0, 1150.0), (-1000.0, 1150.0),
    )  # fmt: skip
    """ArUco markers 0..3 printed at the cloth's corners: near left, near right, far right,
    far left, seen from the dealer. `paigow calibrate` finds the camera with them."""
    box_centres: tuple[tuple[float, float], ...] = field(init=False)
    hand_spots: tuple[tuple[float, float], ...] = field(init=False)

    def __post_init__(self) -> None:
        boxes, hands = [], []
        for k in range(8):
            # Box 1 is at the dealer's right; numbers run counter-clockwise seen from above.
            angle = math.radians(12 + k * 156 / 7)
            cx, cy = self.arc_centre
            boxes.append(
                (cx + self.arc_radius * math.cos(angle), cy + self.arc_radius * math.sin(angle))
            )
            hands.append(
                (cx + self.hand_radius * math.cos(angle), cy + self.hand_radius * math.sin(angle))
            )
        object.__setattr__(self, "box_centres", tuple(boxes))
        object.__setattr__(self, "hand_spots", tuple(hands))

    def to_cloth_px(self, x: float, y: float, mm_per_px: float) -> tuple[int, int]:
        return round((x + self.width / 2) / mm_per_px), round((self.depth - y) / mm_per_px)

    def marker_corners(self, marker: int) -> tuple[tuple[float, float], ...]:
        """Table mm of a marker's corners in ArUco's order: top-left, top-right, bottom-right,
        bottom-left of the printed marker, whose top faces the players."""
        x, y = self.marker_centres[marker]
        h = self.marker_size / 2
        return ((x - h, y + h), (x + h, y + h), (x + h, y - h), (x - h, y - h))

    def hand_angle(self, position: int) -> float:
        """Direction (radians) from the table centre to a position's hand spot."""
        return math.radians(12 + (position - 1) * 156 / 7)
