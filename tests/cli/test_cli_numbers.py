"""Every numeric option of every command checks its range in the parser and names itself when it refuses."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gym_contract import cli
from gym_contract.cli import _common

BEYOND_64_BITS = "99999999999999999999999"


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command and subcommand of ``parser``, with the words that name it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*path, name))


def whole_number_options() -> list[tuple[tuple[str, ...], str]]:
    """Every option that takes a whole number (--jobs too, which also takes auto)."""
    found = []
    for path, parser in commands(cli.build_parser()):
        for action in parser._actions:
            if action.option_strings and action.type not in (None, str, _common.seconds):
                found.append((path, action.option_strings[-1]))
    return found


def test_every_typed_option_takes_a_type_that_checks_its_range():
    """No bare int or float: those take any size, and a later step fails on what the parser let in."""
    checked = (_common.WholeNumber,)
    for path, parser in commands(cli.build_parser()):
        for action in parser._actions:
            if action.type is None or action.type is str:
                continue
            kind = action.type
            assert isinstance(kind, checked) or kind in (_common.seconds, cli._jobs), (path, action.option_strings)
    assert len(whole_number_options()) >= 9


@pytest.mark.parametrize(
    ("path", "option"), whole_number_options(), ids=lambda part: " ".join(part) if isinstance(part, tuple) else part
)
def test_a_number_beyond_64_bits_is_refused_by_the_option_it_was_given_to(path, option, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main([*path, option, BEYOND_64_BITS])
    error = capsys.readouterr().err
    assert stop.value.code == 2
    assert f"gym-contract {' '.join(path)}: error: argument {option}: expected " in error
    assert BEYOND_64_BITS in error


@pytest.mark.parametrize("harness", ["claude-code", "opencode"])
def test_outcome_with_an_exit_code_beyond_64_bits_is_a_usage_error_not_a_traceback(tmp_path: Path, harness):
    stream = tmp_path / "stream.jsonl"
    stream.write_text('{"type": "result", "subtype": "success", "is_error": false}\n')
    result = subprocess.run(
        [sys.executable, "-m", "gym_contract", "outcome", harness, str(stream), "--exit-code", BEYOND_64_BITS],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "argument --exit-code: expected an exit status" in result.stderr


@pytest.mark.parametrize(
    ("option", "value"), [("--exit-code", BEYOND_64_BITS), ("--duration-s", "inf"), ("--duration-s", "1e308")]
)
def test_observe_claude_code_names_the_option_it_refuses(tmp_path: Path, capsys, option, value):
    with pytest.raises(SystemExit) as stop:
        cli.main(["observe", "claude-code", str(tmp_path), option, value])
    error = capsys.readouterr().err
    assert stop.value.code == 2
    assert f"argument {option}: expected" in error
    others = {"--exit-code", "--duration-s"} - {option}
    assert not any(other in error.split("error:")[-1] for other in others)


@pytest.mark.parametrize(
    ("args", "accepted"),
    [
        (["--exit-code", "-9"], -9),
        (["--exit-code", str(2**64 - 1)], 2**64 - 1),
        (["--duration-s", "12.5"], 12.5),
    ],
)
def test_values_within_range_are_taken(tmp_path: Path, args, accepted):
    parsed = cli.build_parser().parse_args(["observe", "claude-code", str(tmp_path), *args])
    assert accepted in (parsed.exit_code, parsed.duration_s)


def test_jobs_beyond_the_largest_pool_is_refused(capsys):
    with pytest.raises(SystemExit):
        cli.main(["validate", "--jobs", "5000", "x.jsonl"])
    assert "argument --jobs: expected a number of worker processes from 1 to 1,024, or auto" in capsys.readouterr().err
