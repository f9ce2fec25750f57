"""`edge.yaml`: the table box's one typed config tree.

Values come from the YAML file, then `PAIGOW_` environment variables override them
(`PAIGOW_MQTT__HOST=broker`, nested keys joined by `__`). Unknown keys are refused by name.
Secrets (the broker password) are read from a file or an environment variable when the service
connects, never at import time and never logged.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from vision.table import ID_PATTERN, read_yaml


class ConfigError(ValueError):
    """An edge.yaml (or environment override) the service cannot run with, in one line."""


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CameraConfig(Section):
    source: str = Field(
        title="Source",
        description="An RTSP URL, a USB camera index (`0`), or a video file.",
    )
    loop: bool = Field(False, title="Loop", description="Start a video file again at its end.")
    speed: Annotated[float, Field(gt=0, le=20)] = Field(
        1.0, title="File playback speed", description="Demos and tests: 1 plays in real time."
    )
    reconnect_max_s: Annotated[float, Field(gt=0)] = Field(
        30.0, title="Reconnect backoff cap", description="Longest wait between reconnects (s)."
    )


class AnalysisConfig(Section):
    fps: Annotated[float, Field(gt=0, le=30)] = Field(
        10.0, title="Analysed frames per second", description="Newer frames replace older ones."
    )
    labels: Path | None = Field(
        None,
        title="Simulator labels",
        description="Demo only: a simulated round's frames.json.gz in place of the models.",
    )
    reuse: bool = Field(
        True,
        title="Analyse only what changed",
        description="The models look again only where the frame changed since they last looked "
        "there, and at every tile they were unsure of: a 1080p replay 3.9x faster on a 2-core "
        "CPU, one false alert and one missed swap more than whole frames over 231 rounds "
        "(docs/benchmarks.md, docs/accuracy.md). False: every frame whole.",
    )
    cut: str | None = Field(
        None,
        title="Cut",
        description="The one cut every round is checked against, as if the pit announced it. "
        "Unset: each round's cut is inferred among those the table may deal (docs/rounds.md).",
    )
    cut_options: dict[str, str] = Field(default_factory=dict, title="Cut options")


class EvidenceConfig(Section):
    clip: bool = Field(
        True,
        title="Clips",
        description="Send each alert's seconds before and after, and its whole frame, annotated "
        "(edge/clips.py), a few seconds after the alert.",
    )
    before_s: Annotated[float, Field(ge=0, le=10)] = Field(3.0, title="Clip before (s)")
    after_s: Annotated[float, Field(ge=0, le=10)] = Field(2.0, title="Clip after (s)")
    width: Annotated[int, Field(ge=320, le=1920)] = Field(
        960, title="Still width", description="Kept frames and the whole-frame still (px)."
    )
    clip_width: Annotated[int, Field(ge=160, le=1920)] = Field(640, title="Clip width (px)")


class TlsConfig(Section):
    ca_file: Path = Field(title="CA file", description="PEM bundle that signed the broker.")
    cert_file: Path | None = Field(None, title="Client certificate (PEM)")
    key_file: Path | None = Field(None, title="Client key (PEM)")

    @model_validator(mode="after")
    def _pair(self) -> TlsConfig:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("give both cert_file and key_file, or neither")
        return self


class MqttConfig(Section):
    host: str = Field("localhost", title="Broker host")
    port: Annotated[int, Field(ge=1, le=65535)] = Field(1883, title="Broker port")
    prefix: str = Field("paigow", title="Topic prefix", description="Topics: PREFIX/SITE/TABLE/…")
    site: str = Field(
        pattern=ID_PATTERN, title="Site", description="The casino, as topics name it."
    )
    username: str | None = Field(
        None,
        title="User name",
        description="SITE/TABLE: the broker's per-table ACL lets this user publish only under "
        "PREFIX/SITE/TABLE (deploy/mosquitto/acl).",
    )
    password_file: Path | None = Field(
        None, title="Password file", description="Or set PAIGOW_MQTT_PASSWORD."
    )
    tls: TlsConfig | None = Field(None, title="TLS")
    keepalive_s: Annotated[int, Field(ge=5)] = Field(15, title="Keep-alive (s)")
    in_flight: Annotated[int, Field(ge=1, le=1000)] = Field(
        50, title="In flight", description="Messages handed to the broker but not yet acknowledged."
    )

    def password(self) -> str | None:
        """The broker password, read when needed: from the file, else the environment."""
        if self.password_file is not None:
            try:
                return self.password_file.read_text().strip()
            except OSError as error:
                raise ConfigError(
                    f"cannot read the password file {self.password_file}: {error.strerror}"
                ) from None
        return os.environ.get("PAIGOW_MQTT_PASSWORD")


class OutboxConfig(Section):
    path: Path = Field(Path("outbox.sqlite"), title="Outbox file", description="SQLite (WAL).")
    min_free_mb: Annotated[float, Field(ge=0)] = Field(
        200.0, title="Disk alarm", description="Raise the disk alarm below this much free space."
    )


class ObservabilityConfig(Section):
    metrics_port: Annotated[int, Field(ge=0, le=65535)] = Field(
        9108, title="Metrics port", description="Prometheus endpoint; 0 turns it off."
    )
    health_every_s: Annotated[float, Field(gt=0)] = Field(10.0, title="Health period (s)")
    log_format: Literal["json", "text"] = Field("json", title="Log format")


class EdgeConfig(BaseSettings):
    """One table box."""

    model_config = SettingsConfigDict(
        extra="forbid", env_prefix="PAIGOW_", env_nested_delimiter="__", case_sensitive=False
    )
    table: Path = Field(title="Table calibration", description="table.yaml (paigow calibrate).")
    camera: CameraConfig
    analysis: AnalysisConfig = AnalysisConfig()
    evidence: EvidenceConfig = EvidenceConfig()
    mqtt: MqttConfig
    outbox: OutboxConfig = OutboxConfig()
    observability: ObservabilityConfig = ObservabilityConfig()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return env_settings, init_settings  # the environment overrides the file

    @classmethod
    def load(cls, path: Path) -> EdgeConfig:
        """Read edge.yaml; paths in it are relative to the file."""
        try:
            data: Any = read_yaml(path)
        except ValueError as error:
            raise ConfigError(str(error)) from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping of settings at the top level")
        try:
            config = cls(**data)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "top level"
            message = "unknown setting" if first["type"] == "extra_forbidden" else first["msg"]
            raise ConfigError(f"{path}: {where}: {message}") from None
        return config.relative_to(path.parent)

    def topic(self, table_id: str, kind: str) -> str:
        """A message's topic: PREFIX/SITE/TABLE/KIND (docs/mqtt.md)."""
        return f"{self.mqtt.prefix}/{self.mqtt.site}/{table_id}/{kind}"

    def relative_to(self, base: Path) -> EdgeConfig:
        def fix(p: Path | None) -> Path | None:
            return p if p is None or p.is_absolute() else (base / p).resolve()

        tls = self.mqtt.tls
        if tls is not None:
            tls = tls.model_copy(
                update={
                    "ca_file": fix(tls.ca_file),
                    "cert_file": fix(tls.cert_file),
                    "key_file": fix(tls.key_file),
                }
            )
        source = self.camera.source
        if not source.isdigit() and "://" not in source:
            source = str(fix(Path(source)))
        return self.model_copy(
            update={
                "table": fix(self.table),
                "camera": self.camera.model_copy(update={"source": source}),
                "analysis": self.analysis.model_copy(update={"labels": fix(self.analysis.labels)}),
                "mqtt": self.mqtt.model_copy(
                    update={"password_file": fix(self.mqtt.password_file), "tls": tls}
                ),
                "outbox": self.outbox.model_copy(update={"path": fix(self.outbox.path)}),
            }
        )
