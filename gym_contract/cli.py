"""The `gym-contract` command line: thin argument parsing over the library."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from gym_contract import __version__, schemas

EXIT_OK = 0
EXIT_USAGE = 2


def _schema_list(args: argparse.Namespace) -> int:
    rows = [(name, schemas.get(name).get("title", ""), schemas.schema_id(name)) for name in schemas.names()]
    if args.format == "json":
        print(json.dumps([{"name": n, "title": t, "id": i} for n, t, i in rows], indent=2))
        return EXIT_OK
    name_width = max(len(n) for n, _, _ in rows)
    title_width = max(len(t) for _, t, _ in rows)
    for name, title, uri in rows:
        print(f"{name:<{name_width}}  {title:<{title_width}}  {uri}")
    return EXIT_OK


def _schema_show(args: argparse.Namespace) -> int:
    try:
        if args.id:
            print(schemas.schema_id(args.name))
        elif args.name in schemas.names() and "#" not in schemas.schema_id(args.name):
            sys.stdout.write(schemas.source(args.name))
        else:
            print(json.dumps(schemas.get(args.name), indent=2, ensure_ascii=False))
    except schemas.UnknownSchemaError as error:
        print(f"gym-contract: {error}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gym-contract",
        description="Check AI-agent rollout evidence against the gym-contract data contract.",
    )
    parser.add_argument(
        "--version", action="version", version=f"gym-contract {__version__} (contract {schemas.CONTRACT_VERSION})"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    schema = commands.add_parser("schema", help="list and print the bundled JSON Schemas")
    schema_commands = schema.add_subparsers(dest="schema_command", metavar="SUBCOMMAND", required=True)
    listing = schema_commands.add_parser("list", help="list the bundled schemas with their $id")
    listing.add_argument("--format", choices=("text", "json"), default="text")
    listing.set_defaults(handler=_schema_list)
    show = schema_commands.add_parser("show", help="print one schema as JSON")
    show.add_argument("name", help="schema name, as `gym-contract schema list` prints it")
    show.add_argument("--id", action="store_true", help="print only the schema's $id")
    show.set_defaults(handler=_schema_show)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
