"""Shaping a planned digest (notifications.plan) into the one context that its
subject, text and HTML parts render: the papers, authors and topics loaded for
a batch of plans at once."""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from django.db.models import Prefetch
from django.utils.http import urlencode

from notifications.plan import Plan
from papers.latex import latex_to_text
from papers.models import Authorship
from papers.models import Paper
from topics.models import Topic
from topics.momentum import Momentum

AUTHORS_SHOWN = 3
AFFILIATIONS_SHOWN = 2
SUMMARY_CHARS = 200
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


@dataclass
class Entry:
    paper: Paper
    authors: list[str]
    more_authors: int
    affiliations: list[str]
    summary: str
    also_in: list[Topic]


@dataclass
class Section:
    topic: Topic
    momentum: Momentum | None
    entries: list[Entry]
    more: int
    more_url: str


@dataclass
class Content:
    """A digest ready to render; `sections` is empty when there is nothing new."""

    since: date
    sections: list[Section]

    @property
    def paper_count(self) -> int:
        return sum(len(section.entries) for section in self.sections)

    @property
    def topic_count(self) -> int:
        return len(self.sections)


def shape_digests(plans: Iterable[Plan], site_url: str) -> list[Content]:
    """Each plan's papers and topics, loaded for all plans at once (five queries)."""
    plans = list(plans)
    paper_ids = {
        paper_id
        for plan in plans
        for section in plan.sections
        for paper_id, _ in section["papers"]
    }
    topic_ids = {
        topic_id
        for plan in plans
        for section in plan.sections
        for topic_id in [section["topic"]]
        + [other for _, others in section["papers"] for other in others]
    }
    papers = _papers(paper_ids) if paper_ids else {}
    topics = (
        Topic.objects.select_related("momentum").in_bulk(topic_ids) if topic_ids else {}
    )
    return [_shape(plan, papers, topics, site_url) for plan in plans]


def _papers(paper_ids: set[int]) -> Mapping[int, Paper]:
    first_authors = (
        Authorship.objects.filter(position__lt=AUTHORS_SHOWN)
        .order_by("position")
        .prefetch_related("affiliations")
    )
    return (
        Paper.objects.only(
            "arxiv_id",
            "version",
            "title",
            "abstract",
            "author_names",
            "first_announced",
        )
        .prefetch_related(
            Prefetch("authorships", queryset=first_authors, to_attr="first_authorships")
        )
        .in_bulk(paper_ids)
    )


def _shape(
    plan: Plan, papers: Mapping[int, Paper], topics: dict[int, Topic], site_url: str
) -> Content:
    sections = []
    for planned in plan.sections:
        topic = topics.get(planned["topic"])
        entries = [
            _entry(papers[paper_id], [topics[t] for t in others if t in topics])
            for paper_id, others in planned["papers"]
            # A paper or topic deleted since planning is left out.
            if paper_id in papers
        ]
        if topic is None or not entries:
            continue
        stored = getattr(topic, "momentum", None)
        query = urlencode({"week": plan.since.isoformat()})
        sections.append(
            Section(
                topic=topic,
                momentum=Momentum.stored(stored) if stored else None,
                entries=entries,
                more=planned["more"],
                more_url=f"{site_url}{topic.get_absolute_url()}?{query}",
            )
        )
    return Content(plan.since, sections)


def _entry(paper: Paper, also_in: list[Topic]) -> Entry:
    names = [name for name in paper.author_names.split(", ") if name]
    affiliations: list[str] = []
    for authorship in paper.first_authorships:  # type: ignore[attr-defined]
        for affiliation in authorship.affiliations.all():
            if affiliation.name not in affiliations:
                affiliations.append(affiliation.name)
    return Entry(
        paper=paper,
        authors=names[:AUTHORS_SHOWN],
        more_authors=max(len(names) - AUTHORS_SHOWN, 0),
        affiliations=affiliations[:AFFILIATIONS_SHOWN],
        summary=one_line(latex_to_text(paper.abstract)),
        also_in=also_in,
    )


def one_line(abstract: str, limit: int = SUMMARY_CHARS) -> str:
    """The abstract's first sentence on one line, cut at a word near `limit`."""
    text = " ".join(abstract.split())
    first = SENTENCE_END.split(text, maxsplit=1)[0]
    if len(first) <= limit:
        return first
    return first[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"
