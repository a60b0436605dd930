"""Who follows which topic."""

from __future__ import annotations

from django.db.models import Exists
from django.db.models import OuterRef
from django.db.models import QuerySet

from accounts.models import User
from topics.models import Follow
from topics.models import Topic


def set_following(user: User, topic: Topic, following: bool) -> None:
    """Follow or unfollow; idempotent."""
    if following:
        Follow.objects.get_or_create(user=user, topic=topic)
    else:
        Follow.objects.filter(user=user, topic=topic).delete()


def with_follow_flag(topics: QuerySet[Topic], user: User) -> QuerySet[Topic]:
    """Annotate `is_followed` for this user, in the topics' own query."""
    if not user.is_authenticated:
        return topics
    return topics.annotate(
        is_followed=Exists(Follow.objects.filter(user=user, topic=OuterRef("pk")))
    )
