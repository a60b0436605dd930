from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import date
from datetime import datetime

from accounts.models import DigestPreferences
from accounts.models import User
from notifications.models import Digest
from papers.models import Paper
from topics.models import PaperTopic
from topics.models import Topic

_ids = itertools.count(1)


def preferences(user: User, **fields: object) -> DigestPreferences:
    prefs, _ = DigestPreferences.objects.update_or_create(user=user, defaults=fields)
    user.digest = prefs
    return prefs


def add_papers(
    topics: Topic | Sequence[Topic],
    day: date,
    count: int = 1,
    *,
    title: str = "A paper",
    abstract: str = "We study agents. Then we study them more.",
    authors: str = "Ada Lovelace, Alan Turing",
) -> list[Paper]:
    """Papers first announced on `day`, tagged into `topics`."""
    topics = [topics] if isinstance(topics, Topic) else list(topics)
    papers = Paper.objects.bulk_create(
        Paper(
            arxiv_id=f"2699.{next(_ids):05d}",
            version=1,
            title=f"{title} {n}" if count > 1 else title,
            abstract=abstract,
            author_names=authors,
            first_announced=day,
        )
        for n in range(count)
    )
    PaperTopic.objects.bulk_create(
        PaperTopic(paper=paper, topic=topic) for paper in papers for topic in topics
    )
    return papers


def sent_weekly_digest(
    user: User, period_start: date, due_at: datetime | str
) -> Digest:
    """The last weekly digest the user received: its period, and when it was due."""
    return Digest.objects.create(
        user=user,
        frequency="weekly",
        period_start=period_start,
        due_at=due_at,
        status=Digest.Status.SENT,
    )


class FailingBackend:
    """A mail connection that fails as told (settings.EMAIL_BACKEND =
    FAILING_BACKEND, then FailingBackend.error = ...)."""

    error: Exception

    def __init__(self, *args, **kwargs):
        pass

    def send_messages(self, messages):
        raise self.error


FAILING_BACKEND = f"{__name__}.FailingBackend"
