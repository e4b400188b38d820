"""Blocks made by running gym-contract on example inputs: the errors page, console runs, assert_valid messages."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

from gym_contract import cli
from gym_contract.diagnostics import CODES

from .markdown import cell, fenced, pretty, prose

ERROR_EXAMPLES = "examples/errors"  # under docs/
# Shown in place of wherever the docs folder really is, so a copy renders the same text.
ERROR_EXAMPLES_SHOWN = f"docs/{ERROR_EXAMPLES}"

# The one diagnostic whose example is a command rather than a file: nothing can be opened.
UNOPENABLE = "input_unreadable"
MISSING_INPUT = "no-such-file.jsonl"
# Options an example needs to show its code at a readable size.
EXAMPLE_ARGS = {"line_too_long": ["--max-line-bytes", "64"]}
# What a reader needs to know about an example beyond its input and output.
EXAMPLE_NOTES = {
    UNOPENABLE: "An input that cannot be opened at all stops the command before any record is read: it prints "
    "why and exits with status 2. An input that fails part-way through (an I/O error) is reported as this "
    "diagnostic, after every line read before the failure has been checked.",
    "input_truncated": "The example is a gzip file cut short, so its bytes are not shown; the two lines before "
    "the cut were checked.",
    "json_duplicate_key": "Every object of the contract is looked at, and a record's top level. The inside of "
    "an opaque payload (a model call's request or response, a tool's output, a turn's question, answer or "
    "reasoning, a rollout key outside the contract) is not: the contract says nothing of its content, and "
    "validation never decodes it. The same holds for the values of an object, and the elements of an array, "
    "that the schema types but says nothing inside (a captured call's `request` object: its own keys are "
    "looked at, not what they hold). No command refuses such a record either: `project` and the others keep "
    "the last value of a key repeated inside a payload, as every JSON reader does.",
    "json_invalid": "Besides text that is not JSON, this is a `.json` document with no JSON value at all (an "
    "empty file, or only whitespace), and text nested deeper than a record of its kind may "
    "be: 1,024 levels for a rollout record (what orjson reads), one less for a bundle, a trajectory, a capture "
    "attachment or an outcome, three less for a raw capture line — the room each has once embedded in a "
    "rollout record, so that whatever passes can be projected and written by every command. Numbers have no "
    "limit: an integer is exact at any size, and a number Python cannot hold (more than 4,300 digits, or "
    "beyond a double's range) is kept as written inside an opaque payload, a `schema_violation` where the "
    "contract wants a number. Text is strict: a string holding a lone UTF-16 surrogate (a `\\ud800`–`\\udfff` "
    "escape without its other half) is not text, and the line is refused here, by every reader and whatever else "
    "the line holds — a number beyond a double's range beside it changes nothing. A value handed to "
    "`iter_diagnostics` in Python that no JSON text could be (a key that is not a string, an integer too long to "
    "write) is reported here too.",
    "invocation_reference_missing": "Partial evidence is legal: a harness that sees only part of the invocation "
    "tree, and the reference's collector, write bundles and trajectories whose tool calls, compactions or turns "
    "name an invocation the record does not hold. A warning in bundles and trajectories alike.",
    "tool_call_duplicate": "One call observed twice (at two boundaries, or once by the producer and once by the "
    "harness) is legal evidence, and the reference writes it. The projection merges a call's observations into "
    "one record; observations that disagree are named by the gap `duplicate_tool_call`.",
    "no_records": "The example is an empty file. The code is about the whole run, not a line: inputs that hold "
    "nothing at all (empty files, only blank lines, an empty JSON array) were not checked, and a gate that "
    "checked nothing must not pass. A run with damaged lines read something, and fails on them already. "
    "With `--allow-empty`, for a pipeline whose inputs may legitimately be empty, it is an info and the run "
    "passes. `report` does the same; `coverage` says it on "
    "stderr and exits 1 when there is no rollout to rate, `lineage` when a capture file holds no call, each "
    "with `--allow-empty` too.",
    "line_too_long": "The default limit is 64 MiB per line; the example lowers it with `--max-line-bytes` (an "
    "option left out of `--help`) to stay readable. A line past the limit is too long even if it holds only "
    "spaces: its bytes are dropped unread as they come. A line that a damaged compressed input cuts short is "
    "that damage's to report, as `input_truncated`, whatever its length: one diagnostic for one line.",
}


# ------------------------------------------------------------------------------------------ errors


def error_example_file(docs: Path, code_name: str) -> Path | None:
    """The example input of a diagnostic code: `docs/examples/errors/<code>.<ext>`."""
    found = sorted((docs / ERROR_EXAMPLES).glob(f"{code_name}.*"))
    return found[0] if found else None


def run_cli(args: list[str]) -> tuple[int, str]:
    """Run `gym-contract` in this process; its exit status and what it printed (stdout, then stderr)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="\n")  # with .buffer, like sys.stdout
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="\n")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(args)
        except SystemExit as stop:  # argparse errors, --version
            status = int(stop.code or 0)
    printed = []
    for stream in (out, err):
        stream.flush()
        printed.append(stream.buffer.getvalue().decode("utf-8"))  # type: ignore[attr-defined]
    return status, "".join(printed)


def error_example(docs: Path, code_name: str) -> tuple[list[str], int, str, str | None, str] | None:
    """A code's example, or None if it has none: (arguments shown, exit status, output shown, input, its title).

    The input is None when it is not text (a compressed file, or no file at all).
    """
    if code_name == UNOPENABLE:
        missing = docs / ERROR_EXAMPLES / MISSING_INPUT
        shown = f"{ERROR_EXAMPLES_SHOWN}/{MISSING_INPUT}"
        status, output = run_cli(["validate", str(missing)])
        return ["validate", shown], status, output.replace(str(missing), shown), None, ""
    path = error_example_file(docs, code_name)
    if path is None:
        return None
    shown = f"{ERROR_EXAMPLES_SHOWN}/{path.name}"
    args = ["validate", *EXAMPLE_ARGS.get(code_name, []), str(path)]
    status, output = run_cli(args)
    # Keep the diagnostics and the verdict; the counts and the timing line that follow are left out.
    kept = []
    for line in output.replace(str(path), shown).split("\n"):
        kept.append(line)
        if line.startswith(("PASS (", "FAIL (")):
            break
    if path.name.endswith((".gz", ".zst")):
        return [*args[:-1], shown], status, "\n".join(kept), None, path.name
    text = path.read_bytes().decode("utf-8", errors="backslashreplace").rstrip("\n")
    title = path.name
    if "\n" not in text and len(text) > 100:
        with contextlib.suppress(ValueError):
            text, title = pretty(json.loads(text), width=88), f"{path.name} (one line in the file, shown indented)"
    return [*args[:-1], shown], status, "\n".join(kept), text, title


def render_errors(page: str, docs: Path) -> str:
    lines = ["| code | severity | meaning |", "|---|---|---|"]
    for code_name, info in CODES.items():
        lines.append(f"| [`{code_name}`](#{code_name}) | {info.severity} | {cell(prose(info.summary))} |")
    for code_name, info in CODES.items():
        lines += ["", f"### `{code_name}` {{#{code_name}}}", "", f"**{info.severity}** · {prose(info.summary)}", ""]
        example = error_example(docs, code_name)
        if example is None:
            lines += [f"No example yet: add `{ERROR_EXAMPLES_SHOWN}/{code_name}.jsonl`.", ""]
            continue
        command, status, output, content, title = example
        if code_name in EXAMPLE_NOTES:
            lines += [EXAMPLE_NOTES[code_name], ""]
        if content:  # an empty example file (no_records) is said in its note, not shown as an empty block
            lines += [*fenced("json" if content.startswith(("{", "[")) else "text", content, title), ""]
        shown_command = " ".join(["gym-contract", *command])
        lines += [f"<!-- exit: {status} -->", *fenced("console", f"$ {shown_command}\n{output.rstrip()}")]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------- console runs

# `console:<name>` blocks: a command run on the repository's example files, shown with its output.
CONSOLE = {
    "validate-example": ["validate", "examples/rollouts.jsonl"],
    "validate-damaged": ["validate", "examples/damaged_rollouts.jsonl"],
    "validate-damaged-json": [
        "validate",
        "examples/damaged_rollouts.jsonl",
        "--format",
        "json",
        "--max-diagnostics",
        "1",
    ],
    "validate-quiet": ["validate", "examples/rollouts.jsonl", "--quiet", "--fail-on", "warning"],
    "validate-bundle": ["validate", "docs/examples/bundle.json"],
    "validate-bundle-bad": ["validate", "docs/examples/bundle_with_problems.json"],
    "version": ["--version"],
    "join-example": [
        *("join", "--capture", "examples/capture", "--rollout-id", "7-0"),
        "docs/examples/join_observations.json",
    ],
    "project-example": [
        *("project", "docs/examples/project_rollouts.jsonl"),
        *("--capture-dir", "examples/capture", "-o", "/dev/null"),
    ],
    "schema-list": ["schema", "list"],
    "schema-show-id": ["schema", "show", "trajectory", "--id"],
    "schema-diff": ["schema", "diff", "1.0"],
}
# Lines that differ from one run to the next: throughput, and the JSON report's timing fields.
VOLATILE = re.compile(r'^(\s+[\d.,]+ MB (read, .* of JSON, )?in [\d.]+ s \(.*\)|\s+"(seconds|mb_per_s)": .*)$')


def render_console(page: str, name: str) -> str:
    if name not in CONSOLE:
        raise KeyError(f"no console example {name!r}; known: {', '.join(CONSOLE)}")
    args = CONSOLE[name]
    status, output = run_cli(args)
    kept = [line for line in output.rstrip("\n").split("\n") if not VOLATILE.match(line)]
    return "\n".join(
        [f"<!-- exit: {status} -->", *fenced("console", "\n".join([f"$ gym-contract {' '.join(args)}", *kept]))]
    )


def render_assert_valid(page: str, name: str, docs: Path) -> str:
    """What `gym_contract.testing.assert_valid` says about `docs/examples/<name>.json`."""
    from gym_contract.testing import assert_valid

    record = json.loads((docs / "examples" / f"{name}.json").read_text(encoding="utf-8"))
    try:
        assert_valid(record)
    except AssertionError as failure:
        message = f"AssertionError: {failure}"
    else:
        message = "(passes: no diagnostic at or above the threshold)"
    return "\n".join(fenced("text", message))
