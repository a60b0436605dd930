from __future__ import annotations

from django.apps import AppConfig


class TopicsConfig(AppConfig):
    name = "topics"

    def ready(self) -> None:
        from papers.slots import FILLERS
        from topics.awaiting import awaiting_slot

        # Topic pages are rendered once for everyone (papers.pagecache): staff's
        # "N awaiting review" is a slot, filled for each request.
        FILLERS["awaiting"] = awaiting_slot
