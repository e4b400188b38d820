"""Take the docs' screenshots of the HTML report of the example data, in headless Chromium.

    python tools/screenshot_report.py            # writes docs/assets/report-overview.png and report-rollout.png

Needs the dev extra (Playwright, the report extra) and Debian's chromium (`apt-get install chromium`).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from gym_contract.html_report import write_html_report

REPO = Path(__file__).resolve().parent.parent
INPUTS = [str(REPO / "examples" / "rollouts.jsonl"), str(REPO / "examples" / "damaged_rollouts.jsonl")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "assets", help="folder of the PNG files")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        page_path = Path(folder) / "report.html"
        # Inputs named relative to the repository, as a reader of the docs would type them.
        write_html_report([str(Path(path).relative_to(REPO)) for path in INPUTS], page_path, sample=3)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1200, "height": 2050})
            page.goto(page_path.as_uri(), wait_until="load")
            page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length > 0")
            page.screenshot(path=str(args.out / "report-overview.png"))
            rollout = page.locator("article.rollout").first
            rollout.locator("details").first.evaluate("details => { details.open = true; }")
            rollout.screenshot(path=str(args.out / "report-rollout.png"))
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
