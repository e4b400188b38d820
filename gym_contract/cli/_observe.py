"""`gym-contract observe claude-code`: a run's config directory (and stream) to observations, outcome and summary."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gym_contract.cli._artifacts import CLAUDE_CODE_STREAM, BadInputError, harness_lines
from gym_contract.cli._common import EXIT_FAILED, EXIT_OK, print_json, say, usage_error
from gym_contract.producers.claude_code import read_run
from gym_contract.validation import iter_diagnostics

EXIT_INVALID = EXIT_FAILED


def _observe_claude_code(args: argparse.Namespace) -> int:
    if not Path(args.config_dir).is_dir():
        return usage_error(f"cannot read {args.config_dir}: not a directory")
    stream: Any = None
    if args.stream is not None:
        try:
            stream = harness_lines(args.stream, CLAUDE_CODE_STREAM)
        except BadInputError as error:
            return usage_error(str(error))
    # The option types hold --exit-code and --duration-s to what read_run takes: it raises nothing here.
    run = read_run(
        args.config_dir,
        stream,
        args.model_ref,
        exit_code=args.exit_code,
        timed_out=args.timed_out,
        measured_duration_s=args.duration_s,
        sandboxed=False if args.no_sandbox else None,
    )
    document = run.document()
    # The document is checked with the contract's own validator before anyone trusts it.
    problems = [
        (key, diagnostic)
        for key, kind in (("ng_agent_observations", "bundle"), ("ng_agent_outcome", "agent_outcome"))
        if document[key] is not None
        for diagnostic in iter_diagnostics(document[key], kind)
        if diagnostic.severity == "error"
    ]
    for key, diagnostic in problems:
        say(f"{key}{diagnostic.path}: {diagnostic.code}: {diagnostic.message}")
    print_json(document)
    return EXIT_INVALID if problems else EXIT_OK


def _observe_atif(args: argparse.Namespace) -> int:
    from gym_contract.diagnostics import Diagnostic
    from gym_contract.interop import AtifError, from_atif
    from gym_contract.reading import _records, _sources

    try:
        with _sources.open_source(args.trajectory) as source:
            read = list(_records.records_of(source, json_document=True))
    except _sources.InputUnreadable as error:
        return usage_error(str(error))
    if len(read) != 1:
        found = f"{len(read)} values (a JSON array, or lines of JSONL)" if read else "nothing"
        return usage_error(f"{args.trajectory}: expected one ATIF trajectory object, found {found}")
    document = read[0][1]
    if isinstance(document, Diagnostic):
        hint = " (one JSON document is read; for rollout records, run export atif first)"
        return usage_error(f"{args.trajectory}: {document.code}: {document.message}{hint}")
    try:
        bundle = from_atif(document)
    except AtifError as error:
        return usage_error(f"{args.trajectory}: not an ATIF trajectory: at {error}")
    # The bundle is checked with the contract's own validator before anyone trusts it.
    problems = [diagnostic for diagnostic in iter_diagnostics(bundle, "bundle") if diagnostic.severity == "error"]
    for diagnostic in problems:
        say(f"{diagnostic.path or '/'}: {diagnostic.code}: {diagnostic.message}")
    print_json(bundle)
    return EXIT_INVALID if problems else EXIT_OK
