"""The topics' periodic sweeps, called as beat would."""

from __future__ import annotations

import threading
from datetime import timedelta
from io import StringIO
from unittest import mock

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connections
from django.utils import timezone

from core.locks import held
from papers.ingest.upsert import upsert_records
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.models import PaperTopic
from topics.models import RuleDocument
from topics.models import Topic
from topics.retagging import RETAG_LOST_AFTER
from topics.retagging import run_retag
from topics.rules.terms import TERMS_VERSION
from topics.tasks import RULE_TERMS_SWEEP_KEY
from topics.tasks import derive_rule_terms
from topics.tasks import resend_lost_retags

pytestmark = pytest.mark.django_db


def test_a_lost_retag_is_sent_again_once_however_many_beats_fire():
    now = timezone.now()
    lost = make_topic("Lost", rule="ti:a", slug="lost")
    running = make_topic("Running", rule="ti:b", slug="running")
    done = make_topic("Done", rule="ti:c", slug="done")
    long_ago = now - RETAG_LOST_AFTER - timedelta(minutes=1)
    Topic.objects.filter(pk=lost.pk).update(retag_requested_at=long_ago)
    Topic.objects.filter(pk=running.pk).update(retag_requested_at=now)
    Topic.objects.filter(pk=done.pk).update(
        retag_requested_at=long_ago, retagged_at=long_ago + timedelta(seconds=5)
    )

    with mock.patch("topics.tasks.retag_topic.delay") as retag:
        assert resend_lost_retags() == 1
        assert resend_lost_retags() == 0

    retag.assert_called_once_with(lost.pk)
    lost.refresh_from_db()
    assert lost.retag_pending


def test_a_retag_that_stopped_counting_is_sent_again_without_the_long_wait(
    admin_client,
):
    """Killed with its worker at 4,000 of 8,246 papers, it showed "running"
    in admin for 70 minutes while nothing ran."""
    now = timezone.now()
    asked = now - timedelta(minutes=20)
    stopped = make_topic("Stopped", rule="ti:a", slug="stopped")
    moving = make_topic("Moving", rule="ti:b", slug="moving")
    queued = make_topic("Queued", rule="ti:c", slug="queued")  # not started yet
    for topic, counted in ((stopped, now - timedelta(minutes=15)), (moving, now)):
        Topic.objects.filter(pk=topic.pk).update(
            retag_requested_at=asked,
            retag_done=4000,
            retag_total=8246,
            retag_progress_at=counted,
        )
    Topic.objects.filter(pk=queued.pk).update(retag_requested_at=asked)
    listing = admin_client.get("/admin/topics/topic/").text

    with mock.patch("topics.tasks.retag_topic.delay") as retag:
        assert resend_lost_retags() == 1
        assert resend_lost_retags() == 0

    retag.assert_called_once_with(stopped.pk)
    counted_at = timezone.localtime(now - timedelta(minutes=15))
    assert f"running: 4000 of 8246 papers, last counted {counted_at:%H:%M}" in listing


def test_one_sweep_of_the_rule_terms_at_a_time():
    upsert_records([paper_record("2606.00091", title="Stale terms")])
    RuleDocument.objects.update(version=TERMS_VERSION - 1)
    cache.clear()
    cache.add(RULE_TERMS_SWEEP_KEY, True, 60)  # a sweep under way

    assert derive_rule_terms() == 0

    cache.delete(RULE_TERMS_SWEEP_KEY)
    assert derive_rule_terms() == 1
    assert derive_rule_terms() == 0
    assert cache.get(RULE_TERMS_SWEEP_KEY) is None


@pytest.mark.django_db(transaction=True)
def test_a_retag_waits_for_the_one_running_and_tags_by_the_rule_then():
    """Two rule edits a moment apart: their re-tags ran at once, and the
    slower, of the older rule, left papers the new rule does not match."""
    upsert_records(
        [
            paper_record("2606.00001", title="A graph"),
            paper_record("2606.00002", title="A network"),
        ]
    )
    topic = make_topic(rule="ti:network")
    done: list[object] = []

    def retag() -> None:
        done.append(run_retag(topic.pk))
        connections.close_all()  # this thread's own

    with held("retag", topic.pk):  # a re-tag under way
        waiting = threading.Thread(target=retag)
        waiting.start()
        waiting.join(timeout=1)
        ran_meanwhile = bool(done)
        Topic.objects.filter(pk=topic.pk).update(rule="ti:graph")  # edited again
    waiting.join(timeout=60)

    assert not ran_meanwhile
    tagged = PaperTopic.objects.filter(topic=topic).values_list("paper__arxiv_id")
    assert list(tagged) == [("2606.00001",)]


@pytest.mark.django_db(transaction=True)
def test_the_retag_command_waits_as_the_task_does_and_marks_the_request_done():
    """`manage.py topics retag` re-tags as the worker's task does: after a
    re-tag under way, by the rule then, and the topic's request is done."""
    upsert_records(
        [
            paper_record("2606.00001", title="A graph"),
            paper_record("2606.00002", title="A network"),
        ]
    )
    topic = make_topic("Networks", rule="ti:network", slug="nets")
    other = make_topic("Graphs", rule="ti:graph", slug="graphs")
    Topic.objects.update(retag_requested_at=timezone.now())
    out = StringIO()
    trained: list[int] = []
    learn = mock.patch(
        "topics.management.commands.topics.train_topic_model", trained.append
    )

    def retag() -> None:
        with learn:
            call_command("topics", "retag", "nets", "graphs", stdout=out)
        connections.close_all()  # this thread's own

    with held("retag", other.pk):  # a re-tag under way
        waiting = threading.Thread(target=retag)
        waiting.start()
        waiting.join(timeout=1)
        ran_meanwhile = bool(out.getvalue())
        Topic.objects.filter(pk=topic.pk).update(rule="ti:graph")  # edited again
    waiting.join(timeout=60)

    assert not ran_meanwhile
    assert out.getvalue().startswith("Re-tagged 2 topic(s): ")
    tagged = PaperTopic.objects.filter(topic=topic).values_list("paper__arxiv_id")
    assert list(tagged) == [("2606.00001",)]
    assert not any(topic.retag_pending for topic in Topic.objects.all())
    assert sorted(trained) == sorted([topic.pk, other.pk])
