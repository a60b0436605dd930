"""Pages rendered once and shared by every reader, kept fresh by versions.

Versions. Everything pages show has a version in the cache: each topic
(`topic:<slug>`: its page, papers, followers, momentum, related topics), each
paper (`paper:<arxiv id>`: its page and its rows) and the lists that span many:

- `latest`: the newest papers (the home page for visitors);
- `trending`: every topic's momentum (trending lists, sparklines);
- `topics`: the topic directory (descriptions, paper counts);
- `names`: topics' names and addresses, which every chip shows;
- `search`: any paper or tag, which search results may show;
- `harvest`: when the last harvest finished (a slot, see papers.slots).

Whatever changes what pages show calls `content_changed(topics=..., papers=...,
lists=...)` naming what it changed; once the transaction commits, those versions
move on and nothing else. A paper's change also moves the topics it was in (at
the call) and is in (at commit), and which papers they hold (`members:<slug>`,
what a paper page's related papers read), search, the directory, and `latest`
when it is among the newest papers. Called with nothing: everything changed.

Pages. A page is cached under its address with the versions it was rendered
from. A request reads the page and the versions it names in one cache round
trip, and serves it if none moved; what a render finds it depends on while it
runs (a paper page's topics) is checked in a second round trip. Paper rows are
cached the same way, per paper (papers.rows), so a page made stale by one paper
renders one row anew.

Readers. A cached render is the same for everyone: each reader's own state is a
slot in it, filled for each request (papers.slots) from one small query whose
answer is kept under the reader's own version (`reader:<id>`, moved by
`reader_changed(...)` from the writers of that state) and read with the page.

Failure. A cache error is a miss: the page renders uncached and answers. A
version the cache missed while it was down is bounded by PAGE_TIMEOUT.

With several web processes the cache must be shared (CACHE_URL=redis://...), or
one process's change would not reach the others' pages.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
import zlib
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest
from django.http import HttpResponse
from django.template.loader import get_template

from core.api.caching import VERSION_KEY
from papers.models import Paper

logger = logging.getLogger(__name__)

LATEST = "latest"
TRENDING = "trending"
TOPICS = "topics"
NAMES = "names"
SEARCH = "search"
HARVEST = "harvest"
# When the last harvest finished, cached apart (papers.slots fills it in).
HARVEST_KEY = "pages:last-harvest"
# Moved by content_changed() with no arguments; every page depends on it.
EVERYTHING = "all"
LISTS = frozenset({LATEST, TRENDING, TOPICS, NAMES, SEARCH, HARVEST, EVERYTHING})
# Papers the home page lists; a change to one of them moves `latest`.
LATEST_SHOWN = 25
# Entries are keyed by version, so they never go stale; timeouts bound memory,
# and how long a change made while the cache was unreachable goes unseen.
PAGE_TIMEOUT = 10 * 60
FRAGMENT_TIMEOUT = 60 * 60
CHUNK = 5000
SLOT = re.compile(r"<!--slot:([^>]*)-->")
# What a shared render must never see: it is the same for every reader.
SHARED_CONTEXT = {
    "shared": True,
    "user": AnonymousUser(),
    "perms": None,
    "messages": (),
    "csrf_token": "",
}


def topic_key(slug: str) -> str:
    return f"topic:{slug}"


def paper_key(arxiv_id: str) -> str:
    return f"paper:{arxiv_id}"


def followers_key(slug: str) -> str:
    """A topic's follower count, which only its own page shows."""
    return f"followers:{slug}"


def reader_key(user_id: int) -> str:
    """One reader's own state, which slots show (papers.slots)."""
    return f"reader:{user_id}"


def members_key(slug: str) -> str:
    """Which papers a topic holds, without the rest of its page."""
    return f"members:{slug}"


# CHANGES
# ------------------------------------------------------------------------------


def content_changed(
    *,
    topics: Iterable[Any] = (),
    papers: Iterable[int] = (),
    lists: Iterable[str] = (),
    followers: Iterable[Any] = (),
) -> None:
    """Move on, once the current transaction commits, the versions of these
    topics (Topic or slug), papers (ids), lists and topics' follower counts;
    with no argument, of everything. Papers also move the topics they are in
    now and at commit."""
    scopes = {topic_key(getattr(topic, "slug", topic)) for topic in topics}
    scopes |= {followers_key(getattr(topic, "slug", topic)) for topic in followers}
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


def reader_changed(user_ids: Iterable[int]) -> None:
    """Move on these readers' own state (what they saved, follow, flagged, were
    shown: papers.slots), nothing shared: now, so that the reader's next request
    in this transaction sees it, and again once it commits, so that what another
    request read before the commit is not kept."""
    scopes = {reader_key(pk) for pk in user_ids}
    if scopes:
        _set_versions(scopes)
        transaction.on_commit(lambda: _set_versions(scopes))


def _bump(scopes: set[str], paper_ids: list[int]) -> None:
    if paper_ids:
        scopes = scopes | _paper_scopes(paper_ids)
    _set_versions(scopes, also={VERSION_KEY})


def _set_versions(scopes: set[str], also: AbstractSet[str] = frozenset()) -> None:
    now = time.time_ns()
    values = {_version_key(scope): now for scope in scopes}
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


def _version_key(scope: str) -> str:
    return f"pages:v:{scope}"


def _get_many(keys: list[str]) -> dict[str, Any]:
    try:
        return cache.get_many(keys)
    except Exception:
        logger.warning("page cache unavailable; rendering uncached", exc_info=True)
        return {}


def _set_many(values: dict[str, Any], timeout: int) -> None:
    try:
        cache.set_many(values, timeout)
    except Exception:
        logger.warning("page cache unavailable; not stored", exc_info=True)


def _versions(scopes: Iterable[str], found: dict[str, Any]) -> dict[str, int | None]:
    """Each scope's version from `found`; a scope without one (never changed, or
    evicted) gets one now. None: not known, so nothing is stored under it."""
    versions: dict[str, int | None] = {}
    for scope in scopes:
        version = found.get(_version_key(scope))
        if version is None:
            version = time.time_ns()
            try:
                # add, not set: a concurrent change's version must win.
                if not cache.add(_version_key(scope), version, None):
                    version = None
            except Exception:
                version = None
        versions[scope] = version
    return versions


class Dependencies:
    """The versions a render was made from. A render adds what it finds it
    depends on with `add`, before it reads the data those versions cover."""

    def __init__(self, versions: dict[str, int | None]) -> None:
        self.versions = versions

    def add(self, scopes: Iterable[str]) -> None:
        new = [scope for scope in scopes if scope not in self.versions]
        if new:
            found = _get_many([_version_key(scope) for scope in new])
            self.versions.update(_versions(new, found))

    @property
    def known(self) -> bool:
        return None not in self.versions.values()


# PAGES
# ------------------------------------------------------------------------------


@dataclass
class Rendered:
    """A page as rendered for everyone, its slots found once (start, end, spec)."""

    body: str
    slots: list[tuple[int, int, str]]
    deps: dict[str, int | None] = field(default_factory=dict)
    # What the page's view needs on a hit, e.g. the ids of the papers it lists.
    meta: dict[str, Any] = field(default_factory=dict)
    # Small values its slots read, fetched with the page (not stored with it).
    prefetched: dict[str, Any] = field(default_factory=dict)
    # The reader's state for its slots, when signed in (not stored with it).
    reader_state: ReaderState | None = None

    @classmethod
    def of(cls, body: str, deps: dict[str, int | None], meta: dict) -> Rendered:
        slots = [(m.start(), m.end(), m.group(1)) for m in SLOT.finditer(body)]
        return cls(body, slots, deps, meta)

    def packed(self) -> tuple:
        # Compressed: a fraction of the bytes to send to and from the cache.
        body = zlib.compress(self.body.encode(), 1)
        return self.deps, body, self.slots, self.meta

    @classmethod
    def unpacked(cls, entry: tuple) -> Rendered:
        deps, body, slots, meta = entry
        return cls(zlib.decompress(body).decode(), slots, deps, meta)


Render = Callable[[Dependencies], "tuple[str, dict] | HttpResponse"]


def cached_page(
    request: HttpRequest, scopes: Iterable[str], render: Render, *, variant: str = ""
) -> Rendered | HttpResponse:
    """The page at this address (and `variant`) as rendered for everyone: from
    the cache while none of the versions it was rendered from moved, else from
    `render(deps)`, which returns (body, meta), or a response not to cache."""
    scopes = [EVERYTHING, *scopes]
    address = f"{variant}|{request.get_full_path()}"
    key = "pages:page:" + hashlib.sha256(address.encode()).hexdigest()
    reader = request.user.pk if request.user.is_authenticated else None
    # Read with the page: what its slots need (papers.slots).
    small = [HARVEST_KEY]
    if reader is not None:
        scopes.append(reader_key(reader))
        small.append(ReaderState.key_for(key, reader))
    found = _get_many([key, *small, *(_version_key(s) for s in scopes)])
    prefetched = {name: found[name] for name in small if name in found}
    versions = _versions(scopes, found)
    state = None
    if reader is not None:
        # The reader's own version is not the page's: a save renders nothing.
        own = (versions.pop(reader_key(reader)), versions[EVERYTHING])
        state = ReaderState(ReaderState.key_for(key, reader), own, prefetched)
    entry = found.get(key)
    if entry is not None and _current(entry[0], versions):
        page = Rendered.unpacked(entry)
    else:
        deps = Dependencies(versions)
        rendered = render(deps)
        if isinstance(rendered, HttpResponse):
            return rendered
        body, meta = rendered
        page = Rendered.of(body, deps.versions, meta)
        if deps.known:
            _set_many({key: page.packed()}, PAGE_TIMEOUT)
    page.prefetched = prefetched
    page.reader_state = state
    return page


@dataclass
class ReaderState:
    """One reader's state for the slots of one page (papers.slots), cached
    under the reader's version: read with the page, queried only after the
    reader changed something (reader_changed) or the page lists other papers."""

    key: str
    version: tuple[int | None, int | None]
    prefetched: dict[str, Any]

    @staticmethod
    def key_for(page_key: str, user_id: int) -> str:
        return f"{page_key}:reader:{user_id}"

    def get(self, wanted: object) -> Any:
        entry = self.prefetched.get(self.key)
        if entry is not None and entry[0] == (self.version, wanted):
            return entry[1]
        return None

    def put(self, wanted: object, state: Any) -> None:
        if None not in self.version:
            _set_many({self.key: ((self.version, wanted), state)}, PAGE_TIMEOUT)


def _current(stored: dict[str, int | None], versions: dict[str, int | None]) -> bool:
    """Whether a page stored with these versions is current: those read with it
    match, and so do those its render added, read now."""
    if any(stored.get(scope) != version for scope, version in versions.items()):
        return False
    added = [scope for scope in stored if scope not in versions]
    if not added:
        return True
    found = _get_many([_version_key(scope) for scope in added])
    return all(found.get(_version_key(scope)) == stored[scope] for scope in added)


def render_shared(request: HttpRequest, template: str, context: dict) -> str:
    """The template rendered for everyone: no user, CSRF token or messages
    (slots stand for them); the request only for its address."""
    return get_template(template).render({**context, **SHARED_CONTEXT}, request)


# FRAGMENTS
# ------------------------------------------------------------------------------


def cached_fragments(
    items: dict[str, tuple[str, ...]],
    render: Callable[[list[str]], dict[str, Any]],
) -> dict[str, Any]:
    """Each item's HTML, or other small value (item → the scopes it depends on),
    from the cache while those versions stand, else rendered (those missing,
    together) by `render`."""
    scopes = {EVERYTHING} | {scope for deps in items.values() for scope in deps}
    keys = {item: f"pages:fragment:{item}" for item in items}
    found = _get_many([*keys.values(), *(_version_key(scope) for scope in scopes)])
    versions = _versions(scopes, found)
    wanted = {
        item: tuple(versions[scope] for scope in (EVERYTHING, *deps))
        for item, deps in items.items()
    }
    html, missing = {}, []
    for item, versions_wanted in wanted.items():
        entry = found.get(keys[item])
        if entry is not None and entry[0] == versions_wanted:
            html[item] = entry[1]
        else:
            missing.append(item)
    if missing:
        fresh = render(missing)
        html.update(fresh)
        _set_many(
            {
                keys[item]: (wanted[item], fresh[item])
                for item in missing
                if None not in wanted[item]
            },
            FRAGMENT_TIMEOUT,
        )
    return html


# THE LAST HARVEST
# ------------------------------------------------------------------------------


def cached_value(key: str, compute: Callable[[], Any], timeout: int) -> Any:
    """A small value from the cache, or computed (and stored) when missing."""
    found = _get_many([key])
    if key in found:
        return found[key][0]
    value = compute()
    # In a tuple: a value of None is stored too.
    _set_many({key: (value,)}, timeout)
    return value
