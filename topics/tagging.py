"""Tag papers into topics by the topics' rules; curators' pins and exclusions win.

Only rule tags are written here: a pin is never removed by a rule, and an excluded
paper never gets a rule tag. Every function is idempotent: re-running it over the
same papers and topics changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Count
from django.db.models import Max
from django.db.models import Q
from django.db.models import QuerySet
from django.utils import timezone

from core.queue import send_after_commit
from papers.ingest.records import PaperRecord
from papers.ingest.upsert import UpsertResult
from papers.models import Paper
from papers.versions import rows_written
from topics.deciding import active_scorers
from topics.deciding import apply_models
from topics.documents import among
from topics.documents import iter_paper_documents
from topics.models import PaperTopic
from topics.models import ReviewItem
from topics.models import Topic
from topics.momentum import refresh_momentum
from topics.prefilter import candidate_ids
from topics.prefilter import stale_papers
from topics.prefilter import store_terms
from topics.rule_tags import store_rule_tags
from topics.rules import Document
from topics.rules import RuleError
from topics.rules import RuleSet
from topics.rules import compile_rule
from topics.rules.terms import document_terms

logger = logging.getLogger(__name__)

CHUNK_SIZE = 1000
# Re-tags of up to this many topics look only at their rules' candidates.
PREFILTERED_TOPICS = 3


@dataclass
class TagResult:
    papers: int = 0
    added: int = 0
    removed: int = 0

    def add(self, other: TagResult) -> None:
        self.papers += other.papers
        self.added += other.added
        self.removed += other.removed

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
            except RuleError as exc:
                # Rules are validated on save; one stored before a release
                # refused what it holds (or edited in the database) leaves its
                # topic as it is rather than failing all. Admin shows it too.
                logger.warning(
                    "topic %s is not tagged: its rule no longer parses (%s); its "
                    "papers are kept as they are until a curator corrects it",
                    topic.slug,
                    exc,
                )
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
        _tag_chunk(Paper.objects.filter(among("pk", chunk)), topic_ids, rules, result)
    return result


@dataclass
class RecordMatches:
    """What IngestTagger.match found: each record's tags and index terms."""

    tags: dict[PaperRecord, dict[int, tuple[str, ...]]]
    terms: dict[PaperRecord, frozenset[str]]


def topics_revision() -> tuple[object, ...]:
    """What moves when a topic is saved, re-tagged, merged, deleted, made
    active or paused: whose rules and models a run tags by."""
    return tuple(
        Topic.objects.aggregate(
            saved=Max("updated_at"),
            retagged=Max("retagged_at"),
            topics=Count("pk"),
            active=Count("pk", filter=Q(is_active=True)),
        ).values()
    )


class IngestTagger:
    """Tags the papers ingest stores, against the active topics' rules and models
    (papers.ingest.runs.Tagger): as they were when the run began, and read
    again for a page stored after a curator changed a topic (its rule edited,
    topics merged or deleted), which the tags of a run of many pages would
    otherwise undo, or name a topic gone."""

    def __init__(self, rules: TopicRules | None = None) -> None:
        self.revision = topics_revision()
        self.rules = rules or active_topic_rules()
        self.scorers = active_scorers()

    def match(self, records: Sequence[PaperRecord]) -> RecordMatches:
        """Each record's matches and index terms, from the record alone (no
        database: this runs in a thread beside the upsert)."""
        matched = RecordMatches({}, {})
        for record in records:
            categories = frozenset(record.categories)
            doc = Document.from_fields(
                title=record.title,
                abstract=record.abstract,
                authors=[author.name for author in record.authors],
                categories=sorted(categories),
                comment=record.comment,
            )
            matched.tags[record] = self.rules.match(doc, categories)
            matched.terms[record] = document_terms(doc)
        return matched

    def store(self, result: UpsertResult, matched: RecordMatches) -> TagResult:
        if (revision := topics_revision()) != self.revision:
            self.revision = revision
            self.rules, self.scorers = active_topic_rules(), active_scorers()
            matched = self.match(list(result.written.values()))
        # The papers it tags are those it wrote: their own date (modified_at)
        # dates their pages, so their tags leave them undated.
        with rows_written(result.changed_ids):
            tags = TagResult()
            topic_ids = list(self.rules.scopes)
            written = [pk for pk in result.changed_ids if pk in result.written]
            stale = stale_papers(Paper.objects.filter(pk__in=written))
            store_terms(
                (pk, modified, matched.terms[result.written[pk]])
                for pk, modified in stale.items()
            )
            for start in range(0, len(written), CHUNK_SIZE):
                chunk = written[start : start + CHUNK_SIZE]
                wanted = {
                    (topic_id, pk): terms
                    for pk in chunk
                    for topic_id, terms in matched.tags[result.written[pk]].items()
                }
                _store(chunk, topic_ids, wanted, tags)
                tags.papers += len(chunk)
            # Papers only cross-listed keep text the record may not have: read back.
            others = [pk for pk in result.changed_ids if pk not in result.written]
            if others:
                tags.add(tag_papers(others, self.rules))
            if self.scorers:
                apply_models(self.scorers, result.changed_ids)
        return tags

    def after_runs(self) -> None:
        """Runs stored new or changed papers: the topics' figures follow, and
        their similar papers and saved searches' matches are found in the
        background (tagging queue)."""
        refresh_momentum()
        # Imported here: the tasks module imports this one.
        from topics.tasks import match_saved_searches
        from topics.tasks import update_similar_papers

        send_after_commit(update_similar_papers)
        send_after_commit(match_saved_searches)


def retag_topics(
    topics: Iterable[Topic],
    progress: Callable[[TagResult, int], None] | None = None,
) -> TagResult:
    """Re-evaluate the papers against these topics' rules and store the tags.

    A few topics look only at the papers they could match or hold now (see
    _papers_to_retag); otherwise every paper is looked at. progress, if given, is
    called after each chunk with the result so far and the number of papers to
    check. A topic done is dated (retagged_at, admin's re-tag column) unless a
    newer re-tag was asked for meanwhile, which its own task does.
    """
    started = timezone.now()
    topics = list(topics)
    rules = TopicRules.load(topics)
    # A topic whose rule no longer parses keeps its papers as they are (its
    # rule stored before a release refused what it holds): emptying it would
    # lose them for a character the curator cannot see.
    topics = [topic for topic in topics if topic.pk in rules.scopes]
    topic_ids = [topic.pk for topic in topics]
    # Taken first: papers that arrive meanwhile make it stale, as they should.
    corpus = corpus_fingerprint()
    result = TagResult()
    paper_ids = _papers_to_retag(topics)
    if paper_ids is not None:
        for start in range(0, len(paper_ids), CHUNK_SIZE):
            chunk = paper_ids[start : start + CHUNK_SIZE]
            papers = Paper.objects.filter(pk__in=chunk).order_by("pk")
            _tag_chunk(papers, topic_ids, rules, result)
            if progress is not None:
                progress(result, len(paper_ids))
    else:
        _tag_every_paper(topic_ids, rules, result, progress)
    for topic in topics:
        Topic.objects.filter(pk=topic.pk).update(
            tagged_fingerprint=tagging_fingerprint(topic, corpus)
        )
    Topic.objects.filter(
        Q(retag_requested_at__isnull=True) | Q(retag_requested_at__lte=started),
        pk__in=topic_ids,
    ).update(retagged_at=timezone.now())
    return result


def _tag_every_paper(
    topic_ids: list[int],
    rules: TopicRules,
    result: TagResult,
    progress: Callable[[TagResult, int], None] | None,
) -> None:
    total = Paper.objects.count()
    last_id = 0
    while True:
        chunk = Paper.objects.filter(pk__gt=last_id).order_by("pk")[:CHUNK_SIZE]
        ids = list(chunk.values_list("pk", flat=True))
        if not ids:
            return
        _tag_chunk(Paper.objects.filter(among("pk", ids)), topic_ids, rules, result)
        last_id = ids[-1]
        if progress is not None:
            progress(result, max(total, result.papers))


def _papers_to_retag(topics: list[Topic]) -> list[int] | None:
    """The papers a re-tag of a few topics must look at, found in the database:
    those their rules could match, and those holding their rule tags or vetoes
    now (which may have to go). None when every paper must be looked at: many
    topics (their candidates are most papers, and each document serves them all)
    or a rule without a condition to find its candidates by."""
    if len(topics) > PREFILTERED_TOPICS:
        return None
    ids: set[int] = set()
    for topic in topics:
        rule = compile_rule(topic.rule)  # retag_topics left out those that fail
        scope = [category.code for category in topic.categories.all()]
        candidates = candidate_ids(rule, scope)
        if candidates is None:
            return None
        ids |= candidates
    ids.update(
        PaperTopic.objects.filter(
            topic__in=topics, source=PaperTopic.Source.RULE
        ).values_list("paper_id", flat=True)
    )
    ids.update(
        ReviewItem.objects.filter(topic__in=topics, vetoed=True).values_list(
            "paper_id", flat=True
        )
    )
    return sorted(ids)


def corpus_fingerprint() -> str:
    """What changes whenever papers are added, changed, cross-listed or deleted."""
    stats = Paper.objects.aggregate(papers=Count("pk"), latest=Max("modified_at"))
    return f"{stats['papers']} {stats['latest']}"


def tagging_fingerprint(topic: Topic, corpus: str) -> str:
    """A digest of what a topic's rule tags depend on: its rule and categories,
    and the corpus (corpus_fingerprint)."""
    codes = sorted(category.code for category in topic.categories.all())
    text = json.dumps([topic.rule, codes, corpus])
    return hashlib.sha256(text.encode()).hexdigest()


def retag_changed_topics() -> tuple[list[Topic], TagResult]:
    """Re-tag the active topics whose rule, categories or corpus changed since
    their last re-tag (retag_topics records it); return them and the result."""
    corpus = corpus_fingerprint()
    changed = [
        topic
        for topic in Topic.objects.filter(is_active=True).prefetch_related("categories")
        if topic.tagged_fingerprint != tagging_fingerprint(topic, corpus)
    ]
    return changed, retag_topics(changed) if changed else TagResult()


def retag_all() -> TagResult:
    """Re-tag every paper against every active topic."""
    return retag_topics(
        Topic.objects.filter(is_active=True).prefetch_related("categories")
    )


def _tag_chunk(
    papers: QuerySet[Paper], topic_ids: list[int], rules: TopicRules, result: TagResult
) -> None:
    paper_ids = []
    wanted: dict[tuple[int, int], tuple[str, ...]] = {}
    # The documents are built here anyway: those papers' index terms that are
    # out of date are derived from them, not again by the next preview.
    stale = stale_papers(papers)
    index_terms = []
    # Each document is dropped once matched: a chunk's documents held together
    # are thousands of containers the garbage collector would scan again and again.
    for pk, doc, categories in iter_paper_documents(papers):
        paper_ids.append(pk)
        for topic_id, terms in rules.match(doc, categories).items():
            wanted[(topic_id, pk)] = terms
        if pk in stale:
            index_terms.append((pk, stale[pk], document_terms(doc)))
    if not paper_ids:
        return
    store_terms(index_terms)
    _store(paper_ids, topic_ids, wanted, result)
    result.papers += len(paper_ids)


def _store(
    paper_ids: list[int],
    topic_ids: list[int],
    wanted: dict[tuple[int, int], tuple[str, ...]],
    result: TagResult,
) -> None:
    added, removed = store_rule_tags(paper_ids, topic_ids, wanted)
    result.added += added
    result.removed += removed
