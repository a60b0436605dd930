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
        return False
