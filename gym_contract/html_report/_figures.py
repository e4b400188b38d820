"""The page's charts as Plotly figures: diagnostics, gaps, the coverage heat map, token histograms, timelines.

Plotly reads a few HTML tags and entities in any text it draws, so every text from the data is
escaped first: it then shows as written, and no tag in a name is ever taken for markup.
"""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gym_contract._vocabulary import CRITERIA, TOKEN_FIELDS
from gym_contract.coverage import VERDICTS, CoverageMatrix
from gym_contract.diagnostics import SEVERITIES
from gym_contract.html_report._drilldown import Drilldown
from gym_contract.html_report._tallies import UNKNOWN_BIN, Tallies, bin_label

SEVERITY_COLOURS = {"error": "#c62828", "warning": "#ef6c00", "info": "#1565c0"}
VERDICT_SCORE = {"V": 1.0, "O": 0.5, "X": 0.0}
TIMELINE_COLOURS = {"invocation": "#b0bec5", "model call": "#1e88e5", "tool call": "#43a047"}
_LAYOUT: dict[str, Any] = {"margin": {"l": 10, "r": 10, "t": 40, "b": 10}}
# A few settings rather than one of Plotly's named templates: each of those is copied into every
# figure, about 7 kB of the page and a tenth of a second per chart.
_TEMPLATE: dict[str, Any] = {
    "layout": {
        "font": {"color": "#2a3f5f"},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "title": {"x": 0.05},
        # Room for tick labels and axis titles, which the margins alone would cut off.
        "xaxis": {"gridcolor": "#e5e5e5", "zerolinecolor": "#bdbdbd", "automargin": True},
        "yaxis": {"gridcolor": "#e5e5e5", "zerolinecolor": "#bdbdbd", "automargin": True},
    }
}


def _figure() -> go.Figure:
    return go.Figure(layout={"template": _TEMPLATE})


def shown(value: str) -> str:
    """A text from the data, as Plotly must be given it to draw it literally."""
    return html.escape(value, quote=True)


def diagnostics_chart(by_code_and_severity: dict[tuple[str, str], int]) -> go.Figure:
    """Diagnostics by code, one bar per code, coloured by severity."""
    figure = _figure()
    codes = sorted({code for code, _ in by_code_and_severity}, key=lambda code: -_total(by_code_and_severity, code))
    for severity in SEVERITIES:
        counts = [by_code_and_severity.get((code, severity), 0) for code in codes]
        if any(counts):
            figure.add_bar(
                y=[shown(code) for code in codes],
                x=counts,
                orientation="h",
                name=severity,
                marker_color=SEVERITY_COLOURS[severity],
            )
    return _stacked_rows(figure, "Diagnostics by code", "diagnostics", len(codes), 120)


def _total(counts: dict[tuple[str, str], int], code: str) -> int:
    return sum(number for (name, _), number in counts.items() if name == code)


def gaps_chart(tallies: Tallies) -> go.Figure:
    """Evidence gaps by code, stacked by the producer that reported them."""
    gaps = tallies.gaps()
    codes = sorted(
        {code for code, _ in gaps}, key=lambda code: (-sum(n for (c, _), n in gaps.items() if c == code), code)
    )
    figure = _figure()
    for producer in tallies.producers():
        counts = [gaps.get((code, producer), 0) for code in codes]
        if any(counts):
            figure.add_bar(y=[shown(code) for code in codes], x=counts, orientation="h", name=shown(producer))
    return _stacked_rows(figure, "Evidence gaps by code and producer", "gaps reported", len(codes), 140)


def _stacked_rows(figure: go.Figure, title: str, counted: str, rows: int, room: int) -> go.Figure:
    """Horizontal bars stacked per row, the first row on top, each row as tall as the others whatever their number."""
    figure.update_layout(
        _LAYOUT,
        title=title,
        barmode="stack",
        height=room + 28 * rows,
        yaxis={"autorange": "reversed", "automargin": True},
        xaxis_title=counted,
    )
    return figure


def coverage_heatmap(matrix: CoverageMatrix) -> go.Figure:
    """C1–C7 per producer: the colour is the share of V (O counts half), the text is the matrix's own cell."""
    rows: list[str | None] = [*matrix.producers(), None]
    scores, cells = [], []
    for producer in rows:
        rated = max(sum(matrix.count(CRITERIA[0], verdict, producer) for verdict in VERDICTS), 1)
        scores.append(
            [
                sum(VERDICT_SCORE[v] * matrix.count(criterion, v, producer) for v in VERDICTS) / rated
                for criterion in CRITERIA
            ]
        )
        cells.append([matrix.cell(criterion, producer) for criterion in CRITERIA])
    names = [shown(f"{producer} ({matrix.rollouts[producer]})") for producer in matrix.producers()]
    figure = _figure()
    figure.add_trace(
        go.Heatmap(
            z=scores,
            x=list(CRITERIA),
            y=[*names, f"all rollouts ({matrix.total})"],
            text=cells,
            texttemplate="%{text}",
            zmin=0,
            zmax=1,
            colorscale=[[0, "#e57373"], [0.5, "#ffd54f"], [1, "#81c784"]],
            colorbar={"title": "V share", "tickvals": [0, 0.5, 1], "ticktext": ["X", "O", "V"]},
            hovertemplate="%{y} · %{x}: %{text}<extra></extra>",
        )
    )
    figure.update_layout(
        _LAYOUT,
        title="Coverage C1–C7 by producer (V complete, O partial, X unavailable)",
        height=160 + 40 * len(rows),
        yaxis={"autorange": "reversed", "automargin": True},
    )
    return figure


def token_histograms(tallies: Tallies) -> go.Figure:
    """Per token field, model calls by the power-of-two bin of their count, one bar per producer; unknown last."""
    figure = make_subplots(
        rows=len(TOKEN_FIELDS), cols=1, subplot_titles=TOKEN_FIELDS, vertical_spacing=0.06, figure=_figure()
    )
    for row, name in enumerate(TOKEN_FIELDS, start=1):
        bins = sorted({number for producer in tallies.producers() for number in tallies.token_bins(name, producer)})
        order = [number for number in bins if number != UNKNOWN_BIN] + ([UNKNOWN_BIN] if UNKNOWN_BIN in bins else [])
        for index, producer in enumerate(tallies.producers()):
            counts = tallies.token_bins(name, producer)
            if not counts:
                continue
            figure.add_bar(
                x=[bin_label(number) for number in order],
                y=[counts.get(number, 0) for number in order],
                name=shown(producer),
                legendgroup=producer,
                showlegend=row == 1,
                marker_color=_palette(index),
                row=row,
                col=1,
            )
        figure.update_xaxes(type="category", row=row, col=1)
        figure.update_yaxes(title_text="calls", row=row, col=1)
    figure.update_layout(_LAYOUT, barmode="group", height=260 * len(TOKEN_FIELDS), title="Tokens per model call")
    return figure


def _palette(index: int) -> str:
    colours = ("#1e88e5", "#43a047", "#fb8c00", "#8e24aa", "#00897b", "#e53935", "#6d4c41", "#3949ab")
    return colours[index % len(colours)]


def timeline(rollout: Drilldown) -> go.Figure | None:
    """Invocations, model calls and tool calls as bars on one time axis, compactions and gaps as marks; None
    when nothing in the rollout carries a time."""
    origin = rollout.origin
    if origin is None:
        return None
    figure = _figure()
    for what, width in (("invocation", 0.8), ("model call", 0.5), ("tool call", 0.25)):
        spans = [span for span in rollout.spans if span.what == what]
        if spans:
            figure.add_bar(
                y=[shown(span.row) for span in spans],
                base=[span.start - origin for span in spans],
                x=[max(span.end - span.start, 0.0) for span in spans],
                orientation="h",
                width=width,
                name=what,
                marker_color=TIMELINE_COLOURS[what],
                hovertext=[shown(span.label) for span in spans],
                hovertemplate="%{hovertext}<br>%{base:.3f} s + %{x:.3f} s<extra></extra>",
            )
    for what, symbol, colour in (("compaction", "diamond", "#8e24aa"), ("gap", "x", "#c62828")):
        moments = [moment for moment in rollout.moments if moment.what == what]
        if moments:
            figure.add_scatter(
                y=[shown(moment.row) for moment in moments],
                x=[moment.at - origin for moment in moments],
                mode="markers",
                marker={"symbol": symbol, "size": 12, "color": colour},
                name=what,
                hovertext=[shown(moment.label) for moment in moments],
                hovertemplate="%{hovertext}<br>at %{x:.3f} s<extra></extra>",
            )
    figure.update_layout(
        _LAYOUT,
        barmode="overlay",
        height=120 + 40 * max(len(rollout.rows()), 1),
        xaxis_title="seconds since the rollout's first timed event",
        yaxis={
            "type": "category",
            "categoryorder": "array",
            "categoryarray": [shown(row) for row in rollout.rows()],
            "autorange": "reversed",
            "automargin": True,
        },
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
    )
    return figure
