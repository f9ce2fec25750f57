"""Write constraints.txt: every package the runtime (the box's and the room's) installs, pinned
to the version tested here.

    python3 scripts/lock.py            # pin what this environment has (after the tests pass)
    python3 -m pip install -c constraints.txt -e '.[dev]'

pip resolves the runtime dependencies of pyproject.toml afresh (`--dry-run`, nothing installed),
preferring the versions installed in this environment, so the edge box image (Dockerfile) and CI
install what the tests and the accuracy runs measured: model outputs and the simulator's pixels
depend on onnxruntime's and OpenCV's versions (`vision/training/accuracy.py` keys its cache by
them).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
HEADER = """\
# The runtime's packages as tested: `python3 scripts/lock.py` writes this file.
# Used by the Dockerfile and .ci/run (`pip install -c constraints.txt ...`).
"""


SAME_VERSION = {"opencv-python": "opencv-python-headless"}
"""Packages outside the runtime pinned to a runtime package's version: ultralytics (the [train]
extra) asks for opencv-python, whose cv2 shadows the headless one; a newer one there changed
the simulator's pixels and the detector's boxes (a planted bug's fixture display no longer
showed the boxes its check drops), so both are the OpenCV the tests ran."""


def main() -> int:
    with tempfile.TemporaryDirectory() as scratch:
        installed = Path(scratch) / "installed.txt"
        report = Path(scratch) / "report.json"
        pip = [sys.executable, "-m", "pip"]
        frozen = subprocess.run(
            [*pip, "freeze", "--exclude-editable"], capture_output=True, text=True, check=False
        )
        if frozen.returncode != 0:
            print(f"error: pip could not list what is installed:\n{frozen.stderr}", file=sys.stderr)
            return 1
        installed.write_text(frozen.stdout)
        resolve = [*pip, "install", "--quiet", "--dry-run", "--ignore-installed"]
        resolve += ["-c", str(installed), "--report", str(report), f"{ROOT}[room]"]
        run = subprocess.run(resolve, capture_output=True, text=True, check=False)
        if run.returncode != 0:
            print(f"error: pip could not resolve the runtime:\n{run.stderr}", file=sys.stderr)
            return 1
        packages = json.loads(report.read_text())["install"]
    pins = sorted(
        (canonicalize_name(p["metadata"]["name"]), p["metadata"]["version"])
        for p in packages
        if p["metadata"]["name"] != "paigow-monitor"
    )
    versions = dict(pins)
    pins += [(name, versions[like]) for name, like in SAME_VERSION.items() if like in versions]
    lines = [f"{name}=={version}" for name, version in sorted(pins)]
    (ROOT / "constraints.txt").write_text(HEADER + "\n".join(lines) + "\n")
    print(f"constraints.txt: {len(pins)} packages pinned")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
