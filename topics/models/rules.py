"""Each paper's index terms, from which a rule's candidates are found."""

from __future__ import annotations

from typing import Any

from django.db import models

from papers.models import Paper


class RuleTermsField(models.TextField):
    """A paper's index terms: a tsvector on PostgreSQL (GIN-indexed, migration
    0008), text with the terms separated by spaces elsewhere (an FTS5 table kept
    by triggers serves it on SQLite). Written by topics.prefilter only."""

    def db_type(self, connection: Any) -> str:
        return "tsvector" if connection.vendor == "postgresql" else "text"


class RuleDocument(models.Model):
    """The index terms of one paper (topics.rules.terms), derived once from its
    text so that a rule's candidates are found in the database."""

    paper = models.OneToOneField(
        Paper, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    terms = RuleTermsField()
    # The paper's modified_at and the terms' version they were derived at: a
    # mismatch means derive again.
    source_modified = models.DateTimeField()
    version = models.PositiveSmallIntegerField()

    def __str__(self) -> str:
        return f"terms of paper {self.paper_id}"
