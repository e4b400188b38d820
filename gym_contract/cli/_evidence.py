"""`gym-contract join` and `gym-contract project`: turn raw evidence into joined bundles and trajectories."""

from __future__ import annotations

import argparse
import os
import sys

from gym_contract._json_writing import dumps
from gym_contract.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    interrupted_status,
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
from gym_contract.evidence._projection import observations_refusal
from gym_contract.models import AgentObservationBundle
from gym_contract.reading import _records, _sources


def _read_bundle(path: str) -> AgentObservationBundle | str:
    """The one bundle a JSON document holds, or why it cannot be joined (in one line)."""
    with _sources.open_source(path) as source:
        records = list(_records.records_of(source, json_document=True))
    if len(records) != 1:
        return f"{path}: expected one ng_agent_observations bundle, found {len(records)} records"
    line, record = records[0]
    if isinstance(record, Diagnostic):
        return str(record.at(source=path, line=line))
    bundle, refused = observations_refusal(record)
    if bundle is None:
        return f"{path}: the bundle cannot be joined: {refused} (gym-contract validate says more)"
    return bundle


def _capture_directory_problem(path: str) -> str | None:
    """Why a capture directory cannot be read, in one line; None when it can."""
    if os.path.isdir(path):
        return None
    state = "is not a directory" if os.path.exists(path) else "does not exist"
    return f"cannot read the capture directory {path!r}: it {state}"


def _join(args: argparse.Namespace) -> int:
    if (problem := _capture_directory_problem(args.capture)) is not None:
        return usage_error(problem)
    try:
        bundle = _read_bundle(args.observations)
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
    if args.parquet and args.engine != "ray":
        return usage_error("--parquet goes with --engine ray, which writes a directory of shards")
    if args.engine == "ray":
        from gym_contract.cli._distributed import project_on_ray

        return project_on_ray(args)
    for directory in args.capture_dir:
        if (problem := _capture_directory_problem(directory)) is not None:
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
