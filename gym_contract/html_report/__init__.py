"""A rollout report people can look at: one self-contained HTML file with charts, made in one pass over the inputs.

`write_html_report` checks the inputs as `gym-contract validate` does (the same report, the same
counts), gathers gaps and token distributions per producer and a fixed-size sample of rollouts
on the way, and writes a page that opens offline: Plotly's JavaScript is inlined once, and a
content security policy forbids the page every network request. Needs the `report` extra.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gym_contract import _interrupts
from gym_contract._vocabulary import CONTRACT_VERSION, CRITERIA
from gym_contract.diagnostics import CODES, Severity, docs_url
from gym_contract.html_report._tallies import Tallies
from gym_contract.validation._checking import check_files
from gym_contract.validation._report import Report

__all__ = ["EXTRA_MISSING", "HtmlReport", "ReportExtraMissing", "write_html_report"]

EXTRA_MISSING = (
    'the HTML report needs Plotly and Jinja2: python -m pip install ".[report]" in a checkout of gym-contract'
)

_COUNTS = (
    ("lines", "lines"),
    ("records", "records"),
    ("valid_records", "valid records"),
    ("invalid_records", "invalid records"),
    ("damaged_lines", "damaged lines"),
    ("blank_lines", "blank lines"),
    ("model_calls", "model calls"),
    ("rollouts", "rollouts"),
)
_LISTED = 200
"""Diagnostics listed with their place on the page; all of them are counted."""


class ReportExtraMissing(ImportError):  # noqa: N818 - names what is missing, as InputUnreadable does
    """Plotly or Jinja2 (the `report` extra) is not installed."""


@dataclass(frozen=True)
class HtmlReport:
    """What was written: the validation report of the inputs, and how many rollouts the page shows."""

    path: Path
    report: Report
    rollouts: int
    """Rollout and trajectory records read."""
    shown: int
    """Rollouts drawn in detail on the page: all of them, or a sample."""
    size: int
    """Bytes written."""

    @property
    def sampled(self) -> bool:
        return self.shown < self.rollouts


def write_html_report(
    paths: Sequence[str],
    output: str | Path,
    *,
    sample: int = 20,
    seed: int = 0,
    kind: str | None = None,
    fail_on: Severity = "error",
    title: str = "Rollout report",
    progress: Callable[[int, int | None], None] | None = None,
    allow_empty: bool = False,
) -> HtmlReport:
    """Check ``paths`` (JSON, JSONL, .gz, .zst, or - for stdin) and write the HTML report to ``output``.

    Every count is over all records; ``sample`` rollouts (a uniform reservoir sample drawn with
    ``seed``, the page says so) are drawn in detail. Raises `ReportExtraMissing` without the
    `report` extra, `InputUnreadable` when an input cannot be opened, and `FileNotFoundError`
    (before reading) when ``output``'s folder does not exist; damaged lines are counted and listed,
    never raised. The inputs are read in this process, front to back. Inputs that hold no record fail
    the verdict with `no_records` unless ``allow_empty`` (`Report.note_empty`).
    """
    if sample < 0:
        raise ValueError(f"sample must be 0 or more, not {sample}")
    page = _page_module()
    target = Path(output)
    if not target.parent.is_dir():
        # Said before the inputs are read, not after a pass over a gigabyte of them.
        raise FileNotFoundError(errno.ENOENT, "no such folder", str(target.parent))
    tallies = Tallies(sample_size=sample, seed=seed)
    report = check_files(paths, kind, progress=progress, on_record=tallies.see)
    report.note_empty(allow_empty=allow_empty)
    text = page.render(_context(report, tallies, fail_on, title))
    data = text.encode("utf-8")
    with _interrupts.deferred():  # a page is written whole or not at all
        target.write_bytes(data)
    return HtmlReport(target, report, tallies.rollouts_seen, len(tallies.sample), len(data))


def _page_module() -> Any:
    """The renderer, whose libraries are the extra's: a missing one is named before any input is read."""
    try:
        from gym_contract.html_report import _render
    except ImportError:
        raise ReportExtraMissing(EXTRA_MISSING) from None
    return _render


def _context(report: Report, tallies: Tallies, fail_on: Severity, title: str) -> dict[str, Any]:
    summary = report.to_dict(fail_on)
    summary["rollouts"] = tallies.rollouts_seen
    summary.pop("diagnostics")
    by_code = [
        (code, CODES[code].severity, number, CODES[code].summary) for code, number in report.by_code.most_common()
    ]
    gaps = tallies.gaps()
    producers = tallies.producers()
    codes = sorted({code for code, _ in gaps}, key=lambda code: (-report.gaps[code], code))
    shown = len(tallies.sample)
    if tallies.sampled:
        sampling = (
            f"Sampled: {shown:,} of {tallies.rollouts_seen:,} rollouts are drawn below, a uniform random sample "
            f"(reservoir sampling, seed {tallies.seed}); every count above covers all of them."
        )
    elif shown:
        sampling = f"All {shown:,} rollouts are drawn below."
    else:
        sampling = "No rollout or trajectory records to draw."
    return {
        "title": title,
        "report": report,
        "summary": summary,
        "counts": _COUNTS,
        "diagnostics_by_code": by_code,
        "by_code_and_severity": {(code, severity): number for code, severity, number, _ in by_code},
        "listed": [_listed(diagnostic) for diagnostic in report.diagnostics[:_LISTED]],
        "producers": producers,
        "gaps": [(code, [gaps.get((code, p), 0) for p in producers], report.gaps[code]) for code in codes],
        "why_not_v": [
            (criterion, reason, number)
            for criterion in CRITERIA
            for reason, number in report.coverage.why_not_v(criterion)
        ],
        "tallies": tallies,
        "sampling": sampling,
        "contract": CONTRACT_VERSION,
        "docs_url": docs_url,
    }


def _listed(diagnostic: Any) -> dict[str, Any]:
    where = ":".join(str(part) for part in (diagnostic.source, diagnostic.line) if part is not None)
    return {
        "where": where or "-",
        "code": diagnostic.code,
        "severity": diagnostic.severity,
        "path": diagnostic.path,
        "message": diagnostic.message,
    }
