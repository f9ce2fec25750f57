"""Progress on long work: a bar on a terminal, a line every few seconds otherwise (a log file or
a CI console would get hundreds of carriage-returned bar lines)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from tqdm import tqdm

T = TypeVar("T")

LINE_EVERY_S = 5.0
"""Seconds between progress lines when the output is not a terminal."""


class Lines:
    """tqdm's `update`/`n`/`close` as a line every `LINE_EVERY_S` seconds on stderr."""

    def __init__(self, total: int, desc: str, unit: str) -> None:
        self.total, self.desc, self.unit = total, desc, unit
        self.n = 0
        self.started = self.said = time.monotonic()

    def update(self, count: int = 1) -> None:
        self.n += count
        if time.monotonic() - self.said >= LINE_EVERY_S:
            self.said = time.monotonic()
            self._say()

    def _say(self) -> None:
        share = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        print(f"{self.desc}: {self.n}/{self.total or '?'} {self.unit}s{share}, "
              f"{time.monotonic() - self.started:.0f} s", file=sys.stderr, flush=True)  # fmt: skip

    def close(self) -> None:
        self._say()


def progress(total: int, desc: str, unit: str, *, enabled: bool = True) -> Any:
    """A bar on a terminal, lines in a log, nothing when not `enabled`."""
    if not enabled:
        return tqdm(total=total, disable=True)
    if sys.stderr.isatty():
        return tqdm(total=total, desc=desc, unit=unit)
    return Lines(total, desc, unit)


def each(
    items: Iterable[T], total: int, desc: str, unit: str, *, enabled: bool = True
) -> Iterator[T]:
    """The items, with `progress` shown as they are taken."""
    bar = progress(total, desc, unit, enabled=enabled)
    try:
        for item in items:
            yield item
            bar.update(1)
    finally:
        bar.close()
