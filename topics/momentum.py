"""How fast a topic grows, comparing like with like.

Weeks. Counts are of papers first announced (their first version) in seven-day
weeks ending on the latest announcement day harvested (the "as of" day), not
today: a stalled harvest must not read as every topic collapsing, and a
database loaded from older feeds still shows true figures for its period. The
chart shows CHART_WEEKS weeks (topics.coverage); the last four are "the last
four weeks", the four before them "the four weeks before".

Coverage. Whether a week was fully harvested is judged once per refresh for
every topic (topics.coverage).

Windows. Weeks not complete are left out of both windows. With fewer than
MIN_WEEKS complete weeks in either window there is not enough history to
compare, and the sentence says so (it still gives the recent count).

Like with like. The change is that of the topic's share of all new papers over
each window's complete weeks: share = the topic's papers ÷ all new papers, and
change = (share - share before) ÷ share before. Below FLOOR of the topic's
papers in those weeks of both windows together, there are too few to say.

Chance. A share moves from window to window by chance alone: had the topic
kept its share, its papers of both windows would split between them as all
new papers did (a binomial split), give or take a standard deviation. A change
more than CHANCE_DEVIATIONS of those from that split is beyond chance; the
sentence says when one is not, and only those beyond it are rising or falling
on the trending page.

Trending ranks by the same change with both shares shrunk toward the topic's
share over the two windows (see `Momentum.trend_score`), and only topics with
TRENDING_MIN_PAPERS papers in each window: a jump from 2 to 5 papers ranks
nowhere. The others have no score and are not trending.

Figures are computed for all topics with three queries (tags per day, papers
per day, ingest runs) and stored in TopicMomentum, which pages read in O(1);
`refresh_momentum()` runs after every ingest run and re-tag, and for one topic
after its model's training (curator decisions) and its judge's verdicts. It
also stores how many papers each pair of topics shares (TopicRelation: related
topics).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from datetime import timedelta
from functools import cached_property
from math import sqrt
from typing import NamedTuple
from typing import cast

from django.db import transaction
from django.db.models import Count
from django.db.models import F
from django.db.models import Max
from django.db.models import Q
from django.utils import timezone

from papers.models import Paper
from papers.versions import TRENDING
from papers.versions import content_changed
from topics.coverage import bucket
from topics.coverage import chart_start
from topics.coverage import corpus_coverage
from topics.models import PaperTopic
from topics.models import Topic
from topics.models import TopicMomentum
from topics.models import TopicRelation

WINDOW_WEEKS = 4
# Each window needs two complete weeks: one week alone swings with holidays
# and conference deadlines.
MIN_WEEKS = 2
# Below this many of the topic's papers in both windows, a percentage says nothing.
FLOOR = 10
# Two standard deviations: chance alone moves a share this far about one time
# in twenty.
CHANCE_DEVIATIONS = 2.0
# Trending needs this many of the topic's papers in each window...
TRENDING_MIN_PAPERS = 10
# ...and ranks by the change with this many papers added to each window at the
# topic's overall share: 10 -> 20 papers (+100%) ranks as +50%, 100 -> 200 as +91%.
TRENDING_PRIOR = 10


class Week(NamedTuple):
    start: date  # its first day
    papers: int  # the topic's papers first announced in it
    total: int  # all papers first announced in it
    complete: bool  # fully harvested


@dataclass(frozen=True)
class Window:
    """One of the two four-week windows, counted over its complete weeks."""

    first: date
    last: date
    weeks: int  # complete weeks in it
    papers: int  # the topic's papers in those weeks
    total: int  # all new papers in those weeks

    @property
    def share(self) -> float | None:
        """Percent of all new papers that are the topic's; None without any."""
        return 100.0 * self.papers / self.total if self.total else None


@dataclass(frozen=True)
class Momentum:
    as_of: date
    weekly: tuple[int, ...]  # the topic's papers, oldest first; the last ends as_of
    corpus_weekly: tuple[int, ...]  # all new papers, per week
    complete: tuple[bool, ...]  # whether each week was fully harvested

    @classmethod
    def stored(cls, row: TopicMomentum) -> Momentum:
        weeks = len(row.weekly)
        # A row stored before coverage was judged has no flags: not complete.
        corpus = [*row.corpus_weekly, *[0] * weeks][:weeks]
        complete = [*row.complete, *[False] * weeks][:weeks]
        return cls(row.as_of, tuple(row.weekly), tuple(corpus), tuple(complete))

    @property
    def recent(self) -> int:
        """The topic's papers in the last four weeks, harvested fully or not."""
        return sum(self.weekly[-WINDOW_WEEKS:])

    @property
    def previous(self) -> int:
        return sum(self.weekly[-2 * WINDOW_WEEKS : -WINDOW_WEEKS])

    @property
    def all_recent(self) -> int:
        return sum(self.corpus_weekly[-WINDOW_WEEKS:])

    @cached_property
    def weeks(self) -> list[Week]:
        """Each chart week, oldest first."""
        first = self.as_of - timedelta(days=7 * len(self.weekly) - 1)
        return [
            Week(first + timedelta(days=7 * i), *figures)
            for i, figures in enumerate(
                zip(self.weekly, self.corpus_weekly, self.complete, strict=True)
            )
        ]

    def _window(self, weeks: list[Week]) -> Window:
        counted = [week for week in weeks if week.complete]
        return Window(
            first=weeks[0].start,
            last=weeks[-1].start + timedelta(days=6),
            weeks=len(counted),
            papers=sum(week.papers for week in counted),
            total=sum(week.total for week in counted),
        )

    @cached_property
    def recent_window(self) -> Window:
        return self._window(self.weeks[-WINDOW_WEEKS:])

    @cached_property
    def previous_window(self) -> Window:
        return self._window(self.weeks[-2 * WINDOW_WEEKS : -WINDOW_WEEKS])

    @property
    def left_out(self) -> list[date]:
        """First days of the weeks of both windows left out as not complete."""
        return [w.start for w in self.weeks[-2 * WINDOW_WEEKS :] if not w.complete]

    @property
    def comparable(self) -> bool:
        """Both windows have enough complete weeks to compare."""
        return min(self.recent_window.weeks, self.previous_window.weeks) >= MIN_WEEKS

    @property
    def enough(self) -> bool:
        """Enough history and papers for the change to mean something."""
        compared = self.recent_window.papers + self.previous_window.papers
        return self.comparable and compared >= FLOOR

    @property
    def share(self) -> float | None:
        """Percent of all new papers in the last four weeks' complete weeks."""
        return self.recent_window.share

    @property
    def previous_share(self) -> float | None:
        return self.previous_window.share

    @property
    def change(self) -> float | None:
        """Percent change of the share on the four weeks before; None when the
        windows cannot be compared or the topic had no share before."""
        before = self.previous_share
        if not self.comparable or not before or self.share is None:
            return None
        return 100.0 * (self.share - before) / before

    @property
    def change_size(self) -> float | None:
        """The change without its sign, for "up 12%" and "down 12%"."""
        return None if self.change is None else abs(self.change)

    @property
    def direction(self) -> str | None:
        """ "up", "down", "flat" (under half a percent), "new" (no papers
        before) or None when there is too little to say."""
        if not self.enough:
            return None
        if self.change is None:
            return "new"
        # As the sentence rounds it: "up 1%" from half a percent.
        if abs(self.change) < 0.5:
            return "flat"
        return "up" if self.change > 0 else "down"

    @property
    def chance_split(self) -> tuple[float, float] | None:
        """How many of the topic's papers of both windows the last four weeks
        would hold had it kept its share, and the standard deviation of that
        number (a binomial split); None when no change is given."""
        if not self.enough or self.change is None:
            return None
        now, before = self.recent_window, self.previous_window
        papers = now.papers + before.papers
        recent_part = now.total / (now.total + before.total)
        return papers * recent_part, sqrt(papers * recent_part * (1 - recent_part))

    @property
    def deviations(self) -> float | None:
        """How many standard deviations the last four weeks' papers lie from
        the chance split (signed); None when no change is given."""
        if (split := self.chance_split) is None:
            return None
        expected, spread = split
        return (self.recent_window.papers - expected) / spread

    @property
    def beyond_chance(self) -> bool | None:
        """Whether the change is larger than chance alone would make at these
        numbers; None when no change is given."""
        deviations = self.deviations
        return None if deviations is None else abs(deviations) >= CHANCE_DEVIATIONS

    @property
    def trend(self) -> str | None:
        """ "up" or "down" beyond chance, "steady" within it, for the ranked
        (a trend_score); None for the others."""
        if self.trend_score is None:
            return None
        if not self.beyond_chance:
            return "steady"
        return "up" if self.change > 0 else "down"  # type: ignore[operator]

    @property
    def trend_score(self) -> float | None:
        """The change in percent with both shares shrunk toward the topic's
        share over the two windows, as if TRENDING_PRIOR more of its papers came
        in each window at that share; None below the trending floor."""
        now, before = self.recent_window, self.previous_window
        if not self.comparable or min(now.papers, before.papers) < TRENDING_MIN_PAPERS:
            return None
        overall = (now.papers + before.papers) / (now.total + before.total)
        prior_total = TRENDING_PRIOR / overall
        shrunk_now = (now.papers + TRENDING_PRIOR) / (now.total + prior_total)
        shrunk_before = (before.papers + TRENDING_PRIOR) / (before.total + prior_total)
        return 100.0 * (shrunk_now / shrunk_before - 1)


def latest_announcement_day() -> date | None:
    return cast(
        "date | None", Paper.objects.aggregate(day=Max("first_announced"))["day"]
    )


def compute_all(topic_ids: Sequence[int] | None = None) -> dict[int, Momentum]:
    """Momentum of every topic (or of those given), from one aggregate query for
    the topics' papers and the corpus's coverage."""
    as_of = latest_announcement_day()
    if as_of is None:
        return {}
    coverage = corpus_coverage(as_of)
    tags = PaperTopic.objects.filter(
        paper__first_announced__range=(chart_start(as_of), as_of)
    )
    if topic_ids is not None:
        tags = tags.filter(topic_id__in=topic_ids)
    per_topic: dict[int, dict[date, int]] = defaultdict(dict)
    for topic_id, day, count in (
        tags.order_by()
        .values_list("topic_id", "paper__first_announced")
        .annotate(n=Count("id"))
    ):
        per_topic[topic_id][day] = count
    ids = (
        topic_ids
        if topic_ids is not None
        else Topic.objects.values_list("pk", flat=True)
    )
    return {
        topic_id: Momentum(
            as_of,
            bucket(per_topic.get(topic_id, {}), as_of),
            coverage.weekly,
            coverage.complete,
        )
        for topic_id in ids
    }


# What a page shows of a topic's stored momentum.
FIGURES = ("as_of", "weekly", "corpus_weekly", "complete", "trend_score")


@transaction.atomic
def refresh_momentum(topic_ids: Sequence[int] | None = None) -> int:
    """Recompute and store every topic's momentum (or that of the topics given)
    and the papers each pair of topics (with one of those) shares; idempotent.
    Moves on the pages of the topics whose figures changed (and trending, if
    any did) and the related topics of those whose shared counts changed.
    Returns topics stored."""
    figures = compute_all(topic_ids)
    now = timezone.now()
    rows = [
        TopicMomentum(
            topic_id=topic_id,
            computed_at=now,
            as_of=m.as_of,
            weekly=list(m.weekly),
            corpus_weekly=list(m.corpus_weekly),
            complete=list(m.complete),
            trend_score=m.trend_score,
        )
        for topic_id, m in figures.items()
    ]
    stored = {
        row[0]: row[1:]
        for row in TopicMomentum.objects.filter(topic_id__in=list(figures)).values_list(
            "topic_id", *FIGURES
        )
    }
    moved = {
        row.topic_id
        for row in rows
        if stored.get(row.topic_id) != tuple(getattr(row, name) for name in FIGURES)
    }
    TopicMomentum.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["topic"],
        update_fields=[*FIGURES, "computed_at"],
    )
    related = refresh_relations(topic_ids)
    if moved or related:
        slug_of = dict(
            Topic.objects.filter(pk__in=moved | related).values_list("pk", "slug")
        )
        content_changed(
            topics=[slug_of[pk] for pk in moved if pk in slug_of],
            related=[slug_of[pk] for pk in related if pk in slug_of],
            lists=[TRENDING] if moved else [],
        )
    return len(rows)


def refresh_relations(topic_ids: Sequence[int] | None = None) -> set[int]:
    """Store how many papers each pair of topics (with one of `topic_ids`, if
    given) shares (TopicRelation), so that pages never count them; returns the
    topics whose counts changed."""
    pairs = PaperTopic.objects.annotate(other=F("paper__paper_topics__topic")).exclude(
        other=F("topic")
    )
    relations = TopicRelation.objects.all()
    if topic_ids is not None:
        pairs = pairs.filter(Q(topic__in=topic_ids) | Q(other__in=topic_ids))
        relations = relations.filter(Q(topic__in=topic_ids) | Q(other__in=topic_ids))
    wanted = {
        (topic, other): shared
        for topic, other, shared in pairs.values_list("topic", "other")
        .annotate(shared=Count("*"))
        .order_by()
    }
    stored = {
        (topic, other): (pk, shared)
        for pk, topic, other, shared in relations.values_list(
            "pk", "topic", "other", "shared"
        )
    }
    gone = [pk for pair, (pk, _) in stored.items() if pair not in wanted]
    changed = [
        TopicRelation(topic_id=topic, other_id=other, shared=shared)
        for (topic, other), shared in wanted.items()
        if stored.get((topic, other), (None, None))[1] != shared
    ]
    TopicRelation.objects.filter(pk__in=gone).delete()
    TopicRelation.objects.bulk_create(
        changed,
        update_conflicts=True,
        unique_fields=["topic", "other"],
        update_fields=["shared"],
    )
    removed = set(gone)
    moved = {relation.topic_id for relation in changed}
    return moved | {pair[0] for pair, (pk, _) in stored.items() if pk in removed}
