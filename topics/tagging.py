"""Tag papers into topics by the topics' rules; curators' pins and exclusions win.

Only rule tags are written here: a pin is never removed by a rule, and an excluded
paper never gets a rule tag. Every function is idempotent: re-running it over the
same papers and topics changes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import QuerySet

from papers.models import Paper
from topics.models import PaperTopic
from topics.models import Topic
from topics.models import TopicExclusion
from topics.rules import Document
from topics.rules import RuleError
from topics.rules import RuleSet
from topics.rules import compile_rule

CHUNK_SIZE = 1000


@dataclass
class TagResult:
    papers: int = 0
    added: int = 0
    removed: int = 0

    def __str__(self) -> str:
        return (
            f"{self.papers} papers checked, "
            f"{self.added} tags added, {self.removed} removed"
        )


@dataclass(frozen=True)
class TopicRules:
    """The compiled rules of a set of topics and the categories each is scoped to."""

    rules: RuleSet[int]
    scopes: dict[int, frozenset[str]]

    @classmethod
    def load(cls, topics: Iterable[Topic]) -> TopicRules:
        compiled = {}
        scopes = {}
        for topic in topics:
            try:
                compiled[topic.pk] = compile_rule(topic.rule)
            except RuleError:
                # Rules are validated on save; one that slipped through (edited in
                # the database) leaves its topic untagged rather than failing all.
                continue
            scopes[topic.pk] = frozenset(c.code for c in topic.categories.all())
        return cls(RuleSet(compiled), scopes)

    def match(
        self, doc: Document, categories: frozenset[str]
    ) -> dict[int, tuple[str, ...]]:
        return {
            topic_id: terms
            for topic_id, terms in self.rules.match(doc).items()
            if not self.scopes[topic_id] or self.scopes[topic_id] & categories
        }


def active_topic_rules() -> TopicRules:
    return TopicRules.load(
        Topic.objects.filter(is_active=True).prefetch_related("categories")
    )


def tag_papers(paper_ids: Iterable[int], rules: TopicRules | None = None) -> TagResult:
    """Re-evaluate these papers against every active topic's rule and store the tags."""
    rules = rules or active_topic_rules()
    topic_ids = list(rules.scopes)
    result = TagResult()
    ids = list(paper_ids)
    for start in range(0, len(ids), CHUNK_SIZE):
        chunk = ids[start : start + CHUNK_SIZE]
        _tag_chunk(Paper.objects.filter(pk__in=chunk), topic_ids, rules, result)
    return result


def retag_topics(topics: Iterable[Topic]) -> TagResult:
    """Re-evaluate every paper against these topics' rules and store the tags."""
    topics = list(topics)
    rules = TopicRules.load(topics)
    # A topic whose rule no longer compiles keeps no rule tags.
    topic_ids = [topic.pk for topic in topics]
    result = TagResult()
    last_id = 0
    while True:
        papers = Paper.objects.filter(pk__gt=last_id).order_by("pk")[:CHUNK_SIZE]
        last_id = _tag_chunk(papers, topic_ids, rules, result)
        if last_id is None:
            return result


def retag_all() -> TagResult:
    """Re-tag every paper against every active topic."""
    return retag_topics(
        Topic.objects.filter(is_active=True).prefetch_related("categories")
    )


def _tag_chunk(
    papers: QuerySet[Paper], topic_ids: list[int], rules: TopicRules, result: TagResult
) -> int | None:
    rows = list(
        papers.values_list("pk", "title", "abstract", "author_names", "comment")
    )
    if not rows:
        return None
    paper_ids = [row[0] for row in rows]
    categories = _categories_of(paper_ids)
    wanted: dict[tuple[int, int], tuple[str, ...]] = {}
    for pk, title, abstract, author_names, comment in rows:
        doc = Document.from_fields(
            title=title,
            abstract=abstract,
            authors=author_names.split(", ") if author_names else (),
            categories=sorted(categories[pk]),
            comment=comment,
        )
        for topic_id, terms in rules.match(doc, categories[pk]).items():
            wanted[(topic_id, pk)] = terms
    _store(paper_ids, topic_ids, wanted, result)
    result.papers += len(rows)
    return paper_ids[-1]


def _categories_of(paper_ids: list[int]) -> dict[int, frozenset[str]]:
    through = Paper.categories.through
    found: dict[int, set[str]] = defaultdict(set)
    for paper_id, code in through.objects.filter(paper_id__in=paper_ids).values_list(
        "paper_id", "category__code"
    ):
        found[paper_id].add(code)
    return defaultdict(frozenset, {pk: frozenset(codes) for pk, codes in found.items()})


@transaction.atomic
def _store(
    paper_ids: list[int],
    topic_ids: list[int],
    wanted: dict[tuple[int, int], tuple[str, ...]],
    result: TagResult,
) -> None:
    """Make these papers' rule tags for these topics `wanted`, minus exclusions."""
    excluded = set(
        TopicExclusion.objects.filter(
            paper_id__in=paper_ids, topic_id__in=topic_ids
        ).values_list("topic_id", "paper_id")
    )
    existing = {
        (tag.topic_id, tag.paper_id): tag
        for tag in PaperTopic.objects.filter(
            paper_id__in=paper_ids, topic_id__in=topic_ids
        )
    }
    wanted = {key: terms for key, terms in wanted.items() if key not in excluded}
    stale = [
        tag.pk
        for key, tag in existing.items()
        if tag.source == PaperTopic.Source.RULE and key not in wanted
    ]
    PaperTopic.objects.filter(pk__in=stale).delete()
    changed = [
        tag
        for key, tag in existing.items()
        if key in wanted
        and tag.source == PaperTopic.Source.RULE
        and tag.matched_terms != list(wanted[key])
    ]
    for tag in changed:
        tag.matched_terms = list(wanted[(tag.topic_id, tag.paper_id)])
    PaperTopic.objects.bulk_update(changed, ["matched_terms"])
    new = [
        PaperTopic(topic_id=topic_id, paper_id=paper_id, matched_terms=list(terms))
        for (topic_id, paper_id), terms in wanted.items()
        if (topic_id, paper_id) not in existing
    ]
    # ignore_conflicts: a concurrent tagger may have stored the same tag already.
    PaperTopic.objects.bulk_create(new, ignore_conflicts=True)
    result.added += len(new)
    result.removed += len(stale)
