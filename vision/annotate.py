"""Draw detections on a frame, for people: oriented boxes and labels a person can read."""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detections import Detections

LABEL_HEIGHT = 0.018
"""Label text height as a share of the image height: 19 px at 1080p, readable on a screen
without covering a neighbouring tile (a tile's face is about 50 px long at 1080p)."""
LEAST_LABEL_PX = 12
"""Below this height OpenCV's font stops being legible."""
SURE = 0.9
"""A label this sure is shown bare; a less sure one with its score, so a doubt stands out."""
BACK_COLOUR, DIE_COLOUR, FACE_COLOUR = (0, 160, 230), (0, 0, 220), (0, 150, 0)
FONT = cv2.FONT_HERSHEY_SIMPLEX


class Tag(NamedTuple):
    """A detection's name as drawn: its text and where its filled box goes (x, y, w, h)."""

    text: str
    colour: tuple[int, int, int]
    box: tuple[int, int, int, int]


def _colour(label: str) -> tuple[int, int, int]:
    return (
        BACK_COLOUR if label == "back" else DIE_COLOUR if label.startswith("die") else FACE_COLOUR
    )


def _font(shape: tuple[int, ...]) -> tuple[float, int]:
    """Font scale and stroke for tags `LABEL_HEIGHT` of the image tall."""
    height = max(LEAST_LABEL_PX, LABEL_HEIGHT * shape[0])
    return height / cv2.getTextSize("8", FONT, 1.0, 1)[0][1], max(1, round(height / 12))


def tags(shape: tuple[int, ...], detections: Detections) -> list[Tag]:
    """The tags of the faces and dice (backs go untagged: the colour says it, and 32 tags would
    hide the faces), each where it overlaps no earlier one if there is such a place."""
    return place_tags(shape, [
        (corners, label if score >= SURE else f"{label} {score:.0%}", _colour(label))
        for corners, label, score in zip(
            detections.corners, detections.labels, detections.label_scores, strict=True
        )
        if label != "back"
    ])  # fmt: skip


def place_tags(
    shape: tuple[int, ...],
    items: list[tuple[NDArray[np.float64], str, tuple[int, int, int]]],
) -> list[Tag]:
    """A tag for each (corners, text, colour), each beside its box where it overlaps no earlier
    one if there is such a place."""
    scale, thickness = _font(shape)
    placed: list[Tag] = []
    for corners, text, colour in items:
        (width, height), baseline = cv2.getTextSize(text, FONT, scale, thickness)
        box = _free_place(corners, width + 4, height + baseline + 4, [t.box for t in placed], shape)
        placed.append(Tag(text, colour, box))
    return placed


def annotate(image: NDArray[np.uint8], detections: Detections) -> NDArray[np.uint8]:
    """Each detection outlined in its colour (faces green, backs orange, dice red); faces and
    dice named on a filled tag beside the box, with the score where the reader was unsure."""
    outlines = [
        (c, _colour(label)) for c, label in zip(detections.corners, detections.labels, strict=True)
    ]
    return draw(image, outlines, tags(image.shape, detections))


def draw(
    image: NDArray[np.uint8],
    outlines: list[tuple[NDArray[np.float64], tuple[int, int, int]]],
    placed: list[Tag],
) -> NDArray[np.uint8]:
    """A copy of `image` with each box outlined in its colour and each tag drawn filled."""
    out = image.copy()
    scale, thickness = _font(image.shape)
    for corners, colour in outlines:
        cv2.polylines(out, [np.round(corners).astype(np.int32)], True, colour, thickness)
    for tag in placed:
        x, y, w, h = tag.box
        text_height = cv2.getTextSize(tag.text, FONT, scale, thickness)[0][1]
        cv2.rectangle(out, (x, y), (x + w, y + h), tag.colour, -1)
        cv2.putText(out, tag.text, (x + 2, y + text_height + 2), FONT, scale, (255, 255, 255),
                    thickness, cv2.LINE_AA)  # fmt: skip
    return out


def _free_place(
    corners: NDArray[np.float64],
    width: int,
    height: int,
    placed: list[tuple[int, int, int, int]],
    shape: tuple[int, ...],
) -> tuple[int, int, int, int]:
    """Where a tag goes: above the box, else below, right or left of it, else a line further
    up or down, whichever first overlaps no tag already drawn (tiles of a hand and the dice lie
    close); above if none is free."""
    (x0, y0), (x1, y1) = corners.min(axis=0).astype(int), corners.max(axis=0).astype(int)
    spots = [(x0, y0 - height - 2), (x0, y1 + 2), (x1 + 2, y0), (x0 - width - 2, y0)]
    spots += [(x, y + step) for x, y in spots[:2] for step in (-height - 2, height + 2)]
    inside = [
        (min(max(x, 0), shape[1] - width), min(max(y, 0), shape[0] - height)) for x, y in spots
    ]
    for x, y in inside:
        if not any(x < a + w and a < x + width and y < b + h and b < y + height
                   for a, b, w, h in placed):  # fmt: skip
            return x, y, width, height
    return (*inside[0], width, height)
