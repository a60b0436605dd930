"""A reader's own state in a page rendered for everyone.

A shared render (papers.pagecache) holds a slot, `<!--slot:KIND ARG...-->`, where
each reader's page differs: the header's user menu, messages, each follow and
save button, the "Not relevant?" flags, what the reader had on screen in the
feed before ("seen") and the last harvest's age. `fill()` replaces each slot for
the request: it asks which of the page's papers and topics the reader saved,
rated, follows, flagged or had on screen, in one query (its answer cached under
the reader's version until they change something: papers.pagecache.ReaderState),
and writes each slot from its template (`partials/`),
rendered once per process with stand-ins for the address, the `next` address
and the CSRF token. No escaped text can make a slot: `<` is always `&lt;`.
"""

from __future__ import annotations

import functools
import hashlib
import re
import secrets
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from urllib.parse import quote

from django.apps import apps
from django.conf import settings
from django.contrib import messages
from django.db.models import CharField
from django.db.models import F
from django.db.models import QuerySet
from django.db.models import Value
from django.db.models.functions import Cast
from django.db.models.functions import Concat
from django.http import HttpRequest
from django.http import HttpResponse
from django.middleware.csrf import get_token
from django.template.loader import get_template
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString
from django.utils.safestring import mark_safe
from django.utils.text import Truncator

from accounts.models import DigestPreferences
from accounts.models import User
from accounts.models import reader_zone
from accounts.requests import signed_in
from core.refused import take_refused
from papers.models import AuthorFollow
from papers.models import Rating
from papers.models import SavedPaper
from papers.models import ShownPaper
from papers.pagecache import PAGE_TIMEOUT
from papers.pagecache import FilledCopy
from papers.pagecache import Hole
from papers.pagecache import ReaderState
from papers.pagecache import Rendered
from papers.pagecache import ValueHTML
from papers.pagecache import cached_value
from papers.pagecache import keep_filled_copy
from papers.pagecache import value_html
from papers.query import last_harvest
from papers.routes import address
from papers.routes import author_address
from papers.search import as_typed
from papers.versions import HARVEST_KEY

# Stand-ins in a slot's template, replaced for each request.
URL, NEXT, CSRF, NAME = "\x1aurl\x1a", "\x1anext\x1a", "\x1acsrf\x1a", "\x1aname\x1a"
# Where a kept copy's filling left a value (`_value`) or the token to come. A
# value's stand-in carries this process's secret: no text in the page (a
# paper's, a curator's) can spell one.
VALUE = f"value-{secrets.token_hex(8)} "
HOLE = re.compile(f"\x1a(csrf|{VALUE}[^\x1a]*)\x1a".encode())
# Each button: its address for a key, and its labels when on, off, and off in
# a list (small).
TOGGLES: dict[str, tuple[Callable[[str], str], str, str, str]] = {
    "save": (
        functools.partial(address, "papers:save", "arxiv_id"),
        "Saved",
        "Save",
        "Save",
    ),
    "follow": (
        functools.partial(address, "topics:follow", "slug"),
        "Following",
        "Follow this topic",
        "Follow",
    ),
    "follow-author": (
        lambda author_id: author_address(int(author_id), "follow"),
        "Following",
        "Follow this author",
        "Follow",
    ),
}
# Slots whose state is the reader's, by the state they read.
STATE_OF = {
    "save": "save",
    "rate": "rating",
    "follow": "follow",
    "follow-author": "follow-author",
    "flag": "flag",
    "seen": "seen",
    "seen-class": "seen",
    # The last harvest's time, in the reader's own zone.
    "harvest": "zone",
}


def slot(kind: str, *args: object) -> SafeString:
    """The marker of a slot; its arguments quoted, so none holds a space or `>`."""
    parts = [kind, *(quote(str(arg), safe="/") for arg in args)]
    return mark_safe(f"<!--slot:{' '.join(parts)}-->")


@dataclass
class Reader:
    """What the slots of one request are filled from."""

    request: HttpRequest
    state: dict[str, set[str]]
    meta: dict
    prefetched: dict
    values: dict[str, ValueHTML]
    # Filling a kept copy: its forms' token and its values left stand-ins.
    stand_ins: bool = False

    @cached_property
    def user(self) -> User:
        return signed_in(self.request)

    @cached_property
    def signed_in(self) -> bool:
        return self.user.is_authenticated

    @cached_property
    def csrf(self) -> str:
        return CSRF if self.stand_ins else get_token(self.request)

    @cached_property
    def next(self) -> str:
        return escape(self.request.get_full_path())


def page_response(
    request: HttpRequest, page: Rendered | FilledCopy | HttpResponse
) -> HttpResponse:
    """The response for a page from papers.pagecache.cached_page."""
    if isinstance(page, HttpResponse):
        return page
    if isinstance(page, FilledCopy):
        return HttpResponse(_with_token(request, page.pieces))
    if page.copy_key:
        # Kept with the token a stand-in, as each response gets its own, and
        # the values, as they may move without the page.
        split = HOLE.split(fill(request, page, stand_ins=True).encode())
        holes = tuple(_hole(hole.decode()) for hole in split[1::2])
        copy = keep_filled_copy(page, tuple(split[::2]), holes)
        return HttpResponse(_with_token(request, copy.pieces))
    return HttpResponse(fill(request, page))


def _hole(stand_in: str) -> Hole:
    if stand_in == "csrf":
        return None
    name, _, part = stand_in.removeprefix(VALUE).partition(" ")
    return name, part or None


def _with_token(request: HttpRequest, pieces: tuple[bytes, ...]) -> bytes:
    """The page with this request's CSRF token where its forms had the stand-in:
    split once when kept, as searching a page for it costs a tenth of a hit."""
    if len(pieces) == 1:
        return pieces[0]  # no form: no token (and no CSRF cookie)
    return get_token(request).encode().join(pieces)


def fill(request: HttpRequest, page: Rendered, *, stand_ins: bool = False) -> str:
    """The page for this request: every slot filled with the reader's own (its
    forms with the request's CSRF token; with `stand_ins`, the token and the
    values left stand-ins, for a kept copy)."""
    wanted: dict[str, set[str]] = defaultdict(set)
    for _, _, kind, args in page.slots:
        if kind in STATE_OF:
            key = args[:2] if kind == "flag" else args[:1]
            wanted[STATE_OF[kind]].add(" ".join(key))
    if not page.meta.get("seen"):
        wanted.pop("seen", None)  # only the feed marks what was on screen before
    reader = Reader(request, {}, page.meta, page.prefetched, page.values, stand_ins)
    if reader.signed_in:
        reader.state = _cached_state(reader.user, wanted, page.reader_state)
    out, position = [], 0
    for start, end, kind, args in page.slots:
        out.append(page.body[position:start])
        out.append(FILLERS[kind](reader, *args))
        position = end
    out.append(page.body[position:])
    return "".join(out)


def _cached_state(
    user: User, wanted: dict[str, set[str]], cached: ReaderState | None
) -> dict[str, set[str]]:
    """reader_state(), from the cache while the reader changed nothing."""
    asked = sorted((kind, sorted(keys)) for kind, keys in wanted.items())
    digest = hashlib.sha256(repr(asked).encode()).hexdigest()[:32]
    state = cached.get(digest) if cached else None
    if state is None:
        state = reader_state(user, wanted)
        if cached:
            cached.put(digest, state)
    return state


def reader_state(user: User, wanted: dict[str, set[str]]) -> dict[str, set[str]]:
    """Of the keys wanted, those the reader saved (arXiv ids), rated up or
    down (arXiv ids, as "up" and "down"), follows (topic slugs, author ids),
    flagged ("slug arxiv-id") and had on screen in the feed, and the time zone
    their settings give (as "zone"; none stored: none): one query."""
    # Follows and flags live in the topics app, which builds on this one:
    # looked up by name, not imported.
    follow = apps.get_model("topics", "Follow")
    flag = apps.get_model("topics", "RelevanceFlag")
    queries: list[QuerySet] = []
    if keys := wanted.get("save"):
        queries.append(_owned(SavedPaper, user, "save", F("paper__arxiv_id"), keys))
    if keys := wanted.get("rating"):
        paper = F("paper__arxiv_id")
        queries.append(_owned(Rating, user, "up", paper, keys, value=Rating.UP))
        queries.append(_owned(Rating, user, "down", paper, keys, value=Rating.DOWN))
    if keys := wanted.get("seen"):
        queries.append(_owned(ShownPaper, user, "seen", F("paper__arxiv_id"), keys))
    if keys := wanted.get("follow"):
        queries.append(_owned(follow, user, "follow", F("topic__slug"), keys))
    if keys := wanted.get("follow-author"):
        author_id = Cast("author_id", output_field=CharField())
        queries.append(_owned(AuthorFollow, user, "follow-author", author_id, keys))
    if keys := wanted.get("flag"):
        key = Concat(
            "topic__slug", Value(" "), "paper__arxiv_id", output_field=CharField()
        )
        queries.append(_owned(flag, user, "flag", key, keys))
    if "zone" in wanted:
        zone = DigestPreferences.objects.filter(user=user).order_by()
        zone = zone.annotate(
            slot_kind=Value("zone", output_field=CharField()), slot_key=F("time_zone")
        )
        queries.append(zone.values_list("slot_kind", "slot_key"))
    state: dict[str, set[str]] = defaultdict(set)
    if queries:
        for kind, key in queries[0].union(*queries[1:], all=True):
            state[kind].add(key)
    return dict(state)


def _owned(model, user: User, kind: str, key, keys: set[str], **where) -> QuerySet:
    """(kind, key) of the reader's rows of `model` (those matching `where`)
    whose key is one of `keys`."""
    rows = model.objects.filter(user=user, **where).annotate(
        slot_kind=Value(kind, output_field=CharField()), slot_key=key
    )
    rows = rows.filter(slot_key__in=sorted(keys)).order_by()
    return rows.values_list("slot_kind", "slot_key")


# FILLERS
# ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _skeleton(template: str, **context: object) -> str:
    """A slot's template rendered with stand-ins, once per process."""
    return get_template(template).render(
        {**context, "url": URL, "next": NEXT, "csrf_token": CSRF, "name": NAME}
    )


def skeleton(template: str, **context: object) -> str:
    if settings.DEBUG:  # templates may change while the server runs
        _skeleton.cache_clear()
    return _skeleton(template, **context)


def row_id(arxiv_id: str) -> str:
    """The id of a paper's row in a list (partials/paper_row.html)."""
    return f"paper-{arxiv_id}"


def card_id(slug: str) -> str:
    """The id of a topic's item in a list of topics (topics/list.html, the
    trending page, the feed's suggestions)."""
    return f"topic-{slug}"


def _back_to(reader: Reader, key: str, size: str, kind: str = "save") -> str:
    """Where a button comes back to, posted without JavaScript (or after
    logging in): a row's (its buttons are the small ones: a paper's Save,
    rating or flag, a topic's Follow in a list) to the row, not to the top of a long
    list; a page's own to the page."""
    if size != "small":
        return reader.next
    anchor = card_id(key) if kind == "follow" else row_id(key)
    return f"{reader.next}#{escape(anchor)}"


def _toggle(reader: Reader, key: str, size: str, name: str = "", *, kind: str) -> str:
    """A follow or save button; `name` (a topic's, in a list of topics) ends
    its accessible name, so that a list's buttons are not all "Follow"."""
    address_of, label_on, label_off, label_small = TOGGLES[kind]
    on = reader.signed_in and key in reader.state.get(kind, ())
    html = skeleton(
        "partials/toggle.html",
        signed_in=reader.signed_in,
        on=on,
        label_on=label_on,
        label_off=label_small if size == "small" else label_off,
        kind=kind,
        small=size == "small",
        named=bool(name),
    )
    html = html.replace(URL, escape(address_of(key))).replace(NAME, escape(name))
    html = html.replace(
        NEXT,
        _back_to(reader, key, size, kind)
        if kind in ("save", "follow")
        else reader.next,
    )
    return html.replace(CSRF, reader.csrf) if reader.signed_in else html


def _rating(reader: Reader, arxiv_id: str, size: str) -> str:
    """The thumbs up and down of a paper: one form, each button saying what it
    does (rate, or clear the rating it shows pressed)."""
    rating = None
    if reader.signed_in:
        rated = [
            kind for kind in ("up", "down") if arxiv_id in reader.state.get(kind, ())
        ]
        rating = rated[0] if rated else None
    html = skeleton(
        "partials/rating.html",
        signed_in=reader.signed_in,
        rating=rating,
        small=size == "small",
    )
    html = html.replace(URL, escape(address("papers:rate", "arxiv_id", arxiv_id)))
    html = html.replace(NEXT, _back_to(reader, arxiv_id, size))
    return html.replace(CSRF, reader.csrf) if reader.signed_in else html


def _flag(
    reader: Reader, slug: str, arxiv_id: str, name: str, size: str = "large"
) -> str:
    """A paper's "Not relevant?" for a topic, posted without JavaScript: from
    a row (`small`) back to that row."""
    if not reader.signed_in:
        return ""
    flagged = f"{slug} {arxiv_id}" in reader.state.get("flag", ())
    html = skeleton("partials/flag.html", flagged=flagged)
    url = reverse("topics:flag", args=[slug, arxiv_id])
    html = html.replace(URL, escape(url)).replace(NAME, escape(name))
    html = html.replace(NEXT, _back_to(reader, arxiv_id, size))
    return html.replace(CSRF, reader.csrf)


def _menu(reader: Reader) -> str:
    if not reader.signed_in:
        # Its links come back to this page: drawn for each address (a
        # visitor's filled copy keeps it).
        context = {"signed_in": False, "back_to": reader.request.get_full_path()}
        return render_to_string("partials/user_menu.html", context)
    staff = reader.user.is_staff
    html = skeleton("partials/user_menu.html", signed_in=True, staff=staff)
    return html.replace(CSRF, reader.csrf)


def _messages(reader: Reader) -> str:
    found = list(messages.get_messages(reader.request))
    if not found:
        return ""
    return render_to_string("partials/messages.html", {"messages": found})


def _seen(reader: Reader, arxiv_id: str) -> str:
    if arxiv_id not in reader.state.get("seen", ()):
        return ""
    return skeleton("partials/seen_mark.html")


def _seen_class(reader: Reader, arxiv_id: str) -> str:
    return " seen" if arxiv_id in reader.state.get("seen", ()) else ""


def _harvest(reader: Reader) -> str:
    if HARVEST_KEY in reader.prefetched:  # read with the page
        (finished,) = reader.prefetched[HARVEST_KEY]
    else:
        finished = cached_value(HARVEST_KEY, last_harvest, PAGE_TIMEOUT)
    # Told in the reader's own zone (their settings' one), named; a visitor's
    # in UTC, named too: a bare "14:48" is read as one's own time.
    zones = reader.state.get("zone", ()) if reader.signed_in else ()
    zone = reader_zone(min(zones, default="UTC"))
    with timezone.override(zone):
        return render_to_string(
            "partials/last_harvest.html", {"last_harvest": finished, "zone": zone}
        )


def _save_search(reader: Reader, query: str) -> str:
    """The search page's "Save this search": the form, the name the reader
    already saved this search under, or the login link; the form open with
    what was typed when saving it was refused."""
    # Named after the words searched, without the phrases' quotes (straight
    # or as phones type them), which would nest in the quotes a name is shown in.
    name = Truncator(" ".join(as_typed(query).replace('"', " ").split())).chars(80)
    values = {"name": name, "query": query.strip(), "syntax": "search"}
    saved_as = None
    if reader.signed_in:
        refused_at, typed = take_refused(reader.request)
        if refused_at == reverse("saved_search_create"):
            values = typed
        else:
            # Saved searches are the topics app's: reached through the relation.
            saved_as = (
                reader.user.searches.filter(syntax="search", query=query.strip())
                .values_list("name", flat=True)
                .first()
            )
    # The filters are the search page's, not the saved search's (it matches
    # new papers by its words alone): said, not silently dropped.
    filters = ("topic", "category", "from", "to")
    context = {
        "signed_in": reader.signed_in,
        "saved_as": saved_as,
        "values": values,
        "filtered": any(reader.request.GET.get(name) for name in filters),
        "next": reader.request.get_full_path(),
        "csrf_token": reader.csrf if reader.signed_in else "",
    }
    return render_to_string("partials/save_search.html", context)


def _value(reader: Reader, name: str, part: str | None = None) -> str:
    """A PageValue's HTML (papers.pagecache), or one of its parts', rendered
    by its page's view."""
    if reader.stand_ins:
        return f"\x1a{VALUE}{name}{f' {part}' if part else ''}\x1a"
    return value_html(reader.values, name, part)


FILLERS: dict[str, Callable[..., str]] = {
    "menu": _menu,
    "messages": _messages,
    "save": functools.partial(_toggle, kind="save"),
    "rate": _rating,
    "follow": functools.partial(_toggle, kind="follow"),
    "follow-author": functools.partial(_toggle, kind="follow-author"),
    "flag": _flag,
    "seen": _seen,
    "seen-class": _seen_class,
    "harvest": _harvest,
    "save-search": _save_search,
    "value": _value,
}
