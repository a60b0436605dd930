"""The writers around topics.membership.decide: read each paper's evidence (the
rule's tag or match, the model's score, curators' decisions, the judge's
verdict, readers' flags), decide, and bring tags and the review queue in line
in bulk.

A pending paper (in the band, no verdict) has no PaperTopic row, so every read
of membership (topic pages, feeds, the API, digests) leaves it out; it waits in
the review queue as a ReviewItem with `pending` set.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from papers.models import Paper
from papers.versions import content_changed
from papers.versions import pages_changed
from topics.membership import Calibration
from topics.membership import Decision
from topics.membership import Evidence
from topics.membership import Mode
from topics.membership import Thresholds
from topics.membership import decide
from topics.models import JudgeVerdict
from topics.models import PaperTopic
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicExclusion
from topics.models import TopicModel
from topics.scoring import Scorer
from topics.scoring import paper_text
from topics.scoring import terms_of

CHUNK_SIZE = 2000
REVIEW_FIELDS = (
    "score",
    "probability",
    "rule_terms",
    "rule_matched",
    "vetoed",
    "pending",
)


class TopicScorer:
    """A topic's trained model as decisions use it: its scorer and thresholds."""

    def __init__(self, scorer: Scorer, thresholds: Thresholds | None) -> None:
        self.scorer = scorer
        self.thresholds = thresholds
        self.categories = scorer.categories

    def score_terms(self, documents: Sequence[Sequence[str]]):
        return self.scorer.score_terms(documents)


def thresholds_of(model: TopicModel) -> Thresholds | None:
    """The band's edges stored with the model; None when too few decisions."""
    if model.include_at is None or model.exclude_at is None:
        return None
    calibration = Calibration.from_json(model.calibration)
    if calibration is None:
        return None
    return Thresholds(
        calibration=calibration,
        include_at=model.include_at,
        exclude_at=model.exclude_at,
        precision=model.precision or 0.0,
        recall=model.recall or 0.0,
        band=model.band or 0.0,
    )


def scorer_of(topic: Topic) -> TopicScorer | None:
    """The topic's trained model, if it has one and its membership uses it."""
    if topic.membership == Topic.Membership.RULE:
        return None
    model = TopicModel.objects.filter(
        topic=topic, state=TopicModel.State.TRAINED
    ).first()
    if model is None or (scorer := Scorer.from_weights(model.weights)) is None:
        return None
    return TopicScorer(scorer, thresholds_of(model))


def active_scorers() -> list[tuple[Topic, TopicScorer]]:
    """The active topics whose membership uses a trained model, with their models."""
    found = []
    for topic in Topic.objects.filter(is_active=True).exclude(
        membership=Topic.Membership.RULE
    ):
        scorer = scorer_of(topic)
        if scorer is not None:
            found.append((topic, scorer))
    return found


def scope_papers(categories: Sequence[str]) -> QuerySet[Paper]:
    return Paper.objects.filter(categories__code__in=categories).distinct()


def apply_model(
    topic: Topic, scorer: TopicScorer | None, paper_ids: Iterable[int] | None = None
) -> None:
    """Bring the topic's tags and review queue in line with `scorer` for these
    papers (default: every paper in scope, tagged or already in the queue).

    With no scorer (rule only, or too few decisions) the rule alone decides: model
    and judge tags and vetoes are undone and only readers' flags stay queued.
    """
    if paper_ids is None:
        ids = set(
            PaperTopic.objects.filter(topic=topic).values_list("paper_id", flat=True)
        )
        ids.update(
            ReviewItem.objects.filter(topic=topic).values_list("paper_id", flat=True)
        )
        if scorer is not None:
            ids.update(scope_papers(scorer.categories).values_list("pk", flat=True))
        paper_ids = ids
    apply_models([(topic, scorer)], paper_ids)


def apply_models(
    models: Sequence[tuple[Topic, TopicScorer | None]], paper_ids: Iterable[int]
) -> None:
    """apply_model for several topics over the same papers (new papers at ingest):
    each chunk of papers is read and split into terms once for all of them."""
    ids = sorted(paper_ids)
    scoring = any(scorer is not None for _, scorer in models)
    for start in range(0, len(ids), CHUNK_SIZE):
        chunk = ids[start : start + CHUNK_SIZE]
        if scoring:
            terms = {pk: terms_of(text) for pk, text in paper_texts(chunk).items()}
        else:  # no model reads them: only which papers still exist matters
            existing = Paper.objects.filter(pk__in=chunk).values_list("pk", flat=True)
            terms = {pk: [] for pk in existing}
        for topic, scorer in models:
            _apply_chunk(topic, scorer, terms)


def _scores(
    scorer: TopicScorer | None, terms: dict[int, list[str]]
) -> dict[int, float | None]:
    """The model's score of each paper in its scope; None elsewhere."""
    scores: dict[int, float | None] = dict.fromkeys(terms)
    if scorer is None:
        return scores
    in_scope = list(terms)
    if scorer.categories:
        in_scope = list(
            scope_papers(scorer.categories)
            .filter(pk__in=in_scope)
            .values_list("pk", flat=True)
        )
    values = scorer.score_terms([terms[paper_id] for paper_id in in_scope])
    scores.update(zip(in_scope, (round(float(v), 4) for v in values), strict=True))
    return scores


@transaction.atomic
def _apply_chunk(
    topic: Topic, scorer: TopicScorer | None, terms: dict[int, list[str]]
) -> None:
    """apply_model for one chunk: `terms` holds each existing paper's terms."""
    paper_ids = list(terms)
    scores = _scores(scorer, terms)
    tags = {
        tag.paper_id: tag
        for tag in PaperTopic.objects.filter(topic=topic, paper_id__in=paper_ids)
    }
    items = {
        item.paper_id: item
        for item in ReviewItem.objects.filter(topic=topic, paper_id__in=paper_ids)
    }
    excluded = set(
        TopicExclusion.objects.filter(topic=topic, paper_id__in=paper_ids).values_list(
            "paper_id", flat=True
        )
    )
    verdicts = dict(
        JudgeVerdict.objects.filter(topic=topic, paper_id__in=paper_ids).values_list(
            "paper_id", "belongs"
        )
    )
    mode = Mode(topic.membership) if scorer is not None else Mode.RULE
    thresholds = scorer.thresholds if scorer is not None else None
    writes = _Writes(topic)
    for paper_id in paper_ids:
        tag, item = tags.get(paper_id), items.get(paper_id)
        rule_terms = _rule_terms(tag, item)
        decision = decide(
            Evidence(
                mode=mode,
                rule=rule_terms is not None,
                score=scores[paper_id],
                thresholds=thresholds,
                pinned=tag is not None and tag.source == PaperTopic.Source.PIN,
                excluded=paper_id in excluded,
                verdict=verdicts.get(paper_id),
                flags=item.flags if item else 0,
            )
        )
        writes.tag(paper_id, tag, decision, rule_terms or [], scores[paper_id])
        writes.queue(paper_id, item, decision, rule_terms or [], scores[paper_id])
    writes.save(tags)


def _rule_terms(tag: PaperTopic | None, item: ReviewItem | None) -> list[str] | None:
    """The rule's matched terms, from its tag or (kept out) the queue; None: no
    match. Tags the rule no longer makes are removed by tagging, not here."""
    if tag is not None and tag.source == PaperTopic.Source.RULE:
        return tag.matched_terms
    if item is not None and item.rule_matched:
        return item.rule_terms
    return None


class _Writes:
    """What one chunk's decisions change, written in bulk at the end."""

    def __init__(self, topic: Topic) -> None:
        self.topic = topic
        self.new_tags: list[PaperTopic] = []
        self.changed_tags: list[PaperTopic] = []
        self.dropped: list[int] = []
        self.new_items: list[ReviewItem] = []
        self.changed_items: list[ReviewItem] = []
        self.resolved: list[int] = []

    def tag(
        self,
        paper_id: int,
        tag: PaperTopic | None,
        decision: Decision,
        rule_terms: list[str],
        score: float | None,
    ) -> None:
        if decision.member is None:
            if tag is not None:
                self.dropped.append(tag.pk)
            return
        source = decision.member.value
        if tag is None:
            self.new_tags.append(
                PaperTopic(
                    topic=self.topic,
                    paper_id=paper_id,
                    source=source,
                    matched_terms=rule_terms,
                    score=score,
                )
            )
        elif tag.score != score or tag.source != source:
            tag.score, tag.source = score, source
            self.changed_tags.append(tag)

    def queue(
        self,
        paper_id: int,
        item: ReviewItem | None,
        decision: Decision,
        rule_terms: list[str],
        score: float | None,
    ) -> None:
        if not decision.queued:
            if item is not None:
                self.resolved.append(item.pk)
            return
        values = (
            score,
            decision.probability,
            rule_terms,
            bool(rule_terms) or (item is not None and item.rule_matched),
            decision.vetoed,
            decision.pending,
        )
        fields = dict(zip(REVIEW_FIELDS, values, strict=True))
        if item is None:
            self.new_items.append(
                ReviewItem(topic=self.topic, paper_id=paper_id, **fields)
            )
        elif any(getattr(item, name) != value for name, value in fields.items()):
            for name, value in fields.items():
                setattr(item, name, value)
            item.updated_at = timezone.now()
            self.changed_items.append(item)

    def save(self, tags: dict[int, PaperTopic]) -> None:
        PaperTopic.objects.bulk_create(self.new_tags, ignore_conflicts=True)
        PaperTopic.objects.bulk_update(self.changed_tags, ["score", "source"])
        PaperTopic.objects.filter(pk__in=self.dropped).delete()
        ReviewItem.objects.bulk_create(self.new_items)
        ReviewItem.objects.bulk_update(
            self.changed_items, [*REVIEW_FIELDS, "updated_at"]
        )
        ReviewItem.objects.filter(pk__in=self.resolved).delete()
        if self.new_tags or self.changed_tags or self.dropped:
            gone = set(self.dropped)
            touched = [tag.paper_id for tag in [*self.new_tags, *self.changed_tags]]
            touched += [tag.paper_id for tag in tags.values() if tag.pk in gone]
            pages_changed(touched, topics=[self.topic.pk])
            content_changed(topics=[self.topic], papers=touched)


def paper_texts(paper_ids: Sequence[int]) -> dict[int, str]:
    """Each paper's text as the model reads it, by id (missing papers left out)."""
    texts = {}
    for start in range(0, len(paper_ids), CHUNK_SIZE):
        chunk = paper_ids[start : start + CHUNK_SIZE]
        for pk, title, abstract in Paper.objects.filter(pk__in=chunk).values_list(
            "pk", "title", "abstract"
        ):
            texts[pk] = paper_text(title, abstract)
    return texts
