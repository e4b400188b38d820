"""`gym-contract coverage`: the C1–C7 capability matrix computed from rollout files, and why rollouts miss V."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, cast

from gym_contract import _io
from gym_contract._coverage_render import LEGEND, explanation, markdown_table, text_table
from gym_contract.coverage import CRITERIA, CoverageMatrix, GroupBy, rollout_coverage
from gym_contract.diagnostics import Diagnostic

EXIT_OK, EXIT_USAGE = 0, 2

_HEADINGS = {"source": "producer", "agent": "agent"}


def _fail(message: str) -> int:
    print(f"gym-contract: {message}", file=sys.stderr)
    return EXIT_USAGE


def _coverage(args: argparse.Namespace) -> int:
    by = cast(GroupBy, args.by)
    matrix = CoverageMatrix()
    damaged = skipped = 0
    for path in args.paths:
        try:
            # Whole records, never skeletons: the agent name lies outside the contract and only they keep it.
            for _line, entry in _io.iter_records(path):
                if isinstance(entry, Diagnostic):
                    damaged += 1
                    where = ":".join(str(part) for part in (path, entry.line) if part is not None)
                    print(f"gym-contract: {where}: {entry.code}: {entry.message}", file=sys.stderr)
                    continue
                coverage = rollout_coverage(entry)
                if coverage is None:
                    skipped += 1
                    continue
                matrix.add(coverage, coverage.producer(by))
        except _io.InputUnreadable as error:
            return _fail(str(error))
    if args.format == "json":
        document: dict[str, Any] = {"by": by, **matrix.to_dict(), "damaged_lines": damaged, "other_records": skipped}
        print(json.dumps(document, indent=2, ensure_ascii=False))
    elif args.format == "markdown":
        print("\n".join(markdown_table(matrix)))
    else:
        _print_text(matrix, by, damaged, skipped)
    if args.explain:
        stream = sys.stderr if args.format == "json" else sys.stdout
        print("\n" + "\n".join(explanation(matrix, args.explain)), file=stream)
    return EXIT_OK


def _print_text(matrix: CoverageMatrix, by: str, damaged: int, skipped: int) -> None:
    print(f"coverage of {matrix.total:,} rollouts by {by} ({LEGEND})")
    if matrix.total:
        print("\n".join(text_table(matrix, _HEADINGS[by])))
    notes = [f"{damaged:,} damaged lines" if damaged else "", f"{skipped:,} other records" if skipped else ""]
    if any(notes):
        print("not rated: " + ", ".join(note for note in notes if note))


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "coverage",
        help="rate each rollout V, O or X on the capability criteria C1–C7 and print the matrix",
        description="Read rollout records (JSON, JSONL, .gz, .zst or - for stdin), rate each one on C1–C7 "
        "from the evidence it carries, and print the share of rollouts at V, O and X per producer. "
        "Exit 2 when an input cannot be opened.",
    )
    parser.add_argument("paths", nargs="+", metavar="ROLLOUTS.jsonl", help="input files; - for stdin")
    parser.add_argument(
        "--by",
        choices=("source", "agent"),
        default="source",
        help="group by ng_agent_observations.source, else the agent name (source; the default), "
        "or by the agent name on the record (agent)",
    )
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    parser.add_argument(
        "--explain",
        choices=CRITERIA,
        metavar="CN",
        help="also print what kept rollouts from V on one criterion (C1 … C7), counted by reason",
    )
    parser.set_defaults(handler=_coverage)
