"""What happens to the command's output does not change its verdict, and never shows a traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import REPO

COMMAND = [sys.executable, "-m", "gym_contract"]
DAMAGED = REPO / "examples" / "damaged_rollouts.jsonl"
CLEAN = REPO / "examples" / "rollouts.jsonl"


def test_a_reader_that_goes_away_leaves_the_verdict_as_the_exit_status():
    for path, verdict in ((DAMAGED, 1), (CLEAN, 0)):
        process = subprocess.Popen(
            [*COMMAND, "validate", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
        )
        assert process.stdout is not None
        process.stdout.read(1)  # `| head -c 1`: one byte read, then the pipe is closed
        process.stdout.close()
        _, errors = process.communicate(timeout=60)
        assert process.returncode == verdict, errors
        assert errors == b""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("arguments", [["validate", str(CLEAN)], ["validate", "--format", "json", str(CLEAN)]])
def test_a_full_disk_is_one_line_and_exit_2(arguments):
    with open("/dev/full", "w") as full:
        result = subprocess.run([*COMMAND, *arguments], stdout=full, stderr=subprocess.PIPE, text=True, check=False)
    assert result.returncode == 2
    assert result.stderr == "gym-contract: cannot write the output: No space left on device\n"


@pytest.mark.skipif(sys.platform == "win32", reason="closes a POSIX descriptor")
@pytest.mark.parametrize(("path", "verdict"), [(DAMAGED, 1), (CLEAN, 0)])
def test_a_closed_stdout_leaves_the_verdict_as_the_exit_status(path, verdict):
    result = subprocess.run(
        [*COMMAND, "validate", str(path)],
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=lambda: os.close(1),
    )
    assert result.returncode == verdict
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
def test_ctrl_c_gives_the_partial_summary_one_line_and_exit_130():
    line = CLEAN.read_bytes().splitlines(keepends=True)[0]
    process = subprocess.Popen(
        [*COMMAND, "validate", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdin is not None
    process.stdin.write(line * 3)
    process.stdin.flush()  # stdin stays open: the command waits for more, as on a long input
    deadline = time.monotonic() + 30
    time.sleep(3.0)  # started and past its imports, checking stdin
    while process.poll() is None and time.monotonic() < deadline:
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
    output, errors = process.communicate(timeout=30)
    assert process.returncode == 130
    assert errors.decode().splitlines() == [
        "gym-contract: interrupted: the summary covers only the lines read before it"
    ]
    text = output.decode()
    assert "interrupted: this summary covers only the lines read before the interruption" in text
    assert "records 3" in text


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
def test_ctrl_c_in_json_gives_a_partial_report_that_says_so():
    line = CLEAN.read_bytes().splitlines(keepends=True)[0]
    process = subprocess.Popen(
        [*COMMAND, "validate", "--format", "json", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    process.stdin.write(line * 2)
    process.stdin.flush()
    time.sleep(3.0)
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=30)
    assert process.returncode == 130
    report = json.loads(output)
    assert report["interrupted"] is True
    assert report["records"] == 2
    assert report["lines"] == report["blank_lines"] + report["damaged_lines"] + report["records"]


def _with_terminal_stderr(arguments: list[str]) -> tuple[int, bytes, bytes]:
    """Run the command with stderr on a pseudo-terminal and stdout on a pipe; return status, stdout, stderr."""
    import select

    master, slave = os.openpty()
    process = subprocess.Popen([*COMMAND, *arguments], stdout=subprocess.PIPE, stderr=slave, cwd=REPO)
    os.close(slave)
    assert process.stdout is not None
    output = process.stdout.read()
    process.wait(timeout=60)
    shown = b""
    while select.select([master], [], [], 0.5)[0]:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal's other end is closed: all was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    return process.returncode, output, shown


@pytest.mark.skipif(sys.platform == "win32", reason="uses a POSIX pseudo-terminal")
@pytest.mark.parametrize(
    ("arguments", "label"),
    [
        (["validate", "examples/rollouts.jsonl"], b"validating"),
        (["coverage", "examples/rollouts.jsonl"], b"rating"),
        (
            ["project", "examples/rollout-7-0.jsonl", "--capture-dir", "examples/capture", "-o", os.devnull],
            b"projecting",
        ),
    ],
)
def test_progress_is_shown_on_a_terminal_stderr_and_never_mixed_into_stdout(arguments, label):
    status, output, shown = _with_terminal_stderr(arguments)
    plain = subprocess.run([*COMMAND, *arguments], capture_output=True, cwd=REPO, check=False)
    assert status == plain.returncode == 0
    assert label in shown
    assert b"\x1b" not in output
    assert output.replace(b"\r\n", b"\n").split(b" MB in ")[0] == plain.stdout.split(b" MB in ")[0]


@pytest.mark.parametrize(
    ("environment", "coloured"),
    [({}, False), ({"FORCE_COLOR": "1"}, True), ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False)],
)
def test_colour_follows_force_color_and_no_color_off_a_terminal(environment, coloured):
    result = subprocess.run(
        [*COMMAND, "validate", str(DAMAGED)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **environment},
    )
    assert result.returncode == 1
    assert ("\x1b[1;31mFAIL\x1b[0m" in result.stdout) is coloured
    assert ("\x1b[36mschema_violation\x1b[0m" in result.stdout) is coloured
    if not coloured:
        assert "\x1b" not in result.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="uses a POSIX pseudo-terminal")
@pytest.mark.parametrize(("environment", "coloured"), [({}, True), ({"NO_COLOR": "1"}, False)])
def test_a_terminal_gets_colour_unless_no_color_says_otherwise(environment, coloured):
    master, slave = os.openpty()
    process = subprocess.Popen(
        [*COMMAND, "validate", "--quiet", str(DAMAGED)],
        stdout=slave,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **environment},
    )
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the command ended and closed its side
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert process.wait(timeout=60) == 1
    assert (b"\x1b[1;31mFAIL\x1b[0m" in shown) is coloured


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "arguments",
    [
        ["coverage", "examples/rollouts.jsonl"],
        ["lineage", "examples/capture/7-0.capture.jsonl"],
        ["schema", "show", "trajectory"],
        ["project", "examples/rollout-7-0.jsonl", "--capture-dir", "examples/capture"],
        ["outcome", "opencode", "examples/reference/opencode-1.17.11-export.json"],
    ],
)
def test_every_command_says_a_full_disk_in_one_line_with_exit_2(arguments):
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [*COMMAND, *arguments], stdout=full, stderr=subprocess.PIPE, text=True, check=False, cwd=REPO
        )
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == "gym-contract: cannot write the output: No space left on device"
    assert "Traceback" not in result.stderr


def test_project_keeps_its_verdict_when_the_reader_goes_away(tmp_path):
    rollout = (REPO / "examples" / "rollout-7-0.jsonl").read_bytes()
    path = tmp_path / "rollouts.jsonl"
    path.write_bytes(b'{"broken\n' + rollout * 40)
    process = subprocess.Popen(
        [*COMMAND, "project", str(path), "--capture-dir", str(REPO / "examples" / "capture")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )
    assert process.stdout is not None
    process.stdout.read(1)
    process.stdout.close()
    _, errors = process.communicate(timeout=120)
    assert process.returncode == 1  # the damaged first line, whatever became of the output
    assert b"Traceback" not in errors


def test_a_command_that_writes_files_writes_them_whole_when_its_messages_reader_goes_away(tmp_path: Path):
    """`export atif … | head -1` and `export otel … 2>&1 | head -1`: the product is the files, not the messages."""
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(b"garbage\n" + CLEAN.read_bytes() + b"garbage\n")
    runs = [
        (["export", "atif", str(CLEAN), "-o", str(tmp_path / "atif")], "stdout", 0),
        (["export", "atif", str(damaged), "-o", str(tmp_path / "damaged-atif")], "stderr", 1),
        (["export", "otel", str(damaged), "-o", str(tmp_path / "spans.json")], "stderr", 1),
    ]
    for arguments, read, verdict in runs:
        process = subprocess.Popen([*COMMAND, *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
        stream = process.stdout if read == "stdout" else process.stderr
        assert stream is not None
        stream.readline()  # the first line read, then the pipe is closed
        stream.close()
        process.communicate(timeout=120)
        assert process.returncode == verdict, arguments
    assert len(list((tmp_path / "atif").iterdir())) == len(list((tmp_path / "damaged-atif").iterdir())) == 6
    assert len(json.loads((tmp_path / "spans.json").read_text())["resourceSpans"]) == 6
