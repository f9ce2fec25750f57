"""The going-on ablation's arms and its command's errors (`vision.training.going_on`); its
figures are in models/MODEL_CARD.md."""

from __future__ import annotations

import pytest

from tests.conftest import one_line_error
from vision.training.going_on import ARMS

RECIPE = {"lr0", "angle", "scale", "freeze", "hold_norms", "optimizer", "momentum",
          "small_boxes_grown_to", "cls_pw", "box", "dfl", "full_targets", "shape_term"}  # fmt: skip


def test_each_arm_changes_only_settings_of_the_going_on_recipe() -> None:
    """An arm is one change from the same start: an unknown key would reach ultralytics as a
    setting it refuses (or, misspelt, silently train the base arm twice)."""
    assert ARMS["base"] == {}
    assert all(set(settings) <= RECIPE for settings in ARMS.values())
    assert len({tuple(sorted(s.items())) for s in ARMS.values()}) == len(ARMS)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--arms", "base,faster"], "no arm faster"),
        (["--epochs", "0"], "at least 1"),
        (["--where-dice-are-boxed", "0"], "at least 1 frame"),
    ],
    ids=["unknown-arm", "no-epochs", "no-frames"],
)
def test_the_command_says_what_is_wrong_in_one_line(args: list[str], said: str) -> None:
    assert said in one_line_error("vision.training.going_on", *args)
