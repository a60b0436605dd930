"""A burst of curator decisions retrains the topic's model once, on a real worker
of the tagging queue; the nightly task trains every active topic."""

from __future__ import annotations

import pytest
from django.test import override_settings

from tests.integration.celery_workers import worker_process
from tests.topics.factories import make_topic
from tests.topics.test_relevance import corpus
from tests.topics.test_relevance import decide
from tests.waiting import wait_for
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicModel
from topics.tagging import retag_topics
from topics.tasks import train_topic_models

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("broker"),
]


@pytest.fixture
def worker():
    process = worker_process("tagging")
    yield process
    process.kill()
    process.wait(timeout=10)


@override_settings(MOMENTUM_MODEL_TRAIN_DELAY=2)
def test_a_burst_of_decisions_trains_the_model_once(worker):
    papers = corpus()
    topic = make_topic(rule="ti:agent", membership=Topic.Membership.SUGGEST)
    retag_topics([topic])

    # One transaction per decision, as clicks in the review queue make them.
    decide(topic, papers)

    wait_for(lambda: TopicModel.objects.filter(topic=topic).exists(), timeout=60)
    model = TopicModel.objects.get(topic=topic)
    assert model.state == TopicModel.State.TRAINED
    assert model.version == 1
    assert model.decisions == 15
    assert ReviewItem.objects.filter(
        topic=topic, paper=papers["2606.00200"], rule_matched=False
    ).exists()


def test_the_nightly_task_trains_every_active_topic(worker):
    corpus()
    active = make_topic(rule="ti:agent")
    make_topic(name="Retired", rule="ti:grasping", is_active=False)
    retag_topics(Topic.objects.all())

    train_topic_models.delay()

    wait_for(lambda: TopicModel.objects.filter(topic=active).exists(), timeout=60)
    assert TopicModel.objects.get(topic=active).state == TopicModel.State.TOO_FEW
    assert TopicModel.objects.count() == 1
