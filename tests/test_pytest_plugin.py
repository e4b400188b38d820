"""The pytest plugin as a harness's test suite meets it: run by pytester, in a project of its own."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support import REPO

pytest_plugins = ["pytester"]

EXAMPLE = json.loads((REPO / "examples" / "rollouts.jsonl").read_text().splitlines()[0])


def _with_a_warning() -> dict[str, Any]:
    """The example rollout with a tool call whose duration disagrees with its timestamps: a warning, no error."""
    record = json.loads(json.dumps(EXAMPLE))
    record["ng_trajectory"]["tool_calls"][0]["duration_ms"] += 5000
    return record


def _with_an_error() -> dict[str, Any]:
    record = json.loads(json.dumps(EXAMPLE))
    record["ng_trajectory"]["tool_calls"][0]["duration_ms"] = -1
    return record


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A harness's test suite: its records in files, and tests that check them through the `contract` fixture."""
    for name, record in (("valid", EXAMPLE), ("warning", _with_a_warning()), ("error", _with_an_error())):
        (pytester.path / f"{name}.json").write_text(json.dumps(record))
    (pytester.path / "damaged.jsonl").write_bytes((REPO / "examples" / "damaged_rollouts.jsonl").read_bytes())
    pytester.makepyfile(
        test_harness="""
        import json
        import pytest

        def load(name):
            with open(name + ".json") as handle:
                return json.load(handle)

        def test_valid(contract):
            assert contract.check(load("valid")) == []

        def test_warning(contract):
            contract.check(load("warning"))

        def test_error(contract):
            contract.check(load("error"))

        @pytest.mark.contract_fail_on("warning")
        def test_warning_marked(contract):
            contract.check(load("warning"))

        def test_records(contract):
            contract.check_records([load("valid"), load("error")])

        def test_file(contract):
            contract.check_file("damaged.jsonl")
        """
    )
    return pytester


def test_errors_fail_with_the_code_pointer_and_docs_link_and_warnings_pass(project: pytest.Pytester):
    result = project.runpytest("-p", "no:cacheprovider", "-k", "valid or error or warning and not marked")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*1 contract problem(s) at error or worse in this record:",
            "*error schema_violation at /ng_trajectory/tool_calls/0/duration_ms: -1 is less than the minimum of 0",
            "*https://gym-contract.dev/reference/errors/#schema_violation",
        ]
    )
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize(
    "how", [["--contract-fail-on", "warning"], ["-o", "contract_fail_on=warning"]], ids=["option", "ini"]
)
def test_warnings_fail_when_the_option_or_the_ini_says_so(project: pytest.Pytester, how: list[str]):
    result = project.runpytest("-p", "no:cacheprovider", "-k", "test_warning and not marked", *how)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*warning duration_mismatch at /ng_trajectory/tool_calls/0/duration_ms:*"])


def test_a_marker_sets_the_severity_of_one_test(project: pytest.Pytester):
    result = project.runpytest("-p", "no:cacheprovider", "-k", "warning")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*FAILED test_harness.py::test_warning_marked*"])


def test_records_and_files_are_named_in_the_failure(project: pytest.Pytester):
    result = project.runpytest("-p", "no:cacheprovider", "-k", "records or file")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*record 1: error schema_violation at /ng_trajectory/tool_calls/0/duration_ms:*",
            "*damaged.jsonl:1: error schema_violation at /ng_agent_observations/records/1:*",
            "*damaged.jsonl:3: error schema_violation at /ng_trajectory/tool_calls/0/duration_ms:*",
        ]
    )


def test_an_error_past_the_diagnostics_a_report_keeps_still_fails_a_file(project: pytest.Pytester):
    """A report keeps its first 1000 diagnostics; the verdict counts them all."""
    lines = [json.dumps(_with_a_warning())] * 1001 + [json.dumps(_with_an_error())]
    (project.path / "late.jsonl").write_text("\n".join(lines) + "\n")
    project.makepyfile(test_late="def test_late(contract):\n    contract.check_file('late.jsonl')\n")
    result = project.runpytest("-p", "no:cacheprovider", "test_late.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*1 contract problem(s) at error or worse in late.jsonl:", "*and 1 more past the first 1000 diagnostics kept"]
    )


def test_a_severity_that_is_none_is_a_usage_error(project: pytest.Pytester):
    result = project.runpytest("-p", "no:cacheprovider", "-o", "contract_fail_on=fatal", "-k", "valid")
    result.stdout.fnmatch_lines(["*contract_fail_on must be one of error, warning, info; got 'fatal'*"])
    assert result.ret != 0
