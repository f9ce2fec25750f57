"""Benchmark: `paigow replay` of a simulated 1080p round, the models looking only where the
frame changed (the default) and on every frame whole (`--whole-frames`), back to back on this CPU.

    python3 benchmarks/replay.py [--seed 777001] [--rules mbs-2020] [--resolution 1920x1080]

Renders the round to MP4 as `paigow synth round` does, calibrates it from its first frame, and
replays it at 10 analysed frames a second, decoding included, each way in turn. Reports the
wall clock, how many times real time that is, the alerts (the round is clean), how much of
each frame the models looked at (a replay is only as fast as the table is still) and how many
boxes they refined and read a frame.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.detections import Detections  # noqa: E402
from vision.detector import Candidates  # noqa: E402
from vision.replay import ModelSource, replay  # noqa: E402
from vision.reuse import Region  # noqa: E402
from vision.table import TableConfig  # noqa: E402


class Watched(ModelSource):
    """The shipped models, noting the share of each frame they looked at and how many boxes
    they refined and read."""

    def __init__(self, reuse: bool) -> None:
        super().__init__(reuse=reuse)
        self.looked: list[float] = []
        self.boxes = 0

    def analyse(self, image: NDArray[np.uint8], region: Region | None = None) -> Detections:
        found = super().analyse(image, region)  # only looks with reuse: whole frames scan apart
        self.boxes += len(found)
        return found

    def detections(
        self, index: int, t: float, image: NDArray[np.uint8], scanned: Candidates | None = None
    ) -> Detections:
        found = super().detections(index, t, image, scanned)
        self.looked.append(self.reuse.looked if self.reuse else 1.0)
        if not self.reuse:
            self.boxes += len(found)
        return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=777001)
    parser.add_argument("--rules", default="mbs-2020")
    parser.add_argument("--resolution", default="1920x1080")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        paigow = [sys.executable, "-m", "paigow.cli"]
        subprocess.run([*paigow, "synth", "round", "--seed", str(args.seed), "--rules",
                        args.rules, "--out", str(folder / "round"), "--resolution",
                        args.resolution], check=True, capture_output=True)  # fmt: skip
        video = folder / "round" / "round.mp4"
        subprocess.run([*paigow, "calibrate", str(video), "--table-id", "bench", "--rules",
                        args.rules, "--out", str(folder / "table.yaml")],
                       check=True, capture_output=True)  # fmt: skip
        table = TableConfig.read(folder / "table.yaml")
        plan = json.loads((folder / "round" / "truth.json").read_text())
        print(f"round {args.seed} ({args.rules}, {args.resolution}), cut {plan['cut']}")
        for reuse in (True, False):
            source = Watched(reuse)
            started = time.perf_counter()
            summary = replay(video, table, folder / f"out-{reuse}", source, cut=plan["cut"],
                             cut_options=plan["cut_options"], progress=False)  # fmt: skip
            wall = time.perf_counter() - started
            looked = np.array(source.looked)
            way = "only what changed" if reuse else "every frame whole"
            print(f"{way:18}: {wall:5.1f} s for {summary.seconds:.1f} s of video "
                  f"({summary.seconds / wall:.2f}x real time), {summary.analysed} frames, "
                  f"{summary.alerts} alert(s); frames looked at whole {np.mean(looked == 1):.0%}, "
                  f"in part {np.mean((looked > 0) & (looked < 1)):.0%}, not at all "
                  f"{np.mean(looked == 0):.0%}; mean share looked at "
                  f"{looked.mean():.2f}; boxes refined and read a frame "
                  f"{source.boxes / max(len(looked), 1):.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
