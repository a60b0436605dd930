"""The topic list's filter, as the API reads it."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import QueryBoolean


class TopicFilterSerializer(serializers.Serializer):
    active = QueryBoolean(
        required=False,
        help_text="true (the default): the active topics; false: those the "
        "curators deactivated, for staff who may view topics (401 without "
        "signing in, 403 for others).",
    )
