"""The review queue: papers of a topic's uncertain band, papers where its model
and rule disagree, and papers readers flagged, most uncertain first, decided in
one click or in bulk."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.contrib import messages
from django.contrib.admin.templatetags.admin_urls import add_preserved_filters
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Exists
from django.db.models import F
from django.db.models import OuterRef
from django.db.models import Prefetch
from django.db.models import QuerySet
from django.db.models import Subquery
from django.db.models.functions import Abs
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.http import HttpResponse
from django.http import HttpResponseNotAllowed
from django.http import HttpResponseRedirect
from django.template.defaultfilters import pluralize
from django.urls import path
from django.urls import reverse
from django.utils.html import format_html
from django.utils.html import format_html_join
from django.utils.text import Truncator

from accounts.models import User
from accounts.requests import signed_in
from core.admin import ReadersHidden
from core.admin import ReadOnlyRecords
from papers.latex import latex_to_text
from papers.models import Paper
from topics.admin.permissions import curates
from topics.admin.records import PaperColumns
from topics.admin.records import PaperListAdmin
from topics.admin.records import by_topic
from topics.curation import exclude_paper
from topics.curation import exclude_papers
from topics.curation import pin_paper
from topics.curation import pin_papers
from topics.membership import BOUNDARY
from topics.models import JudgeVerdict
from topics.models import RelevanceFlag
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicModel
from topics.queue import queue_url
from topics.queue import two_places
from topics.templatetags.rule_terms import term_in_words

REVIEW_REASON = "review queue"


def review_reason(item: ReviewItem) -> str:
    """Why the paper is in the review queue, in words: one sentence of clauses."""
    clauses = [_band_reason(item), _model_reason(item)]
    if item.flags:
        clauses.append(
            f"flagged not relevant by {item.flags} reader{pluralize(item.flags)}"
        )
    reason = "; ".join(clause for clause in clauses if clause)
    return reason[:1].upper() + reason[1:]


def _band_reason(item: ReviewItem) -> str:
    """The band and the judge's verdict, where automatic decisions apply."""
    belongs = getattr(item, "verdict_belongs", None)
    if belongs is not None:
        verdict = "in" if belongs else "out"
        model, reason = item.verdict_model, item.verdict_reason  # type: ignore[attr-defined]
        return f"judge ({model}) says {verdict}: {reason}"
    if item.pending:
        return "uncertain: awaiting review"
    return ""


def _model_reason(item: ReviewItem) -> str:
    score = item.score
    if item.rule_matched:
        # As the paper's page words them: “agent” in the title, not “ti:agent”.
        terms = ", ".join(map(term_in_words, item.rule_terms))
        reason = f"rule matched {terms}" if terms else "the rule matches"
        if score is not None and score < BOUNDARY:
            reason += f"; model score {_shown(score)} doubts it"
            if item.vetoed and not item.pending:
                reason += " (kept out: automatic decisions)"
        elif score is not None:
            reason += f"; model score {_shown(score)} agrees"
    elif score is not None and score >= BOUNDARY:
        reason = f"model score {_shown(score)} says it belongs; the rule does not match"
    elif score is not None:
        reason = f"the rule does not match; model score {_shown(score)} agrees"
    else:
        reason = ""
    return reason


def _shown(score: float) -> str:
    """A score to two places, cut (not rounded) below the boundary: 0.496
    doubts and reads 0.49, never the 0.50 of a score that says it belongs."""
    return two_places(score, BOUNDARY)


class ReviewKindFilter(admin.SimpleListFilter):
    title = "kind"
    parameter_name = "kind"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [
            ("pending", "Awaiting review (the uncertain band)"),
            ("judged", "Decided by the judge"),
            ("proposes", "Model proposes"),
            ("doubted", "Rule doubted"),
            ("flagged", "Flagged by readers"),
        ]

    def queryset(
        self, request: HttpRequest, queryset: QuerySet[ReviewItem]
    ) -> QuerySet[ReviewItem]:
        if self.value() == "pending":
            return queryset.filter(pending=True)
        if self.value() == "judged":
            # verdict_belongs: annotated by the admin's get_queryset.
            return queryset.filter(verdict_belongs__isnull=False)  # type: ignore[misc]
        if self.value() == "proposes":
            return queryset.filter(rule_matched=False, score__gte=BOUNDARY)
        if self.value() == "doubted":
            return queryset.filter(rule_matched=True, score__lt=BOUNDARY)
        if self.value() == "flagged":
            return queryset.filter(flags__gt=0)
        return queryset


@admin.register(ReviewItem)
class ReviewItemAdmin(ReadOnlyRecords, PaperListAdmin):
    """The review queue: the band's papers, papers where a topic's model and rule
    disagree, and papers readers flagged, most uncertain first. Each row is
    decided in one click or in bulk (a pin or an exclusion, through
    topics.curation, overriding any judge's verdict); rows are never edited."""

    list_display_links = None
    list_filter = ["topic", ReviewKindFilter, "pending", "vetoed"]
    # Each page's papers are read once the queue is ordered and cut (below).
    list_select_related = ["topic"]
    list_per_page = 30
    actions = ["include_selected", "exclude_selected"]

    class Media:
        css = {"all": ["css/admin_review.css"]}

    paper_unread = ()  # read apart (get_queryset)

    def get_queryset(self, request: HttpRequest) -> QuerySet[ReviewItem]:
        # The chance the paper belongs: calibrated on the curators' decisions
        # where automatic decisions apply, else the model's own score. Its
        # distance from even odds orders the queue: the smallest is the model's
        # hardest call, the most informative decision.
        chance = Coalesce(F("probability"), F("score"))
        verdicts = JudgeVerdict.objects.filter(
            topic=OuterRef("topic"), paper=OuterRef("paper")
        )
        return (
            super()
            .get_queryset(request)
            .annotate(
                chance=chance,
                uncertainty=Abs(chance - BOUNDARY),
                verdict_belongs=Subquery(verdicts.values("belongs")[:1]),
                verdict_reason=Subquery(verdicts.values("reason")[:1]),
                verdict_model=Subquery(verdicts.values("model")[:1]),
                # Why an item has no chance (chance_text): no model scores yet.
                topic_trained=Exists(
                    TopicModel.objects.filter(
                        topic=OuterRef("topic"), state=TopicModel.State.TRAINED
                    )
                ),
            )
            # The page's papers, with their abstracts, read for its rows alone:
            # joined, every queued paper's whole row was carried through the
            # ordering of the whole queue (30,000 items: 0.3-1.1 s a page).
            .prefetch_related(
                Prefetch("paper", queryset=Paper.objects.defer("search_vector"))
            )
        )

    def get_ordering(self, request: HttpRequest) -> list:
        # Flag-only items have no score: after every disagreement, newest first.
        return [F("uncertainty").asc(nulls_last=True), "-updated_at"]

    def get_list_display(self, request: HttpRequest) -> list:
        columns: list = ["topic", "paper_link", "chance_text", "why"]
        if "topic__id__exact" in request.GET:
            columns.remove("topic")  # one topic: its definition heads the list
        if self.has_decide_permission(request):
            columns.append(self.decision_buttons(request))
        return columns

    def has_view_permission(
        self, request: HttpRequest, obj: ReviewItem | None = None
    ) -> bool:
        if self.has_decide_permission(request):
            return True
        return super().has_view_permission(request, obj)

    def has_decide_permission(self, request: HttpRequest) -> bool:
        """Deciding pins or excludes a paper, which changes the topic."""
        return curates(request)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict | None = None
    ) -> HttpResponse:
        context = {"title": "Review queue", "topic": self._filtered_topic(request)}
        return super().changelist_view(request, {**context, **(extra_context or {})})

    def _filtered_topic(self, request: HttpRequest) -> Topic | None:
        """The topic the queue is filtered to, for its definition as help text."""
        topic_id = request.GET.get("topic__id__exact", "")
        if not topic_id.isdigit():
            return None
        return Topic.objects.filter(pk=int(topic_id)).first()

    def get_urls(self) -> list:
        wrap = self.admin_site.admin_view
        return [
            path(
                "<int:item_id>/include/",
                wrap(self.include_view),
                name="topics_reviewitem_include",
            ),
            path(
                "<int:item_id>/exclude/",
                wrap(self.exclude_view),
                name="topics_reviewitem_exclude",
            ),
            *super().get_urls(),
        ]

    @admin.display(description="paper", ordering="paper__title")
    def paper_link(self, item: ReviewItem) -> str:
        """Its title, id and abstract in one cell: the abstract under the title
        takes the cell's width, where a column of its own was too narrow to read
        (rows twenty lines tall)."""
        paper = item.paper
        return format_html(
            '<a href="{}">{}</a><br><span class="quiet">arXiv:{}</span>'
            '<div class="abstract">{}</div>',
            paper.get_absolute_url(),
            latex_to_text(paper.title),
            paper.arxiv_id,
            self._abstract(paper),
        )

    @staticmethod
    def _abstract(paper: Paper) -> str:
        abstract = latex_to_text(paper.abstract)
        short = Truncator(abstract).words(40)
        if short == abstract:
            return abstract
        # Open, the summary's short text hides (static/css/admin_review.css).
        return format_html(
            '<details><summary><span class="abstract-short">{}</span></summary>'
            "{}</details>",
            short,
            abstract,
        )

    @admin.display(description="chance it belongs", ordering="chance")
    def chance_text(self, item: ReviewItem) -> str:
        """What the queue is ordered by; the model's own score is in `why`."""
        chance = item.chance  # type: ignore[attr-defined]
        if chance is not None:
            return f"{chance:.2f}"
        # A flag queues a paper the topic's model has not scored (topics.flags).
        if item.topic.membership == Topic.Membership.RULE:
            return "not scored: rule only"
        if not item.topic_trained:  # type: ignore[attr-defined]
            return "not scored yet: the topic has no trained model"
        return "not scored yet"

    @admin.display(description="why")
    def why(self, item: ReviewItem) -> str:
        return review_reason(item)

    def decision_buttons(self, request: HttpRequest) -> Callable[[ReviewItem], str]:
        """The Include and Exclude buttons. The changelist is itself a form, so they
        submit it to the decision views rather than nest forms of their own."""
        preserved = self.get_preserved_filters(request)
        query = f"?{preserved}" if preserved else ""

        @admin.display(description="decide")
        def decision(item: ReviewItem) -> str:
            # Named with the paper: thirty rows' "Include" are told apart.
            buttons = [
                (
                    reverse(f"admin:topics_reviewitem_{verb}", args=[item.pk]),
                    query,
                    f"{label} arXiv:{item.paper.arxiv_id}",
                    label,
                )
                for verb, label in [("include", "Include"), ("exclude", "Exclude")]
            ]
            return format_html_join(
                " ",
                '<button type="submit" class="button" formaction="{}{}" '
                'formmethod="post" aria-label="{}">{}</button>',
                buttons,
            )

        return decision

    def include_view(self, request: HttpRequest, item_id: int) -> HttpResponse:
        return self._decision_view(request, item_id, include=True)

    def exclude_view(self, request: HttpRequest, item_id: int) -> HttpResponse:
        return self._decision_view(request, item_id, include=False)

    def _decision_view(
        self, request: HttpRequest, item_id: int, *, include: bool
    ) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_decide_permission(request):
            raise PermissionDenied
        item = (
            ReviewItem.objects.select_related("topic", "paper")
            .filter(pk=item_id)
            .first()
        )
        if item is None:
            # A second click, the back button, or another curator first.
            self.message_user(
                request,
                "That paper was decided already; it has left the queue.",
                messages.WARNING,
            )
        else:
            decide_item(item, include=include, by=signed_in(request))
            title = Truncator(latex_to_text(item.paper.title)).chars(80)
            if include:
                message = f"Included “{title}” in {item.topic}."
            else:
                message = f"Excluded “{title}” from {item.topic}."
            self.message_user(request, message, messages.SUCCESS)
        changelist = reverse("admin:topics_reviewitem_changelist")
        context: dict[str, Any] = {
            "opts": self.opts,
            "preserved_filters": self.get_preserved_filters(request),
        }
        return HttpResponseRedirect(add_preserved_filters(context, changelist))

    @admin.action(description="Include selected papers", permissions=["decide"])
    def include_selected(
        self, request: HttpRequest, queryset: QuerySet[ReviewItem]
    ) -> None:
        count = self._decide_all(request, queryset, include=True)
        self.message_user(
            request, f"Included {count} paper(s) in their topics.", messages.SUCCESS
        )

    @admin.action(description="Exclude selected papers", permissions=["decide"])
    def exclude_selected(
        self, request: HttpRequest, queryset: QuerySet[ReviewItem]
    ) -> None:
        count = self._decide_all(request, queryset, include=False)
        self.message_user(
            request, f"Excluded {count} paper(s) from their topics.", messages.SUCCESS
        )

    @transaction.atomic
    def _decide_all(
        self, request: HttpRequest, queryset: QuerySet[ReviewItem], *, include: bool
    ) -> int:
        items = by_topic(queryset)
        for topic, paper_ids in items.items():
            if include:
                pin_papers(topic, paper_ids)
            else:
                exclude_papers(
                    topic, paper_ids, reason=REVIEW_REASON, by=signed_in(request)
                )
        return sum(map(len, items.values()))


def decide_item(item: ReviewItem, *, include: bool, by: User) -> None:
    """A curator's decision on a queued paper; curation removes the item."""
    if include:
        pin_paper(item.topic, item.paper)
    else:
        exclude_paper(item.topic, item.paper, reason=REVIEW_REASON, by=by)


@admin.register(RelevanceFlag)
class RelevanceFlagAdmin(
    ReadersHidden, ReadOnlyRecords, PaperColumns, admin.ModelAdmin
):
    """Readers' "not relevant" reports; they reach curators through the queue
    (topics.flags writes them). A curator judges the paper, not the reader."""

    list_display = ["paper_text", "topic_text", "user", "created_at", "in_queue"]
    fields = ["paper", "topic", "user", "created_at", "in_queue"]
    readonly_fields = ["in_queue"]
    list_filter = ["topic"]
    list_select_related = ["paper", "topic", "user"]
    search_fields = ["paper__arxiv_id", "paper__title", "user__email"]
    date_hierarchy = "created_at"

    @admin.display(description="decide")
    def in_queue(self, flag: RelevanceFlag) -> str:
        """The flagged paper's row in the topic's review queue, where its
        Include and Exclude buttons are."""
        url = queue_url(flag.topic_id, paper=flag.paper.arxiv_id)
        return format_html(
            '<a href="{}">Include or exclude in the review queue</a>', url
        )
