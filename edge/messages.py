"""What goes over MQTT: every alert and round record in an `Envelope` with its id and the table's
sequence number; the retained `Status` and the periodic `Health` report. JSON Schemas of all
three are in docs/schemas (`python3 -m paigow.schemas docs/schemas`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Alarm = Literal[
    "disk-low",
    "outbox-unwritable",
    "messages-dropped",
    "camera-lost",
    "messages-refused",
    "models-misread",
    "analysis-slow",
]
CameraState = Literal["starting", "ok", "lost", "ended"]


class Envelope(BaseModel):
    """One alert or round record as published on `…/alert` or `…/round` (QoS 1)."""

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
    kind: Literal["alert", "round"] = Field(title="Kind of body")
    produced_at: float = Field(title="Produced at", description="Unix time the box stored it.")
    body: dict[str, Any] = Field(
        title="Body", description="An Alert or a RoundRecord (see their schemas)."
    )
    evidence_jpeg: str | None = Field(
        None, title="Evidence", description="Alerts: the cropped evidence frame, base64 JPEG."
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
