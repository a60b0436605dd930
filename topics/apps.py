from __future__ import annotations

from django.apps import AppConfig


class TopicsConfig(AppConfig):
    name = "topics"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import m2m_changed
        from django.db.models.signals import pre_delete

        from papers.slots import FILLERS
        from topics import flags
        from topics import following
        from topics.awaiting import awaiting_slot
        from topics.models import Topic
        from topics.models.topic import related_changed

        m2m_changed.connect(related_changed, sender=Topic.related.through)
        pre_delete.connect(following.account_deleted, sender=get_user_model())
        pre_delete.connect(flags.account_deleted, sender=get_user_model())

        # Topic pages are rendered once for everyone (papers.pagecache): staff's
        # "N awaiting review" is a slot, filled for each request.
        FILLERS["awaiting"] = awaiting_slot
