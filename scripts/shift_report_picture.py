"""Regenerate docs/shift-report.png: the first page of a simulated shift's report.

    python3 scripts/shift_report_picture.py

8 tables x 40 rounds made by the round simulator's ground truth (`room.shift`), stored in a
scratch SQLite store, reported with `room.report`.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from room.report import write_report  # noqa: E402
from room.shift import simulate_shift  # noqa: E402
from room.store import Store  # noqa: E402

folder = Path(tempfile.mkdtemp(prefix="shift-"))
store = Store.open(f"sqlite:///{folder / 'room.sqlite'}")
start = time.time() - 8 * 3600
simulate_shift(store, tables=8, rounds=40, start=start, seed=7)
_, _, picture = write_report(store, start - 60, time.time(), None, folder / "report")
shutil.copy(picture, ROOT / "docs" / "shift-report.png")
print(ROOT / "docs" / "shift-report.png")
