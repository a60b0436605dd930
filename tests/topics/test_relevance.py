"""Topic relevance models: training, determinism, fallback, and what each
membership mode lets the model do (topics.relevance)."""

from __future__ import annotations

from unittest import mock

import pytest
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from sklearn.feature_extraction.text import CountVectorizer

from papers.ingest.upsert import upsert_records
from papers.models import Paper
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics import deciding
from topics import relevance
from topics import scoring
from topics.curation import exclude_paper
from topics.curation import pin_paper
from topics.editing import set_active
from topics.membership import BOUNDARY
from topics.models import PaperTopic
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicModel
from topics.queue import model_summary
from topics.relevance import training_due_key
from topics.tagging import retag_topics
from topics.tasks import retag_topic
from topics.tasks import train_topic_model

pytestmark = pytest.mark.django_db

AGENT = "We train language model agents that call tools with reinforcement learning."
ROBOT = "A gripper learns grasping of household objects from camera images."
# On topic, but the rule (ti:agent) misses it: the model should propose it.
MISSED = "Tool calling language model trained with reinforcement learning rewards."


def corpus() -> dict[str, Paper]:
    records = [
        paper_record(f"2606.{n:05d}", title=f"Agent study {n}", abstract=AGENT)
        for n in range(30)
    ]
    records += [
        paper_record(f"2606.{n:05d}", title=f"Grasping study {n}", abstract=ROBOT)
        for n in range(30, 90)
    ]
    # Rule matches that are really about robots: curators exclude them.
    records += [
        paper_record(f"2606.{n:05d}", title=f"Agent grasping {n}", abstract=ROBOT)
        for n in range(90, 102)
    ]
    records.append(
        paper_record("2606.00200", title="Learning to call tools", abstract=MISSED)
    )
    upsert_records(records)
    return {paper.arxiv_id: paper for paper in Paper.objects.all()}


@pytest.fixture
def papers() -> dict[str, Paper]:
    return corpus()


@pytest.fixture
def topic(papers) -> Topic:
    topic = make_topic(rule="ti:agent")
    retag_topics([topic])
    return topic


def decide(topic: Topic, papers: dict[str, Paper]) -> None:
    """A curator's burst: the robot rule matches excluded, a few agents pinned."""
    for n in range(90, 102):
        exclude_paper(topic, papers[f"2606.{n:05d}"])
    for n in range(3):
        pin_paper(topic, papers[f"2606.{n:05d}"])


@pytest.mark.parametrize("eager", [False, True])
def test_a_burst_of_decisions_asks_for_one_training_until_it_starts(
    topic, papers, django_capture_on_commit_callbacks, settings, eager
):
    settings.CELERY_TASK_ALWAYS_EAGER = eager
    settings.MOMENTUM_MODEL_TRAIN_DELAY = 120
    cache.delete(training_due_key(topic.pk))
    # With in-process tasks, the countdown is a timer thread's (core.queue): no
    # decision waits for the training.
    sent = (
        "core.queue._run_later"
        if eager
        else "topics.tasks.train_topic_model.apply_async"
    )
    with mock.patch(sent) as schedule:
        with django_capture_on_commit_callbacks(execute=True):
            with transaction.atomic():  # as the review queue's bulk actions decide
                decide(topic, papers)
            exclude_paper(topic, papers["2606.00030"])
        if eager:
            schedule.assert_called_once_with(120, train_topic_model, (topic.pk,))
        else:
            schedule.assert_called_once_with((topic.pk,), countdown=120)

        train_topic_model(topic.pk)  # the training starts: later decisions are new
        with django_capture_on_commit_callbacks(execute=True):
            pin_paper(topic, papers["2606.00004"])

    assert schedule.call_count == 2


def test_decisions_on_an_inactive_topic_train_it_when_it_is_active_again(
    topic, papers, django_capture_on_commit_callbacks, settings
):
    """A decision on an inactive topic sent a training that found the topic
    inactive and trained nothing: the decisions are kept, and its activation
    (a re-tag, then a training) learns from them."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    set_active(topic, False)
    cache.delete(training_due_key(topic.pk))

    sent = "topics.tasks.train_topic_model.apply_async"
    with mock.patch(sent) as schedule, django_capture_on_commit_callbacks(execute=True):
        decide(topic, papers)
    set_active(topic, True)
    retag_topic(topic.pk)  # the task the activation sends

    schedule.assert_not_called()
    assert topic.model.decisions == 15


def test_too_few_decisions_leave_the_rule_to_decide(topic, papers):
    model = relevance.train(topic)

    assert model.state == TopicModel.State.TOO_FEW
    assert model.weights == {}
    assert model.positives == 42
    assert model.decisions == 0
    assert "the rule alone decides" in model_summary(model)
    assert deciding.scorer_of(topic) is None
    assert topic.paper_topics.count() == 42


def test_the_summary_says_when_the_band_falls_short_of_the_target(topic):
    fields = {"state": TopicModel.State.TRAINED, "trained_at": timezone.now()}
    fields |= {"include_at": 0.9, "exclude_at": 0.2, "recall": 0.9, "band": 0.05}
    short = TopicModel(topic=topic, precision=0.91, **fields)
    meeting = TopicModel(topic=topic, precision=0.96, **fields)

    assert "precision 0.91, recall 0.90" in model_summary(short)
    assert "below the topic's precision target of 0.95" in model_summary(short)
    assert "below the topic's precision target" not in model_summary(meeting)
    assert model_summary(meeting).endswith("fall in the band.")
    low_recall = TopicModel(topic=topic, precision=0.96, **(fields | {"recall": 0.4}))
    both = TopicModel(topic=topic, precision=0.91, **(fields | {"recall": 0.4}))
    assert (
        "That is below the topic's recall target of 0.90: more decisions"
        in model_summary(low_recall)
    )
    assert (
        "That is below the topic's precision target of 0.95 and its recall target "
        "of 0.90: more decisions" in model_summary(both)
    )


def test_a_target_reads_as_set_beside_estimates_cut_to_two_places(topic):
    """A target of 0.999 read "target of 1.00", beside a precision of 0.99
    said to fall short of it."""
    topic.precision_target = 0.999
    fields = {"state": TopicModel.State.TRAINED, "trained_at": timezone.now()}
    fields |= {"include_at": 0.9, "exclude_at": 0.2, "recall": 0.9, "band": 0.05}
    short = TopicModel(topic=topic, precision=0.9985, **fields)

    assert "precision 0.99, recall 0.90" in model_summary(short)
    assert "below the topic's precision target of 0.999:" in model_summary(short)


def test_training_is_deterministic(topic, papers):
    decide(topic, papers)
    first = relevance.train(topic)
    weights, fingerprint = first.weights, first.fingerprint

    again = relevance.train(topic, force=True)

    assert again.state == TopicModel.State.TRAINED
    assert again.version == first.version + 1
    assert again.fingerprint == fingerprint
    assert again.weights == weights
    texts = [scoring.paper_text(p.title, p.abstract) for p in papers.values()]
    scores = scoring.Scorer.from_weights(weights).score(texts)
    assert scoring.Scorer.from_weights(again.weights).score(texts).tolist() == (
        scores.tolist()
    )
    # Three pins are too few "in" decisions to draw a band (test_three_way).
    assert again.include_at is None
    assert again.f1 is None
    assert again.positives == 30
    assert again.decisions == 15


def test_scoring_counts_terms_as_the_vectorizer_does(topic, papers):
    decide(topic, papers)
    scorer = scoring.Scorer.from_weights(relevance.train(topic).weights)
    texts = list(deciding.paper_texts([paper.pk for paper in papers.values()]).values())
    vectorizer = CountVectorizer(
        vocabulary={term: i for i, term in enumerate(scorer.vocabulary)},
        **scoring.VECTORIZER,
    )

    counts = scorer.counts([scoring.terms_of(text) for text in texts])

    assert (counts != vectorizer.transform(texts)).nnz == 0


def test_an_unchanged_training_set_is_not_trained_again(topic, papers):
    decide(topic, papers)
    first = relevance.train(topic)

    assert relevance.train(topic).version == first.version


def test_a_decision_changes_the_next_model(topic, papers):
    decide(topic, papers)
    before = relevance.train(topic)
    missed = papers["2606.00200"]

    pin_paper(topic, missed)
    after = relevance.train(topic)

    assert after.fingerprint != before.fingerprint
    assert after.decisions == before.decisions + 1
    assert after.weights != before.weights
    old = scoring.Scorer.from_weights(before.weights)
    new = scoring.Scorer.from_weights(after.weights)
    text = [scoring.paper_text(missed.title, missed.abstract)]
    assert new.score(text)[0] > old.score(text)[0]


def test_an_exclusion_changes_the_next_model(topic, papers):
    decide(topic, papers)
    before = relevance.train(topic)

    exclude_paper(topic, papers["2606.00005"])

    assert relevance.train(topic).weights != before.weights


def test_suggestions_fill_the_queue_and_change_no_membership(topic, papers):
    Topic.objects.filter(pk=topic.pk).update(membership=Topic.Membership.SUGGEST)
    topic.refresh_from_db()
    decide(topic, papers)
    members = set(topic.paper_topics.values_list("paper_id", "source"))

    relevance.train(topic)

    assert set(topic.paper_topics.values_list("paper_id", "source")) == members
    proposed = ReviewItem.objects.get(topic=topic, paper=papers["2606.00200"])
    assert not proposed.rule_matched
    assert proposed.score >= BOUNDARY
    assert not proposed.vetoed
    # Rule tags carry the model's score for pages to show.
    assert not topic.paper_topics.filter(score__isnull=True).exists()


def test_a_rule_match_outside_the_models_scope_keeps_its_rule_tag(topic, papers):
    """The model scores only its scope's categories; elsewhere the rule decides."""
    Topic.objects.filter(pk=topic.pk).update(membership=Topic.Membership.AUTO)
    topic.refresh_from_db()
    upsert_records(
        [
            paper_record(
                "2606.00500",
                title="Agent grasping in the brain",
                abstract=ROBOT,
                categories=("q-bio.NC",),
            )
        ]
    )
    retag_topics([topic])
    decide(topic, papers)

    relevance.train(topic)

    assert "q-bio.NC" not in TopicModel.objects.get(topic=topic).weights["categories"]
    tag = PaperTopic.objects.get(topic=topic, paper__arxiv_id="2606.00500")
    assert tag.source == PaperTopic.Source.RULE
    assert tag.score is None


def test_a_curator_decision_resolves_the_review_item(topic, papers):
    Topic.objects.filter(pk=topic.pk).update(membership=Topic.Membership.SUGGEST)
    topic.refresh_from_db()
    decide(topic, papers)
    relevance.train(topic)
    missed = papers["2606.00200"]
    assert ReviewItem.objects.filter(topic=topic, paper=missed).exists()

    pin_paper(topic, missed)

    assert not ReviewItem.objects.filter(topic=topic, paper=missed).exists()
    relevance.train(topic)
    assert not ReviewItem.objects.filter(topic=topic, paper=missed).exists()


def test_a_stored_model_of_another_format_is_not_used(topic, papers):
    decide(topic, papers)
    model = relevance.train(topic)
    Topic.objects.filter(pk=topic.pk).update(membership=Topic.Membership.SUGGEST)
    topic.refresh_from_db()
    assert deciding.scorer_of(topic) is not None

    TopicModel.objects.filter(pk=model.pk).update(weights={"format": -1})

    assert deciding.scorer_of(topic) is None
