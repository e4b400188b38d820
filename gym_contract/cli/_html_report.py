"""`gym-contract report`: the rollouts checked and drawn as one self-contained HTML file."""

from __future__ import annotations

import argparse

from gym_contract.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    interrupted_status,
    output_over_input,
    say,
    usage_error,
    verdict,
)
from gym_contract.cli._render import progress_bar
from gym_contract.html_report import ReportExtraMissing, write_html_report
from gym_contract.validation._checking import InputUnreadable


def _report(args: argparse.Namespace) -> int:
    if args.output == "-":
        return usage_error("the page is written to a file, not to stdout: name it with -o REPORT.html")
    if (problem := output_over_input(args.output, args.paths)) is not None:
        return usage_error(problem)
    try:
        with progress_bar(not args.quiet, "reporting") as progress:
            written = write_html_report(
                args.paths,
                args.output,
                sample=args.sample,
                seed=args.seed,
                kind=args.kind,
                fail_on=args.fail_on,
                title=args.title,
                progress=progress,
                allow_empty=args.allow_empty,
            )
    except (ReportExtraMissing, InputUnreadable) as error:
        return usage_error(str(error))
    report = written.report
    if report.interrupted:
        status = verdict(args, interrupted_status())  # a page of part of the inputs is no pass
    else:
        status = verdict(args, EXIT_FAILED if report.fails(args.fail_on) else EXIT_OK)
    if not args.quiet:
        drawn = f"{written.shown:,} of {written.rollouts:,}" if written.sampled else f"all {written.rollouts:,}"
        print(
            f"{written.path}: {written.size / 1e6:.1f} MB, {report.verdict(args.fail_on).upper()}, "
            f"{report.records:,} records, {report.damaged_lines:,} damaged lines, {drawn} rollouts drawn"
        )
    if report.interrupted:
        say("interrupted: the page covers only the lines read before it")
    return status
