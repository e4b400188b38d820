"""Render the generated parts of the docs from their sources; --check fails when a page is stale.

Hand-written pages under `docs/` hold generated blocks between two markers:

    <!-- BEGIN GENERATED schema:trajectory (tools/render_docs.py; do not edit by hand) -->
    ...
    <!-- END GENERATED schema:trajectory -->

The name after `GENERATED` says what fills the block:

    schema:<file>         schemas/v1/<file>.schema.json: fields, types, required, defaults, enums,
                          bounds, descriptions, rules, $defs and examples
    schema-index          every bundled schema and named fragment, with its $id
    gap-codes             schemas/v1/gap_codes.json, one anchor per code
    criteria-gaps         the same registry, by the capability criteria (C1-C7) each gap weakens
    producer-capability   the capability each registered producer declares (gym_contract.producers);
                          producer-capability:<harness> that of one producer, for its own page
    errors                gym_contract.diagnostics.CODES, one anchor per code, each with its example
                          input from docs/examples/errors/ run through the command line
    cli                   the command's argparse parser (gym_contract.cli.build_parser())
    models                the public classes of gym_contract.models and the schema each follows
    console:<name>        a gym-contract command (see CONSOLE in tools/docgen/example_runs.py) run on the
                          repository's examples
    assert-valid:<name>   what assert_valid says about docs/examples/<name>.json

Everything shown is produced by running the code, so --check also proves that every generated
example still behaves as the page says.

The blocks are rendered by tools/docgen/ (schema_reference, cli_reference, example_runs); this script
finds them in the pages, and rewrites or checks each page.

Usage:
    python tools/render_docs.py            # rewrite every generated block in place
    python tools/render_docs.py --check    # exit 1 and name each stale page; write nothing
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
if str(TOOLS) not in sys.path:  # loaded by file path, as tests/test_docs.py does, rather than run as a script
    sys.path.insert(0, str(TOOLS))

from docgen import ROOT  # noqa: E402
from docgen.cli_reference import render_cli  # noqa: E402
from docgen.example_runs import (  # noqa: E402
    ERROR_EXAMPLES,
    EXAMPLE_ARGS,
    MISSING_INPUT,
    UNOPENABLE,
    error_example_file,
    render_assert_valid,
    render_console,
    render_errors,
    run_cli,
)
from docgen.producer_reference import render_producer_capability  # noqa: E402
from docgen.schema_reference import (  # noqa: E402
    render_criteria_gaps,
    render_gap_codes,
    render_models,
    render_schema,
    render_schema_index,
    schema_page,
    schema_stems,
)

# tests/test_docs.py loads this file by path and reads these from it.
__all__ = ["ERROR_EXAMPLES", "EXAMPLE_ARGS", "MISSING_INPUT", "UNOPENABLE", "error_example_file", "main", "run_cli"]

BEGIN = "<!-- BEGIN GENERATED {name} (tools/render_docs.py; do not edit by hand) -->"
END = "<!-- END GENERATED {name} -->"
BLOCK = re.compile(
    r"^<!-- BEGIN GENERATED (?P<name>[A-Za-z0-9_:.-]+) [^\n]*-->\n(?P<body>.*?)^<!-- END GENERATED (?P=name) -->$",
    re.MULTILINE | re.DOTALL,
)
ANY_MARKER = re.compile(r"<!-- (?:BEGIN|END) GENERATED ")

Renderer = Callable[[str, str, Path], str]


def renderer(name: str) -> Renderer:
    kind, _, argument = name.partition(":")
    simple: dict[str, Callable[[str], str]] = {
        "schema-index": render_schema_index,
        "gap-codes": render_gap_codes,
        "criteria-gaps": render_criteria_gaps,
        "producer-capability": render_producer_capability,
        "cli": render_cli,
        "models": render_models,
    }
    if kind == "schema" and argument:
        return lambda page, arg, docs: render_schema(page, arg)
    if kind == "assert-valid" and argument:
        return lambda page, arg, docs: render_assert_valid(page, arg, docs)
    if kind == "producer-capability" and argument:
        return lambda page, arg, docs: render_producer_capability(page, arg)
    if kind == "console" and argument:
        return lambda page, arg, docs: render_console(page, arg)
    if kind == "errors" and not argument:
        return lambda page, arg, docs: render_errors(page, docs)
    if kind in simple and not argument:
        return lambda page, arg, docs: simple[kind](page)
    raise KeyError(f"unknown generated block {name!r}")


def pages(docs: Path) -> Iterator[Path]:
    yield from sorted(path for path in docs.rglob("*.md") if path.is_file())


def render_page(text: str, page: str, docs: Path) -> str:
    """The page with every generated block rendered afresh."""

    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        _, _, argument = name.partition(":")
        body = renderer(name)(page, argument, docs)
        return f"{BEGIN.format(name=name)}\n{body}\n{END.format(name=name)}"

    rendered = BLOCK.sub(replace, text)
    if len(ANY_MARKER.findall(text)) != 2 * len(BLOCK.findall(text)):
        raise ValueError(f"{page}: a GENERATED marker has no partner (BEGIN and END must name the same block)")
    return rendered


def problems_of_coverage(docs: Path) -> list[str]:
    """Sources without a page: a schema file with no generated block, a required page missing."""
    blocks = {match.group("name") for path in pages(docs) for match in BLOCK.finditer(path.read_text(encoding="utf-8"))}
    missing = [
        f"schema {stem}: no page has a `schema:{stem}` block (expected in docs/{schema_page(stem)})"
        for stem in schema_stems()
        if f"schema:{stem}" not in blocks
    ]
    missing += [f"no page has a `{name}` block" for name in ("errors", "gap-codes", "cli") if name not in blocks]
    return missing


def main(argv: list[str] | None = None) -> int:
    os.chdir(ROOT)  # console examples name files relative to the repository root
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="report stale pages and exit 1; write nothing")
    parser.add_argument("--docs-dir", type=Path, default=ROOT / "docs", help="docs folder (default: docs/)")
    args = parser.parse_args(argv)
    docs = args.docs_dir.resolve()

    stale = []
    for path in pages(docs):
        page = path.relative_to(docs).as_posix()
        text = path.read_text(encoding="utf-8")
        if "GENERATED" not in text:
            continue
        rendered = render_page(text, page, docs)
        if rendered == text:
            continue
        stale.append(page)
        if args.check:
            diff = difflib.unified_diff(
                text.splitlines(), rendered.splitlines(), f"docs/{page}", f"docs/{page} (rendered)", lineterm="", n=1
            )
            print("\n".join(list(diff)[:40]))
        else:
            path.write_text(rendered, encoding="utf-8")
            print(f"rendered docs/{page}")
    problems = problems_of_coverage(docs)
    for problem in problems:
        print(f"render_docs: {problem}", file=sys.stderr)
    if args.check and stale:
        print(
            f"render_docs: {len(stale)} page(s) out of date: {', '.join(stale)}; "
            "run `python tools/render_docs.py` and commit the result",
            file=sys.stderr,
        )
    return 1 if problems or (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
