"""A reader's saved searches (private alerts) and the papers each matches."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from papers.models import Paper


class SavedSearch(models.Model):
    """A reader's own query, in the search syntax or the topic rule language;
    its matches (SavedSearchMatch) enter their feed and digest under its name.
    Written only by topics.saved_searches."""

    class Syntax(models.TextChoices):
        SEARCH = "search", "Search words"
        RULE = "rule", "Topic rule"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="searches"
    )
    name = models.CharField(max_length=80)
    query = models.TextField()
    syntax = models.CharField(max_length=6, choices=Syntax.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    # Moves on whenever its matches or its name change: the feed's shared
    # render is keyed by it (topics.reader_feed.Following.variant).
    revision = models.PositiveIntegerField(default=0)
    # Papers written (stored or changed) up to here were matched: after an
    # ingest only those written since are (topics.saved_searches).
    checked_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "name"], name="saved_search_unique_name"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.name}"


class SavedSearchMatch(models.Model):
    """A paper a saved search matches."""

    search = models.ForeignKey(
        SavedSearch, on_delete=models.CASCADE, related_name="matches"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    # When an ingest found it (match_new_papers): a paper harvested late, or
    # whose new version now matches, is new to the reader whatever its day.
    # None for the matches found when the search was saved, which the reader
    # saw on the search page, and for those that matched all along
    # (topics.saved_searches._found_at).
    found_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["search", "paper"], name="saved_search_match_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.search_id} ~ {self.paper_id}"
