"""The caller's follows, of topics."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse
from drf_spectacular.utils import extend_schema
from rest_framework import mixins
from rest_framework import status
from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.requests import signed_in
from core.api.errors import ErrorSerializer
from core.api.errors import missing
from core.api.views import StrictQueryParams
from topics.api.topics import SLUG_PARAMETER
from topics.api.topics import SLUG_PATH
from topics.following import set_following
from topics.following import set_muted
from topics.models import Follow
from topics.query import topic_at
from topics.serializers import FollowInputSerializer
from topics.serializers import FollowMuteSerializer
from topics.serializers import FollowSerializer


class FollowViewSet(StrictQueryParams, mixins.ListModelMixin, viewsets.GenericViewSet):
    """The topics the caller follows."""

    serializer_class = FollowSerializer
    lookup_field = "slug"
    lookup_value_regex = SLUG_PATH
    pagination_class = None

    def get_queryset(self) -> Any:
        return (
            Follow.objects.filter(user=signed_in(self.request))
            .select_related("topic")
            .order_by("topic__name")
        )

    @extend_schema(summary="List followed topics")
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        summary="Follow a topic",
        description="Idempotent: following a followed topic changes nothing "
        "(200, where a new follow is a 201).",
        request=FollowInputSerializer,
        responses={
            201: FollowSerializer,
            200: OpenApiResponse(FollowSerializer, description="Already followed."),
            404: OpenApiResponse(
                ErrorSerializer,
                description="No active topic has this slug (code not_found, with "
                "the field).",
            ),
        },
    )
    def create(self, request: Request) -> Response:
        given = FollowInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        topic = given.validated_data["topic"]
        created = set_following(signed_in(request), topic, True)
        follow = self.get_queryset().get(topic=topic)
        return Response(
            FollowSerializer(follow).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(
        summary="Mute or unmute a followed topic in digests",
        description="Without `muted`, nothing changes.",
        parameters=[SLUG_PARAMETER],
        request=FollowMuteSerializer,
        responses={200: FollowSerializer},
    )
    def partial_update(self, request: Request, slug: str) -> Response:
        follow = self.get_queryset().filter(topic=topic_at(slug)).first()
        if follow is None:
            raise Http404(missing("followed topic", "slug", slug))
        given = FollowMuteSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        if "muted" in given.validated_data:
            set_muted(follow, given.validated_data["muted"])
        return Response(FollowSerializer(follow).data)

    @extend_schema(
        summary="Unfollow a topic",
        description="Idempotent: unfollowing a topic not followed changes nothing.",
        parameters=[SLUG_PARAMETER],
        responses={204: OpenApiResponse(description="Not followed (any more).")},
    )
    def destroy(self, request: Request, slug: str) -> Response:
        # Inactive topics keep their followers, who may still leave them; and
        # a merged-away slug names the topic its follows moved to.
        set_following(signed_in(request), topic_at(slug), False)
        return Response(status=status.HTTP_204_NO_CONTENT)
