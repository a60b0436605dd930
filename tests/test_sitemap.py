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
from django.test.utils import CaptureQueriesContext

from papers.ingest.upsert import upsert_records
from papers.models import Author
from papers.models import Paper
from papers.sitemaps import AuthorSitemap
from papers.sitemaps import PaperSitemap
from tests.papers.factories import paper_record
from tests.sqlite_run import run_module_on_sqlite
from tests.topics.factories import make_topic
from topics.models import PaperTopic
from topics.models import Topic

POSTGRESQL = connection.vendor == "postgresql"
SITE = "https://momentum.example.org"
NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
# A section's page: the highest id and the page's rows (and, once a process,
# the Sites record Django's view reads). The index: each section's newest
# change and number of pages (the topics' newest in two).
MAX_QUERIES = {"/sitemap.xml": 7, "/sitemap-papers.xml": 2, "/sitemap-authors.xml": 2}


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


def test_answers_may_be_kept_an_hour_by_any_cache(client, corpus):
    for path in ["/sitemap.xml", "/sitemap-papers.xml"]:
        response = client.get(path)

        assert "public" in response["Cache-Control"]
        assert "max-age=3600" in response["Cache-Control"]


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
