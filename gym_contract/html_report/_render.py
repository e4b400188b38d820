"""The page itself: the template filled in with Jinja2, which escapes every value, and the charts as Plotly divs."""

from __future__ import annotations

import importlib.metadata
import importlib.resources
from typing import Any

import jinja2
import plotly.io
from markupsafe import Markup
from plotly.offline import get_plotlyjs

from gym_contract.html_report import _figures
from gym_contract.html_report._drilldown import drilldown
from gym_contract.html_report._tallies import Tallies

_CONFIG = {"displaylogo": False, "responsive": True}


def render(context: dict[str, Any]) -> str:
    """The whole HTML document."""
    tallies: Tallies = context["tallies"]
    report = context["report"]
    charts: dict[str, Markup | None] = {
        "diagnostics": _div(_figures.diagnostics_chart(context["by_code_and_severity"]), "chart-diagnostics")
        if report.by_code
        else None,
        "gaps": _div(_figures.gaps_chart(tallies), "chart-gaps") if context["gaps"] else None,
        "coverage": _div(_figures.coverage_heatmap(report.coverage), "chart-coverage")
        if report.coverage.total
        else None,
        "tokens": _div(_figures.token_histograms(tallies), "chart-tokens") if report.model_calls else None,
    }
    rollouts = []
    for number, sampled in enumerate(tallies.in_input_order()):
        shown = drilldown(sampled)
        figure = _figures.timeline(shown)
        rollouts.append((shown, None if figure is None else _div(figure, f"chart-timeline-{number}")))
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    template = environment.from_string(_template())
    return template.render(
        **context,
        charts=charts,
        rollouts=rollouts,
        version=_version(),
        # Plotly's own bundle, inlined as Plotly inlines it: once, in the head.
        plotly_js=Markup(get_plotlyjs()),
    )


def _div(figure: Any, div_id: str) -> Markup:
    """A figure as a div and the script that draws it; Plotly writes its JSON with `<` escaped."""
    written = plotly.io.to_html(
        figure, include_plotlyjs=False, full_html=False, div_id=div_id, config=_CONFIG, default_width="100%"
    )
    return Markup(f'<div class="plot">{written}</div>')


def _template() -> str:
    return importlib.resources.files("gym_contract.html_report").joinpath("_page.html.j2").read_text(encoding="utf-8")


def _version() -> str:
    try:
        return importlib.metadata.version("gym-contract")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"
