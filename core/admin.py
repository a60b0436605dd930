"""Admin for rows that one module writes, and for rows that take thousands
of others along when deleted."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.utils import NestedObjects
from django.db import router
from django.db.models import Model
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import capfirst


class ReadOnlyRecords:
    """A ModelAdmin mixin for rows that one module writes, keeping what hangs
    off them consistent (cached pages' versions, related rows, a model to
    retrain): admin's add, change and delete forms would write them past it.
    The list and each row stay readable; actions that call the writer act."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        # Not from their own pages; but deleting what they hang off (a topic,
        # a paper, a user) takes them along, and admin asks each related row's
        # admin first: a plain False refused every such deletion.
        match = request.resolver_match
        own_page = f"{self.opts.app_label}_{self.opts.model_name}_"  # type: ignore[attr-defined]  # a ModelAdmin's
        return (
            match is not None
            and not (match.url_name or "").startswith(own_page)
            and super().has_delete_permission(request, obj)  # type: ignore[misc]  # a ModelAdmin's
        )


class CountedDeletion:
    """A ModelAdmin mixin: deleting asks its confirmation for the rows chosen,
    and counts what goes with them (a topic's thousands of tags, a reader's
    follows and saves), where Django's page names every related row, one query
    each to name it (16,000 for a large topic: 18-29 s, twice, for the page and
    for the delete)."""

    def get_deleted_objects(
        self, objs: Any, request: HttpRequest
    ) -> tuple[list[str], dict[str, int], set[str], list[str]]:
        objs = list(objs)
        if not objs:
            return [], {}, set(), []
        collector = NestedObjects(using=router.db_for_write(type(objs[0])))
        collector.collect(objs)
        registry = self.admin_site._registry  # type: ignore[attr-defined]  # a ModelAdmin's
        # The stubs type model_objs' keys as labels; they are models.
        kinds: dict[type[Model], Any] = collector.model_objs  # type: ignore[assignment]
        # Asked once per kind of row (no admin here decides row by row).
        perms_needed = {
            str(model._meta.verbose_name)
            for model in kinds
            if model in registry and not registry[model].has_delete_permission(request)
        }
        counts = {
            str(model._meta.verbose_name_plural): len(rows)
            for model, rows in kinds.items()
        }
        protected = [
            f"{capfirst(row._meta.verbose_name)}: {row}" for row in collector.protected
        ]
        return [self._named(obj) for obj in objs], counts, perms_needed, protected

    def _named(self, obj: Any) -> str:
        opts = obj._meta
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
        return format_html(
            '{}: <a href="{}">{}</a>', capfirst(opts.verbose_name), url, obj
        )
