"""Training crops repainted as another maker might have made the set, so that the reader learns
a face by its pips' layout rather than by the colours and pip sizes of the sets it was shown.

A reader trained without a family reads that family's faces far worse than one it saw
(`models/MODEL_CARD.md`, leave one family out): ivory and cream bodies invert the dark sets'
lightness, charcoal's small dots are smaller than any other set's. Each recoloured crop takes
any of three moves, none of which changes what the tile is (`tiles.md`: the face is its pips'
count and layout; which are red follows from it):
- its lightness turned over with its hues kept (a black set's crop looks like an ivory set's,
  red pips still red);
- its hues turned round the wheel (another body or ink colour);
- its light or its dark parts grown or shrunk by a pixel (larger or smaller pips).
`RecolouringTrainer` puts it in front of ultralytics' own augmentations for the training split.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

RECOLOURED = 0.5
"""Share of training crops repainted: half still show the sets as rendered, which the held-out
sets of the same families are drawn like."""
LIGHTNESS_TURNED = 0.5
"""Of the repainted crops, the share with lightness turned over: about as many light-bodied as
dark-bodied crops then, where the families give two light sets of six looks."""
HUE_TURNED = 0.5
"""Of the repainted crops, the share with hues turned round by any angle."""
PIPS_RESIZED = 0.4
"""Of the repainted crops, the share whose light or dark parts grow or shrink: a pixel of a
64-px crop is a fifth to a third of a pip's radius, the spread between charcoal's dots and
cream's discs."""


def recolour(image: NDArray[np.uint8], rng: np.random.Generator) -> NDArray[np.uint8]:
    """An RGB crop repainted by the moves this module names, each drawn by `rng`."""
    if rng.random() >= RECOLOURED:
        return image
    painted = image
    if rng.random() < LIGHTNESS_TURNED:
        painted = turn_lightness(painted)
    if rng.random() < HUE_TURNED:
        painted = turn_hues(painted, int(rng.integers(1, 180)))
    if rng.random() < PIPS_RESIZED:
        painted = resize_pips(painted, grow=bool(rng.random() < 0.5))
    return painted


def turn_lightness(image: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Lightness turned over in CIE Lab, colour kept: white ink black, a black body light."""
    lab = cv2.cvtColor(image, cv2.COLOR_RGB2LAB)
    lab[..., 0] = 255 - lab[..., 0]
    return cv2.cvtColor(lab, cv2.COLOR_LAB2RGB)


def turn_hues(image: NDArray[np.uint8], turn: int) -> NDArray[np.uint8]:
    """Every hue turned by `turn` of OpenCV's 180 steps; greys stay grey."""
    hsv = cv2.cvtColor(image, cv2.COLOR_RGB2HSV)
    hsv[..., 0] = ((hsv[..., 0].astype(np.int16) + turn) % 180).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)


PIP_KERNEL = np.ones((3, 3), np.uint8)
"""A pixel each way: the smallest change of a pip's size a 64-px crop can show."""


def resize_pips(image: NDArray[np.uint8], grow: bool) -> NDArray[np.uint8]:
    """The parts lighter than their surroundings grown (or shrunk) by a pixel: light pips on a
    dark body grow, dark pips on a light one shrink, so the pair covers both kinds of set."""
    change = cv2.dilate if grow else cv2.erode
    return change(image, PIP_KERNEL)


class Recolour:
    """`recolour` on the PIL images ultralytics' classification data set hands its transforms.
    Each data loader worker draws from numpy's global generator, which ultralytics seeds per
    worker (`seed_worker`), so workers do not repaint alike."""

    def __call__(self, picture):  # type: ignore[no-untyped-def]
        from PIL import Image

        rng = np.random.default_rng(np.random.randint(2**31))
        return Image.fromarray(recolour(np.asarray(picture), rng))


def recolouring_trainer() -> type:
    """ultralytics' classification trainer with `Recolour` before the training split's own
    augmentations (built here: ultralytics is the training extra's)."""
    from torchvision import transforms
    from ultralytics.models.yolo.classify import ClassificationTrainer

    class RecolouringTrainer(ClassificationTrainer):  # type: ignore[misc]
        def build_dataset(self, img_path: str, mode: str = "train", batch=None):  # type: ignore[no-untyped-def]
            dataset = super().build_dataset(img_path, mode, batch)
            if mode == "train":
                dataset.torch_transforms = transforms.Compose(
                    [Recolour(), dataset.torch_transforms]
                )
            return dataset

    return RecolouringTrainer
