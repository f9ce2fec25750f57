"""What the product says about a round: `Alert` and `RoundRecord` (pydantic). Their JSON Schemas
are in `docs/schemas/` for the surveillance room's consumers (`python3 -m paigow.schemas`)."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from rules import CATALOGUE, ruleset_ids

IrregularityKind = Literal[tuple(kind.value for kind in CATALOGUE)]  # type: ignore[valid-type]
SeverityName = Literal["critical", "high", "medium", "low"]
RulesetId = Literal[tuple(ruleset_ids())]  # type: ignore[valid-type]
Position = Annotated[int, Field(ge=1, le=8)]


class Alert(BaseModel):
    """One irregularity, as the surveillance room receives it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: uuid.UUID = Field(
        default_factory=uuid.uuid4,
        title="Alert id",
        description="Unique: consumers de-duplicate on it.",
    )
    kind: IrregularityKind = Field(title="Kind", description="From the irregularity catalogue.")  # type: ignore[valid-type]
    severity: SeverityName = Field(title="Severity")
    table_id: str = Field(title="Table")
    round_id: str = Field(title="Round")
    position: Position | None = Field(None, title="Position", description="Box 1-8, if one.")
    rules: RulesetId = Field(title="Rule book")  # type: ignore[valid-type]
    clause: str = Field(
        title="Clause", description="Where the rule book says so, e.g. `App. C 1.4 #1`."
    )
    summary: str | None = Field(
        None,
        title="Summary",
        description="One sentence for the surveillance room: what happened, where, in words.",
    )
    expected: str | None = Field(None, title="Expected", description="What the rules require.")
    observed: str | None = Field(None, title="Observed", description="What the camera saw.")
    confidence: Annotated[float, Field(ge=0, le=1)] = Field(
        title="Confidence",
        description="How sure the evidence is: the detector's or reader's certainty of what "
        "the alert rests on, or the share of readings that agree (docs/rounds.md).",
    )
    evidence_time_s: float = Field(
        title="Evidence time", description="Video time of the frame that shows it (s)."
    )
    raised_time_s: float = Field(
        title="Raised at", description="Video time the alert was raised (s)."
    )
    evidence_image: str | None = Field(
        None, title="Evidence image", description="Cropped evidence, a path beside the alert log."
    )


class HandRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    tiles: list[str] = Field(title="Tiles", description="Pip notation.")
    high: list[str] = Field(title="High hand")
    low: list[str] = Field(title="Low hand")
    house_way: bool | None = Field(
        None,
        title="Set the house way",
        description="None: not judged (wrong size or foreign tile).",
    )
    house_way_setting: str | None = Field(
        None, title="House-way setting", description="`HIGH HIGH / LOW LOW`."
    )


class RoundRecord(BaseModel):
    """Everything reconstructed about one round."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    round_id: str = Field(title="Round")
    table_id: str = Field(title="Table")
    rules: RulesetId = Field(title="Rule book")  # type: ignore[valid-type]
    banker: Position = Field(title="Banker's position")
    banker_known: Literal["announced", "seen", "configured"] = Field(
        "configured",
        title="How the banker's box is known",
        description="announced: by the pit for this round; seen: the chung on that box; "
        "configured: `table.yaml`'s.",
    )
    bank: Literal["house", "player", "co-bank"] | None = Field(
        None,
        title="Who banks",
        description="As announced, seen or configured; None: not known (then the bank's hand is "
        "checked against the house way, as a house bank's is).",
    )
    bank_known: Literal["announced", "seen", "configured"] = Field(
        "configured",
        title="How who banks is known",
        description="announced: by the pit for this round; seen: the chung's face or box, or "
        "chips on the banker's box or only on others (`rules.bank_shown`); configured: "
        "`table.yaml`'s (or not known).",
    )
    adjust: Literal[-4, 0, 4] = Field(
        0,
        title="Delivery adjustment",
        description="A player/banker's +4 or -4 on the dice total for the first position, as "
        "its button showed it (NZ 9.6-9.7); 0 where none, or the rule book offers none.",
    )
    off_box: Position | None = Field(
        None,
        title="Box out of play",
        description='The box an "Off" button marked (NZ 12.9-12.10, MBS 5.6.1): its hand is set '
        "aside unplayed, so it is not among `hands`; None where no button was seen.",
    )
    started_s: float = Field(title="Start", description="Video time (s).")
    ended_s: float | None = Field(None, title="End", description="None if the round was abandoned.")
    complete: bool = Field(
        True,
        title="Seen whole",
        description="False when the camera joined mid-round or it was abandoned.",
    )
    phases: dict[str, float] = Field(
        default_factory=dict, title="Phases", description="When each phase was first seen (s)."
    )
    dice: list[Annotated[int, Field(ge=1, le=6)]] = Field(title="Dice")
    dice_flat: bool = Field(True, title="Dice lay flat")
    cut: str = Field(title="Cut", description="Cut id, e.g. `yat-dong-dong`.")
    cut_options: dict[str, str] = Field(default_factory=dict, title="Cut options")
    cut_known: Literal["announced", "configured", "seen", "inferred", "undecided"] = Field(
        "configured",
        title="How the cut is known",
        description="announced: given to the box; configured: the only cut the table may "
        "deal; seen: named by the set-up (`set_up`) and the delivery fitted it; inferred: the "
        "only permitted cut the delivery fits; undecided: several fit (or no delivery was "
        "seen), `cut` is the table's own where it is one of them.",
    )
    set_up: list[Annotated[int, Field(ge=1, le=8)]] = Field(
        default_factory=list,
        title="Set-up",
        description="The stacks (1-8 from the dealer's left) pushed towards the players before "
        "delivery to show the cut (MBS App. D): the first group's stacks. Empty where none was "
        "seen pushed.",
    )
    cut_alternatives: list[str] = Field(
        default_factory=list,
        title="Other cuts that fit",
        description="Permitted cuts the delivery fits as well, e.g. `cup-say (left, bottom)`: "
        "those dealing the same blocks from the same stacks, and where undecided every cut it "
        "did not break, likeliest first.",
    )
    cut_breached: list[Position] = Field(
        default_factory=list,
        title="Boxes dealt out of the cut's order",
        description="Every box whose tiles broke the cut the delivery was judged by; the "
        "round's one `wrong-cut-order` alert names the first.",
    )
    required_first_position: Position | None = Field(
        None, title="First position the dice require", description="None if the dice were unseen."
    )
    first_position: Position | None = Field(None, title="First position seen")
    hands: dict[str, HandRecord] = Field(default_factory=dict, title="Hands by position")
    outcomes: dict[str, Literal["win", "lose", "push"]] = Field(
        default_factory=dict, title="Outcomes by position"
    )
    alerts: list[uuid.UUID] = Field(default_factory=list, title="Alerts raised in this round")
