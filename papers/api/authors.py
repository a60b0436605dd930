"""The authors the caller follows."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse
from drf_spectacular.utils import extend_schema
from rest_framework import mixins
from rest_framework import serializers
from rest_framework import status
from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.requests import signed_in
from core.api.errors import ErrorSerializer
from core.api.errors import missing
from core.api.views import StrictQueryParams
from papers.api.papers import AUTHOR_ID_PARAMETER
from papers.authors import set_following_author
from papers.models import Author
from papers.models import AuthorFollow
from papers.serializers import AuthorFollowInputSerializer
from papers.serializers import AuthorFollowSerializer


class AuthorFollowViewSet(
    StrictQueryParams, mixins.ListModelMixin, viewsets.GenericViewSet
):
    """The authors the caller follows: their new papers join the caller's feed
    and digest."""

    serializer_class = AuthorFollowSerializer
    pagination_class = None
    lookup_field = "author_id"
    lookup_value_regex = "[0-9]{1,18}"

    def get_queryset(self) -> QuerySet[AuthorFollow]:
        return (
            AuthorFollow.objects.filter(user=signed_in(self.request))
            .select_related("author")
            .order_by("author__name", "author_id")
        )

    @extend_schema(summary="List followed authors")
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        summary="Follow an author",
        description="Idempotent: following a followed author changes nothing "
        "(200, where a new follow is a 201).",
        request=AuthorFollowInputSerializer,
        responses={
            201: AuthorFollowSerializer,
            200: OpenApiResponse(
                AuthorFollowSerializer, description="Already followed."
            ),
            404: OpenApiResponse(
                ErrorSerializer,
                description="There is no such author (code not_found, with the field).",
            ),
        },
    )
    def create(self, request: Request) -> Response:
        given = AuthorFollowInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        author = Author.objects.filter(pk=given.validated_data["author"]).first()
        if author is None:
            raise serializers.ValidationError(
                {"author": [missing("author", "id", given.validated_data["author"])]},
                code="does_not_exist",
            )
        created = set_following_author(signed_in(request), author, True)
        follow = self.get_queryset().get(author=author)
        return Response(
            AuthorFollowSerializer(follow).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(
        summary="Unfollow an author",
        description="Idempotent: unfollowing an author not followed changes nothing.",
        parameters=[AUTHOR_ID_PARAMETER],
        responses={
            204: OpenApiResponse(description="Not followed (any more)."),
            404: OpenApiResponse(
                ErrorSerializer, description="There is no such author (not_found)."
            ),
        },
    )
    def destroy(self, request: Request, author_id: str) -> Response:
        author = Author.objects.filter(pk=int(author_id)).first()
        if author is None:
            raise Http404(missing("author", "id", author_id))
        set_following_author(signed_in(request), author, False)
        return Response(status=status.HTTP_204_NO_CONTENT)
