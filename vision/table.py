"""A table's calibration, `table.yaml`: its layout in table millimetres, its rule book, the
banker's default position, and the homography from the cloth to the camera image.

`calibrate()` finds the homography from the four ArUco markers printed at the cloth's corners
(`TableLayout.marker_centres`), or from the image points of those four marker centres given by
hand when markers are covered or absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import cv2
import numpy as np
import yaml
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rules import CUTS, find_ruleset
from vision.detections import Detections, box_sides
from vision.layout import TableLayout

Point = tuple[float, float]


class CalibrationError(ValueError):
    """An image or a table.yaml the calibration cannot use, named in one line."""


class Zone(BaseModel):
    model_config = ConfigDict(extra="forbid")
    polygon: list[Point] = Field(title="Corners", description="Table mm, in order around.")


def read_yaml(path: Path) -> Any:
    """A YAML file's data; a file that cannot be read or parsed is a ValueError in one line
    (PyYAML's own message spans several, with a drawing of the line)."""
    try:
        return yaml.safe_load(path.read_text())
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror}") from None
    except yaml.MarkedYAMLError as error:
        said = [
            f"{text} at line {mark.line + 1}, column {mark.column + 1}"
            for text, mark in (
                (error.context, error.context_mark),
                (error.problem, error.problem_mark),
            )
            if text and mark
        ]
        raise ValueError(f"{path} is not valid YAML: {'; '.join(said)}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not valid YAML: {type(error).__name__}") from None


ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"
"""Table and site ids (and message ids): one MQTT topic level each, so no `/`, `+` or `#`; what
the boxes write (uuids, `t1`, `floor-2.t14`), 64 characters at most."""


class TableConfig(BaseModel):
    """One table's `table.yaml`."""

    model_config = ConfigDict(extra="forbid")
    table_id: str = Field(
        pattern=ID_PATTERN, title="Table id", description="As alerts name it, e.g. `pgt-03`."
    )
    rules: str = Field(title="Rule book", description="nz-1998, act-2005, rws-2018 or mbs-2020.")
    banker: Annotated[int, Field(ge=1, le=8)] = Field(
        1, title="Banker's position", description="The box the chung marks when the house banks."
    )
    bank: Literal["house", "player", "co-bank"] | None = Field(
        None,
        title="Who banks",
        description="Fixes which cuts the rule book allows (NZ 9.5, ACT 8.6-8.7): a house bank "
        "is cut Yat Dong Dong. Unset: any banker, so any approved cut.",
    )
    cut: str = Field(
        "yat-dong-dong",
        title="Cut",
        description="The table's usual cut: the round record names it where the delivery "
        "fits it and others alike.",
    )
    cut_options: dict[str, str] = Field(
        default_factory=dict, title="Cut options", description="e.g. `side: right`."
    )
    cuts: list[str] = Field(
        default_factory=list,
        title="Other cuts dealt here",
        description="RWS names no cuts: with `cut`, the only ones accepted. NZ: those a "
        "supervisor may direct for a house bank. Elsewhere the rule book's list is accepted.",
    )
    house_way_positions: list[Annotated[int, Field(ge=1, le=8)]] = Field(
        default_factory=list,
        title="House-set positions",
        description="Players' positions whose hands the house sets: checked like the bank's.",
    )
    image_size: tuple[int, int] = Field(title="Image size", description="Width, height (px).")
    homography: list[list[float]] = Field(
        title="Cloth to image", description="3 x 3 homography from table mm to image pixels."
    )
    reprojection_error_px: float = Field(
        title="Calibration error", description="RMS distance of the reference points (px)."
    )
    positions: dict[int, Zone] = Field(title="Positions", description="Hand zone of boxes 1-8.")
    stacking_area: Zone
    dice_area: Zone
    bank_area: Zone
    capital_area: Zone | None = Field(
        default=None,
        title="Centre circle",
        description="Where a player-banker's capital is laid (RWS 3.16, MBS 3.26.1): chips "
        "there, or none, tell who banks. Left out, the circle is not watched.",
    )

    @field_validator("rules")
    @classmethod
    def _known_rules(cls, value: str) -> str:
        find_ruleset(value)  # raises with the list of known ids
        return value

    @field_validator("cut")
    @classmethod
    def _known_cut(cls, value: str) -> str:
        if value not in CUTS:
            raise ValueError(f"unknown cut {value!r}; `paigow cuts` lists them")
        return value

    @field_validator("cuts")
    @classmethod
    def _known_cuts(cls, value: list[str]) -> list[str]:
        for cut in value:
            cls._known_cut(cut)
        return value

    @field_validator("homography")
    @classmethod
    def _three_by_three(cls, value: list[list[float]]) -> list[list[float]]:
        if len(value) != 3 or any(len(row) != 3 for row in value):
            raise ValueError("the homography is a 3 x 3 matrix")
        if abs(np.linalg.det(np.asarray(value))) < 1e-12:
            raise ValueError("the homography is singular")
        return value

    @field_validator("positions")
    @classmethod
    def _eight_positions(cls, value: dict[int, Zone]) -> dict[int, Zone]:
        if sorted(value) != list(range(1, 9)):
            raise ValueError("positions 1 to 8 each need a zone")
        return value

    def to_image(self, points: NDArray[np.float64]) -> NDArray[np.float64]:
        """Table mm (N x 2) to image pixels."""
        projected = cv2.perspectiveTransform(
            np.asarray(points, np.float64).reshape(-1, 1, 2), np.asarray(self.homography)
        )
        return projected.reshape(-1, 2)

    def to_table(self, pixels: NDArray[np.float64]) -> NDArray[np.float64]:
        inverse = np.linalg.inv(np.asarray(self.homography))
        return cv2.perspectiveTransform(
            np.asarray(pixels, np.float64).reshape(-1, 1, 2), inverse
        ).reshape(-1, 2)

    def write(self, path: Path) -> None:
        path.write_text(yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False))

    @classmethod
    def read(cls, path: Path) -> TableConfig:
        try:
            return cls.model_validate(read_yaml(path))
        except ValidationError as error:  # before ValueError, which it is: one line, not many
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "top level"
            raise CalibrationError(f"{path}: {where}: {first['msg']}") from None
        except ValueError as error:
            raise CalibrationError(str(error)) from None


def _zone_around(x: float, y: float, half_w: float, half_h: float, angle: float = 0.0) -> Zone:
    c, s = np.cos(angle), np.sin(angle)
    corners = [(-half_w, -half_h), (half_w, -half_h), (half_w, half_h), (-half_w, half_h)]
    return Zone(polygon=[(x + c * dx - s * dy, y + s * dx + c * dy) for dx, dy in corners])


def layout_zones(layout: TableLayout) -> dict[str, object]:
    """The zones of the standard layout: each position's hand area, and the dealer's areas."""
    positions = {
        p: _zone_around(*layout.hand_spots[p - 1], 110, 70, layout.hand_angle(p) - np.pi / 2)
        for p in range(1, 9)
    }
    return {
        "positions": positions,
        "stacking_area": _zone_around(*layout.stack_area, 180, 70),
        "dice_area": _zone_around(*layout.dice_area, 90, 90),
        "bank_area": _zone_around(*layout.bank_area, 120, 60),
        "capital_area": _circle_around(*layout.capital_area, layout.capital_radius),
    }


def _circle_around(x: float, y: float, radius: float, corners: int = 16) -> Zone:
    angles = np.linspace(0, 2 * np.pi, corners, endpoint=False)
    return Zone(polygon=[(x + radius * np.cos(a), y + radius * np.sin(a)) for a in angles])


def find_markers(
    image: NDArray[np.uint8], layout: TableLayout
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Image points and their table points from every printed marker the camera sees."""
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    parameters = cv2.aruco.DetectorParameters()
    # With the default margin (3 px) the detector dropped a whole marker near the frame's
    # bottom edge in two of 231 simulated tables (rounds 700047, 700114), which then could not
    # be calibrated; a marker cut by the edge still does not decode.
    parameters.minDistanceToBorder = 0
    detector = cv2.aruco.ArucoDetector(dictionary, parameters)
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    corners, ids, _ = detector.detectMarkers(gray)
    image_points, table_points = [], []
    for found, marker in zip(corners, [] if ids is None else ids.ravel(), strict=False):
        if 0 <= marker < len(layout.marker_centres):
            image_points.extend(found.reshape(4, 2))
            table_points.extend(layout.marker_corners(int(marker)))
    return np.asarray(image_points, np.float64), np.asarray(table_points, np.float64)


def calibrate(
    image: NDArray[np.uint8],
    *,
    table_id: str,
    rules: str,
    banker: int = 1,
    points: list[Point] | None = None,
    layout: TableLayout | None = None,
) -> TableConfig:
    """The table's calibration from one overhead frame."""
    layout = layout or TableLayout()
    if points is not None:
        if len(points) != 4:
            raise CalibrationError("give the image points of the 4 marker centres, near left first")
        image_points = np.asarray(points, np.float64)
        table_points = np.asarray(layout.marker_centres, np.float64)
    else:
        image_points, table_points = find_markers(image, layout)
        if len(image_points) < 12:  # two markers leave the far side of the table a guess
            raise CalibrationError(
                f"found {len(image_points) // 4} of the 4 corner markers (need 3): "
                "give the marker centres with --points instead"
            )
    homography, _ = cv2.findHomography(table_points, image_points, 0)
    if homography is None:
        raise CalibrationError("the points do not determine a homography (are three in a line?)")
    projected = cv2.perspectiveTransform(table_points.reshape(-1, 1, 2), homography).reshape(-1, 2)
    error = float(np.sqrt(np.mean(np.sum((projected - image_points) ** 2, axis=1))))
    height, width = image.shape[:2]
    return TableConfig.model_validate({
        "table_id": table_id, "rules": rules, "banker": banker,
        "image_size": (width, height), "homography": homography.tolist(),
        "reprojection_error_px": round(error, 3), **layout_zones(layout),
    })  # fmt: skip


class Locate:
    """Stage: put each detection on the table (mm) and in the zone it lies in."""

    def __init__(self, table: TableConfig) -> None:
        self.table = table
        zones = {f"p{p}": z for p, z in table.positions.items()}
        zones |= {"bank": table.bank_area, "stack": table.stacking_area, "dice": table.dice_area}
        self.zones = {name: np.asarray(z.polygon, np.float64) for name, z in zones.items()}

    def locate(self, detections: Detections) -> Detections:
        if not len(detections):
            return detections.with_places(np.zeros((0, 2)), ())
        xy = self.table.to_table(detections.corners.mean(axis=1))
        return detections.with_places(xy, self.zones_of(xy))

    def sizes(self, detections: Detections) -> NDArray[np.float64]:
        """N x 2: each box's length and width on the cloth (mm), the mean of its opposite
        sides as the calibration maps them, so that the same tile measures the same anywhere
        in view."""
        return box_sides(self.on_cloth(detections.corners)) if len(detections) else np.zeros((0, 2))

    def on_cloth(self, corners: NDArray[np.float64]) -> NDArray[np.float64]:
        """Boxes' corners (N x 4 x 2, image pixels) on the cloth (mm)."""
        if not len(corners):
            return np.zeros((0, 4, 2))
        return self.table.to_table(corners.reshape(-1, 2)).reshape(-1, 4, 2)

    def zones_of(self, points: NDArray[np.float64]) -> tuple[str, ...]:
        """Each point's zone ("" for none), the first zone in order that holds it: every point
        against every zone at once, as the follower asks for every frame's detections."""
        found = np.full(len(points), "", dtype=object)
        left = np.ones(len(points), dtype=bool)
        for name, polygon in self.zones.items():
            inside = left & _inside(polygon, points)
            found[inside] = name
            left &= ~inside
        return tuple(found)

    def in_centre_circle(self, points: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Whether each point (table mm) lies in the centre circle, where a player-banker's
        capital is laid; none does where the calibration has no circle."""
        circle = self.table.capital_area
        if circle is None or not len(points):
            return np.zeros(len(points), bool)
        return _inside(np.asarray(circle.polygon, np.float64), points)

    def zone_of(self, point: NDArray[np.float64]) -> str:
        return self.zones_of(np.asarray(point, np.float64).reshape(1, 2))[0]

    def image_box(self, zone: str, margin: float = 60.0) -> tuple[int, int, int, int]:
        """The zone's bounding box in the image (px), grown by `margin` mm: evidence crops."""
        polygon = self.zones[zone]
        centre = polygon.mean(axis=0)
        grown = centre + (polygon - centre) * (1 + margin / np.abs(polygon - centre).max())
        pixels = self.table.to_image(grown)
        width, height = self.table.image_size
        x1, y1 = np.clip(pixels.min(axis=0), 0, [width - 1, height - 1])
        x2, y2 = np.clip(pixels.max(axis=0), 0, [width - 1, height - 1])
        return int(x1), int(y1), int(x2) + 1, int(y2) + 1


def _inside(polygon: NDArray[np.float64], points: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Which points (N x 2) lie inside a convex polygon given in order around (either way)."""
    edges = np.roll(polygon, -1, axis=0) - polygon
    offsets = points[:, None, :] - polygon[None, :, :]
    cross = edges[:, 0] * offsets[..., 1] - edges[:, 1] * offsets[..., 0]
    return np.all(cross >= 0, axis=1) | np.all(cross <= 0, axis=1)  # type: ignore[no-any-return]
