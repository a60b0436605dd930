"""Paper search: PostgreSQL full-text search, with a substring fallback on SQLite.

Paper text is untrusted, so highlights are built from plain text: the database (or
Python) marks matches with private-use sentinel characters, the result is
HTML-escaped, and only then do the sentinels become <mark> tags.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from functools import reduce
from operator import or_

from django.contrib.postgres.search import SearchHeadline
from django.contrib.postgres.search import SearchQuery
from django.contrib.postgres.search import SearchRank
from django.db import connection
from django.db.models import F
from django.db.models import Q
from django.db.models import QuerySet
from django.utils.html import escape
from django.utils.safestring import SafeString
from django.utils.safestring import mark_safe

from papers.models import Paper
from papers.query import with_listing_data

MAX_QUERY_LENGTH = 200
CONFIG = "english"
# Unicode private-use characters: they never come out of ts_headline unless we ask.
START = "\ue000"
STOP = "\ue001"
MARKED = re.compile(f"{START}(.*?){STOP}", re.DOTALL)
SNIPPET_WORDS = 40
FRAGMENT_DELIMITER = " … "
# websearch syntax, as far as the fallback follows it: "a phrase", -excluded, or.
TERM = re.compile(r'(-?)"([^"]*)"?|(-?)(\S+)')
SEARCH_FIELDS = ("title", "abstract", "author_names")


def search_papers(
    text: str,
    *,
    topic: str | None = None,
    category: str | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
) -> QuerySet[Paper]:
    """Papers matching the text and filters, best first; newest first with no text.

    Each paper carries `title_marked` and `snippet_marked` (sentinel-marked
    headlines) on PostgreSQL; pass the papers shown to `highlight` before display.
    """
    papers = Paper.objects.all()
    if topic:
        papers = papers.filter(paper_topics__topic__slug=topic)
    if category:
        papers = papers.filter(categories__code=category)
    if date_from:
        papers = papers.filter(first_announced__gte=date_from)
    if date_to:
        papers = papers.filter(first_announced__lte=date_to)
    text = text.strip()
    if not text:
        return with_listing_data(papers.order_by("-first_announced", "-id"))
    if connection.vendor == "postgresql":
        return with_listing_data(_full_text(papers, text))
    return with_listing_data(_substring(papers, text))


def _full_text(papers: QuerySet[Paper], text: str) -> QuerySet[Paper]:
    query = SearchQuery(text, search_type="websearch", config=CONFIG)
    # Author names are indexed unstemmed ('simple', see migration 0002), where the
    # English query would look for "jone" instead of "jones": ask in both forms.
    either = query | SearchQuery(text, search_type="websearch", config="simple")
    papers = papers.filter(search_vector=either)
    # The unstemmed form of "-robots" misses the title's stemmed "robot", so
    # exclusions are applied again, stemmed.
    for term in parse_terms(text)[1]:
        papers = papers.exclude(
            search_vector=SearchQuery(term, search_type="phrase", config=CONFIG)
        )
    return papers.annotate(
        rank=SearchRank(F("search_vector"), either),
        # PostgreSQL defers costly output functions past ORDER BY ... LIMIT,
        # so only the rows of the page pay for their headlines.
        title_marked=SearchHeadline(
            "title",
            query,
            config=CONFIG,
            start_sel=START,
            stop_sel=STOP,
            highlight_all=True,
        ),
        snippet_marked=SearchHeadline(
            "abstract",
            query,
            config=CONFIG,
            start_sel=START,
            stop_sel=STOP,
            max_words=SNIPPET_WORDS,
            min_words=SNIPPET_WORDS // 2,
            max_fragments=2,
            fragment_delimiter=FRAGMENT_DELIMITER,
        ),
    ).order_by("-rank", "-first_announced", "-id")


def _substring(papers: QuerySet[Paper], text: str) -> QuerySet[Paper]:
    included, excluded = parse_terms(text)
    for term in included:
        papers = papers.filter(_contains(term))
    if excluded:
        papers = papers.exclude(reduce(or_, map(_contains, excluded)))
    elif not included:
        papers = papers.none()
    return papers.order_by("-first_announced", "-id")


def _contains(term: str) -> Q:
    return reduce(or_, (Q(**{f"{field}__icontains": term}) for field in SEARCH_FIELDS))


def parse_terms(text: str) -> tuple[list[str], list[str]]:
    """The words and "quoted phrases" of a query, split into included and excluded."""
    included: list[str] = []
    excluded: list[str] = []
    for match in TERM.finditer(text):
        minus = match.group(1) or match.group(3)
        term = " ".join((match.group(2) or match.group(4) or "").split())
        if not term or term.lower() == "or" or term == "-":
            continue
        (excluded if minus else included).append(term)
    return included, excluded


def highlight(papers: Iterable[Paper], text: str) -> list[Paper]:
    """The papers, each with safe `highlighted_title` and `snippet` HTML when `text`."""
    papers = list(papers)
    if not text.strip():
        return papers
    terms, _ = parse_terms(text)
    for paper in papers:
        marked_title = getattr(paper, "title_marked", None)
        if marked_title is None:
            marked_title = mark_terms(paper.title, terms)
        marked_snippet = getattr(paper, "snippet_marked", None)
        if marked_snippet is None:
            marked_snippet = mark_terms(excerpt(paper.abstract, terms), terms)
        paper.highlighted_title = to_html(marked_title)  # type: ignore[attr-defined]
        paper.snippet = to_html(marked_snippet)  # type: ignore[attr-defined]
    return papers


def mark_terms(text: str, terms: list[str]) -> str:
    """The text with every case-insensitive occurrence of a term sentinel-marked."""
    text = text.replace(START, "").replace(STOP, "")
    patterns = [
        r"\s+".join(map(re.escape, term.split()))
        for term in sorted(terms, key=len, reverse=True)
    ]
    if not patterns:
        return text
    return re.sub(
        "|".join(patterns),
        lambda match: f"{START}{match.group(0)}{STOP}",
        text,
        flags=re.IGNORECASE,
    )


def excerpt(text: str, terms: list[str], words: int = SNIPPET_WORDS) -> str:
    """About `words` words of the text, starting a little before the first term."""
    lowered = text.lower()
    found = [lowered.find(term.lower()) for term in terms]
    first = min((position for position in found if position >= 0), default=0)
    all_words = text.split()
    start = max(len(text[:first].split()) - words // 4, 0)
    shown = " ".join(all_words[start : start + words])
    prefix = "… " if start > 0 else ""
    suffix = " …" if start + words < len(all_words) else ""
    return f"{prefix}{shown}{suffix}"


def to_html(marked: str) -> SafeString:
    """Escape sentinel-marked text, then turn the marked parts into <mark> elements."""
    # escape() leaves the sentinels alone and can never produce one, so every tag
    # in the result is one of ours; stray, unpaired sentinels are dropped.
    html = MARKED.sub(r"<mark>\1</mark>", escape(marked))
    return mark_safe(html.replace(START, "").replace(STOP, ""))
