"""What goes over MQTT: every alert and round record in an `Envelope` with its id and the table's
sequence number; the retained `Status` and the periodic `Health` report. JSON Schemas of all
three are in docs/schemas (`python3 -m paigow.schemas docs/schemas`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rules import DealError, find_cut

Alarm = Literal[
    "disk-low",
    "outbox-unwritable",
    "messages-dropped",
    "camera-lost",
    "messages-refused",
    "models-misread",
    "analysis-slow",
    "enrolment-stale",
]
CameraState = Literal["starting", "ok", "lost", "ended"]


MessageKind = Literal["alert", "round", "evidence", "enrolment"]


class EvidenceClip(BaseModel):
    """An alert's evidence, sent a few seconds after the alert (`edge/clips.py`): its metadata;
    the still and the clip travel in the envelope (`evidence_jpeg`, `clip_webm`)."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(title="Id", description="`ALERT_ID:evidence`: one per alert.")
    alert_id: str = Field(title="Alert")
    table_id: str = Field(title="Table")
    evidence_time_s: float = Field(title="Evidence time", description="The still's time (s).")
    from_s: float = Field(title="Clip from", description="Video time of its first frame (s).")
    to_s: float = Field(title="Clip to", description="Video time of its last frame (s).")


class EnrolledTile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    place: int | None = Field(title="Place", description="1..32 in the order laid; null: read.")
    face: str = Field(
        title="Face", description="Enrolled: by place in the order of rank, else read."
    )
    read: str = Field(title="Read as", description="What the reader read, e.g. `4-4` or `back`.")
    sure: float = Field(ge=0, le=1, title="How sure the reading was")


class Enrolment(BaseModel):
    """A table's tile set as its opening display showed it (NZ 8.0; `vision.enrol`), published
    on `…/enrolment` by `paigow enrol`, accepted or refused. The annotated display travels in
    the envelope (`evidence_jpeg`)."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(title="Id")
    table_id: str = Field(title="Table")
    at: float = Field(title="Unix time the display was looked at")
    whole: bool = Field(title="Whole", description="32 tiles of one genuine set, 3 dice.")
    in_order: bool = Field(title="Laid in order of rank")
    problems: list[str] = Field(default_factory=list, title="What is wrong")
    accepted_by: str | None = Field(None, title="Accepted by", description="Null: not accepted.")
    tiles: list[EnrolledTile] = Field(title="Tiles")
    dice: list[str] = Field(title="Dice read", description="`die-N` each.")


class Announce(BaseModel):
    """The pit's word for a table's next round, published by the `pit` login on
    `paigow/SITE/TABLE/announce`: who banks, the box the chung marks, the cut with its options.
    What it leaves out stays as `table.yaml` has it; it holds for one round and overrides what
    the box would infer (`RoundFollower.announce`)."""

    model_config = ConfigDict(extra="forbid")
    by: str = Field(min_length=1, max_length=64, title="By", description="Who announced it.")
    bank: Literal["house", "player", "co-bank"] | None = Field(None, title="Who banks")
    banker: int | None = Field(None, ge=1, le=8, title="The chung's box")
    cut: str | None = Field(None, title="Cut", description="Cut id, e.g. `cup-say`.")
    cut_options: dict[str, str] = Field(
        default_factory=dict, title="Cut options", description='e.g. `{"side": "right"}`.'
    )

    @model_validator(mode="after")
    def _a_cut_the_box_can_check(self) -> Announce:
        if self.cut is None:
            if self.cut_options:
                raise ValueError("cut options without a cut")
            return self
        try:
            cut, implied = find_cut(self.cut)
            cut.options(**{**implied, **self.cut_options})
        except (DealError, TypeError) as error:
            raise ValueError(str(error)) from None
        if cut.drawn is None:
            raise ValueError(f"cut {self.cut!r} has no delivery order a box can check")
        return self


class Envelope(BaseModel):
    """One alert, round record, alert's evidence or enrolment as published on `…/alert`,
    `…/round`, `…/evidence` or `…/enrolment` (QoS 1)."""

    model_config = ConfigDict(extra="forbid")
    message_id: str = Field(
        title="Message id", description="Unique; the alert's own id for alerts. De-duplicate on it."
    )
    seq: int = Field(
        ge=1,
        title="Sequence number",
        description="Per table, increasing by one per message, never reused: a jump is a gap.",
    )
    table_id: str = Field(title="Table")
    kind: MessageKind = Field(title="Kind of body")
    produced_at: float = Field(title="Produced at", description="Unix time the box stored it.")
    body: dict[str, Any] = Field(
        title="Body",
        description="An Alert, a RoundRecord, an EvidenceClip or an Enrolment (their schemas).",
    )
    evidence_jpeg: str | None = Field(
        None,
        title="Evidence",
        description="Alerts: the cropped evidence frame; evidence: the whole frame annotated; "
        "enrolment: the display annotated. Base64 JPEG.",
    )
    clip_webm: str | None = Field(
        None,
        title="Clip",
        description="Evidence: the seconds around the alert, annotated, base64 WebM (VP8).",
    )


class Status(BaseModel):
    """Retained on `…/status`; the broker publishes `offline` as the box's last will."""

    model_config = ConfigDict(extra="forbid")
    state: Literal["online", "offline"] = Field(title="State")
    camera: CameraState | None = Field(None, title="Camera")


class Health(BaseModel):
    """Published on `…/health` every `observability.health_every_s` seconds (QoS 1)."""

    model_config = ConfigDict(extra="forbid")
    table_id: str
    at: float = Field(title="Unix time")
    camera: CameraState
    broker_connected: bool
    outbox_depth: int = Field(ge=0, title="Messages stored but not yet acknowledged")
    free_mb: float = Field(title="Free disk beside the outbox (MiB)")
    analysis_fps: float
    alarms: list[Alarm] = Field(default_factory=list, title="Alarms")
    enrolment: str | None = Field(
        None,
        title="Enrolment in force",
        description="The accepted enrolment of the table's tile set the reader reads by "
        "(`paigow enrol`); null: none, the reader reads by its training alone.",
    )
