"""The two-stage pipe (vision/pipeline.py): in order, a frame ahead, errors and stops passed
through, and the shipped models answering the same frames the same way through it."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from vision.pipeline import ahead
from vision.replay import ModelSource
from vision.synth.round import Studio


def test_items_come_back_in_order_with_their_first_stage() -> None:
    got = list(ahead(range(50), lambda k: k * k))
    assert got == [(k, k * k) for k in range(50)]


def test_the_first_stage_of_the_next_item_runs_while_the_caller_works() -> None:
    started: dict[int, float] = {}

    def first(k: int) -> int:
        started[k] = time.monotonic()
        return k

    finished: dict[int, float] = {}
    for k, _ in ahead(range(3), first):
        time.sleep(0.2)  # the caller's stage
        finished[k] = time.monotonic()
    assert started[1] < finished[0] and started[2] < finished[1]


def test_it_runs_at_most_depth_items_ahead() -> None:
    taken: list[int] = []

    def items():  # type: ignore[no-untyped-def]
        for k in range(100):
            taken.append(k)
            yield k

    stream = ahead(items(), lambda k: k, depth=1)
    assert next(stream) == (0, 0)
    time.sleep(0.3)
    assert len(taken) <= 3  # the one handed over, one waiting, one scanned and held
    stream.close()


@pytest.mark.parametrize("where", ["items", "first"])
def test_what_the_worker_raises_is_raised_to_the_caller(where: str) -> None:
    def items():  # type: ignore[no-untyped-def]
        yield 1
        if where == "items":
            raise OSError("camera gone")
        yield 2

    def first(k: int) -> int:
        if where == "first" and k == 2:
            raise OSError("camera gone")
        return k

    stream = ahead(items(), first)
    assert next(stream) == (1, 1)
    with pytest.raises(OSError, match="camera gone"):
        next(stream)


def test_the_worker_stops_when_the_caller_does() -> None:
    before = threading.active_count()
    stream = ahead(iter(range(10**9)), lambda k: k)
    next(stream)
    stream.close()
    assert threading.active_count() == before


def test_the_models_answer_the_same_through_the_pipe_as_one_stage_after_another() -> None:
    """Two threads share the model sessions: the detections must be those of the plain
    sequence, to the bit (the accuracy measured sequentially then holds for the pipe)."""
    studio = Studio.of(4242, "mbs-2020", [], (1920, 1080))
    images = [studio.frame(t)[0] for t in (4.0, 12.0, 16.0, 16.1, 16.2, 22.0)]
    models = ModelSource()
    plain = [models.analyse(image) for image in images]
    piped = [models.detections(0, 0.0, image, scanned)
             for image, scanned in ahead(images, models.scan)]  # fmt: skip
    assert sum(len(found) for found in plain) > 60
    for one, other in zip(plain, piped, strict=True):
        assert one.labels == other.labels
        assert np.array_equal(one.corners, other.corners)
        assert np.array_equal(one.confidence, other.confidence)


def test_progress_off_a_terminal_is_a_line_every_few_seconds(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import vision.progress

    bar = vision.progress.progress(200, "replay", "frame")  # stderr is captured: no terminal
    assert isinstance(bar, vision.progress.Lines)
    for _ in range(100):
        bar.update()  # within the first few seconds: quiet
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(vision.progress, "LINE_EVERY_S", 0.0)
    bar.update(50)
    bar.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("replay: 150/200 frames (75%)") and len(lines) == 2
