"""What every list of papers shows (home, feed, topic page, search, saved): rows
the keyboard moves through, chips that say why a paper is in each topic (at most
three, then "+N"), affiliations where known and the abstract drawer, in a
bounded number of queries that read a bounded number of rows, however many
authors a paper has."""

from __future__ import annotations

import html as entities
import re
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from papers.ingest.runs import ingest_path
from papers.ingest.upsert import upsert_records
from papers.models import IngestRun
from papers.models import Paper
from papers.models import SavedPaper
from tests.papers.factories import collaboration
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from tests.visible import visible_text
from topics.curation import pin_paper
from topics.models import Follow
from topics.models import PaperTopic
from topics.tagging import IngestTagger
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db

# A page rendered anew (its rows too); served from the cache it costs 2 or 3.
MAX_PAGE_QUERIES = 12
API_ATOM = Path(__file__).parent / "fixtures" / "arxiv" / "api_atom"
LISTS = ["/", "/topics/agents/", "/search/?q=agent", "/saved/"]


@pytest.fixture
def corpus(db):
    """30 papers, each in five topics by their rules."""
    agents = make_topic("Agents", rule="ti:agent", slug="agents")
    for name in ["Benchmarks", "Memory", "Planning", "Tools"]:
        make_topic(name, rule=f"ti:agent AND abs:{name.lower()}")
    records = [
        paper_record(
            f"2606.{n:05d}",
            title=f"Agent study {n}",
            abstract="Agents with benchmarks, memory, planning and tools.",
        )
        for n in range(1, 31)
    ]
    tag_papers(upsert_records(records).changed_ids)
    return agents


@pytest.fixture
def reader(reader, alice, corpus) -> Client:
    """alice's client; she follows Agents and has saved every paper."""
    Follow.objects.create(user=alice, topic=corpus)
    SavedPaper.objects.bulk_create(
        SavedPaper(user=alice, paper=paper) for paper in Paper.objects.all()
    )
    return reader


def row(html: str, arxiv_id: str = "") -> str:
    """The paper's row (by default, the first row)."""
    paper = re.escape(arxiv_id) if arxiv_id else '[^"]+'
    return re.search(
        rf'<article[^>]*data-paper="{paper}".*?</article>', html, re.S
    ).group()


def chips(html: str) -> list[tuple[str, str]]:
    """(title, text) of each chip in the first chip list of this HTML."""
    found = re.search(r'<ul class="chips".*?</ul>', html, re.S).group()
    return [
        (entities.unescape(title), re.sub(r"<[^>]+>", "", text))
        for title, text in re.findall(r'title="([^"]*)">(.*?)</a>', found, re.S)
    ]


def test_chips_say_why_the_paper_is_in_each_topic(client, db):
    agents = make_topic("Agents", rule='ti:agent OR abs:"tool use"', slug="agents")
    curated = make_topic("Curated", rule="ti:nothing")
    robots = make_topic("Robots", rule="ti:robot")
    upsert_records([paper_record(abstract="Tool use by agents.")])
    paper = Paper.objects.get()
    tag_papers([paper.pk])
    pin_paper(curated, paper)
    PaperTopic.objects.create(
        topic=robots, paper=paper, source=PaperTopic.Source.MODEL, score=0.913
    )

    html = row(client.get("/").text, paper.arxiv_id)

    assert chips(html) == [
        ('Matched ti:agent, abs:"tool use"', "Agents"),
        ("Pinned by a curator", "Curated"),
        ("Suggested by the model, score 0.91", "Robots"),
    ]
    assert f'href="{agents.get_absolute_url()}"' in html


def test_a_row_shows_three_chips_then_the_rest_as_a_count_linked_to_the_paper(
    client, corpus
):
    html = row(client.get("/search/?q=agent").text)
    arxiv_id = re.search(r'data-paper="([^"]+)"', html).group(1)
    listed = chips(html)

    assert [text for _, text in listed] == [
        "Agents",
        "Benchmarks",
        "Memory",
        "+2 more topics",
    ]
    assert listed[-1][0] == "Also in Planning, Tools"
    assert f'href="/papers/{arxiv_id}/#topics"' in html
    # The side panel, which has the room, shows them all, each with why in
    # words (a phone has no hover): site.js copies them from the row's drawer.
    panel = re.search(r'<div class="panel-source">.*?</div>', html, re.S).group()
    reasons = re.findall(r'<span class="reason">(.*?)</span>', panel, re.S)
    assert [re.sub(r"<[^>]+>", "", reason) for reason in reasons] == [
        "matched agent in the title",
        *(
            f"matched agent in the title, {word} in the abstract"
            for word in ["benchmarks", "memory", "planning", "tools"]
        ),
    ]


def test_on_a_topic_page_that_topics_chip_comes_first(client, corpus):
    html = row(client.get("/topics/tools/").text)

    assert [text for _, text in chips(html)][:3] == ["Tools", "Agents", "Benchmarks"]


def test_rows_show_affiliations_of_papers_ingested_from_the_api(client, db):
    topic = make_topic("Hot Jupiters", rule="ti:jupiters", slug="hot-jupiters")
    run = ingest_path(
        API_ATOM / "arxiv.py_id_astro-ph_0601001_s0_m100_3150dca9dc76.atom.xml",
        tagger=IngestTagger(),
    )
    assert run.status == IngestRun.Status.SUCCEEDED

    for address in [topic.get_absolute_url(), "/search/?q=jupiters", "/"]:
        html = row(client.get(address).text, "astro-ph/0601001")
        affiliations = re.search(r'<p class="meta affiliations">(.*?)</p>', html, re.S)
        names = re.sub(r"<[^>]+>", "", affiliations.group(1)).strip()
        assert names == "Ohio State, CfA, Warsaw University Observatory", address


def test_a_row_without_affiliations_shows_none(client, corpus):
    assert "affiliations" not in row(client.get("/").text)


@pytest.mark.parametrize("address", LISTS)
def test_every_list_is_one_the_keyboard_moves_through_with_abstract_drawers(
    reader, address
):
    html = reader.get(address).text

    listing = re.search(r"<section[^>]*data-paper-list.*?</section>", html, re.S)
    assert listing.group().count("data-paper=") == 25
    drawer = re.search(r'<details class="drawer">.*?</details>', row(html), re.S)
    assert "<summary>Abstract</summary>" in drawer.group()
    assert "Agents with benchmarks, memory, planning and tools." in drawer.group()
    assert 'id="paper-panel"' in html


@pytest.mark.parametrize("address", LISTS)
def test_lists_cost_a_bounded_number_of_queries_whatever_the_chips(
    reader, address, django_assert_max_num_queries
):
    # The feed also reads the reader's saved searches and whether a model
    # ranks for them, with what they follow.
    budget = MAX_PAGE_QUERIES + (2 if address == "/" else 0)
    with django_assert_max_num_queries(budget):
        response = reader.get(address)

    assert response.status_code == 200
    assert response.text.count('class="chip more"') == 25


def test_the_home_page_for_visitors_costs_a_bounded_number_of_queries(
    client, corpus, django_assert_max_num_queries
):
    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        assert client.get("/").text.count('class="chip more"') == 25


def rows_read(address: str, client: Client) -> list[int]:
    """The rows each query of a request to this address returned."""
    counts: list[int] = []

    def count(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        result = execute(sql, params, many, context)
        counts.append(context["cursor"].rowcount)
        return result

    with connection.execute_wrapper(count):
        assert client.get(address).status_code == 200
    return counts


def test_a_large_collaborations_rows_read_a_bounded_number_of_authors(
    client, db, django_assert_max_num_queries
):
    """25 papers of 300 authors each (7,500 author places) listed cold: the
    rows read the authors and affiliations they show, not all of them."""
    upsert_records(collaboration(25, 300))

    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        counts = rows_read("/", client)

    # Each paper with its tags, 12 authors and 6 affiliations: not all 7,500
    # authors, as a row read them before.
    assert max(counts) == 25 * 12
    assert sum(counts) <= 25 * (1 + 1 + 12 + 6)


def test_a_large_collaborations_row_shows_its_first_authors_and_how_many_more(
    client, db
):
    upsert_records(collaboration(1, 300))

    html = row(client.get("/").text)

    meta = re.search(r'<p class="meta">\s*<time.*?</p>', html, re.S).group()
    drawer = re.search(r"<p><a href=.*?</p>", html, re.S).group()
    assert re.findall(r">([^<]+)</a>", meta) == ["Spokesperson", "Deputy", "Member 2"]
    assert visible_text(meta).endswith("Member 2 +297 more")
    assert re.findall(r">([^<]+)</a>", drawer) == [
        "Spokesperson",
        "Deputy",
        *[f"Member {k}" for k in range(2, 12)],
    ]
    assert visible_text(drawer).endswith("Member 11 +288 more")
    # Alpha, Zeta and Labs 0 to 19: 22 affiliations, in the order first given.
    shown = re.findall(r'<p class="meta(?: affiliations)?">(<span>.*?)</p>', html, re.S)
    assert [re.findall(r"<span>([^<]+)</span>", p) for p in shown] == [
        ["Alpha Lab", "Zeta Lab", "Lab 2"],
        ["Alpha Lab", "Zeta Lab", "Lab 2", "Lab 3", "Lab 4", "Lab 5"],
    ]
    assert visible_text(shown[0]).endswith("Lab 2 +19 more")
    assert visible_text(shown[1]).endswith("Lab 5 +16 more")


def test_a_large_collaborations_page_exports_and_api_give_every_author(client, alice):
    upsert_records(collaboration(1, 300))
    client.force_login(alice)
    SavedPaper.objects.create(user=alice, paper=Paper.objects.get())
    everyone = ["Spokesperson", "Deputy", *[f"Member {k}" for k in range(2, 300)]]

    page = client.get("/papers/2606.00001/").text
    detail = client.get("/api/v1/papers/2606.00001/").json()
    bibtex = b"".join(client.get("/saved/bibtex/").streaming_content).decode()
    listed = client.get("/api/v1/papers/").json()["results"][0]

    # The first 25 listed, the rest folded below them.
    authors = "".join(re.findall(r'<ol class="authors".*?</ol>', page, re.S))
    assert re.findall(r'">([^<]+)</a>', authors) == everyone
    assert [author["name"] for author in detail["authors"]] == everyone
    assert listed["authors"] == everyone
    assert bibtex.count(" and ") == 299
    assert "Member 299" in bibtex


def test_a_large_collaborations_paper_page_shows_its_abstract_before_every_author(
    client, db
):
    """A paper of 300 authors lists the first of them, then the rest behind
    "All 300 authors", so that its abstract is not screens below its title;
    every name stays in the page (find in page, search engines)."""
    upsert_records(collaboration(1, 300))
    page = client.get("/papers/2606.00001/").text

    shown, _, folded = page.partition('<details class="all-authors">')
    assert "Spokesperson" in shown
    assert "Member 24</a>" in shown
    assert "Member 25</a>" not in shown
    assert "<summary>All 300 authors</summary>" in folded
    assert all(f"Member {k}</a>" in folded for k in range(25, 300))
    assert 'Deputy</a> <span class="meta">(Alpha Lab; Zeta Lab)</span>' in shown


def test_a_paper_of_few_authors_lists_them_all(client, db):
    upsert_records(collaboration(1, 25))
    page = client.get("/papers/2606.00001/").text

    assert "all-authors" not in page
    assert "Member 24</a>" in page


def test_a_paper_without_an_abstract_says_so_on_its_page_and_in_its_row(client, db):
    # arXiv has a few: the page's "Abstract" heading and the row's drawer stood
    # over an empty paragraph.
    make_topic("Walks", rule="ti:walks", slug="walks")
    records = [paper_record("2606.00081", title="Quantum walks", abstract="")]
    tag_papers(upsert_records(records).changed_ids)

    page = client.get("/papers/2606.00081/").text
    topic = client.get("/topics/walks/").text

    for shown in (page, topic):
        assert '<p class="abstract"></p>' not in shown
        assert '<p class="meta">No abstract on arXiv.</p>' in shown
