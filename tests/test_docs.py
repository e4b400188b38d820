"""The docs site: generated pages current, every code anchored, every example run, every link resolving.

Conventions in `docs/**/*.md` and `README.md` that these tests rely on (tests/doc_blocks.py reads them):

- `<!-- validate: NAME -->` before a ```json block: the block is valid against the bundled schema
  NAME (`gym-contract schema list`), or `NAME#/$defs/X` for a part of one.
- `<!-- check: KIND -->` before a ```json block: the validation engine finds no error in it.
- ```bash / ```console blocks: every `gym-contract` command in them is run from the repository
  root, and exits with the status given by a preceding `<!-- exit: N -->` (0 when there is none);
  `<!-- no-run: why -->` before a block marks a command that stands for the reader's own file.
- ```python blocks run, each in a fresh namespace from the repository root; any `test_*` function
  they define is then called.
- A `--8<-- "path"` line in a block stands for that file's content (pymdownx.snippets).

Blocks inside `<!-- BEGIN GENERATED … -->` regions were produced by running their commands, and
`tools/render_docs.py --check` re-runs them; the console and Python runners skip them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import unquote, urlsplit
from xml.etree import ElementTree

import pytest
import yaml
import zstandard
from jsonschema import Draft202012Validator

from gym_contract import schemas
from gym_contract.diagnostics import CODES, docs_url
from gym_contract.validation import ROLLOUT_ATTACHMENTS, iter_diagnostics
from tests.doc_blocks import (
    CI_GUIDE,
    DOCS,
    README,
    REPO_VARIABLE,
    REV_VARIABLE,
    Block,
    all_blocks,
    blocks,
    console_commands,
    needs_ray,
    page_name,
    pinned_revision,
    pre_commit_snippet,
    python_blocks,
    run_console_command,
    run_python_block,
    run_shell,
    this_interpreter_first,
)
from tests.support import REPO

SITE_ROOT = "https://gym-contract.dev/"


def _load_render_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("render_docs", REPO / "tools" / "render_docs.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


render_docs = _load_render_docs()


# --------------------------------------------------------------------------- generated pages current


def run_render_docs(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    cwd = Path.cwd()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            status = render_docs.main(list(args))
    finally:
        os.chdir(cwd)
    return status, out.getvalue()


def test_generated_pages_are_current():
    status, output = run_render_docs("--check")
    assert status == 0, f"run `python tools/render_docs.py` and commit the result:\n{output}"


def test_check_fails_after_a_hand_edit_of_a_generated_block(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    page = docs / "reference" / "schemas" / "trajectory.md"
    text = page.read_text(encoding="utf-8")
    assert "| `task_id` | string | yes |" in text
    page.write_text(text.replace("| `task_id` | string | yes |", "| `task_id` | integer | yes |"), encoding="utf-8")

    status, output = run_render_docs("--check", "--docs-dir", str(docs))
    assert status == 1
    assert "reference/schemas/trajectory.md" in output

    assert run_render_docs("--docs-dir", str(docs))[0] == 0  # rendering repairs it
    assert page.read_text(encoding="utf-8") == text
    assert run_render_docs("--check", "--docs-dir", str(docs))[0] == 0


def test_check_fails_when_a_schema_has_no_page(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    (docs / "reference" / "schemas" / "common.md").unlink()
    status, output = run_render_docs("--check", "--docs-dir", str(docs))
    assert status == 1
    assert "schema:common" in output


def test_an_unpaired_marker_is_refused(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    page = docs / "reference" / "cli.md"
    page.write_text(page.read_text(encoding="utf-8").replace("<!-- END GENERATED cli -->", ""), encoding="utf-8")
    with pytest.raises(ValueError, match="no partner"):
        run_render_docs("--check", "--docs-dir", str(docs))


# --------------------------------------------------------------------------------- codes and pages


def test_every_diagnostic_code_has_an_example_that_reports_it():
    for code in CODES:
        if code == render_docs.UNOPENABLE:
            assert not (DOCS / render_docs.ERROR_EXAMPLES / render_docs.MISSING_INPUT).exists()
            continue
        path = render_docs.error_example_file(DOCS, code)
        assert path is not None, f"add docs/examples/errors/{code}.jsonl: a file that makes `validate` report {code}"
        options = render_docs.EXAMPLE_ARGS.get(code, [])
        status, output = render_docs.run_cli(["validate", "--format", "json", *options, str(path)])
        report = json.loads(output)
        assert set(report["diagnostics_by_code"]) == {code}, f"{path.name} reports {report['diagnostics_by_code']}"
        assert status == (1 if CODES[code].severity == "error" else 0)


def test_the_unopenable_example_exits_with_status_2():
    status, output = render_docs.run_cli(["validate", str(DOCS / "examples" / "errors" / render_docs.MISSING_INPUT)])
    assert status == 2
    assert "cannot open" in output


def test_error_example_files_are_all_used():
    stems = {path.name.split(".")[0] for path in (DOCS / render_docs.ERROR_EXAMPLES).iterdir()}
    assert stems <= set(CODES), f"examples for codes that do not exist: {sorted(stems - set(CODES))}"


def test_docs_url_names_the_errors_page():
    for code in CODES:
        url = urlsplit(docs_url(code))
        assert f"{url.scheme}://{url.netloc}/" == SITE_ROOT
        assert url.path == "/reference/errors/"  # docs/reference/errors.md
        assert url.fragment == code
    assert (DOCS / "reference" / "errors.md").is_file()


# ------------------------------------------------------------------------------------ JSON examples


def _validator(target: str) -> Draft202012Validator:
    name, _, pointer = target.partition("#")
    if not pointer:
        return schemas.validator(name)
    base = schemas.schema_id(name)
    return Draft202012Validator({"$ref": f"{base}#{pointer}"}, registry=schemas.registry())


def json_blocks() -> list[Block]:
    return [block for block in all_blocks() if block.language == "json"]


def test_json_examples_are_annotated():
    """A JSON block either claims what it is (and is checked) or is an input of the errors page."""
    loose = [
        str(block)
        for block in json_blocks()
        if not ({"validate", "check"} & set(block.annotations)) and block.generated != "errors"
    ]
    assert not loose, f"JSON blocks without <!-- validate: NAME --> or <!-- check: KIND -->: {loose}"


@pytest.mark.parametrize("block", [b for b in json_blocks() if "validate" in b.annotations], ids=str)
def test_json_example_validates_against_its_schema(block: Block):
    instance = json.loads(block.text)
    errors = [error.message for error in _validator(block.annotations["validate"]).iter_errors(instance)]
    assert not errors, f"{block}: {errors}"


@pytest.mark.parametrize("block", [b for b in json_blocks() if "check" in b.annotations], ids=str)
def test_json_example_passes_the_engine(block: Block):
    instance = json.loads(block.text)
    problems = [str(d) for d in iter_diagnostics(instance, block.annotations["check"]) if d.severity == "error"]
    assert not problems, f"{block}: {problems}"


def test_schema_files_named_in_the_docs_exist():
    # A name written from the repository's root (tests/conformance/…) is looked for there; any other
    # names a bundled schema, whatever link or URL leads to it.
    named = {
        match.group(1)
        for page in DOCS.rglob("*.md")
        for match in re.finditer(r"((?:[\w.-]+/)*[a-z_]+\.schema\.json)", page.read_text(encoding="utf-8"))
    }
    bundled = REPO / "schemas" / schemas.SCHEMA_VERSION

    def exists(name: str) -> bool:
        from_root = name.startswith("tests/")
        return (REPO / name if from_root else bundled / name.rsplit("/", 1)[-1]).is_file()

    missing = sorted(name for name in named if not exists(name))
    assert not missing, f"the docs name schema files that do not exist: {missing}"


# ------------------------------------------------------------------------------ commands and code


def test_every_command_and_example_is_run_here_or_with_the_ray_tests():
    needing_ray = [command for block, command in console_commands() if needs_ray(block)]
    needing_ray += [str(block) for block in python_blocks() if needs_ray(block)]
    assert needing_ray, "tests/distributed/test_ray_docs.py runs the docs' Ray examples: there should be some"
    assert len(needing_ray) <= 4  # the rest run here, without a cluster


@pytest.mark.parametrize(
    ("block", "command"), [(b, c) for b, c in console_commands() if not needs_ray(b)], ids=lambda value: str(value)[:60]
)
def test_console_command_runs_with_its_documented_exit_status(block: Block, command: str):
    run_console_command(block, command)


def test_commands_in_the_docs_are_run():
    """Most command blocks run; the ones that stand for a reader's own files stay few."""
    generated = [block for block in all_blocks() if block.language == "console" and block.generated]
    assert len(console_commands()) + len(generated) >= 10
    skipped = [block for block in all_blocks() if "no-run" in block.annotations]
    assert len(skipped) <= 4, [str(block) for block in skipped]


@pytest.mark.parametrize("block", [block for block in python_blocks() if not needs_ray(block)], ids=str)
def test_python_example_runs(block: Block, monkeypatch: pytest.MonkeyPatch):
    run_python_block(block, monkeypatch)


# ------------------------------------------------------------------------- the README's first command

NUMBER_WORDS = dict(enumerate(["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]))


def test_the_readme_first_command_passes_and_the_readme_says_what_its_warnings_mean():
    install, _, command = blocks(README)[0].text.split("\n")[0].partition(" && ")
    assert install == "python -m pip install ."
    result = run_shell(command, cwd=REPO, env=this_interpreter_first())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS (fail on error)" in result.stdout
    reported = Counter(re.findall(r"^\s+! (error|warning|info) (\w+) at", result.stdout, re.MULTILINE))
    assert {severity for severity, _ in reported} <= {"warning", "info"}
    text = README.read_text(encoding="utf-8")
    explained = text[text.index("The verdict is PASS") : text.index("\n## ")]
    for _severity, code in reported:
        assert f"`{code}`" in explained, f"the README does not say why the example reports {code}"
    warnings = sum(count for (severity, _), count in reported.items() if severity == "warning")
    assert f"{NUMBER_WORDS[warnings]} warning" in explained


# ------------------------------------------------------------------------- the CI guide's snippets


def _prose_and_blocks(page: Path) -> str:
    """A page's text less its generated regions, which are the commands' own words."""
    text = page.read_text(encoding="utf-8")
    return re.sub(r"<!-- BEGIN GENERATED .*?<!-- END GENERATED [^>]*-->", "", text, flags=re.DOTALL)


READER_PAGES = [*sorted(DOCS.rglob("*.md")), README]
# `gym-contract` or `"gym-contract[extra]"` with no `@ URL` after it.
INDEX_INSTALL = re.compile(r'pip install\s+(?:-\S+\s+)*"?gym-contract(?![\w\[\],]*"?\s*@)')


def test_no_install_line_asks_a_package_index_for_gym_contract():
    """gym-contract is installed from a checkout or from its repository: `pip install gym-contract` finds nothing."""
    found = [
        f"{page_name(page)}: {match.group(0)}"
        for page in READER_PAGES
        for match in INDEX_INSTALL.finditer(_prose_and_blocks(page))
    ]
    assert not found, found


def test_nothing_is_announced_as_planned():
    """The docs describe what the package does; a feature announced for later goes stale the day it lands."""
    stale = re.compile(r"\b(?:is|are) planned\b|\bnot yet (?:available|implemented)\b|\bcoming soon|\buntil then")
    found = [f"{page_name(p)}: {m.group(0)}" for p in READER_PAGES for m in stale.finditer(_prose_and_blocks(p))]
    assert not found, found


def yaml_blocks() -> list[Block]:
    return [block for block in all_blocks() if block.language in ("yaml", "yml")]


@pytest.mark.parametrize("block", yaml_blocks(), ids=str)
def test_yaml_example_parses(block: Block):
    assert isinstance(yaml.safe_load(block.text), dict), block


def ci_shell_lines(config: dict[str, Any]) -> list[str]:
    """The shell commands of a GitHub Actions workflow's `run:` steps, or of a GitLab CI job's `script:`."""
    if "jobs" in config:
        return [step["run"] for job in config["jobs"].values() for step in job["steps"] if "run" in step]
    return [line for job in config.values() if isinstance(job, dict) for line in job.get("script", [])]


def ci_configs() -> list[Block]:
    return [block for block in yaml_blocks() if ci_shell_lines(yaml.safe_load(block.text))]


def install_snippets() -> list[Block]:
    """The CI guide's shell blocks that install gym-contract at the pinned revision (pre-commit's aside)."""
    return [
        block
        for block in blocks(CI_GUIDE)
        if block.language == "bash" and f"${REPO_VARIABLE}" in block.text and block != pre_commit_snippet()
    ]


def test_the_ci_guide_pins_every_install_and_every_config_installs_that_way():
    snippets = install_snippets()
    assert len(snippets) == 2  # straight from the repository, and from a clone
    written = {line.strip() for block in snippets for line in block.text.split("\n")}
    for block in ci_configs():
        config = yaml.safe_load(block.text)
        installs = [line for line in ci_shell_lines(config) if "pip install" in line]
        assert installs, f"{block}: the config does not install gym-contract"
        assert set(installs) <= written, f"{block}: {installs} is not an install line the guide's tests run"
        for job in config.get("jobs", {}).values():  # GitHub takes the variables from the repository's
            assert job["env"] == {name: f"${{{{ vars.{name} }}}}" for name in (REPO_VARIABLE, REV_VARIABLE)}


def _throwaway_environment(folder: Path) -> dict[str, str]:
    """A fresh virtual environment, as a CI job has, that also sees this one's packages but gym-contract.

    pip (this environment's) then finds the dependencies already there, and gym-contract nowhere, so
    that it installs the snippet's gym-contract into the new environment whatever its version."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    seen = folder / "packages-but-gym-contract"
    seen.mkdir()
    for site in sorted({Path(sysconfig.get_paths()[key]) for key in ("purelib", "platlib")}):
        for entry in site.iterdir():
            if "gym_contract" not in entry.name.lower().replace("-", "_") and not (seen / entry.name).exists():
                (seen / entry.name).symlink_to(entry)
    paths = sysconfig.get_paths(vars={"base": str(folder), "platbase": str(folder)})
    Path(paths["purelib"], "packages-but-gym-contract.pth").write_text(f"{seen}\n", encoding="utf-8")
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    environment["PATH"] = os.pathsep.join([paths["scripts"], environment.get("PATH", "")])
    environment["VIRTUAL_ENV"] = str(folder)
    return environment


@pytest.mark.parametrize("block", install_snippets(), ids=str)
def test_an_install_snippet_installs_the_pinned_revision_and_its_command_runs(block: Block, tmp_path: Path):
    revision = pinned_revision()
    environment = {**_throwaway_environment(tmp_path / "venv"), **revision}
    result = run_shell(block.text, cwd=tmp_path, env=environment, strict=True)  # the snippet as written
    assert result.returncode == 0, f"{block}:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    where = subprocess.run(
        ["python", "-c", "import gym_contract; print(gym_contract.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    assert Path(where.stdout.strip()).is_relative_to(tmp_path / "venv"), where.stdout
    (installed,) = (tmp_path / "venv").rglob("gym_contract-*.dist-info")
    origin = json.loads((installed / "direct_url.json").read_text(encoding="utf-8"))
    if "vcs_info" in origin:
        assert origin["vcs_info"]["commit_id"] == revision[REV_VARIABLE]
    else:  # installed from a clone, checked out at the revision
        clone = Path(urlsplit(origin["url"]).path)
        assert clone.parent == tmp_path
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True)
        assert head.stdout.strip() == revision[REV_VARIABLE]
    run = subprocess.run(
        ["gym-contract", "validate", str(REPO / "examples" / "rollouts.jsonl")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env=environment,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "PASS" in run.stdout


def _rollouts_folder(work: Path, *, damaged: bool) -> None:
    """What the configs read: rollouts as JSONL and zstd, sound ones and, if asked, a damaged one."""
    folder = work / "rollouts"
    folder.mkdir(exist_ok=True)
    sources = [REPO / "examples" / "rollouts.jsonl"]
    if damaged:
        sources.append(REPO / "examples" / "damaged_rollouts.jsonl")
    for source in sources:
        data = source.read_bytes()
        (folder / source.name).write_bytes(data)
        (folder / f"{source.name}.zst").write_bytes(zstandard.ZstdCompressor().compress(data))


@pytest.mark.parametrize("block", ci_configs(), ids=str)
def test_a_ci_configs_commands_run_and_leave_their_reports(block: Block, tmp_path: Path):
    commands = [line for line in ci_shell_lines(yaml.safe_load(block.text)) if line.startswith("gym-contract ")]
    assert commands, block

    def run_all() -> list[int]:
        statuses = []
        for command in commands:
            result = run_shell(command, cwd=tmp_path, env=this_interpreter_first())
            assert result.returncode in (0, 1), f"{block}: {command}\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
            statuses.append(result.returncode)
        return statuses

    _rollouts_folder(tmp_path, damaged=False)
    assert run_all() == [0] * len(commands)
    reports = {path.name: path.read_bytes() for path in tmp_path.glob("contract*")}
    assert reports, f"{block}: the commands write no report"
    _rollouts_folder(tmp_path, damaged=True)
    # A FAIL verdict fails a step that gates, and leaves a step that only writes a report green.
    assert run_all() == [0 if "||" in command else 1 for command in commands]
    for name in reports:
        written = (tmp_path / name).read_bytes()
        assert written != reports[name], f"{block}: {name} does not show the damaged file"
        if name.endswith((".json", ".sarif")):
            json.loads(written)
        else:
            ElementTree.fromstring(written)


# ----------------------------------------------------------------------- other-language examples

OTHER_LANGUAGES = [DOCS / "examples" / "typescript" / "validate.ts", DOCS / "examples" / "go" / "main.go"]
EXPECTED_SCHEMA = {
    "ng_agent_observations": "agent_observations",
    "ng_model_call_capture": "model_call_capture",
    "ng_trajectory": "trajectory",
    "ng_agent_outcome": "agent_outcome",
}


def attachment_map(path: Path) -> dict[str, str]:
    """The attachment -> `$id` table of a TypeScript or Go example, read from its source."""
    text = path.read_text(encoding="utf-8")
    base = re.search(r'(?:const BASE =|const base =) "([^"]+)"', text)
    assert base, path
    entries = re.findall(r'"?(ng_\w+)"?\s*:\s*(?:`\$\{BASE\}|base \+ ")([^`"]+)[`"]', text)
    return {key: base.group(1) + rest for key, rest in entries}


@pytest.mark.parametrize("path", OTHER_LANGUAGES, ids=lambda path: path.name)
def test_other_language_example_uses_the_engines_schemas(path: Path):
    mapping = attachment_map(path)
    assert set(mapping) == set(ROLLOUT_ATTACHMENTS)
    assert set(EXPECTED_SCHEMA) == set(ROLLOUT_ATTACHMENTS)
    for key, uri in mapping.items():
        assert uri == schemas.schema_id(EXPECTED_SCHEMA[key]), (path.name, key)


def test_the_other_language_recipe_works_with_a_plain_validator():
    """What the TypeScript and Go programs do — every file under its `$id`, one `$ref` per attachment —
    done with Python's jsonschema: the clean example passes, the damaged one does not."""
    from referencing import Registry, Resource

    folder = REPO / "schemas" / schemas.SCHEMA_VERSION
    documents = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.schema.json"))]
    registry = Registry().with_resources((document["$id"], Resource.from_contents(document)) for document in documents)
    validators = {
        key: Draft202012Validator({"$ref": uri}, registry=registry)
        for key, uri in attachment_map(OTHER_LANGUAGES[0]).items()
    }

    def failures(path: Path) -> int:
        count = 0
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            count += sum(not validators[key].is_valid(record[key]) for key in validators if record.get(key) is not None)
        return count

    assert failures(REPO / "examples" / "rollouts.jsonl") == 0
    assert failures(REPO / "examples" / "damaged_rollouts.jsonl") > 0


# ------------------------------------------------------------------------------------ the built site


def _mkdocs_or_skip() -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.skip('the docs extra is not installed (python -m pip install -e ".[docs]")')


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once per session with `mkdocs build --strict`."""
    _mkdocs_or_skip()
    target = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        # Not --quiet: it hides warnings from --strict, which then passes a build it should fail.
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(target)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    return target


class _Page(HTMLParser):
    """Every id, and every href and src, of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: Counter[str] = Counter()
        self.links: list[str] = []
        self.headings: list[str] = []
        """Ids of the level-3 headings."""
        self.resources: list[str] = []
        """What the browser loads by itself: scripts, stylesheets, icons, images, frames."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids[values["id"]] += 1  # type: ignore[index]
            if tag == "h3":  # codes are level-3 headings on their pages
                self.headings.append(values["id"])  # type: ignore[arg-type]
        if values.get("name") and tag == "a":
            self.ids[values["name"]] += 1  # type: ignore[index]
        for attribute in ("href", "src"):
            if values.get(attribute):
                self.links.append(values[attribute])  # type: ignore[arg-type]
        loads = tag in ("script", "img", "iframe", "source") or (
            tag == "link" and values.get("rel") not in ("canonical", "alternate", "prev", "next")
        )
        if loads and (values.get("src") or values.get("href")):
            self.resources.append(values.get("src") or values.get("href"))  # type: ignore[arg-type]


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _target(site: Path, page: Path, link: str) -> tuple[Path, str] | None:
    """The file in the site an internal link points at, and its fragment; None for an external link."""
    parts = urlsplit(link)
    if parts.scheme or parts.netloc or link.startswith(("mailto:", "data:", "javascript:")):
        return None
    if not parts.path:
        return page, unquote(parts.fragment)
    base = site if parts.path.startswith("/") else page.parent
    resolved = (base / unquote(parts.path.lstrip("/"))).resolve()
    if resolved.is_dir() or parts.path.endswith("/"):
        resolved = resolved / "index.html"
    return resolved, unquote(parts.fragment)


def test_every_internal_link_and_asset_resolves(site: Path):
    pages = {path.resolve(): parse(path) for path in site.rglob("*.html")}
    broken = []
    for path, page in pages.items():
        for link in page.links:
            target = _target(site, path, link)
            if target is None:
                continue
            file, fragment = target
            if not file.is_file():
                broken.append(f"{path.relative_to(site)}: {link} (no file)")
            elif fragment and file in pages and fragment not in pages[file].ids:
                broken.append(f"{path.relative_to(site)}: {link} (no #{fragment})")
            if not str(file).startswith(str(site.resolve())):
                broken.append(f"{path.relative_to(site)}: {link} (outside the site)")
    assert not broken, "\n".join(broken[:50])


def test_the_site_fetches_nothing_from_elsewhere(site: Path):
    """Fonts, scripts, styles and images are all local: the site works offline and on a fresh machine."""
    remote = [
        f"{path.relative_to(site)}: {url}"
        for path in site.rglob("*.html")
        for url in parse(path).resources
        if urlsplit(url).scheme or url.startswith("//")
    ]
    assert not remote, remote


def test_every_diagnostic_code_has_exactly_one_anchor_on_the_errors_page(site: Path):
    page = parse(site / "reference" / "errors" / "index.html")
    assert {code: page.ids[code] for code in CODES} == dict.fromkeys(CODES, 1)
    assert Counter(page.headings) == Counter(list(CODES)), "the errors page and CODES list different codes"


def test_every_gap_code_has_exactly_one_anchor_on_the_gap_codes_page(site: Path):
    registry = schemas.gap_codes()
    page = parse(site / "reference" / "gap-codes" / "index.html")
    assert {code: page.ids[code] for code in registry} == dict.fromkeys(registry, 1)
    assert Counter(page.headings) == Counter(list(registry)), "the gap-codes page and the registry list different codes"


def test_docs_urls_resolve_in_the_built_site(site: Path):
    pages: dict[str, _Page] = {}
    for code in CODES:
        url = urlsplit(docs_url(code))
        if url.path not in pages:
            pages[url.path] = parse(site / url.path.strip("/") / "index.html")
        assert pages[url.path].ids[url.fragment] == 1, code


def test_schemas_are_served_at_their_ids(site: Path):
    assert (site / "schemas" / "v1" / "trajectory.schema.json").is_file()
    folder = REPO / "schemas" / schemas.SCHEMA_VERSION
    for source in sorted(folder.glob("*.json")):
        served = site / "schemas" / schemas.SCHEMA_VERSION / source.name
        assert served.read_bytes() == source.read_bytes(), source.name
        document = json.loads(source.read_text(encoding="utf-8"))
        if "$id" in document:
            assert (site / urlsplit(document["$id"]).path.lstrip("/")) == served


def test_search_index_holds_the_reference(site: Path):
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    locations = {entry["location"] for entry in index["docs"]}
    assert "reference/errors/#json_invalid" in locations
    assert any(location.startswith("reference/schemas/trajectory/") for location in locations)


def test_search_splits_codes_and_names_into_their_words(site: Path):
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    # lunr splits with this pattern (a JavaScript regular expression; these constructs read alike in Python).
    separator = re.compile(index["config"]["separator"])
    assert "dangling" in separator.split("model_call_reference_dangling")
    assert "observations" in separator.split("ng_agent_observations")
    assert {"tool", "call", "id"} <= set(separator.split("ToolCallObservation.tool_call_id".lower()))
    entry = next(e for e in index["docs"] if e["location"] == "reference/errors/#model_call_reference_dangling")
    assert "model_call_reference_dangling" in entry["title"]


def test_brackets_in_docstrings_stay_text():
    spec = importlib.util.spec_from_file_location("griffe_prose", DOCS / "hooks" / "griffe_prose.py")
    assert spec is not None
    assert spec.loader is not None
    if importlib.util.find_spec("griffe") is None:
        pytest.skip("griffe (from the docs extra) is not installed")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    escape = module.escape_reference_links
    assert escape("matches ^[A-Z][a-z]*$") == "matches ^[A-Z]\\[a-z]*$"
    assert escape("code `x[0][1]` stays") == "code `x[0][1]` stays"
    assert escape("```\nd[a][b]\n```") == "```\nd[a][b]\n```"
