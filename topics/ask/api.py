"""API: ask a topic's papers or one paper a question (GET, anyone may ask).

Counts against the same per-user-or-address budget as the pages
(topics.limits); over it, the usual throttled error with Retry-After.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.exceptions import Throttled
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.errors import ErrorSerializer
from core.api.fields import QueryDate
from core.api.fields import Text
from core.api.views import StrictQueryParams
from papers.api.papers import PAPER_ID_PARAMETER
from papers.query import get_paper_row
from topics.api.topics import MOVED
from topics.api.topics import SLUG_PARAMETER
from topics.ask.asking import answer_data
from topics.ask.asking import ask
from topics.ask.asking import source_data
from topics.ask.asking import topic_scope
from topics.ask.forms import MAX_QUESTION
from topics.ask.fulltext import fulltext_state
from topics.ask.retrieval import Scope
from topics.ask.views import from_elsewhere
from topics.limits import client_key
from topics.limits import take
from topics.query import follow_merges
from topics.query import get_active_topic


class AskQuerySerializer(serializers.Serializer):
    q = Text(
        max_length=MAX_QUESTION,
        help_text="The question: some text besides whitespace.",
    )


class TopicAskQuerySerializer(AskQuerySerializer):
    weeks = serializers.ChoiceField(
        choices=[4, 12, 52],
        required=False,
        help_text="Only papers of the last N weeks of harvest (the N weeks up to "
        "`until`, if given); not with `since`.",
    )
    since = QueryDate(required=False, help_text="First announced from (YYYY-MM-DD).")
    until = QueryDate(
        required=False,
        help_text="First announced until (YYYY-MM-DD); before `since` is a 400.",
    )

    def validate(self, data: dict) -> dict:
        if data.get("weeks") and data.get("since"):
            raise serializers.ValidationError(
                {"since": ["Give weeks or since, not both."]}, code="invalid"
            )
        if data.get("since") and data.get("until") and data["since"] > data["until"]:
            raise serializers.ValidationError(
                {"until": ["Must not be before since."]}, code="invalid"
            )
        return data


class AbsoluteLink(serializers.CharField):
    """A link, absolute on the request's host where it is a path of this site."""

    def to_representation(self, value: Any) -> str:
        return self.context["request"].build_absolute_uri(value)


class SourceSerializer(serializers.Serializer):
    number = serializers.IntegerField(help_text="What [n] in the answer refers to.")
    arxiv_id = serializers.CharField()
    title = serializers.CharField(
        help_text="Its TeX read as text, as the answer quotes it."
    )
    # A declared field (DRF's metaclass takes it off the class), not Field.label.
    label = serializers.CharField(help_text='"" for a paper, or "Abstract", "Page 3".')  # type: ignore[assignment]
    url = AbsoluteLink(
        help_text="Where the source is read: its page here (absolute, as the paper "
        "list's links are), or the address it was read at."
    )
    first_announced = serializers.DateField(allow_null=True)


class ClaimSerializer(serializers.Serializer):
    text = serializers.CharField()
    citations = serializers.ListField(child=serializers.IntegerField())


class AnswerSerializer(serializers.Serializer):
    question = serializers.CharField()
    answerer = serializers.ChoiceField(choices=["extractive", "chat"])
    notice = serializers.CharField(
        help_text="Why the offline answer was given, or that the question has no "
        "English word to match."
    )
    text = serializers.CharField(help_text="The answer with [n] citations.")
    lead = serializers.CharField(
        help_text="The offline answer's opening: \"Three lines of work: A [1], B [2] "
        'and C [3]."; "" when fewer than two are named.'
    )
    claims = ClaimSerializer(many=True)
    dropped = serializers.IntegerField(help_text="Model sentences removed as uncited.")
    attribution = serializers.CharField(
        help_text="Who wrote the answer, as the page says under it: quoted from the "
        "papers' own sentences (and whether their own reference numbers such as [12] "
        "were left out), or a model's, with the sentences removed."
    )
    cited = SourceSerializer(many=True)
    also_relevant = SourceSerializer(
        many=True, help_text="Retrieved papers the answer does not cite."
    )
    sources = SourceSerializer(many=True, help_text="Everything retrieved.")
    full_text = serializers.ChoiceField(
        choices=["", "ready", "coming", "unavailable", "off"],
        help_text='For a paper: "ready" (the answer reads its PDF), "coming" (being '
        'fetched; the answer is from the abstract), "unavailable" or "off"; "" for '
        "a topic.",
    )


ERRORS = {
    403: OpenApiResponse(
        ErrorSerializer,
        description="The browser says another site sent the request "
        "(Sec-Fetch-Site): nothing is asked, as on the ask page.",
    ),
    429: OpenApiResponse(
        ErrorSerializer,
        description="Over the question limit (MOMENTUM_ASK_RATE, pages and API "
        "together) or the API's rate; Retry-After says when to ask again.",
    ),
}
TOPIC_ERRORS = {
    400: OpenApiResponse(
        ErrorSerializer,
        description="A parameter that is not valid, including `until` before "
        "`since` (field until), or an unknown one.",
    ),
    404: OpenApiResponse(ErrorSerializer, description="No active topic has this slug."),
}


class AskView(StrictQueryParams, APIView):
    permission_classes = [AllowAny]
    # Not HEAD, which Django serves as a GET: a link checker's would ask a
    # question and count it against the caller's limit.
    http_method_names = ["get", "options"]
    query_serializer: type[serializers.Serializer] = AskQuerySerializer

    def allowed_query_params(self) -> set[str]:
        return set(self.query_serializer().fields)

    def answer(self, request: Request, scope: Scope, question: str) -> Response:
        if from_elsewhere(request):
            # A link from another site comes with the reader's session cookie:
            # it asks nothing for them, as on the ask page.
            raise PermissionDenied("Ask from the ask page, or with an API token.")
        if wait := take(client_key(request)):
            raise Throttled(wait=wait)
        sources, answer = ask(scope, question, request.user)
        assert answer is not None
        data = {
            "question": question,
            **answer_data(answer),
            "sources": [source_data(source) for source in sources],
            "full_text": fulltext_state(scope.paper) if scope.paper else "",
        }
        return Response(AnswerSerializer(data, context={"request": request}).data)


class TopicAskView(AskView):
    query_serializer = TopicAskQuerySerializer

    @extend_schema(
        summary="Ask about a topic",
        description="Retrieves the topic's papers that best match the question "
        "(optionally of a window) and answers with sentences that each cite one of "
        "them. Counts against the per-user (or per-address) question limit.",
        parameters=[SLUG_PARAMETER, TopicAskQuerySerializer],
        responses={200: AnswerSerializer, **ERRORS, **TOPIC_ERRORS, **MOVED},
    )
    @follow_merges
    def get(self, request: Request, slug: str) -> Response:
        topic = get_active_topic(slug)
        query = _read(TopicAskQuerySerializer, request)
        question = query.pop("q").strip()
        return self.answer(request, topic_scope(topic, **query), question)


class PaperAskView(AskView):
    @extend_schema(
        summary="Ask about a paper (AskPDF)",
        description="Answers from the paper's metadata and abstract, and its full "
        "text where the site has its PDF; every sentence cites a source.",
        parameters=[PAPER_ID_PARAMETER, AskQuerySerializer],
        responses={200: AnswerSerializer, **ERRORS},
    )
    def get(self, request: Request, arxiv_id: str) -> Response:
        paper = get_paper_row(arxiv_id)
        question = _read(AskQuerySerializer, request)["q"].strip()
        return self.answer(request, Scope(paper=paper), question)


def _read(serializer_class: type[serializers.Serializer], request: Request) -> dict:
    # Not core.api.views.read_query: that one skips validation when no known
    # parameter is given, and here `q` is required.
    serializer = serializer_class(data=request.query_params.dict())
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
