"""Regenerate the small rendered fixtures under tests/fixtures/ (kept under 8 MB in all).

python3 scripts/make_fixtures.py
"""

from __future__ import annotations

import shutil
from pathlib import Path

from vision.synth.dataset import write_dataset
from vision.synth.round import simulate_round

ROOT = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
ROUNDS = {
    "mbs-clean": (1, "mbs-2020", []),
    "nz-irregular": (2, "nz-1998", ["house-way-violation", "wrong-first-position"]),
}


def main() -> None:
    for name, (seed, rules_id, irregularities) in ROUNDS.items():
        out = ROOT / "rounds" / name
        shutil.rmtree(out, ignore_errors=True)
        simulate_round(out, seed, rules_id, irregularities, fps=10, resolution=(1280, 720))
    images = ROOT / "images"
    shutil.rmtree(images, ignore_errors=True)
    write_dataset(images, 4, 7, resolution=(1280, 720), val_fraction=0.0)
    shutil.rmtree(images / "obb" / "images")  # hard links of images/: no need to commit twice
    total = sum(f.stat().st_size for f in ROOT.rglob("*") if f.is_file())
    print(f"fixtures: {total / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
