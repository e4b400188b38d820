"""The `gym-contract outcome` and `gym-contract decide` commands: classify a run's end, then decide what to do."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from gym_contract._vocabulary import detect_kind
from gym_contract.cli._common import EXIT_OK, EXIT_USAGE, print_json, say
from gym_contract.diagnostics import ContractError
from gym_contract.models import AgentOutcome
from gym_contract.outcome import Policy, classify_claude_code, classify_opencode, decide
from gym_contract.reading._json_parsing import loads


class BadInputError(Exception):
    """An input the command cannot use; each of its arguments is one line the user sees."""


# The top-level event types of `claude -p --output-format stream-json --verbose`: every run's stream
# holds at least its `system` init event; `stream_event` comes with --include-partial-messages.
_CLAUDE_CODE_EVENT_TYPES = frozenset({"system", "assistant", "user", "result", "stream_event"})
CLAUDE_CODE_STREAM = (
    "Claude Code stream-json output",
    "a JSON object whose type is system, assistant, user, result or stream_event",
    lambda event: isinstance(kind := event.get("type"), str) and kind in _CLAUDE_CODE_EVENT_TYPES,
)
_OPENCODE_EVENTS = (
    "`opencode run --format json` output",
    "a JSON object with a type and a sessionID",
    lambda event: isinstance(event.get("type"), str) and isinstance(event.get("sessionID"), str),
)


def harness_lines(path: str, artifact: tuple[str, str, Any]) -> list[bytes]:
    """The lines of a harness's JSONL ``artifact`` (what it is, what its events look like, the test of
    one), refused when some line holds something and none is such an event: a file of anything else
    would be classified as a run that crashed. An empty file is a run that printed nothing: kept."""
    what, looks_like, is_event = artifact
    lines = _lines(path)
    filled = [line for line in lines if line.strip()]
    if not filled:
        return lines
    for line in filled:
        try:
            event = loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and is_event(event):
            return lines
    raise BadInputError(f"{path}: not {what}: none of its {len(filled):,} lines is an event of it ({looks_like})")


def _outcome_opencode(args: argparse.Namespace) -> int:
    def run() -> AgentOutcome:
        export = _json_object(args.export, "OpenCode export")
        if not isinstance(export.get("info"), dict) and not isinstance(export.get("messages"), list):
            raise BadInputError(
                f"{args.export}: not an `opencode export` document: it has neither an info object nor a messages list"
            )
        events = harness_lines(args.events, _OPENCODE_EVENTS) if args.events is not None else None
        return classify_opencode(
            export, events, exit_code=args.exit_code, timed_out=args.timed_out, version=args.harness_version
        )

    return _print(run, _outcome_json)


def _outcome_claude_code(args: argparse.Namespace) -> int:
    def run() -> AgentOutcome:
        lines = harness_lines(args.stream, CLAUDE_CODE_STREAM)
        return classify_claude_code(
            lines, exit_code=args.exit_code, timed_out=args.timed_out, version=args.harness_version
        )

    return _print(run, _outcome_json)


def _outcome_json(outcome: AgentOutcome) -> dict[str, Any]:
    # Python mode keeps a signal's number that no double holds (NumberText); the writer writes it as read.
    return outcome.model_dump(mode="python")


def _decide(args: argparse.Namespace) -> int:
    def run() -> dict[str, str]:
        record = _json_object(args.outcome, "outcome")
        if "ng_agent_outcome" not in record and detect_kind(record) == "rollout":
            raise BadInputError(
                f"{args.outcome}: the rollout record carries no ng_agent_outcome; make one from the harness's "
                "artifacts with `gym-contract outcome opencode|claude-code …` or `gym-contract observe claude-code …`"
            )
        data = record.get("ng_agent_outcome", record)
        if not isinstance(data, dict):
            raise BadInputError(f"{args.outcome}: ng_agent_outcome is not a JSON object")
        policy = Policy()
        if args.policy is not None:
            try:
                policy = Policy.from_dict(_json_object(args.policy, "policy"))
            except (TypeError, ValueError) as error:
                raise BadInputError(f"{args.policy}: {error}") from None
        try:
            return decide(data, policy, attempt=args.attempt).to_dict()
        except ContractError as error:
            within = "/ng_agent_outcome" if data is not record else ""
            lines = [
                f"{args.outcome}: not a valid ng_agent_outcome: {within + problem.path or '(record)'}: "
                f"{problem.code}: {problem.message}"
                for problem in error.diagnostics
                if problem.severity == "error"
            ]
            raise BadInputError(*lines) from None

    return _print(run, lambda decision: decision)


def _print(run: Any, to_json: Any) -> int:
    try:
        result = run()
    except BadInputError as error:
        for line in error.args:
            say(line)
        return EXIT_USAGE
    print_json(to_json(result))
    return EXIT_OK


def _read(path: str) -> bytes:
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise BadInputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInputError(f"{path}: is a directory, not a file") from None
    except OSError as error:
        raise BadInputError(f"{path}: cannot be read ({error.strerror or error})") from None


def _json_object(path: str, what: str) -> dict[str, Any]:
    try:
        value = loads(_read(path))
    except orjson.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise BadInputError(f"{path}: the {what} is not valid JSON ({where}): {error.msg}") from None
    if not isinstance(value, dict):
        raise BadInputError(f"{path}: the {what} must be a JSON object")
    return value


def _lines(path: str) -> list[bytes]:
    """The lines of a JSONL file, unparsed: the classifier parses them and reports damaged ones as warnings."""
    return _read(path).splitlines()
