"""`paigow replay`: a recorded table video through detection, reading, location and round
following, to `alerts.jsonl`, `rounds.jsonl` and evidence images.

The frames are analysed at a fixed rate (10 a second by default, what the edge box sustains);
the rest are skipped, as the live service does when it falls behind.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detections import Detections
from vision.follow import Raised, RoundFollower
from vision.follow.records import Alert
from vision.pipeline import ahead
from vision.progress import progress as progress_bar
from vision.reuse import Region, Reuse
from vision.table import TableConfig

if TYPE_CHECKING:  # the models' module loads onnxruntime, which a label replay never needs
    from vision.detector import Candidates


class ReplayError(ValueError):
    """A video, label file or output folder replay cannot use, in one line."""


class Source(Protocol):
    """Where a frame's detections come from: `scan` may run a frame ahead (on another thread,
    `vision.pipeline.ahead`), `detections` is given what it returned."""

    def scan(self, image: NDArray[np.uint8]) -> Candidates | None: ...

    def detections(
        self, index: int, t: float, image: NDArray[np.uint8], scanned: Candidates | None = None
    ) -> Detections: ...


WHOLE_FRAME_THREADS = 1
"""onnxruntime threads per session on whole frames: the detector's scan of the next frame runs
on one core while this frame's dice close-up, refiner and reader run on the other
(`vision.pipeline`), each session on its caller's thread. A 1080p frame of a busy table on the
2-core Xeon: 13.3 frames/s one stage after another with 2 threads, 17.8 overlapped with 2 threads
each (four threads on two cores), 19.7 overlapped with 1 (docs/benchmarks.md). The detections
are the same to the bit with 1 thread or 2 (the kernels split their work, not their sums)."""
REUSE_THREADS = 2
"""With reuse the looks at a frame's changed parts depend on the frame before, so they cannot
run a frame ahead; only decoding does, and the models run one after another on both cores."""


class ModelSource:
    """The shipped models: the detector finds (and refines its boxes where the refiner ships),
    the reader reads, its flatness crop sized for the boxes it is given. With `reuse`, the
    models look again only where the frame changed (`vision.reuse`)."""

    def __init__(self, reuse: bool = False, threads: int | None = None) -> None:
        from vision.crops import LEAN_MARGIN, REFINED_LEAN_MARGIN
        from vision.detector import MARKERS_MODEL, Detector, MarkerDetector, MarkerWatch, Reader

        if threads is None:
            threads = REUSE_THREADS if reuse else WHOLE_FRAME_THREADS
        self.detector = Detector(threads=threads)
        lean = REFINED_LEAN_MARGIN if self.detector.refiner else LEAN_MARGIN
        self.reader = Reader(threads=threads, lean_margin=lean)
        self.reuse = Reuse(self.analyse) if reuse else None
        markers = MarkerDetector(threads=threads) if MARKERS_MODEL.exists() else None
        self.watch = MarkerWatch(markers) if markers else None

    def analyse(self, image: NDArray[np.uint8], region: Region | None = None) -> Detections:
        """The models on the whole frame, or on one region of it (no markers there: they are
        looked for on their own schedule, `MarkerWatch`)."""
        return self.reader.read(image, self.detector.detect(image, region))

    def look(self, image: NDArray[np.uint8]) -> Detections:
        """Everything the models find in one picture, markers included."""
        from vision.detector import MarkerWatch

        found = self.analyse(image)
        return MarkerWatch(self.watch.detector).watch(0.0, image, found) if self.watch else found

    def scan(self, image: NDArray[np.uint8]) -> Candidates | None:
        return None if self.reuse else self.detector.scan(image)

    def detections(
        self, index: int, t: float, image: NDArray[np.uint8], scanned: Candidates | None = None
    ) -> Detections:
        if self.reuse:
            found = self.reuse.detections(t, image)
        else:
            if scanned is None:
                scanned = self.detector.scan(image)
            found = self.reader.read(image, self.detector.resolve(image, scanned))
        return self.watch.watch(t, image, found) if self.watch else found


class LabelSource:
    """The simulator's per-frame labels (`frames.json.gz`) in place of the models: follows a
    round as a perfect detector would see it, to measure the round logic on its own. The
    context markers (the chung) are given too, as a detector of them would."""

    def __init__(self, path: Path) -> None:
        try:
            with gzip.open(path, "rt") as handle:
                frames = json.load(handle)
        except (OSError, json.JSONDecodeError) as error:
            raise ReplayError(f"cannot read labels {path}: {error}") from None
        self.frames = {round(f["t"], 3): f["objects"] + f.get("markers", []) for f in frames}

    def scan(self, image: NDArray[np.uint8]) -> None:
        return None

    def detections(
        self, index: int, t: float, image: NDArray[np.uint8], scanned: Candidates | None = None
    ) -> Detections:
        objects = self.frames.get(round(t, 3), [])
        if not objects:
            return Detections.empty()
        return Detections(
            np.array([o["corners"] for o in objects], np.float64).reshape(-1, 4, 2),
            np.ones(len(objects)),
            tuple(o["label"] for o in objects),
        )


def source_scan(source: Source) -> Callable[[tuple[int, float, NDArray[np.uint8], int]], Any]:
    """`source.scan` of each of `frames`' items: the stage that runs a frame ahead."""
    return lambda item: source.scan(item[2])


@dataclass(frozen=True)
class Summary:
    frames: int
    analysed: int
    rounds: int
    alerts: int
    seconds: float


def frames(video: Path, fps: float) -> Iterator[tuple[int, float, NDArray[np.uint8], int]]:
    """(index, video time, image, frame count) of each frame to analyse at `fps`."""
    capture = cv2.VideoCapture(str(video))
    if not capture.isOpened():
        raise ReplayError(f"cannot open video {video}")
    rate = capture.get(cv2.CAP_PROP_FPS) or fps
    total = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
    step = max(rate / fps, 1.0)
    index, due = 0, 0.0
    try:
        while True:
            ok, image = capture.read()
            if not ok:
                break
            if index + 1e-6 >= due:
                yield index, round(index / rate, 3), image, total
                due += step
            index += 1
    finally:
        capture.release()


def replay(
    video: Path,
    table: TableConfig,
    out: Path,
    source: Source,
    *,
    fps: float = 10.0,
    cut: str | None = None,
    cut_options: dict[str, str] | None = None,
    progress: bool = True,
) -> Summary:
    """Follow every round in the video; write what was raised under `out`."""
    follower = RoundFollower(table, run=video.stem, cut=cut, cut_options=cut_options)
    out.mkdir(parents=True, exist_ok=True)
    (out / "evidence").mkdir(exist_ok=True)
    counts = {"frames": 0, "analysed": 0, "rounds": 0, "alerts": 0}
    last_t = 0.0
    with (out / "alerts.jsonl").open("w") as alerts, (out / "rounds.jsonl").open("w") as rounds:

        def write(raised: list[Raised]) -> None:
            for item in raised:
                record = item.record
                if isinstance(record, Alert):
                    if item.evidence is not None and item.evidence.size:
                        name = f"evidence/{record.id}.jpg"
                        cv2.imwrite(str(out / name), item.evidence)
                        record = record.model_copy(update={"evidence_image": name})
                    alerts.write(record.model_dump_json() + "\n")
                    counts["alerts"] += 1
                else:
                    rounds.write(record.model_dump_json() + "\n")
                    counts["rounds"] += 1

        bar = None
        for (index, t, image, total), scanned in ahead(frames(video, fps), source_scan(source)):
            if bar is None:
                bar = progress_bar(total, "replay", "frame", enabled=progress)
            if image.shape[1::-1] != tuple(table.image_size):
                raise ReplayError(
                    f"{video} is {image.shape[1]}x{image.shape[0]} but {table.table_id}'s "
                    f"calibration is for {table.image_size[0]}x{table.image_size[1]}"
                )
            found = source.detections(index, t, image, scanned)
            write(follower.follow(t, found, image))
            bar.update(index + 1 - bar.n)
            counts["analysed"] += 1
            counts["frames"] = index + 1
            last_t = t
        write(follower.finish(last_t))
        if bar is not None:
            bar.close()
    return Summary(counts["frames"], counts["analysed"], counts["rounds"], counts["alerts"], last_t)
