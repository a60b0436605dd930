from __future__ import annotations

from django import forms
from django.contrib import admin
from django.contrib import messages
from django.db.models import Count
from django.db.models import QuerySet
from django.http import HttpRequest
from django.http import HttpResponse
from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.shortcuts import render
from django.urls import path
from django.utils.html import format_html

from papers.pagecache import content_changed
from topics.curation import exclude_paper
from topics.curation import lift_exclusion
from topics.curation import merge_topics
from topics.curation import pin_paper
from topics.curation import request_retag
from topics.curation import unpin_paper
from topics.editing import RETAG_FIELDS
from topics.models import Follow
from topics.models import PaperTopic
from topics.models import Question
from topics.models import Topic
from topics.models import TopicExclusion
from topics.momentum import Momentum
from topics.preview import preview_rule


class CuratorDecisionForm(forms.ModelForm):
    """Pins and exclusions replace whatever tag or decision the paper had, so the
    database's uniqueness is enforced by the curation functions, not the form."""

    def validate_unique(self) -> None:
        pass


class PinInline(admin.TabularInline):
    model = PaperTopic
    form = CuratorDecisionForm
    verbose_name = "pinned paper"
    verbose_name_plural = "pinned papers (always in the topic, whatever the rule)"
    fields = ["paper", "created_at"]
    readonly_fields = ["created_at"]
    raw_id_fields = ["paper"]
    extra = 0

    def get_queryset(self, request: HttpRequest) -> QuerySet[PaperTopic]:
        return super().get_queryset(request).filter(source=PaperTopic.Source.PIN)


class ExclusionInline(admin.TabularInline):
    model = TopicExclusion
    form = CuratorDecisionForm
    verbose_name_plural = "excluded papers (never in the topic, whatever the rule)"
    fields = ["paper", "reason", "created_by", "created_at"]
    readonly_fields = ["created_by", "created_at"]
    raw_id_fields = ["paper"]
    extra = 0


class MergeForm(forms.Form):
    target = forms.ModelChoiceField(
        queryset=Topic.objects.none(),
        help_text="The topic that stays; the others are folded into it and deleted.",
    )


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "is_active",
        "paper_count",
        "follower_count",
        "momentum_summary",
        "retag_status",
    ]
    list_filter = ["is_active", "categories"]
    list_select_related = ["momentum"]
    search_fields = ["name", "slug", "description", "rule", "glossary"]
    prepopulated_fields = {"slug": ["name"]}
    autocomplete_fields = ["categories", "related"]
    readonly_fields = ["retag_status", "created_at", "updated_at"]
    fieldsets = [
        (None, {"fields": ["name", "slug", "description", "glossary", "is_active"]}),
        (
            "Membership",
            {
                "fields": ["rule", "categories", "retag_status"],
                "description": "The preview below the rule shows what it would tag "
                "before you save.",
            },
        ),
        ("Related topics", {"fields": ["related"]}),
        ("History", {"fields": ["created_at", "updated_at"], "classes": ["collapse"]}),
    ]
    inlines = [PinInline, ExclusionInline]
    actions = ["retag", "activate", "deactivate", "merge"]

    class Media:
        js = ["js/topic_preview.js"]
        css = {"all": ["css/admin_preview.css"]}

    def get_queryset(self, request: HttpRequest) -> QuerySet[Topic]:
        return (
            super()
            .get_queryset(request)
            .annotate(
                paper_total=Count("paper_topics", distinct=True),
                follower_total=Count("follows", distinct=True),
            )
        )

    def get_urls(self) -> list:
        preview = self.admin_site.admin_view(self.preview_view)
        return [
            path("preview/", preview, name="topics_topic_preview"),
            path("<int:topic_id>/preview/", preview, name="topics_topic_preview_saved"),
            *super().get_urls(),
        ]

    def preview_view(
        self, request: HttpRequest, topic_id: int | None = None
    ) -> JsonResponse:
        """What a rule would tag, and what it adds to and removes from the saved one."""
        if not self.has_view_or_change_permission(request):
            return JsonResponse({"error": "Permission denied."}, status=403)
        topic = get_object_or_404(Topic, pk=topic_id) if topic_id else None
        preview = preview_rule(
            request.GET.get("rule", ""),
            topic=topic,
            categories=request.GET.getlist("categories"),
        )
        return JsonResponse(preview.as_json())

    @admin.display(description="papers", ordering="paper_total")
    def paper_count(self, topic: Topic) -> int:
        return topic.paper_total  # type: ignore[attr-defined]

    @admin.display(description="followers", ordering="follower_total")
    def follower_count(self, topic: Topic) -> int:
        return topic.follower_total  # type: ignore[attr-defined]

    @admin.display(description="momentum", ordering="momentum__trend_score")
    def momentum_summary(self, topic: Topic) -> str:
        stored = getattr(topic, "momentum", None)
        if stored is None:
            return "—"
        figures = Momentum.stored(stored)
        if not figures.enough:
            return f"{figures.recent} in 4 weeks (too few to say)"
        change = "new" if figures.change is None else f"{figures.change:+.0f}%"
        return f"{figures.recent} in 4 weeks, {change}"

    @admin.display(description="re-tag")
    def retag_status(self, topic: Topic) -> str:
        if topic.retag_pending:
            if topic.retag_total:
                return format_html(
                    "running: {} of {} papers", topic.retag_done, topic.retag_total
                )
            return "queued"
        if topic.retagged_at:
            return f"done {topic.retagged_at:%Y-%m-%d %H:%M}"
        return "—"

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        if not change or RETAG_FIELDS & set(form.changed_data):
            request_retag(form.instance)
            self.message_user(
                request,
                "The topic's papers are being re-tagged in the background; "
                "progress shows in the re-tag column.",
            )

    def save_formset(self, request: HttpRequest, form, formset, change: bool) -> None:
        """Pins and exclusions go through the curation functions, which keep a
        paper's decisions consistent (a pin lifts an exclusion and vice versa)."""
        if formset.model not in (PaperTopic, TopicExclusion):
            super().save_formset(request, form, formset, change)
            return
        topic = form.instance
        pinning = formset.model is PaperTopic
        # What admin's change message reads; the curation functions do the saving.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = (
            [],
            [],
            [],
        )
        for inline_form in formset.forms:
            if not inline_form.has_changed() or inline_form in formset.deleted_forms:
                continue
            paper = inline_form.cleaned_data["paper"]
            formset.new_objects.append(inline_form.instance)
            if pinning:
                pin_paper(topic, paper)
            else:
                reason = inline_form.cleaned_data.get("reason", "")
                exclude_paper(topic, paper, reason=reason, by=request.user)
        for inline_form in formset.deleted_forms:
            decision = inline_form.instance
            formset.deleted_objects.append(decision)
            if decision.pk:
                (unpin_paper if pinning else lift_exclusion)(topic, decision.paper)

    @admin.action(description="Re-tag every paper")
    def retag(self, request: HttpRequest, queryset: QuerySet[Topic]) -> None:
        for topic in queryset:
            request_retag(topic)
        self.message_user(
            request, f"Re-tagging {queryset.count()} topic(s) in the background."
        )

    @admin.action(description="Activate")
    def activate(self, request: HttpRequest, queryset: QuerySet[Topic]) -> None:
        for topic in queryset.filter(is_active=False):
            topic.is_active = True
            topic.save(update_fields=["is_active", "updated_at"])
            request_retag(topic)

    @admin.action(description="Deactivate (hidden, keeps its followers)")
    def deactivate(self, request: HttpRequest, queryset: QuerySet[Topic]) -> None:
        queryset.update(is_active=False)
        content_changed()

    @admin.action(description="Merge into one topic…")
    def merge(
        self, request: HttpRequest, queryset: QuerySet[Topic]
    ) -> HttpResponse | None:
        topics = list(queryset)
        if len(topics) < 2:
            self.message_user(
                request, "Select at least two topics to merge.", messages.ERROR
            )
            return None
        form = MergeForm(request.POST if "target" in request.POST else None)
        form.fields["target"].queryset = queryset
        if form.is_valid():
            target = form.cleaned_data["target"]
            merge_topics(target, topics)
            self.message_user(
                request,
                f"Merged {len(topics) - 1} topic(s) into {target}; followers, pins and "
                "exclusions kept. Its papers are being re-tagged.",
            )
            return None
        return render(
            request,
            "admin/topics/merge.html",
            {**self.admin_site.each_context(request), "form": form, "topics": topics},
        )


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


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["text", "user", "topic", "paper", "created_at"]
    list_filter = ["topic"]
    search_fields = ["text", "user__email"]
    list_select_related = ["user", "topic", "paper"]
    raw_id_fields = ["user", "paper"]
    date_hierarchy = "created_at"
