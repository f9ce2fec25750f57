"""The docs describe the product as it is: figures quoted from their one source, no work log."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from vision.training.evaluate import report

ROOT = Path(__file__).resolve().parents[1]
PRODUCT_DOCS = [
    ROOT / "README.md",
    ROOT / "models" / "MODEL_CARD.md",
    *sorted((ROOT / "docs").glob("*.md")),
]


def test_the_detector_report_is_what_the_metrics_say() -> None:
    """docs/detector.md is generated from models/metrics.json and never edited by hand, so a
    figure there cannot drift from the measurement."""
    metrics = json.loads((ROOT / "models" / "metrics.json").read_text())
    assert (ROOT / "docs" / "detector.md").read_text() == report(metrics)


@pytest.mark.parametrize("path", PRODUCT_DOCS, ids=lambda p: p.name)
def test_no_work_log_in_the_product_docs(path: Path) -> None:
    """History belongs in CHANGELOG.md and git log, not in README or docs/."""
    found = re.findall(r"\b(?:sessions? \d+|entry \d+)", path.read_text(), flags=re.IGNORECASE)
    assert found == []


def test_the_work_log_check_sees_one() -> None:
    text = "Measured in Session 27 on this machine"
    assert re.findall(r"\b(?:sessions? \d+|entry \d+)", text, flags=re.IGNORECASE)


def test_the_readme_quotes_no_held_out_figure_of_its_own() -> None:
    """The held-out figures live in docs/detector.md; the README links there instead of
    retyping them (a retyped mAP went stale once)."""
    readme = (ROOT / "README.md").read_text()
    assert "docs/detector.md" in readme
    assert not re.search(r"mAP50-95\s*[0-9.]+|\b9\d\.\d+%", readme)


def test_the_report_shows_real_dice_at_the_tables_scale_where_measured() -> None:
    metrics = json.loads((ROOT / "models" / "metrics.json").read_text())
    metrics.pop("real_dice_table", None)
    assert "at the table's scale" not in report(metrics)
    metrics["real_dice_table"] = {
        "dark": {
            "photos": 300,
            "dice": 1200,
            "found": 600,
            "read_right": 480,
            "other_boxes": 7,
            "found_share": 0.5,
            "read_right_share": 0.4,
            "read_on_true_boxes": 0.875,
        },
    }
    assert "| dark | 300 | 1200 | 50.0% | 40.0% | 7 | 87.5% |" in report(metrics)
