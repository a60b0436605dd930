from __future__ import annotations

from django.contrib import admin
from django.db.models import Count
from django.db.models import QuerySet
from django.http import HttpRequest

from topics.models import Follow
from topics.models import PaperTopic
from topics.models import Topic
from topics.models import TopicExclusion


class PinInline(admin.TabularInline):
    model = PaperTopic
    verbose_name = "pinned paper"
    verbose_name_plural = "pinned papers (always in the topic)"
    fields = ["paper", "created_at"]
    readonly_fields = ["created_at"]
    raw_id_fields = ["paper"]
    extra = 0

    def get_queryset(self, request: HttpRequest) -> QuerySet[PaperTopic]:
        return super().get_queryset(request).filter(source=PaperTopic.Source.PIN)


class ExclusionInline(admin.TabularInline):
    model = TopicExclusion
    verbose_name_plural = "excluded papers (never in the topic)"
    fields = ["paper", "reason", "created_by", "created_at"]
    readonly_fields = ["created_by", "created_at"]
    raw_id_fields = ["paper"]
    extra = 0


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "is_active", "paper_count", "follower_count"]
    list_filter = ["is_active", "categories"]
    search_fields = ["name", "slug", "description", "rule"]
    prepopulated_fields = {"slug": ["name"]}
    autocomplete_fields = ["categories", "related"]
    inlines = [PinInline, ExclusionInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Topic]:
        return (
            super()
            .get_queryset(request)
            .annotate(
                paper_total=Count("paper_topics", distinct=True),
                follower_total=Count("follows", distinct=True),
            )
        )

    @admin.display(description="papers", ordering="paper_total")
    def paper_count(self, topic: Topic) -> int:
        return topic.paper_total  # type: ignore[attr-defined]

    @admin.display(description="followers", ordering="follower_total")
    def follower_count(self, topic: Topic) -> int:
        return topic.follower_total  # type: ignore[attr-defined]


@admin.register(PaperTopic)
class PaperTopicAdmin(admin.ModelAdmin):
    list_display = ["paper", "topic", "source", "matched_terms", "created_at"]
    list_filter = ["source", "topic"]
    list_select_related = ["paper", "topic"]
    search_fields = ["paper__arxiv_id", "paper__title", "topic__name"]
    raw_id_fields = ["paper"]
    show_full_result_count = False


@admin.register(TopicExclusion)
class TopicExclusionAdmin(admin.ModelAdmin):
    list_display = ["paper", "topic", "reason", "created_by", "created_at"]
    list_filter = ["topic"]
    list_select_related = ["paper", "topic", "created_by"]
    search_fields = ["paper__arxiv_id", "paper__title", "topic__name"]
    raw_id_fields = ["paper", "created_by"]


@admin.register(Follow)
class FollowAdmin(admin.ModelAdmin):
    list_display = ["user", "topic", "muted", "created_at"]
    list_filter = ["topic", "muted"]
    list_select_related = ["user", "topic"]
    search_fields = ["user__email", "topic__name"]
    raw_id_fields = ["user"]
