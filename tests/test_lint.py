"""ruff and mypy stay clean: run as part of the one test command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "command",
    [["ruff", "check", "."], ["ruff", "format", "--check", "."], ["mypy"]],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_tool_is_clean(command: list[str]) -> None:
    run = subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_compose_demo_points_at_files_that_exist() -> None:
    from edge.config import EdgeConfig

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for service in compose["services"].values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), source
    config = EdgeConfig.load(ROOT / "deploy" / "demo" / "edge.yaml")
    assert Path(config.camera.source).is_file() and config.table.is_file()


def test_constraints_pin_the_runtime_as_installed() -> None:
    """constraints.txt (`scripts/lock.py`) pins each runtime dependency of pyproject.toml to a
    version its range allows, and the tests run on exactly those versions: the edge box image
    installs what was tested."""
    import tomllib
    from importlib.metadata import version

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    lines = (ROOT / "constraints.txt").read_text().splitlines()
    pins = dict(line.split("==") for line in lines if line and not line.startswith("#"))
    assert all(canonicalize_name(name) == name for name in pins)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = project["dependencies"] + project["optional-dependencies"]["room"]
    for needed in map(Requirement, runtime):
        name = canonicalize_name(needed.name)
        assert name in pins, f"{name} is not pinned"
        assert needed.specifier.contains(pins[name]), f"{name}=={pins[name]} outside {needed}"
        assert version(name) == pins[name], f"{name} {version(name)} installed, {pins[name]} pinned"


def test_every_planted_bug_still_finds_its_line(tmp_path: Path) -> None:
    """The planted-bug pass (after the suite, in `.ci/run`) plants each bug by replacing one
    line; a refactor that moves the line would stop that pass. Checked here in a second, and
    checked to fail on a file that lost one."""
    import runpy

    planted = runpy.run_path(str(ROOT / "scripts/planted_bugs.py"), run_name="planted_bugs")
    assert planted["misplaced"](planted["BUGS"]) == []
    bug = planted["BUGS"][0]
    (tmp_path / bug.path).parent.mkdir(parents=True)
    (tmp_path / bug.path).write_text("nothing of the original here\n")
    assert planted["misplaced"]([bug], tmp_path) == [
        f"{bug.name}: {bug.path} no longer holds its line once"
    ]
