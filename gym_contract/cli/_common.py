"""What every `gym-contract` command shares: exit statuses, one-line messages on stderr, argument types."""

from __future__ import annotations

import argparse
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
    """A line that holds no record, on stderr as `FILE:LINE: code: message`."""
    where = ":".join(str(part) for part in (diagnostic.source, diagnostic.line) if part is not None)
    say(f"{where}: {diagnostic.code}: {diagnostic.message}")


def print_json(value: Any) -> None:
    """``value`` on stdout as JSON indented by two spaces: any depth, any number the readers keep."""
    from gym_contract._json_writing import dumps

    print(dumps(value, indent=True).decode())


def usage_error(message: str) -> int:
    """Report ``message`` and return the usage-error exit status."""
    say(message)
    return EXIT_USAGE


def count(text: str) -> int:
    """An argument type: a whole number of at least 0, or a usage error that says what was expected."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 0, got {text!r}")
    return value


def positive(text: str, expected: str = "a positive whole number") -> int:
    """An argument type: a whole number of at least 1, or a usage error that says what was expected."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value
