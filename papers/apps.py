from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate
from django.db.models.signals import post_save


class PapersConfig(AppConfig):
    name = "papers"

    def ready(self) -> None:
        # Every deploy migrates: pages cached from the previous release's
        # templates are then rendered anew, not served until they expire.
        post_migrate.connect(_pages_changed, sender=self)
        connection_created.connect(_add_sqlite_functions)
        # A reader's pages tell times in the zone of their settings (papers.
        # slots), which accounts, below this app, stores without knowing it.
        post_save.connect(_zone_changed, sender="accounts.DigestPreferences")


def _pages_changed(**kwargs: object) -> None:
    from papers.versions import content_changed

    content_changed()


def _zone_changed(instance: Any, **kwargs: object) -> None:
    from papers.versions import reader_changed

    reader_changed([instance.user_id])


def _add_sqlite_functions(sender: object, connection: object, **kwargs: object) -> None:
    """SQLite's search index reads paper text through papers_search_text
    (migration 0015's triggers; papers_plain_letters for 0014, which runs
    before it on a new database): every connection that may write papers has
    them."""
    if connection.vendor != "sqlite":  # type: ignore[attr-defined]
        return
    from papers.letters import plain_letters
    from papers.letters import search_text

    for name, function in (
        ("papers_plain_letters", plain_letters),
        ("papers_search_text", search_text),
    ):
        connection.connection.create_function(  # type: ignore[attr-defined]
            name,
            1,
            lambda text, function=function: text if text is None else function(text),
            deterministic=True,
        )
