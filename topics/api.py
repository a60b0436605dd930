"""API views for topics (anyone reads, staff write), the caller's follows, and
readers' "not relevant" flags on a paper's tag."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from datetime import date
from typing import Any

from django.core.validators import RegexValidator
from django.db.models import Count
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter
from drf_spectacular.utils import OpenApiResponse
from drf_spectacular.utils import extend_schema
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import exceptions
from rest_framework import mixins
from rest_framework import serializers
from rest_framework import status
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import Throttled
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from accounts.requests import signed_in
from core.api.caching import CONDITIONAL_PARAMETERS
from core.api.caching import CONDITIONAL_RESPONSES
from core.api.caching import VALIDATOR_HEADERS
from core.api.caching import conditional_response
from core.api.errors import ErrorSerializer
from core.api.fields import Text
from core.api.views import StrictQueryParams
from core.api.views import query_names
from core.api.views import read_query
from papers.api import PAPER_ID_PARAMETER
from papers.api import PAPER_LIST_ERRORS
from papers.api import PAPER_LIST_PARAMETERS
from papers.api import paper_list_response
from papers.filters import PaperFilterSerializer
from papers.models import Paper
from papers.pagination import ORDERING
from papers.pagination import PaperCursorPagination
from papers.pagination import after
from papers.pagination import encode_cursor
from papers.pagination import page_size_field
from papers.query import get_paper
from papers.query import with_listing_data
from papers.serializers import PaperPageSerializer
from papers.serializers import PaperSerializer
from topics.curation import request_retag
from topics.editing import save_topic
from topics.flags import FlagResult
from topics.flags import flag_not_relevant
from topics.flags import retry_after
from topics.following import follows_fingerprint
from topics.following import set_following
from topics.following import set_muted
from topics.following import with_follower_count
from topics.models import Follow
from topics.models import ReviewItem
from topics.models import SavedSearch
from topics.models import Topic
from topics.permissions import CuratorsWrite
from topics.query import active_topics
from topics.query import follow_merges
from topics.query import get_active_topic
from topics.query import related_topics
from topics.query import topic_at
from topics.query import with_figures
from topics.reader_feed import Following
from topics.reader_feed import cached_following
from topics.reader_feed import feed_papers
from topics.recommend import list_version
from topics.recommend import reasons
from topics.recommend import recommended
from topics.saved_searches import SavedSearchError
from topics.saved_searches import create_search
from topics.saved_searches import delete_search
from topics.saved_searches import update_search
from topics.serializers import FollowInputSerializer
from topics.serializers import FollowMuteSerializer
from topics.serializers import FollowSerializer
from topics.serializers import RetagSerializer
from topics.serializers import SavedSearchCreateSerializer
from topics.serializers import SavedSearchInputSerializer
from topics.serializers import SavedSearchSerializer
from topics.serializers import TopicDetailSerializer
from topics.serializers import TopicSerializer
from topics.serializers import TopicWriteSerializer
from topics.serializers import saved_search_error

SLUG_PATH = r"[-a-zA-Z0-9_]+"
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
        return set()

    @extend_schema(
        summary="List topics",
        description="Every active topic by name, with paper and follower counts "
        "and its momentum (null before the first count).",
        parameters=[*CONDITIONAL_PARAMETERS, *VALIDATOR_HEADERS],
        responses={200: TopicSerializer(many=True), **CONDITIONAL_RESPONSES},
    )
    def list(self, request: Request) -> Response | HttpResponse:
        def build() -> list[dict[str, Any]]:
            topics = with_figures(with_follower_count(active_topics()).order_by("name"))
            return TopicSerializer(topics, many=True, context={"request": request}).data  # type: ignore[return-value]  # many=True: a list

        return conditional_response(request, build, fingerprint=follows_fingerprint())

    @extend_schema(
        summary="One topic",
        description="Glossary, rule, the weekly momentum series and related topics.",
        parameters=[SLUG_PARAMETER, *CONDITIONAL_PARAMETERS, *VALIDATOR_HEADERS],
        responses={200: TopicDetailSerializer, **CONDITIONAL_RESPONSES, **MOVED},
    )
    @follow_merges
    def retrieve(self, request: Request, slug: str) -> Response | HttpResponse:
        def build() -> dict[str, Any]:
            topics = with_follower_count(active_topics()).prefetch_related("categories")
            topic = with_figures([get_object_or_404(topics, slug=slug)])[0]
            context = {"request": request, "related": related_topics(topic)}
            return TopicDetailSerializer(topic, context=context).data

        return conditional_response(request, build, fingerprint=follows_fingerprint())

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
        request=TopicWriteSerializer,
        responses={201: TopicDetailSerializer, **WRITE_ERRORS},
    )
    def create(self, request: Request) -> Response:
        return self._save(request, Topic(), status.HTTP_201_CREATED)

    @extend_schema(
        summary="Replace a topic (staff)",
        description="Fields left out take their defaults, as for a new topic: "
        "empty text and lists, active. PATCH changes only the fields sent.",
        parameters=[SLUG_PARAMETER],
        request=TopicWriteSerializer,
        responses={200: TopicDetailSerializer, **WRITE_ERRORS},
    )
    def update(self, request: Request, slug: str) -> Response:
        topic = get_object_or_404(Topic, slug=slug)
        given = request.data
        if isinstance(given, dict):
            given = {**REPLACED_DEFAULTS, **given}
        return self._save(request, topic, status.HTTP_200_OK, data=given)

    @extend_schema(
        summary="Change a topic (staff)",
        description="A changed rule, category list or activity re-tags the "
        "topic's papers in the background, as in admin.",
        parameters=[SLUG_PARAMETER],
        request=TopicWriteSerializer,
        responses={200: TopicDetailSerializer, **WRITE_ERRORS},
    )
    def partial_update(self, request: Request, slug: str) -> Response:
        topic = get_object_or_404(Topic, slug=slug)
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
        topic = get_object_or_404(Topic, slug=slug)
        request_retag(topic)
        return Response(RetagSerializer(topic).data, status=status.HTTP_202_ACCEPTED)

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
        shown = Topic.objects.filter(pk=topic.pk).select_related("momentum")
        shown = with_follower_count(shown.annotate(paper_count=Count("paper_topics")))
        topic = with_figures(shown.prefetch_related("categories"))[0]
        context = {"request": request, "related": related_topics(topic)}
        return Response(TopicDetailSerializer(topic, context=context).data, status=code)


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
        follow = get_object_or_404(self.get_queryset(), topic=topic_at(slug))
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
        topic = get_active_topic(slug)
        paper = get_paper(arxiv_id)
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


# The recommendations' cursor: the last item's rank and its paper id,
# `<rank>.<id>`. In For you order the rank is its score in millionths (scores
# are kept to six places); in newest order (no model yet) its day as an ordinal,
# 0 or less for none, as papers.pagination's. Every string of this form is a
# position in either order.
RECOMMENDATION_CURSOR = RegexValidator(
    r"\A-?[0-9]{1,12}\.[0-9]{1,18}\Z",
    message="Invalid cursor; use the next link as given.",
    code="invalid_cursor",
)


class RecommendationQuerySerializer(serializers.Serializer):
    cursor = Text(
        pattern=RECOMMENDATION_CURSOR,
        required=False,
        help_text="Where the page starts: take it from the `next` link of the "
        "previous page.",
    )
    page_size = page_size_field()

    def validate_cursor(self, value: str) -> tuple[int, int]:
        score, pk = (int(part) for part in value.rsplit(".", 1))
        return score, pk


class ReasonSerializer(serializers.Serializer):
    paper = serializers.CharField(
        source="arxiv_id", help_text="The caller's paper it is most like."
    )
    title = serializers.CharField()
    saved = serializers.BooleanField(
        help_text="Whether the caller saved that paper (else: rated it up)."
    )


class RecommendationSerializer(serializers.Serializer):
    paper = PaperSerializer()
    score = serializers.FloatField(
        allow_null=True,
        help_text="The caller's model's score: higher is more like their papers; "
        "comparable between the caller's recommendations only. Null in newest "
        "order.",
    )
    reason = ReasonSerializer(allow_null=True)


class RecommendationOrder:
    FOR_YOU = "for-you"
    NEWEST = "newest"


@extend_schema_serializer(many=False)
class RecommendationPageSerializer(serializers.Serializer):
    order = serializers.ChoiceField(
        choices=[RecommendationOrder.FOR_YOU, RecommendationOrder.NEWEST],
        help_text="`for-you`: ranked by the caller's model, best first. `newest`: "
        "the caller has no model yet, so these are the papers of the topics and "
        "authors they follow and their saved searches, newest first, as the "
        "home feed shows them.",
    )
    next = serializers.URLField(allow_null=True)
    results = RecommendationSerializer(many=True)


class RecommendationView(StrictQueryParams, APIView):
    """The caller's For you: the newest papers their model ranks highest; until
    they have one, their feed newest first."""

    def allowed_query_params(self) -> AbstractSet[str]:
        return query_names(RecommendationQuerySerializer)

    @extend_schema(
        summary="Recommended papers",
        description="The newest papers the caller's own model (trained on their "
        "saves and ratings) ranks highest, best first, each with the caller's "
        "paper it is most like. Until the caller has saved or rated up a paper "
        "(and the model, trained in the background, has run), their feed "
        "instead: what they follow, newest first (`order` says which). Cursor "
        "pages: follow `next` until it is null.",
        parameters=[
            RecommendationQuerySerializer,
            *CONDITIONAL_PARAMETERS,
            *VALIDATOR_HEADERS,
        ],
        responses={200: RecommendationPageSerializer, **CONDITIONAL_RESPONSES},
    )
    def get(self, request: Request) -> HttpResponse:
        params = read_query(RecommendationQuerySerializer, request)
        user = signed_in(request)
        # Built once per version of the list (and of the papers it shows), or
        # without a model of what the reader follows (and the papers).
        if version := list_version(user.pk):
            return conditional_response(
                request,
                lambda: self.recommended_page(request, params, user.pk),
                fingerprint=f"for-you:{user.pk}:{version}",
                private=True,
            )
        followed = cached_following(user.pk)
        return conditional_response(
            request,
            lambda: self.newest_page(request, params, followed),
            fingerprint=f"newest:{user.pk}:{followed.variant}",
            private=True,
        )

    def recommended_page(
        self, request: Request, params: dict[str, Any], user_id: int
    ) -> dict[str, Any]:
        size = params.get("page_size", PaperCursorPagination.page_size)
        ranks = [(round(score * 1e6), pk) for pk, score in recommended(user_id)]
        start = 0
        if (cursor := params.get("cursor")) is not None:
            # The list is best first: past every item ranked at or above it.
            start = sum(1 for rank in ranks if rank >= cursor)
        page = ranks[start : start + size]
        shown = [pk for _, pk in page]
        papers = listed_papers(Paper.objects.filter(pk__in=shown)).in_bulk()
        like = reasons(user_id, shown)
        items = [
            {"paper": papers[pk], "score": micros / 1e6, "reason": like.get(pk)}
            for micros, pk in page
            if pk in papers  # deleted since it was scored
        ]
        next_url = None
        if start + size < len(ranks):
            micros, pk = page[-1]
            url = request.build_absolute_uri()
            next_url = replace_query_param(url, "cursor", f"{micros}.{pk}")
        return self.body(request, RecommendationOrder.FOR_YOU, items, next_url)

    def newest_page(
        self, request: Request, params: dict[str, Any], followed: Following
    ) -> dict[str, Any]:
        size = params.get("page_size", PaperCursorPagination.page_size)
        papers = listed_papers(feed_papers(followed)).order_by(*ORDERING)
        if (cursor := params.get("cursor")) is not None:
            day, pk = cursor
            latest = date.max.toordinal()
            papers = after(
                papers, date.fromordinal(min(day, latest)) if day > 0 else None, pk
            )
        rows = list(papers[: size + 1])
        next_url = None
        if len(rows) > size:
            rows = rows[:size]
            url = request.build_absolute_uri()
            next_url = replace_query_param(url, "cursor", encode_cursor(rows[-1]))
        items = [{"paper": paper, "score": None, "reason": None} for paper in rows]
        return self.body(request, RecommendationOrder.NEWEST, items, next_url)

    @staticmethod
    def body(
        request: Request, order: str, items: list[dict], next_url: str | None
    ) -> dict[str, Any]:
        data = RecommendationSerializer(
            items, many=True, context={"request": request}
        ).data
        return {"order": order, "next": next_url, "results": data}


def listed_papers(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """What a recommendation's paper shows, in a fixed number of queries."""
    return with_listing_data(papers, affiliations=False).prefetch_related("categories")


SEARCH_ERRORS = {
    400: OpenApiResponse(
        ErrorSerializer,
        description="The query is invalid (code invalid_query or invalid_rule on "
        "`query`, with the 0-based `position` of the problem), or the caller "
        "has MOMENTUM_SAVED_SEARCHES_MAX searches already (code limit), or a "
        "rule search waits while its index is rebuilt after a release (code "
        "index_rebuilding on non_field_errors: try again in a few minutes).",
    ),
    409: OpenApiResponse(
        ErrorSerializer,
        description="The caller has a search of this name (code unique on `name`).",
    ),
}


class SavedSearchViewSet(
    StrictQueryParams,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """The caller's saved searches: private alerts whose new matches enter their
    feed and digest (topics.saved_searches)."""

    serializer_class = SavedSearchSerializer
    pagination_class = None
    lookup_value_regex = "[0-9]+"  # any other id is a 404, not a server error

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):  # the schema's types
            return SavedSearch.objects.none()
        return (
            SavedSearch.objects.filter(user=signed_in(self.request))
            .annotate(match_count=Count("matches"))
            .order_by("created_at", "pk")
        )

    def _shown(self, search: SavedSearch, code: int = 200) -> Response:
        data = SavedSearchSerializer(self.get_queryset().get(pk=search.pk)).data
        return Response(data, status=code)

    @extend_schema(summary="List saved searches")
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(summary="A saved search")
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().retrieve(request, *args, **kwargs)

    @extend_schema(
        summary="Save a search",
        description="Finds its newest matches at once; its new matches after "
        "each ingest. `name` and `query` are required.",
        request=SavedSearchCreateSerializer,
        responses={201: SavedSearchSerializer, **SEARCH_ERRORS},
    )
    def create(self, request: Request) -> Response:
        given = SavedSearchCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        try:
            search = create_search(
                signed_in(request),
                name=data["name"],
                query=data["query"],
                syntax=data.get("syntax", SavedSearch.Syntax.SEARCH),
            )
        except SavedSearchError as exc:
            raise saved_search_error(exc) from exc
        return self._shown(search, status.HTTP_201_CREATED)

    @extend_schema(
        summary="Rename a saved search or change its query",
        description="A changed query or syntax finds its matches again.",
        request=SavedSearchInputSerializer,
        responses={200: SavedSearchSerializer, **SEARCH_ERRORS},
    )
    def partial_update(self, request: Request, pk: str) -> Response:
        search = get_object_or_404(self.get_queryset(), pk=pk)
        given = SavedSearchInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            update_search(search, **given.validated_data)
        except SavedSearchError as exc:
            raise saved_search_error(exc) from exc
        return self._shown(search)

    @extend_schema(
        summary="Delete a saved search",
        responses={204: OpenApiResponse(description="Deleted.")},
    )
    def destroy(self, request: Request, pk: str) -> Response:
        delete_search(get_object_or_404(self.get_queryset(), pk=pk))
        return Response(status=status.HTTP_204_NO_CONTENT)
