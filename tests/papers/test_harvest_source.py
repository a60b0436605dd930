"""papers.ingest.harvest.harvest_source, what the ingest task runs: the source
with the configured tagger, and after a run that stored papers, its after_runs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from werkzeug import Response

from papers.ingest.harvest import harvest_source
from papers.models import FeedSource
from papers.models import IngestRun
from tests.fakearxiv import xml
from tests.papers.test_harvest import STAT_LISTING
from tests.topics.factories import make_topic
from topics.models import PaperTopic
from topics.tagging import IngestTagger

pytestmark = pytest.mark.django_db


class CountingTagger(IngestTagger):
    """The project's tagger, counting its after_runs."""

    after = 0

    def after_runs(self) -> None:
        type(self).after += 1
        super().after_runs()


@pytest.fixture
def tagger(settings):
    settings.MOMENTUM_INGEST_TAGGER = f"{__name__}.CountingTagger"
    CountingTagger.after = 0
    return CountingTagger


def test_a_run_that_stores_papers_tags_them_and_runs_after_runs(fake_arxiv, tagger):
    topic = make_topic("Conformal prediction", rule="ti:conformal", slug="conformal")
    feed = FeedSource.objects.create(name="stat", kind="listing", category="stat")
    fake_arxiv.on(
        "/atom/stat",
        xml(STAT_LISTING, ETag='"abc"'),
        lambda request: Response(status=304),
    )

    first = harvest_source(feed, owner="test-worker")
    after_first = tagger.after
    second = harvest_source(feed, owner="test-worker")

    assert first.status == IngestRun.Status.SUCCEEDED
    assert first.new_count > 50
    assert PaperTopic.objects.filter(topic=topic).exists()
    assert after_first == 1
    assert second.status == IngestRun.Status.SUCCEEDED
    assert second.new_count == second.updated_count == 0
    assert tagger.after == 1  # nothing stored: nothing follows


def test_a_source_another_worker_holds_is_left_alone(fake_arxiv, tagger):
    feed = FeedSource.objects.create(
        name="stat",
        kind="listing",
        category="stat",
        claimed_by="other-worker",
        claimed_until=timezone.now() + timedelta(minutes=5),
    )

    assert harvest_source(feed, owner="test-worker") is None
    assert fake_arxiv.requests == []
    assert tagger.after == 0
