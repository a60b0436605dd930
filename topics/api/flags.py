"""Readers' "not relevant" flags on a paper's tag, for the curators' queue."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions
from rest_framework import serializers
from rest_framework import status
from rest_framework.exceptions import Throttled
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.requests import signed_in
from core.api.errors import ErrorSerializer
from core.api.views import StrictQueryParams
from core.api.views import refuse_body
from papers.api.papers import PAPER_ID_PARAMETER
from papers.query import get_paper_row
from topics.api.topics import SLUG_PARAMETER
from topics.flags import FlagResult
from topics.flags import flag_not_relevant
from topics.flags import retry_after
from topics.models import ReviewItem
from topics.query import active_topic_at


class NotTagged(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "This paper is not in this topic."
    default_code = "not_tagged"


class FlagSerializer(serializers.Serializer):
    topic = serializers.CharField(help_text="The topic's slug.")
    paper = serializers.CharField(help_text="The paper's arXiv id, without version.")
    flagged = serializers.BooleanField(help_text="Always true: the caller flagged it.")
    flags = serializers.IntegerField(
        help_text="Readers' flags on this tag awaiting a curator, the caller's "
        "included."
    )


class FlagView(StrictQueryParams, APIView):
    """A reader's "not relevant" flag on a paper's tag, as the paper page's button."""

    @extend_schema(
        summary="Flag a paper as not relevant to a topic",
        description="Puts the paper in the topic's review queue for the curators; "
        "membership does not change. Idempotent: flagging again answers 200 and "
        "counts once. New flags are limited per reader (MOMENTUM_FLAG_RATE).",
        parameters=[SLUG_PARAMETER, PAPER_ID_PARAMETER],
        request=None,
        responses={
            201: OpenApiResponse(FlagSerializer, description="Flagged."),
            200: OpenApiResponse(FlagSerializer, description="Flagged before."),
            409: OpenApiResponse(
                ErrorSerializer,
                description="The paper is not in this topic (code not_tagged).",
            ),
        },
    )
    def post(self, request: Request, slug: str, arxiv_id: str) -> Response:
        refuse_body(request)
        topic = active_topic_at(slug)
        paper = get_paper_row(arxiv_id)
        result = flag_not_relevant(signed_in(request), topic, paper)
        if result == FlagResult.NOT_TAGGED:
            raise NotTagged
        if result == FlagResult.LIMITED:
            raise Throttled(
                wait=retry_after(signed_in(request)), detail="Too many new flags."
            )
        # Zero only if a curator decided in between (deleting item and flags).
        flags = (
            ReviewItem.objects.filter(topic=topic, paper=paper)
            .values_list("flags", flat=True)
            .first()
        )
        data = {"topic": topic.slug, "paper": paper.arxiv_id, "flagged": True}
        created = result == FlagResult.FLAGGED
        return Response(
            FlagSerializer({**data, "flags": flags or 0}).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )
