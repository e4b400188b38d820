"""`gym-contract join` and `gym-contract project`: turn raw evidence into joined bundles and trajectories."""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from typing import Any

from gym_contract._json_writing import dumps
from gym_contract._vocabulary import OBSERVATIONS, detect_kind
from gym_contract.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    interrupted_status,
    output_over_input,
    say,
    say_damaged,
    usage_error,
    verdict,
)
from gym_contract.cli._render import progress_bar
from gym_contract.diagnostics import Diagnostic
from gym_contract.evidence._capture import read_capture
from gym_contract.evidence._join import join
from gym_contract.evidence._projecting import project_source
from gym_contract.evidence._projection import observations_refusal, trajectory_identity
from gym_contract.models import AgentObservationBundle
from gym_contract.reading import _records, _sources
from gym_contract.validation import iter_diagnostics


def _read_bundle(path: str, rollout_id: str) -> AgentObservationBundle | str:
    """The observations to join, or why there are none, in one line: an ng_agent_observations bundle, or
    the one a rollout record of ``rollout_id`` carries (a file of rollout records is searched for it)."""
    name = _sources.uncompressed_name(path).lower()
    found: list[tuple[int | None, Any, str]] = []  # (line, the observations, what holds them)
    other: Counter[str] = Counter()
    with _sources.open_source(path) as source:
        for line, record in _records.records_of(source, json_document=not name.endswith(".jsonl")):
            if isinstance(record, Diagnostic):
                return str(record.at(source=path, line=line))
            kind = detect_kind(record)
            if kind == "bundle":
                found.append((line, record, "the bundle"))
            elif kind == "rollout" and _rollout_id(record) == rollout_id:
                found.append(
                    (line, record.get(OBSERVATIONS), f"the {OBSERVATIONS} of the rollout record of {rollout_id}")
                )
            elif kind == "rollout":
                other[f"rollout records of other rollouts than {rollout_id}"] += 1
            else:
                other[f"{kind} records" if kind else "records of no known kind"] += 1
    if len(found) != 1:
        seen = f"{len(found)} of them" if found else ", ".join(f"{n} {what}" for what, n in other.items())
        return (
            f"{path}: expected one {OBSERVATIONS} bundle, or one rollout record of {rollout_id} that "
            f"carries one; found {seen or 'nothing'}"
        )
    line, raw, holder = found[0]
    where = f"{path}:{line}" if line is not None else path
    if raw is None:
        return f"{where}: the rollout record of {rollout_id} carries no {OBSERVATIONS} to join"
    bundle, refused = observations_refusal(raw)
    if bundle is None:
        within = "" if holder == "the bundle" else f"/{OBSERVATIONS}"
        first = next((d for d in iter_diagnostics(raw, "bundle") if d.severity == "error"), None)
        why = f"{within}{first.path or ('' if within else '/')}: {first.code}: {first.message}" if first else refused
        return f"{where}: {holder} cannot be joined: {why}"
    return bundle


def _rollout_id(record: dict[str, Any]) -> str | None:
    """The rollout id `project` gives a rollout record, or None when it has no usable one."""
    try:
        return trajectory_identity(record)[1]
    except (KeyError, ValueError, TypeError):
        return None


def _capture_directory_problem(path: str) -> str | None:
    """Why a capture directory cannot be read, in one line; None when it can."""
    if os.path.isdir(path):
        return None
    state = "is not a directory" if os.path.exists(path) else "does not exist"
    return f"cannot read the capture directory {path!r}: it {state}"


def _join(args: argparse.Namespace) -> int:
    # A rollout's own .capture.jsonl file is read as its directory would be.
    if not os.path.isfile(args.capture) and (problem := _capture_directory_problem(args.capture)) is not None:
        return usage_error(problem)
    try:
        bundle = _read_bundle(args.observations, args.rollout_id)
        capture = read_capture(args.capture, args.rollout_id)
    except _sources.InputUnreadable as error:
        return usage_error(str(error))
    except ValueError as error:  # a rollout id unfit for a file name, or a capture path of another rollout
        return usage_error(str(error))
    if isinstance(bundle, str):
        return usage_error(bundle)
    joined = join(bundle, capture.attached_records)
    for damaged in capture.damaged_lines:
        say(f"{args.capture}: {damaged}")
    sys.stdout.buffer.write(dumps(joined.model_dump(mode="python"), indent=True) + b"\n")
    return EXIT_OK


def _project(args: argparse.Namespace) -> int:
    if args.engine == "ray":
        from gym_contract.cli._distributed import project_on_ray

        return project_on_ray(args)
    for directory in args.capture_dir:
        if (problem := _capture_directory_problem(directory)) is not None:
            return usage_error(problem)
    if (problem := output_over_input(args.output, [args.rollouts])) is not None:
        return usage_error(problem)
    try:
        source = _sources.open_source(args.rollouts)
    except _sources.InputUnreadable as error:
        return usage_error(str(error))
    try:
        out = sys.stdout.buffer if args.output in (None, "-") else open(args.output, "wb")  # noqa: SIM115
    except OSError as error:
        source.close()
        return usage_error(f"cannot write {args.output!r}: {error.strerror or error}")

    def said(problem: Diagnostic | None) -> None:
        verdict(args, EXIT_FAILED)  # so far: the exit status holds even if the output breaks off
        if problem is not None:
            say_damaged(problem)

    try:
        with source, progress_bar(args.output not in (None, "-"), "projecting") as progress:
            run = project_source(
                source,
                args.capture_dir,
                out.write,
                json_document=_records.is_json_document(args.rollouts),
                on_problem=said,
                progress=(lambda read: progress(read, source.size)) if progress else None,
            )
    finally:
        if out is not sys.stdout.buffer:
            out.close()
    if run.interrupted:
        verdict(args, interrupted_status())
    summary = run.summary()
    print(dumps(summary, indent=True).decode(), file=sys.stderr if args.output in (None, "-") else sys.stdout)
    if run.interrupted:
        say("interrupted: the records read before it were written, the rest were not read")
        return interrupted_status()
    return EXIT_FAILED if run.failed else EXIT_OK
