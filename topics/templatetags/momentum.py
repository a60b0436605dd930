from __future__ import annotations

from django import template

from topics.momentum import WINDOW_WEEKS
from topics.momentum import Momentum

register = template.Library()

WIDTH = 320
HEIGHT = 80
GAP = 3


@register.inclusion_tag("topics/momentum_chart.html")
def momentum_chart(momentum: Momentum, link: str = "") -> dict[str, object]:
    """The weekly bar chart as inline SVG; the last four weeks stand out."""
    weeks = momentum.weeks
    peak = max((count for _, count in weeks), default=0) or 1
    bar = (WIDTH - GAP * (len(weeks) - 1)) / max(len(weeks), 1)
    bars = []
    for index, (start, count) in enumerate(weeks):
        height = round(HEIGHT * count / peak, 1)
        bars.append(
            {
                "x": round(index * (bar + GAP), 1),
                "y": round(HEIGHT - height, 1),
                "width": round(bar, 1),
                "height": max(height, 1 if count else 0),
                "start": start,
                "count": count,
                "recent": index >= len(weeks) - WINDOW_WEEKS,
            }
        )
    return {
        "bars": bars,
        "width": WIDTH,
        "height": HEIGHT,
        "link": link,
        "as_of": momentum.as_of,
    }


@register.inclusion_tag("topics/sparkline.html")
def sparkline(momentum: Momentum) -> dict[str, object]:
    """A small line of the weekly counts, for topic lists."""
    weekly = momentum.weekly
    peak = max(weekly, default=0) or 1
    step = 100 / max(len(weekly) - 1, 1)
    points = " ".join(
        f"{round(i * step, 1)},{round(20 - 18 * n / peak, 1)}"
        for i, n in enumerate(weekly)
    )
    return {"points": points, "momentum": momentum}
