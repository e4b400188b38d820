"""`--engine ray` of `validate`, `coverage` and `project`: the same commands, run as Ray Data jobs."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gym_contract.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    interrupted_status,
    say,
    say_damaged,
    usage_error,
    verdict,
)
from gym_contract.coverage import GroupBy
from gym_contract.coverage._rating import CoverageRun
from gym_contract.distributed import RayUnavailable, coverage_dataset, project_dataset, validate_dataset
from gym_contract.validation._checking import InputUnreadable
from gym_contract.validation._report import Report


def check_on_ray(args: argparse.Namespace, progress: Any) -> Report:
    """The report of `validate`; raises what `check_files` raises, and `RayUnavailable`."""
    return validate_dataset(
        args.paths,
        args.kind,
        max_diagnostics=args.max_diagnostics,
        **({} if args.max_line_bytes is None else {"max_line_bytes": args.max_line_bytes}),
        address=args.address,
        per_record=args.format == "junit",
        progress=progress,
        verbose=args.verbose,
    )


def rate_on_ray(args: argparse.Namespace, by: GroupBy) -> CoverageRun | int:
    """The coverage run of `coverage`, or the exit status of a usage error (said on stderr)."""
    from gym_contract.cli._render import progress_bar

    try:
        with progress_bar(True, "rating") as progress:
            run = coverage_dataset(args.paths, by=by, address=args.address, progress=progress, verbose=args.verbose)
    except (InputUnreadable, RayUnavailable) as error:
        return usage_error(str(error))
    for damaged in run.damaged:
        say_damaged(damaged)
    return run


def project_on_ray(args: argparse.Namespace) -> int:
    """`project` into a directory of JSONL shards, its summary on stdout."""
    from gym_contract._json_writing import dumps
    from gym_contract.cli._render import progress_bar

    if args.output in (None, "-"):
        return usage_error("--engine ray writes shards: give -o a directory (local, or a URI such as s3://bucket/dir)")
    try:
        with progress_bar(True, "projecting") as progress:
            run, shards = project_dataset(
                [args.rollouts],
                args.output,
                args.capture_dir,
                address=args.address,
                progress=progress,
                parquet=args.parquet,
                verbose=args.verbose,
            )
    except (InputUnreadable, RayUnavailable) as error:
        return usage_error(str(error))
    for damaged in run.damaged:
        say_damaged(damaged)
    summary = {**run.summary(), "shards": shards}
    if run.interrupted:
        verdict(args, interrupted_status())
    print(dumps(summary, indent=True).decode(), file=sys.stdout)
    if run.interrupted:
        say("interrupted: the shards listed are whole; no other shard is")
        return interrupted_status()
    return verdict(args, EXIT_FAILED if run.failed else EXIT_OK)
