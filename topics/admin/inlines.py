"""A topic's latest pins and exclusions, inline on its change page."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from topics.models import PaperTopic
from topics.models import TopicExclusion

# A topic's change page lists its latest pins and exclusions, up to this many of
# each (a topic may have hundreds); the paged, searchable lists hold them all.
INLINE_ROWS = 20


class CuratorDecisionForm(forms.ModelForm):
    """Pins and exclusions replace whatever tag or decision the paper had, so the
    database's uniqueness is enforced by the curation functions, not the form."""

    def validate_unique(self) -> None:
        pass


class PinInline(admin.TabularInline):
    model = PaperTopic
    form = CuratorDecisionForm
    verbose_name = "pinned paper"
    verbose_name_plural = (
        f"pinned papers (always in the topic, whatever the rule): the "
        f"{INLINE_ROWS} latest; all of them are listed under Curators' decisions"
    )
    fields = ["paper", "created_at"]
    readonly_fields = ["created_at"]
    raw_id_fields = ["paper"]
    extra = 0

    def get_queryset(self, request: HttpRequest) -> QuerySet[PaperTopic]:
        return super().get_queryset(request).filter(source=PaperTopic.Source.PIN)


class ExclusionInline(admin.TabularInline):
    model = TopicExclusion
    form = CuratorDecisionForm
    verbose_name_plural = (
        f"excluded papers (never in the topic, whatever the rule): the "
        f"{INLINE_ROWS} latest; all of them are listed under Curators' decisions"
    )
    fields = ["paper", "reason", "created_by", "created_at"]
    readonly_fields = ["created_by", "created_at"]
    raw_id_fields = ["paper"]
    extra = 0
