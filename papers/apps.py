from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class PapersConfig(AppConfig):
    name = "papers"

    def ready(self) -> None:
        # Every deploy migrates: pages cached from the previous release's
        # templates are then rendered anew, not served until they expire.
        post_migrate.connect(_pages_changed, sender=self)


def _pages_changed(**kwargs: object) -> None:
    from papers.versions import content_changed

    content_changed()
