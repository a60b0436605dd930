"""Authors' pages and follows: an author's papers, frequent co-authors and
topics, and who follows whom. Who an author is: papers.identity."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Count
from django.db.models import OuterRef
from django.db.models import QuerySet
from django.db.models import Subquery
from django.shortcuts import get_object_or_404

from accounts.models import User
from papers.models import Author
from papers.models import AuthorFollow
from papers.models import Authorship
from papers.models import Paper
from papers.routes import address
from papers.versions import reader_changed

COAUTHORS_SHOWN = 10
TOPICS_SHOWN = 10
# Co-authors are counted over the author's newest papers holding at most this
# many author places (at least one paper), and at most this many papers: a
# collaboration's papers have hundreds of authors each, and counting every
# place of all of them took half a second for 300 papers of 500.
COAUTHOR_PLACES_COUNTED = 20_000
COAUTHOR_PAPERS_COUNTED = 1_000


@dataclass(frozen=True)
class Coauthor:
    id: int
    name: str
    shared: int

    def get_absolute_url(self) -> str:
        return Author(pk=self.id).get_absolute_url()


@dataclass(frozen=True)
class Coauthors:
    shown: list[Coauthor]
    # The author's newest papers they were counted over, and whether those
    # are fewer than all of theirs.
    papers: int
    capped: bool


@dataclass(frozen=True)
class AuthorTopic:
    slug: str
    name: str
    papers: int
    url: str


def get_author(author_id: int) -> Author:
    return get_object_or_404(Author, pk=author_id)


def papers_by(authors: Iterable[Any]) -> QuerySet[Paper]:
    """The papers of these authors (ids or Authors), newest first, each once."""
    written = Authorship.objects.filter(author__in=authors).values("paper_id")
    return Paper.objects.filter(pk__in=written).order_by("-first_announced", "-id")


def coauthors(author: Author, limit: int = COAUTHORS_SHOWN) -> Coauthors:
    """Who wrote the most papers with this author (by shared papers, then name)
    among their newest papers up to COAUTHOR_PLACES_COUNTED author places; two
    queries, each reading a bounded number of rows."""
    counted, capped = _papers_counted(author)
    if not counted:  # their papers were deleted
        return Coauthors([], 0, False)
    # Counted by author id first, and only then joined to the names: joined
    # before, every place carried its name through the grouping.
    sql = f"""
        SELECT counted.author_id, author.name, counted.shared
        FROM (
            SELECT author_id, COUNT(DISTINCT paper_id) AS shared
            FROM {Authorship._meta.db_table}
            WHERE paper_id IN ({", ".join(["%s"] * len(counted))})
                AND author_id <> %s
            GROUP BY author_id
        ) AS counted
        JOIN {Author._meta.db_table} AS author ON author.id = counted.author_id
        ORDER BY counted.shared DESC, author.name, counted.author_id
        LIMIT %s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [*counted, author.pk, limit])
        shown = [Coauthor(*row) for row in cursor.fetchall()]
    return Coauthors(shown, len(counted), capped)


def _papers_counted(author: Author) -> tuple[list[int], bool]:
    """The ids of the author's newest papers whose author places add up to at
    most COAUTHOR_PLACES_COUNTED (the newest always), and whether any of
    theirs is left out."""
    # A paper's places are its last position + 1: one step of the (paper,
    # position) index, where counting its authorships would read them all.
    last = Authorship.objects.filter(paper=OuterRef("pk")).order_by("-position")
    newest = papers_by([author]).annotate(last=Subquery(last.values("position")[:1]))
    rows = list(newest.values_list("pk", "last")[: COAUTHOR_PAPERS_COUNTED + 1])
    counted: list[int] = []
    places = 0
    for pk, last_position in rows[:COAUTHOR_PAPERS_COUNTED]:
        places += last_position + 1
        if counted and places > COAUTHOR_PLACES_COUNTED:
            return counted, True
        counted.append(pk)
    return counted, len(rows) > len(counted)


def author_topics(author: Author, limit: int = TOPICS_SHOWN) -> list[AuthorTopic]:
    """The active topics holding most of this author's papers; one query."""
    # Tags live in the topics app, which builds on this one: reached through
    # the relation, not imported.
    tags = Paper._meta.get_field("paper_topics").related_model._default_manager
    written = Authorship.objects.filter(author=author).values("paper_id")
    rows = (
        tags.filter(paper_id__in=written, topic__is_active=True)
        .values("topic__slug", "topic__name")
        .annotate(papers=Count("paper_id", distinct=True))
        .order_by("-papers", "topic__name")[:limit]
    )
    return [
        AuthorTopic(
            row["topic__slug"],
            row["topic__name"],
            row["papers"],
            address("topics:detail", "slug", row["topic__slug"]),
        )
        for row in rows
    ]


def set_following_author(user: User, author: Author, following: bool) -> bool:
    """Follow or unfollow an author; idempotent; returns whether it changed
    anything. Only the reader's own state changes (their follow buttons, feed
    and digest)."""
    if following:
        _, changed = AuthorFollow.objects.get_or_create(user=user, author=author)
    else:
        changed = AuthorFollow.objects.filter(user=user, author=author).delete()[0] > 0
    if changed:
        reader_changed([user.pk])
    return changed


def followed_authors(user_id: Any) -> list[tuple[int, str]]:
    """(id, name) of the authors the reader follows, in the order followed."""
    follows = AuthorFollow.objects.filter(user_id=user_id).order_by("created_at", "pk")
    return list(follows.values_list("author_id", "author__name"))
