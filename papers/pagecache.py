"""Pages rendered once and shared by every reader, kept fresh by versions
(papers.versions).

Pages. A page is cached under its address with the versions it was rendered
from. A request reads the page and the versions it names in one cache round
trip, and serves it if none moved; what a render finds it depends on while it
runs (a paper page's topics) is checked in a second round trip. Paper rows are
cached the same way, per paper (papers.rows), so a page made stale by one paper
renders one row anew. A part of a page that changes more often than the rest (a
topic's follower count) is a PageValue: cached under its own version, read with
the page and put in a slot.

Readers. A cached render is the same for everyone: each reader's own state is a
slot in it, filled for each request (papers.slots) from one small query whose
answer is kept under the reader's own version (`reader:<id>`, moved by
`reader_changed(...)` from the writers of that state) and read with the page.
So is the reader's user (accounts.backends.read_ahead): a signed-in request
reads the cache twice, its session and then the page with all it needs.

Copies. A page filled for a visitor without a message is the same for every
such visitor, and one filled for a reader the same until they change something:
each process keeps those copies (FilledCopy) while their versions stand, a
minute at most, and a hit reads only the versions. When only a copy's values
moved, it takes their new HTML: an edit of a topic's text reads that text, not
the page, and fills nothing.

Failure. A cache error is a miss: the page renders uncached and answers. A
version the cache missed while it was down is bounded by PAGE_TIMEOUT.

With several web processes the cache must be shared (CACHE_URL=redis://...), or
one process's change would not reach the others' pages.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any
from typing import overload
from urllib.parse import unquote

import lz4.frame
from django.contrib import messages
from django.contrib.auth.models import AnonymousUser
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.http import HttpRequest
from django.http import HttpResponse
from django.template.loader import get_template

from accounts.backends import read_ahead
from accounts.backends import session_user_id
from accounts.backends import user_key
from core.refused import has_refused
from core.release import RELEASE
from papers.versions import EVERYTHING
from papers.versions import HARVEST_KEY
from papers.versions import Dependencies
from papers.versions import current_versions
from papers.versions import get_many
from papers.versions import get_many_recent
from papers.versions import reader_key
from papers.versions import set_many
from papers.versions import version_key

# Entries are keyed by version, so they never go stale; timeouts bound memory,
# and how long a change made while the cache was unreachable goes unseen.
PAGE_TIMEOUT = 10 * 60


def cache_is_process_local() -> bool:
    """Whether the cache is this process's own (the embedded default, no
    CACHE_URL): another process's changes reach its pages only as they expire."""
    return isinstance(caches["default"], LocMemCache)


FRAGMENT_TIMEOUT = 60 * 60
# In the pages' keys: entries stored another way are not read (1: zlib and
# slots unparsed; 2: LZ4, slots parsed when stored).
PAGE_FORMAT = 2
SLOT = re.compile(r"<!--slot:([^>]*)-->")
# What a shared render must never see: it is the same for every reader.
SHARED_CONTEXT = {
    "shared": True,
    "user": AnonymousUser(),
    "perms": None,
    "messages": (),
    "csrf_token": "",
}


# PAGES
# ------------------------------------------------------------------------------


@dataclass
class Rendered:
    """A page as rendered for everyone, its slots found once: (start, end, kind,
    arguments), as papers.slots.slot wrote them."""

    body: str
    slots: list[tuple[int, int, str, list[str]]]
    deps: dict[str, int | None] = field(default_factory=dict)
    # What the page's view needs on a hit, e.g. the ids of the papers it lists.
    meta: dict[str, Any] = field(default_factory=dict)
    # Small values its slots read, fetched with the page (not stored with it).
    prefetched: dict[str, Any] = field(default_factory=dict)
    # The reader's state for its slots, when signed in (not stored with it).
    reader_state: ReaderState | None = None
    # Its PageValues' HTML, for their slots, and the versions it stands for
    # (not stored with it).
    values: dict[str, ValueHTML] = field(default_factory=dict)
    value_versions: dict[str, int | None] = field(default_factory=dict)
    # Under what its filling is kept in the process (FilledCopy), if it is;
    # and for whom: the reader's own versions and staff flag (not stored).
    copy_key: str = ""
    filled_for: tuple | None = None

    @classmethod
    def of(cls, body: str, deps: dict[str, int | None], meta: dict) -> Rendered:
        slots = []
        for found in SLOT.finditer(body):
            kind, *args = [unquote(part) for part in found.group(1).split(" ")]
            slots.append((found.start(), found.end(), kind, args))
        return cls(body, slots, deps, meta)

    def packed(self) -> tuple:
        # Compressed: a third of the bytes to send to and from the cache, read
        # back in 0.03 ms for a 130 KB page (zlib's fastest level: 0.18 ms).
        body = lz4.frame.compress(self.body.encode())
        return self.deps, body, self.slots, self.meta

    @classmethod
    def unpacked(cls, entry: tuple) -> Rendered:
        deps, body, slots, meta = entry
        return cls(lz4.frame.decompress(body).decode(), slots, deps, meta)


Render = Callable[[Dependencies], "tuple[str, dict] | HttpResponse"]
# A PageValue's HTML, or its parts' by name.
ValueHTML = str | dict[str, str]


def value_html(values: dict[str, ValueHTML], name: str, part: str | None) -> str:
    """The HTML of value `name`, or of its part `part`, as its slot shows it."""
    html = values[name]
    return html if isinstance(html, str) else html[str(part)]


@dataclass(frozen=True)
class PageValue:
    """A small part of a page that changes more often than the rest (a topic's
    follower count): not in its render but in a slot (`value NAME`), cached
    under its own scope's version and read with the page, so that a change to
    it renders nothing. `compute` returns its HTML, or that of its parts by
    name, each in a slot `value NAME PART` (one key for what changes together)."""

    name: str
    scope: str
    compute: Callable[[], ValueHTML]

    @property
    def key(self) -> str:
        """Its cache key: its name, in this release (core.release)."""
        return f"{self.name}@{RELEASE}"


def store_value(value: PageValue) -> None:
    """Compute the value and keep it under its scope's version: called by the
    writer of what it shows once the change committed, so that the next page
    reads its new HTML instead of computing it. The version is read before
    what the value shows: a later change moves it past what is stored here."""
    version = get_many([version_key(value.scope)]).get(version_key(value.scope))
    if version is not None:
        set_many({value.key: (version, value.compute())}, FRAGMENT_TIMEOUT)


@overload
def cached_page(
    request: HttpRequest,
    scopes: Iterable[str],
    render: Render,
    *,
    variant: str = "",
    values: dict[str, PageValue] | None = None,
    assumes: None = None,
) -> Rendered | FilledCopy | HttpResponse: ...


@overload
def cached_page(
    request: HttpRequest,
    scopes: Iterable[str],
    render: Render,
    *,
    variant: str = "",
    values: dict[str, PageValue] | None = None,
    assumes: dict[str, int | None],
) -> Rendered | FilledCopy | HttpResponse | None: ...


def cached_page(
    request: HttpRequest,
    scopes: Iterable[str],
    render: Render,
    *,
    variant: str = "",
    values: dict[str, PageValue] | None = None,
    assumes: dict[str, int | None] | None = None,
) -> Rendered | FilledCopy | HttpResponse | None:
    """The page at this address (and `variant`) as rendered for everyone: from
    the cache while none of the versions it was rendered from moved, else from
    `render(deps)`, which returns (body, meta), or a response not to cache; with
    its `values` (PageValue), read in the same round trip. Or this visitor's or
    reader's copy of it, filled before, while it stands.

    `assumes`: versions the caller's own inputs were read under (the variant
    was made from them), checked in the same round trip: None when any moved
    (or the reader's session no longer signs them in), and nothing is read
    further or rendered."""
    scopes = [EVERYTHING, *scopes]
    assumes = assumes or {}
    # A release renders its own pages (core.release).
    address = f"{RELEASE}|{variant}|{request.get_full_path()}"
    key = f"pages:page:{PAGE_FORMAT}:" + hashlib.sha256(address.encode()).hexdigest()
    # Who the session says signed in: their user is read with the page.
    signed_in_as, user_keys = _session_user(request)
    # A copy filled for this visitor or reader, while its versions stand,
    # needs no page read (FilledCopy).
    copy_key = f"{key}|{signed_in_as or ''}" if _nothing_once(request) else ""
    copy = _filled_copy(copy_key)
    # Read with the page: what its slots need (papers.slots).
    small = [HARVEST_KEY]
    reader_scopes = []
    if signed_in_as is not None:
        own_key = ReaderState.key_for(key, signed_in_as)
        small.append(own_key)
        reader_scopes.append(reader_key(signed_in_as))
    values = values or {}
    # A copy is checked by its values' versions: their HTML is read only when
    # it no longer stands.
    value_keys = [value.key for value in values.values()]
    value_scopes = {value.scope for value in values.values()} - set(scopes)
    # A visitor's copy stands on versions read a moment ago (get_many_recent).
    visitors_copy = copy is not None and signed_in_as is None and not assumes
    read = get_many_recent if visitors_copy else get_many
    found = read(
        [
            *([] if copy else [key, *value_keys]),
            *small,
            *user_keys,
            *(version_key(s) for s in [*scopes, *reader_scopes, *value_scopes]),
            *(version_key(s) for s in assumes),
        ]
    )
    reader = _reader(request, signed_in_as, found)
    if reader is not None:
        scopes.append(reader_key(reader))
    prefetched = {name: found[name] for name in small if name in found}
    if assumes and (
        reader is None
        or any(found.get(version_key(s)) != version for s, version in assumes.items())
    ):
        return None
    versions = current_versions(scopes, found)
    value_versions = _value_versions(values, found, versions)
    state = None
    filled_for = None
    if reader is not None:
        # The reader's own version is not the page's: a save renders nothing.
        own = (versions.pop(reader_key(reader)), versions[EVERYTHING])
        state = ReaderState(ReaderState.key_for(key, reader), own, prefetched)
        filled_for = (own, request.user.is_staff)
    if copy is not None and copy.stands(
        versions, prefetched.get(HARVEST_KEY), filled_for
    ):
        if value_versions == copy.value_versions:
            return copy
        # Only its values moved: the copy takes their new HTML.
        found.update(get_many(value_keys))
        copy = copy.with_values(
            _page_values(values, found, value_versions), value_versions
        )
        if None not in value_versions.values():  # as for a page, below
            _keep(copy_key, copy)
        return copy
    if copy is not None:
        found.update(get_many([key, *value_keys]))
    shown = _page_values(values, found, value_versions)
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
            set_many({key: page.packed()}, PAGE_TIMEOUT)
    # A render of unknown versions (the cache down) is not kept as a copy: a
    # change meanwhile would go unseen; nor one for a session whose user is
    # gone; nor staff's, whose slots count what moves no version ("N awaiting
    # review" after a training or a decision in the queue).
    known = None not in [*page.deps.values(), *value_versions.values()]
    staff = reader is not None and request.user.is_staff
    if known and (reader is not None) == (signed_in_as is not None) and not staff:
        page.copy_key, page.filled_for = copy_key, filled_for
    page.prefetched = prefetched
    page.reader_state = state
    page.values, page.value_versions = shown, value_versions
    return page


# FILLED COPIES
# ------------------------------------------------------------------------------
# A page filled for a visitor without a message is the same for every such
# visitor (log-in links, no state, no token), and one filled for a reader the
# same until they change something (their own version) but for the CSRF token,
# left a stand-in in the copy. Each process keeps the copies last filled, each
# a minute at most (the "last harvest" age moves): a hit reads the versions, not
# the page, and fills nothing.
FILLED_COPY_SECONDS = 60
FILLED_COPIES_KEPT = 128


# Where a kept copy takes the CSRF token (None), or a value's HTML: (name, part).
Hole = tuple[str, str | None] | None


@dataclass(frozen=True)
class FilledCopy:
    """A page filled for a plain visitor (`filled_for` None) or for a reader
    (their own versions and staff flag), and what it was filled from.

    It is kept split at its holes (parts[0], holes[0], parts[1], ...), so that
    when only its values moved (a topic's text edited) the copy takes their new
    HTML (`with_values`) instead of the page being read and filled anew."""

    deps: dict[str, int | None]
    value_versions: dict[str, int | None]
    harvest: Any
    filled_for: tuple | None
    made: float
    parts: tuple[bytes, ...]
    holes: tuple[Hole, ...]
    values: dict[str, ValueHTML]
    # Served: the parts with the values in, split where the token goes (one
    # piece: no form).
    pieces: tuple[bytes, ...] = field(init=False)

    def __post_init__(self) -> None:
        pieces, piece = [], [self.parts[0]]
        for hole, part in zip(self.holes, self.parts[1:], strict=True):
            if hole is None:
                pieces.append(b"".join(piece))
                piece = []
            else:
                piece.append(value_html(self.values, *hole).encode())
            piece.append(part)
        pieces.append(b"".join(piece))
        object.__setattr__(self, "pieces", tuple(pieces))

    def stands(
        self, versions: dict[str, int | None], harvest: Any, filled_for: tuple | None
    ) -> bool:
        """Whether it is still this page as filled, its values aside."""
        return (
            time.monotonic() - self.made < FILLED_COPY_SECONDS
            and filled_for == self.filled_for
            and harvest == self.harvest
            and _current(self.deps, versions)
        )

    def with_values(
        self, values: dict[str, ValueHTML], value_versions: dict[str, int | None]
    ) -> FilledCopy:
        return replace(self, values=values, value_versions=value_versions)


filled_copies: OrderedDict[str, FilledCopy] = OrderedDict()
_copies_lock = threading.Lock()


def keep_filled_copy(
    page: Rendered, parts: tuple[bytes, ...], holes: tuple[Hole, ...]
) -> FilledCopy:
    """Keep this filling of a page (papers.slots), split at its holes, for its
    next request."""
    copy = FilledCopy(
        page.deps,
        page.value_versions,
        page.prefetched.get(HARVEST_KEY),
        page.filled_for,
        time.monotonic(),
        parts,
        holes,
        page.values,
    )
    _keep(page.copy_key, copy)
    return copy


def _keep(copy_key: str, copy: FilledCopy) -> None:
    with _copies_lock:
        filled_copies[copy_key] = copy
        filled_copies.move_to_end(copy_key)
        while len(filled_copies) > FILLED_COPIES_KEPT:
            filled_copies.popitem(last=False)


def _filled_copy(copy_key: str) -> FilledCopy | None:
    if not copy_key:
        return None
    with _copies_lock:
        return filled_copies.get(copy_key)


def _nothing_once(request: HttpRequest) -> bool:
    """No message nor refused form waits to be shown once: a copy would keep
    it, or a hit not show it."""
    return not len(messages.get_messages(request)) and not has_refused(request)


def _session_user(request: HttpRequest) -> tuple[Any, list[str]]:
    """The id of the user the session is signed in as (or None), and the cache
    key of that user to read with what the request reads anyway."""
    user_id = session_user_id(request)
    return user_id, [user_key(user_id)] if user_id is not None else []


def _reader(request: HttpRequest, user_id: Any, found: dict[str, Any]) -> Any:
    """The signed-in reader's id, or None: Django's get_user, its user taken
    from what was read with the page."""
    if user_id is None:
        return None
    with read_ahead({user_key(user_id): found.get(user_key(user_id))}):
        signed_in = request.user.is_authenticated  # reads the user now
    return request.user.pk if signed_in else None


def _value_versions(
    values: dict[str, PageValue], found: dict[str, Any], known: dict[str, int | None]
) -> dict[str, int | None]:
    """The version of each value's scope: among those known, else as found."""
    scopes = {value.scope for value in values.values()} - set(known)
    versions = {**known, **current_versions(scopes, found)}
    return {name: versions[value.scope] for name, value in values.items()}


def _page_values(
    values: dict[str, PageValue],
    found: dict[str, Any],
    versions: dict[str, int | None],
) -> dict[str, ValueHTML]:
    """Each value's HTML: as found with the page while its version stands, else
    computed (and stored under that version)."""
    html: dict[str, ValueHTML] = {}
    fresh = {}
    for name, value in values.items():
        version = versions[name]
        entry = found.get(value.key)
        if entry is not None and entry[0] == version:
            html[name] = entry[1]
        else:
            html[name] = value.compute()
            if version is not None:
                fresh[value.key] = (version, html[name])
    if fresh:
        set_many(fresh, FRAGMENT_TIMEOUT)
    return html


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
            set_many({self.key: ((self.version, wanted), state)}, PAGE_TIMEOUT)


def _current(stored: dict[str, int | None], versions: dict[str, int | None]) -> bool:
    """Whether a page stored with these versions is current: those read with it
    match, and so do those its render added, read now."""
    if any(stored.get(scope) != version for scope, version in versions.items()):
        return False
    added = [scope for scope in stored if scope not in versions]
    if not added:
        return True
    found = get_many([version_key(scope) for scope in added])
    return all(found.get(version_key(scope)) == stored[scope] for scope in added)


def render_shared(request: HttpRequest, template: str, context: dict) -> str:
    """The template rendered for everyone: no user, CSRF token or messages
    (slots stand for them); the request only for its address."""
    return get_template(template).render({**context, **SHARED_CONTEXT}, request)


# FRAGMENTS
# ------------------------------------------------------------------------------


def cached_fragments(
    items: dict[str, tuple[str, ...]],
    render: Callable[[list[str]], dict[str, Any]],
    *,
    reader_of: HttpRequest | None = None,
) -> dict[str, Any]:
    """Each item's HTML, or other small value (item → the scopes it depends on),
    from the cache while those versions stand, else rendered (those missing,
    together) by `render`. With `reader_of`, that request's user is read in
    the same round trip (see cached_page)."""
    return fragments_and_versions(items, render, reader_of=reader_of)[0]


def fragments_and_versions(
    items: dict[str, tuple[str, ...]],
    render: Callable[[list[str]], dict[str, Any]],
    *,
    reader_of: HttpRequest | None = None,
) -> tuple[dict[str, Any], dict[str, int | None]]:
    """cached_fragments' values, and the versions they stand for (EVERYTHING's
    and their scopes')."""
    scopes = {EVERYTHING} | {scope for deps in items.values() for scope in deps}
    keys = {item: f"pages:fragment:{RELEASE}:{item}" for item in items}
    signed_in_as, user_keys = (
        _session_user(reader_of) if reader_of is not None else (None, [])
    )
    found = get_many(
        [*keys.values(), *user_keys, *(version_key(scope) for scope in scopes)]
    )
    if reader_of is not None:
        _reader(reader_of, signed_in_as, found)
    versions = current_versions(scopes, found)
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
        set_many(
            {
                keys[item]: (wanted[item], fresh[item])
                for item in missing
                if None not in wanted[item]
            },
            FRAGMENT_TIMEOUT,
        )
    return html, versions


# THE LAST HARVEST
# ------------------------------------------------------------------------------


def cached_value(key: str, compute: Callable[[], Any], timeout: int) -> Any:
    """A small value from the cache, or computed (and stored) when missing."""
    found = get_many([key])
    if key in found:
        return found[key][0]
    value = compute()
    # In a tuple: a value of None is stored too.
    set_many({key: (value,)}, timeout)
    return value
