"""The pytest plugin: a `contract` fixture that checks what a harness emits, and an option for what fails a test.

Installed with the package (a `pytest11` entry point), so a harness's test suite needs no glue:

    def test_the_bundle_we_write_keeps_the_contract(contract, tmp_path):
        bundle = my_harness.run(task, out=tmp_path)
        contract.check(bundle)                        # fails with every problem, its pointer and docs link
        contract.check_file(tmp_path / "rollouts.jsonl")

What fails a check: `--contract-fail-on warning` on the command line, `contract_fail_on = warning`
in the ini file, or `@pytest.mark.contract_fail_on("warning")` on one test; errors only otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import pytest

from gym_contract.checking import check_files
from gym_contract.diagnostics import SEVERITIES, Diagnostic, Severity
from gym_contract.report import Report
from gym_contract.testing import _checked_severity, problems_report
from gym_contract.validation import iter_diagnostics

__all__ = ["Contract"]

_OPTION = "contract_fail_on"


class Contract:
    """Checks against the contract that fail the running test, at the severity the run asks for."""

    def __init__(self, fail_on: Severity = "error", *, now: float | None = None) -> None:
        self.fail_on: Severity = _checked_severity(fail_on)
        self.now = now

    def diagnostics(self, value: Any, kind: str | None = None) -> list[Diagnostic]:
        """Every diagnostic of one record, bundle or trajectory, failing or not; never fails the test."""
        return list(iter_diagnostics(value, kind, now=self.now))

    def check(self, value: Any, kind: str | None = None) -> list[Diagnostic]:
        """Fail the test when ``value`` has a diagnostic at ``fail_on`` or worse; else return all of them."""
        __tracebackhide__ = True
        found = self.diagnostics(value, kind)
        self._fail_on_any([d for d in found if self._fails(d)], "this record")
        return found

    def check_records(self, records: Iterable[Any], kind: str | None = None) -> list[Diagnostic]:
        """Check several records; the failure names each problem's record by its index."""
        __tracebackhide__ = True
        found = [d.at(record=index) for index, record in enumerate(records) for d in self.diagnostics(record, kind)]
        self._fail_on_any([d for d in found if self._fails(d)], "these records")
        return found

    def check_file(self, path: str | os.PathLike[str], kind: str | None = None, *, allow_empty: bool = False) -> Report:
        """Check a JSON, JSONL, .gz or .zst file as `gym-contract validate` does; the failure names lines.
        A file that holds no record fails (`no_records`) unless ``allow_empty``."""
        __tracebackhide__ = True
        report = check_files([os.fspath(path)], kind, now=self.now)
        report.note_empty(allow_empty=allow_empty)
        if report.fails(self.fail_on):  # decided by the counts: a report keeps only its first diagnostics
            failing = [d for d in report.diagnostics if self._fails(d)]
            total = sum(count for severity, count in report.by_severity.items() if self._reaches(severity))
            heading = f"{total} contract problem(s) at {self.fail_on} or worse in {os.fspath(path)}:"
            told = problems_report(failing, heading)
            if total > len(failing):
                told += f"\n  and {total - len(failing)} more past the first {report.max_diagnostics} diagnostics kept"
            pytest.fail(told, pytrace=False)
        return report

    def _fails(self, diagnostic: Diagnostic) -> bool:
        return self._reaches(diagnostic.severity)

    def _reaches(self, severity: str) -> bool:
        return Report.reaches(severity, self.fail_on)

    def _fail_on_any(self, failing: list[Diagnostic], subject: str) -> None:
        __tracebackhide__ = True
        if failing:
            heading = f"{len(failing)} contract problem(s) at {self.fail_on} or worse in {subject}:"
            pytest.fail(problems_report(failing, heading), pytrace=False)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gym-contract", "gym-contract: the rollout data contract")
    group.addoption(
        "--contract-fail-on",
        dest=_OPTION,
        choices=SEVERITIES,
        default=None,
        help="the least severe diagnostic that fails a `contract` check (default: the ini value, else error)",
    )
    parser.addini(_OPTION, "the least severe diagnostic that fails a `contract` check", default="error")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "contract_fail_on(severity): the least severe diagnostic that fails this test's contract checks"
    )


@pytest.fixture
def contract(request: pytest.FixtureRequest) -> Contract:
    """Checks that fail the test with a readable report: `check`, `check_records`, `check_file`."""
    marker = request.node.get_closest_marker(_OPTION)
    chosen = marker.args[0] if marker is not None and marker.args else None
    chosen = chosen or request.config.getoption(_OPTION) or request.config.getini(_OPTION)
    if chosen not in SEVERITIES:
        raise pytest.UsageError(f"contract_fail_on must be one of {', '.join(SEVERITIES)}; got {chosen!r}")
    return Contract(chosen)
