from __future__ import annotations

from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


class PapersConfig(AppConfig):
    name = "papers"

    def ready(self) -> None:
        # Every deploy migrates: pages cached from the previous release's
        # templates are then rendered anew, not served until they expire.
        post_migrate.connect(_pages_changed, sender=self)
        connection_created.connect(_add_sqlite_functions)


def _pages_changed(**kwargs: object) -> None:
    from papers.versions import content_changed

    content_changed()


def _add_sqlite_functions(sender: object, connection: object, **kwargs: object) -> None:
    """SQLite's search index reads paper text through papers_plain_letters
    (migration 0014's triggers): every connection that may write papers has it."""
    if connection.vendor != "sqlite":  # type: ignore[attr-defined]
        return
    from papers.letters import plain_letters

    connection.connection.create_function(  # type: ignore[attr-defined]
        "papers_plain_letters",
        1,
        lambda text: text if text is None else plain_letters(text),
        deterministic=True,
    )
