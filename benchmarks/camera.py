"""Benchmark: what the camera thread costs, reading every frame as an image or only the due ones.

    python3 benchmarks/camera.py [--resolution 3840x2160] [--camera-fps 30] [--fps 10]

A fixture round's frames, scaled to the resolution, are written as an MP4 (MPEG-4 Part 2: the
only encoder OpenCV's FFmpeg has here; a camera's H.264 costs more to decode, and the image
conversion saved below is the same) at the camera's rate, then read as the box's camera thread
reads them: every frame decoded and converted (as before), or every frame decoded and only those
due at the analysis rate converted to an image (`edge.app.Camera`). Reported: ms a frame and the
cores it takes at the camera's rate.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import cv2

ROOT = Path(__file__).resolve().parents[1]
ROUND = ROOT / "tests" / "fixtures" / "rounds" / "nz-irregular" / "round.mp4"
FRAMES = 240


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resolution", default="3840x2160")
    parser.add_argument("--camera-fps", type=float, default=30.0)
    parser.add_argument("--fps", type=float, default=10.0, help="frames analysed a second")
    args = parser.parse_args()
    width, height = (int(v) for v in args.resolution.split("x"))
    with tempfile.TemporaryDirectory() as scratch:
        video = str(Path(scratch) / "camera.mp4")
        source = cv2.VideoCapture(str(ROUND))
        writer = cv2.VideoWriter(video, cv2.VideoWriter_fourcc(*"mp4v"), args.camera_fps,
                                 (width, height))  # fmt: skip
        for _ in range(FRAMES):
            ok, image = source.read()
            if not ok:
                break
            writer.write(cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR))
        writer.release()
        every = round(args.camera_fps / args.fps)
        for way in ("every frame an image", f"1 in {every} an image (due frames only)"):
            capture = cv2.VideoCapture(video)
            count, started = 0, time.perf_counter()
            while capture.grab():
                if way.startswith("every") or count % every == 0:
                    capture.retrieve()
                count += 1
            took = time.perf_counter() - started
            print(f"{args.resolution} at {args.camera_fps:g} fps, {way}: "
                  f"{took / count * 1000:.1f} ms a frame, "
                  f"{took / count * args.camera_fps:.2f} cores")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
