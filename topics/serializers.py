"""Topic serializers: output for lists and detail, input for staff writes."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from core.api.errors import positioned_error
from core.api.fields import NO_CONTROL
from core.api.fields import Boolean
from core.api.fields import NamedRow
from core.api.fields import StrictModelSerializer
from core.api.fields import StrictSerializer
from core.api.fields import Text
from core.api.fields import named_rows
from papers.models import Category
from papers.search import MAX_QUERY_LENGTH
from topics.models import NOT_ITS_OWN_RELATED
from topics.models import Follow
from topics.models import SavedSearch
from topics.models import Topic
from topics.query import merged_into
from topics.rules import MAX_DEPTH
from topics.rules import MAX_RULE_LENGTH
from topics.rules import MAX_TERMS
from topics.rules import RuleError
from topics.saved_searches import MATCHES_KEPT
from topics.saved_searches import SavedSearchError
from topics.saved_searches import searches_for_nothing


class WeekSerializer(serializers.Serializer):
    start = serializers.DateField(help_text="First day of the seven-day week.")
    papers = serializers.IntegerField(help_text="The topic's papers.")
    all_papers = serializers.IntegerField(
        source="total", help_text="All papers first announced that week."
    )
    complete = serializers.BooleanField(
        help_text="Whether the week was fully harvested; other weeks are left out "
        "of the comparison."
    )


class MomentumSerializer(serializers.Serializer):
    as_of = serializers.DateField(
        help_text="The latest announcement day harvested; windows end here."
    )
    recent = serializers.IntegerField(help_text="Papers in the last four weeks.")
    previous = serializers.IntegerField(help_text="Papers in the four weeks before.")
    share = serializers.FloatField(
        allow_null=True,
        help_text="Percent of all new papers in the fully harvested weeks of the "
        "last four; null when none was.",
    )
    previous_share = serializers.FloatField(
        allow_null=True,
        help_text="The same over the fully harvested weeks of the four before.",
    )
    change = serializers.FloatField(
        allow_null=True,
        help_text="Percent change of the share on the four weeks before; null when "
        "the windows cannot be compared or the share before was zero.",
    )
    comparable = serializers.BooleanField(
        help_text="Whether both windows have enough fully harvested weeks."
    )
    enough = serializers.BooleanField(
        help_text="Whether there are enough weeks and papers for the change to "
        "mean anything."
    )
    left_out = serializers.ListField(
        child=serializers.DateField(),
        help_text="First days of the weeks of both windows not fully harvested.",
    )
    trend_score = serializers.FloatField(
        allow_null=True,
        help_text="The trending rank: the change with small topics damped; null "
        "with too little history or too few papers to rank.",
    )
    beyond_chance = serializers.BooleanField(
        allow_null=True,
        help_text="Whether the change is larger than chance alone would make at "
        "these numbers (more than two standard deviations from the split of the "
        "topic's papers between the windows had it kept its share); null when no "
        "change is given.",
    )
    trend = serializers.ChoiceField(
        choices=["up", "steady", "down"],
        allow_null=True,
        help_text="Where the trending page lists it: up or down beyond chance, "
        "steady within it; null when not ranked (no trend_score).",
    )


class MomentumSeriesSerializer(MomentumSerializer):
    weeks = WeekSerializer(many=True, help_text="Oldest first.")


class TopicLinksSerializer(serializers.Serializer):
    api = serializers.URLField()
    papers = serializers.URLField(help_text="The topic's papers in the API.")
    page = serializers.URLField(help_text="The topic's page on the site.")


def topic_links(topic: Topic, request: Any) -> dict[str, str]:
    slug = {"slug": topic.slug}
    return {
        "api": reverse("api:topic-detail", kwargs=slug, request=request),
        "papers": reverse("api:topic-papers", kwargs=slug, request=request),
        "page": request.build_absolute_uri(topic.get_absolute_url()),
    }


class TopicSerializer(serializers.ModelSerializer):
    """A topic as lists show it; reads `paper_count`, `follower_count` and
    `figures` (topics.query.with_figures)."""

    paper_count = serializers.IntegerField()
    follower_count = serializers.IntegerField()
    momentum = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()

    class Meta:
        model = Topic
        fields = [
            "slug",
            "name",
            "description",
            "paper_count",
            "follower_count",
            "momentum",
            "links",
        ]

    @extend_schema_field(MomentumSerializer(allow_null=True))
    def get_momentum(self, topic: Topic) -> dict[str, Any] | None:
        figures = topic.figures  # type: ignore[attr-defined]
        return MomentumSerializer(figures).data if figures else None

    @extend_schema_field(TopicLinksSerializer)
    def get_links(self, topic: Topic) -> dict[str, str]:
        return topic_links(topic, self.context["request"])


class GlossaryEntrySerializer(serializers.Serializer):
    term = serializers.CharField()
    meaning = serializers.CharField()


class TopicRefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Topic
        fields = ["slug", "name"]


# The rule's grammar is no regular language (parentheses nest), so the schema
# names it as a format of its own and describes it; tests/api/schemathesis_hooks.py
# tells schemathesis how to write one.
@extend_schema_field(
    {
        "type": "string",
        "format": "topic-rule",
        "description": 'arXiv search syntax: words, "phrases" and (groups), '
        "each optionally prefixed by a field (ti: abs: au: co: cat: all:), joined "
        "by AND, OR, ANDNOT or side by side (AND); word* matches prefixes of three "
        f"letters or more. At most {MAX_TERMS} terms, {MAX_DEPTH} levels of "
        "parentheses. Lower-case and/or/not must be quoted. An invalid rule is a "
        "400 with code invalid_rule and the 0-based position of the problem.",
    }
)
class RuleField(Text):
    pass


class TopicDetailSerializer(TopicSerializer):
    """A topic with its page's content; `related` in the context
    (topics.query.related_topics)."""

    glossary = serializers.SerializerMethodField()
    categories = serializers.SlugRelatedField[Category](
        slug_field="code", many=True, read_only=True
    )
    related = serializers.SerializerMethodField()

    class Meta:
        model = Topic
        fields = [
            "slug",
            "name",
            "description",
            "definition",
            "glossary",
            "rule",
            "categories",
            "is_active",
            "paper_count",
            "follower_count",
            "momentum",
            "related",
            "links",
        ]

    @extend_schema_field(GlossaryEntrySerializer(many=True))
    def get_glossary(self, topic: Topic) -> list[dict[str, str]]:
        return [{"term": t, "meaning": m} for t, m in topic.glossary_entries]

    @extend_schema_field(MomentumSeriesSerializer(allow_null=True))
    def get_momentum(self, topic: Topic) -> dict[str, Any] | None:
        figures = topic.figures  # type: ignore[attr-defined]
        return MomentumSeriesSerializer(figures).data if figures else None

    @extend_schema_field(TopicRefSerializer(many=True))
    def get_related(self, topic: Topic) -> list[dict[str, str]]:
        return TopicRefSerializer(self.context["related"], many=True).data  # type: ignore[return-value]  # many=True: a list


class TopicWriteSerializer(StrictModelSerializer):
    """Staff input for creating and changing a topic. The rule is checked as
    admin checks it (Topic.clean compiles it), with the error's position. A name
    or slug another topic has is a 409, a category or related topic that does
    not exist a 404 (both with the field)."""

    rule = RuleField(max_length=MAX_RULE_LENGTH)
    categories = named_rows(
        slug_field="code",
        required=False,
        queryset=Category.objects.all(),
        help_text="Only papers in these categories are tagged; empty means any.",
    )
    related = named_rows(
        slug_field="slug",
        required=False,
        queryset=Topic.objects.all(),
        help_text="Slugs of curated related topics.",
    )

    class Meta:
        model = Topic
        fields = [
            "name",
            "slug",
            "description",
            "definition",
            "glossary",
            "rule",
            "categories",
            "related",
            "is_active",
        ]
        extra_kwargs = {
            "slug": {
                "help_text": "Its address, /topics/<slug>/: letters, digits, - and _; "
                "not `trending`, which is the address of a page of the site."
            }
        }

    def validate_related(self, related: list[Topic]) -> list[Topic]:
        if self.instance is not None and self.instance in related:
            raise serializers.ValidationError(NOT_ITS_OWN_RELATED, code="invalid")
        return related

    def validate_rule(self, rule: str) -> str:
        try:
            (self.instance or Topic()).compile_as_written(rule)
        except RuleError as exc:
            # The message Topic.clean gives in admin, plus where the problem is.
            raise positioned_error(
                f"Invalid rule: {exc}", code="invalid_rule", position=exc.position
            ) from None
        return rule


class RetagSerializer(serializers.ModelSerializer):
    class Meta:
        model = Topic
        fields = ["slug", "retag_requested_at"]


class FollowSerializer(serializers.ModelSerializer):
    topic = TopicRefSerializer()
    topic_is_active = serializers.BooleanField(source="topic.is_active")
    followed_at = serializers.DateTimeField(source="created_at")

    class Meta:
        model = Follow
        fields = ["topic", "topic_is_active", "muted", "followed_at"]


class FollowMuteSerializer(StrictSerializer):
    muted = Boolean(
        required=False,
        help_text="True leaves the topic out of the caller's digests.",
    )


class ActiveTopic(NamedRow):
    """An active topic by its slug, or by that of a topic merged into it."""

    def to_internal_value(self, data: Any) -> Any:
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError:
            named = isinstance(data, str) and "\x00" not in data  # as NamedRow
            target = merged_into(data) if named else None
            if target is None:
                raise
            return target


class FollowInputSerializer(StrictSerializer):
    topic = ActiveTopic(
        slug_field="slug",
        queryset=Topic.objects.filter(is_active=True),
        help_text="The slug of an active topic, or of one merged into it (any "
        "other is a 404).",
    )


class SavedSearchSerializer(serializers.ModelSerializer):
    matches = serializers.IntegerField(
        source="match_count",
        help_text=f"The papers it holds: its newest {MATCHES_KEPT} matches when it "
        f"was saved or last edited, and each new match since. At {MATCHES_KEPT} or "
        "more, more papers may match than it holds.",
    )
    searches_for_nothing = serializers.SerializerMethodField(
        help_text="Whether its query holds no word a search reads (only words as "
        'common as "the" or "of", or signs): saving refuses such a query now, but '
        "one saved before that is kept and finds no papers. Edit its query, or "
        "delete it."
    )

    class Meta:
        model = SavedSearch
        fields = [
            "id",
            "name",
            "query",
            "syntax",
            "created_at",
            "matches",
            "searches_for_nothing",
        ]

    def get_searches_for_nothing(self, search: SavedSearch) -> bool:
        return searches_for_nothing(search.query, search.syntax)


# Valid in one syntax or the other, which the schema cannot say: a format of
# its own, which tests/api/schemathesis_hooks.py tells schemathesis how to write.
@extend_schema_field(
    {
        "type": "string",
        "format": "saved-search-query",
        "maxLength": MAX_QUERY_LENGTH,
        "description": "In the search syntax or the topic rule language "
        "(`syntax`), at most "
        f"{MAX_QUERY_LENGTH} characters. An invalid one is a 400 with code "
        "invalid_query or invalid_rule and the 0-based position of the problem.",
    }
)
class SavedSearchQueryField(Text):
    pass


class SavedSearchInputSerializer(StrictSerializer):
    name = Text(
        pattern=NO_CONTROL,
        max_length=80,
        required=False,
        help_text="Unique among yours.",
    )
    query = SavedSearchQueryField(
        pattern=NO_CONTROL, max_length=MAX_QUERY_LENGTH, required=False
    )
    syntax = serializers.ChoiceField(
        choices=SavedSearch.Syntax.choices,
        required=False,
        help_text="`search` (the search page's words) or `rule` (a topic's rule "
        "language); `search` when a new search does not say.",
    )


class SavedSearchCreateSerializer(SavedSearchInputSerializer):
    """A new search: its name and query are required."""

    name = Text(pattern=NO_CONTROL, max_length=80, help_text="Unique among yours.")
    query = SavedSearchQueryField(pattern=NO_CONTROL, max_length=MAX_QUERY_LENGTH)


def saved_search_error(exc: SavedSearchError) -> serializers.ValidationError:
    """A saved search refused, as the API's field error (with its position)."""
    field = exc.field or "non_field_errors"
    if exc.position is not None:
        error = positioned_error(exc.message, code=exc.code, position=exc.position)
        return serializers.ValidationError({field: error.detail})
    return serializers.ValidationError(
        {field: [serializers.ErrorDetail(exc.message, code=exc.code)]}
    )
