"""`gym-contract coverage`: the C1–C7 capability matrix from rollout files as text, JSON or Markdown, and why not V."""

from __future__ import annotations

import argparse
import sys
from functools import partial
from typing import Any, TextIO, cast

from gym_contract.cli._common import (
    EXIT_OK,
    interrupted_status,
    nothing_checked,
    print_json,
    say,
    say_damaged,
    usage_error,
)
from gym_contract.cli._render import Progress, coverage_table, progress_bar, wants_colour
from gym_contract.cli._tables import Table
from gym_contract.cli._tables import render as render_table
from gym_contract.coverage import CRITERIA, CoverageMatrix, GroupBy
from gym_contract.coverage._rating import CoverageRun, rate_source
from gym_contract.producers import by_source
from gym_contract.reading import _records, _sources

_HEADINGS = {"source": "producer", "agent": "agent"}
_PARTIAL = "interrupted: this matrix rates only the rollouts read before the interruption"
LEGEND = "V complete, O partial, X unavailable; a mixed cell gives each verdict's share of the rollouts"


def markdown_table(matrix: CoverageMatrix) -> list[str]:
    """The layout of the reference documentation's capability matrix, then how many rollouts each row rates."""
    lines = ["| harness | " + " | ".join(CRITERIA) + " |", "|---|" + "---|" * len(CRITERIA)]
    for producer in matrix.producers():
        cells = " | ".join(matrix.cell(criterion, producer) for criterion in CRITERIA)
        lines.append(f"| `{producer}` | {cells} |")
    counts = ", ".join(f"`{producer}` {matrix.rollouts[producer]:,}" for producer in matrix.producers())
    lines += ["", f"Rollouts rated: {matrix.total:,} ({counts}). {LEGEND}."]
    return lines


def explain(matrix: CoverageMatrix, criterion: str, out: TextIO) -> None:
    """What kept rollouts from V on one criterion, each reason with the number of rollouts it held back."""
    held_back = matrix.count(criterion, "O") + matrix.count(criterion, "X")
    out.write(
        f"{criterion}: {matrix.count(criterion, 'V'):,} of {matrix.total:,} rollouts at V, "
        f"{matrix.count(criterion, 'O'):,} at O, {matrix.count(criterion, 'X'):,} at X\n"
    )
    if held_back:
        out.write("kept from V by (a rollout counts once under each of its reasons):\n")
        reasons = Table(("rollouts", "reason"), right=frozenset({0}))
        for reason, count in matrix.why_not_v(criterion):
            reasons.add(f"{count:,}", reason)
        render_table(reasons, out, colour=wants_colour(out), indent=2)


def declared_capability(matrix: CoverageMatrix) -> dict[str, dict[str, str]]:
    """The verdicts each rated producer declares it can reach (`gym-contract observe --list`), by source."""
    declared: dict[str, dict[str, str]] = {}
    for name in matrix.producers():
        registered = by_source(name)
        if registered is not None:
            declared[name] = {criterion: rating.verdict for criterion, rating in registered.capability.items()}
    return declared


def _print_shortfalls(matrix: CoverageMatrix, declared: dict[str, dict[str, str]]) -> None:
    """Where the rollouts fall short of what their producer declares it can deliver, with how many did."""
    shortfalls = matrix.shortfalls(declared)
    if not shortfalls:
        return
    print("below the capability the producer declares (gym-contract observe --list):")
    for name, criteria in shortfalls.items():
        for criterion, rollouts in criteria.items():
            print(
                f"  {name} {criterion}: declared {declared[name][criterion]}, "
                f"{rollouts:,} of {matrix.rollouts[name]:,} rollouts rated lower"
            )


def _coverage(args: argparse.Namespace) -> int:
    by = cast(GroupBy, args.by)
    if args.engine == "ray":
        from gym_contract.cli._distributed import rate_on_ray

        rated = rate_on_ray(args, by)
        if isinstance(rated, int):
            return rated
        run = rated
    else:
        try:
            run = _rate_here(args.paths, by)
        except _sources.InputUnreadable as error:
            return usage_error(str(error))
    matrix, damaged, skipped = run.matrix, len(run.damaged), run.other_records
    # Only a producer's own source names it; an agent name says nothing of which producer observed it.
    declared = declared_capability(matrix) if by == "source" else {}
    status = EXIT_OK
    if not matrix.total and not run.interrupted:  # an interrupted run says nothing of what it did not read
        status = nothing_checked("the inputs hold no rollout or trajectory record to rate", args.allow_empty)
    if args.format == "json":
        document: dict[str, Any] = {"by": by, **matrix.to_dict(), "damaged_lines": damaged, "other_records": skipped}
        document["declared"] = declared
        document["below_declared"] = matrix.shortfalls(declared)
        if args.explain:
            document["explain"] = {"criterion": args.explain, "why_not_v": dict(matrix.why_not_v(args.explain))}
        if run.interrupted:
            document["interrupted"] = True
        print_json(document)
    else:
        if args.format == "markdown":
            print("\n".join(markdown_table(matrix)))
        else:
            _print_text(matrix, by, damaged, skipped)
            _print_shortfalls(matrix, declared)
        if run.interrupted:
            print(_PARTIAL if args.format == "text" else f"\n{_PARTIAL}.")
        if args.explain:
            print()
            explain(matrix, args.explain, sys.stdout)
    if run.interrupted:
        say("interrupted: the matrix rates only the rollouts read before it")
        return interrupted_status()
    return status


def _rate_here(paths: list[str], by: GroupBy) -> CoverageRun:
    """Every input in turn, in this process, each damaged line said as it is met."""
    run = CoverageRun()
    try:
        with progress_bar(True, "rating") as progress:
            # In a function of its own: Python 3.13 may leave a loop's back edge out of this try.
            _rate_each(run, paths, by, progress)
    except KeyboardInterrupt:  # while an input was opened, or the progress drawn
        run.interrupted = True
    return run


def _rate_each(run: CoverageRun, paths: list[str], by: GroupBy, progress: Progress | None) -> None:
    sizes = [_sources.size_on_disk(path) for path in paths]
    total = None if None in sizes else sum(size or 0 for size in sizes)
    done = 0
    for path, size in zip(paths, sizes, strict=True):
        with _sources.open_source(path) as source:
            shown = None if progress is None else partial(_shown, progress, done, total)
            part = rate_source(
                source,
                json_document=_records.is_json_document(path),
                by=by,
                on_damaged=say_damaged,
                progress=shown,
            )
            run.merge(part)
            done += size if size is not None else source.consumed()
        if run.interrupted:
            break  # the inputs after an interruption are not read


def _shown(progress: Progress, done: int, total: int | None, read: int) -> None:
    progress(done + read, total)


def _print_text(matrix: CoverageMatrix, by: str, damaged: int, skipped: int) -> None:
    print(f"coverage of {matrix.total:,} rollouts by {by} ({LEGEND})")
    if matrix.total:
        render_table(coverage_table(matrix, _HEADINGS[by]), sys.stdout, colour=wants_colour(sys.stdout))
    notes = [f"{damaged:,} damaged lines" if damaged else "", f"{skipped:,} other records" if skipped else ""]
    if any(notes):
        print("not rated: " + ", ".join(note for note in notes if note))
