"""Output serializers for papers, and the staff views of ingestion.

Paper serializers read what papers.query.with_listing_data prefetches (the tags
of active topics, the primary category) plus categories, and the authors
papers.query.with_authors gives (in order, with affiliations for the detail), so
a page of papers costs a fixed number of queries.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers
from rest_framework.reverse import reverse

from core.api.fields import Choice
from core.api.fields import Integer
from core.api.fields import StrictSerializer
from core.api.fields import Text
from papers.bibtex import bibtex_entry
from papers.export import csl_item
from papers.export import ris_entry
from papers.models import Category
from papers.models import FeedSource
from papers.models import IngestRun
from papers.models import Paper
from papers.query import ListedAuthor

# New ids (2606.01234v2) and old ones (math/0601001v2, hep-th/9901001).
ARXIV_ID_PATH = (
    r"[A-Za-z][-A-Za-z.]*/[0-9]{7}(?:v[0-9]+)?|[0-9]{4}\.[0-9]{4,5}(?:v[0-9]+)?"
)


class LinksSerializer(serializers.Serializer):
    api = serializers.URLField(help_text="This paper in the API.")
    page = serializers.URLField(help_text="This paper's page on the site.")
    abs = serializers.URLField(help_text="The abstract page on arXiv.")
    pdf = serializers.URLField(help_text="The PDF on arXiv.")


# An active topic of the paper, read from its tag (`active_tags`).
class PaperTopicSerializer(serializers.Serializer):
    slug = serializers.SlugField(source="topic.slug")
    name = serializers.CharField(source="topic.name")


class PaperTagSerializer(serializers.Serializer):
    slug = serializers.SlugField(source="topic.slug")
    name = serializers.CharField(source="topic.name")
    # Declared fields: DRF's metaclass takes them off the class (the stubs see
    # Field.source, Serializer.errors, a parent's field of another kind).
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=["rule", "model", "pin", "judge"],
        help_text="rule: the topic's rule matched; model: the topic's relevance "
        "model is confident it belongs; pin: a curator put it there; judge: a "
        "language model judged a paper the model was unsure of to belong.",
    )
    matched_terms = serializers.ListField(
        child=serializers.CharField(), help_text="The rule's terms that matched."
    )
    score = serializers.FloatField(
        allow_null=True,
        help_text="The topic model's probability (0 to 1) that the paper belongs; "
        "null where the topic has no model.",
    )


class AuthorSerializer(serializers.Serializer):
    id = serializers.IntegerField(
        help_text="The author's id, which me/followed-authors/ takes (the site's "
        "/authors/<id>/).",
    )
    name = serializers.CharField()
    affiliations = serializers.SerializerMethodField()

    def get_affiliations(self, author: ListedAuthor) -> list[str]:
        return author.affiliations


class VersionSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    submitted = serializers.DateTimeField()
    size = serializers.CharField(allow_blank=True)


def paper_links(paper: Paper, request: Any) -> dict[str, str]:
    return {
        "api": reverse(
            "api:paper-detail", kwargs={"arxiv_id": paper.arxiv_id}, request=request
        ),
        "page": request.build_absolute_uri(paper.get_absolute_url()),
        "abs": paper.abs_url,
        "pdf": paper.pdf_url,
    }


TEX_AS_WRITTEN = (
    'As arXiv has it: TeX ($\\alpha$, Schr\\"odinger), which the site shows rendered.'
)


class PaperSerializer(serializers.ModelSerializer):
    """A paper as lists show it."""

    versioned_id = serializers.CharField(help_text="The arXiv id with its version.")
    title = serializers.CharField(help_text=TEX_AS_WRITTEN)
    abstract = serializers.CharField(help_text=TEX_AS_WRITTEN)
    authors = serializers.SerializerMethodField(help_text="Names, in order.")
    primary_category = serializers.SlugRelatedField[Category](
        slug_field="code", read_only=True, allow_null=True
    )
    categories = serializers.SlugRelatedField[Category](
        slug_field="code", many=True, read_only=True
    )
    topics = PaperTopicSerializer(source="active_tags", many=True, read_only=True)
    links = serializers.SerializerMethodField()

    class Meta:
        model = Paper
        fields = [
            "arxiv_id",
            "version",
            "versioned_id",
            "title",
            "abstract",
            "authors",
            "primary_category",
            "categories",
            "first_announced",
            "published",
            "updated",
            "withdrawn",
            "topics",
            "links",
        ]

    def get_authors(self, paper: Paper) -> list[str]:
        return [author.name for author in paper.listed_authors]  # type: ignore[attr-defined]

    @extend_schema_field(LinksSerializer)
    def get_links(self, paper: Paper) -> dict[str, str]:
        return paper_links(paper, self.context["request"])


class PaperDetailSerializer(PaperSerializer):
    """A paper with everything its page shows: its topics each say why it is
    there."""

    authors = AuthorSerializer(source="listed_authors", many=True, read_only=True)  # type: ignore[assignment]
    topics = serializers.SerializerMethodField()  # type: ignore[assignment]
    versions = VersionSerializer(many=True, read_only=True)
    bibtex = serializers.SerializerMethodField()
    ris = serializers.SerializerMethodField()
    csl = serializers.SerializerMethodField()

    class Meta:
        model = Paper
        fields = [
            "arxiv_id",
            "version",
            "versioned_id",
            "title",
            "abstract",
            "authors",
            "primary_category",
            "categories",
            "comment",
            "journal_ref",
            "doi",
            "license",
            "first_announced",
            "published",
            "updated",
            "withdrawn",
            "versions",
            "topics",
            "bibtex",
            "ris",
            "csl",
            "links",
        ]

    @extend_schema_field(PaperTagSerializer(many=True))
    def get_topics(self, paper: Paper) -> list[dict]:
        # Its tags as get_paper read them (with_listing_data's active_tags).
        tags = paper.active_tags  # type: ignore[attr-defined]
        return PaperTagSerializer(tags, many=True).data  # type: ignore[return-value]  # many=True: a list

    def get_bibtex(self, paper: Paper) -> str:
        return bibtex_entry(paper)

    def get_ris(self, paper: Paper) -> str:
        """The paper as one RIS record (TY RPRT ... ER), lines ending in CRLF."""
        return ris_entry(paper)

    @extend_schema_field(
        {
            "type": "object",
            "additionalProperties": True,
            "description": "The paper as one CSL-JSON item (CSL 1.0.2, type "
            "article): id, type, title, author, issued, URL and the others it has.",
        }
    )
    def get_csl(self, paper: Paper) -> dict[str, Any]:
        return csl_item(paper)


# One page object, also where list views would make it an array of pages.
@extend_schema_serializer(many=False)
class PaperPageSerializer(serializers.Serializer):
    next = serializers.URLField(
        allow_null=True, help_text="The next page; null on the last."
    )
    results = PaperSerializer(many=True)


class SimilarPapersSerializer(serializers.Serializer):
    results = PaperSerializer(
        many=True, help_text="At most 10, the nearest by text first."
    )


class SavedPaperSerializer(serializers.Serializer):
    saved_at = serializers.DateTimeField()
    paper = PaperSerializer(source="*")


class SaveInputSerializer(StrictSerializer):
    paper = Text(
        pattern=rf"\A(?:{ARXIV_ID_PATH})\Z",
        max_length=60,
        help_text="An arXiv id, with or without its version.",
    )


class RatingSerializer(serializers.Serializer):
    """One paper of the caller's signal (papers.library.signal_papers)."""

    paper = serializers.CharField(
        source="arxiv_id", help_text="The paper's arXiv id, without version."
    )
    rating = serializers.ChoiceField(
        choices=[1, -1],
        source="signal",
        help_text="1 (thumbs up) or -1 (thumbs down). A saved paper the caller "
        "did not rate counts as 1.",
    )
    created_at = serializers.DateTimeField(
        source="signal_at",
        help_text="When the caller rated it (last changed), or else saved it.",
    )
    rated = serializers.BooleanField(
        source="is_rated", help_text="Whether the caller rated it (else: saved)."
    )
    saved = serializers.BooleanField(
        source="is_saved", help_text="Whether the paper is among the saved ones."
    )


@extend_schema_serializer(many=False)
class RatingPageSerializer(serializers.Serializer):
    next = serializers.URLField(
        allow_null=True, help_text="The next page; null on the last."
    )
    results = RatingSerializer(many=True)


class RatingInputSerializer(StrictSerializer):
    paper = Text(
        pattern=rf"\A(?:{ARXIV_ID_PATH})\Z",
        max_length=60,
        help_text="An arXiv id, with or without its version.",
    )
    rating = Choice(
        choices=[1, -1],
        help_text="1 (thumbs up) or -1 (thumbs down), a JSON integer.",
        error_messages={
            "invalid_choice": "A rating is 1 (thumbs up) or -1 (thumbs down)."
        },
    )


class RejectedEntrySerializer(serializers.Serializer):
    entry = serializers.CharField(help_text="The arXiv id or the entry's position.")
    message = serializers.CharField()


class IngestRunSerializer(serializers.ModelSerializer):
    errors = RejectedEntrySerializer(many=True, read_only=True)  # type: ignore[assignment]
    feed = serializers.SlugRelatedField[FeedSource](
        slug_field="name", read_only=True, allow_null=True
    )
    duration_seconds = serializers.SerializerMethodField()

    class Meta:
        model = IngestRun
        fields = [
            "id",
            "source",
            "feed",
            "format",
            "status",
            "started_at",
            "finished_at",
            "duration_seconds",
            "fetched_count",
            "new_count",
            "updated_count",
            "unchanged_count",
            "rejected_count",
            "errors",
            "message",
        ]

    def get_duration_seconds(self, run: IngestRun) -> float | None:
        return run.duration.total_seconds() if run.duration else None


class FeedSourceSerializer(serializers.ModelSerializer):
    class Meta:
        model = FeedSource
        fields = [
            "id",
            "name",
            "kind",
            "category",
            "query",
            "enabled",
            "next_run_at",
            "last_success_at",
            "last_error",
            "last_error_at",
            "harvested_until",
            "created_at",
            "updated_at",
        ]


class AuthorRefSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="As in the page's address /authors/<id>/.")
    name = serializers.CharField(help_text="The name as the author's papers print it.")


class AuthorFollowSerializer(serializers.Serializer):
    author = AuthorRefSerializer()
    followed_at = serializers.DateTimeField(source="created_at")


class AuthorFollowInputSerializer(StrictSerializer):
    author = Integer(
        min_value=1,
        max_value=2**63 - 1,
        help_text="The author's id (as in their page's address /authors/<id>/).",
    )
