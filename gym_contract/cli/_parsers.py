"""The arguments of the commands other modules run: parsed without importing them, so that `--help` starts fast.

Each command's handler is imported from its module when the command runs, not when the parser is
built; these parsers need nothing but argparse.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import Any

from gym_contract._vocabulary import CRITERIA, KINDS
from gym_contract.cli._common import count, exit_status, positive, seconds, seed


def _deferred(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """A handler that imports ``module`` when the command runs and calls its ``name``."""

    def run(args: argparse.Namespace) -> int:
        handler: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(module), name)
        return handler(args)

    return run


def register_all(commands: Any) -> None:
    """Add every command these parsers describe to the subcommands of `gym-contract`."""
    registers = (
        register_outcome,
        register_evidence,
        register_observe,
        register_export,
        register_lineage,
        register_coverage,
        register_report,
    )
    for register in registers:
        register(commands)


def register_outcome(commands: Any) -> None:
    """Add `outcome` and `decide` to the subcommands of `gym-contract`."""
    outcome = commands.add_parser(
        "outcome",
        help="classify how a harness run ended; print its ng_agent_outcome as JSON",
        description="Read a harness's artifacts and print the ng_agent_outcome (failure kind, status, signals).",
    )
    harnesses = outcome.add_subparsers(dest="harness", metavar="HARNESS", required=True)

    opencode = harnesses.add_parser(
        "opencode",
        help="an OpenCode run: its `opencode export` document and optionally its `run --format json` events",
    )
    opencode.add_argument("export", metavar="EXPORT.json", help="the `opencode export` document; - for stdin")
    opencode.add_argument("--events", metavar="RUN.jsonl", help="the `opencode run --format json` output")
    _process_arguments(opencode, "OpenCode version (default: the export's info.version)")
    opencode.set_defaults(handler=_deferred("gym_contract.cli._outcome", "_outcome_opencode"))

    claude = harnesses.add_parser(
        "claude-code", help="a Claude Code run: its `claude -p --output-format stream-json --verbose` output"
    )
    claude.add_argument("stream", metavar="STREAM.jsonl", help="the stream-json output; - for stdin")
    _process_arguments(claude, "Claude Code version (default: the init event's claude_code_version)")
    claude.set_defaults(handler=_deferred("gym_contract.cli._outcome", "_outcome_claude_code"))

    codex = harnesses.add_parser(
        "codex", help="a Codex CLI run: its rollout file (rollout-*.jsonl) or its `codex exec --json` output"
    )
    codex.add_argument("events", metavar="EVENTS.jsonl", help="the rollout file or the exec --json output; - for stdin")
    _process_arguments(codex, "Codex version (default: the rollout's session_meta.cli_version)")
    codex.set_defaults(handler=_deferred("gym_contract.cli._outcome", "_outcome_codex"))

    pi = harnesses.add_parser("pi", help="a Pi run: its session file or its captured `pi --mode json` output")
    pi.add_argument("artifact", metavar="ARTIFACT.jsonl", help="the session file or the stdout capture; - for stdin")
    _process_arguments(pi, "Pi version (Pi writes none into its artifacts)")
    pi.set_defaults(handler=_deferred("gym_contract.cli._outcome", "_outcome_pi"))

    deciding = commands.add_parser(
        "decide",
        help="decide to grade, retry or exclude a rollout from its ng_agent_outcome",
        description="Print the decision for an ng_agent_outcome (or a rollout record carrying one) as JSON.",
    )
    deciding.add_argument(
        "outcome", metavar="OUTCOME.json", help="an ng_agent_outcome or a rollout record; - for stdin"
    )
    deciding.add_argument(
        "--policy",
        metavar="POLICY.json",
        help='a JSON file holding the policy, such as {"max_retries": 2, "grade_request_errors": true}',
    )
    deciding.add_argument(
        "--attempt", type=positive, default=1, help="1-based number of the attempt that ended so (default 1)"
    )
    deciding.set_defaults(handler=_deferred("gym_contract.cli._outcome", "_decide"))


def register_evidence(commands: Any) -> None:
    joiner = commands.add_parser(
        "join",
        help="join an ng_agent_observations bundle to a rollout's captured model calls",
        description="Print the joined bundle: references made canonical where exactly one captured call matches, "
        "gaps for the rest. Exit 2 when an input cannot be read.",
    )
    joiner.add_argument(
        "observations",
        metavar="OBSERVATIONS.json",
        help="an ng_agent_observations bundle, or rollout records (JSONL): --rollout-id's observations are taken",
    )
    joiner.add_argument("--capture", required=True, metavar="DIR", help="capture directory (or .capture.jsonl file)")
    joiner.add_argument("--rollout-id", required=True, help="rollout id the capture is keyed by")
    joiner.set_defaults(handler=_deferred("gym_contract.cli._evidence", "_join"))

    projector = commands.add_parser(
        "project",
        help="attach ng_model_call_capture and ng_trajectory to rollout records",
        description="Stream rollout records, merge each one's capture, join its observations and attach its "
        "trajectory, as the collector does. Writes JSONL; a summary goes to stderr (or stdout with -o). "
        "Exit 1 when a line is damaged or a projection failed, 2 when the input cannot be opened.",
    )
    projector.add_argument(
        "rollouts",
        metavar="ROLLOUTS.jsonl",
        help="rollout records (JSONL, .json, .gz, .zst; a .json file is one record or an array of them, as for "
        "validate); - for stdin, read as JSONL",
    )
    projector.add_argument(
        "--capture-dir", action="append", default=[], metavar="DIR", help="capture directory (repeatable)"
    )
    projector.add_argument(
        "-o",
        "--output",
        metavar="OUT.jsonl",
        help="where to write the records (default stdout); with --engine ray, a directory for part-NNNNN.jsonl shards",
    )
    projector.add_argument(
        "--parquet",
        action="store_true",
        help="with --engine ray: also write the records as Parquet under OUT/parquet/ (column rollout: the JSON text)",
    )
    engine_arguments(projector)
    projector.set_defaults(handler=_deferred("gym_contract.cli._evidence", "_project"))


def register_observe(commands: Any) -> None:
    """Add `observe` and its harnesses to the subcommands of `gym-contract`."""
    observe = commands.add_parser(
        "observe",
        help="turn a harness's own artifacts (or an ATIF trajectory) into ng_agent_observations",
        description="Read what a harness left behind and print it as contract data in one JSON document: for "
        "a harness the ng_agent_observations bundle, the ng_agent_outcome and the run summary; for atif the "
        "bundle. --list names every harness and the artifact forms it reads. Exit 1 when the document breaks "
        "the contract, 2 when an input cannot be read or is none of the forms the harness reads.",
    )
    observe.add_argument(
        "--list", action="store_true", help="name every harness, the artifact forms it reads and its capability"
    )
    observe.add_argument(
        "--format", choices=("text", "json"), default="text", help="the --list as text (default) or as JSON"
    )
    observe.set_defaults(handler=_deferred("gym_contract.cli._observe", "_observe_list"))
    harnesses = observe.add_subparsers(dest="harness", metavar="HARNESS")
    claude = harnesses.add_parser(
        "claude-code",
        help="a Claude Code run: its CLAUDE_CONFIG_DIR and optionally its stream-json output",
        description="Read the session transcripts under CONFIG_DIR/projects (subagents included) and, when "
        "given, the `claude -p --output-format stream-json --verbose` stdout. Exit 1 when the document breaks the "
        "contract, 2 when CONFIG_DIR is no directory or the stream cannot be read.",
    )
    claude.add_argument("config_dir", metavar="CONFIG_DIR", help="the run's CLAUDE_CONFIG_DIR")
    claude.add_argument(
        "--stream", metavar="STDOUT.jsonl", help="the stream-json output (also gzip or zstd); - for stdin"
    )
    claude.add_argument("--model-ref", metavar="NAME", help="model server that served the run (e.g. policy)")
    _ending_arguments(claude)
    claude.add_argument(
        "--duration-s", type=seconds, metavar="SECONDS", help="run time measured by the host (used without a result)"
    )
    claude.add_argument(
        "--no-sandbox", action="store_true", help="the agent ran on the host without a sandbox (gap no_sandbox_runtime)"
    )
    claude.set_defaults(handler=_deferred("gym_contract.cli._observe", "_observe_claude_code"))
    producer_command(
        harnesses,
        "codex",
        help="a Codex CLI run: its rollout file, a directory of rollout files, or its `codex exec --json` output",
        description="Read a Codex rollout file (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl), every rollout "
        "file under a directory (a CODEX_HOME: subagent sessions are linked to their parents), or a captured "
        "`codex exec --json` stdout; the form is told from the content.",
        path="PATH",
        path_help="a rollout file or an exec --json output (also gzip or zstd), or a directory holding rollout "
        "files; - for stdin",
    )
    producer_command(
        harnesses,
        "pi",
        help="a Pi run: its session file or its captured `pi --mode json` stdout",
        description="Read a Pi session file (layouts v1, v2 and v3) or a captured `pi --print --mode json` "
        "stdout of either event generation; the form is told from the content. A capture whose lines are each "
        'wrapped as {"t": <epoch seconds received>, "line": <event>} has its tool calls timed; without the '
        "wrappers the calls have no timing (gap tool_timing_unavailable).",
        path="ARTIFACT.jsonl",
        path_help="the session file, or the stdout capture (also gzip or zstd); - for stdin",
    )
    producer_command(
        harnesses,
        "openclaw",
        help="an OpenClaw run: its home, state or agents folder (session stores and transcripts), or one transcript",
        description="Read every session store agents/<id>/sessions/sessions.json under an OpenClaw home (holding "
        ".openclaw/), state folder (holding agents/) or agents folder, and each session's transcript (the Pi "
        "session format): one invocation per session, keyed by its session key, the subagent tree from spawnedBy "
        "and parentSessionKey, tools timed by their result's timestamp and details.durationMs. A PinchBench "
        "output folder or a single transcript file is read too; the form is told from the content. Links and "
        "paths that lead out of PATH are never followed (gaps).",
        path="PATH",
        path_help="an OpenClaw home, state or agents folder, a PinchBench output folder, or a transcript (also gzip "
        "or zstd); - for stdin",
    )
    pinchbench = producer_command(
        harnesses,
        "pinchbench",
        help="a PinchBench run: its output folder (0001_transcripts/ and openclaw_sessions/), read as OpenClaw's",
        description="Read a PinchBench output folder as OpenClaw's artifacts (bundle source openclaw; `observe "
        "openclaw` tells the folder from its content too): the root session is the store entry whose sessionId "
        "the transcript in 0001_transcripts/ names, read with its subagents from the stores copied to "
        "openclaw_sessions/; the folder gives the same bundle as the store it holds.",
        path="OUT_DIR",
        path_help="the PinchBench output folder",
    )
    pinchbench.set_defaults(handler=_deferred("gym_contract.cli._observe", "_observe_pinchbench"))

    producer_command(
        harnesses,
        "opencode",
        help="an OpenCode run: its export JSON, its opencode.db, its storage/ folder or its data folder",
        description="Read an OpenCode run's sessions, messages and parts from any form OpenCode has written them "
        "in: an `opencode export` document, the SQLite store opencode.db (OpenCode 1.2 and later, opened "
        "read-only), the storage/ folder of OpenCode 1.1 and earlier, or a data folder holding one; the form "
        "is told from the content. The outcome is the OpenCode classifier's verdict on the main session.",
        path="PATH",
        path_help="export JSON (also gzip or zstd), opencode.db (its own file only), storage/ folder, or OpenCode's "
        "data folder; - for stdin (an export)",
    )
    atif = harnesses.add_parser(
        "atif",
        help="an ATIF trajectory (Harbor's Agent Trajectory Interchange Format, versions 1.0 to 1.8)",
        description="Read an ATIF trajectory document, its embedded subagent trajectories included, and print "
        "the ng_agent_observations bundle; what ATIF cannot say (captured call ids, tool timing, how each "
        "invocation ended) is named by gaps. Exit 1 when the bundle read breaks the contract, 2 when the input is "
        "not JSON or not an ATIF trajectory.",
    )
    atif.add_argument("trajectory", metavar="TRAJECTORY.json", help="the ATIF trajectory document; - for stdin")
    atif.set_defaults(handler=_deferred("gym_contract.cli._observe", "_observe_atif"))

    otel = harnesses.add_parser(
        "otel",
        help="OpenTelemetry GenAI spans in OTLP/JSON (export otel's document, or a Collector file exporter's JSONL)",
        description="Read OTLP/JSON traces and print one document (ng_agent_observations, ng_agent_outcome, "
        "run_summary) per bundle: per gym_contract.rollout_id attribute, else per trace. One bundle is printed as "
        "one indented JSON document; several as JSONL, one compact document per line. invoke_agent spans are "
        "the invocations, chat spans their model calls, execute_tool spans the tool calls; what the spans do not "
        "say is named by gaps. A damaged line is reported with its number and the others are read. Exit 1 when a "
        "line or span was damaged, a bundle breaks the contract or there is no span at all, 2 when the input "
        "cannot be read or holds no OTLP/JSON traces (no request with resourceSpans).",
    )
    otel.add_argument("spans", metavar="SPANS", help="OTLP/JSON traces (.json, JSONL, .gz, .zst); - for stdin")
    otel.add_argument(
        "--model-ref", metavar="NAME", help="model server of chat spans that name none (gym_contract.model_server)"
    )
    otel.set_defaults(handler=_deferred("gym_contract.cli._observe", "_observe_otel"))


def producer_command(
    harnesses: Any, name: str, *, help: str, description: str, path: str, path_help: str
) -> argparse.ArgumentParser:
    """`gym-contract observe <name>` for a registered producer: its PATH, the model server and how the run ended.

    The command calls ``gym_contract.producers.producer(name).observe`` and prints its document;
    a producer that takes more adds its own arguments to the parser returned.
    """
    parser: argparse.ArgumentParser = harnesses.add_parser(
        name,
        help=help,
        description=f"{description} Exit 1 when the document breaks the contract, 2 when PATH cannot be read or is "
        "none of the forms the harness reads (observe --list names them).",
    )
    parser.add_argument("path", metavar=path, help=path_help)
    parser.add_argument("--model-ref", metavar="NAME", help="model server that served the run (e.g. policy)")
    _ending_arguments(parser)
    parser.set_defaults(handler=_deferred("gym_contract.cli._observe", "_observe_registered"), producer=name)
    return parser


def register_export(commands: Any) -> None:
    """Add `export` and its formats to the subcommands of `gym-contract`."""
    export = commands.add_parser(
        "export",
        help="write rollouts in another ecosystem's format: ATIF trajectories or OpenTelemetry traces",
        description="Read rollout records and write them as ATIF trajectories or OTLP/JSON traces. A damaged line "
        "is reported with its number and the others are still written. Exit 1 when a line was damaged or a "
        "record could not be exported, 2 when the input cannot be opened or the output not written.",
    )
    formats = export.add_subparsers(dest="format", metavar="FORMAT", required=True)
    atif = formats.add_parser(
        "atif",
        help="one ATIF trajectory JSON file per rollout, subagents embedded, gaps under extra.gym_contract",
        description="Write DIR/<rollout id>.json for every rollout record and print each path written; a rollout "
        "id met again is written to <rollout id>+2.json, +3, …, with a warning on stderr.",
    )
    atif.add_argument(
        "rollouts", metavar="ROLLOUTS.jsonl", help="rollout records (JSONL, .json, .gz, .zst); - for stdin"
    )
    atif.add_argument("-o", "--output", required=True, metavar="DIR", help="directory for the trajectories (created)")
    atif.add_argument(
        "--atif-version",
        choices=("1.7", "1.8"),
        default="1.8",
        help="ATIF version to write (default 1.8; 1.7 is the first with embedded subagent trajectories)",
    )
    atif.set_defaults(handler=_deferred("gym_contract.cli._export", "_export_atif"))
    otel = formats.add_parser(
        "otel",
        help="OpenTelemetry traces (OTLP/JSON) under the GenAI semantic conventions, one trace per rollout",
        description="Write one OTLP/JSON ExportTraceServiceRequest: agent invocation, model call and tool spans "
        "with deterministic ids, and the gaps as span events. Every record is a trace of its own: a rollout id met "
        "again gets ids of its own, with a warning on stderr.",
    )
    otel.add_argument(
        "rollouts", metavar="ROLLOUTS.jsonl", help="rollout records (JSONL, .json, .gz, .zst); - for stdin"
    )
    otel.add_argument("-o", "--output", metavar="SPANS.json", help="where to write the traces (default stdout)")
    otel.set_defaults(handler=_deferred("gym_contract.cli._export", "_export_otel"))


def register_lineage(commands: Any) -> None:
    parser = commands.add_parser(
        "lineage",
        help="chain the captured model calls of a capture file into conversations",
        description="Resolve every captured call to the call it continues (fingerprint version 4) and print "
        "the conversations as trees: the main agent, the others, their branches, and every unresolved call "
        "with its reason. Exit 1 when a call is unresolved, a line is damaged or there is no call (unless "
        "--allow-empty), 2 when the file cannot be read.",
    )
    parser.add_argument(
        "capture",
        metavar="CAPTURE.jsonl",
        help="a file of capture lines, as the capture middleware writes <rollout_id>.capture.jsonl (any name; also "
        "gzip or zstd); - for stdin",
    )
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="trees for people (default), or JSON for pipelines"
    )
    allow_empty_argument(parser, "no captured call")
    parser.set_defaults(handler=_deferred("gym_contract.cli._lineage", "_lineage"))


def register_coverage(commands: Any) -> None:
    parser = commands.add_parser(
        "coverage",
        help="rate each rollout V, O or X on the capability criteria C1–C7 and print the matrix",
        description="Read rollout records (JSON, JSONL, .gz, .zst or - for stdin), rate each one on C1–C7 "
        "from the evidence it carries, and print the share of rollouts at V, O and X per producer. "
        "Exit 1 when there is no rollout to rate (unless --allow-empty), 2 when an input cannot be opened.",
    )
    parser.add_argument("paths", nargs="+", metavar="ROLLOUTS.jsonl", help="input files; - for stdin")
    parser.add_argument(
        "--by",
        choices=("source", "agent"),
        default="source",
        help="group by ng_agent_observations.source, else the agent name (source; the default), "
        "or by the agent name on the record (agent)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="a table for people (default), the matrix as JSON, or a Markdown table for a docs page",
    )
    parser.add_argument(
        "--explain",
        choices=CRITERIA,
        metavar="CN",
        help="also print what kept rollouts from V on one criterion (C1 … C7), counted by reason",
    )
    allow_empty_argument(parser, "no rollout or trajectory record to rate")
    engine_arguments(parser)
    parser.set_defaults(handler=_deferred("gym_contract.cli._coverage", "_coverage"))


def register_report(commands: Any) -> None:
    parser = commands.add_parser(
        "report",
        help="write one self-contained HTML page of charts: diagnostics, gaps, coverage, tokens, rollout timelines",
        description="Check rollout records (JSON, JSONL, .gz, .zst or - for stdin) as validate does and write one "
        "HTML file that opens offline: the verdict and counts, diagnostics by code with their docs links, "
        "evidence gaps by code and producer, the C1–C7 coverage heat map, token histograms per field and "
        "producer, and a sample of rollouts drawn in detail (the invocation tree on a time axis, each "
        'invocation\'s conversation). Needs the report extra (python -m pip install ".[report]" in a checkout). '
        "Exit 0 when nothing reaches --fail-on, 1 when something does or the inputs hold no record "
        "(unless --allow-empty), 2 when an input cannot be opened or the extra is missing.",
    )
    parser.add_argument("paths", nargs="+", metavar="ROLLOUTS.jsonl", help="input files; - for stdin")
    parser.add_argument("-o", "--output", required=True, metavar="REPORT.html", help="the HTML file to write")
    parser.add_argument(
        "--sample",
        type=count,
        default=20,
        metavar="N",
        help="rollouts drawn in detail, a uniform random sample when there are more (default 20); all are counted",
    )
    parser.add_argument(
        "--seed", type=seed, default=0, metavar="N", help="seed of the sample: the same seed draws the same rollouts"
    )
    parser.add_argument("--kind", choices=KINDS, help="kind of every record (default: told from each record's shape)")
    parser.add_argument(
        "--fail-on",
        choices=("error", "warning"),
        default="error",
        help="the least severe diagnostic that makes the verdict FAIL and the exit status 1 (default error)",
    )
    parser.add_argument("--title", default="Rollout report", help="the page's title (default: Rollout report)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no line saying what was written")
    allow_empty_argument(parser)
    parser.set_defaults(handler=_deferred("gym_contract.cli._html_report", "_report"))


def allow_empty_argument(parser: argparse.ArgumentParser, nothing: str = "no record") -> None:
    """`--allow-empty`: a run that read nothing passes, for a pipeline whose inputs may be empty."""
    parser.add_argument(
        "--allow-empty",
        action="store_true",
        help=f"let a run whose inputs hold {nothing} pass (no_records, an error by default, becomes an info)",
    )


def engine_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the work runs: this machine, or a Ray cluster (the `ray` extra)."""
    parser.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="local: this machine (default); ray: Ray Data tasks on a Ray cluster, same output "
        '(needs the ray extra: python -m pip install ".[ray]" in a checkout)',
    )
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help="with --engine ray: the cluster to join (auto, or ray://HOST:10001); default: start one here",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="with --engine ray: let Ray's own messages (its warnings, Ray Data's notes) through to stderr",
    )


def _ending_arguments(parser: argparse.ArgumentParser) -> None:
    """How the host saw the harness's process end: its exit status, and whether its deadline cut it off."""
    parser.add_argument("--exit-code", type=exit_status, metavar="N", help="exit status of the harness process")
    parser.add_argument("--timed-out", action="store_true", help="the host's deadline cut the run off")


def _process_arguments(parser: argparse.ArgumentParser, version_help: str) -> None:
    _ending_arguments(parser)
    parser.add_argument("--harness-version", dest="harness_version", metavar="V", help=version_help)
    # The name it had first: kept for scripts that use it, not shown, since it reads as this program's version.
    parser.add_argument("--version", dest="harness_version", metavar="V", help=argparse.SUPPRESS)


# Options that mean something only beside another: (option, its dest, its default, the companion's dest,
# what the companion must hold, as given, why). Given without it, an option would be ignored without a
# word. A companion of value None must only be given (observe claude-code --stream).
_COMPANIONS: tuple[tuple[str, str, Any, str, str | None, str, str], ...] = (
    ("--address", "address", None, "engine", "ray", "--engine ray", "only a Ray run joins a cluster"),
    ("--parquet", "parquet", False, "engine", "ray", "--engine ray", "it writes a directory of shards"),
    ("--verbose", "verbose", False, "engine", "ray", "--engine ray", "it lets Ray's own messages through"),
    ("--jobs", "jobs", 1, "engine", "local", "--engine local", "on Ray every core of the cluster takes a share"),
    (
        "--exit-code",
        "exit_code",
        None,
        "stream",
        None,
        "--stream",
        "the outcome is read from the stream, or not at all",
    ),
    (
        "--timed-out",
        "timed_out",
        False,
        "stream",
        None,
        "--stream",
        "the outcome is read from the stream, or not at all",
    ),
)


def lone_option(args: argparse.Namespace) -> str | None:
    """Why an option given to the command means nothing without another, or None when none is so."""
    for option, dest, default, companion, wanted, shown, why in _COMPANIONS:
        if not hasattr(args, companion) or getattr(args, dest, default) == default:
            continue
        held = getattr(args, companion)
        if (held is None) if wanted is None else (held != wanted):
            return f"{option} goes with {shown}: {why}; give {shown} too, or leave {option} out"
    return None
