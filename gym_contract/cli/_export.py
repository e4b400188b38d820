"""`gym-contract export atif` and `export otel`: rollouts written as ATIF trajectories or OpenTelemetry traces."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

from gym_contract import _interrupts
from gym_contract._json_writing import dumps
from gym_contract.cli._common import EXIT_FAILED, EXIT_OK, note, output_over_input, say, say_damaged, usage_error
from gym_contract.diagnostics import Diagnostic
from gym_contract.interop import to_atif
from gym_contract.interop._otel import TraceKeys, resource_spans
from gym_contract.reading import _records, _sources
from gym_contract.validation._rules import ROLLOUT_ID_PATTERN


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


def _named_rollout(document: dict[str, Any]) -> str | None:
    """The rollout id of an ATIF document when it can name a file in the output directory: one that keeps
    the contract's pattern, so no `/`, no `..`, nothing that would write elsewhere."""
    rollout_id = document.get("session_id")
    return rollout_id if isinstance(rollout_id, str) and ROLLOUT_ID_PATTERN.fullmatch(rollout_id) else None


def _file_name(document: dict[str, Any], line: int | None, taken: dict[str, int]) -> str:
    """`<rollout id>.json`, unique in the output directory: a rollout id met again gets `<rollout id>+2.json`,
    `+3`, … (`+` is in no rollout id, so the name is no other rollout's); one without an id that can name
    a file, `line-N.json`."""
    stem = _named_rollout(document) or f"line-{line or 1}"
    taken[stem] = taken.get(stem, 0) + 1
    number = taken[stem]
    name = f"{stem}.json" if number == 1 else f"{stem}+{number}.json"
    while name in taken:  # a stem that is itself a name made so: taken is keyed by stems and names
        number += 1
        name = f"{stem}+{number}.json"
    taken[name] = 1
    return name


def _say_repeated(what: str, repeated: dict[str, int], name: Callable[[str, int], str]) -> None:
    """A warning per rollout id that more than one record had: what became of its records, ``what``
    with `{names}` standing for the first few ``name(rollout id, n)``."""
    for key, times in repeated.items():
        names = ", ".join(name(key, number) for number in range(1, min(times, 3) + 1)) + (", …" if times > 3 else "")
        say(f"warning: rollout {key} is in {times} records: " + what.format(names=names))


def _export_atif(args: argparse.Namespace) -> int:
    try:
        os.makedirs(args.output, exist_ok=True)
    except OSError as error:
        return usage_error(f"cannot write to the directory {args.output!r}: {error.strerror or error}")
    rollouts = _Rollouts(args.rollouts)
    taken: dict[str, int] = {}
    stems: dict[str, int] = {}
    try:
        for line, record in rollouts:
            try:
                document = to_atif(record, args.atif_version)
            except ValueError as error:
                rollouts.refuse(line, error)
                continue
            name = _file_name(document, line, taken)
            if (session := _named_rollout(document)) is not None:
                stems[session] = stems.get(session, 0) + 1
            elif isinstance(document.get("session_id"), str):
                where = f"{args.rollouts}:{line}" if line is not None else args.rollouts
                say(
                    f"warning: {where}: the rollout id {document['session_id']!r} cannot name a file: written as {name}"
                )
            path = os.path.join(args.output, name)
            with _interrupts.deferred():  # a trajectory is written whole and listed, or not at all
                with open(path, "wb") as out:
                    out.write(dumps(document, indent=True) + b"\n")
                note(path, sys.stdout)
    except _sources.InputUnreadable as error:
        return usage_error(str(error))
    except OSError as error:
        return usage_error(f"cannot write to {args.output!r}: {error.strerror or error}")
    _say_repeated(
        "each is written to a file of its own: {names}",
        {stem: times for stem, times in stems.items() if times > 1},
        lambda key, n: f"{key}.json" if n == 1 else f"{key}+{n}.json",
    )
    return EXIT_FAILED if rollouts.failed else EXIT_OK


def _export_otel(args: argparse.Namespace) -> int:
    if (problem := output_over_input(args.output, [args.rollouts])) is not None:
        return usage_error(problem)
    rollouts = _Rollouts(args.rollouts)
    keys = TraceKeys()
    exported: list[dict[str, Any]] = []
    try:
        for line, record in rollouts:
            try:
                exported.append(resource_spans(record, len(exported), keys))
            except ValueError as error:
                rollouts.refuse(line, error)
    except _sources.InputUnreadable as error:
        return usage_error(str(error))
    _say_repeated(
        "each is a trace of its own, its ids hashed from {names}",
        keys.repeated(),
        lambda key, n: repr(key if n == 1 else f"{key} #{n}"),
    )
    request = {"resourceSpans": exported}
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
