"""Alert and RoundRecord: validation, and the committed JSON Schemas stay current."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from paigow.schemas import SCHEMAS, write_schemas
from vision.follow.records import Alert, RoundRecord
from vision.synth.round import ground_truth, plan_round

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "docs" / "schemas"


def test_committed_schemas_match_the_models(tmp_path: Path) -> None:
    for path in write_schemas(tmp_path):
        assert json.loads(path.read_text()) == json.loads((SCHEMA_DIR / path.name).read_text())
    assert set(SCHEMAS) <= {p.name.split(".")[0] for p in SCHEMA_DIR.iterdir()}


def test_alert_round_trips_and_gets_a_unique_id() -> None:
    alert = Alert(
        kind="house-way-violation", severity="high", table_id="pgt-01", round_id="r1",
        position=1, rules="mbs-2020", clause="App. C 1.4 #1", expected="6-6 3-5 / 2-2 4-5",
        observed="6-6 4-5 / 2-2 3-5", confidence=0.97, evidence_time_s=18.2, raised_time_s=18.6,
    )  # fmt: skip
    again = Alert.model_validate_json(alert.model_dump_json())
    assert again == alert
    assert Alert(**alert.model_dump(exclude={"id"})).id != alert.id  # each alert its own id


@pytest.mark.parametrize(
    "change",
    [{"kind": "cheating"}, {"severity": "urgent"}, {"position": 9}, {"rules": "vegas"},
     {"confidence": 1.5}, {"colour": "red"}],
)  # fmt: skip
def test_alert_rejects_what_is_not_so(change: dict[str, object]) -> None:
    base = dict(kind="foreign-tile", severity="critical", table_id="t", round_id="r",
                rules="nz-1998", clause="3.3(a)", confidence=0.9, evidence_time_s=1.0,
                raised_time_s=1.5)  # fmt: skip
    with pytest.raises(ValidationError):
        Alert.model_validate({**base, **change})


def test_a_simulated_round_truth_fits_a_round_record() -> None:
    truth = ground_truth(plan_round(4, "act-2005", ["dice-not-flat"]))
    record = RoundRecord(
        round_id="sim-4", table_id="sim", rules=truth["rules"], banker=truth["banker"],
        started_s=0.0, dice=truth["dice"], dice_flat=truth["dice_flat"], cut=truth["cut"],
        cut_options=truth["cut_options"], required_first_position=truth["required_first_position"],
        first_position=truth["first_position"], hands=truth["hands"], outcomes=truth["outcomes"],
    )  # type: ignore[arg-type]  # fmt: skip
    assert record.hands[str(record.banker)].house_way is True
    assert record.dice_flat is False
