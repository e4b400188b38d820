"""Helpers for harness authors' own test suites: fail a test with a readable report of contract problems."""

from __future__ import annotations

from typing import Any

from gym_contract.diagnostics import SEVERITIES, Diagnostic, Severity, docs_url
from gym_contract.validation import detect_kind, iter_diagnostics

__all__ = ["assert_valid"]


def assert_valid(obj: Any, kind: str | None = None, *, fail_on: Severity = "error", now: float | None = None) -> None:
    """Fail (raise `AssertionError`) when ``obj`` has a diagnostic at least as severe as ``fail_on``.

    The message lists every such diagnostic with its JSON Pointer, message and docs link, so the
    test output says what to fix without a debugger.
    """
    __tracebackhide__ = True  # pytest: show the caller's line, not this one
    threshold = SEVERITIES.index(fail_on)
    diagnostics = list(iter_diagnostics(obj, kind, now=now))
    failing = [d for d in diagnostics if SEVERITIES.index(d.severity) <= threshold]
    if failing:
        raise AssertionError(_report(failing, kind or detect_kind(obj)))


def _report(diagnostics: list[Diagnostic], kind: str | None) -> str:
    lines = [f"{len(diagnostics)} contract problem(s) in this {kind or 'record'}:"]
    for diagnostic in diagnostics:
        lines.append(f"  {diagnostic.severity} {diagnostic.code} at {diagnostic.path or '/'}: {diagnostic.message}")
        lines.append(f"    {docs_url(diagnostic.code)}")
    return "\n".join(lines)
