from __future__ import annotations

import re

from django.conf import settings
from django.contrib import admin
from django.contrib import messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.html import format_html_join

from core.admin import ReadersHidden
from core.admin import ReadOnlyRecords
from core.queue import send
from papers.ingest.harvest import leave_to_the_next_tick
from papers.ingest.records import ParseError
from papers.ingest.records import split_arxiv_id
from papers.latex import latex_to_text
from papers.models import Affiliation
from papers.models import Author
from papers.models import Category
from papers.models import FeedSource
from papers.models import IngestRun
from papers.models import Paper
from papers.models import SavedPaper
from papers.search import matching_papers
from papers.tasks import ingest_source


class WrittenByIngest:
    """A ModelAdmin mixin for rows ingest writes and papers hold on to
    (PROTECT): not deleted here, where one on a paper cannot be and "delete
    selected" named every paper holding them (all authors: 7.7 minutes, a
    25 MB page) only to say so. Their names can be corrected."""

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Category)
class CategoryAdmin(WrittenByIngest, admin.ModelAdmin):
    list_display = ["code", "name"]
    search_fields = ["code", "name"]


@admin.register(Author)
class AuthorAdmin(WrittenByIngest, admin.ModelAdmin):
    list_display = ["name", "key"]
    search_fields = ["name", "key"]
    # Set from the name when the author is created (papers.identity).
    readonly_fields = ["key"]


@admin.register(Affiliation)
class AffiliationAdmin(admin.ModelAdmin):
    list_display = ["name"]
    search_fields = ["name"]


# The start of an arXiv id, new style (2607.163) or old (hep-th/99).
ID_START = re.compile(r"[0-9]{4}(?:\.[0-9]{0,5})?|[a-z-]+(?:\.[A-Z]{2})?/[0-9]{0,7}")
# A whole id, which no other id starts with (2607.16314, hep-th/9901001).
WHOLE_ID = re.compile(r"[0-9]{4}\.[0-9]{5}|[a-z-]+(?:\.[A-Z]{2})?/[0-9]{7}")


class ArxivIdSearch:
    """A ModelAdmin mixin: a search for one paper's arXiv id ("arXiv:2607.16314",
    "2607.16314v2", its arxiv.org address) goes straight to its rows, where the
    search fields' LIKE over every row took seconds at 100,000 papers; other
    text (words of a title, the start of an id) is searched as the fields say."""

    arxiv_id_field = "arxiv_id"

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        try:
            arxiv_id, _ = split_arxiv_id(search_term)
        except ParseError:
            arxiv_id = ""
        found = queryset.filter(**{self.arxiv_id_field: arxiv_id})
        if arxiv_id and found.exists():
            return found, False
        return super().get_search_results(request, queryset, search_term)  # type: ignore[misc]  # a ModelAdmin's


@admin.register(Paper)
class PaperAdmin(ReadOnlyRecords, admin.ModelAdmin):
    """Papers are arXiv's, written by ingest alone (papers.ingest.upsert): it
    tags them, finds their similar papers and moves the pages that show them,
    which a form here would not. A paper is corrected by harvesting it again."""

    list_display = [
        "arxiv_id",
        "version",
        "title_text",
        "primary_category",
        "first_announced",
        "withdrawn",
    ]
    list_filter = ["withdrawn", "first_announced", "primary_category"]
    list_select_related = ["primary_category"]
    search_fields = ["arxiv_id", "title", "author_names"]
    search_help_text = (
        "An arXiv id or its start, or words of the title, abstract or authors "
        "as the site's search reads them."
    )
    date_hierarchy = "first_announced"
    autocomplete_fields = ["primary_category", "categories"]
    readonly_fields = ["created_at", "modified_at", "versions", "author_list"]

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        """One paper's id in any form, the start of an id, or words through
        the search index, where the search fields' LIKE read every paper three
        times (the count, the dates, the rows: 0.4-1.1 s at 100,000 papers)."""
        term = search_term.strip()
        if not term:
            return queryset, False
        # A whole id is looked up, not matched as a start: LIKE reads every
        # paper, and the date hierarchy read them twice more (0.7 s).
        if ID_START.fullmatch(term) and not WHOLE_ID.fullmatch(term):
            # Found first, through their index: filtered in place, PostgreSQL
            # took the date hierarchy's first and last day by reading papers
            # in date order for the first whose id matched (0.3 s for 10,000
            # matches at 100,000 papers; 0.04 s so).
            starting = Paper.objects.filter(arxiv_id__startswith=term)
            return queryset.filter(pk__in=starting.values("pk")), False
        try:
            arxiv_id, _ = split_arxiv_id(term)
        except ParseError:
            arxiv_id = ""
        if arxiv_id:
            return queryset.filter(arxiv_id=arxiv_id), False
        return queryset.filter(pk__in=matching_papers(term).values("pk")), False

    show_full_result_count = False

    class Media:
        css = {"all": ["css/admin_lists.css", "css/admin_papers.css"]}

    @admin.display(description="title", ordering="title")
    def title_text(self, paper: Paper) -> str:
        # As the site shows it: arXiv's TeX ("$n\\geq 4$") read as text.
        return latex_to_text(paper.title)

    @admin.display(description="authors")
    def author_list(self, paper: Paper) -> str:
        """The authors in order, each with their affiliations on this paper: a
        list, where a read-only form row per author made a paper of 572 authors
        a 651 KB page."""
        authorships = (
            paper.authorships.order_by("position")
            .select_related("author")
            .prefetch_related("affiliations")
        )
        rows = []
        for authorship in authorships:
            affiliations = "; ".join(a.name for a in authorship.affiliations.all())
            rows.append(
                (authorship.author.name, f" ({affiliations})" if affiliations else "")
            )
        return format_html(
            '<ol class="paper-authors">{}</ol>',
            format_html_join("", "<li>{}{}</li>", rows),
        )


@admin.register(SavedPaper)
class SavedPaperAdmin(ReadersHidden, ReadOnlyRecords, admin.ModelAdmin):
    """Written by papers.library (the reader's pages and For you follow)."""

    list_display = ["user", "paper", "created_at"]
    list_select_related = ["user", "paper"]
    search_fields = ["user__email", "paper__arxiv_id", "paper__title"]


@admin.register(FeedSource)
class FeedSourceAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "kind",
        "category",
        "enabled",
        "next_run_at",
        "last_success_at",
        "health",
    ]
    list_filter = ["kind", "enabled"]
    search_fields = ["name", "category", "query"]
    readonly_fields = [
        "last_success_at",
        "last_error",
        "last_error_at",
        "claimed_by",
        "claimed_until",
        "etag",
        "last_modified",
        "resumption_token",
        "created_at",
        "updated_at",
    ]
    actions = ["run_now"]

    @admin.display(description="health")
    def health(self, source: FeedSource) -> str:
        if source.last_error and (
            source.last_success_at is None
            or (source.last_error_at and source.last_error_at > source.last_success_at)
        ):
            return f"failing: {source.last_error[:80]}"
        return "ok" if source.last_success_at else "never run"

    @admin.action(description="Run now", permissions=["change"])
    def run_now(self, request: HttpRequest, queryset: QuerySet[FeedSource]) -> None:
        ids = list(queryset.values_list("pk", flat=True))
        deferred = [pk for pk in ids if not send(ingest_source, pk)]
        sent = len(ids) - len(deferred)
        if sent and settings.CELERY_TASK_ALWAYS_EAGER:
            # No broker (the embedded default): send() ran them here, already.
            ran = format_html(
                'Ran {} source(s) in this request: see <a href="{}">their runs</a>.',
                sent,
                reverse("admin:papers_ingestrun_changelist"),
            )
            self.message_user(request, ran)
        elif sent:
            self.message_user(request, f"Queued {sent} source(s) to run now.")
        if deferred:
            leave_to_the_next_tick(deferred)
            self.message_user(
                request,
                f"The task queue is unavailable: {len(deferred)} source(s) will run "
                "at beat's first tick once it is back.",
                messages.WARNING,
            )


@admin.register(IngestRun)
class IngestRunAdmin(admin.ModelAdmin):
    list_display = [
        "started_at",
        "source",
        "format",
        "colored_status",
        "fetched_count",
        "new_count",
        "updated_count",
        "unchanged_count",
        "rejected_count",
        "duration",
    ]
    list_filter = ["status", "format", "feed"]
    list_select_related = ["feed"]
    search_fields = ["source", "message"]
    readonly_fields = [
        *(f.name for f in IngestRun._meta.fields if f.name != "errors"),
        "duration",
        "error_list",
    ]
    exclude = ["errors"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet[IngestRun]:
        # The error list can be long; only the detail page reads it.
        return super().get_queryset(request).defer("errors")

    @admin.display(description="status", ordering="status")
    def colored_status(self, run: IngestRun) -> str:
        colors = {"failed": "#c92a2a", "partial": "#e67700", "running": "#1971c2"}
        return format_html(
            '<strong style="color: {}">{}</strong>',
            colors.get(run.status, "#2b8a3e"),
            run.get_status_display(),
        )

    @admin.display(description="errors")
    def error_list(self, run: IngestRun) -> str:
        if not run.errors:
            return "none"
        rows = format_html_join(
            "",
            "<li><code>{}</code>: {}</li>",
            ((e["entry"], e["message"]) for e in run.errors),
        )
        more = run.rejected_count - len(run.errors)
        tail = format_html("<li>… and {} more</li>", more) if more > 0 else ""
        return format_html("<ul>{}{}</ul>", rows, tail)
