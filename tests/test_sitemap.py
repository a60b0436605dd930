"""The sitemap: an index at /sitemap.xml of every page of its sections (the
start pages, active topics, papers, authors), each address on MOMENTUM_SITE_URL,
each page read in as many queries however many papers there are."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from math import ceil
from xml.etree import ElementTree

import pytest
from django.db import connection
from django.db import transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from papers.ingest.runs import ingest_entries
from papers.ingest.upsert import upsert_records
from papers.models import Author
from papers.models import IngestRun
from papers.models import PageDate
from papers.models import Paper
from papers.sitemaps import AuthorSitemap
from papers.sitemaps import PaperSitemap
from tests.papers.factories import paper_record
from tests.sqlite_run import run_module_on_sqlite
from tests.topics.factories import make_topic
from topics.curation import exclude_paper
from topics.curation import pin_paper
from topics.curation import unpin_paper
from topics.models import PaperTopic
from topics.models import Topic
from topics.models import TopicDate
from topics.tagging import IngestTagger
from topics.tagging import retag_topics

POSTGRESQL = connection.vendor == "postgresql"
SITE = "https://momentum.example.org"
NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
# A section's page: the highest id and the page's rows (and, once a process,
# the Sites record Django's view reads). The index: each section's newest
# change and number of pages (the topics' newest in three).
MAX_QUERIES = {"/sitemap.xml": 8, "/sitemap-papers.xml": 2, "/sitemap-authors.xml": 2}


@pytest.fixture(autouse=True)
def site(settings):
    """A site address unlike the test client's host (testserver), so that
    every address shown must come from it."""
    settings.MOMENTUM_SITE_URL = SITE


def entries(client, path: str) -> dict[str, str | None]:
    """Each <loc> of a sitemap or an index, with its <lastmod>."""
    response = client.get(path)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/xml"
    root = ElementTree.fromstring(response.content)
    return {
        entry.findtext("sm:loc", namespaces=NS): entry.findtext(
            "sm:lastmod", namespaces=NS
        )
        for entry in root
    }


def pages_of(model, per_page: int) -> int:
    return ceil(model.objects.count() / per_page)


def test_the_index_lists_every_page_of_each_section_on_the_sites_address(
    client, corpus
):
    listed = entries(client, "/sitemap.xml")

    papers = [f"{SITE}/sitemap-papers.xml"] + [
        f"{SITE}/sitemap-papers.xml?p={n}"
        for n in range(2, pages_of(Paper, PaperSitemap.limit) + 1)
    ]
    authors = [f"{SITE}/sitemap-authors.xml"] + [
        f"{SITE}/sitemap-authors.xml?p={n}"
        for n in range(2, pages_of(Author, AuthorSitemap.limit) + 1)
    ]
    assert list(listed) == [
        f"{SITE}/sitemap-pages.xml",
        f"{SITE}/sitemap-topics.xml",
        *papers,
        *authors,
    ]
    # Each section's newest change (the pages' have no date).
    newest = Paper.objects.order_by("-modified_at").first().modified_at
    assert listed[papers[0]].startswith(newest.date().isoformat())
    assert listed[f"{SITE}/sitemap-pages.xml"] is None


def test_every_section_page_answers_with_addresses_on_the_site(client, corpus):
    for index_entry in entries(client, "/sitemap.xml"):
        path = index_entry.removeprefix(SITE)
        listed = entries(client, path)

        assert listed
        assert all(loc.startswith(f"{SITE}/") for loc in listed), path


def test_the_start_pages(client, db):
    assert list(entries(client, "/sitemap-pages.xml")) == [
        f"{SITE}/",
        f"{SITE}/topics/",
        f"{SITE}/topics/trending/",
    ]


def test_topics_are_the_active_ones_with_the_date_of_their_newest_change(
    client, corpus
):
    make_topic("Retired Topic", rule="ti:agent", is_active=False)
    agents, robots = corpus["agents"], corpus["robots"]
    # Papers last left either, or changed why they are in it, on Jun 30.
    TopicDate.objects.update(changed_at=datetime(2026, 6, 30, 12, tzinfo=UTC))
    # Edited on Jul 1; its newest paper joined Jul 20.
    Topic.objects.filter(pk=agents.pk).update(
        updated_at=datetime(2026, 7, 1, 12, tzinfo=UTC)
    )
    PaperTopic.objects.filter(topic=agents).update(
        created_at=datetime(2026, 7, 20, 12, tzinfo=UTC)
    )
    # Edited after its papers joined.
    PaperTopic.objects.filter(topic=robots).update(
        created_at=datetime(2026, 7, 2, 12, tzinfo=UTC)
    )
    Topic.objects.filter(pk=robots.pk).update(
        updated_at=datetime(2026, 7, 22, 12, tzinfo=UTC)
    )

    listed = entries(client, "/sitemap-topics.xml")

    assert listed == {
        f"{SITE}/topics/rl-for-llm-agents/": "2026-07-20",
        f"{SITE}/topics/robot-learning/": "2026-07-22",
    }


def test_a_topic_with_no_papers_has_the_date_it_was_edited(client, topic):
    Topic.objects.filter(pk=topic.pk).update(
        updated_at=datetime(2026, 7, 3, 12, tzinfo=UTC)
    )

    listed = entries(client, "/sitemap-topics.xml")

    assert listed == {f"{SITE}/topics/{topic.slug}/": "2026-07-03"}


def topic_lastmod(client, topic: Topic) -> str | None:
    return entries(client, "/sitemap-topics.xml")[f"{SITE}/topics/{topic.slug}/"]


def topics_written_long_ago() -> None:
    """Every topic last edited, and its papers last joined or left, on LONG_AGO."""
    Topic.objects.update(updated_at=LONG_AGO)
    PaperTopic.objects.update(created_at=LONG_AGO)
    TopicDate.objects.update(changed_at=LONG_AGO)


def test_a_topic_a_paper_leaves_is_dated_by_it(
    client, corpus, django_capture_on_commit_callbacks
):
    """Its page lists one paper fewer: unpinned, excluded, or no longer
    matched by its rule."""
    agents, robots = corpus["agents"], corpus["robots"]
    paper = Paper.objects.get(arxiv_id="2606.00100")  # an agent and a robot
    today = timezone.now().date().isoformat()
    with django_capture_on_commit_callbacks(execute=True):
        pin_paper(robots, Paper.objects.get(arxiv_id="2606.00001"))
    topics_written_long_ago()

    with django_capture_on_commit_callbacks(execute=True):
        unpin_paper(robots, Paper.objects.get(arxiv_id="2606.00001"))

    assert topic_lastmod(client, robots) == today
    assert topic_lastmod(client, agents) == LONG_AGO.date().isoformat()
    topics_written_long_ago()

    with django_capture_on_commit_callbacks(execute=True):
        exclude_paper(agents, paper)

    assert topic_lastmod(client, agents) == today
    assert topic_lastmod(client, robots) == LONG_AGO.date().isoformat()
    topics_written_long_ago()

    Topic.objects.filter(pk=robots.pk).update(rule="ti:nothing")
    with django_capture_on_commit_callbacks(execute=True):
        retag_topics([Topic.objects.get(pk=robots.pk)])

    assert not PaperTopic.objects.filter(topic=robots).exists()
    assert topic_lastmod(client, robots) == today
    # The index's newest change of the section is it too.
    index = entries(client, "/sitemap.xml")
    assert index[f"{SITE}/sitemap-topics.xml"].startswith(today)


def test_papers_are_paged_by_ids_with_the_date_of_their_last_change(
    client, corpus, monkeypatch
):
    papers = list(Paper.objects.order_by("pk"))
    *earlier, last = papers
    # Two pages: every paper but the newest stored, and the newest.
    monkeypatch.setattr(PaperSitemap, "limit", len(earlier))
    Paper.objects.filter(pk=last.pk).update(
        modified_at=datetime(2026, 7, 9, 12, tzinfo=UTC)
    )

    first = entries(client, "/sitemap-papers.xml")
    second = entries(client, "/sitemap-papers.xml?p=2")

    assert list(first) == [f"{SITE}/papers/{p.arxiv_id}/" for p in earlier]
    assert {first[f"{SITE}/papers/{p.arxiv_id}/"] for p in earlier} == {
        p.modified_at.date().isoformat() for p in earlier
    }
    assert second == {f"{SITE}/papers/{last.arxiv_id}/": "2026-07-09"}
    assert client.get("/sitemap-papers.xml?p=3").status_code == 404
    assert client.get("/sitemap-papers.xml?p=x").status_code == 404


def test_pages_are_full_however_far_apart_the_ids(client, db, monkeypatch):
    """Ids are not dense (a sequence moves on every upsert, rows are deleted):
    pages by ranges of ids came out empty, the first of them in a database
    whose ids start high."""
    upsert_records([paper_record(f"2606.{n:05d}") for n in range(1, 8)])
    papers = list(Paper.objects.order_by("pk"))
    Paper.objects.filter(pk__in=[p.pk for p in papers[1:5]]).delete()
    kept = [papers[0], *papers[5:]]
    monkeypatch.setattr(PaperSitemap, "limit", 2)

    index = entries(client, "/sitemap.xml")
    pages = [entries(client, "/sitemap-papers.xml?p=1")]
    pages.append(entries(client, "/sitemap-papers.xml?p=2"))

    assert f"{SITE}/sitemap-papers.xml?p=2" in index
    assert f"{SITE}/sitemap-papers.xml?p=3" not in index
    assert [len(page) for page in pages] == [2, 1]
    assert [loc for page in pages for loc in page] == [
        f"{SITE}/papers/{paper.arxiv_id}/" for paper in kept
    ]


def test_an_old_style_id_is_its_pages_address(client, corpus):
    listed = entries(client, "/sitemap-papers.xml")

    assert f"{SITE}/papers/math/0601001/" in listed


def test_authors_of_papers_held_with_their_newest_papers_date(client, db):
    upsert_records(
        [
            paper_record("2606.00001", authors=("Ada Lovelace", "Alan Turing")),
            paper_record("2606.00002", authors=("Ada Lovelace",)),
        ]
    )
    Paper.objects.filter(arxiv_id="2606.00001").update(
        modified_at=datetime(2026, 7, 1, 12, tzinfo=UTC)
    )
    Paper.objects.filter(arxiv_id="2606.00002").update(
        modified_at=datetime(2026, 7, 5, 12, tzinfo=UTC)
    )
    no_papers = Author.objects.create(name="Grace Hopper")
    ada, alan = (
        Author.objects.get(name="Ada Lovelace"),
        Author.objects.get(name="Alan Turing"),
    )

    listed = entries(client, "/sitemap-authors.xml")

    assert listed == {
        f"{SITE}/authors/{ada.pk}/": "2026-07-05",
        f"{SITE}/authors/{alan.pk}/": "2026-07-01",
    }
    assert f"{SITE}/authors/{no_papers.pk}/" not in listed


LONG_AGO = datetime(2026, 1, 5, 12, tzinfo=UTC)


def written_long_ago() -> None:
    """Every paper's row and page last changed on LONG_AGO."""
    Paper.objects.update(modified_at=LONG_AGO)
    PageDate.objects.update(changed_at=LONG_AGO)


def paper_lastmod(client, paper: Paper) -> str | None:
    return entries(client, "/sitemap-papers.xml")[f"{SITE}/papers/{paper.arxiv_id}/"]


def test_a_paper_put_in_a_topic_or_taken_out_is_dated_by_it(
    client, corpus, django_capture_on_commit_callbacks
):
    """Its page lists its topics, and why it is in each."""
    paper = Paper.objects.get(arxiv_id="2606.00001")
    today = timezone.now().date().isoformat()
    written_long_ago()

    with django_capture_on_commit_callbacks(execute=True):
        pin_paper(corpus["robots"], paper)

    assert paper_lastmod(client, paper) == today
    written_long_ago()

    with django_capture_on_commit_callbacks(execute=True):
        exclude_paper(corpus["agents"], paper)

    assert paper_lastmod(client, paper) == today
    # The index's newest change of the section is it too.
    index = entries(client, "/sitemap.xml")
    assert index[f"{SITE}/sitemap-papers.xml"].startswith(today)


def test_a_paper_a_topics_rule_takes_in_or_out_is_dated_by_it(
    client, corpus, django_capture_on_commit_callbacks
):
    robots = corpus["robots"]
    paper = Paper.objects.get(arxiv_id="2606.00001")
    untouched = Paper.objects.get(arxiv_id="2606.00002")
    written_long_ago()

    Topic.objects.filter(pk=robots.pk).update(rule='ti:"Agent 1"')
    with django_capture_on_commit_callbacks(execute=True):
        retag_topics([Topic.objects.get(pk=robots.pk)])

    assert paper_lastmod(client, paper) == timezone.now().date().isoformat()
    assert paper_lastmod(client, untouched) == LONG_AGO.date().isoformat()


def test_papers_in_a_renamed_topic_are_dated_by_it(
    client, corpus, django_capture_on_commit_callbacks
):
    """Their pages show its name."""
    agents = corpus["agents"]
    inside = Paper.objects.get(arxiv_id="2606.00001")
    outside = Paper.objects.get(arxiv_id="math/0601001")
    written_long_ago()

    agents.name = "Agents"
    with django_capture_on_commit_callbacks(execute=True):
        agents.save()

    assert paper_lastmod(client, inside) == timezone.now().date().isoformat()
    assert paper_lastmod(client, outside) == LONG_AGO.date().isoformat()


def test_a_corrected_name_dates_its_papers_and_its_co_authors(
    client, db, django_capture_on_commit_callbacks
):
    """Pages show their authors' names; an author's page, their co-authors'."""
    upsert_records(
        [
            paper_record("2606.00001", authors=("Ada Lovelace", "Alan Turnig")),
            paper_record("2606.00002", authors=("Grace Hopper",)),
        ]
    )
    written_long_ago()
    today = timezone.now().date().isoformat()
    alan = Author.objects.get(name="Alan Turnig")
    ada, grace = (
        Author.objects.get(name="Ada Lovelace"),
        Author.objects.get(name="Grace Hopper"),
    )

    alan.name = "Alan Turing"
    with django_capture_on_commit_callbacks(execute=True):
        alan.save()

    assert paper_lastmod(client, Paper.objects.get(arxiv_id="2606.00001")) == today
    assert paper_lastmod(client, Paper.objects.get(arxiv_id="2606.00002")) == (
        LONG_AGO.date().isoformat()
    )
    authors = entries(client, "/sitemap-authors.xml")
    assert authors[f"{SITE}/authors/{ada.pk}/"] == today
    assert authors[f"{SITE}/authors/{grace.pk}/"] == LONG_AGO.date().isoformat()


def test_a_paper_is_dated_with_the_change_not_after_it(client, corpus):
    """The date is written in the change's transaction: there when it commits
    (no callback left to run, which a process ending could lose), and gone
    with it when it rolls back."""
    paper = Paper.objects.get(arxiv_id="2606.00001")
    written_long_ago()

    def pin_then_fail() -> None:
        with transaction.atomic():
            pin_paper(corpus["robots"], paper)
            raise RuntimeError("the request failed after the pin")

    with pytest.raises(RuntimeError):
        pin_then_fail()

    assert paper_lastmod(client, paper) == LONG_AGO.date().isoformat()
    pin_paper(corpus["robots"], paper)  # its commit's callbacks never run here

    assert paper_lastmod(client, paper) == timezone.now().date().isoformat()


def test_an_ingest_dates_the_papers_it_tags_by_their_rows_alone(client, db):
    """They are the papers it wrote: modified_at dates them, and ingest, which
    holds their rows while it waits for tags, takes no PageDate a re-tag could
    hold (papers.versions.rows_written)."""
    upsert_records([paper_record("2606.00001", 1, title="A network")])
    make_topic("Nets", rule="ti:graph", slug="nets")
    written_long_ago()

    ingest_entries(
        IngestRun.objects.create(source="oai"),
        [paper_record("2606.00001", 2, title="A graph network")],
        tagger=IngestTagger(),
    )

    paper = Paper.objects.get(arxiv_id="2606.00001")
    assert PaperTopic.objects.filter(paper=paper).exists()
    assert not PageDate.objects.exists()
    assert paper_lastmod(client, paper) == timezone.now().date().isoformat()


def test_an_author_is_dated_by_a_new_paper_of_theirs(client, db):
    upsert_records([paper_record("2606.00001", authors=("Ada Lovelace",))])
    written_long_ago()
    ada = Author.objects.get(name="Ada Lovelace")

    upsert_records([paper_record("2606.00002", authors=("Ada Lovelace",))])

    authors = entries(client, "/sitemap-authors.xml")
    assert authors[f"{SITE}/authors/{ada.pk}/"] == timezone.now().date().isoformat()


def test_answers_may_be_kept_an_hour_by_any_cache(client, corpus):
    for path in ["/sitemap.xml", "/sitemap-papers.xml"]:
        response = client.get(path)

        assert "public" in response["Cache-Control"]
        assert "max-age=3600" in response["Cache-Control"]


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap.xml",
        "/sitemap-topics.xml",
        "/sitemap-papers.xml",
        "/sitemap-authors.xml",
    ],
)
def test_a_crawler_asking_again_is_told_not_modified_until_a_change(
    client, corpus, path, django_capture_on_commit_callbacks
):
    written_long_ago()
    topics_written_long_ago()
    first = client.get(path)
    etag, modified = first["ETag"], first["Last-Modified"]

    assert first.status_code == 200
    assert modified == "Mon, 05 Jan 2026 12:00:00 GMT"
    again = client.get(path, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    assert "max-age=3600" in again["Cache-Control"]
    assert client.get(path, HTTP_IF_MODIFIED_SINCE=modified).status_code == 304

    with django_capture_on_commit_callbacks(execute=True):
        pin_paper(corpus["robots"], Paper.objects.get(arxiv_id="2606.00001"))

    assert client.get(path, HTTP_IF_NONE_MATCH=etag).status_code == 200
    assert client.get(path, HTTP_IF_MODIFIED_SINCE=modified).status_code == 200


def test_the_start_pages_have_no_date_but_are_told_not_modified_by_their_tag(
    client, db
):
    etag = client.get("/sitemap-pages.xml")["ETag"]

    assert client.get("/sitemap-pages.xml", HTTP_IF_NONE_MATCH=etag).status_code == 304


@pytest.mark.parametrize("path", MAX_QUERIES)
def test_a_page_costs_as_many_queries_with_ten_times_the_papers(
    client, db, path, django_assert_max_num_queries
):
    def queries() -> int:
        client.get(path)  # the Sites record, once a process
        with (
            django_assert_max_num_queries(MAX_QUERIES[path]),
            CaptureQueriesContext(connection) as captured,
        ):
            assert client.get(path).status_code == 200
        return len(captured)

    upsert_records([paper_record(f"2606.{n:05d}") for n in range(1, 6)])
    few = queries()
    upsert_records(
        [
            paper_record(f"2606.{n:05d}", authors=(f"Author {n}", "Ada Lovelace"))
            for n in range(6, 56)
        ]
    )

    assert queries() == few


# On SQLite the suite ran this module already; from PostgreSQL it runs it there.
@pytest.mark.skipif(not POSTGRESQL, reason="the suite runs on SQLite")
@pytest.mark.sqlite
def test_this_module_passes_on_sqlite(tmp_path):
    result = run_module_on_sqlite(__file__, tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
