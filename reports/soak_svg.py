"""Line charts as inline SVG (no script, no font, no network), with faults on the time axis.

One chart: a time axis in minutes or seconds, one y axis (linear from 0, or logarithmic for
latencies), several series, a legend, and a dashed vertical line per fault with a numbered tag
that the page's fault table explains. Values are escaped; missing points break a line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from kconform.reports.html_style import esc

WIDTH, HEIGHT = 1180, 230
LEFT, RIGHT, TOP, BOTTOM = 64, 32, 26, 34  # RIGHT: room for the last time label
COLOURS = ("#2f6fdb", "#d9480f", "#2b8a3e", "#ae3ec9", "#e67700", "#495057", "#0c8599")


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[tuple[float, float | None]]  # (seconds from start, value)


@dataclass(frozen=True)
class Marker:
    at: float  # seconds from start
    label: str  # short tag shown on the chart ("1", "2", ...)
    title: str  # what it was (shown on hover)


def chart(
    title: str,
    series: Sequence[Series],
    markers: Sequence[Marker],
    *,
    end: float,
    unit: str = "",
    log: bool = False,
) -> str:
    """One chart as an `<svg>` element."""
    values = [v for s in series for _, v in s.points if v is not None and (v > 0 or not log)]
    top = max(values, default=1.0)
    bottom = min(values, default=0.1) if log else 0.0
    if log:
        bottom, top = (
            10 ** math.floor(math.log10(max(bottom, 1e-3))),
            10 ** math.ceil(math.log10(max(top, 1e-3)) + 1e-9),
        )
    else:
        top = _nice(top if top > 0 else 1.0)
    span = max(end, 1.0)

    def x(t: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * min(max(t, 0.0), span) / span

    def y(v: float) -> float:
        inner = HEIGHT - TOP - BOTTOM
        if log:
            share = (math.log10(max(v, bottom)) - math.log10(bottom)) / (
                math.log10(top) - math.log10(bottom) or 1
            )
        else:
            share = v / top if top else 0.0
        return TOP + inner * (1 - min(max(share, 0.0), 1.0))

    parts = [
        f'<svg class="soakplot" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" role="img" '
        f'aria-label="{esc(title)}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{LEFT}" y="16" class="t">{esc(title)}{esc(f" ({unit})" if unit else "")}</text>',
    ]
    parts += _grid(y, top, bottom, log)
    parts += _time_axis(x, span)
    for n, marker in enumerate(markers):
        mx = x(marker.at)
        parts.append(
            f'<g class="fault"><title>{esc(marker.title)}</title>'
            f'<line x1="{mx:.1f}" x2="{mx:.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" '
            f'stroke="#c92a2a" stroke-dasharray="4 3"/>'
            f'<text x="{mx + 3:.1f}" y="{TOP + 10 + 11 * (n % 3)}" fill="#c92a2a" '
            f'class="m">{esc(marker.label)}</text></g>'
        )
    for index, s in enumerate(series):
        colour = COLOURS[index % len(COLOURS)]
        for run in _runs(s.points, log):
            path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in run)
            if len(run) == 1:
                px, py = x(run[0][0]), y(run[0][1])
                parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.5" fill="{colour}"/>')
            else:
                parts.append(
                    f'<polyline fill="none" stroke="{colour}" stroke-width="1.8" points="{path}"/>'
                )
        lx = WIDTH - RIGHT - 170 * (len(series) - index)
        parts.append(
            f'<rect x="{lx}" y="7" width="12" height="4" fill="{colour}"/>'
            f'<text x="{lx + 16}" y="13" class="l">{esc(s.name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _runs(
    points: Sequence[tuple[float, float | None]], log: bool
) -> list[list[tuple[float, float]]]:
    runs: list[list[tuple[float, float]]] = [[]]
    for t, v in points:
        if v is None or (log and v <= 0):
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append((t, float(v)))
    return [r for r in runs if r]


def _nice(value: float) -> float:
    exponent = 10.0 ** math.floor(math.log10(value))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        if value <= step * exponent:
            return step * exponent
    return 10.0 * exponent


def _grid(y: object, top: float, bottom: float, log: bool) -> list[str]:
    assert callable(y)
    ticks = (
        [10**e for e in range(round(math.log10(bottom)), round(math.log10(top)) + 1)]
        if log
        else [top * i / 4 for i in range(5)]
    )
    out = []
    for tick in ticks:
        ty = y(tick)
        out.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#e9ecef"/>'
            f'<text x="{LEFT - 6}" y="{ty + 4:.1f}" text-anchor="end" class="a">{_fmt(tick)}</text>'
        )
    return out


def _time_axis(x: object, span: float) -> list[str]:
    assert callable(x)
    minutes = span >= 180
    step = _nice(span / 60 / 8) * 60 if minutes else _nice(span / 8)
    out = [
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{HEIGHT - BOTTOM}" y2="{HEIGHT - BOTTOM}" '
        'stroke="#adb5bd"/>'
    ]
    t = 0.0
    while t <= span + 1e-9:
        tx = x(t)
        label = f"{t / 60:g} min" if minutes else f"{t:g} s"
        out.append(
            f'<text x="{tx:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" class="a">'
            f"{label}</text>"
        )
        t += step
    return out


def _fmt(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:g}M"
    if value >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


STYLE = (
    ".soakplot{background:#fff;border:1px solid #dee2e6;border-radius:4px;margin:6px 0}"
    ".soakplot .t{font:600 13px system-ui,sans-serif;fill:#212529}"
    ".soakplot .a,.soakplot .l{font:11px system-ui,sans-serif;fill:#495057}"
    ".soakplot .m{font:600 11px system-ui,sans-serif}"
)
