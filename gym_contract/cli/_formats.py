"""A validation report for CI systems: SARIF 2.1.0 for code scanning, JUnit XML, and GitHub Actions annotations."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, TextIO
from urllib.parse import quote
from xml.sax.saxutils import escape, quoteattr

from gym_contract import __version__
from gym_contract._interrupts import exit_status
from gym_contract.diagnostics import CODES, Diagnostic, Severity, docs_url
from gym_contract.validation._report import REPORT_VERSION, Report

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_SARIF_LEVEL: dict[str, str] = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_COMMAND: dict[str, str] = {"error": "error", "warning": "warning", "info": "notice"}


def render_sarif(report: Report, fail_on: Severity, out: TextIO) -> None:
    """One SARIF run: a rule per diagnostic code, with its summary and docs anchor; a result per diagnostic."""
    rules = [_rule(code) for code in CODES]
    index = {code: position for position, code in enumerate(CODES)}
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gym-contract",
                        "version": __version__,
                        "informationUri": "https://gym-contract.dev/",
                        "rules": rules,
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": not report.interrupted,
                        "exitCode": _exit_code(report, fail_on),
                    }
                ],
                "artifacts": [{"location": {"uri": _uri(name)}} for name in report.inputs],
                "results": [_result(diagnostic, index) for diagnostic in report.diagnostics],
                "properties": {"summary": _summary(report, fail_on)},
            }
        ],
    }
    json.dump(document, out, indent=2, ensure_ascii=False)
    out.write("\n")


def _exit_code(report: Report, fail_on: Severity) -> int:
    if report.interrupted:
        return exit_status()
    return 1 if report.fails(fail_on) else 0


def _rule(code: str) -> dict[str, Any]:
    info = CODES[code]
    return {
        "id": code,
        "name": "".join(word.capitalize() for word in code.split("_")),
        "shortDescription": {"text": info.summary},
        "helpUri": docs_url(code),
        "help": {"text": f"{info.summary} See {docs_url(code)}"},
        "defaultConfiguration": {"level": _SARIF_LEVEL[info.severity]},
    }


def _result(diagnostic: Diagnostic, index: dict[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "level": _SARIF_LEVEL[diagnostic.severity],
        "message": {"text": diagnostic.message},
    }
    if location := _location(diagnostic):  # none for a diagnostic about the whole run (no_records)
        result["locations"] = [location]
    if diagnostic.code in index:
        result["ruleIndex"] = index[diagnostic.code]
    if diagnostic.record is not None or diagnostic.kind is not None:
        result["properties"] = {"record": diagnostic.record, "kind": diagnostic.kind}
    return result


def _location(diagnostic: Diagnostic) -> dict[str, Any]:
    location: dict[str, Any] = {}
    if diagnostic.source is not None:
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(diagnostic.source)}}
        if diagnostic.line is not None:
            physical["region"] = {"startLine": diagnostic.line}
        location["physicalLocation"] = physical
    if diagnostic.path:
        # The JSON Pointer inside the record: where in the line the problem is.
        location["logicalLocations"] = [{"fullyQualifiedName": diagnostic.path, "kind": "member"}]
    return location


def _uri(name: str) -> str:
    """A file name as a relative URI reference: forward slashes, spaces and the like escaped."""
    return quote(name.replace("\\", "/"), safe="/:._-~")


def _summary(report: Report, fail_on: Severity) -> dict[str, Any]:
    summary = report.to_dict(fail_on)
    return {key: summary[key] for key in ("verdict", "lines", "records", "invalid_records", "damaged_lines")}


def render_unreadable(format_name: str, error: Exception, out: TextIO) -> None:
    """What a report in ``format_name`` says when an input cannot be opened: no verdict, the reason."""
    message = str(error)
    if format_name == "json":
        document: dict[str, Any] = {
            "report_version": REPORT_VERSION,
            "verdict": "error",
            "error": {"code": "input_unreadable", "message": message, "docs": docs_url("input_unreadable")},
        }
    elif format_name == "sarif":
        document = {
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {"driver": {"name": "gym-contract", "version": __version__, "rules": []}},
                    "invocations": [
                        {
                            "executionSuccessful": False,
                            "exitCode": 2,
                            "toolExecutionNotifications": [{"level": "error", "message": {"text": message}}],
                        }
                    ],
                    "results": [],
                }
            ],
        }
    elif format_name == "junit":
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        out.write('<testsuites name="gym-contract validate" tests="1" failures="0" errors="1">\n')
        out.write('  <testsuite name="inputs" tests="1" failures="0" errors="1">\n')
        out.write(
            '    <testcase name="open the inputs" classname="gym-contract">\n'
            f'      <error type="input_unreadable" message={quoteattr(message)}>{escape(message)}</error>\n'
            "    </testcase>\n  </testsuite>\n</testsuites>\n"
        )
        return
    else:
        out.write(f"::error title=input_unreadable::{_escape_data(message)}\n")
        return
    json.dump(document, out, indent=2, ensure_ascii=False)
    out.write("\n")


# ------------------------------------------------------------------------------------------ JUnit


def render_junit(report: Report, fail_on: Severity, out: TextIO) -> None:
    """A test suite per input and a test case per record, `record N` (N counts an input's records and
    damaged lines from 0): a record whose diagnostics reach ``fail_on`` fails, a damaged line is an
    error, every other record passes; a diagnostic about the whole run (`no_records`) is a test case of
    a suite of its own, `all inputs`. Written as it goes, so that a file of a million records does not
    become a tree in memory."""
    # The diagnostics listed, by what they are about: a record by its index, a damaged line by its number.
    listed: dict[tuple[str | None, str, int | None], list[Diagnostic]] = defaultdict(list)
    for diagnostic in report.diagnostics:
        about = ("record", diagnostic.record) if diagnostic.record is not None else ("line", diagnostic.line)
        key = (diagnostic.source, *about)
        listed[key].append(diagnostic)
    counts = _suite_counts(report, fail_on)
    suites = [(name, counts.get(name, (0, 0))) for name in report.items_by_input]
    failures = sum(failing for _, (failing, _) in suites)
    errors = sum(damaged for _, (_, damaged) in suites)
    tests = sum(report.items_by_input.values())
    whole_run = [d for d in report.diagnostics if (d.source, d.line, d.record) == (None, None, None)]
    run_failures = sum(report.reaches(d.severity, fail_on) for d in whole_run)
    tests, failures = tests + len(whole_run) + report.interrupted, failures + run_failures
    errors += report.interrupted
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(
        f'<testsuites name="gym-contract validate" tests="{tests}" failures="{failures}" errors="{errors}" '
        f'time="{report.seconds:.3f}">\n'
    )
    for name, (suite_failures, suite_errors) in suites:
        out.write(
            f'  <testsuite name={quoteattr(name)} tests="{report.items_by_input[name]}" '
            f'failures="{suite_failures}" errors="{suite_errors}" file={quoteattr(name)}>\n'
        )
        for item in range(report.items_by_input[name]):
            out.write(_test_case(report, name, item, fail_on, listed))
        out.write("  </testsuite>\n")
    if whole_run:
        out.write(f'  <testsuite name="all inputs" tests="{len(whole_run)}" failures="{run_failures}" errors="0">\n')
        for diagnostic in whole_run:
            head = f'    <testcase name={quoteattr(diagnostic.code)} classname="all inputs"'
            if not report.reaches(diagnostic.severity, fail_on):
                out.write(head + "/>\n")
                continue
            message = quoteattr(diagnostic.message)
            out.write(
                f"{head}>\n      <failure type={quoteattr(diagnostic.code)} message={message}>"
                f"{escape(str(diagnostic))}</failure>\n    </testcase>\n"
            )
        out.write("  </testsuite>\n")
    if report.interrupted:
        out.write(_INTERRUPTED_SUITE)
    out.write("</testsuites>\n")


# A run cut short is an error of its own in the test view, so that the passing cases above read as partial.
_INTERRUPTED_SUITE = (
    '  <testsuite name="interrupted" tests="1" failures="0" errors="1">\n'
    '    <testcase name="the lines not read" classname="gym-contract">\n'
    '      <error type="interrupted" message="a signal stopped the check: the cases above cover only the lines '
    'read before it"/>\n'
    "    </testcase>\n"
    "  </testsuite>\n"
)


def _suite_counts(report: Report, fail_on: Severity) -> dict[str, tuple[int, int]]:
    """Per input, its failing records and its damaged lines, in one pass over the flagged items."""
    counts: dict[str, tuple[int, int]] = {}
    for (source, _), (worst, _, damaged) in report.flagged.items():
        failing, broken = counts.get(source, (0, 0))
        counts[source] = (failing + (not damaged and report.reaches(worst, fail_on)), broken + damaged)
    return counts


def _test_case(
    report: Report,
    name: str,
    item: int,
    fail_on: Severity,
    listed: dict[tuple[str | None, str, int | None], list[Diagnostic]],
) -> str:
    # Every case is named by its item alone, passing or not: CI follows a test by its name from run to
    # run, and the line of a failing record is in its failure's text.
    head = f'    <testcase name="record {item}" classname={quoteattr(name)}'
    flag = report.flagged.get((name, item))
    if flag is None:
        return head + "/>\n"
    worst, line, damaged = flag
    diagnostics = listed.get((name, "line", line) if damaged else (name, "record", item), [])
    if not damaged and not report.reaches(worst, fail_on):
        return head + "/>\n"  # warnings below --fail-on: the record passes
    where = f"{name}:{line}: " if line is not None else ""
    text = "\n".join(str(diagnostic) for diagnostic in diagnostics) or (
        f"{where}its diagnostics are counted but not listed: raise --max-diagnostics to see them"
    )
    first = diagnostics[0].code if diagnostics else worst
    message = diagnostics[0].message if diagnostics else f"a diagnostic of severity {worst}"
    element = "error" if damaged else "failure"
    return (
        f"{head}>\n      <{element} type={quoteattr(first)} message={quoteattr(message)}>{escape(text)}"
        f"</{element}>\n    </testcase>\n"
    )


# ------------------------------------------------------------------------------------------ GitHub


def render_github(report: Report, fail_on: Severity, out: TextIO) -> None:
    """A workflow command per diagnostic (`::error file=…,line=…,title=…::…`), then the verdict in one line."""
    for diagnostic in report.diagnostics:
        properties = {"title": diagnostic.code}
        if diagnostic.source is not None:
            properties["file"] = diagnostic.source
        if diagnostic.line is not None:
            properties["line"] = str(diagnostic.line)
        where = f" at {diagnostic.path}" if diagnostic.path else ""
        fields = ",".join(f"{name}={_escape_property(value)}" for name, value in properties.items())
        message = f"{diagnostic.message}{where} ({docs_url(diagnostic.code)})"
        out.write(f"::{_GITHUB_COMMAND[diagnostic.severity]} {fields}::{_escape_data(message)}\n")
    if report.interrupted:
        out.write("::error title=interrupted::a signal stopped the check: the annotations cover only the lines ")
        out.write("read before it\n")
    summary = report.to_dict(fail_on)
    hidden = sum(report.by_code.values()) - len(report.diagnostics)
    more = f", {hidden:,} more not annotated" if hidden > 0 else ""
    out.write(
        f"gym-contract: {summary['verdict'].upper()} (fail on {fail_on}): {summary['records']:,} records, "
        f"{summary['invalid_records']:,} invalid, {summary['damaged_lines']:,} damaged lines{more}\n"
    )


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
