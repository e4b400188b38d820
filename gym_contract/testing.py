"""Helpers for harness authors' own test suites: fail a test with a readable report of contract problems."""

from __future__ import annotations

from typing import Any

from gym_contract.diagnostics import SEVERITIES, Diagnostic, Severity, docs_url
from gym_contract.validation import detect_kind, iter_diagnostics

__all__ = ["assert_valid", "problems_report"]


def assert_valid(obj: Any, kind: str | None = None, *, fail_on: Severity = "error", now: float | None = None) -> None:
    """Fail (raise `AssertionError`) when ``obj`` has a diagnostic at least as severe as ``fail_on``.

    The message lists every such diagnostic with its JSON Pointer, message and docs link, so the
    test output says what to fix without a debugger.
    """
    __tracebackhide__ = True  # pytest: show the caller's line, not this one
    threshold = SEVERITIES.index(_checked_severity(fail_on))
    diagnostics = list(iter_diagnostics(obj, kind, now=now))
    failing = [d for d in diagnostics if SEVERITIES.index(d.severity) <= threshold]
    if failing:
        heading = f"{len(failing)} contract problem(s) in this {kind or detect_kind(obj) or 'record'}:"
        raise AssertionError(problems_report(failing, heading))


def _checked_severity(fail_on: str) -> Severity:
    """``fail_on`` when it names a severity; else a `ValueError` that lists them."""
    if fail_on not in SEVERITIES:
        raise ValueError(f"fail_on must be one of {', '.join(SEVERITIES)}; got {fail_on!r}")
    return fail_on


def problems_report(diagnostics: list[Diagnostic], heading: str) -> str:
    """``heading``, then per diagnostic: where (file and line, or record), severity, code, pointer, message, docs."""
    lines = [heading]
    for diagnostic in diagnostics:
        where = ":".join(str(part) for part in (diagnostic.source, diagnostic.line) if part is not None)
        if not where and diagnostic.record is not None:
            where = f"record {diagnostic.record}"
        prefix = f"{where}: " if where else ""
        pointer = diagnostic.path or "/"
        lines.append(f"  {prefix}{diagnostic.severity} {diagnostic.code} at {pointer}: {diagnostic.message}")
        lines.append(f"    {docs_url(diagnostic.code)}")
    return "\n".join(lines)
