"""Evidence a reviewer can judge: the seconds around an alert as a short video, and the whole
frame it rests on, both with what the models saw drawn on them.

A still crop cannot show a hand moved from one box to another or a block lifted from the wrong
stack; the moments before and after can. The box keeps the last few seconds of analysed frames
(`FrameRing`: scaled down and JPEG-compressed, with their detections); an alert waits
(`ClipMaker`) until the frames after its evidence are in, then its clip (WebM, VP8) and its
annotated whole frame go to the room as one `evidence` message through the outbox, like every
message. WebM/VP8 because OpenCV writes it with no codec library beside it and every browser
plays it; H.264 needs an encoder the box does not ship.
"""

from __future__ import annotations

import base64
import os
import tempfile
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from edge.messages import EvidenceClip
from vision.detections import Detections
from vision.follow.records import Alert


@dataclass(frozen=True)
class ClipSettings:
    before_s: float = 3.0
    """Seconds of video before the evidence frame: the hand on its way, the block in the air."""
    after_s: float = 2.0
    """Seconds after it: where the tiles came to rest. The clip leaves this much after the
    alert (the alert itself goes at once)."""
    width: int = 960
    """Frames are kept, and the still sent, this wide: a tile about 27 px long at 1080p becomes
    14 px, its pips still countable in the still; the room can zoom it."""
    clip_width: int = 640
    """The clip's width: a tile about 18 px long, a hand's movement plain to see."""
    clip_fps: float = 5.0
    """The clip's frame rate: a hand crossing the table is in 2-3 of its frames. A 5 s clip of a
    busy simulated table at 640 px: 204 KB at 5 frames a second, 370 KB at 10 (VP8 as OpenCV
    writes it, its bitrate not settable), against the room's 1 MB a message."""
    quality: int = 80
    """JPEG quality of the kept frames and the still."""


@dataclass(frozen=True)
class Kept:
    t: float
    jpeg: bytes
    corners: NDArray[np.float64]
    """Detections' corners, in the kept frame's pixels."""
    labels: tuple[str, ...]


COLOURS = {"back": (160, 160, 160), "die": (0, 140, 255)}
"""BGR: backs grey, dice orange, faces (every other label) green, the alert's zone red."""
FACE_COLOUR, ZONE_COLOUR = (60, 200, 60), (40, 40, 230)


class FrameRing:
    """The last `seconds` of analysed frames, `width` wide, JPEG-compressed, each with its
    detections: what a clip is cut from."""

    def __init__(self, seconds: float, width: int, quality: int) -> None:
        self.seconds = seconds
        self.width = width
        self.quality = quality
        self.frames: deque[Kept] = deque()

    def add(self, t: float, image: NDArray[np.uint8], detections: Detections) -> None:
        scale = self.width / image.shape[1]
        small = cv2.resize(image, (self.width, round(image.shape[0] * scale)),
                           interpolation=cv2.INTER_AREA)  # fmt: skip
        ok, jpeg = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, self.quality])
        if not ok:
            return
        self.frames.append(Kept(t, jpeg.tobytes(), detections.corners * scale, detections.labels))
        while self.frames and self.frames[0].t < t - self.seconds:
            self.frames.popleft()

    @property
    def bytes(self) -> int:
        return sum(len(k.jpeg) for k in self.frames)

    def between(self, since: float, until: float) -> list[Kept]:
        return [k for k in self.frames if since <= k.t <= until]


def annotate(kept: Kept, zone: tuple[int, int, int, int] | None, scale: float) -> NDArray[np.uint8]:
    """The kept frame with its detections outlined and the alert's zone (frame pixels x0, y0,
    x1, y1, drawn at `scale`) boxed."""
    image = np.asarray(cv2.imdecode(np.frombuffer(kept.jpeg, np.uint8), cv2.IMREAD_COLOR))
    for corners, label in zip(kept.corners, kept.labels, strict=True):
        colour = COLOURS.get("die" if label.startswith("die") else label, FACE_COLOUR)
        cv2.polylines(image, [np.round(corners).astype(np.int32)], True, colour, 1, cv2.LINE_AA)
    if zone is not None:
        x0, y0, x1, y1 = (round(v * scale) for v in zone)
        cv2.rectangle(image, (x0, y0), (x1, y1), ZONE_COLOUR, 2)
    cv2.putText(image, f"{kept.t:.1f} s", (8, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.7,
                (255, 255, 255), 2, cv2.LINE_AA)  # fmt: skip
    return image


FFMPEG_TAG_NOTE = b"OpenCV: FFMPEG: tag "
"""The start of the line OpenCV's FFmpeg writer prints straight to stderr for every WebM it opens
(WebM names codecs without four-letter tags, so any fourcc is 'not supported' before it falls
back to the right codec); no log level silences it."""


@contextmanager
def _without_tag_note() -> Iterator[None]:
    """Stderr held aside while a writer opens, then given back without OpenCV's tag note: a
    line another thread logs meanwhile is kept, only later."""
    with tempfile.TemporaryFile() as held:
        saved = os.dup(2)
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            for line in held:
                if not line.startswith(FFMPEG_TAG_NOTE):
                    os.write(2, line)


def encode_webm(frames: list[NDArray[np.uint8]], fps: float) -> bytes:
    """The frames as a WebM (VP8) video."""
    height, width = frames[0].shape[:2]
    with tempfile.TemporaryDirectory(prefix="clip-") as scratch:
        path = Path(scratch) / "clip.webm"
        with _without_tag_note():
            vp8 = cv2.VideoWriter.fourcc(*"VP80")
            writer = cv2.VideoWriter(str(path), vp8, fps, (width, height))
        if not writer.isOpened():
            return b""
        for frame in frames:
            writer.write(frame)
        writer.release()
        return path.read_bytes()


@dataclass(frozen=True)
class Evidence:
    """One alert's clip and still, ready to send."""

    alert_id: str
    evidence_time_s: float
    from_s: float
    to_s: float
    frame_jpeg: bytes
    clip_webm: bytes

    def encoded(self) -> tuple[str | None, str | None]:
        """The still and the clip as the envelope carries them (base64), None where empty."""
        return tuple(  # type: ignore[return-value]
            base64.b64encode(data).decode() if data else None
            for data in (self.frame_jpeg, self.clip_webm)
        )


@dataclass(frozen=True)
class ClipJob:
    """One alert's frames, taken from the ring: made into evidence off the analysis thread."""

    alert: Alert
    zone: tuple[int, int, int, int] | None
    frames: tuple[Kept, ...]


@dataclass
class ClipMaker:
    """Alerts waiting for the frames after their evidence; `due` hands each one's frames over
    once they are in (all at once, `flush`, at the end of a video), and `make` turns them into
    evidence (annotating and encoding take about 0.2 s a clip: the box runs it on a thread of
    its own, so the analysis does not wait)."""

    settings: ClipSettings
    fps: float
    """The analysed frame rate."""
    image_width: int
    ring: FrameRing = field(init=False)
    waiting: list[tuple[Alert, tuple[int, int, int, int] | None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        s = self.settings
        self.ring = FrameRing(s.before_s + s.after_s + 1.0, s.width, s.quality)

    def add(self, t: float, image: NDArray[np.uint8], detections: Detections) -> None:
        self.ring.add(t, image, detections)

    def want(self, alert: Alert, zone: tuple[int, int, int, int] | None) -> None:
        self.waiting.append((alert, zone))

    def due(self, now: float) -> list[ClipJob]:
        ready = [w for w in self.waiting if w[0].evidence_time_s + self.settings.after_s <= now]
        return self._jobs(ready)

    def flush(self) -> list[ClipJob]:
        return self._jobs(list(self.waiting))

    def _jobs(self, ready: list[tuple[Alert, tuple[int, int, int, int] | None]]) -> list[ClipJob]:
        jobs = []
        for alert, zone in ready:
            self.waiting.remove((alert, zone))
            at = alert.evidence_time_s
            frames = self.ring.between(at - self.settings.before_s, at + self.settings.after_s)
            if frames:
                jobs.append(ClipJob(alert, zone, tuple(frames)))
        return jobs

    def make(self, job: ClipJob) -> Evidence:
        """The still (the kept frame nearest the evidence time) and the clip, annotated; the
        clip keeps every `step`-th frame to play at about `clip_fps`."""
        s = self.settings
        at, frames = job.alert.evidence_time_s, job.frames
        scale = s.width / self.image_width
        nearest = frames[int(np.argmin([abs(k.t - at) for k in frames]))]
        ok, jpeg = cv2.imencode(".jpg", annotate(nearest, job.zone, scale),
                                [cv2.IMWRITE_JPEG_QUALITY, 85])  # fmt: skip
        step = max(1, round(self.fps / s.clip_fps))
        drawn = [annotate(k, job.zone, scale) for k in frames[::step]]
        height = round(drawn[0].shape[0] * s.clip_width / drawn[0].shape[1])
        small = [cv2.resize(d, (s.clip_width, height), interpolation=cv2.INTER_AREA) for d in drawn]
        clip = encode_webm(small, self.fps / step)
        return Evidence(str(job.alert.id), at, frames[0].t, frames[-1].t,
                        jpeg.tobytes() if ok else b"", clip)  # fmt: skip


def evidence_body(evidence: Evidence, table_id: str) -> dict[str, Any]:
    """The `evidence` message's body (`edge.messages.EvidenceClip`)."""
    return EvidenceClip(
        id=f"{evidence.alert_id}:evidence",
        alert_id=evidence.alert_id,
        table_id=table_id,
        evidence_time_s=round(evidence.evidence_time_s, 3),
        from_s=round(evidence.from_s, 3),
        to_s=round(evidence.to_s, 3),
    ).model_dump(mode="json")
