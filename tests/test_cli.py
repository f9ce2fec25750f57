"""The `paigow` command line, run as a user runs it: a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def paigow(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paigow.cli", *args], capture_output=True, text=True, check=False
    )


def test_house_way_json_has_high_low_and_clause() -> None:
    run = paigow("house-way", "--rules", "mbs-2020", "6-6", "2-2", "3-5", "4-5", "--json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["high"] == ["6-6", "3-5"]
    assert data["low"] == ["2-2", "4-5"]
    assert data["clause"]["ref"] == "App. C exceptions #1"


def test_house_way_human_output_names_hands_and_clause() -> None:
    run = paigow("house-way", "--rules", "nz-1998", "6-6 6-6 4-5 5-6")
    assert run.returncode == 0
    assert "Teen Wong" in run.stdout and "App. 4 2.3" in run.stdout


def test_deal_order_json() -> None:
    run = paigow(
        "deal-order", "--rules", "mbs-2020", "--dice", "3", "4", "5", "--banker", "1",
        "--cut", "cup-say", "--side", "right", "--layer", "top", "--json",
    )  # fmt: skip
    data = json.loads(run.stdout)
    assert data["positions"] == [4, 5, 6, 7, 8, 1, 2, 3]
    assert data["grid"][0] == [7, 7, 5, 5, 3, 3, 1, 1]
    assert len(data["grid"]) == 4


def test_deal_order_defaults_to_yat_dong_dong_from_the_right_and_takes_nz_adjustment() -> None:
    run = paigow("deal-order", "--rules", "nz-1998", "--dice", "6", "6", "6", "--banker", "3",
                 "--adjust", "-4", "--json")  # fmt: skip
    data = json.loads(run.stdout)
    assert data["cut"] == "yat-dong-dong" and data["options"] == {"side": "right"}
    assert data["first_position"] == (3 - 1 + 14 - 1) % 8 + 1
    assert data["grid"][0] == [8, 7, 6, 5, 4, 3, 2, 1]


@pytest.mark.parametrize(
    ("bank", "player", "result"),
    [("6-6 4-5 / 1-1 1-6", "4-4 4-4 / 5-5 1-6", "push"),
     ("4-4 3-5 / 1-3 1-5", "6-6 6-6 / 1-1 1-1", "win")],
)  # fmt: skip
def test_compare(bank: str, player: str, result: str) -> None:
    run = paigow("compare", "--rules", "act-2005", "--bank", bank, "--player", player, "--json")
    assert json.loads(run.stdout)["result"] == result


def test_check_setting_reports_expected_and_clause() -> None:
    run = paigow("check-setting", "--rules", "rws-2018", "6-6 4-5 / 2-2 3-5", "--json")
    data = json.loads(run.stdout)
    assert data["is_house_way"] is False
    assert data["expected"] == {"high": ["6-6", "3-5"], "low": ["2-2", "4-5"]}
    assert data["clause"]["ref"] == "App. C 1.4 #1"


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["house-way", "--rules", "mbs-2020", "7-7", "2-2", "3-5", "4-5"], "7-7"),
        (["house-way", "--rules", "mbs-2020", "6-6", "2-2", "3-5"], "4 tiles"),
        (["house-way", "--rules", "mbs-2020", "4-5", "4-5", "3-5", "1-1"], "4-5 appears 2"),
        (["house-way", "--rules", "nz-2000", "6-6", "2-2", "3-5", "4-5"], "nz-2000"),
        (["deal-order", "--rules", "mbs-2020", "--dice", "3", "4", "5", "--banker", "1",
          "--cut", "shuffle"], "shuffle"),
        (["deal-order", "--rules", "mbs-2020", "--dice", "3", "4", "--banker", "1"], "three dice"),
        (["deal-order", "--rules", "act-2005", "--dice", "3", "4", "5", "--banker", "1",
          "--adjust", "4"], "adjustment"),
        (["deal-order", "--rules", "nz-1998", "--dice", "3", "4", "5", "--banker", "1",
          "--cut", "tower"], "not named in nz-1998"),
        (["compare", "--rules", "mbs-2020", "--bank", "6-6 6-6 / 1-1 1-1",
          "--player", "6-6 4-5 / 1-1 3-6"], "6-6 appears 3"),
        (["compare", "--rules", "mbs-2020", "--bank", "6-6 6-6 1-1",
          "--player", "6-6 4-5 / 1-1 3-6"], "HIGH HIGH / LOW LOW"),
        (["quantize", "no-such-model.onnx", "--data", "."], "no model at no-such-model.onnx"),
        (["quantize", str(ROOT / "models" / "reader.onnx"), "--data", str(ROOT / "docs")],
         "no training frames"),
        (["quantize", str(ROOT / "models" / "reader.onnx")], "--data is required"),
        (["quantize", str(ROOT / "README.md"), "--decoding-only"], "not an ONNX model"),
        (["synth", "dataset", "--n", "1", "--out", "x", "--cocked-dice", "2"], "--cocked-dice"),
        (["train", "--data", str(ROOT / "tests" / "fixtures" / "images"), "--rounds", "101"],
         "--rounds: 0 to 100"),
        (["train", "--data", str(ROOT / "docs")], "not a `paigow synth dataset` folder"),
        (["train", "--data", str(ROOT / "tests" / "fixtures" / "images"), "--stage", "dice",
          "--real-dice", str(ROOT / "docs")], "--real-dice: no train/ folder"),
        (["train", "--data", str(ROOT / "tests" / "fixtures" / "images"), "--real-dice",
          str(ROOT / "docs")], "--real-dice: only with --stage dice"),
        (["no-such-command"], "no-such-command"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_with_one_line_naming_the_problem(args: list[str], names: str) -> None:
    run = paigow(*args)
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr
    assert names in lines[0]


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of things a user may hand the tool by mistake, and a good table and video."""
    import struct
    import zlib

    from vision.replay import frames
    from vision.table import calibrate

    folder = tmp_path_factory.mktemp("bad")

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        return struct.pack(">I", len(data)) + kind + data + crc

    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)  # claims 10^10 pixels
    (folder / "huge.png").write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0" * 100))
        + chunk(b"IEND", b"")
    )
    (folder / "file.txt").write_text("a file, not a folder\n")
    (folder / "garbage.mp4").write_bytes(b"not a video")
    (folder / "broken.yaml").write_text("table: [unclosed\n")
    video = ROOT / "tests" / "fixtures" / "rounds" / "nz-irregular" / "round.mp4"
    calibrate(next(frames(video, 10))[2], table_id="t1", rules="nz-1998").write(
        folder / "table.yaml"
    )
    (folder / "outbox-under-a-file.yaml").write_text(
        f"table: {folder / 'table.yaml'}\ncamera: {{source: none.mp4}}\nmqtt: {{site: s1}}\n"
        f"outbox: {{path: {folder / 'file.txt' / 'outbox.sqlite'}}}\n"
    )
    return folder


VIDEO = str(ROOT / "tests" / "fixtures" / "rounds" / "nz-irregular" / "round.mp4")


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["detect", "{d}/huge.png"], "larger than this tool reads"),
        (["replay", VIDEO, "--table", "{d}/table.yaml", "--out", "{d}/r", "--fps", "0"], "--fps"),
        (["replay", VIDEO, "--table", "{d}/table.yaml", "--out", "{d}/r", "--fps", "-5"], "--fps"),
        (["replay", VIDEO, "--table", "{d}/table.yaml", "--out", "{d}/file.txt"], "is a file"),
        (["replay", "{d}/garbage.mp4", "--table", "{d}/table.yaml", "--out", "{d}/r"],
         "cannot open video"),
        (["replay", VIDEO, "--table", "{d}/broken.yaml", "--out", "{d}/r"], "line 1, column 8"),
        (["replay", VIDEO, "--table", "/dev/null", "--out", "{d}/r"], "top level: Input should"),
        (["run", "--config", "{d}/broken.yaml"],
         "not valid YAML: while parsing a flow sequence at line 1, column 8; expected"),
        (["run", "--config", "{d}/outbox-under-a-file.yaml"], "cannot make the outbox's folder"),
        (["ingest", "--broker", "127.0.0.1:1883", "--password-file", "{d}/none",
          "--store", "{d}/s.sqlite"], "--password-file"),
        (["ingest", "--broker", "127.0.0.1:1883", "--ca-file", "{d}/none",
          "--store", "{d}/s.sqlite"], "no CA file"),
        (["ingest", "--broker", "127.0.0.1:99999", "--store", "{d}/s.sqlite"], "1 to 65535"),
        (["synth", "round", "--out", "{d}/sr", "--fps", "0"], "--fps"),
        (["retention", "--days", "nan", "--store", "{d}/s.sqlite"], "--days"),
        (["retention", "--days", "30", "--store", "{d}/none.sqlite"], "no incident store"),
        (["report", "--from", "2026-11-21", "--to", "2026-11-22", "--store", "{d}/none.sqlite"],
         "no incident store"),
        (["review", "--store", "{d}/none.sqlite"], "no incident store"),
        (["calibrate", "{d}/huge.png", "--table-id", "t/1", "--out", "{d}/t.yaml"], "--table-id"),
        (["house-way", "--rules", "nz-1998", "\uff16-\uff16", "1-3", "2-4", "5-5"], "unknown tile"),
        (["demo", "--port", "70000"], "--port"),
        (["replay", VIDEO, "--table", "{d}/table.yaml", "--out", "{d}/r", "--cut", "nonsense"],
         "unknown cut 'nonsense'"),
        (["replay", VIDEO, "--table", "{d}/table.yaml", "--out", "{d}/r",
          "--cut-option", "side=right"], "needs --cut"),
        (["replay", VIDEO, "--table", "{d}/table.yaml", "--out", "{d}/r", "--cut", "yat-dong-dong",
          "--cut-option", "side=up"], "side is"),
        (["synth", "gallery", "--out", "{d}/file.txt/g.png"], "cannot use"),
        (["users", "bob", "--role", "admin", "--store", "{d}/file.txt/s.sqlite"],
         "cannot open the incident store"),
        (["report", "--from", "2026-11-21", "--to", "2026-11-22",
          "--store", "postgresql+psycopg://nobody@127.0.0.1:1/x"],
         "cannot open the incident store"),
    ],
)  # fmt: skip
def test_bad_files_and_numbers_exit_2_in_one_line(
    bad_files: Path, args: list[str], names: str
) -> None:
    run = paigow(*(a.replace("{d}", str(bad_files)) for a in args))
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert names in lines[0]
    assert not (bad_files / "none.sqlite").exists() and not (bad_files / "s.sqlite").exists()


def test_the_store_comes_from_a_secret_file_and_its_password_is_never_shown(
    tmp_path: Path,
) -> None:
    import os

    (tmp_path / "store_url").write_text("postgresql+psycopg://paigow:hunter2@127.0.0.1:1/x\n")
    env = {**os.environ, "PAIGOW_STORE_FILE": str(tmp_path / "store_url")}
    run = subprocess.run(
        [sys.executable, "-m", "paigow.cli", "retention", "--days", "3"],
        capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    assert run.returncode == 2 and "hunter2" not in run.stderr
    assert "cannot open the incident store postgresql+psycopg://paigow:***@127.0.0.1:1/x" in (
        run.stderr
    )


@pytest.mark.parametrize("command", ["rulesets", "cuts", "irregularities"])
def test_listing_commands(command: str) -> None:
    run = paigow(command, "--json")
    assert run.returncode == 0 and json.loads(run.stdout)


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (["demo"], ["--port PORT", "(default: 8000)", "(default: 1.0)"]),
        (["report"], ["2026-11-22T06:00", "(default: every table)", "(default: report)"]),
        (["replay"], ["(default: 10.0)", "side=left|right", "layer=top|bottom", "end=head|tail"]),
        (["calibrate"], ["--cut CUT", "(default: yat-dong-dong)", "side=left|right"]),
        (["synth", "round"], ["--resolution WxH", "(default: 1280x720)", "(default: 0)"]),
    ],
)
def test_help_says_defaults_and_formats(command: list[str], said: list[str]) -> None:
    run = paigow(*command, "--help")
    text = " ".join(run.stdout.split())  # argparse wraps lines where it likes
    assert run.returncode == 0
    assert all(" ".join(s.split()) in text for s in said), text
