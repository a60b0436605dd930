"""Papers and their feed sources in admin: "Run now" says what it did; a
paper is found by its arXiv id, and shown at a cost that does not grow."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from papers.ingest.upsert import upsert_records
from papers.models import Affiliation
from papers.models import Author
from papers.models import Category
from papers.models import FeedSource
from papers.models import IngestRun
from papers.models import Paper
from tests.fakearxiv import xml
from tests.papers.factories import paper_record
from tests.papers.test_harvest import EMPTY_LISTING

pytestmark = pytest.mark.django_db


def run_now(client, source: FeedSource) -> str:
    response = client.post(
        "/admin/papers/feedsource/",
        {"action": "run_now", "_selected_action": [source.pk]},
        follow=True,
    )
    assert response.status_code == 200
    return response.text


def test_run_now_without_a_broker_says_the_sources_ran(
    admin_client, fake_arxiv, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    fake_arxiv.on("/atom/cs.AI", xml(EMPTY_LISTING))
    source = FeedSource.objects.create(name="cs.AI", kind="listing", category="cs.AI")

    page = run_now(admin_client, source)

    assert (
        'Ran 1 source(s) in this request: see <a href="/admin/papers/ingestrun/">'
        "their runs</a>." in page
    )
    assert "Queued" not in page
    assert IngestRun.objects.get().feed == source


def test_run_now_with_a_broker_says_the_sources_are_queued(
    admin_client, monkeypatch, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent = []

    def broker_takes(task, *args):  # a worker runs it later
        sent.append(args)
        return True

    monkeypatch.setattr("papers.admin.send", broker_takes)
    source = FeedSource.objects.create(name="cs.AI", kind="listing", category="cs.AI")

    page = run_now(admin_client, source)

    assert "Queued 1 source(s) to run now." in page
    assert sent == [(source.pk,)]


def test_a_search_for_an_arxiv_id_in_any_form_finds_its_paper(admin_client):
    """The search fields' LIKE scanned every paper three times (1.4-2.5 s at
    100,000) and found nothing for "arXiv:2606.00001v2"."""
    upsert_records([paper_record("2606.00001"), paper_record("2606.00002")])

    for text in ("arXiv:2606.00001v2", "https://arxiv.org/abs/2606.00001"):
        page = admin_client.get("/admin/papers/paper/", {"q": text}).text
        assert "2606.00001" in page
        assert "2606.00002" not in page


def test_the_list_shows_titles_as_the_site_does_not_as_tex(admin_client):
    """ "for Every Dimension $n\\geq 4$", as arXiv writes it, read as TeX."""
    upsert_records([paper_record("2606.00001", title=r"Every Dimension $n\geq 4$")])

    page = admin_client.get("/admin/papers/paper/").text

    assert "Every Dimension n≥ 4" in page
    assert r"\geq" not in page


@pytest.mark.parametrize("text", ["2606.00001", "hep-th/9901001"])
def test_a_whole_arxiv_id_is_looked_up_not_matched_as_a_start(admin_client, text):
    """A curator pasting an id met a LIKE over every paper, which the date
    hierarchy's two queries repeated (0.7 s at 100,000 papers): no other id
    starts with a whole one."""
    upsert_records([paper_record(text), paper_record("2606.00002")])

    with CaptureQueriesContext(connection) as captured:
        page = admin_client.get("/admin/papers/paper/", {"q": text})

    assert text in page.text
    assert "2606.00002" not in page.text
    assert not [query for query in captured if " LIKE " in query["sql"]]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("planned agents", {"2606.00001"}),  # stemmed, as the site's search
        ("Hopper", {"2606.00002"}),  # an author
        ("2606.0000", {"2606.00001", "2606.00002"}),  # the start of an id
        ("2606.00003", set()),  # an id not held
    ],
)
def test_papers_are_searched_by_words_through_the_search_index(
    admin_client, text, found
):
    """Not by LIKE over titles and authors, which read every paper three times
    (0.4-1.1 s a search at 100,000 papers)."""
    upsert_records(
        [
            paper_record("2606.00001", title="Planning agents"),
            paper_record("2606.00002", title="Robots", authors=("Grace Hopper",)),
        ]
    )

    with CaptureQueriesContext(connection) as captured:
        page = admin_client.get("/admin/papers/paper/", {"q": text})

    shown = {
        arxiv_id for arxiv_id in ("2606.00001", "2606.00002") if arxiv_id in page.text
    }
    assert shown == found
    assert not any("UPPER(" in query["sql"] for query in captured)


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="SQLite's LIKE uses no index"
)
def test_the_start_of_an_id_is_read_from_an_index(admin_client):
    """Each of the page's queries read every paper for "2607.1": the unique
    constraint's index is in the database's collation, which PostgreSQL cannot
    read a LIKE from, and the date hierarchy's first and last day were taken
    by reading papers in date order for the first whose id matched (at
    100,000 papers, a page for 1,000 matches took 0.70 s, 0.10 s after)."""
    upsert_records([paper_record("2606.00001"), paper_record("2606.00002")])

    with CaptureQueriesContext(connection) as captured:
        page = admin_client.get("/admin/papers/paper/", {"q": "2606.0000"})

    assert "2606.00001" in page.text
    starts = [query["sql"] for query in captured if " LIKE " in query["sql"]]
    assert starts
    with connection.cursor() as cursor:
        # What the planner would take at any size: at two papers it reads all.
        cursor.execute("SET LOCAL enable_seqscan = off")
        for sql in starts:
            cursor.execute(f"EXPLAIN {sql}")
            plan = "\n".join(row[0] for row in cursor.fetchall())
            assert "paper_arxiv_id_start_idx" in plan, plan
            assert "paper_announced_idx" not in plan, plan


def test_a_papers_page_shows_its_authors_at_a_cost_that_does_not_grow(admin_client):
    """A paper of 572 authors ran 2,291 queries for a page of widgets no one may
    use (papers are ingest's)."""

    def queries(authors: int) -> int:
        arxiv_id = f"2606.{authors:05d}"
        names = tuple(f"Author {n} Name" for n in range(authors))
        upsert_records([paper_record(arxiv_id, authors=names)])
        url = f"/admin/papers/paper/{Paper.objects.get(arxiv_id=arxiv_id).pk}/change/"
        with CaptureQueriesContext(connection) as captured:
            page = admin_client.get(url)
        assert page.status_code == 200
        assert f"Author {authors - 1} Name" in page.text
        return len(captured)

    queries(2)  # the first request's own look-ups
    assert queries(3) == queries(40)


def test_a_papers_authors_are_a_list_not_a_form_row_each(admin_client):
    """A paper of 572 authors made a 651 KB page: a read-only form row of
    about 1.1 KB per author. They are listed, in order, with each author's
    affiliations on this paper."""

    def page(authors: int) -> str:
        arxiv_id = f"2606.{authors:05d}"
        names = tuple(f"Author {n} Name" for n in range(authors))
        upsert_records([paper_record(arxiv_id, authors=names)])
        paper = Paper.objects.get(arxiv_id=arxiv_id)
        first = paper.authorships.get(position=0)
        first.affiliations.add(Affiliation.objects.get_or_create(name="Inria & ENS")[0])
        response = admin_client.get(f"/admin/papers/paper/{paper.pk}/change/")
        assert response.status_code == 200
        return response.text

    small, large = page(10), page(510)
    per_author = (len(large.encode()) - len(small.encode())) / 500
    assert per_author < 150
    items = re.findall(r"<li>(.*?)</li>", large.split('class="paper-authors"')[1])
    assert items[0] == "Author 0 Name (Inria &amp; ENS)"
    assert items[1:] == [f"Author {n} Name" for n in range(1, 510)]


def test_authors_and_categories_are_ingests_not_deleted_here(admin_client):
    """Papers hold on to them: "delete selected" over every author named each
    paper holding one, one query each (83,000 authors: 7.7 minutes) only to
    say that nothing could be deleted."""
    upsert_records([paper_record("2606.00001", authors=("Ada Lovelace",))])
    author = Author.objects.get()
    category = Category.objects.first()

    authors = admin_client.get("/admin/papers/author/")
    deleting = admin_client.post(
        "/admin/papers/author/",
        {"action": "delete_selected", "_selected_action": [author.pk]},
    )

    assert "delete_selected" not in authors.text
    assert "Are you sure" not in deleting.text  # no such action here
    assert Author.objects.exists()
    for url in (
        f"/admin/papers/author/{author.pk}/delete/",
        f"/admin/papers/category/{category.pk}/delete/",
    ):
        assert admin_client.get(url).status_code == 403
