"""Feed sources end to end against the fake arXiv: fetch -> parse -> upsert -> tag."""

from __future__ import annotations

import re
from datetime import date
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone
from werkzeug import Response

from papers.ingest.harvest import backfill_refusal
from papers.ingest.harvest import claim_lease
from papers.ingest.harvest import run_source
from papers.ingest.harvest import take_due_sources
from papers.ingest.runs import ingest_path
from papers.ingest.schedule import next_retry_after
from papers.models import FeedSource
from papers.models import IngestRun
from papers.models import Paper
from tests.fakearxiv import API_ERROR_RESPONSE
from tests.fakearxiv import FIXTURES
from tests.fakearxiv import OAI_FIRST_PAGE
from tests.fakearxiv import OAI_FIRST_TOKEN
from tests.fakearxiv import OAI_LAST_PAGE
from tests.fakearxiv import OAI_RETRY_RECORDING
from tests.fakearxiv import TESTING_PAGES
from tests.fakearxiv import api_pages
from tests.fakearxiv import oai_error
from tests.fakearxiv import recorded
from tests.fakearxiv import xml
from tests.topics.factories import make_topic
from topics.models import PaperTopic
from topics.tagging import IngestTagger

pytestmark = pytest.mark.django_db

STAT_LISTING = (
    FIXTURES
    / "listing_rss2_2024"
    / "emanuelealiverti-arxiv_rss_stat_2024-03-26.rss.xml"
)
TRUNCATED_LISTING = (
    FIXTURES / "listing_atom_2024" / "zotero-arxiv-daily_cs.AI_2025-08-20.atom.xml"
)
EMPTY_LISTING = (
    FIXTURES / "listing_atom_2024" / "researcharr_cs_EMPTY_weekend_2025-11-23.atom.xml"
)


def source(kind: str, **fields: object) -> FeedSource:
    return FeedSource.objects.create(name=f"{kind} source", kind=kind, **fields)


def run(feed: FeedSource, **options: object) -> IngestRun:
    feed.refresh_from_db()
    result = run_source(feed, owner="test-worker", tagger=IngestTagger(), **options)
    assert result is not None
    feed.refresh_from_db()
    return result


def test_listing_source_ingests_tags_and_then_asks_only_for_changes(fake_arxiv):
    topic = make_topic("Conformal prediction", rule="ti:conformal", slug="conformal")
    feed = source("listing", category="stat")
    fake_arxiv.on(
        "/atom/stat",
        xml(STAT_LISTING, ETag='"abc"'),
        lambda request: (
            Response(status=304)
            if request.headers.get("If-None-Match") == '"abc"'
            else xml(STAT_LISTING)
        ),
    )

    first = run(feed)
    second = run(feed)

    assert first.status == IngestRun.Status.SUCCEEDED
    assert first.new_count > 50
    assert feed.etag == '"abc"'
    assert PaperTopic.objects.filter(topic=topic).exists()
    assert second.status == IngestRun.Status.SUCCEEDED
    assert second.fetched_count == 0
    assert "Not modified" in second.message
    assert feed.last_success_at is not None
    assert feed.next_run_at > timezone.now()


def test_listing_validators_longer_than_their_columns_are_not_kept(fake_arxiv):
    """Storing a 302-character ETag failed the page's write: every run of the
    source failed, its papers rolled back."""
    feed = source("listing", category="stat")
    fake_arxiv.on("/atom/stat", xml(STAT_LISTING, ETag='"' + "e" * 300 + '"'))

    result = run(feed)

    assert result.status == IngestRun.Status.SUCCEEDED
    assert result.new_count == Paper.objects.count() > 50
    assert feed.etag == ""


def test_listing_cross_list_adds_a_category_to_a_known_paper(fake_arxiv):
    fake_arxiv.on("/atom/stat", xml(STAT_LISTING))
    run(source("listing", category="stat"))
    cross = (
        Paper.objects.filter(categories__code="stat.ME")
        .exclude(primary_category__code="stat.ME")
        .first()
    )
    assert cross is not None, "the real listing has cross-listed papers"


def test_api_query_pages_until_the_results_run_out_then_polls_incrementally(fake_arxiv):
    feed = source("api_query", query="all:testing")
    fake_arxiv.on("/api/query", api_pages(TESTING_PAGES))

    first = run(feed)
    starts = [int(p["start"]) for p in fake_arxiv.params("/api/query")]
    fake_arxiv.requests.clear()
    second = run(feed)

    assert starts == [0, 10, 20, 30, 40, 50, 60]
    assert first.new_count == Paper.objects.count() == 60
    assert first.status == IngestRun.Status.SUCCEEDED
    # Nothing new on the first page: the rest is older and already known.
    assert len(fake_arxiv.requests) == 1
    assert (second.new_count, second.updated_count) == (0, 0)


def test_an_api_query_stopped_midway_reads_the_rest_the_next_time(fake_arxiv, settings):
    """Its next run began again at the first page, found it known, and stopped:
    the pages the stopped run had not read were never read."""
    settings.MOMENTUM_HTTP_MAX_ATTEMPTS = 2
    feed = source("api_query", query="all:testing")
    pages = api_pages(TESTING_PAGES)
    fake_arxiv.on("/api/query", pages, pages, Response("overloaded", status=503))

    stopped = run(feed)
    fake_arxiv.requests.clear()
    fake_arxiv.on("/api/query", pages)
    resumed = run(feed)
    fake_arxiv.requests.clear()
    polled = run(feed)

    assert (stopped.status, stopped.new_count) == (IngestRun.Status.FAILED, 20)
    assert [int(p["start"]) for p in fake_arxiv.params("/api/query")] == [0]
    assert resumed.status == IngestRun.Status.SUCCEEDED
    assert Paper.objects.count() == 60
    # Whole again: the next poll stops at the first known page.
    assert (polled.new_count, feed.api_resume_at) == (0, 0)


def test_api_query_stops_at_arxivs_cap(fake_arxiv, monkeypatch):
    monkeypatch.setattr("papers.ingest.harvest.API_MAX_RESULTS", 30)
    fake_arxiv.on("/api/query", api_pages(TESTING_PAGES))

    run(source("api_query", query="all:testing"), since=date(2020, 1, 1))

    assert [int(p["start"]) for p in fake_arxiv.params("/api/query")] == [0, 10, 20]
    search = fake_arxiv.params("/api/query")[0]["search_query"]
    assert search.startswith("(all:testing) AND submittedDate:[202001010000 TO ")


def test_api_id_list_source_asks_by_id(fake_arxiv):
    fake_arxiv.on(
        "/api/query",
        xml(
            FIXTURES
            / "api_atom"
            / "arxiv.py_id_astro-ph_0601001_s0_m100_3150dca9dc76.atom.xml"
        ),
    )

    result = run(source("api_query", query="astro-ph/0601001"))

    assert fake_arxiv.params("/api/query")[0]["id_list"] == "astro-ph/0601001"
    assert result.new_count == 1


def test_api_error_entry_fails_the_run_with_arxivs_message(fake_arxiv):
    feed = source("api_query", query="abc")
    fake_arxiv.on("/api/query", xml(API_ERROR_RESPONSE))

    result = run(feed)

    assert result.status == IngestRun.Status.FAILED
    assert "incorrect id format for abc" in result.message
    assert feed.last_error
    assert Paper.objects.count() == 0


def test_oai_harvest_retries_after_503_follows_tokens_and_checkpoints(fake_arxiv):
    feed = source("oai", category="cs", harvested_until=date(2016, 3, 1))
    fake_arxiv.on(
        "/oai",
        recorded(OAI_RETRY_RECORDING, 0),  # 503, Retry-After: 10
        xml(OAI_FIRST_PAGE),
        xml(OAI_LAST_PAGE),
    )

    result = run(feed)

    params = fake_arxiv.params("/oai")
    assert params[0] == {
        "verb": "ListRecords",
        "metadataPrefix": "arXivRaw",
        "from": "2016-03-01",
        "set": "cs",
    }
    assert params[1] == params[0]
    assert params[2] == {"verb": "ListRecords", "resumptionToken": OAI_FIRST_TOKEN}
    assert fake_arxiv.backoff_waits == [10.0]
    assert result.status == IngestRun.Status.SUCCEEDED
    assert result.new_count == Paper.objects.count() > 1000
    assert feed.resumption_token == ""
    assert feed.harvested_until == timezone.now().date()


def test_oai_harvest_interrupted_midway_resumes_from_its_token(fake_arxiv, settings):
    settings.MOMENTUM_HTTP_MAX_ATTEMPTS = 2
    feed = source("oai", category="cs", harvested_until=date(2016, 3, 1))
    fake_arxiv.on("/oai", xml(OAI_FIRST_PAGE), Response("overloaded", status=503))

    broken = run(feed)
    stored = Paper.objects.count()
    fake_arxiv.requests.clear()
    fake_arxiv.on("/oai", xml(OAI_LAST_PAGE))
    resumed = run(feed)

    assert broken.status == IngestRun.Status.FAILED
    assert "HTTP 503" in broken.message
    assert stored == broken.new_count == 1000  # the whole first page, nothing more
    assert fake_arxiv.params("/oai") == [
        {"verb": "ListRecords", "resumptionToken": OAI_FIRST_TOKEN}
    ]
    assert resumed.status == IngestRun.Status.SUCCEEDED
    assert Paper.objects.count() == stored + resumed.new_count
    assert feed.resumption_token == ""


def test_oai_token_given_twice_stops_the_harvest_and_the_next_starts_over(fake_arxiv):
    """A repository that handed back a token it gave before was harvested for
    ever, the same page again and again, its lease renewed at each."""
    feed = source("oai", category="cs", harvested_until=date(2016, 3, 1))
    fake_arxiv.on("/oai", xml(OAI_FIRST_PAGE), xml(OAI_FIRST_PAGE), xml(OAI_LAST_PAGE))

    result = run(feed)

    assert result.status == IngestRun.Status.FAILED
    assert f"repeated resumptionToken {OAI_FIRST_TOKEN!r}" in result.message
    assert len(fake_arxiv.params("/oai")) == 2
    assert Paper.objects.count() == 1000  # the page, stored once
    assert feed.resumption_token == ""
    assert feed.harvested_until == date(2016, 3, 1)


def test_a_page_whose_write_fails_counts_nothing_on_the_failed_run(
    fake_arxiv, monkeypatch
):
    """Its papers were rolled back, yet the run said it had stored them (the
    connection lost as its checkpoint is written, after its papers)."""
    feed = source("oai", category="cs", harvested_until=date(2016, 3, 1))
    fake_arxiv.on("/oai", xml(OAI_FIRST_PAGE), xml(OAI_LAST_PAGE))
    leases = iter([claim_lease()] * 2)  # the claim and the first page

    def connection_lost_after_the_first_page():
        try:
            return next(leases)
        except StopIteration:
            raise OperationalError("server closed the connection") from None

    monkeypatch.setattr(
        "papers.ingest.harvest.claim_lease", connection_lost_after_the_first_page
    )

    with pytest.raises(OperationalError):
        run(feed)

    failed = IngestRun.objects.get()
    assert failed.status == IngestRun.Status.FAILED
    assert failed.new_count == Paper.objects.count() == 1000
    assert failed.fetched_count > 1000  # the second page was fetched


def test_oai_expired_token_restarts_from_the_last_harvested_day(fake_arxiv):
    feed = source(
        "oai",
        category="cs",
        harvested_until=date(2016, 3, 1),
        resumption_token="stale|1",
    )
    fake_arxiv.on(
        "/oai",
        oai_error(
            "badResumptionToken",
            "The value of the resumptionToken argument is invalid or expired.",
        ),
        xml(OAI_LAST_PAGE),
    )

    result = run(feed)

    params = fake_arxiv.params("/oai")
    assert params[0]["resumptionToken"] == "stale|1"
    assert params[1]["from"] == "2016-03-01"
    assert result.status == IngestRun.Status.SUCCEEDED


def test_oai_no_records_match_is_an_empty_successful_run(fake_arxiv):
    fake_arxiv.on("/oai", oai_error("noRecordsMatch", "No records match."))

    result = run(source("oai", category="cs"))

    assert result.status == IngestRun.Status.SUCCEEDED
    assert result.fetched_count == 0


def test_a_backfill_leaves_the_sources_schedule_and_health_alone(fake_arxiv, settings):
    """GIVEN an OAI source due now that never ran
    WHEN a backfill of March 2016 succeeds, then another one fails
    THEN both runs are recorded, and the source is still due, never run, not
    failing: its regular harvest has not happened."""
    settings.MOMENTUM_HTTP_MAX_ATTEMPTS = 1
    feed = source("oai", category="cs", harvested_until=date(2026, 6, 1))
    fake_arxiv.on("/oai", xml(OAI_LAST_PAGE), Response("overloaded", status=503))
    march = {"since": date(2016, 3, 1), "until": date(2016, 3, 31)}

    done = run(feed, **march)
    failed = run(feed, **march)

    assert done.status == IngestRun.Status.SUCCEEDED
    assert failed.status == IngestRun.Status.FAILED
    assert feed.next_run_at is None
    assert feed.last_success_at is None
    assert (feed.last_error, feed.last_error_at) == ("", None)
    assert feed.harvested_until == date(2026, 6, 1)


def test_an_oai_backfill_with_only_until_starts_at_the_beginning(fake_arxiv):
    """Like the API's (1991), not at the checkpoint, which is after --until."""
    fake_arxiv.on("/oai", xml(OAI_LAST_PAGE))
    feed = source("oai", category="cs", harvested_until=date(2026, 6, 1))

    run(feed, until=date(2016, 3, 31))

    assert fake_arxiv.params("/oai")[0] == {
        "verb": "ListRecords",
        "metadataPrefix": "arXivRaw",
        "until": "2016-03-31",
        "set": "cs",
    }


@pytest.mark.parametrize(
    ("kind", "fields", "refused"),
    [
        ("listing", {"category": "cs.AI"}, True),
        ("api_query", {"query": "2401.00001 astro-ph/0601001"}, True),
        ("api_query", {"query": "ti:agent"}, False),
        ("oai", {"category": "cs"}, False),
    ],
)
def test_only_searches_and_harvests_can_backfill(kind, fields, refused):
    assert bool(backfill_refusal(source(kind, **fields))) is refused


def test_a_failed_run_is_retried_soon_and_then_less_often(fake_arxiv, settings):
    """arXiv's listing holds only the latest announcement: waiting for the next
    weekday's slot would lose the day that failed."""
    settings.MOMENTUM_HTTP_MAX_ATTEMPTS = 1
    fake_arxiv.on("/atom/cs.AI", Response("down", status=503))
    feed = source("listing", category="cs.AI")

    waits = []
    for failures in (1, 2):
        before = timezone.now()
        result = run(feed)
        after = timezone.now()
        assert result.status == IngestRun.Status.FAILED
        earliest = next_retry_after("listing", before, failures=failures)
        latest = next_retry_after("listing", after, failures=failures)
        assert earliest <= feed.next_run_at <= latest
        waits.append(feed.next_run_at - after)

    assert waits[0] <= timedelta(minutes=10)
    assert waits[1] > waits[0]


def test_a_success_ends_the_series_of_failures(fake_arxiv, settings):
    settings.MOMENTUM_HTTP_MAX_ATTEMPTS = 1
    down = Response("down", status=503)
    fake_arxiv.on("/atom/cs.AI", down, down, xml(EMPTY_LISTING), down)
    feed = source("listing", category="cs.AI")
    run(feed)
    run(feed)
    run(feed)

    before = timezone.now()
    run(feed)

    assert feed.next_run_at <= next_retry_after("listing", timezone.now(), failures=1)
    assert feed.next_run_at >= next_retry_after("listing", before, failures=1)


def test_a_source_held_by_a_live_claim_is_not_run(fake_arxiv):
    feed = source(
        "listing",
        category="stat",
        claimed_by="other-worker",
        claimed_until=timezone.now() + timedelta(minutes=5),
    )

    assert run_source(feed, owner="test-worker") is None
    assert fake_arxiv.requests == []
    assert IngestRun.objects.count() == 0


def test_an_expired_claim_is_taken_over(fake_arxiv):
    fake_arxiv.on("/atom/stat", xml(EMPTY_LISTING))
    feed = source(
        "listing",
        category="stat",
        claimed_by="dead-worker",
        claimed_until=timezone.now() - timedelta(seconds=1),
    )

    result = run(feed)

    assert result.status == IngestRun.Status.SUCCEEDED
    assert feed.claimed_by == ""


def test_beat_takes_due_sources_and_abandoned_ones_each_once():
    now = timezone.now()
    later = now + timedelta(days=1)
    due = source("listing", category="cs.AI", next_run_at=now - timedelta(minutes=1))
    abandoned = source(
        "oai",
        category="cs",
        next_run_at=later,
        claimed_by="dead-worker",
        claimed_until=now - timedelta(seconds=1),
    )
    source(
        "api_query",
        query="ti:agent",
        next_run_at=later,
        claimed_by="live-worker",
        claimed_until=now + timedelta(minutes=5),
    )
    FeedSource.objects.create(
        name="not due", kind="listing", category="cs.CL", next_run_at=later
    )
    FeedSource.objects.create(
        name="disabled",
        kind="listing",
        category="cs.LG",
        next_run_at=now,
        enabled=False,
    )

    assert sorted(take_due_sources(now)) == sorted([due.pk, abandoned.pk])
    assert take_due_sources(now) == []  # a beat firing twice takes nothing more
    abandoned.refresh_from_db()
    assert (abandoned.claimed_by, abandoned.claimed_until) == ("", None)
    assert abandoned.next_run_at == later


class TestBadInput:
    """Each bad input ends in a failed or partial run with a clear reason."""

    def test_html_error_page_instead_of_a_feed(self, fake_arxiv):
        fake_arxiv.on(
            "/atom/cs.AI",
            Response("<html><body>Down</body></html>", content_type="text/html"),
        )

        result = run(source("listing", category="cs.AI"))

        assert result.status == IngestRun.Status.FAILED
        assert "HTML" in result.message

    def test_truncated_xml(self, fake_arxiv):
        fake_arxiv.on("/atom/cs.AI", xml(TRUNCATED_LISTING))

        result = run(source("listing", category="cs.AI"))

        assert result.status == IngestRun.Status.FAILED
        assert Paper.objects.count() == 0

    def test_empty_feed_is_not_an_error(self, fake_arxiv):
        fake_arxiv.on("/atom/cs", xml(EMPTY_LISTING))

        result = run(source("listing", category="cs"))

        assert result.status == IngestRun.Status.SUCCEEDED
        assert "No papers" in result.message

    def test_entity_expansion_bomb(self, fake_arxiv):
        bomb = (
            '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
            '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
            '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>'
            '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><x>&lol3;</x></OAI-PMH>'
        )
        fake_arxiv.on("/oai", Response(bomb, content_type="text/xml"))

        result = run(source("oai", category="cs"))

        assert result.status == IngestRun.Status.FAILED
        assert "DTD" in result.message or "entit" in result.message.lower()

    def test_wrong_encoding(self, fake_arxiv):
        # A real page re-encoded as UTF-16 while still declaring UTF-8.
        body = OAI_LAST_PAGE.read_text().encode("utf-16")
        fake_arxiv.on("/oai", Response(body, content_type="text/xml"))

        result = run(source("oai", category="cs"))

        assert result.status == IngestRun.Status.FAILED
        assert result.message

    def test_entry_without_id_same_entry_twice_and_a_huge_field(self, fake_arxiv):
        """GIVEN a real listing edited three ways: one entry loses its id, one gets
        a 2 MB title, and one appears twice
        WHEN it is ingested
        THEN the first two are rejected with reasons, the twin stored once, the
        rest stored."""
        head, *entries = STAT_LISTING.read_text().split("<item>")
        entries[0] = re.sub(r"<(guid|link)[^>]*>[^<]*</\1>|arXiv:\S+", "", entries[0])
        entries[1] = entries[1].replace("<title>", "<title>" + "x" * 2_000_000, 1)
        entries.insert(3, entries[2])
        body = head + "".join("<item>" + entry for entry in entries)
        fake_arxiv.on("/atom/stat", Response(body, content_type="application/rss+xml"))

        result = run(source("listing", category="stat"))

        reasons = " | ".join(error["message"] for error in result.errors)
        assert result.status == IngestRun.Status.PARTIAL
        assert result.rejected_count == 2
        assert "title is 2,0" in reasons
        assert result.fetched_count == len(entries)
        assert Paper.objects.count() == result.new_count == len(entries) - 3

    def test_dates_in_the_future_or_missing(self, fake_arxiv):
        """GIVEN a real API page with one entry dated 2999, one with no dates, one
        whose first version's date is unreadable (its update's date is fine) and
        one whose date is before the year 1 in UTC
        THEN all four are rejected with the reason, the other six stored."""
        page = TESTING_PAGES[0].read_text()
        head, *entries = page.split("<entry>")
        entries[0] = re.sub(r"<published>\d{4}", "<published>2999", entries[0])
        entries[1] = re.sub(r"<(published|updated)>[^<]*</\1>", "", entries[1])
        entries[2] = re.sub(
            r"<published>[^<]*</published>",
            "<published>31/02/26</published>",
            entries[2],
        )
        # Before the year 1 in UTC: an OverflowError failed the whole page.
        entries[3] = re.sub(
            r"<published>[^<]*</published>",
            "<published>0001-01-01T00:30:00+01:00</published>",
            entries[3],
        )
        body = head + "".join("<entry>" + entry for entry in entries)
        fake_arxiv.on("/api/query", api_pages({0: body.encode()}))

        result = run(source("api_query", query="id_list"), since=date(2020, 1, 1))

        reasons = [error["message"] for error in result.errors]
        assert result.status == IngestRun.Status.PARTIAL
        assert any(reason.startswith("date in the future: 2999") for reason in reasons)
        missing = "no date of the first version (missing or unreadable)"
        assert reasons.count(missing) == 3
        assert Paper.objects.count() == 6
        assert not Paper.objects.filter(first_announced__isnull=True).exists()


SNAPSHOT_HEAD = "arxivSpider_mnbvc_arxiv-metadata-oai-snapshot_head200.jsonl"


@pytest.mark.parametrize("harvest_first", [True, False])
def test_a_papers_primary_category_does_not_hang_on_which_format_came_first(
    fake_arxiv, harvest_first
):
    """0704.0098 in the saved OAI page and in the snapshot's first lines: the
    snapshot's categories, sorted, name no primary; OAI-PMH's do (cs.IT)."""

    def harvest() -> None:
        fake_arxiv.on("/oai", xml(OAI_FIRST_PAGE), xml(OAI_LAST_PAGE))
        run(source("oai", category="cs", harvested_until=date(2016, 3, 1)))

    def snapshot() -> None:
        ingest_path(FIXTURES / "kaggle_jsonl" / SNAPSHOT_HEAD)

    for ingest in (harvest, snapshot) if harvest_first else (snapshot, harvest):
        ingest()

    assert Paper.objects.get(arxiv_id="0704.0098").primary_category.code == "cs.IT"
