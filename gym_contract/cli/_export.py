"""`gym-contract export atif` and `export otel`: rollouts written as ATIF trajectories or OpenTelemetry traces."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from typing import Any

from gym_contract import _interrupts
from gym_contract._json_writing import dumps
from gym_contract.cli._common import EXIT_FAILED, EXIT_OK, note, say, say_damaged, usage_error
from gym_contract.diagnostics import Diagnostic
from gym_contract.interop import to_atif, to_otel
from gym_contract.reading import _records, _sources


class _Rollouts:
    """The records of an input, one at a time; damaged lines and records that cannot be exported are reported."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.failed = False

    def __iter__(self) -> Iterator[tuple[int | None, dict[str, Any]]]:
        for line, record in _records.iter_records(self.path):
            if isinstance(record, Diagnostic):
                self.failed = True
                say_damaged(record)
            else:
                yield line, record

    def refuse(self, line: int | None, error: ValueError) -> None:
        self.failed = True
        where = f"{self.path}:{line}" if line is not None else self.path
        say(f"{where}: not exported: {error}")


def _file_name(document: dict[str, Any], line: int | None, taken: set[str]) -> str:
    """`<rollout id>.json`, unique in the output directory (a repeated id gets `-2`, `-3`, …)."""
    rollout_id = document.get("session_id")
    stem = rollout_id if isinstance(rollout_id, str) else f"line-{line or 1}"
    name, number = f"{stem}.json", 1
    while name in taken:
        number += 1
        name = f"{stem}-{number}.json"
    taken.add(name)
    return name


def _export_atif(args: argparse.Namespace) -> int:
    try:
        os.makedirs(args.output, exist_ok=True)
    except OSError as error:
        return usage_error(f"cannot write to the directory {args.output!r}: {error.strerror or error}")
    rollouts = _Rollouts(args.rollouts)
    taken: set[str] = set()
    try:
        for line, record in rollouts:
            try:
                document = to_atif(record, args.atif_version)
            except ValueError as error:
                rollouts.refuse(line, error)
                continue
            path = os.path.join(args.output, _file_name(document, line, taken))
            with _interrupts.deferred():  # a trajectory is written whole and listed, or not at all
                with open(path, "wb") as out:
                    out.write(dumps(document, indent=True) + b"\n")
                note(path, sys.stdout)
    except _sources.InputUnreadable as error:
        return usage_error(str(error))
    except OSError as error:
        return usage_error(f"cannot write to {args.output!r}: {error.strerror or error}")
    return EXIT_FAILED if rollouts.failed else EXIT_OK


def _export_otel(args: argparse.Namespace) -> int:
    rollouts = _Rollouts(args.rollouts)
    exported: list[dict[str, Any]] = []
    try:
        for line, record in rollouts:
            try:
                exported.append(to_otel([record]))
            except ValueError as error:
                rollouts.refuse(line, error)
    except _sources.InputUnreadable as error:
        return usage_error(str(error))
    request = {"resourceSpans": [spans for part in exported for spans in part["resourceSpans"]]}
    text = dumps(request, indent=True) + b"\n"
    if args.output in (None, "-"):
        sys.stdout.buffer.write(text)
    else:
        try:
            with _interrupts.deferred(), open(args.output, "wb") as out:  # the traces are written whole or not at all
                out.write(text)
        except OSError as error:
            return usage_error(f"cannot write {args.output!r}: {error.strerror or error}")
        note(f"{args.output}: {len(request['resourceSpans'])} traces", sys.stdout)
    return EXIT_FAILED if rollouts.failed else EXIT_OK
