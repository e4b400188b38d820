"""What every `gym-contract` command shares: exit statuses, one-line messages on stderr, argument types."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from gym_contract.diagnostics import Diagnostic

EXIT_OK = 0
EXIT_FAILED = 1
"""Something in the input reached the failure threshold."""
EXIT_USAGE = 2
"""The arguments were wrong, or an input or the output could not be opened or written."""
EXIT_INTERRUPTED = 130
"""Ctrl-C, as shells report a command stopped by SIGINT (128 + 2)."""
EXIT_TERMINATED = 143
"""SIGTERM, as shells report a command stopped by it (128 + 15)."""


def interrupted_status() -> int:
    """The exit status of a command that a signal stopped: `EXIT_INTERRUPTED` or `EXIT_TERMINATED`."""
    from gym_contract._interrupts import exit_status

    return exit_status()


def verdict(args: argparse.Namespace, status: int) -> int:
    """Record ``status`` as the command's verdict before it writes its output, and return it.

    The exit status is then the verdict's even if the output cannot all be written (`| head`).
    """
    args.verdict = status
    return status


def say(message: str) -> None:
    """One line on stderr, prefixed with the program's name, as every command reports problems."""
    note(f"gym-contract: {message}", sys.stderr)


def note(line: str, stream: TextIO) -> None:
    """A line beside a command's product (a file it writes): once ``stream``'s reader has gone, the
    rest of the lines are dropped and the command goes on, so that the product is still written whole."""
    try:
        print(line, file=stream, flush=True)
    except BrokenPipeError:
        silence(stream)


def silence(stream: TextIO) -> None:
    """Send whatever is still buffered for ``stream`` nowhere, so that neither its next writes nor the
    interpreter's exit fail on a reader that has gone."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
    except (OSError, ValueError):
        if stream is sys.stdout:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
        elif stream is sys.stderr:
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process


def say_damaged(diagnostic: Diagnostic) -> None:
    """A line that holds no record, on stderr as `FILE:LINE: code: message`; an element of a JSON document,
    which has no line of its own, as `FILE (record N): …`, as `validate` names it."""
    where = ":".join(str(part) for part in (diagnostic.source, diagnostic.line) if part is not None)
    if diagnostic.line is None and diagnostic.record is not None:
        where += f" (record {diagnostic.record})"
    say(f"{where}: {diagnostic.code}: {diagnostic.message}")


def nothing_checked(what: str, allow_empty: bool) -> int:
    """The exit status of a command that found nothing to check, which it says on stderr with the code
    `no_records`: 1, or 0 when the run may be empty (``allow_empty``)."""
    from gym_contract.diagnostics import docs_url

    if allow_empty:
        say(f"no_records: {what}; allowed")
        return EXIT_OK
    hint = "an empty input that is expected: --allow-empty"
    say(f"no_records: {what}: nothing was checked ({hint}); see {docs_url('no_records')}")
    return EXIT_FAILED


def print_json(value: Any, *, one_line: bool = False) -> None:
    """``value`` on stdout as JSON indented by two spaces (or on one line, a line of JSONL): any depth,
    any number the readers keep."""
    from gym_contract._json_writing import dumps

    print(dumps(value, indent=not one_line).decode())


def usage_error(message: str) -> int:
    """Report ``message`` and return the usage-error exit status."""
    say(message)
    return EXIT_USAGE


def output_over_input(output: str | None, inputs: list[str]) -> str | None:
    """Why ``output`` may not be written, in one line, when it is one of ``inputs`` (by any name): opening it
    for writing would empty it before, or while, it is read. None when it is another file, or stdout."""
    if output in (None, "-"):
        return None
    for path in inputs:
        try:
            if path != "-" and os.path.samefile(output, path):
                return f"{output!r} is the input {path!r}: writing it would destroy what is read; name another output"
        except OSError:  # either does not exist (yet): not the same file
            continue
    return None


INT64_MAX = 2**63 - 1
"""The largest count or seed an option takes: what a signed 64-bit integer holds, as every reader of ours does."""


class WholeNumber:
    """An argument type: a whole number from ``least`` to ``most``, or argparse's usage error, which names
    the option (`argument --exit-code: expected …`) and exits 2. Every numeric option takes one, so that
    no number a later step cannot hold gets past the parser."""

    def __init__(self, least: int, most: int = INT64_MAX, expected: str | None = None) -> None:
        self.least, self.most = least, most
        self.expected = expected or f"a whole number from {least:,} to {most:,}"

    def __call__(self, text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not self.least <= value <= self.most:
            raise argparse.ArgumentTypeError(f"expected {self.expected}, got {text!r}")
        return value


count = WholeNumber(0, expected="a whole number of at least 0, at most 2**63 - 1")
positive = WholeNumber(1, expected="a positive whole number, at most 2**63 - 1")
seed = WholeNumber(-(2**63), expected="a whole number within 64 bits (-2**63 to 2**63 - 1)")
exit_status = WholeNumber(-(2**63), 2**64 - 1, expected="an exit status: a whole number within 64 bits")


def seconds(text: str) -> float:
    """An argument type: a finite number of seconds of at least 0 whose milliseconds a double holds."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (math.isfinite(value) and value >= 0 and math.isfinite(value * 1000)):
        raise argparse.ArgumentTypeError(f"expected a number of seconds of at least 0, got {text!r}")
    return value
