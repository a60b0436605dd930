"""The topics resource: anyone reads, staff write; a read at a former slug
is sent on to the merged topic."""

from __future__ import annotations

import json
from collections.abc import Set as AbstractSet
from typing import Any

from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.crypto import salted_hmac
from drf_spectacular.utils import OpenApiParameter
from drf_spectacular.utils import OpenApiResponse
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.caching import CONDITIONAL_PARAMETERS
from core.api.caching import CONDITIONAL_RESPONSES
from core.api.caching import VALIDATOR_HEADERS
from core.api.caching import WRITE_CONDITIONAL_RESPONSES
from core.api.caching import WRITE_VALIDATOR_HEADERS
from core.api.caching import conditional_response
from core.api.caching import require_unchanged
from core.api.caching import write_validators
from core.api.errors import ErrorSerializer
from core.api.views import StrictQueryParams
from core.api.views import query_names
from core.api.views import read_query
from core.api.views import refuse_body
from papers.api.papers import PAPER_LIST_ERRORS
from papers.api.papers import PAPER_LIST_PARAMETERS
from papers.api.papers import paper_list_response
from papers.filters import PaperFilterSerializer
from papers.pagination import PaperCursorPagination
from papers.serializers import PaperPageSerializer
from topics.curation import request_retag
from topics.editing import save_topic
from topics.filters import TopicFilterSerializer
from topics.following import follows_fingerprint
from topics.following import with_follower_count
from topics.models import Topic
from topics.permissions import CuratorsWrite
from topics.permissions import sees_inactive_topics
from topics.query import active_topics
from topics.query import all_topics
from topics.query import follow_merges
from topics.query import related_topics
from topics.query import with_figures
from topics.serializers import RetagSerializer
from topics.serializers import TopicDetailSerializer
from topics.serializers import TopicSerializer
from topics.serializers import TopicWriteSerializer

SLUG_PATH = r"[-a-zA-Z0-9_]+"
WRITTEN_FIELDS_SALT = "topics.api.topics.written_fields"
SLUG_PARAMETER = OpenApiParameter(
    "slug",
    str,
    OpenApiParameter.PATH,
    pattern=rf"^{SLUG_PATH}$",
    description="The topic's slug.",
)
# A read at a former slug (topics.query.follow_merges).
MOVED = {
    301: OpenApiResponse(
        description="The slug is a former one of the topic (renamed, or merged "
        "into another): Location is the same address under its slug now."
    )
}
# What a PUT gives the fields it leaves out: a new topic's values.
REPLACED_DEFAULTS = {
    "description": "",
    "definition": "",
    "glossary": "",
    "categories": [],
    "related": [],
    "is_active": True,
}
INACTIVE_LIST_ERRORS = {
    401: OpenApiResponse(
        ErrorSerializer,
        description="`active=false` without signing in (code not_authenticated), "
        "or a token that is not one (authentication_failed).",
    ),
    403: OpenApiResponse(
        ErrorSerializer,
        description="`active=false` from anyone but staff who may view topics "
        "(code permission_denied).",
    ),
}
# How a PUT or PATCH is made on what a curator read (require_unchanged).
WRITTEN_ON_A_READ = (
    "Sent with If-Match, the ETag of a read of the topic or of a write's "
    "answer, it is a 412 (nothing written) if the topic's own fields (those a "
    "PUT sends) changed since; with If-Unmodified-Since, its Last-Modified, if "
    "the topic was changed since."
)
WRITE_ERRORS = {
    404: OpenApiResponse(
        ErrorSerializer,
        description="No such topic, or a category or related topic in the body "
        "that does not exist (code not_found, with the field).",
    ),
    409: OpenApiResponse(
        ErrorSerializer,
        description="Another topic has this name or slug (code conflict, with "
        "the field).",
    ),
}


class TopicViewSet(StrictQueryParams, viewsets.GenericViewSet):
    """Curated topics with their momentum. Anyone reads active topics; staff
    create and change topics (active or not) and ask for re-tags."""

    permission_classes = [CuratorsWrite]
    lookup_field = "slug"
    lookup_value_regex = SLUG_PATH
    queryset = Topic.objects.none()
    serializer_class = TopicSerializer

    def allowed_query_params(self) -> AbstractSet[str]:
        if self.action == "papers":
            fields = query_names(PaperFilterSerializer) - {"topic"}
            return fields | PaperCursorPagination.query_params
        if self.action == "list":
            return query_names(TopicFilterSerializer)
        return set()

    @extend_schema(
        summary="List topics",
        description="Every active topic by name, with paper and follower counts "
        "and its momentum (null before the first count); with `active=false`, "
        "the inactive ones (staff).",
        parameters=[
            TopicFilterSerializer,
            *CONDITIONAL_PARAMETERS,
            *VALIDATOR_HEADERS,
        ],
        responses={
            200: TopicSerializer(many=True),
            **CONDITIONAL_RESPONSES,
            **INACTIVE_LIST_ERRORS,
        },
    )
    def list(self, request: Request) -> Response | HttpResponse:
        active = read_query(TopicFilterSerializer, request).get("active", True)
        if not active and not sees_inactive_topics(request):
            self.permission_denied(
                request, message="Only staff who may view topics list inactive ones."
            )
        shown = active_topics() if active else all_topics().filter(is_active=False)

        def build() -> list[dict[str, Any]]:
            topics = with_figures(with_follower_count(shown).order_by("name"))
            return TopicSerializer(topics, many=True, context={"request": request}).data  # type: ignore[return-value]  # many=True: a list

        return conditional_response(
            request, build, fingerprint=follows_fingerprint(), private=not active
        )

    @extend_schema(
        summary="One topic",
        description="Glossary, rule, the weekly momentum series and related "
        "topics. An inactive topic is a 404, but to staff who may view topics.",
        parameters=[SLUG_PARAMETER, *CONDITIONAL_PARAMETERS, *VALIDATOR_HEADERS],
        responses={200: TopicDetailSerializer, **CONDITIONAL_RESPONSES, **MOVED},
    )
    @follow_merges
    def retrieve(self, request: Request, slug: str) -> Response | HttpResponse:
        # Staff may change inactive topics, so they read them back too.
        staff = sees_inactive_topics(request)

        built: list[Topic] = []

        def build() -> dict[str, Any]:
            shown = all_topics() if staff else active_topics()
            topics = with_follower_count(shown).prefetch_related("categories")
            topic = with_figures([get_object_or_404(topics, slug=slug)])[0]
            built.append(topic)
            context = {"request": request, "related": related_topics(topic)}
            return TopicDetailSerializer(topic, context=context).data

        # Bodies and ETags are keyed by address: staff's, which may show an
        # inactive topic, are kept apart from the 404 everyone else gets there.
        fingerprint = follows_fingerprint() + ("|staff" if staff else "")
        return conditional_response(
            request,
            build,
            fingerprint=fingerprint,
            private=staff,
            fields=lambda: written_fields(built[0]),
        )

    @extend_schema(
        summary="A topic's papers",
        description="The same filters and pagination as the paper list.",
        parameters=[
            SLUG_PARAMETER,
            *PAPER_LIST_PARAMETERS,
            # The path names the topic.
            OpenApiParameter("topic", exclude=True),
            *CONDITIONAL_PARAMETERS,
            *VALIDATOR_HEADERS,
        ],
        responses={
            200: PaperPageSerializer,
            **CONDITIONAL_RESPONSES,
            **PAPER_LIST_ERRORS,
            **MOVED,
        },
    )
    @action(detail=True, methods=["get"])
    @follow_merges
    def papers(self, request: Request, slug: str) -> Response | HttpResponse:
        return paper_list_response(request, topic=slug)

    @extend_schema(
        summary="Create a topic (staff)",
        description="Validated as in admin: an invalid rule is refused with the "
        "position of the problem. The new topic's papers are tagged in the "
        "background.",
        parameters=[
            *WRITE_VALIDATOR_HEADERS,
            OpenApiParameter(
                "Location",
                str,
                OpenApiParameter.HEADER,
                response=[201],
                required=True,
                description="The new topic's address.",
            ),
        ],
        request=TopicWriteSerializer,
        responses={201: TopicDetailSerializer, **WRITE_ERRORS},
    )
    def create(self, request: Request) -> Response:
        return self._save(request, Topic(), status.HTTP_201_CREATED)

    @extend_schema(
        summary="Replace a topic (staff)",
        description="Fields left out take their defaults, as for a new topic: "
        "empty text and lists, active. PATCH changes only the fields sent. "
        + WRITTEN_ON_A_READ,
        parameters=[SLUG_PARAMETER, *WRITE_VALIDATOR_HEADERS],
        request=TopicWriteSerializer,
        responses={
            200: TopicDetailSerializer,
            **WRITE_ERRORS,
            **WRITE_CONDITIONAL_RESPONSES,
        },
    )
    @transaction.atomic
    def update(self, request: Request, slug: str) -> Response:
        topic = self._unchanged_topic(request, slug)
        given = request.data
        if isinstance(given, dict):
            given = {**REPLACED_DEFAULTS, **given}
        return self._save(request, topic, status.HTTP_200_OK, data=given)

    @extend_schema(
        summary="Change a topic (staff)",
        description="A changed rule, category list or activity re-tags the "
        "topic's papers in the background, as in admin. " + WRITTEN_ON_A_READ,
        parameters=[SLUG_PARAMETER, *WRITE_VALIDATOR_HEADERS],
        request=TopicWriteSerializer,
        responses={
            200: TopicDetailSerializer,
            **WRITE_ERRORS,
            **WRITE_CONDITIONAL_RESPONSES,
        },
    )
    @transaction.atomic
    def partial_update(self, request: Request, slug: str) -> Response:
        topic = self._unchanged_topic(request, slug)
        return self._save(request, topic, status.HTTP_200_OK, partial=True)

    @extend_schema(
        summary="Re-tag a topic's papers (staff)",
        description="Queued for the tagging workers; `retag_requested_at` tells "
        "when. Asking again restarts it.",
        parameters=[SLUG_PARAMETER],
        request=None,
        responses={202: RetagSerializer},
    )
    @action(detail=True, methods=["post"])
    def retag(self, request: Request, slug: str) -> Response:
        refuse_body(request)
        topic = get_object_or_404(Topic, slug=slug)
        request_retag(topic)
        return Response(RetagSerializer(topic).data, status=status.HTTP_202_ACCEPTED)

    def _unchanged_topic(self, request: Request, slug: str) -> Topic:
        """The topic to change, locked until the write commits, if the
        request's If-Match / If-Unmodified-Since hold for it (a 412 if not)."""
        topic = get_object_or_404(Topic.objects.select_for_update(), slug=slug)
        require_unchanged(
            request, fields=written_fields(topic), changed=topic.updated_at
        )
        return topic

    def _save(
        self,
        request: Request,
        topic: Topic,
        code: int,
        *,
        partial: bool = False,
        data: Any = None,
    ) -> Response:
        given = TopicWriteSerializer(
            topic if topic.pk else None,
            data=request.data if data is None else data,
            partial=partial,
        )
        given.is_valid(raise_exception=True)
        fields = dict(given.validated_data)
        topic = save_topic(
            topic,
            fields=fields,
            categories=fields.pop("categories", None),
            related=fields.pop("related", None),
        )
        # Staff may change inactive topics, which active_topics() leaves out.
        shown = with_follower_count(all_topics().filter(pk=topic.pk))
        topic = with_figures(shown.prefetch_related("categories"))[0]
        context = {"request": request, "related": related_topics(topic)}
        body = TopicDetailSerializer(topic, context=context).data
        # The body is the topic as its address now shows it (RFC 9110 8.7),
        # with the validators the next write sends; a new one's address is
        # also its Location (15.3.2).
        headers = {
            **({"Location": body["links"]["api"]} if code == 201 else {}),
            "Content-Location": body["links"]["api"],
            **write_validators(
                body, fields=written_fields(topic), changed=topic.updated_at
            ),
        }
        return Response(body, status=code, headers=headers)


def written_fields(topic: Topic) -> str:
    """A digest of the topic's fields as a PUT gives them (If-Match compares
    these; its ETag carries it): not its papers, momentum or followers, which
    no write sets. Keyed, as an ETag is public and a visitor is not shown an
    inactive related topic's slug."""
    fields = TopicWriteSerializer(topic).data
    for name in ("categories", "related"):
        fields[name] = sorted(fields[name])
    shown = json.dumps(fields, sort_keys=True)
    return salted_hmac(WRITTEN_FIELDS_SALT, shown, algorithm="sha256").hexdigest()[:32]
