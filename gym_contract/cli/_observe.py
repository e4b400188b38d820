"""`gym-contract observe`: a harness's artifacts (or ATIF, or OpenTelemetry spans) to observations, outcome, summary."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from gym_contract.cli._artifacts import CLAUDE_CODE_STREAM, BadInputError, harness_lines
from gym_contract.cli._common import EXIT_FAILED, EXIT_OK, print_json, say, usage_error
from gym_contract.producers import ArtifactForm, Observed, UnrecognisedArtifactError, producer, producers
from gym_contract.producers.claude_code import observe as observe_claude_code
from gym_contract.validation import iter_diagnostics

EXIT_INVALID = EXIT_FAILED


def _other_readers() -> list[dict[str, Any]]:
    """What `observe` reads besides the registered producers: a form held to its own name, and two formats."""
    from gym_contract.producers.otel import FORMS as OTEL_FORMS

    def forms(listed: tuple[ArtifactForm, ...]) -> list[dict[str, str]]:
        return [{"name": form.name, "description": form.description} for form in listed]

    pinchbench = tuple(form for form in producer("openclaw").forms if "PinchBench" in form.name)
    return [
        {"command": "pinchbench", "artifact_forms": forms(pinchbench),
         "summary": "openclaw's PinchBench output folder form, held to that form; source openclaw"},
        {"command": "atif", "artifact_forms": [],
         "summary": "not a harness: an ATIF trajectory document, read into the bundle alone"},
        {"command": "otel", "artifact_forms": forms(OTEL_FORMS),
         "summary": "not a harness: OpenTelemetry GenAI spans in OTLP/JSON, a document per rollout or trace"},
    ]  # fmt: skip


def _observe_list(args: argparse.Namespace) -> int:
    """`observe --list`: every harness, the artifact forms it reads and the capability it declares."""
    if not args.list:
        return usage_error("observe: name a harness (claude-code, atif …), or --list to see them all")
    if args.format == "json":
        print_json({"producers": [declared.describe() for declared in producers()], "other_readers": _other_readers()})
        return EXIT_OK
    for declared in producers():
        rated = " ".join(f"{criterion} {rating.verdict}" for criterion, rating in declared.capability.items())
        print(f"{declared.name}  (source {declared.source}; capability {rated})")
        print(f"  {declared.summary}")
        for form in declared.forms:
            print(f"  - {form.name}: {form.description}")
    for reader in _other_readers():
        print(f"{reader['command']}  ({reader['summary']})")
        if reader["command"] == "otel":  # pinchbench's one form is listed under openclaw already
            for form in reader["artifact_forms"]:
                print(f"  - {form['name']}: {form['description']}")
    return EXIT_OK


def print_observed(observed: Observed, *, one_line: bool = False) -> int:
    """Print a producer's document (``one_line``: as a line of JSONL), each error-level diagnostic said on
    stderr; the exit status it deserves."""
    document = observed.document()
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
    print_json(document, one_line=one_line)
    return EXIT_INVALID if problems else EXIT_OK


def refused(harness: str, forms: tuple[ArtifactForm, ...], error: UnrecognisedArtifactError) -> int:
    """The usage error of an input that is none of a harness's artifact forms, naming the forms it reads."""
    listed = ", ".join(form.name for form in forms)
    return usage_error(f"cannot read {error.path}: {error.why}; {harness} reads: {listed} (see observe --list)")


def _observe_registered(args: argparse.Namespace) -> int:
    """`observe <harness> PATH` for a producer that takes only what every producer takes."""
    if args.path != "-" and not os.path.lexists(args.path):
        return usage_error(f"cannot read {args.path}: no such file or directory")
    declared = producer(args.producer)
    try:
        observed = declared.observe(
            args.path, model_ref=args.model_ref, exit_code=args.exit_code, timed_out=args.timed_out
        )
    except UnrecognisedArtifactError as error:
        return refused(declared.name, declared.forms, error)
    return print_observed(observed)


def _observe_pinchbench(args: argparse.Namespace) -> int:
    """`observe pinchbench OUT_DIR`: the OpenClaw producer, held to the PinchBench output folder's form."""
    from gym_contract.producers.openclaw import PINCHBENCH_FORM, observe_pinchbench

    if not os.path.lexists(args.path):
        return usage_error(f"cannot read {args.path}: no such file or directory")
    try:
        observed = observe_pinchbench(
            args.path, model_ref=args.model_ref, exit_code=args.exit_code, timed_out=args.timed_out
        )
    except UnrecognisedArtifactError as error:
        return refused("pinchbench", (PINCHBENCH_FORM,), error)
    return print_observed(observed)


def _observe_claude_code(args: argparse.Namespace) -> int:
    declared = producer("claude-code")
    # PATH is the config directory; the stream, its other form, is given with --stream.
    config_form = declared.forms[:1]
    if not Path(args.config_dir).is_dir():  # refused before a stream (stdin, perhaps) is read
        return refused(declared.name, config_form, UnrecognisedArtifactError(args.config_dir, "not a directory"))
    stream: Any = None
    if args.stream is not None:
        try:
            stream = harness_lines(args.stream, CLAUDE_CODE_STREAM)
        except BadInputError as error:
            return usage_error(str(error))
    # The option types hold --exit-code and --duration-s to what observe takes: it raises nothing here.
    try:
        observed = observe_claude_code(
            args.config_dir,
            model_ref=args.model_ref,
            exit_code=args.exit_code,
            timed_out=args.timed_out,
            stream=stream,
            measured_duration_s=args.duration_s,
            sandboxed=False if args.no_sandbox else None,
        )
    except UnrecognisedArtifactError as error:  # the folder went between the look above and the read
        return refused(declared.name, config_form, error)
    return print_observed(observed)


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


def _observe_otel(args: argparse.Namespace) -> int:
    """`observe otel SPANS`: the document of the one bundle the spans make, or JSONL of one document per bundle."""
    from gym_contract.cli._common import say_damaged
    from gym_contract.producers.otel import FORMS as OTEL_FORMS
    from gym_contract.producers.otel import observe_otel
    from gym_contract.reading._sources import InputUnreadable

    try:
        observed, read = observe_otel(args.spans, model_ref=args.model_ref)
    except InputUnreadable as error:
        return usage_error(str(error))
    except UnrecognisedArtifactError as error:
        return refused("otel", OTEL_FORMS, error)
    for diagnostic in read.damaged:
        say_damaged(diagnostic)
    for problem in read.unreadable:
        say(f"{args.spans}: {problem.where}: not read: {problem.problem}")
    if not observed and (read.damaged or read.unreadable):
        return usage_error(f"{args.spans}: no span could be read: nothing to observe")
    if not observed:  # well-formed, and empty: nothing was observed, which a run never leaves
        say(f"{args.spans}: the input holds no span: nothing to observe")
        return EXIT_INVALID
    status = EXIT_OK
    # One document is printed as every observe command prints its one; several make a JSONL stream,
    # which a JSON reader can take line by line, as it could not take indented documents one after another.
    one_line = len(observed) > 1
    for spans in observed:
        try:
            document = spans.observed()
        except ValueError:  # spans that state a broken invocation tree: the document is printed as read
            problems = [d for d in iter_diagnostics(spans.bundle, "bundle") if d.severity == "error"]
            for diagnostic in problems:
                say(f"ng_agent_observations{diagnostic.path}: {diagnostic.code}: {diagnostic.message}")
            print_json(spans.document(), one_line=one_line)
            status = EXIT_INVALID
            continue
        status = max(status, print_observed(document, one_line=one_line))
    return EXIT_INVALID if read.damaged or read.unreadable else status
