"""Admin for topics and what hangs off them: rules with preview, pins and
exclusions, merging, re-tagging and relevance models."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib import messages
from django.contrib.admin.widgets import AdminTextareaWidget
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Field
from django.db.models import QuerySet
from django.forms.utils import ErrorList
from django.http import HttpRequest
from django.http import HttpResponse
from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import path
from django.urls import reverse
from django.utils.dateformat import format as date_format
from django.utils.html import escape
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.timezone import localtime

from accounts.requests import signed_in
from core.admin import CountedDeletion
from core.queue import send_after_commit
from topics import prefilter
from topics.admin.inlines import INLINE_ROWS
from topics.admin.inlines import AliasInline
from topics.admin.inlines import ExclusionFormSet
from topics.admin.inlines import ExclusionInline
from topics.admin.inlines import PinInline
from topics.admin.membership import MembershipColumns
from topics.admin.membership import awaiting_total
from topics.admin.membership import flagged_total
from topics.admin.records import PAPER_UNREAD
from topics.curation import exclude_paper
from topics.curation import lift_exclusion
from topics.curation import merge_topics
from topics.curation import pin_paper
from topics.curation import release_addresses
from topics.curation import request_retag
from topics.curation import unpin_paper
from topics.editing import RETAG_FIELDS
from topics.editing import set_active
from topics.following import with_follower_count
from topics.models import NOT_ITS_OWN_RELATED
from topics.models import PaperTopic
from topics.models import Topic
from topics.models import TopicAlias
from topics.models import TopicExclusion
from topics.models import TopicModel
from topics.momentum import Momentum
from topics.preview import PREVIEW_READS
from topics.preview import preview_rule
from topics.query import with_paper_count
from topics.tasks import train_topic_model

# Saving these re-applies the topic's model in its new mode.
MODEL_FIELDS = {"membership", "precision_target", "recall_target"}


def train_after_commit(topic_id: int) -> None:
    """Retrain the topic's model in the background once the commit is done, even
    if nothing it learns from has changed (a new membership mode)."""
    # Its fingerprint forgotten: should the broker lose this training, the
    # nightly one, which skips a model whose decisions have not changed,
    # trains it still.
    TopicModel.objects.filter(topic_id=topic_id).update(fingerprint="")
    send_after_commit(train_topic_model, topic_id, True)


class MergeForm(forms.Form):
    target = forms.ModelChoiceField(
        queryset=Topic.objects.none(),
        help_text="The topic that stays; the others are folded into it and deleted.",
    )


class LineFeedText(forms.CharField):
    """A textarea's text with its lines ended as stored (\n): browsers send
    \r\n, so a field saved untouched read as changed (logged, and stored
    with CRs)."""

    def to_python(self, value: Any) -> str | None:
        text = super().to_python(value)
        return text and text.replace("\r\n", "\n").replace("\r", "\n")


class TopicForm(forms.ModelForm):
    """The topic as the curator loaded it, checked when they save: Django's
    form sends every field, so a second curator's save put back the fields
    the first had just changed (a rule, silently)."""

    loaded_as = forms.CharField(widget=forms.HiddenInput, required=False)

    class Meta:
        field_classes = dict.fromkeys(("definition", "glossary", "rule"), LineFeedText)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["loaded_as"].initial = self.fingerprint()

    def fingerprint(self) -> str:
        """What the form shows of the topic as stored: its fields' values."""
        values: dict[str, object] = {}
        for name in sorted(set(self.fields) - {"loaded_as"}):
            field = self.instance._meta.get_field(name)
            if field.many_to_many:
                # As the form read them for its fields: read again, a query each.
                values[name] = sorted(related.pk for related in self.initial[name])
            else:
                values[name] = field.value_from_object(self.instance)
        digest = hashlib.sha256(json.dumps(values, default=str).encode())
        return digest.hexdigest()[:32]

    def clean(self) -> dict[str, Any] | None:
        cleaned = super().clean()
        if self.instance.pk and self.instance in (cleaned or {}).get("related", ()):
            self.add_error("related", NOT_ITS_OWN_RELATED)
        loaded = self.data.get(self.add_prefix("loaded_as"))
        # The instance is the stored topic until the form is applied to it.
        if self.instance.pk and loaded and loaded != self.fingerprint():
            raise ValidationError(
                "Someone changed this topic after you opened it. Reload the page "
                "to see their change, then make yours again.",
                code="stale",
            )
        return cleaned

    def full_clean(self) -> None:
        """A slug that is another topic's former address (Topic.clean): the
        error links that topic's page, at the list where it is released."""
        super().full_clean()
        for error in self.errors.get("slug", ErrorList()).as_data():
            params = error.params or {}
            if "holder_id" not in params:
                continue
            page = reverse("admin:topics_topic_change", args=[params["holder_id"]])
            values = {key: escape(value) for key, value in params.items()}
            values["holder_page"] = format_html(
                '<a href="{}#aliases-group">{}</a>', page, params["holder"]
            )
            # The message is the model's, every value in it escaped.
            error.message, error.params = mark_safe(error.message % values), None


def _where(background: str, here: str) -> str:
    """What a message says of a task it sent: without a broker (the embedded
    default) the task has run in this request by the time the page shows
    (core.queue), not in the background."""
    return here if settings.CELERY_TASK_ALWAYS_EAGER else background


def _retagging(what: str) -> str:
    return _where(
        f"Re-tagging {what} in the background: progress shows in the re-tag column.",
        f"Re-tagged {what} in this request (no task broker here).",
    )


@admin.register(Topic)
class TopicAdmin(CountedDeletion, MembershipColumns, admin.ModelAdmin):
    form = TopicForm
    list_display = [
        "name",
        "is_active",
        "paper_count",
        "follower_count",
        "momentum_summary",
        "relevance_summary",
        "awaiting_review",
        "retag_status",
    ]
    list_filter = ["is_active", "membership", "categories"]
    list_select_related = ["momentum", "model"]
    search_fields = ["name", "slug", "description", "definition", "rule", "glossary"]
    prepopulated_fields = {"slug": ["name"]}
    autocomplete_fields = ["categories", "related"]
    readonly_fields = [
        "retag_status",
        "relevance_model",
        "review_queue",
        "decisions",
        "created_at",
        "updated_at",
    ]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "loaded_as",
                    "name",
                    "slug",
                    "description",
                    "definition",
                    "glossary",
                    "is_active",
                ]
            },
        ),
        (
            "Membership",
            {
                "fields": [
                    "rule",
                    "categories",
                    "retag_status",
                    "membership",
                    "precision_target",
                    "recall_target",
                    "relevance_model",
                    "review_queue",
                ],
                "description": "The preview below the rule shows what it would tag "
                "before you save. A relevance model learns from the rule and your "
                "pins and exclusions; the membership mode says what it may do.",
            },
        ),
        ("Curators' decisions", {"fields": ["decisions"]}),
        ("Related topics", {"fields": ["related"]}),
        ("History", {"fields": ["created_at", "updated_at"], "classes": ["collapse"]}),
    ]
    inlines = [PinInline, ExclusionInline]
    actions = ["retag", "train_model", "activate", "deactivate", "merge"]

    class Media:
        js = ["js/topic_preview.js"]
        css = {
            "all": [
                "css/admin_preview.css",
                "css/admin_lists.css",
                "css/admin_topics.css",
            ]
        }

    def formfield_for_dbfield(
        self, db_field: Field, request: HttpRequest, **kwargs: Any
    ) -> forms.Field | None:
        if db_field.name == "description":
            # A few lines of text, where a one-line input shows 40 characters.
            kwargs["widget"] = AdminTextareaWidget(attrs={"rows": 3})
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Topic]:
        # Counted by subqueries: joins would multiply papers by followers and
        # group every column, the model's weights included (seconds for 35 topics).
        topics = with_follower_count(with_paper_count(super().get_queryset(request)))
        # A trained model's weights (about 1 MB of JSON at 100,000 papers) score
        # papers and are never shown: the list read them for every topic on it,
        # the change page for its model's summary.
        topics = topics.select_related("model").defer("model__weights")
        return topics.annotate(
            awaiting_total=awaiting_total(), flagged_total=flagged_total()
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
        """What a rule would tag, and how saving it would change the topic's papers."""
        if not self.has_view_or_change_permission(request):
            return JsonResponse({"error": "Permission denied."}, status=403)
        topic = get_object_or_404(Topic, pk=topic_id) if topic_id else None
        preview = preview_rule(
            request.GET.get("rule", ""),
            topic=topic,
            categories=request.GET.getlist("categories"),
            # A curator waits on this request: many stale terms are the sweep's,
            # and past a second's reading the rest is estimated.
            derive_limit=prefilter.PREVIEW_DERIVES,
            read_at_most=PREVIEW_READS,
        )
        return JsonResponse(preview.as_json())

    @admin.display(description="papers", ordering="paper_count")
    def paper_count(self, topic: Topic) -> int:
        return topic.paper_count  # type: ignore[attr-defined]

    @admin.display(description="followers", ordering="follower_count")
    def follower_count(self, topic: Topic) -> int:
        return topic.follower_count  # type: ignore[attr-defined]

    @admin.display(description="momentum (4 weeks)", ordering="momentum__trend_score")
    def momentum_summary(self, topic: Topic) -> str:
        """The papers of the last four weeks and the change of their share,
        short enough for its column ("48, +20%"), in the topic page's words in
        its title."""
        stored = getattr(topic, "momentum", None)
        if stored is None:
            return "—"
        figures = Momentum.stored(stored)
        # Worded as the topic page words it: under half a percent is the same.
        if not figures.enough:
            change = "too few to say"
        elif figures.direction == "new":
            change = "new"
        elif figures.direction == "flat":
            change = "same"
        else:
            change = f"{figures.change:+.0f}%"
        sentence = render_to_string(
            "topics/momentum_sentence.html", {"m": figures, "hide_left_out": True}
        )
        return format_html(
            '<span title="{}">{},\u00a0{}</span>', sentence, figures.recent, change
        )

    def get_formset_kwargs(self, request: HttpRequest, obj, inline, prefix: str):
        """Pins and exclusions inline: the topic's latest only, however many."""
        kwargs = super().get_formset_kwargs(request, obj, inline, prefix)
        if obj is not None and obj.pk and inline.model in (PaperTopic, TopicExclusion):
            queryset = kwargs["queryset"]
            latest = (
                queryset.filter(topic=obj)
                .order_by("-created_at", "-pk")
                .values("pk")[:INLINE_ROWS]
            )
            # An exclusion is shown with the curator who made it.
            named = ["created_by"] if inline.model is TopicExclusion else []
            kwargs["queryset"] = (
                queryset.filter(pk__in=latest)
                .select_related("paper", "topic", *named)
                .defer(*PAPER_UNREAD)
            )
        return kwargs

    def get_inlines(self, request: HttpRequest, obj: Topic | None) -> list:
        # Former addresses only where there are some: most topics have none. A
        # save is read as its page was shown: a merge since may have given the
        # topic its first, whose list the page did not post (Django refused
        # the save, "ManagementForm data is missing").
        if request.method == "POST":
            listed = "aliases-TOTAL_FORMS" in request.POST  # its formset's
        else:
            listed = obj is not None and obj.aliases.exists()
        return [*self.inlines, AliasInline] if listed else self.inlines

    def _create_formsets(self, request: HttpRequest, obj, change: bool):
        """The exclusions' formset checks the pins' (ExclusionFormSet): a paper
        pinned and excluded in one save is refused, with nothing saved."""
        formsets, inlines = super()._create_formsets(request, obj, change)  # type: ignore[misc]  # Django's, not in its stubs
        pins = [formset for formset in formsets if formset.model is PaperTopic]
        for formset in formsets:
            if isinstance(formset, ExclusionFormSet) and pins:
                formset.pins = pins[0]
        return formsets, inlines

    @admin.display(description="re-tag")
    def retag_status(self, topic: Topic) -> str:
        if topic.pk is None:
            # A new topic's rule is checked on save, and tagged once saved.
            return "—"
        if problem := topic.rule_problem:
            return format_html(
                "<strong>Not tagged</strong>: its rule no longer parses ({}). Its "
                "papers are kept as they are until the rule is corrected.",
                problem,
            )
        if topic.retag_pending:
            if topic.retag_total:
                # The time it last counted: a re-tag that stopped shows it
                # stopped (and is sent again, topics.retagging).
                counted = topic.retag_progress_at
                return format_html(
                    "running: {} of {} papers{}",
                    topic.retag_done,
                    topic.retag_total,
                    f", last counted {localtime(counted):%H:%M}" if counted else "",
                )
            return "queued"
        if topic.retagged_at:
            return format_html("done {}", _retagged_at(topic.retagged_at))
        return "—"

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        if not change or RETAG_FIELDS & set(form.changed_data):
            request_retag(form.instance)
            self.message_user(request, _retagging("the topic's papers"))
        if MODEL_FIELDS & set(form.changed_data):
            train_after_commit(form.instance.pk)
            self.message_user(
                request,
                _where(
                    "The relevance model is being retrained in the background so "
                    "the new membership applies.",
                    "The relevance model was retrained in this request (no task "
                    "broker here), so the new membership applies.",
                ),
            )

    def save_formset(self, request: HttpRequest, form, formset, change: bool) -> None:
        """Pins and exclusions go through the curation functions, which keep a
        paper's decisions consistent (a pin lifts an exclusion and vice versa)."""
        if formset.model is TopicAlias:
            formset.new_objects, formset.changed_objects = [], []
            formset.deleted_objects = [f.instance for f in formset.deleted_forms]
            released = [alias.slug for alias in formset.deleted_objects]
            if released:
                release_addresses(form.instance, released)
            return
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
            saved = inline_form.instance.pk
            if saved and "paper" in inline_form.changed_data:
                # A saved row given another paper (a typo corrected): the old
                # paper's decision goes, or both would stand.
                earlier = formset.model.objects.get(pk=saved).paper
                (unpin_paper if pinning else lift_exclusion)(topic, earlier)
            formset.new_objects.append(inline_form.instance)
            if pinning:
                pin_paper(topic, paper)
            else:
                reason = inline_form.cleaned_data.get("reason", "")
                exclude_paper(topic, paper, reason=reason, by=signed_in(request))
        for inline_form in formset.deleted_forms:
            decision = inline_form.instance
            formset.deleted_objects.append(decision)
            if decision.pk:
                (unpin_paper if pinning else lift_exclusion)(topic, decision.paper)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Topic]) -> None:
        # One by one through Topic.delete, which tells the cached pages: the
        # list action's queryset delete left the topic listed on them.
        for topic in queryset:
            topic.delete()

    @admin.action(description="Re-tag every paper", permissions=["change"])
    def retag(self, request: HttpRequest, queryset: QuerySet[Topic]) -> None:
        for topic in queryset:
            request_retag(topic)
            self.log_change(request, topic, "Re-tag requested.")
        self.message_user(request, _retagging(f"{queryset.count()} topic(s)"))

    @admin.action(description="Train relevance model now", permissions=["change"])
    def train_model(self, request: HttpRequest, queryset: QuerySet[Topic]) -> None:
        topic_ids = list(queryset.filter(is_active=True).values_list("pk", flat=True))
        for topic_id in topic_ids:
            train_after_commit(topic_id)
        count = len(topic_ids)
        message = _where(
            f"Training the relevance model of {count} topic(s) in the background;",
            f"Trained the relevance model of {count} topic(s) in this request (no "
            "task broker here);",
        )
        message += " each topic's page shows the result."
        skipped = queryset.count() - len(topic_ids)
        if skipped:
            message += f" Skipped {skipped} inactive topic(s)."
        self.message_user(request, message)

    @admin.action(description="Activate", permissions=["change"])
    def activate(self, request: HttpRequest, queryset: QuerySet[Topic]) -> None:
        self._set_active(request, queryset, True)

    @admin.action(
        description="Deactivate (hidden, keeps its followers)", permissions=["change"]
    )
    def deactivate(self, request: HttpRequest, queryset: QuerySet[Topic]) -> None:
        self._set_active(request, queryset, False)

    def _set_active(
        self, request: HttpRequest, queryset: QuerySet[Topic], active: bool
    ) -> None:
        done: list[str] = []
        already: list[str] = []
        for topic in queryset:
            try:
                if set_active(topic, active):
                    done.append(topic.name)
                    self.log_change(
                        request, topic, "Activated." if active else "Deactivated."
                    )
                else:
                    already.append(topic.name)
            except ValidationError as error:
                self.message_user(
                    request,
                    f"{topic.name}: {'; '.join(error.messages)}",
                    messages.ERROR,
                )
        if already:
            state = "active" if active else "inactive"
            self.message_user(request, f"{_names(already)}: {state} already.")
        if done:
            self.message_user(
                request,
                f"Activated {_names(done)}: shown to readers again, with "
                "their followers."
                if active
                else f"Deactivated {_names(done)}: hidden from readers and "
                "digests; followers, papers and decisions kept.",
            )

    def has_merge_permission(self, request: HttpRequest) -> bool:
        # Merging deletes the topics merged in (an action's permissions are
        # any of those named: both are asked for here).
        return self.has_change_permission(request) and self.has_delete_permission(
            request
        )

    @admin.action(description="Merge into one topic…", permissions=["merge"])
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
        form.fields["target"].queryset = queryset  # type: ignore[attr-defined]  # a ModelChoiceField
        if form.is_valid():
            target = form.cleaned_data["target"]
            merged = [topic for topic in topics if topic.pk != target.pk]
            with transaction.atomic():
                # Logged first: merging deletes them.
                self.log_deletions(request, queryset.exclude(pk=target.pk))
                result = merge_topics(target, topics)
                target.refresh_from_db()
                self.log_change(
                    request,
                    target,
                    f"Merged in {', '.join(map(str, merged))}; the rule is now: "
                    f"{target.rule}",
                )
            self.message_user(
                request,
                f"Merged {len(topics) - 1} topic(s) into {target}, which gained "
                f"{result.papers} paper(s); its rule now covers theirs, followers, "
                "pins, exclusions, related topics and addresses moved over. "
                + _retagging("its papers"),
            )
            if result.rules_kept:
                self.message_user(
                    request,
                    "Too long to join the rule of the topic kept: the rule of "
                    f"{', '.join(result.rules_kept)}. Their papers are pinned "
                    "instead; new papers they would match will not be tagged.",
                    messages.WARNING,
                )
            return None
        return render(
            request,
            "admin/topics/merge.html",
            {**self.admin_site.each_context(request), "form": form, "topics": topics},
        )


def _retagged_at(when: datetime) -> str:
    """When a topic was last re-tagged in full, as its column fits it, "Dec 7,
    15:04" (the day alone in another year), the full time in its title."""
    when = localtime(when)
    short = "M j, H:i" if when.year == localtime().year else "M j, Y"
    return format_html(
        '<time datetime="{}" title="re-tagged in full at {}">{}</time>',
        when.isoformat(),
        date_format(when, "Y-m-d H:i T"),
        date_format(when, short),
    )


def _names(names: list[str], shown: int = 10) -> str:
    """The first names, and how many more: a message about 200 topics."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")
