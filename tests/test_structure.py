"""The import rule: what a box runs never imports the simulator or the training tools.

A table's edge box knows its own table from `vision/` (layout, labels, calibration) and checks
its models against frames shipped with them; the simulator (`vision/synth`) and the tools that
train and measure models (`vision/training`, the `[train]` extra) build on the runtime, never
the reverse."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OFF_LIMITS = ("vision.synth", "vision.training", "ultralytics", "torch")
RUNTIME = ("rules", "edge", "vision", "room")
NOT_RUNTIME = {
    ROOT / "vision" / "synth": "the simulator",
    ROOT / "vision" / "training": "training and measurement",
    ROOT / "room" / "demo.py": "the demo's simulated tables",
    ROOT / "room" / "shift.py": "the demo's simulated shift",
}


def imported(path: Path) -> set[str]:
    """Every module a file imports, at any depth (a function's late import counts too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def runtime_files() -> list[Path]:
    files = []
    for package in RUNTIME:
        for path in sorted((ROOT / package).rglob("*.py")):
            if not any(path == p or p in path.parents for p in NOT_RUNTIME):
                files.append(path)
    return files


def breaks_rule(module: str) -> bool:
    return any(module == bad or module.startswith(bad + ".") for bad in OFF_LIMITS)


@pytest.mark.parametrize("module", ["vision.synth.round", "vision.training", "torch.nn", "rules"])
def test_the_rule_tells_off_limits_modules(module: str) -> None:
    assert breaks_rule(module) == (module != "rules")


def test_no_runtime_file_imports_the_simulator_or_training() -> None:
    files = runtime_files()
    assert ROOT / "vision" / "follow" / "follower.py" in files
    assert ROOT / "edge" / "app.py" in files
    offenders = {
        str(path.relative_to(ROOT)): sorted(filter(breaks_rule, imported(path)))
        for path in files
        if any(map(breaks_rule, imported(path)))
    }
    assert offenders == {}


def test_a_late_import_is_seen(tmp_path: Path) -> None:
    """The scan sees an import inside a function, where a shortcut would hide it."""
    source = tmp_path / "late.py"
    source.write_text("def f():\n    from vision.synth.round import Studio\n    return Studio\n")
    assert "vision.synth.round" in imported(source)


ROOM_ONLY = ("sqlalchemy", "alembic", "fastapi", "starlette", "uvicorn", "jinja2", "multipart",
             "itsdangerous", "argon2", "matplotlib", "psycopg", "room")  # fmt: skip
"""The `[room]` extra's packages and the room itself: the edge image is built without them."""


def test_the_box_loads_without_the_simulator_training_or_the_room() -> None:
    """What `paigow run` imports, imported in a fresh interpreter: nothing off limits loads,
    nor any package of the room's extra (the edge image installs the core dependencies only)."""
    code = (
        "import sys, edge.app, vision.replay, vision.selfcheck, vision.follow, vision.table\n"
        "import paigow.cli\n"
        f"print(sorted(m for m in sys.modules if m.startswith({OFF_LIMITS + ROOM_ONLY!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_box_and_the_room_extra_agree() -> None:
    """Every package the room-only rule names is in the `[room]` extra, not the core."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    room = " ".join(project["optional-dependencies"]["room"])
    for package in ("sqlalchemy", "fastapi", "uvicorn", "argon2", "matplotlib", "psycopg"):
        assert package in room and package not in core, package
