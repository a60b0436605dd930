"""What pages show, by version: each part has a version in the cache, and
every change moves the versions of what it changed, nothing else.

Each topic has one (`topic:<slug>`: its page, papers, momentum), and so do its
follower count (`followers:<slug>`), its related topics (`related:<slug>`) and
which papers it holds (`members:<slug>`, what a paper page's related papers
read); each paper
(`paper:<arxiv id>`: its page and its rows) and its similar papers
(`similar:<arxiv id>`, moved by `similar_changed`); each reader's own state
(`reader:<id>`, see papers.slots); and the lists that span many:

- `latest`: the newest papers (the home page for visitors);
- `trending`: every topic's momentum (trending lists, sparklines);
- `topics`: the topic directory (descriptions, paper counts);
- `names`: topics' names and addresses, which every chip shows;
- `search`: any paper or tag, which search results may show;
- `harvest`: when the last harvest finished (a slot, see papers.slots).

Whatever changes what pages show calls `content_changed(topics=..., papers=...,
lists=...)` naming what it changed; once the transaction commits, those versions
move on and nothing else. A paper's change also moves the topics it was in (at
the call) and is in (at commit), and which papers they hold, search, the
directory, and `latest` when it is among the newest papers. Called with
nothing: everything changed. The writers of a reader's own state call
`reader_changed(...)`. The writers of what a paper's page shows from other
rows (its topics, names) also call `pages_changed(...)`, which dates it for the
sitemap.

Pages, fragments and values cached under these versions: papers.pagecache.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.apps import apps
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from core.api.caching import VERSION_KEY
from papers.models import PageDate
from papers.models import Paper

logger = logging.getLogger(__name__)

LATEST = "latest"
TRENDING = "trending"
TOPICS = "topics"
NAMES = "names"
SEARCH = "search"
HARVEST = "harvest"
# When the last harvest finished and the newest paper's day, cached apart
# (papers.slots fills them in); ":2" since the day was added to the value.
HARVEST_KEY = "pages:last-harvest:2"
# Moved by content_changed() with no arguments; every page depends on it.
EVERYTHING = "all"
LISTS = frozenset({LATEST, TRENDING, TOPICS, NAMES, SEARCH, HARVEST, EVERYTHING})
# Papers the home page lists; a change to one of them moves `latest`.
LATEST_SHOWN = 25
CHUNK = 5000


def topic_key(slug: str) -> str:
    return f"topic:{slug}"


def paper_key(arxiv_id: str) -> str:
    return f"paper:{arxiv_id}"


def related_key(slug: str) -> str:
    """Which topics a topic's page shows as related (curated, and sharing papers
    as the momentum refresh counted them): moved apart from the topic, so an
    edit of its text does not look them up again."""
    return f"related:{slug}"


def followers_key(slug: str) -> str:
    """A topic's follower count, which only its own page shows."""
    return f"followers:{slug}"


def similar_key(arxiv_id: str) -> str:
    """Which papers are similar to this one (topics.similar), which only its
    own page shows: moved without re-rendering its rows."""
    return f"similar:{arxiv_id}"


def reader_key(user_id: int) -> str:
    """One reader's own state, which slots show (papers.slots)."""
    return f"reader:{user_id}"


def members_key(slug: str) -> str:
    """Which papers a topic holds, without the rest of its page."""
    return f"members:{slug}"


def for_you_key(user_id: int) -> str:
    """One reader's For you order (their model's ranking), which their feed
    shows in that order: moved by a training or a scoring of their list, not by
    what moves their own state (reader_key)."""
    return f"for-you:{user_id}"


# CHANGES
# ------------------------------------------------------------------------------


def content_changed(
    *,
    topics: Iterable[Any] = (),
    papers: Iterable[int] = (),
    lists: Iterable[str] = (),
    followers: Iterable[Any] = (),
    related: Iterable[Any] = (),
) -> None:
    """Move on, once the current transaction commits, the versions of these
    topics (Topic or slug), papers (ids), lists, topics' follower counts and
    topics' related topics; with no argument, of everything. Papers also move
    the topics they are in now and at commit."""
    scopes = {topic_key(getattr(topic, "slug", topic)) for topic in topics}
    scopes |= {followers_key(getattr(topic, "slug", topic)) for topic in followers}
    scopes |= {related_key(getattr(topic, "slug", topic)) for topic in related}
    named = set(lists)
    assert named <= LISTS, f"unknown lists: {named - LISTS}"
    scopes |= named
    paper_ids = list(papers)
    if not scopes and not paper_ids:
        scopes = {EVERYTHING}
    if paper_ids:
        # The topics they are in before the change: they may be leaving them.
        scopes |= _topic_scopes(_topic_slugs(paper_ids))
    transaction.on_commit(lambda: _bump(scopes, paper_ids))


def pages_changed(papers: Iterable[int], topics: Iterable[int] = ()) -> None:
    """Date the pages of these papers (ids, read now) for what they show from
    other rows: their topics, why they are in them, the names of those topics
    and of their authors; and those of these topics (ids) whose lists of papers
    the change changed (a paper that left one is not found from the topic
    again). The sitemap's dates read them (papers.sitemaps, topics.sitemaps).
    In the caller's transaction, so the date commits, or not, with the change.
    Their cached pages move by content_changed, which the caller calls as well.

    Called last, once the rows that changed are written: every writer takes
    its locks in that order, so a curator's pin that dated a page and then
    waited for a tag a re-tag held, while the re-tag waited to date that page,
    cannot happen (PostgreSQL ended one of them)."""
    now = timezone.now()
    # In id order: two writers dating the same papers in one call each take
    # their rows in the same order, so one waits for the other, not each for
    # the other.
    paper_ids = sorted(set(papers) - _rows_written.get())
    for start in range(0, len(paper_ids), CHUNK):
        PageDate.objects.bulk_create(
            [
                PageDate(paper_id=pk, changed_at=now)
                for pk in paper_ids[start : start + CHUNK]
            ],
            update_conflicts=True,
            unique_fields=["paper"],
            update_fields=["changed_at"],
        )
    # Left alone where the papers' rows date them (ingest): its new papers
    # date their topics by joining (their tags' created_at).
    if _rows_written.get():
        return
    # After the papers' dates, in id order, as every writer: each topic's row
    # is shared by all its papers' writers, so it is taken last.
    # Topics live in the topics app, which builds on this one: named, not imported.
    topic_dates = apps.get_model("topics", "TopicDate")
    topic_dates.objects.bulk_create(
        [topic_dates(topic_id=pk, changed_at=now) for pk in sorted(set(topics))],
        update_conflicts=True,
        unique_fields=["topic"],
        update_fields=["changed_at"],
    )


@contextmanager
def rows_written(papers: Iterable[int]) -> Iterator[None]:
    """Within it, pages_changed leaves these papers (ids): their rows were
    written in this transaction, and their modified_at dates their pages. So
    ingest, which tags the papers it stores, never writes a PageDate: it holds
    those papers' rows and waits for tags that a re-tag holds while it dates
    pages, and a PageDate row held on each side would deadlock them."""
    token = _rows_written.set(frozenset(papers))
    try:
        yield
    finally:
        _rows_written.reset(token)


_rows_written: ContextVar[frozenset[int]] = ContextVar(
    "rows_written", default=frozenset()
)


def similar_changed(paper_ids: Iterable[int]) -> None:
    """Move on, once the current transaction commits, these papers' similar
    papers (their pages) and the API's content version; nothing else."""
    ids = list(paper_ids)
    if ids:
        transaction.on_commit(
            lambda: _set_versions(_similar_scopes(ids), {VERSION_KEY})
        )


def _similar_scopes(paper_ids: list[int]) -> set[str]:
    scopes: set[str] = set()
    for start in range(0, len(paper_ids), CHUNK):
        chunk = paper_ids[start : start + CHUNK]
        arxiv_ids = Paper.objects.filter(pk__in=chunk).values_list("arxiv_id")
        scopes |= {similar_key(arxiv_id) for (arxiv_id,) in arxiv_ids}
    return scopes


def reader_changed(user_ids: Iterable[int]) -> None:
    """Move on these readers' own state (what they saved, follow, flagged, had
    on screen: papers.slots), nothing shared: now, so that the reader's next
    request in this transaction sees it, and again once it commits, so that
    what another request read before the commit is not kept."""
    scopes = {reader_key(pk) for pk in user_ids}
    if scopes:
        _set_versions(scopes)
        transaction.on_commit(lambda: _set_versions(scopes))


def for_you_changed(user_ids: Iterable[int]) -> None:
    """Move on these readers' For you order, once the current transaction
    commits (their model was trained anew or deleted, or their list scored
    anew)."""
    scopes = {for_you_key(pk) for pk in user_ids}
    if scopes:
        transaction.on_commit(lambda: _set_versions(scopes))


def _bump(scopes: set[str], paper_ids: list[int]) -> None:
    if paper_ids:
        scopes = scopes | _paper_scopes(paper_ids)
    _set_versions(scopes, also={VERSION_KEY})


def _set_versions(scopes: set[str], also: AbstractSet[str] = frozenset()) -> None:
    global _moved_here
    _moved_here += 1
    now = time.time_ns()
    values = {version_key(scope): now for scope in scopes}
    values.update(dict.fromkeys(also, now))
    try:
        cache.set_many(values, None)
        if HARVEST in scopes:
            cache.delete(HARVEST_KEY)
    except Exception:
        logger.exception("could not move page versions (%s)", len(scopes))


def _paper_scopes(paper_ids: list[int]) -> set[str]:
    """What changed papers move, as they are once the change is committed."""
    scopes = {SEARCH, TOPICS} | _topic_scopes(_topic_slugs(paper_ids))
    for start in range(0, len(paper_ids), CHUNK):
        chunk = paper_ids[start : start + CHUNK]
        arxiv_ids = Paper.objects.filter(pk__in=chunk).values_list("arxiv_id")
        scopes |= {paper_key(arxiv_id) for (arxiv_id,) in arxiv_ids}
    newest = Paper.objects.order_by("-first_announced", "-id")[:LATEST_SHOWN]
    if set(newest.values_list("pk", flat=True)) & set(paper_ids):
        scopes.add(LATEST)
    return scopes


def _topic_scopes(slugs: set[str]) -> set[str]:
    return {topic_key(slug) for slug in slugs} | {members_key(slug) for slug in slugs}


def _topic_slugs(paper_ids: list[int]) -> set[str]:
    # Tags live in the topics app, which builds on this one: reached through
    # the relation, not imported.
    tags = Paper._meta.get_field("paper_topics").related_model._default_manager
    slugs: set[str] = set()
    for start in range(0, len(paper_ids), CHUNK):
        chunk = paper_ids[start : start + CHUNK]
        found = tags.filter(paper_id__in=chunk).values_list("topic__slug").distinct()
        slugs |= {slug for (slug,) in found}
    return slugs


# VERSIONS
# ------------------------------------------------------------------------------


def version_key(scope: str) -> str:
    return f"pages:v:{scope}"


def get_many(keys: list[str]) -> dict[str, Any]:
    try:
        return cache.get_many(keys)
    except Exception:
        logger.warning("page cache unavailable; rendering uncached", exc_info=True)
        return {}


# A visitor's kept copy of a page (papers.pagecache) is checked against
# versions read in this process up to RECENT_SECONDS before: a change made in
# another process reaches visitors that much later, one made in this process at
# once. Readers' pages read them every time (their own changes must show).
RECENT_SECONDS = 0.25
RECENT_KEPT = 256
_recent: dict[tuple[str, ...], tuple[float, int, dict[str, Any]]] = {}
_moved_here = 0  # how many times this process moved versions


def get_many_recent(keys: list[str]) -> dict[str, Any]:
    """get_many, or what it gave for these keys up to RECENT_SECONDS ago while
    this process moved no version since (a copy: callers add to it)."""
    wanted = tuple(keys)
    now = time.monotonic()
    read = _recent.get(wanted)
    if read is not None and now - read[0] < RECENT_SECONDS and read[1] == _moved_here:
        return dict(read[2])
    moved = _moved_here
    found = get_many(keys)
    if len(_recent) >= RECENT_KEPT:
        _recent.clear()
    _recent[wanted] = (now, moved, found)
    return dict(found)


def forget_recent() -> None:
    """Drop what get_many_recent read (tests start from nothing)."""
    _recent.clear()


def set_many(values: dict[str, Any], timeout: int) -> None:
    try:
        cache.set_many(values, timeout)
    except Exception:
        logger.warning("page cache unavailable; not stored", exc_info=True)


def current_versions(
    scopes: Iterable[str], found: dict[str, Any]
) -> dict[str, int | None]:
    """Each scope's version from `found`; a scope without one (never changed, or
    evicted) gets one now. None: not known, so nothing is stored under it."""
    versions: dict[str, int | None] = {}
    for scope in scopes:
        version = found.get(version_key(scope))
        if version is None:
            version = time.time_ns()
            try:
                # add, not set: a concurrent change's version must win.
                if not cache.add(version_key(scope), version, None):
                    version = None
            except Exception:
                version = None
        versions[scope] = version
    return versions


def version_of(scope: str) -> int | None:
    """The scope's version now (one given now if it has none); None: not known."""
    return current_versions([scope], get_many([version_key(scope)]))[scope]


class Dependencies:
    """The versions a render was made from. A render adds what it finds it
    depends on with `add`, before it reads the data those versions cover."""

    def __init__(self, versions: dict[str, int | None]) -> None:
        self.versions = versions

    def add(self, scopes: Iterable[str]) -> None:
        new = [scope for scope in scopes if scope not in self.versions]
        if new:
            found = get_many([version_key(scope) for scope in new])
            self.versions.update(current_versions(new, found))

    @property
    def known(self) -> bool:
        return None not in self.versions.values()
