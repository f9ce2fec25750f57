"""Evidence clips (edge/clips.py): the seconds around an alert cut from the frame ring, annotated,
encoded, and accepted by ingest as an `evidence` message."""

from __future__ import annotations

import base64
import json
import tempfile
from pathlib import Path

import cv2
import numpy as np
import pytest

from edge.clips import ClipMaker, ClipSettings, evidence_body
from edge.messages import Envelope
from room.ingest import RefusedError, check_envelope
from vision.detections import Detections
from vision.follow.records import Alert

WIDTH, HEIGHT = 1920, 1080


def _alert(at: float) -> Alert:
    return Alert(kind="hands-swapped", severity="critical", table_id="t1", round_id="t1:r:1",
                 position=3, rules="nz-1998", clause="10.8", confidence=0.9,
                 evidence_time_s=at, raised_time_s=at)  # fmt: skip


def _frames(maker: ClipMaker, until: float, since: float = 0.0) -> None:
    box = Detections(np.array([[[900, 500], [930, 500], [930, 560], [900, 560]]], float),
                     np.ones(1), ("back",))  # fmt: skip
    for k in range(round(since * 10), round(until * 10) + 1):
        image = np.full((HEIGHT, WIDTH, 3), 40, np.uint8)
        cv2.circle(image, (100 + k * 15, 540), 30, (255, 255, 255), -1)  # something moving
        maker.add(k / 10, image, box)


def _frame_count(webm: bytes) -> int:
    with tempfile.NamedTemporaryFile(suffix=".webm") as handle:
        Path(handle.name).write_bytes(webm)
        capture = cv2.VideoCapture(handle.name)
        count = 0
        while capture.read()[0]:
            count += 1
        capture.release()
    return count


def test_an_alert_waits_for_the_seconds_after_it_then_gets_its_clip() -> None:
    maker = ClipMaker(ClipSettings(before_s=3.0, after_s=2.0), fps=10.0, image_width=WIDTH)
    _frames(maker, 6.0)
    maker.want(_alert(5.0), (800, 400, 1000, 700))
    assert maker.due(6.0) == []  # 2 s after 5.0 not yet seen
    _frames(maker, 7.5, since=6.1)
    (job,) = maker.due(7.5)
    made = maker.make(job)
    assert (made.from_s, made.to_s) == (2.0, 7.0)
    assert made.clip_webm[:4] == b"\x1a\x45\xdf\xa3"  # EBML: a WebM file
    assert _frame_count(made.clip_webm) == 26  # 5 s at 5 frames a second
    still = cv2.imdecode(np.frombuffer(made.frame_jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert still.shape[1] == 960
    red = (still[:, :, 2] > 180) & (still[:, :, 1] < 80)  # the zone's box is drawn
    assert red.sum() > 400
    assert maker.waiting == []


def test_the_ring_keeps_only_the_seconds_a_clip_needs() -> None:
    maker = ClipMaker(ClipSettings(before_s=3.0, after_s=2.0), fps=10.0, image_width=WIDTH)
    _frames(maker, 20.0)
    times = [k.t for k in maker.ring.frames]
    assert min(times) >= 20.0 - 6.0 - 1e-9 and max(times) == 20.0


@pytest.mark.parametrize(("table", "refused"), [("t1", False), ("t2", True)])
def test_ingest_takes_an_evidence_message_only_from_its_own_table(
    table: str, refused: bool
) -> None:
    maker = ClipMaker(ClipSettings(), fps=10.0, image_width=WIDTH)
    _frames(maker, 5.0)
    alert = _alert(2.0)
    maker.want(alert, None)
    (made,) = [maker.make(job) for job in maker.flush()]
    envelope = Envelope(message_id=f"{alert.id}:evidence", seq=7, table_id=table,
                        kind="evidence", produced_at=0.0, body=evidence_body(made, "t1"),
                        evidence_jpeg=base64.b64encode(made.frame_jpeg).decode(),
                        clip_webm=base64.b64encode(made.clip_webm).decode())  # fmt: skip
    payload = json.dumps(envelope.model_dump(mode="json")).encode()
    assert len(payload) < 1_048_576  # under ingest's message limit
    if refused:
        with pytest.raises(RefusedError):
            check_envelope(f"paigow/s1/{table}/evidence", payload, now=1.0)
    else:
        assert check_envelope("paigow/s1/t1/evidence", payload, now=1.0)["kind"] == "evidence"


def test_opencvs_tag_note_is_dropped_and_other_stderr_kept(
    capfd: pytest.CaptureFixture[str],
) -> None:
    import os

    from edge.clips import _without_tag_note

    with _without_tag_note():
        os.write(2, b"OpenCV: FFMPEG: tag 0x30385056/'VP80' is not supported\n")
        os.write(2, b"a log line from another thread\n")
    assert capfd.readouterr().err == "a log line from another thread\n"
