"""A changed rule re-tags in the background, on a real worker of the tagging queue."""

from __future__ import annotations

import pytest
from django.db import transaction

from papers.ingest.upsert import upsert_records
from tests.integration.celery_workers import worker_thread
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from tests.waiting import wait_for
from topics.curation import request_retag
from topics.models import Topic
from topics.models import TopicMomentum
from topics.tagging import retag_topics

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("broker"),
]


def test_rule_change_is_retagged_by_the_tagging_worker_with_progress():
    upsert_records(
        [
            paper_record(f"2606.{n:05d}", title="agent" if n % 2 else "robot")
            for n in range(40)
        ]
    )
    topic = make_topic(rule="ti:agent")
    retag_topics([topic])
    assert topic.paper_topics.count() == 20

    with worker_thread("tagging"):
        with transaction.atomic():
            Topic.objects.filter(pk=topic.pk).update(rule="ti:robot OR ti:agent")
            request_retag(topic)
        wait_for(lambda: not Topic.objects.get(pk=topic.pk).retag_pending)

    topic.refresh_from_db()
    assert topic.paper_topics.count() == 40
    assert (topic.retag_done, topic.retag_total) == (40, 40)
    assert TopicMomentum.objects.filter(topic=topic).exists()
