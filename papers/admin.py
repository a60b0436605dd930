from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from papers.models import Affiliation
from papers.models import Author
from papers.models import Authorship
from papers.models import Category
from papers.models import IngestRun
from papers.models import Paper
from papers.models import SavedPaper


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["code", "name"]
    search_fields = ["code", "name"]


@admin.register(Author)
class AuthorAdmin(admin.ModelAdmin):
    list_display = ["name"]
    search_fields = ["name"]


@admin.register(Affiliation)
class AffiliationAdmin(admin.ModelAdmin):
    list_display = ["name"]
    search_fields = ["name"]


class AuthorshipInline(admin.TabularInline):
    model = Authorship
    extra = 0
    autocomplete_fields = ["author", "affiliations"]
    ordering = ["position"]


@admin.register(Paper)
class PaperAdmin(admin.ModelAdmin):
    list_display = [
        "arxiv_id",
        "version",
        "title",
        "primary_category",
        "first_announced",
        "withdrawn",
    ]
    list_filter = ["withdrawn", "first_announced", "primary_category"]
    list_select_related = ["primary_category"]
    search_fields = ["arxiv_id", "title", "author_names"]
    date_hierarchy = "first_announced"
    autocomplete_fields = ["primary_category", "categories"]
    readonly_fields = ["created_at", "modified_at", "versions"]
    inlines = [AuthorshipInline]
    show_full_result_count = False


@admin.register(SavedPaper)
class SavedPaperAdmin(admin.ModelAdmin):
    list_display = ["user", "paper", "created_at"]
    list_select_related = ["user", "paper"]
    search_fields = ["user__email", "paper__arxiv_id", "paper__title"]
    raw_id_fields = ["user", "paper"]


@admin.register(IngestRun)
class IngestRunAdmin(admin.ModelAdmin):
    list_display = [
        "started_at",
        "source",
        "format",
        "status",
        "fetched_count",
        "new_count",
        "updated_count",
        "unchanged_count",
        "rejected_count",
        "duration",
    ]
    list_filter = ["status", "format"]
    list_select_related: list[str] = []
    search_fields = ["source", "message"]
    readonly_fields = [field.name for field in IngestRun._meta.fields] + ["duration"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet[IngestRun]:
        return super().get_queryset(request).defer("errors")
