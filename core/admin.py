"""Admin for rows that one module writes."""

from __future__ import annotations

from django.http import HttpRequest


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
