"""Render a scene through a camera: image, instance mask, and a label per visible object."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.layout import TableLayout
from vision.synth.camera import Camera
from vision.synth.scene import BGR, Box, Prism, Thing
from vision.synth.textures import MM_PER_PX, Image

LIGHT = np.array([0.35, -0.25, 0.9]) / np.linalg.norm([0.35, -0.25, 0.9])
NEAR = 50.0
"""Objects closer to the camera than this (mm) are not drawn."""
MIN_VISIBLE = 0.4
"""An object is labelled when at least this share of its labelled face is in view."""

# Box faces: name, corner indices in drawing order, local outward normal. The sprite's top-left
# goes to the first corner: for "+z" that is (-x, +y), the face's "top end".
FACE_NAMES = ("+z", "-z", "+x", "-x", "+y", "-y")
FACE_CORNERS = np.array(
    [(6, 7, 5, 4), (0, 1, 3, 2), (7, 3, 1, 5), (2, 6, 4, 0), (3, 7, 6, 2), (4, 5, 1, 0)]
)
FACE_NORMALS = np.array(
    [(0, 0, 1), (0, 0, -1), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0)], dtype=np.float64
)


@dataclass(frozen=True)
class Label:
    """One object as the camera sees it."""

    index: int
    label: str | None
    kind: str
    corners: NDArray[np.float64]  # 4 x 2 pixels, the labelled face (distortion included)
    box: tuple[float, float, float, float]  # x1, y1, x2, y2 of the corners, clipped to the image
    visible: float  # share of the labelled face in view, 0..1
    tags: dict[str, object]

    @property
    def labelled(self) -> bool:
        return self.label is not None and self.visible >= MIN_VISIBLE


@dataclass(frozen=True)
class Rendering:
    image: Image
    labels: list[Label]
    mask: NDArray[np.uint16]
    """Which object each pixel shows: 2 (i + 1) for object i's labelled face, 2 (i + 1) + 1 for
    its other faces, 0 for the cloth."""


@dataclass(frozen=True)
class Look:
    """Lighting and sensor effects for one frame."""

    gradient: tuple[float, float, float]  # brightness at centre, gradient along x, along y
    vignette: float
    white_balance: tuple[float, float, float]
    glare: tuple[float, float, float] | None  # x, y (0..1 of frame), strength
    shadow: float  # how dark cast shadows are, 0..1
    blur: int  # motion-blur length in pixels (0: none)
    blur_angle: float
    noise: float  # sensor noise sigma

    @classmethod
    def random(cls, rng: np.random.Generator, *, blur_chance: float = 0.2) -> Look:
        glare = None
        if rng.random() < 0.35:
            glare = (
                float(rng.uniform(0.1, 0.9)),
                float(rng.uniform(0.1, 0.9)),
                float(rng.uniform(20, 70)),
            )
        blur = int(rng.integers(2, 7)) if rng.random() < blur_chance else 0
        return cls(
            (
                float(rng.uniform(0.7, 1.2)),
                float(rng.uniform(-0.25, 0.25)),
                float(rng.uniform(-0.25, 0.25)),
            ),
            float(rng.uniform(0, 0.35)),
            (
                float(rng.uniform(0.85, 1.15)),
                float(rng.uniform(0.92, 1.08)),
                float(rng.uniform(0.85, 1.15)),
            ),
            glare,
            float(rng.uniform(0.2, 0.5)),
            blur,
            float(rng.uniform(0, np.pi)),
            float(rng.uniform(1, 6)),
        )


class Renderer:
    """Draws scenes on one table cloth through one camera; reuse it across frames."""

    def __init__(self, camera: Camera, cloth: Image, layout: TableLayout) -> None:
        self.camera = camera
        self.layout = layout
        h = camera.table_homography()
        # cloth pixel (u, v) -> table mm (x, y): x = u * s - W/2, y = D - v * s
        cloth_to_table = np.array(
            [[MM_PER_PX, 0, -layout.width / 2], [0, -MM_PER_PX, layout.depth], [0, 0, 1]]
        )
        # Objects are small, so each is drawn with its distorted corners; only the cloth needs
        # the full per-pixel lens model.
        self.background = cv2.remap(
            cloth,
            *camera.plane_maps(h @ cloth_to_table),
            cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(35, 35, 40),
        )
        self._light_cache: dict[tuple[float, ...], NDArray[np.float32]] = {}

    def render(self, things: list[Thing], look: Look, rng: np.random.Generator) -> Rendering:
        cam = self.camera
        image = self.background.copy()
        mask = np.zeros((cam.height, cam.width), np.uint16)
        self._shadows(image, things, look)
        order = self._painting_order(things)
        labelled_faces: dict[int, NDArray[np.float64]] = {}
        for i in order:
            thing = things[i]
            if isinstance(thing, Box):
                face = self._draw_box(image, mask, thing, i)
                if face is not None:
                    labelled_faces[i] = face
            else:
                top = self._draw_prism(image, mask, thing, i)
                if top is not None and thing.label is not None:
                    labelled_faces[i] = top
        labels = self._labels(things, labelled_faces, mask)
        image = self._finish(image, look, rng)
        return Rendering(image, labels, mask)

    # -- geometry --------------------------------------------------------------------------

    def _painting_order(self, things: list[Thing]) -> list[int]:
        """Lower objects first; at one height, farther from the camera first."""
        if not things:
            return []
        centres, lows = [], []
        for thing in things:
            if isinstance(thing, Box):
                centres.append(thing.centre)
                lows.append(thing.centre[2] - thing.size[2] / 2)
            else:
                centres.append((*thing.footprint.mean(0), (thing.z0 + thing.z1) / 2))
                lows.append(thing.z0)
        depth = self.camera.depth(np.asarray(centres, dtype=np.float64))
        return sorted(range(len(things)), key=lambda i: (round(lows[i] / 5.0), -depth[i]))

    def _visible(self, centre: NDArray[np.float64], normal: NDArray[np.float64]) -> bool:
        return float(normal.dot(self.camera.position - centre)) > 0

    # -- drawing ---------------------------------------------------------------------------

    def _draw_box(
        self, image: Image, mask: NDArray[np.uint16], box: Box, index: int
    ) -> NDArray[np.float64] | None:
        corners = box.corners()
        if self.camera.depth(corners).min() < NEAR:
            return None  # touching the lens: nothing sensible to draw
        pixels = self.camera.project(corners)
        normals = FACE_NORMALS @ box.rotation.T
        centres = corners[FACE_CORNERS].mean(axis=1)
        facing = ((self.camera.position - centres) * normals).sum(axis=1) > 0
        shades = 0.55 + 0.45 * np.maximum(normals @ LIGHT, 0.0)
        up = int(np.argmax(normals[:, 2]))
        textures = (box.top, box.bottom, *box.sides)
        labelled = None
        for face in np.flatnonzero(facing):
            quad = pixels[FACE_CORNERS[face]]
            self._paint(image, quad, textures[face], float(shades[face]))
            tag = 2 * (index + 1) if face == up else 2 * (index + 1) + 1
            cv2.fillConvexPoly(mask, np.round(quad).astype(np.int32), tag)
            if face == up:
                labelled = corners[FACE_CORNERS[face]]
        return labelled

    def _draw_prism(
        self, image: Image, mask: NDArray[np.uint16], prism: Prism, index: int
    ) -> NDArray[np.float64] | None:
        """Draw the prism; its top (table mm), the face a labelled prism is labelled by."""
        foot = prism.footprint
        n = len(foot)
        bottom = np.column_stack([foot, np.full(n, prism.z0)])
        top = np.column_stack([foot, np.full(n, prism.z1)])
        if min(self.camera.depth(bottom).min(), self.camera.depth(top).min()) < NEAR:
            return None
        pb, pt = self.camera.project(bottom), self.camera.project(top)
        tag = 2 * (index + 1) + 1
        for k in range(n):
            j = (k + 1) % n
            edge = foot[j] - foot[k]
            normal = np.array([edge[1], -edge[0], 0.0])
            normal /= np.linalg.norm(normal) or 1.0
            centre = np.array([*(foot[k] + foot[j]) / 2, (prism.z0 + prism.z1) / 2])
            if not self._visible(centre, normal):
                continue
            quad = np.array([pb[k], pb[j], pt[j], pt[k]])
            shade = 0.5 + 0.4 * max(0.0, float(normal.dot(LIGHT)))
            self._fill(image, mask, quad, prism.colour, shade, tag)
        top_tag = tag - 1 if prism.label is not None else tag  # counted as its labelled face
        self._fill(image, mask, pt, prism.top_colour or prism.colour, 1.0, top_tag)
        return top

    @staticmethod
    def _fill(
        image: Image,
        mask: NDArray[np.uint16],
        polygon: NDArray[np.float64],
        colour: BGR,
        shade: float,
        tag: int,
    ) -> None:
        points = np.round(polygon).astype(np.int32)
        cv2.fillConvexPoly(image, points, tuple(int(c * shade) for c in colour), cv2.LINE_AA)
        cv2.fillConvexPoly(mask, points, tag)

    def _paint(
        self, image: Image, quad: NDArray[np.float64], texture: Image | BGR, shade: float
    ) -> None:
        if not isinstance(texture, np.ndarray):
            colour = tuple(int(c * shade) for c in texture)
            cv2.fillConvexPoly(image, np.round(quad).astype(np.int32), colour, cv2.LINE_AA)
            return
        h, w = image.shape[:2]
        x0, y0 = np.floor(quad.min(0)).astype(int)
        x1, y1 = np.ceil(quad.max(0)).astype(int) + 1
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 <= x0 or y1 <= y0:
            return
        th, tw = texture.shape[:2]
        src = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], np.float32)
        dst = (quad - [x0, y0]).astype(np.float32)
        warp = cv2.getPerspectiveTransform(src, dst)
        patch = cv2.warpPerspective(texture, warp, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
        alpha = patch[..., 3:4].astype(np.float32) * (1 / 255)
        roi = image[y0:y1, x0:x1]
        colour = patch[..., :3].astype(np.float32) * shade
        roi[:] = (roi * (1 - alpha) + colour * alpha).astype(np.uint8)

    def _shadows(self, image: Image, things: list[Thing], look: Look) -> None:
        shade = np.zeros(image.shape[:2], np.uint8)
        direction = -LIGHT[:2] / LIGHT[2]
        for thing in things:
            if isinstance(thing, Box):
                points = thing.corners()
            else:
                n = len(thing.footprint)
                points = np.vstack(
                    [
                        np.column_stack([thing.footprint, np.full(n, z)])
                        for z in (thing.z0, thing.z1)
                    ]
                )
            ground = points[:, :2] + points[:, 2:3] * direction
            flat = np.column_stack([ground, np.zeros(len(ground))])
            hull = cv2.convexHull(self.camera.project(flat).astype(np.float32))
            cv2.fillConvexPoly(shade, np.round(hull).astype(np.int32), 255)
        if not shade.any():
            return
        soft = cv2.GaussianBlur(shade, (0, 0), 2.5)
        keep = cv2.convertScaleAbs(soft, alpha=-look.shadow, beta=255)
        image[:] = cv2.multiply(image, cv2.merge([keep, keep, keep]), scale=1 / 255)

    # -- labels and camera effects ------------------------------------------------------------

    def _labels(
        self, things: list[Thing], faces: dict[int, NDArray[np.float64]], mask: NDArray[np.uint16]
    ) -> list[Label]:
        cam = self.camera
        counts = np.bincount(mask.ravel(), minlength=2 * (len(things) + 2))
        labels = []
        for i, thing in enumerate(things):
            if i not in faces:
                labels.append(
                    Label(
                        i,
                        thing.label,
                        thing.kind,
                        np.zeros((4, 2)),
                        (0.0, 0.0, 0.0, 0.0),
                        0.0,
                        thing.tags,
                    )
                )
                continue
            corners = cam.project(faces[i])
            seen = int(counts[2 * (i + 1)])
            full = _polygon_area(corners, cam.width, cam.height) if seen else 1.0
            if len(corners) != 4:  # a prism's round top: labelled by the box around it
                corners = cv2.boxPoints(cv2.minAreaRect(corners.astype(np.float32))).astype(
                    np.float64
                )
            visible = min(1.0, seen / full) if full else 0.0
            low, high = corners.min(0), corners.max(0)
            x1, y1 = min(max(low[0], 0.0), cam.width), min(max(low[1], 0.0), cam.height)
            x2, y2 = min(max(high[0], 0.0), cam.width), min(max(high[1], 0.0), cam.height)
            labels.append(
                Label(
                    i,
                    thing.label,
                    thing.kind,
                    corners,
                    (float(x1), float(y1), float(x2), float(y2)),
                    visible,
                    thing.tags,
                )
            )
        return labels

    def _finish(self, image: Image, look: Look, rng: np.random.Generator) -> Image:
        out = cv2.multiply(image.astype(np.float32), self._light(look))
        if look.blur:
            kernel = np.zeros((look.blur * 2 + 1,) * 2, np.float32)
            c = look.blur
            dx, dy = np.cos(look.blur_angle) * c, np.sin(look.blur_angle) * c
            cv2.line(kernel, (int(c - dx), int(c - dy)), (int(c + dx), int(c + dy)), 1.0, 1)
            out = cv2.filter2D(out, -1, kernel / kernel.sum())
        if look.noise:
            h, w = image.shape[:2]
            pool = self._noise_pool(rng)
            y = int(rng.integers(0, pool.shape[0] - h + 1))
            x = int(rng.integers(0, pool.shape[1] - w + 1))
            out = cv2.scaleAdd(pool[y : y + h, x : x + w], look.noise, out)
        return cv2.convertScaleAbs(out)

    def _noise_pool(self, rng: np.random.Generator) -> NDArray[np.float32]:
        """Unit sensor noise; each frame takes a window at a random offset of a shared field."""
        return _noise_field(self.camera.height + 64, self.camera.width + 64)

    def _light(self, look: Look) -> NDArray[np.float32]:
        """Brightness gradient, vignette, white balance and glare as one multiplier/adder map,
        worked out on a coarse grid (it is smooth) and cached per look."""
        key = (*look.gradient, look.vignette, *look.white_balance, *(look.glare or ()))
        cached = self._light_cache.get(key)
        if cached is None:
            h, w = self.camera.height, self.camera.width
            gh, gw = max(h // 16, 2), max(w // 16, 2)
            ys, xs = np.mgrid[0:gh, 0:gw].astype(np.float32)
            u, v = (xs + 0.5) / gw - 0.5, (ys + 0.5) / gh - 0.5
            base, gx, gy = look.gradient
            light = base + gx * u + gy * v - look.vignette * (u * u + v * v) * 2
            if look.glare is not None:
                cx, cy, strength = look.glare
                blob = np.exp(-((u + 0.5 - cx) ** 2 + ((v + 0.5 - cy) * h / w) ** 2) / 0.0128)
                light = light + blob * strength / 80
            coarse = light[..., None] * np.array(look.white_balance, np.float32)
            cached = cv2.resize(coarse.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
            if len(self._light_cache) > 8:
                self._light_cache.clear()
            self._light_cache[key] = cached
        return cached


@lru_cache(maxsize=4)
def _noise_field(height: int, width: int) -> NDArray[np.float32]:
    grain = np.random.default_rng(0x5E75).standard_normal((height, width), dtype=np.float32)
    return cv2.merge([grain, grain, grain])


def _polygon_area(corners: NDArray[np.float64], width: int, height: int) -> float:
    """Area in pixels of the (distorted) labelled face, clipped to the frame."""
    quad = corners.astype(np.float32)
    if quad.min() >= 0 and quad[:, 0].max() <= width and quad[:, 1].max() <= height:
        return max(float(cv2.contourArea(quad)), 1.0)
    frame = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    hull = cv2.convexHull(quad)
    area, _ = cv2.intersectConvexConvex(hull, frame)
    return max(float(area), 1.0)
