"""Draw docs/architecture.png: the path from the camera to the reviewers, a module on each arrow.

python3 scripts/architecture_picture.py
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

OUT = Path(__file__).resolve().parents[1] / "docs" / "architecture.png"
STEPS = [
    ("camera", "edge/app.py"),
    ("detections", "vision/detector.py, refine.py, reuse.py"),
    ("follower", "vision/table.py (locate), vision/follow/"),
    ("verdicts", "vision/follow/judge.py -> rules/"),
    ("outbox", "vision/follow/records.py -> edge/outbox.py"),
    ("MQTT", "edge/comms.py (QoS 1, PUBACK)"),
    ("ingest", "room/ingest.py"),
    ("store", "room/store.py"),
    ("review / report", "room/web.py, room/report.py"),
]
BOX_W, BOX_H, GAP, MARGIN = 300, 64, 54, 40
BOX_SIDE = "box (CPU, one a table)"
ROOM_SIDE = "surveillance room"


def main() -> None:
    height = MARGIN * 2 + len(STEPS) * BOX_H + (len(STEPS) - 1) * GAP
    image = np.full((height, 980, 3), 255, np.uint8)
    font = cv2.FONT_HERSHEY_SIMPLEX
    left = MARGIN + 160
    for k, (name, _) in enumerate(STEPS):
        top = MARGIN + k * (BOX_H + GAP)
        colour = (235, 222, 200) if k < 5 else (205, 230, 210)
        cv2.rectangle(image, (left, top), (left + BOX_W, top + BOX_H), colour, -1)
        cv2.rectangle(image, (left, top), (left + BOX_W, top + BOX_H), (60, 60, 60), 2)
        (w, h), _ = cv2.getTextSize(name, font, 0.8, 2)
        org = (left + (BOX_W - w) // 2, top + (BOX_H + h) // 2)
        cv2.putText(image, name, org, font, 0.8, (20, 20, 20), 2, cv2.LINE_AA)
        if k + 1 < len(STEPS):
            x, y0, y1 = left + BOX_W // 2, top + BOX_H, top + BOX_H + GAP
            cv2.arrowedLine(image, (x, y0 + 4), (x, y1 - 4), (40, 40, 40), 2, cv2.LINE_AA, 0, 0.25)
            _, next_module = STEPS[k + 1]
            cv2.putText(image, next_module, (x + 16, (y0 + y1) // 2 + 6), font, 0.52,
                        (90, 50, 20), 1, cv2.LINE_AA)  # fmt: skip
    split = MARGIN + 5 * (BOX_H + GAP) - 8
    cv2.line(image, (20, split), (960, split), (150, 150, 150), 1, cv2.LINE_AA)
    cv2.putText(image, BOX_SIDE, (20, MARGIN + 20), font, 0.6, (60, 60, 60), 1, cv2.LINE_AA)
    cv2.putText(image, ROOM_SIDE, (20, split + 30), font, 0.6, (60, 60, 60), 1, cv2.LINE_AA)
    cv2.imwrite(str(OUT), image)
    print(OUT)


if __name__ == "__main__":
    main()
