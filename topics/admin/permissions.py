"""Who curates a topic's papers in admin: whoever may change the topic
(`topics.change_topic`, as a curator may).

Pinning, excluding, unpinning, lifting and the review queue's decisions change
which papers a topic holds, as editing its rule does; the rows they write (tags,
exclusions) are the curation functions' (topics.curation), never a form's, so
no permission on those rows themselves is asked for.
"""

from __future__ import annotations

from django.http import HttpRequest


def curates(request: HttpRequest) -> bool:
    return request.user.has_perm("topics.change_topic")


class CuratedRows:
    """A ModelAdmin mixin for a topic's decisions (pins, exclusions): curators
    see them, and act on them with the actions asking for "curate"."""

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return curates(request) or super().has_view_permission(request, obj)  # type: ignore[misc]  # a ModelAdmin's

    def has_curate_permission(self, request: HttpRequest) -> bool:
        return curates(request)


class CuratedInline:
    """An inline of a topic's decisions on its change page: curators edit
    them; staff who may view those rows see them."""

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return curates(request) or super().has_view_permission(request, obj)  # type: ignore[misc]  # an InlineModelAdmin's

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return curates(request)

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return curates(request)

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return curates(request)
