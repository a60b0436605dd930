from __future__ import annotations

from unittest import mock

import pytest

from papers.ingest.upsert import upsert_records
from papers.models import Paper
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.curation import exclude_paper
from topics.curation import lift_exclusion
from topics.curation import merge_topics
from topics.curation import pin_paper
from topics.curation import unpin_paper
from topics.models import Follow
from topics.models import Topic
from topics.models import TopicExclusion
from topics.tagging import retag_topics

pytestmark = pytest.mark.django_db


@pytest.fixture
def papers():
    upsert_records(
        [
            paper_record("2606.00001", title="An agent"),
            paper_record("2606.00002", title="A robot"),
        ]
    )
    return {p.arxiv_id: p for p in Paper.objects.all()}


def sources(topic: Topic) -> dict[str, str]:
    return dict(topic.paper_topics.values_list("paper__arxiv_id", "source"))


def test_pinning_a_rule_tagged_paper_makes_it_a_pin(papers):
    topic = make_topic(rule="ti:agent")
    retag_topics([topic])

    pin_paper(topic, papers["2606.00001"])

    assert sources(topic) == {"2606.00001": "pin"}


def test_unpinning_lets_the_rule_decide_again(papers):
    topic = make_topic(rule="ti:agent")
    pin_paper(topic, papers["2606.00001"])
    pin_paper(topic, papers["2606.00002"])

    unpin_paper(topic, papers["2606.00001"])
    unpin_paper(topic, papers["2606.00002"])

    assert sources(topic) == {"2606.00001": "rule"}


def test_excluding_removes_a_pin_and_pinning_lifts_an_exclusion(papers, staff):
    topic = make_topic(rule="ti:agent")
    pin_paper(topic, papers["2606.00002"])

    exclude_paper(topic, papers["2606.00002"], reason="off topic", by=staff)
    assert sources(topic) == {}
    assert TopicExclusion.objects.get().created_by == staff

    pin_paper(topic, papers["2606.00002"])
    assert sources(topic) == {"2606.00002": "pin"}
    assert not TopicExclusion.objects.exists()


def test_lifting_an_exclusion_lets_the_rule_tag_again(papers):
    topic = make_topic(rule="ti:agent")
    exclude_paper(topic, papers["2606.00001"])
    retag_topics([topic])
    assert sources(topic) == {}

    lift_exclusion(topic, papers["2606.00001"])

    assert sources(topic) == {"2606.00001": "rule"}


def test_merge_keeps_followers_pins_exclusions_and_related(
    papers, alice, bob, django_capture_on_commit_callbacks
):
    target = make_topic("Agents", rule="ti:agent", slug="agents")
    other = make_topic("Robots", rule="ti:robot", slug="robots")
    neighbour = make_topic("Neighbour", rule="ti:x", slug="neighbour")
    other.related.add(neighbour, target)
    Follow.objects.create(user=alice, topic=target)
    Follow.objects.create(user=alice, topic=other)
    Follow.objects.create(user=bob, topic=other, muted=True)
    pin_paper(other, papers["2606.00002"])
    exclude_paper(other, papers["2606.00001"], reason="a survey")

    with (
        mock.patch("topics.tasks.retag_topic.delay") as retag,
        django_capture_on_commit_callbacks(execute=True),
    ):
        merge_topics(target, [target, other])

    assert not Topic.objects.filter(slug="robots").exists()
    assert sorted(target.follows.values_list("user__email", "muted")) == [
        ("alice@example.com", False),
        ("bob@example.com", True),
    ]
    assert sources(target) == {"2606.00002": "pin"}
    assert target.exclusions.get().reason == "a survey"
    assert list(target.related.all()) == [neighbour]
    retag.assert_called_once_with(target.pk)  # the re-tag, sent after commit
    target.refresh_from_db()
    assert target.retag_pending
