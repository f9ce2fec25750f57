"""Benchmark: labelled 1280x720 frames per second from the synthetic table, on one core.

    taskset -c 0 python3 benchmarks/synth.py

Two figures: frames of a round (one camera and cloth per round, as `paigow synth round`
renders them) and data-set images (a new camera, scene and look per image, JPEG encoding
included). Rendering includes the instance mask and every label.
"""

from __future__ import annotations

import argparse
import time

import cv2
import numpy as np

from vision.layout import TableLayout
from vision.synth.dataset import _cloth, cloth_styles, render_sample
from vision.synth.render import Look, Renderer
from vision.synth.round import RoundScene, plan_round, round_camera
from vision.synth.sampler import TileSize
from vision.synth.textures import cloth_image, random_cloth


def round_frames(frames: int) -> float:
    layout = TableLayout()
    rng = np.random.default_rng(1)
    plan = plan_round(1, "mbs-2020", [])
    scene = RoundScene(plan, layout, TileSize.random(rng), 1)
    renderer = Renderer(
        round_camera(rng, 1280, 720), cloth_image(random_cloth(rng), layout), layout
    )
    look = Look.random(rng, blur_chance=0.0)
    times = np.linspace(0, scene.time.end, frames, endpoint=False)
    start = time.perf_counter()
    labelled = 0
    for t in times:
        things, _ = scene.things(float(t))
        labelled += sum(lb.labelled for lb in renderer.render(things, look, rng).labels)
    elapsed = time.perf_counter() - start
    print(
        f"round frames:   {frames / elapsed:6.1f} frames/s  ({labelled / frames:.0f} labels/frame)"
    )
    return frames / elapsed


def dataset_images(images: int) -> float:
    for style in cloth_styles(99):  # the cloth pool is built once per data set: leave it out
        _cloth(style)
    start = time.perf_counter()
    for index in range(images):
        sample = render_sample(99, 1000 + index, (1280, 720))
        cv2.imencode(".jpg", sample.rendering.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    elapsed = time.perf_counter() - start
    print(
        f"data-set images: {images / elapsed:6.1f} images/s "
        "(new scene and look each; a camera per 4 images or per close-up; JPEG)"
    )
    return images / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--images", type=int, default=100)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    round_frames(args.frames)
    dataset_images(args.images)


if __name__ == "__main__":
    main()
