"""A user's saved papers (their library): saving, and what is saved where shown."""

from __future__ import annotations

from django.db.models import Exists
from django.db.models import OuterRef
from django.db.models import QuerySet

from accounts.models import User
from papers.models import Paper
from papers.models import SavedPaper


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
