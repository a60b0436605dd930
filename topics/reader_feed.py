"""A reader's feed, composed in one place: what they follow (topics and
authors), their saved searches and whether they have a For you model
(topics.recommend), the papers those bring, and why each is there. The home
feed and the private Atom feed (topics.feeds) read it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections import defaultdict
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest

from papers.authors import followed_authors
from papers.models import Authorship
from papers.models import Paper
from papers.pagecache import fragments_and_versions
from papers.search import NEWEST_FIRST
from papers.versions import NAMES
from papers.versions import SEARCH
from papers.versions import reader_key
from papers.versions import topic_key
from topics.models import PaperTopic
from topics.models import SavedSearch
from topics.models import SavedSearchMatch
from topics.query import followed_topics
from topics.recommend import DEFAULT_AT
from topics.recommend import positives_learnt

# How many of its newest papers the home feed pages through (a search ranks
# as many: papers.search.CANDIDATES); older ones are on each topic's page.
FEED_CANDIDATES = 1000


@dataclass(frozen=True)
class Following:
    """What a reader's feed is made of: (id, slug) of the active topics they
    follow, by slug, (id, name) of the authors, in the order followed, and
    (id, name, revision) of their saved searches, oldest first; and how many
    paused topics they follow."""

    topics: tuple[tuple[int, str], ...] = ()
    authors: tuple[tuple[int, str], ...] = ()
    searches: tuple[tuple[int, str, int], ...] = ()
    # The positives the reader's For you model learnt from (0: no model):
    # theirs alone, so not part of what a shared render is keyed by.
    for_you: int = 0
    # How many topics they follow the curators paused: a feed of none says so.
    paused: int = 0

    @property
    def anything(self) -> bool:
        return bool(self.topics or self.authors or self.searches)

    @property
    def for_you_first(self) -> bool:
        """For you is the feed's first order once the model learnt enough."""
        return self.for_you >= DEFAULT_AT

    @property
    def variant(self) -> str:
        """What a render of this feed is shared under: every reader who
        follows the same topics and authors sees the same page. Saved searches
        are a reader's own: a feed with them is theirs alone, rendered again
        when a search's matches or name change (its revision)."""
        slugs = " ".join(slug for _, slug in self.topics)
        authors = " ".join(str(pk) for pk, _ in self.authors)
        variant = f"topics:{slugs}|authors:{authors}"
        if self.paused and not self.anything:
            variant += f"|paused:{self.paused}"
        if self.searches:
            searches = " ".join(f"{pk}.{rev}" for pk, _, rev in self.searches)
            variant += f"|searches:{searches}"
        return variant


def following(user_id: Any) -> Following:
    """What the reader follows, their saved searches and whether they have a
    model (four queries)."""
    searches = SavedSearch.objects.filter(user_id=user_id).values_list(
        "pk", "name", "revision"
    )
    topics, paused = followed_topics(user_id)
    return Following(
        tuple(topics),
        tuple(followed_authors(user_id)),
        tuple(searches.order_by("created_at", "pk")),
        for_you=positives_learnt(user_id),
        paused=paused,
    )


def cached_following(
    user_id: Any, *, reader_of: HttpRequest | None = None
) -> Following:
    """What the reader follows, cached until they follow or unfollow, change a
    saved search or its matches change, their model is trained, or a topic is
    renamed or deactivated. With `reader_of`, that request's user is read in
    the same round trip. This process keeps it too (`kept_following`)."""
    key = f"following:{user_id}"
    found, versions = fragments_and_versions(
        {key: (reader_key(user_id), NAMES)},
        lambda missing: {key: following(user_id)},
        reader_of=reader_of,
    )
    if None not in versions.values():
        with _kept_lock:
            _kept[user_id] = (found[key], versions)
            _kept.move_to_end(user_id)
            while len(_kept) > KEPT_FOLLOWINGS:
                _kept.popitem(last=False)
    return found[key]


# Each web process keeps what the readers it served last follow, with the
# versions it was read under: the home feed checks those in its page's round
# trip (cached_page's `assumes`) instead of reading it first in one of its own.
KEPT_FOLLOWINGS = 1024
_kept: OrderedDict[Any, tuple[Following, dict[str, int | None]]] = OrderedDict()
_kept_lock = threading.Lock()


def kept_following(user_id: Any) -> tuple[Following, dict[str, int | None]] | None:
    """What this process last read the reader follows, and the versions it
    stands for (valid only while they do), if it read it."""
    with _kept_lock:
        return _kept.get(user_id)


def feed_scopes(followed: Following) -> list[str]:
    """What a render of this feed depends on: the followed topics, and when
    authors are followed or searches saved any paper (it may be theirs, or a
    matched paper's new version, which changes no match); topics' names."""
    scopes = [NAMES, *(topic_key(slug) for _, slug in followed.topics)]
    if followed.authors or followed.searches:
        scopes.append(SEARCH)
    return scopes


def newest_feed_papers(
    followed: Following,
    limit: int,
    *,
    starting: Callable[[QuerySet[Paper]], QuerySet[Paper]] | None = None,
) -> tuple[list[tuple[int, str]], bool]:
    """(id, arXiv id) of the `limit` newest papers of the followed topics, by
    the followed authors and matching the saved searches, each once, newest
    first (of those `starting` keeps: a cursor's), and whether there are more.

    Read as one UNION of what each source brings, the feed cost what it holds:
    a reader following 150 of 200 topics waited 1.9 s for a home page at
    100,000 papers (240,000 tags read for its count and again for its page).
    Each source alone is read newest first up to `limit`, which PostgreSQL
    stops early for a broad one; the newest of all of them are kept."""
    newest: dict[int, tuple[date | None, str]] = {}
    more = False
    for ids in _sources(followed):
        papers = Paper.objects.filter(pk__in=ids)
        if starting is not None:
            papers = starting(papers)
        rows = papers.order_by(*NEWEST_FIRST).values_list(
            "pk", "first_announced", "arxiv_id"
        )
        found = list(rows[: limit + 1])
        newest.update((pk, (day, arxiv_id)) for pk, day, arxiv_id in found[:limit])
        more = more or len(found) > limit
    # Newest first: papers without a day, then by day and id, as NEWEST_FIRST.
    order = sorted(
        newest,
        key=lambda pk: (newest[pk][0] is None, newest[pk][0] or date.min, pk),
        reverse=True,
    )
    return [(pk, newest[pk][1]) for pk in order[:limit]], more or len(order) > limit


def _sources(followed: Following) -> list[QuerySet]:
    """The ids of the papers each kind of thing followed brings."""
    sources: list[QuerySet] = []
    if followed.topics:
        topic_ids = [pk for pk, _ in followed.topics]
        sources.append(PaperTopic.objects.filter(topic__in=topic_ids))
    if followed.authors:
        author_ids = [pk for pk, _ in followed.authors]
        sources.append(Authorship.objects.filter(author__in=author_ids))
    if followed.searches:
        search_ids = [pk for pk, _, _ in followed.searches]
        sources.append(SavedSearchMatch.objects.filter(search__in=search_ids))
    return [source.order_by().values("paper_id") for source in sources]


def by_followed_authors(
    followed: Following, paper_ids: Iterable[int]
) -> dict[int, list[tuple[int, str]]]:
    """For each of these papers a followed author wrote, those authors (id,
    name) in the paper's order: why it is in the feed. One query, none when
    the reader follows no author."""
    if not followed.authors:
        return {}
    names = dict(followed.authors)
    rows = (
        Authorship.objects.filter(paper_id__in=list(paper_ids), author__in=names)
        .order_by("paper_id", "position")
        .values_list("paper_id", "author_id")
    )
    found: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for paper_id, author_id in rows:
        author = (author_id, names[author_id])
        if author not in found[paper_id]:  # a paper may print one name twice
            found[paper_id].append(author)
    return dict(found)


def by_saved_searches(
    followed: Following, paper_ids: Iterable[int]
) -> dict[int, list[str]]:
    """For each of these papers a saved search matches, the names of those
    searches, oldest search first: why it is in the feed. One query, none when
    the reader has no saved search."""
    if not followed.searches:
        return {}
    names = {pk: name for pk, name, _ in followed.searches}
    rows = SavedSearchMatch.objects.filter(
        paper_id__in=list(paper_ids), search__in=names
    ).values_list("paper_id", "search_id")
    found: dict[int, list[int]] = defaultdict(list)
    for paper_id, search_id in rows:
        found[paper_id].append(search_id)
    order = list(names)
    return {
        paper_id: [names[pk] for pk in sorted(ids, key=order.index)]
        for paper_id, ids in found.items()
    }
