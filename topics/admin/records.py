"""Admin lists of what hangs off topics: tags, exclusions, follows, questions,
relevance models and the judge's verdicts."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.text import Truncator

from core.admin import ReadersHidden
from core.admin import ReadOnlyRecords
from papers.admin import ArxivIdSearch
from papers.latex import latex_to_text
from topics.admin.permissions import CuratedRows
from topics.curation import lift_exclusions
from topics.curation import unpin_papers
from topics.models import Follow
from topics.models import JudgeVerdict
from topics.models import PaperTopic
from topics.models import Question
from topics.models import Topic
from topics.models import TopicExclusion
from topics.models import TopicModel


class PaperColumns:
    """A ModelAdmin mixin: the row's paper ("arXiv id: title") and topic in
    columns that wrap, where admin keeps a foreign key's on one line: the
    paper's pushed the list's other columns (reason, who, when) past the
    right edge of a laptop's screen."""

    @admin.display(description="paper", ordering="paper")
    def paper_text(self, row: Any) -> str:
        paper = row.paper
        return f"{paper.arxiv_id}: {Truncator(latex_to_text(paper.title)).chars(80)}"

    @admin.display(description="topic", ordering="topic")
    def topic_text(self, row: Any) -> str:
        return row.topic.name


# A row names its paper by id and title: not its abstract and search vector
# (4 KB a row, carried through a deep page's sort), unless it shows them.
PAPER_UNREAD = ("paper__abstract", "paper__search_vector", "paper__versions")


class PaperListAdmin(ArxivIdSearch, admin.ModelAdmin):
    """A list of a kind of topics' papers, searched by the paper: the topic is
    the filter's (a word of its name would match every paper of it)."""

    arxiv_id_field = "paper__arxiv_id"
    search_fields = ["paper__arxiv_id", "paper__title"]
    search_help_text = (
        "An arXiv id (as arXiv writes it, any version) or words of the title."
    )

    paper_unread: tuple[str, ...] = PAPER_UNREAD

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).defer(*self.paper_unread)


def by_topic(rows: QuerySet) -> dict[Topic, list[int]]:
    """The ids of the papers of these rows (tags, exclusions, queue items),
    by topic: each topic's decided in one go."""
    topics = {
        topic.pk: topic for topic in Topic.objects.filter(pk__in=rows.values("topic"))
    }
    papers: dict[Topic, list[int]] = {}
    for topic_id, paper_id in rows.values_list("topic_id", "paper_id"):
        papers.setdefault(topics[topic_id], []).append(paper_id)
    return papers


@admin.register(PaperTopic)
class PaperTopicAdmin(CuratedRows, ReadOnlyRecords, PaperColumns, PaperListAdmin):
    """Tags are written by tagging and topics.curation alone (a pin lifts an
    exclusion, the topic's pages and model follow): curators pin and exclude
    on the topic's page or in the review queue; here, unpin."""

    list_display = ["paper_text", "topic_text", "source", "matched_terms", "created_at"]
    list_filter = ["source", "topic"]
    list_select_related = ["paper", "topic"]
    show_full_result_count = False
    actions = ["unpin"]

    @admin.action(
        description="Unpin the selected pinned papers (the rule decides)",
        permissions=["curate"],
    )
    def unpin(self, request: HttpRequest, queryset: QuerySet[PaperTopic]) -> None:
        pins = by_topic(queryset.filter(source=PaperTopic.Source.PIN))
        for topic, paper_ids in pins.items():
            unpin_papers(topic, paper_ids)
        count = sum(map(len, pins.values()))
        self.message_user(request, f"Unpinned {count} paper(s).")


@admin.register(TopicExclusion)
class TopicExclusionAdmin(CuratedRows, ReadOnlyRecords, PaperColumns, PaperListAdmin):
    """Written by topics.curation alone, as tags are: here, lift."""

    list_display = ["paper_text", "topic_text", "reason", "created_by", "created_at"]
    list_filter = ["topic"]
    list_select_related = ["paper", "topic", "created_by"]
    show_full_result_count = False
    actions = ["lift"]

    @admin.action(
        description="Lift the selected exclusions (the rule decides)",
        permissions=["curate"],
    )
    def lift(self, request: HttpRequest, queryset: QuerySet[TopicExclusion]) -> None:
        exclusions = by_topic(queryset)
        for topic, paper_ids in exclusions.items():
            lift_exclusions(topic, paper_ids)
        count = sum(map(len, exclusions.values()))
        self.message_user(request, f"Lifted {count} exclusion(s).")


@admin.register(Follow)
class FollowAdmin(ReadersHidden, ReadOnlyRecords, admin.ModelAdmin):
    """Written by topics.following (the topic's follower count and the
    reader's pages follow), which readers reach from the site and the API."""

    list_display = ["user", "topic", "muted", "created_at"]
    list_filter = ["topic", "muted"]
    list_select_related = ["user", "topic"]
    search_fields = ["user__email", "topic__name"]


@admin.register(Question)
class QuestionAdmin(ReadersHidden, admin.ModelAdmin):
    list_display = ["text", "user", "topic", "paper", "created_at"]
    list_filter = ["topic"]
    search_fields = ["text", "user__email"]
    list_select_related = ["user", "topic", "paper"]
    raw_id_fields = ["user", "paper"]
    date_hierarchy = "created_at"


@admin.register(TopicModel)
class TopicModelAdmin(admin.ModelAdmin):
    """Each topic's current relevance model, read-only: training makes them."""

    list_display = [
        "topic",
        "state",
        "version",
        "positives",
        "negatives",
        "decisions",
        "f1",
        "trained_at",
    ]
    list_filter = ["state"]
    list_select_related = ["topic"]
    exclude = ["weights"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[TopicModel]:
        # Not shown, and about 1 MB of JSON each: not read for the list either.
        return super().get_queryset(request).defer("weights")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(JudgeVerdict)
class JudgeVerdictAdmin(PaperColumns, admin.ModelAdmin):
    """The judge's verdicts on papers of the band, read-only: a curator overrides
    one by including or excluding the paper in the review queue."""

    list_display = [
        "paper_text",
        "topic_text",
        "belongs",
        "reason",
        "model",
        "created_at",
    ]
    list_filter = ["topic", "belongs", "model"]
    list_select_related = ["paper", "topic"]
    search_fields = ["paper__arxiv_id", "paper__title", "reason"]
    raw_id_fields = ["paper"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
