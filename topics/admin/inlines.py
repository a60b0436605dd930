"""A topic's latest pins and exclusions, inline on its change page."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.forms.formsets import DELETION_FIELD_NAME
from django.http import HttpRequest
from django.utils.html import format_html

from papers.ingest.records import ParseError
from papers.ingest.records import split_arxiv_id
from papers.latex import latex_to_text
from papers.models import Paper
from topics.admin.permissions import CuratedInline
from topics.admin.permissions import curates
from topics.models import PaperTopic
from topics.models import TopicAlias
from topics.models import TopicExclusion

# A topic's change page lists its latest pins and exclusions, up to this many of
# each (a topic may have hundreds); the paged, searchable lists hold them all.
INLINE_ROWS = 20


class ArxivPaperField(forms.ModelChoiceField):
    """A paper named by its arXiv id, as curators know it (with or without its
    version, or its arXiv address), where admin's raw-id field asked for the
    database's number."""

    default_error_messages = {
        "invalid_choice": "No paper with this arXiv id is in Momentum.",
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            Paper.objects.all(),
            to_field_name="arxiv_id",
            label="arXiv id",
            widget=forms.TextInput(attrs={"placeholder": "2607.01234", "size": 16}),
            **kwargs,
        )

    def to_python(self, value: Any) -> Paper | None:
        if value in self.empty_values:
            return None
        try:
            arxiv_id, _ = split_arxiv_id(str(value))
        except ParseError:
            raise forms.ValidationError(
                "Write the paper's arXiv id, as 2607.01234.", code="invalid_choice"
            ) from None
        return super().to_python(arxiv_id)


class CuratorDecisionForm(forms.ModelForm):
    """Pins and exclusions replace whatever tag or decision the paper had, so the
    database's uniqueness is enforced by the curation functions, not the form."""

    paper = ArxivPaperField()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            # A saved decision's paper, read with it (TopicAdmin.get_formset_kwargs).
            self.initial["paper"] = self.instance.paper.arxiv_id

    def validate_unique(self) -> None:
        pass


class ExclusionFormSet(forms.BaseInlineFormSet):
    """The exclusions of a save, checked against its pins (`pins`, the pins'
    formset, set by TopicAdmin): a paper pinned and excluded at once would end
    excluded, as the exclusions are saved second, while the page said the save
    went through."""

    pins: forms.BaseInlineFormSet | None = None

    def clean(self) -> None:
        super().clean()
        if self.pins is None or not self.pins.is_valid():
            return
        pinned = {paper.pk for paper in _papers_saved(self.pins)}
        for form in _forms_saved(self):
            paper = form.cleaned_data.get("paper")
            if paper is not None and paper.pk in pinned:
                form.add_error(
                    "paper",
                    f"{paper.arxiv_id} is pinned in this save too: keep the pin "
                    "or the exclusion, not both.",
                )


def _forms_saved(formset: forms.BaseInlineFormSet) -> list[forms.ModelForm]:
    """The rows a save writes (TopicAdmin.save_formset): new or changed, kept.
    A row listed unchanged is no decision of this save: a new exclusion of a
    pinned paper replaces its pin, as in the review queue."""
    return [
        form
        for form in formset.forms
        if form.has_changed()
        and not getattr(form, "cleaned_data", {}).get(DELETION_FIELD_NAME)
    ]


def _papers_saved(formset: forms.BaseInlineFormSet) -> list[Paper]:
    papers = (form.cleaned_data.get("paper") for form in _forms_saved(formset))
    return [paper for paper in papers if paper is not None]


class CuratorDecisionInline(CuratedInline, admin.TabularInline):
    """A topic's latest decisions of one kind, each paper named by its arXiv id
    with its title linked beside it."""

    form = CuratorDecisionForm
    extra = 0

    @admin.display(description="title")
    def paper_title(self, decision: PaperTopic | TopicExclusion) -> str:
        if not decision.pk:
            return "—"
        paper = decision.paper
        return format_html(
            '<a href="{}">{}</a>', paper.get_absolute_url(), latex_to_text(paper.title)
        )


class PinInline(CuratorDecisionInline):
    model = PaperTopic
    verbose_name = "pinned paper"
    verbose_name_plural = (
        f"pinned papers (always in the topic, whatever the rule): the "
        f"{INLINE_ROWS} latest; all of them are listed under Curators' decisions"
    )
    fields = ["paper", "paper_title", "created_at"]
    readonly_fields = ["paper_title", "created_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[PaperTopic]:
        return super().get_queryset(request).filter(source=PaperTopic.Source.PIN)


class ExclusionInline(CuratorDecisionInline):
    model = TopicExclusion
    formset = ExclusionFormSet
    verbose_name = "excluded paper"  # "Add another excluded paper"
    verbose_name_plural = (
        f"excluded papers (never in the topic, whatever the rule): the "
        f"{INLINE_ROWS} latest; all of them are listed under Curators' decisions"
    )
    fields = ["paper", "paper_title", "reason", "created_by", "created_at"]
    readonly_fields = ["paper_title", "created_by", "created_at"]


class AliasInline(admin.TabularInline):
    """A topic's former addresses (its slugs before a new one, merged-away
    topics'), shown where a curator told a slug "was an address of" the topic
    looks for it; releasing one is the only change (TopicAdmin.save_formset)."""

    model = TopicAlias
    verbose_name = "former address"
    verbose_name_plural = (
        "former addresses (each still leads here, its page and its feed; tick "
        "Delete? and save to release one for another topic to take: its old "
        "links, feeds and digests then stop leading here)"
    )
    fields = ["slug", "created_at"]
    readonly_fields = ["slug", "created_at"]
    extra = 0

    def get_queryset(self, request: HttpRequest) -> QuerySet[TopicAlias]:
        # Each row is headed by its name, which names the topic: a query a row.
        return super().get_queryset(request).select_related("topic")

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return curates(request)

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return curates(request) or super().has_view_permission(request, obj)
