from __future__ import annotations

from datetime import date

from django import template
from django.utils.dateformat import format as format_date

from topics import coverage
from topics import momentum as rules
from topics.momentum import WINDOW_WEEKS
from topics.momentum import Momentum

register = template.Library()

WIDTH = 320
HEIGHT = 80
GAP = 3
SPARK_HEIGHT = 20


@register.inclusion_tag("topics/momentum_chart.html")
def momentum_chart(momentum: Momentum, link: str = "") -> dict[str, object]:
    """The weekly bar chart as inline SVG, with a table of the same weeks; the
    last four weeks stand out, weeks not fully harvested are hatched."""
    weeks = momentum.weeks
    peak = max((week.papers for week in weeks), default=0) or 1
    bar = (WIDTH - GAP * (len(weeks) - 1)) / max(len(weeks), 1)
    bars = []
    for index, week in enumerate(weeks):
        height = round(HEIGHT * week.papers / peak, 1)
        x = round(index * (bar + GAP), 1)
        bars.append(
            {
                "x": x,
                "x_end": round(x + bar, 1),
                "y": round(HEIGHT - height, 1),
                "width": round(bar, 1),
                "height": max(height, 1 if week.papers else 0),
                "week": week,
                "recent": index >= len(weeks) - WINDOW_WEEKS,
                "in_window": index >= len(weeks) - 2 * WINDOW_WEEKS,
            }
        )
    return {
        "bars": bars,
        "width": WIDTH,
        "height": HEIGHT,
        "link": link,
        "as_of": momentum.as_of,
        "partial": not all(week.complete for week in weeks),
    }


@register.inclusion_tag("topics/sparkline.html")
def sparkline(momentum: Momentum) -> dict[str, object]:
    """A small line of the weekly counts for topic lists: solid over fully
    harvested weeks, dashed across the others."""
    weeks = momentum.weeks
    peak = max((week.papers for week in weeks), default=0) or 1
    step = 100 / max(len(weeks) - 1, 1)
    points = [
        f"{round(i * step, 1)},{round(SPARK_HEIGHT - 18 * w.papers / peak, 1)}"
        for i, w in enumerate(weeks)
    ]
    # Runs of consecutive complete weeks, each drawn as its own solid line.
    runs: list[list[str]] = []
    for i, week in enumerate(weeks):
        if not week.complete:
            continue
        if runs and i > 0 and weeks[i - 1].complete:
            runs[-1].append(points[i])
        else:
            runs.append([points[i]])
    # Said to a screen reader, which cannot see the line's shape.
    counts = [week.papers for week in weeks] or [0]
    return {
        "points": " ".join(points),
        "partial": not all(week.complete for week in weeks),
        "solid": [" ".join(run) for run in runs if len(run) > 1],
        "momentum": momentum,
        "first": counts[0],
        "last": counts[-1],
        "most": max(counts),
    }


@register.simple_tag
def momentum_rules() -> dict[str, float]:
    """The thresholds topics.momentum applies, for "How this is computed"."""
    return {
        "reference_percent": round(100 * coverage.REFERENCE_FRACTION),
        "week_percent": round(100 * coverage.WEEK_FRACTION),
        "day_percent": round(100 * coverage.DAY_FRACTION),
        "max_short_days": coverage.MAX_SHORT_DAYS,
        "min_weeks": rules.MIN_WEEKS,
        "floor": rules.FLOOR,
        "trending_min_papers": rules.TRENDING_MIN_PAPERS,
        "trending_prior": rules.TRENDING_PRIOR,
        "chance_deviations": rules.CHANCE_DEVIATIONS,
    }


@register.filter
def weeks_of(days: list[date]) -> str:
    """The weeks starting on these days, as "the weeks of May 30 and Jun 6"."""
    names = [format_date(day, "M j") for day in days]
    if len(names) < 2:
        return f"the week of {names[0]}" if names else ""
    return f"the weeks of {', '.join(names[:-1])} and {names[-1]}"
