"""The report of the example data opened in headless Chromium: no error, no request, every chart drawn, not blank.

Chromium is Debian's (`.ci/run` installs it); Playwright drives it and never downloads a browser.
Where `CI` is set, a missing Chromium fails the test instead of skipping it.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from playwright.sync_api import sync_playwright

from gym_contract.html_report import write_html_report
from tests.support import REPO

CHROMIUM = os.environ.get("GYM_CONTRACT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
EXAMPLES = REPO / "examples"
HOSTILE = "</script><script>alert(1)</script>"

# Per chart div: the marks Plotly drew for its traces (bars and markers are paths, a heat map an image).
DRAWN_MARKS = """divs => divs.map(div => [
  div.id,
  div.classList.contains("js-plotly-plot"),
  div.querySelectorAll(".cartesianlayer .trace path, .cartesianlayer .hm image").length,
])"""


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Debian's Chromium, started once for the module."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"no Chromium at {CHROMIUM}: .ci/run installs Debian's chromium package")
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


def _open(chromium: Any, page_path: Path, screenshot: bool = False) -> dict[str, Any]:
    """Load the page as a reader would, in a context of its own, and gather what the browser saw."""
    seen: dict[str, Any] = {"console": [], "errors": [], "requests": [], "dialogs": []}
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.on("console", lambda message: seen["console"].append(f"{message.type}: {message.text}"))
        page.on("pageerror", lambda error: seen["errors"].append(str(error)))
        page.on("request", lambda request: seen["requests"].append(request.url))
        page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
        page.goto(page_path.as_uri(), wait_until="load")
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length > 0")
        seen["charts"] = page.eval_on_selector_all("div[id^='chart-']", DRAWN_MARKS)
        if screenshot:
            seen["png"] = page.screenshot(full_page=False)
    finally:
        context.close()
    return seen


def test_the_example_report_opens_offline_with_every_chart_drawn(chromium: Any, tmp_path: Path):
    output = tmp_path / "report.html"
    written = write_html_report([str(EXAMPLES / "rollouts.jsonl"), str(EXAMPLES / "damaged_rollouts.jsonl")], output)
    seen = _open(chromium, output, screenshot=True)
    assert [line for line in seen["console"] if line.startswith(("error", "warning"))] == []
    assert seen["errors"] == []
    assert seen["requests"] == [output.as_uri()]
    charts = seen["charts"]
    assert len(charts) == 4 + written.shown, json.dumps(charts)
    assert [chart for chart in charts if not (chart[1] and chart[2] > 0)] == []
    colours = Image.open(io.BytesIO(seen["png"])).convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None
    assert len(colours) > 50  # text, bars and the verdict: far more than a blank or one-colour page


def test_a_hostile_name_runs_nothing_in_the_browser(chromium: Any, tmp_path: Path):
    record = json.loads((EXAMPLES / "rollouts.jsonl").read_bytes().splitlines()[0])
    record["ng_agent_observations"]["source"] = HOSTILE
    record["ng_trajectory"]["invocations"][0]["conversation"][0]["content"] = HOSTILE
    record["ng_trajectory"]["tool_calls"][0]["tool_name"] = "<img src=x onerror=alert(2)>"
    source = tmp_path / "hostile.jsonl"
    source.write_text(json.dumps(record) + "\n")
    output = tmp_path / "report.html"
    write_html_report([str(source)], output, title=HOSTILE)
    seen = _open(chromium, output)
    assert seen["dialogs"] == []
    assert seen["errors"] == []
    assert seen["requests"] == [output.as_uri()]
