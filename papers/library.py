"""A reader's own state of papers: their library (saved papers), and which papers
their feed has shown them ("seen")."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists
from django.db.models import OuterRef
from django.db.models import QuerySet
from django.utils import timezone

from accounts.models import User
from papers.models import Paper
from papers.models import SavedPaper
from papers.models import ShownPaper


def set_saved(user: User, paper: Paper, saved: bool) -> None:
    """Save or unsave; idempotent, so a repeated click or request changes nothing."""
    if saved:
        SavedPaper.objects.get_or_create(user=user, paper=paper)
    else:
        SavedPaper.objects.filter(user=user, paper=paper).delete()


def with_saved_flag(papers: QuerySet[Paper], user: User) -> QuerySet[Paper]:
    """Annotate `is_saved` for this user, in the papers' own query."""
    if not user.is_authenticated:
        return papers
    return papers.annotate(
        is_saved=Exists(SavedPaper.objects.filter(user=user, paper=OuterRef("pk")))
    )


def saved_papers(user: User) -> QuerySet[Paper]:
    """The user's library, most recently saved first."""
    return Paper.objects.filter(saves__user=user).order_by("-saves__created_at")


@transaction.atomic  # one transaction, not one per statement
def record_shown(user: User, paper_ids: list[int]) -> None:
    """Remember that the reader's feed showed these papers (ids) now, and forget
    what it last showed more than MOMENTUM_SEEN_DAYS ago. Idempotent."""
    now = timezone.now()
    ShownPaper.objects.bulk_create(
        [ShownPaper(user=user, paper_id=pk, shown_at=now) for pk in paper_ids],
        update_conflicts=True,
        unique_fields=["user", "paper"],
        update_fields=["shown_at"],
    )
    forget = now - timedelta(days=settings.MOMENTUM_SEEN_DAYS)
    ShownPaper.objects.filter(user=user, shown_at__lt=forget).delete()
