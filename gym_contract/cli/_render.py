"""Render a validation `Report` as text for people or JSON for pipelines, and show progress on a terminal."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import groupby
from typing import TextIO

from gym_contract.cli._tables import Table
from gym_contract.cli._tables import render as render_table
from gym_contract.coverage import CRITERIA, CoverageMatrix
from gym_contract.diagnostics import Diagnostic, Severity, docs_url
from gym_contract.validation._report import Report

Progress = Callable[[int, int | None], None]
"""Told the bytes done so far and the total (None when unknown)."""

_SEVERITY_MARK = {"error": "✗", "warning": "!", "info": "·"}
# SGR codes: bold red, yellow, dim, bold green, bold red, bold yellow, cyan, bold.
_STYLES = {
    "error": "1;31",
    "warning": "33",
    "info": "2",
    "pass": "1;32",
    "fail": "1;31",
    "interrupted": "1;33",
    "code": "36",
    "where": "1",
}


def wants_colour(out: TextIO) -> bool:
    """Colour on a terminal; `NO_COLOR` (https://no-color.org) turns it off and `FORCE_COLOR` on, anywhere."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "0") not in ("", "0"):
        return True
    isatty = getattr(out, "isatty", None)
    return bool(isatty is not None and isatty())


class _Paint:
    """Wraps text in a style's escape codes when colour is on, and returns it as it is when not."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, text: str, style: str) -> str:
        return f"\x1b[{_STYLES[style]}m{text}\x1b[0m" if self.on else text


ALL_ROLLOUTS = "all rollouts"


def render_json(report: Report, fail_on: Severity, out: TextIO) -> None:
    import json

    json.dump(report.to_dict(fail_on), out, indent=2, ensure_ascii=False)
    out.write("\n")


def render_text(report: Report, fail_on: Severity, out: TextIO, *, quiet: bool = False) -> None:
    paint = _Paint(wants_colour(out))
    listed = not quiet and bool(report.diagnostics)
    if listed:
        _diagnostics_by_record(report.diagnostics, out, paint)
    summary = report.to_dict(fail_on)
    write = out.write
    verdict = paint(summary["verdict"].upper(), summary["verdict"])
    if listed:  # a blank line parts the summary from the diagnostics; with none, the verdict is the first line
        write("\n")
    write(f"{verdict} (fail on {fail_on})\n")
    if report.interrupted:
        write("  interrupted: this summary covers only the lines read before the interruption\n")
    write(
        f"  lines {summary['lines']:,}  records {summary['records']:,}  "
        f"valid {summary['valid_records']:,}  invalid {summary['invalid_records']:,}  "
        f"damaged lines {summary['damaged_lines']:,}\n"
    )
    if summary["records_by_kind"]:
        kinds = ", ".join(f"{kind} {count:,}" for kind, count in summary["records_by_kind"].items())
        write(f"  records by kind: {kinds}\n")
    severities = summary["diagnostics_by_severity"]
    counts = (severities["error"], severities["warning"], severities["info"])
    write("  diagnostics: {:,} errors, {:,} warnings, {:,} infos\n".format(*counts))
    _counts_by_code(summary["diagnostics_by_code"], out, paint.on, style="code")
    if report.truncated:
        write(f"  (first {len(report.diagnostics):,} diagnostics listed; raise --max-diagnostics to see more)\n")
    if summary["gaps_by_code"]:
        write("  evidence gaps:\n")
        _counts_by_code(summary["gaps_by_code"], out, paint.on)
    if summary["model_calls"]:
        write(f"  tokens over {summary['model_calls']:,} model calls:\n")
        tokens = Table(("tokens", "sum of known values", "calls where unknown"), right=frozenset({1, 2}))
        for name, tally in summary["tokens"].items():
            tokens.add(name, f"{tally['sum']:,}", f"{tally['unknown']:,}")
        render_table(tokens, out, colour=paint.on, indent=4)
    if report.coverage.total:
        write("  evidence coverage by observation source (V complete, O partial, X unavailable):\n")
        render_table(coverage_table(report.coverage, "source"), out, colour=paint.on, indent=4)
    if summary["mb_per_s"] is not None:
        read = f"{summary['bytes'] / 1e6:,.1f} MB"
        if summary["decoded_bytes"] != summary["bytes"]:
            read += f" read, {summary['decoded_bytes'] / 1e6:,.1f} MB of JSON,"
        write(f"  {read} in {summary['seconds']:.2f} s ({summary['mb_per_s']:,.1f} MB/s of JSON)\n")


def coverage_table(matrix: CoverageMatrix, producer_heading: str) -> Table:
    """One row per producer, then one over all rollouts when there are several producers."""
    table = Table((producer_heading, "rollouts", *CRITERIA), right=frozenset({1}))
    for producer in matrix.producers():
        table.add(producer, f"{matrix.rollouts[producer]:,}", *(matrix.cell(c, producer) for c in CRITERIA))
    if len(matrix.producers()) > 1:
        table.total = (ALL_ROLLOUTS, f"{matrix.total:,}", *(matrix.cell(c) for c in CRITERIA))
    return table


def _counts_by_code(counts: dict[str, int], out: TextIO, colour: bool, style: str | None = None) -> None:
    table = Table(("count", "code"), right=frozenset({0}), show_headings=False)
    table.column_styles = {1: style} if style else {}
    for code, count in counts.items():
        table.add(f"{count:,}", code)
    if counts:
        render_table(table, out, colour=colour, indent=4)


def _diagnostics_by_record(diagnostics: list[Diagnostic], out: TextIO, paint: _Paint) -> None:
    def record_key(d: Diagnostic) -> tuple[str, int | None, int | None]:
        return (d.source or "", d.line, d.record)

    for (source, line, record), group in groupby(diagnostics, key=record_key):
        # A diagnostic of no input, line or record is about the whole run (no_records).
        whole_run = (source, line, record) == ("", None, None)
        where = ":".join(str(part) for part in (source, line) if part not in ("", None))
        where = where or ("all inputs" if whole_run else "record")
        label = f" (record {record})" if record is not None else ""
        out.write(f"{paint(where, 'where')}{label}\n")
        for d in group:
            pointer = "" if whole_run and not d.path else f" at {d.path or '/'}"
            keyword = f" [{d.keyword}]" if d.keyword else ""
            severity = paint(f"{_SEVERITY_MARK[d.severity]} {d.severity}", d.severity)
            out.write(f"  {severity} {paint(d.code, 'code')}{keyword}{pointer}: {d.message}\n")
            out.write(f"      see {docs_url(d.code)}\n")


@contextmanager
def progress_bar(enabled: bool, doing: str = "validating") -> Iterator[Progress | None]:
    """A progress bar on stderr over bytes read, labelled with what is being done, only when stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        transient=True,
        # On stderr, as the check above: the report on stdout may be going to a file or a pipe.
        console=Console(stderr=True),
    ) as bar:
        task = bar.add_task(doing, total=None)

        def update(done: int, total: int | None) -> None:
            bar.update(task, completed=done, total=total)

        yield update
