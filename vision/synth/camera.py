"""A pinhole camera with radial lens distortion, looking down at the table.

Table coordinates are millimetres: x to the dealer's right, y away from the dealer towards the
players, z up from the cloth.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

Points = NDArray[np.float64]


@dataclass(frozen=True)
class Camera:
    width: int
    height: int
    focal: float
    centre: tuple[float, float]
    rotation: NDArray[np.float64]  # rows: camera x (right), y (down), z (forward) in table axes
    position: NDArray[np.float64]  # mm, table coordinates
    k1: float = 0.0
    k2: float = 0.0

    @classmethod
    def look_at(
        cls,
        width: int,
        height: int,
        position: tuple[float, float, float],
        target: tuple[float, float, float],
        hfov_deg: float,
        up: tuple[float, float, float] = (0.0, 1.0, 0.0),
        k1: float = 0.0,
        k2: float = 0.0,
    ) -> Camera:
        eye = np.asarray(position, dtype=np.float64)
        forward = np.asarray(target, dtype=np.float64) - eye
        forward /= np.linalg.norm(forward)
        hint = np.asarray(up, dtype=np.float64)
        hint = hint - hint.dot(forward) * forward
        hint /= np.linalg.norm(hint)
        down = -hint
        right = np.cross(down, forward)
        rotation = np.stack([right, down, forward])
        focal = (width / 2) / np.tan(np.radians(hfov_deg) / 2)
        return cls(width, height, focal, (width / 2, height / 2), rotation, eye, k1, k2)

    def to_camera(self, points: Points) -> Points:
        return (np.asarray(points, dtype=np.float64) - self.position) @ self.rotation.T

    def project(self, points: Points) -> Points:
        """Pixel coordinates of table points (N x 3), lens distortion included."""
        cam = self.to_camera(points)
        z = np.maximum(cam[:, 2], 1e-6)
        x, y = cam[:, 0] / z, cam[:, 1] / z
        r2 = x * x + y * y
        scale = 1 + self.k1 * r2 + self.k2 * r2 * r2
        cx, cy = self.centre
        pixels = np.stack([x * scale * self.focal + cx, y * scale * self.focal + cy], axis=1)
        return np.clip(pixels, -1e6, 1e6)  # points behind the camera stay drawable numbers

    def depth(self, points: Points) -> NDArray[np.float64]:
        return self.to_camera(points)[:, 2]

    def table_homography(self) -> NDArray[np.float64]:
        """Undistorted homography from table-plane mm (z = 0) to pixels."""
        k = np.array([[self.focal, 0, self.centre[0]], [0, self.focal, self.centre[1]], [0, 0, 1]])
        t = -self.rotation @ self.position
        m = np.column_stack([self.rotation[:, 0], self.rotation[:, 1], t])
        return k @ m

    def plane_maps(
        self, plane_to_pixels: NDArray[np.float64]
    ) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Maps for cv2.remap that draw a picture of the table plane (given by the homography
        from its pixels to undistorted image pixels) as this camera sees it, distortion and all."""
        step = 8  # the maps are smooth: solve on a coarse grid, then interpolate
        gw, gh = self.width // step + 2, self.height // step + 2
        # sample where cv2.resize will put each coarse cell's centre, so interpolation is exact
        grid_u = (np.arange(gw) + 0.5) * step - 0.5
        grid_v = (np.arange(gh) + 0.5) * step - 0.5
        us, vs = np.meshgrid(grid_u, grid_v)
        cx, cy = self.centre
        xd, yd = (us - cx) / self.focal, (vs - cy) / self.focal
        xu, yu = xd.copy(), yd.copy()
        for _ in range(6):  # invert x_d = x_u (1 + k1 r^2 + k2 r^4) by fixed-point iteration
            r2 = xu * xu + yu * yu
            scale = 1 + self.k1 * r2 + self.k2 * r2 * r2
            xu, yu = xd / scale, yd / scale
        undistorted = np.stack([xu * self.focal + cx, yu * self.focal + cy, np.ones_like(xu)], -1)
        source = undistorted @ np.linalg.inv(plane_to_pixels).T
        with np.errstate(divide="ignore", invalid="ignore"):
            map_x = (source[..., 0] / source[..., 2]).astype(np.float32)
            map_y = (source[..., 1] / source[..., 2]).astype(np.float32)
        behind = source[..., 2] <= 0  # above the horizon: nothing of the table
        map_x[behind] = -1e4
        map_y[behind] = -1e4
        size = (gw * step, gh * step)
        map_x = cv2.resize(map_x, size, interpolation=cv2.INTER_LINEAR)[: self.height, : self.width]
        map_y = cv2.resize(map_y, size, interpolation=cv2.INTER_LINEAR)[: self.height, : self.width]
        return map_x, map_y
