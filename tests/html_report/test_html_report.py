"""The HTML report through its function and its command: the same counts as validate, sampling said, data escaped."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract._vocabulary import TOKEN_FIELDS
from gym_contract.html_report import EXTRA_MISSING, write_html_report
from gym_contract.html_report._tallies import UNKNOWN_BIN, Tallies, bin_label, token_bin
from gym_contract.validation._checking import check_files
from tests.support import REPO

EXAMPLES = REPO / "examples"
ROLLOUTS = EXAMPLES / "rollouts.jsonl"
DAMAGED = EXAMPLES / "damaged_rollouts.jsonl"
HOSTILE = "</script><script>alert(1)</script>"


class _Page(HTMLParser):
    """The numbers a page shows under data-* attributes, the text of the sampling note, and every chart's id."""

    def __init__(self) -> None:
        super().__init__()
        self.numbers: dict[tuple[str, str], int] = {}
        self.charts: list[str] = []
        self.sampling = ""
        self._open: tuple[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for name in ("data-count", "data-gap", "data-tokens", "data-unknown"):
            if found.get(name) is not None:
                self._open = (name, str(found[name]))
        if found.get("id") == "sampling":
            self._open = ("sampling", "")
        if tag == "div" and (found.get("id") or "").startswith("chart-"):
            self.charts.append(str(found["id"]))

    def handle_data(self, data: str) -> None:
        if self._open == ("sampling", ""):
            self.sampling += data
        elif self._open is not None:
            self.numbers[self._open] = int(data.replace(",", ""))

    def handle_endtag(self, tag: str) -> None:
        self._open = None


def page_of(path: Path) -> _Page:
    parser = _Page()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def gym_contract(*arguments: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gym_contract", *arguments], input=stdin, capture_output=True, check=False
    )


def test_the_page_shows_the_counts_of_validate_on_the_same_input(tmp_path: Path):
    output = tmp_path / "report.html"
    result = gym_contract("report", str(ROLLOUTS), str(DAMAGED), "-o", str(output))
    validated = gym_contract("validate", "--format", "json", str(ROLLOUTS), str(DAMAGED))
    assert result.returncode == validated.returncode == 1, result.stderr
    expected = json.loads(validated.stdout)
    page = page_of(output)
    for name in ("lines", "records", "valid_records", "invalid_records", "damaged_lines", "blank_lines", "model_calls"):
        assert page.numbers[("data-count", name)] == expected[name], name
    for code, number in expected["diagnostics_by_code"].items():
        assert page.numbers[("data-count", code)] == number, code
    assert {code for kind, code in page.numbers if kind == "data-gap"} == set(expected["gaps_by_code"])
    for code, number in expected["gaps_by_code"].items():
        assert page.numbers[("data-gap", code)] == number, code
    for name, tally in expected["tokens"].items():
        assert page.numbers[("data-tokens", name)] == tally["sum"]
        assert page.numbers[("data-unknown", name)] == tally["unknown"]
    assert f'id="verdict">{expected["verdict"].upper()}<' in output.read_text(encoding="utf-8")
    assert page.charts[:4] == ["chart-diagnostics", "chart-gaps", "chart-coverage", "chart-tokens"]
    assert len(page.charts) == 4 + expected["records"]  # a timeline per rollout: every example has timed events


def test_a_sample_is_said_to_be_one_and_the_seed_draws_the_same_rollouts(tmp_path: Path):
    whole = write_html_report([str(ROLLOUTS)], tmp_path / "whole.html")
    assert (whole.rollouts, whole.shown, whole.sampled) == (6, 6, False)
    note = page_of(tmp_path / "whole.html").sampling
    assert note.startswith("All 6 rollouts are drawn")
    assert "ampl" not in note
    drawn = []
    for name in ("a", "b"):
        part = write_html_report([str(ROLLOUTS), str(DAMAGED)], tmp_path / f"{name}.html", sample=3, seed=5)
        assert (part.rollouts, part.shown, part.sampled) == (10, 3, True)
        page = page_of(tmp_path / f"{name}.html")
        assert page.sampling.startswith("Sampled: 3 of 10 rollouts")
        assert "seed 5" in page.sampling
        assert page.numbers[("data-count", "records")] == 10  # the counts are over every record
        drawn.append([chart for chart in page.charts if chart.startswith("chart-timeline")])
        drawn.append(_titles(tmp_path / f"{name}.html"))
    assert drawn[1] == drawn[3]
    assert len(drawn[0]) == 3


def _titles(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [part.split("</h3>")[0] for part in text.split('<article class="rollout">\n  <h3>')[1:]]


def _line_with(change: Any) -> bytes:
    record = json.loads(ROLLOUTS.read_bytes().splitlines()[0])
    change(record)
    return json.dumps(record).encode()


def test_unknown_token_counts_are_counted_apart_and_never_as_zero(tmp_path: Path):
    def forget_reasoning(record: dict[str, Any]) -> None:
        for call in record["ng_trajectory"]["model_calls"]:
            call["token_stats"]["reasoning_tokens"] = None
        record.pop("ng_model_call_capture", None)

    source = tmp_path / "unknown.jsonl"
    source.write_bytes(_line_with(forget_reasoning) + b"\n")
    written = write_html_report([str(source)], tmp_path / "report.html")
    calls = written.report.model_calls
    assert calls > 0
    page = page_of(tmp_path / "report.html")
    assert page.numbers[("data-unknown", "reasoning_tokens")] == calls
    assert page.numbers[("data-tokens", "reasoning_tokens")] == 0
    assert page.numbers[("data-unknown", "prompt_tokens")] == 0
    histograms = (tmp_path / "report.html").read_text(encoding="utf-8").split('id="chart-tokens"')[1]
    assert '"unknown"' in histograms


def test_damaged_lines_are_counted_and_listed_with_their_line_and_the_rest_is_drawn(tmp_path: Path):
    lines = ROLLOUTS.read_bytes().splitlines()
    source = tmp_path / "damaged.jsonl"
    source.write_bytes(lines[0] + b"\n{not json\n" + lines[1] + b"\n[1, 2]\n")
    output = tmp_path / "report.html"
    result = gym_contract("report", str(source), "-o", str(output))
    assert result.returncode == 1
    assert b"Traceback" not in result.stderr
    assert b"2 damaged lines, all 2 rollouts drawn" in result.stdout
    page = page_of(output)
    assert page.numbers[("data-count", "damaged_lines")] == 2
    assert page.numbers[("data-count", "records")] == 2
    text = output.read_text(encoding="utf-8")
    assert f"<td>{source}:2</td>" in text
    assert f"<td>{source}:4</td>" in text


def test_stdin_and_gzip_give_the_page_of_the_plain_file(tmp_path: Path):
    packed = tmp_path / "rollouts.jsonl.gz"
    packed.write_bytes(gzip.compress(ROLLOUTS.read_bytes()))
    plain = page_of(Path(write_html_report([str(ROLLOUTS)], tmp_path / "plain.html").path)).numbers
    assert gym_contract("report", str(packed), "-o", str(tmp_path / "gz.html")).returncode == 0
    piped = gym_contract("report", "-", "-o", str(tmp_path / "stdin.html"), stdin=ROLLOUTS.read_bytes())
    assert piped.returncode == 0
    assert page_of(tmp_path / "gz.html").numbers == plain
    assert page_of(tmp_path / "stdin.html").numbers == plain


def test_text_from_the_data_is_escaped_everywhere(tmp_path: Path):
    def hostile(record: dict[str, Any]) -> None:
        record["agent_ref"]["name"] = HOSTILE
        record["ng_agent_observations"]["source"] = HOSTILE
        record["ng_trajectory"]["invocations"][0]["conversation"][0]["content"] = HOSTILE
        record["ng_trajectory"]["gaps"].append({"code": HOSTILE, "invocation_id": None, "detail": HOSTILE})
        record["ng_trajectory"]["tool_calls"][0]["tool_name"] = HOSTILE

    source = tmp_path / "hostile.jsonl"
    source.write_bytes(_line_with(hostile) + b"\n")
    output = tmp_path / "report.html"
    write_html_report([str(source)], output, title=HOSTILE)
    text = output.read_text(encoding="utf-8")
    assert "<script>alert(1)" not in text
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_without_the_extra_the_command_fails_in_one_line_naming_it(tmp_path: Path):
    for library in ("plotly", "jinja2"):
        # The library made unimportable, as in an installation without the extra.
        program = (
            f"import sys; sys.modules[{library!r}] = None; "
            "from gym_contract.cli import main; sys.exit(main(sys.argv[1:]))"
        )
        output = tmp_path / "report.html"
        result = subprocess.run(
            [sys.executable, "-c", program, "report", str(ROLLOUTS), "-o", str(output)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 2
        assert result.stderr == f"gym-contract: {EXTRA_MISSING}\n"
        assert 'python -m pip install ".[report]" in a checkout of gym-contract' in result.stderr
        assert not output.exists()


def test_an_input_that_cannot_be_opened_is_a_usage_error_and_nothing_is_written(tmp_path: Path):
    output = tmp_path / "report.html"
    result = gym_contract("report", str(tmp_path / "gone.jsonl"), "-o", str(output))
    assert result.returncode == 2
    assert result.stderr.decode().startswith("gym-contract: cannot open")
    assert not output.exists()


def test_the_record_hook_sees_every_record_once_in_order_and_needs_one_process():
    seen: list[tuple[str | None, int | None]] = []
    report = check_files([str(ROLLOUTS)], on_record=lambda kind, record, found, name, line: seen.append((kind, line)))
    assert seen == [("rollout", line) for line in range(1, report.records + 1)]
    with pytest.raises(ValueError, match="jobs=1"):
        check_files([str(ROLLOUTS)], jobs=2, on_record=lambda *seen: None)


@given(st.integers(min_value=0, max_value=1 << 40))
def test_a_token_count_falls_in_the_bin_whose_label_bounds_it(count: int):
    number = token_bin(count)
    assert number != UNKNOWN_BIN
    if count == 0:
        assert bin_label(number) == "0"
    else:
        assert 1 << (number - 1) <= count < 1 << number
    assert token_bin(count + 1) >= number  # bins follow the counts' order


def test_the_bins_read_as_their_bounds():
    assert [bin_label(token_bin(count)) for count in (0, 1, 2, 3, 4, 1023, 1024, 5 << 20)] == [
        "0",
        "1",
        "2–4",
        "2–4",
        "4–8",
        "512–1k",
        "1k–2k",
        "4M–8M",
    ]
    assert bin_label(UNKNOWN_BIN) == "unknown"


def test_ci_installs_the_chromium_the_browser_test_opens():
    run = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    install = run.index("apt-get install")
    assert "chromium" in run[install : run.index("\n", install)]
    assert install < run.index("python -m pytest")


def test_the_timeline_marks_compactions_and_gaps_and_names_what_has_no_time(tmp_path: Path):
    def eventful(record: dict[str, Any]) -> None:
        trajectory = record["ng_trajectory"]
        root = trajectory["invocations"][0]["invocation_id"]
        started = trajectory["model_calls"][0]["started_at"]
        record["ng_agent_observations"]["records"].append(
            {"kind": "context_compaction", "invocation_id": root, "observed_at": started + 1, "tokens_before": 9000}
        )
        trajectory["gaps"].append({"code": "tool_timing_unavailable", "invocation_id": root, "detail": "Grep"})
        for name in ("started_at", "completed_at", "duration_ms"):
            trajectory["tool_calls"][0][name] = None

    source = tmp_path / "eventful.jsonl"
    source.write_bytes(_line_with(eventful) + b"\n")
    write_html_report([str(source)], tmp_path / "report.html")
    text = (tmp_path / "report.html").read_text(encoding="utf-8")
    timeline = text.split('id="chart-timeline-0"')[1].split("</script>")[0]
    for trace in ("invocation", "model call", "tool call", "compaction", "gap"):
        assert f'"name":"{trace}"' in timeline, trace
    assert "compaction: 9000 → None tokens" in timeline
    assert "gap tool_timing_unavailable: Grep" in timeline
    assert "Not on the time axis, for want of a start or an end: tool call Task" in text


def test_a_missing_output_folder_is_said_before_any_input_is_read(tmp_path: Path):
    result = gym_contract("report", "-", "-o", str(tmp_path / "gone" / "report.html"), stdin=b"{not json\n")
    assert result.returncode == 2
    assert result.stderr.decode() == f"gym-contract: {tmp_path / 'gone'}: no such folder\n"


def test_a_json_document_is_read_as_validate_reads_it(tmp_path: Path):
    document = REPO / "docs" / "examples" / "bundle.json"
    written = write_html_report([str(document)], tmp_path / "report.html")
    timing = ("seconds", "mb_per_s")
    drawn = {key: value for key, value in written.report.to_dict().items() if key not in timing}
    assert drawn == {key: value for key, value in check_files([str(document)]).to_dict().items() if key not in timing}
    assert written.report.records == 1
    assert (written.rollouts, written.sampled) == (0, False)
    assert page_of(tmp_path / "report.html").sampling == "No rollout or trajectory records to draw."


@pytest.mark.parametrize("unknown", [False, True])
def test_every_model_call_lands_in_a_bin_of_each_token_count(unknown: bool):
    # Found by the browser test: with every count known, the engine summed them in one step that
    # left the bins empty, and the page drew an empty token chart.
    every_count = dict.fromkeys(TOKEN_FIELDS, 1 << 10) | {"prompt_tokens": 3}
    calls = [{"token_stats": dict(every_count)} for _ in range(4)]
    if unknown:
        calls[0]["token_stats"]["prompt_tokens"] = None
    tallies = Tallies()
    tallies.see("trajectory", {"model_calls": calls}, [], "input.jsonl", 1)
    (producer,) = tallies.by_producer.values()
    prompt, completion = producer.tokens["prompt_tokens"], producer.tokens["completion_tokens"]
    assert prompt.bins == ({UNKNOWN_BIN: 1, token_bin(3): 3} if unknown else {token_bin(3): 4})
    assert (prompt.known, prompt.unknown) == ((9, 1) if unknown else (12, 0))
    assert completion.bins == {token_bin(1 << 10): 4}
    assert completion.known == 4 << 10
