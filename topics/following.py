"""Who follows which topic."""

from __future__ import annotations

from django.db.models import Count
from django.db.models import Max
from django.db.models import OuterRef
from django.db.models import QuerySet
from django.db.models import Subquery
from django.db.models.functions import Coalesce

from accounts.models import User
from papers.versions import content_changed
from papers.versions import reader_changed
from topics.models import Follow
from topics.models import Topic


def set_following(user: User, topic: Topic, following: bool) -> bool:
    """Follow or unfollow; idempotent; returns whether it changed anything. A
    change moves the topic's follower count on (its page shows it); the
    reader's own pages follow by key."""
    if following:
        _, changed = Follow.objects.get_or_create(user=user, topic=topic)
    else:
        changed = Follow.objects.filter(user=user, topic=topic).delete()[0] > 0
    if changed:
        content_changed(followers=[topic])
        reader_changed([user.pk])
    return changed


def account_deleted(sender: type, instance: User, **kwargs: object) -> None:
    """pre_delete of a user (their own deletion or admin's): the follows go
    with them, by cascade, so the topics they followed move their counts."""
    followed = Topic.objects.filter(follows__user=instance)
    slugs = list(followed.values_list("slug", flat=True))
    if slugs:
        content_changed(followers=slugs)


def with_follower_count(topics: QuerySet[Topic]) -> QuerySet[Topic]:
    """Annotate `follower_count`, as a subquery: a join would multiply any other
    count on the topics (their papers)."""
    followers = (
        Follow.objects.filter(topic=OuterRef("pk"))
        .order_by()
        .values("topic")
        .annotate(n=Count("id"))
        .values("n")
    )
    return topics.annotate(follower_count=Coalesce(Subquery(followers), 0))


def follows_fingerprint() -> str:
    """Changes whenever anyone follows or unfollows (rows are only added and
    deleted, and ids only grow), for caches of follower counts."""
    follows = Follow.objects.aggregate(count=Count("id"), last=Max("id"))
    return f"{follows['count']}:{follows['last']}"


def set_muted(follow: Follow, muted: bool) -> Follow:
    """Mute or unmute a followed topic in digests (the site's settings and the
    API both); idempotent. An update, not save(): only this field changes."""
    if follow.muted != muted:
        Follow.objects.filter(pk=follow.pk).update(muted=muted)
        follow.muted = muted
    return follow
