"""Both cores busy: the first stage of frame n+1 runs beside the rest of frame n.

Run one after another, a frame's stages leave one of the edge box's two cores idle most of the
time (onnxruntime's two threads on the small networks of the later stages mostly wait for each
other). The round follower must see the frames in order, so the stages form a pipe one frame
deep: a worker thread takes each frame from its source (decoding it: a video's next frame or
the camera's newest) and runs the first stage on it, and the caller runs the rest of the frame
and follows it. onnxruntime, OpenCV and numpy release the GIL while they compute, so the two
threads use both cores; each model session then runs on its caller's thread alone
(`vision.replay.ModelSource`). docs/benchmarks.md has the measurement.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
U = TypeVar("U")

HANDOFF_WAIT_S = 0.1
"""How often a waiting worker checks whether the caller has stopped taking its results."""


@dataclass(frozen=True)
class _Failed:
    error: BaseException


_END = object()


def ahead(items: Iterable[T], first: Callable[[T], U], depth: int = 1) -> Iterator[tuple[T, U]]:
    """Each item with `first(item)`, in order, worked out on a worker thread at most `depth`
    items ahead of the caller. What the worker raises is raised to the caller; the worker stops
    when the caller stops iterating."""
    handoff: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def hand(thing: object) -> bool:
        while not stop.is_set():
            try:
                handoff.put(thing, timeout=HANDOFF_WAIT_S)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if stop.is_set() or not hand((item, first(item))):
                    return
        except BaseException as error:  # handed to the caller, who decides
            hand(_Failed(error))
            return
        hand(_END)

    worker = threading.Thread(target=work, name="first-stage", daemon=True)
    worker.start()
    try:
        while True:
            got = handoff.get()
            if got is _END:
                return
            if isinstance(got, _Failed):
                raise got.error
            yield got  # type: ignore[misc]
    finally:
        stop.set()
        worker.join()
