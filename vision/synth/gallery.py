"""A contact sheet of renders, so a person can judge the simulator's realism at a glance."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from vision.synth.dataset import render_sample

TILE = (400, 225)


def gallery(out: Path, seed: int = 0, count: int = 12, columns: int = 4) -> Path:
    """Render `count` data-set samples (every resolution and view) plus a close-up crop."""
    cells = []
    for index in range(count):
        sample = render_sample(seed, index)
        image = sample.rendering.image
        h, w = image.shape[:2]
        cell = cv2.resize(image, TILE, interpolation=cv2.INTER_AREA)
        text = f"{w}x{h}"
        cv2.putText(cell, text, (8, 22), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(
            cell, text, (8, 22), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 1, cv2.LINE_AA
        )
        cells.append(cell)
        if len(cells) < columns:  # a 1:1 crop around the best-seen face-up tile, to judge pips
            tiles = [
                lb
                for lb in sample.rendering.labels
                if lb.labelled and lb.label not in (None, "back") and lb.kind == "tile"
            ]
            if tiles:
                best = max(tiles, key=lambda lb: (lb.box[2] - lb.box[0]) * (lb.box[3] - lb.box[1]))
                cx, cy = (best.box[0] + best.box[2]) / 2, (best.box[1] + best.box[3]) / 2
                x0 = int(np.clip(cx - TILE[0] / 2, 0, w - TILE[0]))
                y0 = int(np.clip(cy - TILE[1] / 2, 0, h - TILE[1]))
                cells.append(image[y0 : y0 + TILE[1], x0 : x0 + TILE[0]].copy())
    while len(cells) % columns:
        cells.append(np.zeros_like(cells[0]))
    rows = [np.hstack(cells[i : i + columns]) for i in range(0, len(cells), columns)]
    out.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(out), np.vstack(rows)):
        raise OSError(f"cannot write the gallery to {out}")
    return out
