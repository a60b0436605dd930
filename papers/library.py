"""A reader's own state of papers: their library (saved papers), their ratings
(thumbs up or down), what the two say together (their signal), and which papers
their feed had on their screen ("seen")."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError
from django.db import transaction
from django.db.models import Exists
from django.db.models import IntegerField
from django.db.models import OuterRef
from django.db.models import QuerySet
from django.db.models import Subquery
from django.db.models import Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.module_loading import import_string

from accounts.models import User
from papers.models import Paper
from papers.models import Rating
from papers.models import SavedPaper
from papers.models import ShownPaper
from papers.versions import reader_changed


def set_saved(user: User, paper: Paper, saved: bool) -> bool:
    """Save or unsave; idempotent, so a repeated click or request changes
    nothing. Returns whether it changed anything."""
    if saved:
        _, changed = SavedPaper.objects.get_or_create(user=user, paper=paper)
    else:
        changed = SavedPaper.objects.filter(user=user, paper=paper).delete()[0] > 0
    if changed:
        ratings_changed(user)
    return changed


def set_rating(user: User, paper: Paper, value: int | None) -> int | None:
    """Rate a paper up (Rating.UP) or down (Rating.DOWN), or clear its rating
    (None); idempotent. Returns the rating it replaced (None if there was none).
    A changed rating is dated anew: it is what the reader says now."""
    if value not in (Rating.UP, Rating.DOWN, None):
        raise ValueError(
            f"A rating is {Rating.UP}, {Rating.DOWN} or None, not {value!r}."
        )
    try:
        before = _replace_rating(user, paper, value)
    except IntegrityError:
        # Another request rated it first (two clicks at once): its row stands
        # now, and is changed as any other.
        before = _replace_rating(user, paper, value)
    if before != value:
        ratings_changed(user)
    return before


@transaction.atomic
def _replace_rating(user: User, paper: Paper, value: int | None) -> int | None:
    current = Rating.objects.select_for_update().filter(user=user, paper=paper).first()
    before = current.value if current else None
    if before == value:
        return before
    if value is None:
        Rating.objects.filter(user=user, paper=paper).delete()
    elif current is None:
        Rating.objects.create(user=user, paper=paper, value=value)
    else:
        current.value, current.created_at = value, timezone.now()
        current.save(update_fields=["value", "created_at"])
    return before


def ratings_changed(user: User) -> None:
    """What follows a change of the reader's signal (a save, unsave or rating):
    their pages, and what MOMENTUM_SIGNAL_CHANGED does (their For you model)."""
    reader_changed([user.pk])
    import_string(settings.MOMENTUM_SIGNAL_CHANGED)(user.pk)


def signal_papers(user: User | int) -> QuerySet[Paper]:
    """The papers the reader saved or rated, annotated with `signal` (+1 or -1)
    and `signal_at` (when they said so): a rating is what they said, a saved
    paper they did not rate counts as +1 from when they saved it. Most recent
    first (`-signal_at`, `-pk`)."""
    rated = Rating.objects.filter(user=user, paper=OuterRef("pk"))
    saved = SavedPaper.objects.filter(user=user, paper=OuterRef("pk"))
    # One list of ids (a UNION): an OR of two IN would read every paper.
    mine = (
        Rating.objects.filter(user=user)
        .order_by()
        .values("paper_id")
        .union(SavedPaper.objects.filter(user=user).order_by().values("paper_id"))
    )
    return (
        Paper.objects.filter(pk__in=mine)
        .annotate(
            rating=Subquery(rated.values("value")[:1]),
            signal=Coalesce("rating", Value(Rating.UP), output_field=IntegerField()),
            signal_at=Coalesce(
                Subquery(rated.values("created_at")[:1]),
                Subquery(saved.values("created_at")[:1]),
            ),
            is_rated=Exists(rated),
            is_saved=Exists(saved),
        )
        .order_by("-signal_at", "-pk")
    )


def reader_signal(user: User) -> dict[int, int]:
    """{paper id: +1 or -1} of what the reader saved or rated (signal_papers)."""
    # `signal` is signal_papers' annotation, which its return type does not name.
    return dict(signal_papers(user).values_list("pk", "signal"))  # type: ignore[misc]


def rated_papers(
    paper_ids: list[int] | None = None, user_ids: list[int] | None = None
) -> dict[int, list[int]]:
    """Reader -> the papers they saved or rated either way: of these papers (or
    of all), for these readers (or for all). Two queries."""
    rated: dict[int, list[int]] = defaultdict(list)
    for signal in (Rating.objects.all(), SavedPaper.objects.all()):
        if paper_ids is not None:
            signal = signal.filter(paper_id__in=paper_ids)
        if user_ids is not None:
            signal = signal.filter(user_id__in=user_ids)
        for user_id, paper_id in signal.values_list("user_id", "paper_id").iterator():
            rated[user_id].append(paper_id)
    return dict(rated)


def rating_of(user: User, paper: Paper) -> int | None:
    return (
        Rating.objects.filter(user=user, paper=paper)
        .values_list("value", flat=True)
        .first()
    )


def with_saved_flag(papers: QuerySet[Paper], user: User) -> QuerySet[Paper]:
    """Annotate `is_saved` for this user, in the papers' own query."""
    if not user.is_authenticated:
        return papers
    return papers.annotate(
        is_saved=Exists(SavedPaper.objects.filter(user=user, paper=OuterRef("pk")))
    )


def saved_papers(user: User) -> QuerySet[Paper]:
    """The user's library, most recently saved first; saves of one moment by
    their order (a page's offset needs a total order: ties are in any order,
    which may differ from one page to the next)."""
    return Paper.objects.filter(saves__user=user).order_by(
        "-saves__created_at", "-saves__id"
    )


# How many papers one report of those seen may name: a feed page's, with room.
MAX_SEEN_REPORTED = 100


@transaction.atomic  # one transaction, not one per statement
def record_seen(user: User, arxiv_ids: Collection[str]) -> None:
    """Remember that the reader had these papers of their feed on screen now
    (site.js reports them), and forget those seen more than
    MOMENTUM_SEEN_DAYS ago. Ids of no paper held are passed over."""
    now = timezone.now()
    papers = set(
        Paper.objects.filter(arxiv_id__in=arxiv_ids).values_list("pk", flat=True)
    )
    shown = ShownPaper.objects.filter(user=user)
    marked = set(shown.filter(paper__in=papers).values_list("paper_id", flat=True))
    ShownPaper.objects.bulk_create(
        [ShownPaper(user=user, paper_id=pk, shown_at=now) for pk in papers],
        update_conflicts=True,
        unique_fields=["user", "paper"],
        update_fields=["shown_at"],
    )
    forget = now - timedelta(days=settings.MOMENTUM_SEEN_DAYS)
    forgotten, _ = shown.filter(shown_at__lt=forget).delete()
    # Every visit reports the rows on screen again: the pages showing which
    # are seen change only when some are new to it, or forgotten.
    if papers - marked or forgotten:
        reader_changed([user.pk])
