"""The examples that end each command's `--help`, run from a checkout of the repository as written."""

from __future__ import annotations

import argparse

# Command path -> example command lines. Every line runs as it stands from the repository's root on
# its example data (a test runs them all), except where an argument in capitals stands for a file
# of the reader's own.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "": (
        "gym-contract validate examples/rollouts.jsonl",
        "gym-contract coverage examples/rollouts.jsonl",
        "gym-contract validate --help",
    ),
    "validate": (
        "gym-contract validate examples/rollouts.jsonl",
        "gym-contract validate --format json --fail-on warning examples/damaged_rollouts.jsonl",
        "gym-contract validate --jobs auto --quiet examples/rollouts.jsonl examples/rollout-7-0.jsonl",
        "gym-contract validate --max-diagnostics 0 examples/damaged_rollouts.jsonl",
        "cat examples/rollouts.jsonl | gym-contract validate -",
    ),
    "schema": ("gym-contract schema list", "gym-contract schema show trajectory --id"),
    "schema list": ("gym-contract schema list", "gym-contract schema list --format json"),
    "schema show": ("gym-contract schema show trajectory", "gym-contract schema show model_call_ref --id"),
    "schema dir": ("gym-contract schema dir",),
    "schema diff": (
        "gym-contract schema diff 1.0",
        "gym-contract schema diff schemas/released/1.0 schemas/v1 --format json",
    ),
    "coverage": (
        "gym-contract coverage examples/rollouts.jsonl",
        "gym-contract coverage --by agent --explain C5 examples/rollouts.jsonl",
        "gym-contract coverage --format markdown examples/rollouts.jsonl",
    ),
    "report": (
        "gym-contract report examples/rollouts.jsonl -o report.html",
        "gym-contract report --sample 2 --seed 7 -o report.html"
        " examples/rollouts.jsonl examples/damaged_rollouts.jsonl",
    ),
    "lineage": (
        "gym-contract lineage examples/capture/7-0.capture.jsonl",
        "gym-contract lineage --format json examples/capture/12-0.capture.jsonl",
    ),
    "join": ("gym-contract join --capture examples/capture --rollout-id 7-0 docs/examples/join_observations.json",),
    "project": (
        "gym-contract project examples/rollout-7-0.jsonl --capture-dir examples/capture -o projected.jsonl",
        "gym-contract project examples/rollout-7-0.jsonl --capture-dir examples/capture | gym-contract validate -",
    ),
    "observe": (
        "gym-contract observe --list",
        "gym-contract observe claude-code examples/claude-code/spotter-v2.1.39 --model-ref policy",
    ),
    "observe atif": (
        "gym-contract export atif examples/rollout-7-0.jsonl -o atif && gym-contract observe atif atif/7-0.json",
        "gym-contract export atif examples/rollouts.jsonl -o atif && gym-contract observe atif atif/1-1.json"
        " > bundle.json && gym-contract validate bundle.json",
    ),
    "export": (
        "gym-contract export atif examples/rollouts.jsonl -o atif",
        "gym-contract export otel examples/rollouts.jsonl -o spans.json",
    ),
    "export atif": (
        "gym-contract export atif examples/rollouts.jsonl -o atif",
        "gym-contract export atif --atif-version 1.7 examples/rollout-7-0.jsonl -o atif",
    ),
    "export otel": (
        "gym-contract export otel examples/rollouts.jsonl -o spans.json",
        "gym-contract export otel examples/rollout-7-0.jsonl",
    ),
    "observe claude-code": (
        "gym-contract observe claude-code examples/claude-code/spotter-v2.1.39 --model-ref policy",
        "gym-contract observe claude-code examples/claude-code/spotter-v2.1.39"
        " --stream examples/claude-code/spotter-v2.1.39.stream.jsonl --exit-code 0 --model-ref policy",
    ),
    "observe codex": (
        "gym-contract observe codex examples/codex/exec-json/exec-run.jsonl --exit-code 0",
        "gym-contract observe codex examples/codex/localpush-codex-0.104.0",
    ),
    "observe opencode": (
        "gym-contract observe opencode examples/reference/opencode-1.17.11-export.json --exit-code 0",
        "gym-contract observe opencode examples/reference/opencode-1.17.11-export.json --model-ref policy --timed-out",
    ),
    "outcome codex": (
        "gym-contract outcome codex examples/codex/exec-json/exec-run.jsonl --exit-code 0",
        "cat examples/codex/exec-json/exec-run.jsonl | gym-contract outcome codex - --exit-code 1",
    ),
    "observe otel": (
        "gym-contract export otel examples/rollout-7-0.jsonl -o spans.json && gym-contract observe otel spans.json",
        "gym-contract export otel examples/rollouts.jsonl | gym-contract observe otel -",
    ),
    "observe openclaw": (
        "gym-contract observe openclaw examples/openclaw/home --model-ref policy --exit-code 0",
        "gym-contract observe openclaw examples/openclaw/home/.openclaw/agents/main/sessions/s-root.jsonl",
    ),
    "observe pinchbench": (
        "gym-contract observe pinchbench examples/openclaw/pinchbench --model-ref policy",
        "gym-contract observe pinchbench examples/openclaw/pinchbench --timed-out",
    ),
    "observe pi": (
        "gym-contract observe pi examples/pi/pi-mono-2025-11/before-compaction.jsonl --model-ref policy",
        "gym-contract observe pi examples/pi/pi-mono-2025-11/large-session.jsonl --exit-code 0",
    ),
    "outcome": (
        "gym-contract outcome opencode examples/reference/opencode-1.17.11-export.json --harness-version 1.17.11",
        "gym-contract outcome claude-code examples/claude-code/spotter-v2.1.39.stream.jsonl --exit-code 0",
    ),
    "outcome opencode": (
        "gym-contract outcome opencode examples/reference/opencode-1.17.11-export.json --harness-version 1.17.11",
        "gym-contract outcome opencode examples/reference/opencode-1.17.11-export.json"
        " --events examples/opencode/run-error.jsonl --exit-code 1",
    ),
    "outcome claude-code": (
        "gym-contract outcome claude-code examples/claude-code/spotter-v2.1.39.stream.jsonl --exit-code 0",
        "cat examples/claude-code/spotter-v2.1.39.stream.jsonl | gym-contract outcome claude-code - --exit-code 0",
    ),
    "outcome pi": (
        "gym-contract outcome pi examples/pi/pi-mono-2025-11/large-session.jsonl",
        "cat examples/pi/pi-mono-2025-11/before-compaction.jsonl | gym-contract outcome pi - --exit-code 0",
    ),
    "decide": (
        "gym-contract outcome opencode examples/reference/opencode-1.17.11-export.json | gym-contract decide -",
        "gym-contract outcome opencode examples/reference/opencode-1.17.11-export.json"
        " --events examples/opencode/run-error.jsonl --exit-code 1"
        " | gym-contract decide --policy examples/policy.json --attempt 2 -",
    ),
}

_HEADING = "examples:"


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that the examples keep their lines as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(_HEADING):
            return text
        return super()._fill_text(text, width, indent)


def add_examples(parser: argparse.ArgumentParser, path: str = "") -> None:
    """End the help of ``parser`` and of every command under it with their examples."""
    lines = EXAMPLES.get(path)
    if lines:
        parser.epilog = "\n".join([_HEADING, *(f"  $ {line}" for line in lines)])
        parser.formatter_class = HelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                add_examples(command, f"{path} {name}".strip())


def command_paths(parser: argparse.ArgumentParser, path: str = "") -> list[str]:
    """The path of ``parser`` and of every command under it, as `EXAMPLES` keys them."""
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                found.extend(command_paths(command, f"{path} {name}".strip()))
    return found
