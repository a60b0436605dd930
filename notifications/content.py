"""Shaping a planned digest (notifications.plan) into the one context that its
subject, text and HTML parts render: the papers, authors and topics loaded for
a batch of plans at once."""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db.models import Prefetch
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.http import urlencode

from notifications.plan import Plan
from notifications.plan import planned_authors
from notifications.plan import planned_searches
from papers.latex import latex_to_text
from papers.models import Author
from papers.models import Authorship
from papers.models import Paper
from papers.names import printed_authors
from topics.models import SavedSearch
from topics.models import Topic
from topics.momentum import Momentum

AUTHORS_SHOWN = 3
AUTHORS_SECTION = "By authors you follow"
AFFILIATIONS_SHOWN = 2
SUMMARY_CHARS = 200
# Titles in the inbox's preview line (Content.preview).
PREVIEW_TITLES = 3
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
# Where a sentence does not end though a capital follows: after an
# abbreviation or an initial ("e.g. Transformers", "the U.S. Census", "(J.
# Smith)").
NOT_AN_END = re.compile(
    r"(?:\b(?:e\.g|i\.e|cf|vs|etc|al|approx|abbrev|resp|Fig|Figs|Eq|Eqs|Sec|Ref|Refs"
    r"|No|Dr|Prof|St|Mr|Ms)\.|\b[A-Z]\.)$"
)
# A structured abstract's heading ("Background. …"): not its first sentence.
HEADING = re.compile(
    r"^(?:Background|Context|Objectives?|Purpose|Aims?|Motivation|Introduction"
    r"|Summary|Abstract)\s*[.:]\s+(?=[A-Z])"
)


@dataclass
class Entry:
    paper: Paper
    authors: list[str]
    more_authors: int
    affiliations: list[str]
    summary: str
    also_in: list[Topic]
    # The followed authors who wrote it: why it is here (or here too).
    by_followed: list[Author]
    # The reader's saved searches that match it, besides its section's.
    matches: list[SavedSearch]


@dataclass
class Section:
    """A followed topic's new papers; or, with no topic, those of followed
    authors that no topic section holds, or a saved search's that no section
    before holds."""

    topic: Topic | None
    momentum: Momentum | None
    entries: list[Entry]
    more: int
    more_url: str
    search: SavedSearch | None = None
    # In the order of the reader's For you model, best first (else newest).
    ranked: bool = False

    @property
    def title(self) -> str:
        if self.search is not None:
            return f"Matching your search \u201c{self.search.name}\u201d"
        return self.topic.name if self.topic else AUTHORS_SECTION


@dataclass
class Content:
    """A digest ready to render; `sections` is empty when there is nothing new."""

    since: date
    sections: list[Section]

    @property
    def shown(self) -> list[Section]:
        """The sections that show papers."""
        return [section for section in self.sections if section.entries]

    @property
    def unshown(self) -> list[Section]:
        """The sections with new papers the cap left no room for: past it,
        sections share the slots one each, earlier sections first."""
        return [section for section in self.sections if not section.entries]

    @property
    def preview(self) -> str:
        """The first papers' titles: the line mail apps show beside the
        subject, which would otherwise be the header's boilerplate."""
        titles = [
            " ".join(latex_to_text(entry.paper.title).split())
            for section in self.shown
            for entry in section.entries[:PREVIEW_TITLES]
        ][:PREVIEW_TITLES]
        return " · ".join(titles)

    @property
    def left_out(self) -> list[date]:
        """The weeks not fully harvested, which the momentum lines leave out:
        the corpus's, the same in every section, so said once."""
        for section in self.shown:
            momentum = section.momentum
            if momentum is not None and momentum.comparable and momentum.left_out:
                return momentum.left_out
        return []

    @property
    def paper_count(self) -> int:
        """The papers it shows."""
        return sum(len(section.entries) for section in self.sections)

    @property
    def new_count(self) -> int:
        """Every new paper: those it shows and those past its cap ("and N more")."""
        return self.paper_count + sum(section.more for section in self.sections)

    @property
    def about(self) -> str:
        """What its papers are, for the subject: 'in Agents and 2 more topics,
        by authors you follow and matching your search "Engines"'."""
        topics = [section.topic for section in self.sections if section.topic]
        searches = [section.search for section in self.sections if section.search]
        parts = []
        if topics:
            more = len(topics) - 1
            also = f" and {more} more topic{pluralize(more)}" if more else ""
            parts.append(f"in {topics[0].name}{also}")
        if self.has_authors:
            parts.append("by authors you follow")
        if len(searches) == 1:
            parts.append(f'matching your search "{searches[0].name}"')
        elif searches:
            parts.append(f"matching {len(searches)} of your saved searches")
        return listed(parts)

    @property
    def sources(self) -> str:
        """Where its papers come from, for its first line: 'in the topics and
        by the authors you follow and matching your saved searches'."""
        followed = listed(
            [
                "in the topics" if self.has_topics else "",
                "by the authors" if self.has_authors else "",
            ]
        )
        return listed(
            [
                followed and f"{followed} you follow",
                "matching your saved searches" if self.has_searches else "",
            ]
        )

    @property
    def reasons(self) -> str:
        """Why the reader gets it, for its foot: 'follow these topics and
        authors and saved these searches'."""
        followed = listed(
            [
                "topics" if self.has_topics else "",
                "authors" if self.has_authors else "",
            ]
        )
        return listed(
            [
                followed and f"follow these {followed}",
                "saved these searches" if self.has_searches else "",
            ]
        )

    @property
    def has_topics(self) -> bool:
        return any(section.topic is not None for section in self.sections)

    @property
    def has_authors(self) -> bool:
        """Whether it holds a section of followed authors' papers."""
        return any(
            section.topic is None and section.search is None
            for section in self.sections
        )

    @property
    def ranked(self) -> bool:
        """Whether the reader's model ordered its sections."""
        return any(section.ranked for section in self.sections)

    @property
    def has_searches(self) -> bool:
        """Whether it holds a section of a saved search's papers."""
        return any(section.search is not None for section in self.sections)


def listed(parts: list[str]) -> str:
    """'a', 'a and b', 'a, b and c', of the parts that are not empty."""
    parts = [part for part in parts if part]
    return " and ".join(filter(None, [", ".join(parts[:-1]), *parts[-1:]]))


def shape_digests(plans: Iterable[Plan], site_url: str) -> list[Content]:
    """Each plan's papers, topics, followed authors and saved searches, loaded
    for all plans at once (seven queries)."""
    plans = list(plans)
    entries = [
        entry
        for plan in plans
        for section in plan.sections
        for entry in section["papers"]
    ]
    paper_ids = {entry[0] for entry in entries}
    topic_ids = {
        section["topic"]
        for plan in plans
        for section in plan.sections
        if section["topic"] is not None
    } | {other for entry in entries for other in entry[1]}
    author_ids = {pk for entry in entries for pk in planned_authors(entry)}
    search_ids = {pk for entry in entries for pk in planned_searches(entry)} | {
        section["search"]
        for plan in plans
        for section in plan.sections
        if section.get("search") is not None
    }
    papers = _papers(paper_ids) if paper_ids else {}
    topics = (
        Topic.objects.select_related("momentum").in_bulk(topic_ids) if topic_ids else {}
    )
    authors = Author.objects.in_bulk(author_ids) if author_ids else {}
    searches = SavedSearch.objects.in_bulk(search_ids) if search_ids else {}
    return [_shape(plan, papers, topics, authors, searches, site_url) for plan in plans]


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
            "withdrawn",
        )
        .prefetch_related(
            Prefetch("authorships", queryset=first_authors, to_attr="first_authorships")
        )
        .in_bulk(paper_ids)
    )


def _shape(
    plan: Plan,
    papers: Mapping[int, Paper],
    topics: dict[int, Topic],
    authors: Mapping[int, Author],
    searches: Mapping[int, SavedSearch],
    site_url: str,
) -> Content:
    sections = []
    for planned in plan.sections:
        topic = topics.get(planned["topic"]) if planned["topic"] is not None else None
        search_id = planned.get("search")
        search = searches.get(search_id) if search_id is not None else None
        entries = [
            _entry(
                papers[entry[0]],
                [topics[t] for t in entry[1] if t in topics],
                [authors[a] for a in planned_authors(entry) if a in authors],
                [searches[s] for s in planned_searches(entry) if s in searches],
            )
            for entry in planned["papers"]
            # A paper or topic deleted since planning is left out.
            if entry[0] in papers
        ]
        gone = (topic is None and planned["topic"] is not None) or (
            search is None and search_id is not None
        )
        # A section the cap left no room for stays, as a line saying how many
        # papers it has and where (Content.unshown).
        if gone or not (entries or planned["more"]):
            continue
        stored = getattr(topic, "momentum", None)
        sections.append(
            Section(
                topic=topic,
                momentum=Momentum.stored(stored) if stored else None,
                entries=entries,
                more=planned["more"],
                more_url=_more_url(site_url, _since(planned, plan), topic, search),
                search=search,
                ranked=planned.get("ranked", False),
            )
        )
    # The first line's day: a late paper's, when one is before the period.
    first_day = min([plan.since, *(_since(planned, plan) for planned in plan.sections)])
    return Content(first_day, sections)


def _since(planned: dict[str, Any], plan: Plan) -> date:
    """A section's first day: its own, when it holds a paper announced before
    the period (harvested late); else the period's."""
    return date.fromisoformat(planned["since"]) if "since" in planned else plan.since


def _more_url(
    site_url: str, since: date, topic: Topic | None, search: SavedSearch | None
) -> str:
    """Where a section's papers past the cap are: the topic's papers since the
    digest's first day (a search of the topic, newest first: a digest may span
    more than the topic page's week), a search in words as a search of the
    days since; else the reader's feed, which holds followed authors' papers
    and a topic rule's matches."""
    if topic is not None:
        query = urlencode({"topic": topic.slug, "from": since.isoformat()})
        return f"{site_url}{reverse('search')}?{query}"
    if search is not None and search.syntax == SavedSearch.Syntax.SEARCH:
        query = urlencode({"q": search.query, "from": since.isoformat()})
        return f"{site_url}{reverse('search')}?{query}"
    return f"{site_url}/"


def _entry(
    paper: Paper,
    also_in: list[Topic],
    by_followed: list[Author],
    matches: list[SavedSearch],
) -> Entry:
    names = printed_authors(paper.author_names)
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
        by_followed=by_followed,
        matches=matches,
    )


def one_line(abstract: str, limit: int = SUMMARY_CHARS) -> str:
    """The abstract's first sentence on one line, cut at a word near `limit`."""
    first = first_sentence(" ".join(abstract.split()))
    if len(first) <= limit:
        return first
    return first[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def first_sentence(text: str) -> str:
    """The text's first sentence: past a structured abstract's heading, not
    ending at an abbreviation, an initial or inside parentheses."""
    text = HEADING.sub("", text, count=1)
    for end in SENTENCE_END.finditer(text):
        before = text[: end.start()]
        if NOT_AN_END.search(before) or before.count("(") > before.count(")"):
            continue
        return before
    return text
