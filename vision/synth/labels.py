"""The detector's classes, shared by every later stage: 21 tile faces, `back`, `die-1`..`die-6`."""

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
