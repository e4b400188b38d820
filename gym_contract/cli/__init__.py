"""The `gym-contract` command line: thin argument parsing over the library."""

from __future__ import annotations

import argparse
import errno
import gc
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from gym_contract import __version__
from gym_contract._interrupts import handling
from gym_contract._vocabulary import CONTRACT_VERSION, KINDS
from gym_contract.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    WholeNumber,
    count,
    interrupted_status,
    positive,
    say,
    silence,
    verdict,
)
from gym_contract.cli._examples import add_examples
from gym_contract.cli._parsers import allow_empty_argument, engine_arguments, lone_option, register_all

# The engine and the renderer are imported by the command that runs: `--version`, `--help` and
# `schema` start without them.


def _validate(args: argparse.Namespace) -> int:
    from gym_contract.cli._render import progress_bar, render_json, render_text
    from gym_contract.validation._checking import InputUnreadable, check_files

    unreadable: tuple[type[Exception], ...] = (InputUnreadable,)
    if args.engine == "ray":
        from gym_contract.distributed import RayUnavailable

        unreadable += (RayUnavailable,)
    elif args.jobs > 1:
        from gym_contract._workers import WorkerLost

        unreadable += (WorkerLost,)
    try:
        with progress_bar(not args.quiet and args.format == "text") as progress:
            if args.engine == "ray":
                from gym_contract.cli._distributed import check_on_ray

                report = check_on_ray(args, progress)
            else:
                report = check_files(
                    args.paths,
                    args.kind,
                    max_diagnostics=args.max_diagnostics,
                    **({} if args.max_line_bytes is None else {"max_line_bytes": args.max_line_bytes}),
                    jobs=args.jobs,
                    progress=progress,
                    per_record=args.format == "junit",
                )
    except unreadable as error:
        say(str(error))
        if args.format != "text":
            # A pipeline reading stdout still gets a document it can parse, which says what went wrong.
            from gym_contract.cli._formats import render_unreadable

            render_unreadable(args.format, error, sys.stdout)
        return EXIT_USAGE
    report.note_empty(allow_empty=args.allow_empty)
    if report.interrupted:
        status = verdict(args, interrupted_status())  # whatever the part read says, the run is not whole
    else:
        status = verdict(args, EXIT_FAILED if report.fails(args.fail_on) else EXIT_OK)
    if args.format == "json":
        render_json(report, args.fail_on, sys.stdout)
    elif args.format in ("sarif", "junit", "github"):
        from gym_contract.cli._formats import render_github, render_junit, render_sarif

        render = {"sarif": render_sarif, "junit": render_junit, "github": render_github}[args.format]
        render(report, args.fail_on, sys.stdout)
    else:
        render_text(report, args.fail_on, sys.stdout, quiet=args.quiet)
    if report.interrupted:
        say("interrupted: the summary covers only the lines read before it")
    return status


MAX_JOBS = 1024
_WORKERS = WholeNumber(1, MAX_JOBS, f"a number of worker processes from 1 to {MAX_JOBS:,}, or auto")


def _jobs(text: str) -> int:
    """A number of worker processes, or `auto`: one per core this process may run on."""
    if text != "auto":
        return _WORKERS(text)
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return len(usable) if usable else os.cpu_count() or 1


def _schema_list(args: argparse.Namespace) -> int:
    import json

    from gym_contract import schemas

    rows = [(name, schemas.get(name).get("title", ""), schemas.schema_id(name)) for name in schemas.names()]
    if args.format == "json":
        print(json.dumps([{"name": n, "title": t, "id": i} for n, t, i in rows], indent=2))
        return EXIT_OK
    from gym_contract.cli._render import wants_colour
    from gym_contract.cli._tables import Table, render

    table = Table(("name", "title", "$id"))
    for row in rows:
        table.add(*row)
    render(table, sys.stdout, colour=wants_colour(sys.stdout))
    return EXIT_OK


def _schema_dir(args: argparse.Namespace) -> int:
    from gym_contract import schemas

    print(schemas.directory())
    return EXIT_OK


def _schema_diff(args: argparse.Namespace) -> int:
    import json

    from gym_contract import schemas
    from gym_contract.schema_diff import changes, load_version

    try:
        old = load_version(args.old)
        new = load_version(args.new if args.new is not None else schemas.directory())
    except (OSError, ValueError) as error:
        say(str(error))
        return EXIT_USAGE
    for where, documents in ((args.old, old), (args.new or "the package's schemas", new)):
        if not documents:  # a comparison with nothing would find nothing breaking, and pass
            say(f"{where}: holds no schema file (*.json): nothing to compare")
            return EXIT_USAGE
    found = changes(old, new)
    breaking = [change for change in found if change.verdict == "breaking"]
    if args.format == "json":
        print(json.dumps([change.to_dict() for change in found], indent=2))
    else:
        for change in found:
            print(f"{change.verdict:<10}  {change.file}{change.path or ''}: {change.what}")
        additive = sum(change.verdict == "additive" for change in found)
        print(f"{len(breaking)} breaking, {additive} additive, {len(found) - len(breaking) - additive} annotations")
    return EXIT_FAILED if breaking else EXIT_OK


def _schema_show(args: argparse.Namespace) -> int:
    import json

    from gym_contract import schemas

    try:
        if args.id:
            print(schemas.schema_id(args.name))
        elif args.name in schemas.names() and "#" not in schemas.schema_id(args.name):
            sys.stdout.write(schemas.source(args.name))
        else:
            print(json.dumps(schemas.get(args.name), indent=2, ensure_ascii=False))
    except schemas.UnknownSchemaError as error:
        say(str(error))
        return EXIT_USAGE
    return EXIT_OK


_OWN_COMMANDS = ("validate", "schema")


def build_parser(*, every_command: bool = True) -> argparse.ArgumentParser:
    """The parser of `gym-contract`; without ``every_command``, of its own commands only (`validate`, `schema`)."""
    parser = argparse.ArgumentParser(
        prog="gym-contract",
        description="Check AI-agent rollout evidence against the gym-contract data contract.",
    )
    parser.add_argument(
        "--version", action="version", version=f"gym-contract {__version__} (contract {CONTRACT_VERSION})"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    validate = commands.add_parser(
        "validate",
        help="check rollout files, bundles or trajectories against the contract",
        description="Check JSON, JSONL, .gz, .zst files or stdin (-) record by record. "
        "Exit 0 when nothing reaches --fail-on, 1 when something does or the inputs hold no record (unless "
        "--allow-empty), 2 when an input cannot be opened.",
    )
    validate.add_argument("paths", nargs="+", metavar="PATH", help="input files; - for stdin")
    validate.add_argument("--kind", choices=KINDS, help="kind of every record (default: told from each record's shape)")
    validate.add_argument(
        "--format",
        choices=("text", "json", "sarif", "junit", "github"),
        default="text",
        help="text for people (default); json: the whole report as one JSON document; sarif: SARIF 2.1.0 for "
        "code scanning; junit: JUnit XML, a test case per record; github: GitHub Actions annotations",
    )
    validate.add_argument(
        "--fail-on",
        choices=("error", "warning"),
        default="error",
        help="the least severe diagnostic that makes the verdict FAIL and the exit status 1 (default error)",
    )
    validate.add_argument(
        "--max-diagnostics",
        type=count,
        default=1000,
        metavar="N",
        help="diagnostics listed, 0 for the summary only; all are counted (default 1000)",
    )
    validate.add_argument("--max-line-bytes", type=positive, help=argparse.SUPPRESS)
    validate.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help="worker processes, or auto (one per core): inputs side by side, a large plain file in parts, "
        "a lone compressed file, pipe or stdin in batches",
    )
    validate.add_argument("--quiet", action="store_true", help="print only the summary")
    allow_empty_argument(validate)
    engine_arguments(validate)
    validate.set_defaults(handler=_validate)

    schema = commands.add_parser("schema", help="list and print the bundled JSON Schemas")
    schema_commands = schema.add_subparsers(dest="schema_command", metavar="SUBCOMMAND", required=True)
    listing = schema_commands.add_parser("list", help="list the bundled schemas with their $id")
    listing.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="a table (default), or a JSON list of name, title, id",
    )
    listing.set_defaults(handler=_schema_list)
    show = schema_commands.add_parser("show", help="print one schema as JSON")
    show.add_argument("name", help="schema name, as `gym-contract schema list` prints it")
    show.add_argument("--id", action="store_true", help="print only the schema's $id")
    show.set_defaults(handler=_schema_show)
    folder = schema_commands.add_parser(
        "dir",
        help="print the folder of the bundled schema files, for tools that read them from disk",
        description="Print the absolute path of the folder that holds the bundled schema files of this version.",
    )
    folder.set_defaults(handler=_schema_dir)
    differ = schema_commands.add_parser(
        "diff",
        help="list what changed between two versions of the schemas, additive or breaking",
        description="Compare two schema folders, or released versions named by number (e.g. 1.0), file by file and "
        "keyword by keyword, and classify each change by the versioning policy of schemas/README.md. "
        "Exit 1 when a change is breaking, 2 when a version cannot be read.",
    )
    differ.add_argument("old", metavar="OLD", help="a folder of schema files, or a released version (e.g. 1.0)")
    differ.add_argument("new", metavar="NEW", nargs="?", help="the same; default: the schemas of this package")
    differ.add_argument(
        "--format", choices=("text", "json"), default="text", help="a line per change (default), or a JSON list"
    )
    differ.set_defaults(handler=_schema_diff)

    if every_command:
        register_all(commands)
    add_examples(parser)
    return parser


def _needs_every_command(arguments: list[str]) -> bool:
    """Whether parsing ``arguments`` needs the commands that other modules add, whose imports take long."""
    command = next((argument for argument in arguments if not argument.startswith("-")), None)
    if command is None:
        return not ("--version" in arguments and not {"-h", "--help"} & set(arguments))
    return command not in _OWN_COMMANDS


def _parse(parser: argparse.ArgumentParser, arguments: list[str]) -> argparse.Namespace:
    """``arguments`` parsed; an option no command knows is the usage error of the command it was given to,
    which shows that command's usage (argparse alone would show the top level's)."""
    args, unknown = parser.parse_known_args(arguments)
    if unknown:
        _chosen(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    if (lone := lone_option(args)) is not None:
        _chosen(parser, args).error(lone)
    return args


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the deepest command ``args`` names (`outcome claude-code`, `schema show`, …)."""
    while True:
        commands = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        name = getattr(args, commands.dest, None) if commands is not None else None
        if commands is None or name not in commands.choices:
            return parser
        parser = commands.choices[name]


def run() -> NoReturn:
    """The `gym-contract` program: `main` on the process's arguments, then exit with its status."""
    status = main()
    # The objects left are dropped by the exit: the interpreter's last collections, which would walk every
    # one of them first (about 8 ms after a check), are spared. Objects are still freed, files closed.
    gc.freeze()
    sys.exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:  # started with the descriptor closed (`>&-`): write nowhere
            setattr(sys, name, open(os.devnull, "w"))  # noqa: SIM115 - for the life of the process
    args = argparse.Namespace()
    try:
        # Run as the program, a signal after the first leaves the exit status as the first decided it.
        with handling(keep_after=argv is None):
            args = _parse(build_parser(every_command=_needs_every_command(arguments)), arguments)
            status = int(args.handler(args))
            sys.stdout.flush()  # a failing output is found here, not while the interpreter shuts down
        return status
    except KeyboardInterrupt:
        say("interrupted")
        return interrupted_status()
    except BrokenPipeError:
        # The reader went away (`| head`): not an error of ours; the exit status is still the verdict.
        silence(sys.stdout)
        return int(getattr(args, "verdict", EXIT_OK))
    except OSError as error:
        if error.filename is not None:
            say(f"{error.filename}: {error.strerror or error}")
        elif error.errno in _FULL:
            silence(sys.stdout)
            say(f"cannot write the output: {error.strerror or error}")
        else:
            say(str(error.strerror or error))
        return EXIT_USAGE


# What writing, never reading, fails with: a full disk (`/dev/full`), a quota, a file too large.
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


if __name__ == "__main__":
    sys.exit(main())
