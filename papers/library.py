"""A reader's own state of papers: their library (saved papers), and which papers
their feed has shown them ("seen")."""

from __future__ import annotations

import hashlib
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
from papers.pagecache import ReaderState
from papers.versions import reader_changed


def set_saved(user: User, paper: Paper, saved: bool) -> None:
    """Save or unsave; idempotent, so a repeated click or request changes nothing."""
    if saved:
        _, changed = SavedPaper.objects.get_or_create(user=user, paper=paper)
    else:
        changed = SavedPaper.objects.filter(user=user, paper=paper).delete()[0] > 0
    if changed:
        reader_changed([user.pk])


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


# A feed shown again within this long is not written again: "seen" is the same,
# and a reader's repeated visits cost no database writes.
SHOWN_RECORDED_SECONDS = 60 * 60


def record_shown(user: User, paper_ids: list[int], page: ReaderState) -> None:
    """Remember that the reader's feed showed these papers (ids) now, and forget
    what it last showed more than MOMENTUM_SEEN_DAYS ago. Idempotent: the same
    page showing the same papers again within SHOWN_RECORDED_SECONDS writes
    nothing, as the page's own state (read with it) says what it recorded."""
    digest = hashlib.sha256(repr(sorted(paper_ids)).encode()).hexdigest()[:32]
    if page.shown == digest:
        return
    _write_shown(user, paper_ids)
    page.note_shown(digest, SHOWN_RECORDED_SECONDS)


@transaction.atomic  # one transaction, not one per statement
def _write_shown(user: User, paper_ids: list[int]) -> None:
    reader_changed([user.pk])
    now = timezone.now()
    ShownPaper.objects.bulk_create(
        [ShownPaper(user=user, paper_id=pk, shown_at=now) for pk in paper_ids],
        update_conflicts=True,
        unique_fields=["user", "paper"],
        update_fields=["shown_at"],
    )
    forget = now - timedelta(days=settings.MOMENTUM_SEEN_DAYS)
    ShownPaper.objects.filter(user=user, shown_at__lt=forget).delete()
