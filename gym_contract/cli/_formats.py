"""A validation report for CI systems: SARIF 2.1.0 for code scanning, and GitHub Actions workflow annotations."""

from __future__ import annotations

import json
from typing import Any, TextIO

from gym_contract import __version__
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
                        "exitCode": 1 if report.fails(fail_on) else 0,
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
        "locations": [_location(diagnostic)],
    }
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
    from urllib.parse import quote

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
    else:
        out.write(f"::error title=input_unreadable::{_escape_data(message)}\n")
        return
    json.dump(document, out, indent=2, ensure_ascii=False)
    out.write("\n")


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
