"""Authors' pages and follows: an author's papers, frequent co-authors and
topics, and who follows whom. Who an author is: papers.identity."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Count
from django.db.models import QuerySet
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


@dataclass(frozen=True)
class Coauthor:
    id: int
    name: str
    shared: int

    def get_absolute_url(self) -> str:
        return Author(pk=self.id).get_absolute_url()


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


def coauthors(author: Author, limit: int = COAUTHORS_SHOWN) -> list[Coauthor]:
    """Who wrote the most papers with this author (by shared papers, then name);
    one query."""
    written = Authorship.objects.filter(author=author).values("paper_id")
    rows = (
        Authorship.objects.filter(paper_id__in=written)
        .exclude(author=author)
        .values("author_id", "author__name")
        .annotate(shared=Count("paper_id", distinct=True))
        .order_by("-shared", "author__name", "author_id")[:limit]
    )
    return [
        Coauthor(row["author_id"], row["author__name"], row["shared"]) for row in rows
    ]


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
