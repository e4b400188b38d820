"""`gym-contract coverage` and the matrix in `gym-contract validate`, run as a user runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support import REPO

EXAMPLES = str(REPO / "examples" / "rollouts.jsonl")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "gym_contract", *args], capture_output=True, text=True, check=False)
    assert "Traceback" not in result.stderr + result.stdout
    return result


def test_the_text_matrix_has_a_row_per_producer_and_one_over_all_rollouts() -> None:
    result = run("coverage", EXAMPLES)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("coverage of 6 rollouts by source")
    assert lines[1].split() == ["producer", "rollouts", "C1", "C2", "C3", "C4", "C5", "C6", "C7"]
    rule = "─" * len(lines[1])
    # A rule under the headings and one above the totals, the width of the table.
    assert lines[2] == lines[7] == rule
    assert [line.split()[0] for line in lines[3:7]] == ["claude_code", "hermes", "opencode", "pi"]
    assert lines[8].split()[:5] == ["all", "rollouts", "6", "V", "V"]
    # Then where a producer's rollouts fall short of the capability it declares.
    assert lines[9:] == [
        "below the capability the producer declares (gym-contract observe --list):",
        "  claude_code C7: declared V, 1 of 1 rollouts rated lower",
        "  opencode C5: declared V, 1 of 2 rollouts rated lower",
        "  opencode C6: declared V, 1 of 2 rollouts rated lower",
        "  opencode C7: declared V, 2 of 2 rollouts rated lower",
        "  pi C5: declared V, 1 of 1 rollouts rated lower",
        "  pi C7: declared V, 1 of 1 rollouts rated lower",
    ]
    assert all(line == line.rstrip() and "\x1b" not in line for line in lines)


def test_on_request_the_verdicts_are_coloured_and_the_layout_is_kept() -> None:
    plain = run("coverage", EXAMPLES).stdout
    coloured = subprocess.run(
        [sys.executable, "-m", "gym_contract", "coverage", EXAMPLES],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "FORCE_COLOR": "1"},
    ).stdout
    assert "\x1b[32mV\x1b[0m" in coloured
    assert "\x1b[33mO\x1b[0m" in coloured
    unpainted = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert [line.rstrip() for line in unpainted.splitlines()] == plain.splitlines()


def test_json_gives_the_rollouts_at_each_verdict_per_producer() -> None:
    result = run("coverage", EXAMPLES, "--format", "json")
    document = json.loads(result.stdout)
    assert document["by"] == "source"
    assert document["rollouts"] == 6
    assert set(document["producers"]) == {"claude_code", "hermes", "opencode", "pi"}
    every = document["all"]
    assert (every["V"]["C5"], every["O"]["C5"], every["X"]["C5"]) == (4, 2, 0)
    assert document["damaged_lines"] == document["other_records"] == 0


def test_markdown_has_the_layout_of_the_reference_matrix() -> None:
    result = run("coverage", EXAMPLES, "--format", "markdown", "--by", "agent")
    lines = result.stdout.splitlines()
    assert lines[0] == "| harness | C1 | C2 | C3 | C4 | C5 | C6 | C7 |"
    assert lines[1] == "|---|---|---|---|---|---|---|---|"
    assert lines[2] == "| `swe_claude_code_agent` | V | V | O | V | V | V | O |"
    assert lines[6] == ""
    assert lines[7].startswith("Rollouts rated: 6 (")


def test_explain_counts_the_reasons_that_kept_rollouts_from_v() -> None:
    result = run("coverage", EXAMPLES, "--explain", "C5")
    explained = result.stdout.split("\n\n", 1)[1].splitlines()
    assert explained[0] == "C5: 4 of 6 rollouts at V, 2 at O, 0 at X"
    assert explained[2].split() == ["rollouts", "reason"]
    reasons = {line.split(maxsplit=1)[1]: int(line.split()[0]) for line in explained[4:]}
    assert reasons["gap tool_timing_unavailable"] == 1
    assert reasons["tool_calls[].started_at null"] == 1


def test_damaged_lines_and_other_records_are_counted_not_rated(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    first = Path(EXAMPLES).read_text().splitlines()[0]
    path.write_text(first + "\n{not json\n" + json.dumps({"source": "pi", "records": []}) + "\n")
    result = run("coverage", str(path))
    assert result.returncode == 0
    assert "not rated: 1 damaged lines, 1 other records" in result.stdout
    assert f"{path}:2: " in result.stderr


def test_an_input_that_cannot_be_opened_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run("coverage", str(tmp_path / "missing.jsonl"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("gym-contract: ")


def test_validate_shows_the_matrix_in_its_summary_and_its_json() -> None:
    text = run("validate", EXAMPLES, "--quiet").stdout
    assert "evidence coverage by observation source (V complete, O partial, X unavailable):" in text
    assert "    all rollouts" in text
    document = json.loads(run("validate", EXAMPLES, "--format", "json").stdout)
    coverage_json = json.loads(run("coverage", EXAMPLES, "--format", "json").stdout)
    for key in ("by", "damaged_lines", "other_records", "declared", "below_declared"):
        coverage_json.pop(key)
    assert document["coverage"] == coverage_json


def test_the_readme_and_the_criteria_page_show_the_current_matrix_of_the_example_file() -> None:
    text = run("coverage", EXAMPLES).stdout
    markdown = run("coverage", EXAMPLES, "--format", "markdown").stdout
    explained = run("coverage", EXAMPLES, "--explain", "C5").stdout
    assert f"$ gym-contract coverage examples/rollouts.jsonl\n{text}```" in (REPO / "README.md").read_text()
    page = (REPO / "docs" / "reference" / "criteria.md").read_text()
    assert markdown in page
    assert f"$ gym-contract coverage examples/rollouts.jsonl --explain C5\n{explained}```" in page


def test_explain_in_json_is_a_key_of_the_document_and_stdin_is_read() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "gym_contract", "coverage", "-", "--format", "json", "--explain", "C7"],
        input=Path(EXAMPLES).read_text(),
        capture_output=True,
        text=True,
        check=False,
    )
    document = json.loads(result.stdout)
    assert document["explain"] == {
        "criterion": "C7",
        "why_not_v": {"gap no_sandbox_runtime": 4, "gap sandbox_observation_unavailable": 2},
    }


def test_a_name_that_looks_like_markup_is_printed_as_it_is(tmp_path: Path) -> None:
    record = json.loads(Path(EXAMPLES).read_text().splitlines()[0])
    record["agent_ref"]["name"] = "[bold]agent[/bold] [x]"
    rollouts = tmp_path / "named.jsonl"
    rollouts.write_text(json.dumps(record) + "\n")
    lines = run("coverage", str(rollouts), "--by", "agent").stdout.splitlines()
    assert lines[3].startswith("[bold]agent[/bold] [x]  ")
