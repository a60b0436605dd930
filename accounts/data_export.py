"""Download your data: everything of one reader's as one JSON file (the settings
page's link), what they put in and what the site keeps about them, for their
right of access and to take it elsewhere. Times are UTC, in ISO 8601.

What it holds, by key, and from where (every model with a key to the user):

- account: the login address, the addresses added (allauth's EmailAddress:
  which are verified, which is primary), the name if one is set, when they
  joined and last logged in.
- digest_preferences (DigestPreferences): as in effect, the defaults if never set.
- api_token (DRF's Token), private_feed (FeedToken): when made, or null.
  Never the key: either is a password to the account (the API token's is
  stored as it is, the feed's is re-made from SECRET_KEY). Tokens have no name
  and their use is not recorded, so there is nothing else to give.
- followed_topics (Follow), followed_authors (AuthorFollow), saved_papers
  (SavedPaper), ratings (Rating: 1 up, -1 down), saved_searches (SavedSearch),
  questions (Question: what they asked Ask, of a topic or a paper),
  relevance_flags (RelevanceFlag).
- digests (Digest, DigestPaper): each digest made for them, newest first, its
  status and the papers it brought (shown, or counted under "and N more"); a
  test digest's, those it showed, from its plan (it marks none as sent, and
  keeps no ids of those it counted). period_start is the period it was made
  in (a test digest's, the one it was asked in); papers_announced_since the
  day its papers were first announced since, as its mail's first line says
  (a test digest's, the start of the latest week harvested, which may be
  months before), null for one never planned.
- shown_papers (ShownPaper): what their feed had on screen, its "seen"
  marks, kept MOMENTUM_SEEN_DAYS.
- for_you (ReaderModel): when their For you model was trained, on how many
  saves and thumbs up, and when it last ranked papers.
- topic_exclusions (TopicExclusion.created_by): a curator's exclusions.

Left out: the password's hash; Ask's answers (not stored: the cache keeps one
a while for a reload); the For you model's weights and ranked ids (numbers drawn
from the saves and ratings given here); the papers a saved search matches (the
site's findings, on the search's page); sessions (a session's key is a
credential); permissions; admin's log of a staff member's changes (LogEntry:
the site's record of its content, naming other readers' rows); a digest's
failure reason and Message-ID (the mail server's words).

A lower app reads the upper apps' rows through the user's relations, or by
name (apps.get_model), as design.md's layers ask.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from collections.abc import Iterator
from datetime import date
from itertools import groupby
from operator import itemgetter
from typing import Any

from allauth.account.models import EmailAddress
from django.apps import apps
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection
from django.db import transaction
from django.db.models import F
from django.db.models import QuerySet
from django.utils import timezone
from django_ratelimit.core import get_usage
from rest_framework.authtoken.models import Token

from accounts.models import DigestPreferences
from accounts.models import FeedToken
from accounts.models import User

# Each list is one query, read CHUNK rows at a time by a cursor: a library of
# 50,000 papers is never held whole, and costs the queries of one paper.
CHUNK = 500

# The file is every row of the reader's: more downloads than this an hour are
# refused (429), so a loop cannot keep the database reading for them.
DOWNLOADS_PER_HOUR = 10


def filename(day: date) -> str:
    return f"momentum-data-{day:%Y-%m-%d}.json"


def take_download(user: User) -> int:
    """Count one download of the user's: 0 if allowed, else seconds until it
    is. The counters are django-ratelimit's in the shared cache, as Ask's and
    flags' (topics.limits); while the cache is down, downloads are let through."""
    usage = get_usage(
        None,
        group="data-export",
        key=lambda group, request: f"user:{user.pk}",
        rate=(DOWNLOADS_PER_HOUR, 3600),
        increment=True,
    )
    if usage is None or not usage["should_limit"]:
        return 0
    return max(usage["time_left"], 1)


def user_data(user: User) -> Iterator[str]:
    """The file, a piece at a time, as json.dumps(data, indent=2) writes it
    whole: its lists are read as they are written, all as of one moment.

    On PostgreSQL in one read-only, repeatable-read transaction, so that a save
    or a digest made while the file streams is in none of its lists or in all.
    SQLite's transactions here begin IMMEDIATE (config.settings), taking the
    write lock for as long as the download lasts: there each list is read as
    it comes."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield from _document(_sections(user))
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield from _document(_sections(user))


def _sections(user: User) -> Iterator[tuple[str, Any]]:
    yield "exported_at", timezone.now()
    yield "account", _account(user)
    yield "digest_preferences", _digest_preferences(user)
    yield "api_token", Token.objects.filter(user=user).values("created").first()
    yield (
        "private_feed",
        FeedToken.objects.filter(user=user).values(created=F("created_at")).first(),
    )
    yield (
        "followed_topics",
        _rows(
            user.follows.order_by("created_at", "pk"),
            topic="topic__slug",
            name="topic__name",
            muted="muted",
            followed_at="created_at",
        ),
    )
    yield (
        "followed_authors",
        _rows(
            user.author_follows.order_by("created_at", "pk"),
            author_id="author_id",
            name="author__name",
            followed_at="created_at",
        ),
    )
    yield (
        "saved_papers",
        _rows(
            user.saved_papers.order_by("-created_at", "-pk"),
            arxiv_id="paper__arxiv_id",
            title="paper__title",
            saved_at="created_at",
        ),
    )
    yield (
        "ratings",
        _rows(
            user.ratings.order_by("-created_at", "-pk"),
            arxiv_id="paper__arxiv_id",
            title="paper__title",
            rating="value",
            rated_at="created_at",
        ),
    )
    yield (
        "saved_searches",
        _rows(
            user.searches.order_by("created_at", "pk"),
            name="name",
            query="query",
            syntax="syntax",
            created_at="created_at",
        ),
    )
    yield (
        "questions",
        _rows(
            user.questions.order_by("-created_at", "-pk"),
            text="text",
            topic="topic__slug",
            paper="paper__arxiv_id",
            since="since",
            until="until",
            asked_at="created_at",
        ),
    )
    yield (
        "relevance_flags",
        _rows(
            _mine("topics", "RelevanceFlag", user).order_by("-created_at", "-pk"),
            topic="topic__slug",
            arxiv_id="paper__arxiv_id",
            flagged_at="created_at",
        ),
    )
    yield "digests", _digests(user)
    yield (
        "shown_papers",
        _rows(
            _mine("papers", "ShownPaper", user).order_by("-shown_at", "-pk"),
            arxiv_id="paper__arxiv_id",
            shown_at="shown_at",
        ),
    )
    yield (
        "for_you",
        _mine("papers", "ReaderModel", user)
        .values("trained_at", "positives", "scored_at")
        .first(),
    )
    yield (
        "topic_exclusions",
        _rows(
            apps.get_model("topics", "TopicExclusion")
            .objects.filter(created_by=user)
            .order_by("-created_at", "-pk"),
            topic="topic__slug",
            arxiv_id="paper__arxiv_id",
            reason="reason",
            excluded_at="created_at",
        ),
    )


def _account(user: User) -> dict[str, Any]:
    addresses = EmailAddress.objects.filter(user=user).order_by("-primary", "email")
    return {
        "email": user.email,
        "name": user.get_full_name(),
        "date_joined": user.date_joined,
        "last_login": user.last_login,
        "email_addresses": list(addresses.values("email", "verified", "primary")),
    }


def _digest_preferences(user: User) -> dict[str, Any]:
    preferences = DigestPreferences.objects.for_user(user)
    return {
        "frequency": preferences.frequency,
        "weekday": preferences.get_weekday_display(),
        "hour": preferences.hour,
        "time_zone": preferences.time_zone,
        "max_papers": preferences.max_papers,
    }


def _mine(app: str, model: str, user: User) -> QuerySet[Any]:
    """The user's rows of a model of an upper app, named, not imported."""
    return apps.get_model(app, model).objects.filter(user=user)


def _rows(queryset: QuerySet[Any], **fields: str) -> Iterator[dict[str, Any]]:
    """Each row as {name: value} for fields given as name=lookup."""
    rows = queryset.values_list(*fields.values()).iterator(chunk_size=CHUNK)
    return (dict(zip(fields, row, strict=True)) for row in rows)


DIGEST_FIELDS = [
    "kind",
    "frequency",
    "period_start",
    "status",
    "sent_at",
    "to_email",
    "paper_count",
]


def _digests(user: User) -> Iterator[dict[str, Any]]:
    """Each digest with its papers' arXiv ids: one row per paper (one, with no
    paper, for a digest of none), grouped as read.

    A test digest records no papers as sent (they stay new for the next
    digest): those its mail showed are read from its plan, and every digest's
    first day from its plan too, a batch of digests at a time, in one query
    for the batch."""
    rows = (
        user.digests.order_by("-due_at", "-pk", "items__pk")
        .values_list("pk", *DIGEST_FIELDS, "items__paper__arxiv_id")
        .iterator(chunk_size=CHUNK)
    )
    digests = []
    for pk, group in groupby(rows, key=itemgetter(0)):
        papers = list(group)
        digest = dict(zip(DIGEST_FIELDS, papers[0][1:-1], strict=True))
        digest["papers"] = [row[-1] for row in papers if row[-1] is not None]
        digests.append((pk, digest))
        if len(digests) == CHUNK:
            yield from _with_plans(user, digests)
            digests = []
    yield from _with_plans(user, digests)


def _with_plans(
    user: User, digests: list[tuple[int, dict[str, Any]]]
) -> Iterator[dict[str, Any]]:
    """Each digest with the day its mail's papers were first announced since
    (the mail's first line, notifications.content: the plan's `since`, or a
    late paper's section's, earlier; null if never planned), and a test
    digest's papers those its plan showed, in the mail's order (not those
    under "and N more": a plan counts them, and keeps no id). A paper deleted
    since is left out, as a sent digest's is."""
    kinds = {pk: digest["kind"] for pk, digest in digests}
    # SQLite reads each query as it comes: a digest deleted meanwhile has none.
    plans = {
        pk: (since, sections or [])
        for pk, since, sections in user.digests.filter(
            pk__in=[pk for pk, _ in digests]
        ).values_list("pk", "since", "sections")
    }
    shown = {
        pk: [entry[0] for section in sections for entry in section["papers"]]
        for pk, (_, sections) in plans.items()
        if kinds[pk] == "test"
    }
    wanted = {paper for pks in shown.values() for paper in pks}
    arxiv_ids = dict(
        apps.get_model("papers", "Paper")
        .objects.filter(pk__in=wanted)
        .values_list("pk", "arxiv_id")
        if wanted
        else []
    )
    for pk, digest in digests:
        since, sections = plans.get(pk, (None, []))
        days = [date.fromisoformat(s["since"]) for s in sections if "since" in s]
        digest["papers_announced_since"] = (
            min([since, *days]) if since is not None else None
        )
        digest["papers"] += [arxiv_ids[p] for p in shown.get(pk, []) if p in arxiv_ids]
        yield digest


def _dumps(value: Any, depth: int) -> str:
    """`value` as json.dumps(..., indent=2) writes it `depth` levels in."""
    text = json.dumps(value, cls=DjangoJSONEncoder, ensure_ascii=False, indent=2)
    return text.replace("\n", "\n" + "  " * depth)


def _document(sections: Iterable[tuple[str, Any]]) -> Iterator[str]:
    before = "{\n"
    for key, value in sections:
        yield f"{before}  {json.dumps(key)}: "
        before = ",\n"
        if not isinstance(value, Iterator):
            yield _dumps(value, 1)
            continue
        opening = "[\n"
        for item in value:
            yield opening + "    " + _dumps(item, 2)
            opening = ",\n"
        yield "[]" if opening == "[\n" else "\n  ]"
    yield "\n}\n"
