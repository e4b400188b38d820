"""The `gym-contract outcome` and `gym-contract decide` commands: classify a run's end, then decide what to do."""

from __future__ import annotations

import argparse
from typing import Any

from gym_contract._vocabulary import detect_kind
from gym_contract.cli._artifacts import (
    CLAUDE_CODE_STREAM,
    CODEX_EVENTS,
    OPENCODE_EVENTS,
    BadInputError,
    harness_lines,
    json_object,
)
from gym_contract.cli._common import EXIT_OK, EXIT_USAGE, print_json, say
from gym_contract.diagnostics import ContractError
from gym_contract.models import AgentOutcome
from gym_contract.outcome import Policy, classify_claude_code, classify_codex, classify_opencode, decide


def _outcome_opencode(args: argparse.Namespace) -> int:
    def run() -> AgentOutcome:
        export = json_object(args.export, "OpenCode export")
        if not isinstance(export.get("info"), dict) and not isinstance(export.get("messages"), list):
            raise BadInputError(
                f"{args.export}: not an `opencode export` document: it has neither an info object nor a messages list"
            )
        events = harness_lines(args.events, OPENCODE_EVENTS) if args.events is not None else None
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


def _outcome_codex(args: argparse.Namespace) -> int:
    def run() -> AgentOutcome:
        lines = harness_lines(args.events, CODEX_EVENTS)
        return classify_codex(lines, exit_code=args.exit_code, timed_out=args.timed_out, version=args.harness_version)

    return _print(run, _outcome_json)


def _outcome_json(outcome: AgentOutcome) -> dict[str, Any]:
    # Python mode keeps a signal's number that no double holds (NumberText); the writer writes it as read.
    return outcome.model_dump(mode="python")


def _decide(args: argparse.Namespace) -> int:
    def run() -> dict[str, str]:
        record = json_object(args.outcome, "outcome")
        if "ng_agent_outcome" not in record and detect_kind(record) == "rollout":
            raise BadInputError(
                f"{args.outcome}: the rollout record carries no ng_agent_outcome; make one from the harness's "
                "artifacts with `gym-contract outcome opencode|claude-code|codex …` or `gym-contract observe …`"
            )
        data = record.get("ng_agent_outcome", record)
        if not isinstance(data, dict):
            raise BadInputError(f"{args.outcome}: ng_agent_outcome is not a JSON object")
        policy = Policy()
        if args.policy is not None:
            try:
                policy = Policy.from_dict(json_object(args.policy, "policy"))
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
