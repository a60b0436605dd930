"""The search page: full-text search on PostgreSQL, filters, highlights, fallback."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from django.db import connection

from papers.ingest.upsert import upsert_records
from papers.models import Paper
from papers.search import excerpt
from papers.search import mark_terms
from papers.search import parse_terms
from papers.search import to_html
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.tagging import tag_papers

MAX_PAGE_QUERIES = 10
BASE_DIR = Path(__file__).resolve().parents[2]


def add_papers(*records) -> None:
    tag_papers(upsert_records(list(records)).changed_ids)


def announce(arxiv_id: str, day: date) -> None:
    Paper.objects.filter(arxiv_id=arxiv_id).update(first_announced=day)


def titles(response) -> list[str]:
    return [paper.title for paper in response.context["page"]]


@pytest.fixture
def corpus(db):
    """Papers on agents and robots in two topics, three categories and three months."""
    agents = make_topic("RL for LLM Agents", rule="ti:agent", slug="agents")
    make_topic("Robot Learning", rule="ti:robot", slug="robots")
    make_topic("Retired", rule="ti:retired", slug="retired", is_active=False)
    add_papers(
        paper_record(
            "2606.00001",
            title="Planning agents with language models",
            abstract="We study planning.",
            categories=("cs.AI",),
        ),
        paper_record(
            "2606.00002",
            title="A survey of planning",
            abstract="Language agents that plan with tool use.",
            categories=("cs.CL", "cs.LG"),
        ),
        paper_record(
            "2606.00003",
            title="Robot grasping with agents",
            abstract="Grasping robots learn from demonstrations.",
            authors=("Grace Hopper", "Barbara Liskov"),
            categories=("cs.RO", "cs.LG"),
        ),
        paper_record(
            "2606.00004",
            title="Tool use in robots",
            abstract="Robots use tools, and agents use robots.",
            categories=("cs.RO",),
        ),
    )
    announce("2606.00001", date(2026, 4, 10))
    announce("2606.00002", date(2026, 5, 10))
    announce("2606.00003", date(2026, 6, 10))
    announce("2606.00004", date(2026, 6, 20))
    return agents


@pytest.mark.django_db
def test_a_title_match_ranks_above_an_abstract_only_match(client, corpus):
    # The abstract-only match is the newer paper, so only rank puts the other first.
    response = client.get("/search/", {"q": "language"})

    assert response.status_code == 200
    assert titles(response) == [
        "Planning agents with language models",
        "A survey of planning",
    ]


@pytest.mark.django_db
def test_equal_ranks_list_the_newest_first(client, db):
    add_papers(
        paper_record("2606.00011", title="Twin paper"),
        paper_record("2606.00012", title="Twin paper"),
        paper_record("2606.00013", title="Twin paper"),
    )
    announce("2606.00011", date(2026, 6, 1))
    announce("2606.00012", date(2026, 6, 3))
    announce("2606.00013", date(2026, 6, 2))

    response = client.get("/search/", {"q": "twin"})

    assert [paper.arxiv_id for paper in response.context["page"]] == [
        "2606.00012",
        "2606.00013",
        "2606.00011",
    ]


@pytest.mark.django_db
def test_authors_are_searchable(client, corpus):
    response = client.get("/search/", {"q": "liskov"})

    assert titles(response) == ["Robot grasping with agents"]
    assert "Barbara Liskov" in response.text


@pytest.mark.django_db
def test_author_names_match_unstemmed(client, db):
    add_papers(
        paper_record("2606.00021", authors=("Sarah Jones",), title="Lattices"),
        paper_record("2606.00022", authors=("Ann Lee",), title="Robots for Jones"),
    )

    response = client.get("/search/", {"q": "jones -robots"})

    assert titles(response) == ["Lattices"]


@pytest.mark.django_db
def test_only_exclusions_list_everything_else(client, corpus):
    response = client.get("/search/", {"q": "-robots"})

    assert set(titles(response)) == {
        "Planning agents with language models",
        "A survey of planning",
    }


@pytest.mark.django_db
def test_quoted_phrases_and_excluded_words_follow_websearch_syntax(client, corpus):
    phrase = client.get("/search/", {"q": '"tool use"'})
    excluded = client.get("/search/", {"q": "agents -robot"})
    either = client.get("/search/", {"q": "liskov or survey"})

    assert set(titles(phrase)) == {"A survey of planning", "Tool use in robots"}
    assert set(titles(excluded)) == {
        "Planning agents with language models",
        "A survey of planning",
    }
    assert set(titles(either)) == {"Robot grasping with agents", "A survey of planning"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"topic": "agents"}, {"2606.00001", "2606.00003"}),
        ({"category": "cs.LG"}, {"2606.00002", "2606.00003"}),
        ({"category": "cs.lg"}, {"2606.00002", "2606.00003"}),
        ({"from": "2026-05-01"}, {"2606.00002", "2606.00003", "2606.00004"}),
        ({"to": "2026-06-10"}, {"2606.00001", "2606.00002", "2606.00003"}),
        ({"from": "2026-05-01", "to": "2026-06-15"}, {"2606.00002", "2606.00003"}),
        (
            {"q": "agents", "category": "cs.LG", "from": "2026-06-01"},
            {"2606.00003"},
        ),
        ({"q": "agents", "topic": "robots", "to": "2026-06-01"}, set()),
    ],
)
def test_filters_narrow_the_results(client, corpus, filters, expected):
    response = client.get("/search/", filters)

    assert response.status_code == 200
    assert {paper.arxiv_id for paper in response.context["page"]} == expected


@pytest.mark.django_db
def test_filters_without_text_list_the_newest_first(client, corpus):
    response = client.get("/search/", {"category": "cs.RO", "q": "  "})

    assert titles(response) == ["Tool use in robots", "Robot grasping with agents"]
    assert "<mark>" not in response.text


@pytest.mark.django_db
def test_an_empty_search_shows_the_form_only(client, corpus):
    response = client.get("/search/")

    assert response.status_code == 200
    assert response.context["page"] is None
    assert "Type some words" in response.text
    assert '<option value="robots">Robot Learning</option>' in response.text
    assert "Retired" not in response.text


@pytest.mark.django_db
def test_every_page_has_the_search_box(client, corpus):
    page = client.get("/").text

    assert 'action="/search/"' in page
    assert 'id="site-search"' in page
    assert 'aria-label="Search papers"' in page


@pytest.mark.django_db
def test_matches_are_marked_in_title_and_snippet(client, corpus):
    response = client.get("/search/", {"q": "grasping"})

    assert "Robot <mark>grasping</mark> with agents" in response.text
    assert '<p class="snippet"><mark>Grasping</mark> robots learn' in response.text


@pytest.mark.django_db
def test_hostile_text_is_escaped_around_the_marks(client, db):
    add_papers(
        paper_record(
            "2606.00666",
            title="<script>alert(1)</script> agents",
            abstract='Agents <img src=x onerror="alert(2)"> everywhere.',
        )
    )

    page = client.get("/search/", {"q": "agents"}).text

    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; <mark>agents</mark>" in page
    assert "<img" not in page
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in page


@pytest.mark.django_db
def test_pages_keep_the_query_and_filters(client, db):
    add_papers(
        *(
            paper_record(f"2606.{n:05d}", title=f"Agent number {n}")
            for n in range(1, 31)
        )
    )

    first = client.get("/search/", {"q": "agent", "category": "cs.LG"})
    second = client.get("/search/", {"q": "agent", "category": "cs.LG", "page": 2})

    assert first.context["page"].paginator.count == 30
    assert 'href="?q=agent&amp;category=cs.LG&amp;page=2"' in first.text
    assert len(second.context["page"]) == 5
    assert 'href="?q=agent&amp;category=cs.LG&amp;page=1"' in second.text


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q": "agents", "from": "2026-13-45"}, "From: Enter the date as YYYY-MM-DD."),
        ({"to": "yesterday"}, "To: Enter the date as YYYY-MM-DD."),
        ({"topic": "nope"}, "There is no topic “nope”."),
        ({"topic": "retired"}, "There is no topic “retired”."),
        ({"category": "cs.XX"}, "There is no arXiv category “cs.XX”"),
        ({"category": "'; drop"}, "There is no arXiv category “&#x27;; drop”"),
        (
            {"from": "2026-06-02", "to": "2026-06-01"},
            "The “to” date is before the “from” date.",
        ),
        ({"q": "a" * 201}, "Search text is limited to 200 characters (it has 201)."),
        ({"q": "agents\x00"}, "Null characters are not allowed."),
    ],
)
def test_invalid_input_shows_a_message(client, corpus, params, message):
    response = client.get("/search/", params)

    assert response.status_code == 200
    assert message in response.text
    assert response.context["page"] is None


@pytest.mark.django_db
def test_text_without_searchable_words_finds_nothing(client, corpus):
    for text in ["the", '""', "&|!:*", "-"]:
        response = client.get("/search/", {"q": text})

        assert response.status_code == 200
        assert "No papers found" in response.text


@pytest.mark.django_db
def test_query_count_does_not_grow_with_results(
    client, alice, corpus, django_assert_max_num_queries
):
    add_papers(
        *(
            paper_record(
                f"2607.{n:05d}",
                title=f"Agents at scale {n}",
                authors=tuple(f"Author {n}-{k}" for k in range(6)),
            )
            for n in range(30)
        )
    )
    client.force_login(alice)
    params = {
        "q": "agents",
        "topic": "agents",
        "category": "cs.LG",
        "from": "2020-01-01",
    }

    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        response = client.get("/search/", {**params, "page": 2})

    assert response.status_code == 200
    assert response.context["page"].paginator.count == 31


@pytest.mark.django_db
def test_the_substring_fallback_matches_every_word_and_marks_it(
    client, corpus, monkeypatch
):
    """The SQLite path's logic, run on this database by faking the vendor."""
    monkeypatch.setattr(connection, "vendor", "sqlite")

    response = client.get("/search/", {"q": 'hopper "ROBOT grasp" -tools'})

    assert titles(response) == ["Robot grasping with agents"]
    assert "<mark>Robot grasp</mark>ing with agents" in response.text
    assert "<mark>Grasp</mark>ing robots" not in response.text


# Pure functions behind the fallback and the highlights


def test_parse_terms_reads_phrases_exclusions_and_or():
    assert parse_terms('tool  "large   language" -robot or -"red team" OR x') == (
        ["tool", "large language", "x"],
        ["robot", "red team"],
    )


def test_mark_terms_ignores_case_and_spacing_and_drops_sentinels():
    marked = mark_terms(
        "Large\nLanguage models \ue000and\ue001 LLMs", ["large language"]
    )

    assert to_html(marked) == "<mark>Large\nLanguage</mark> models and LLMs"


def test_to_html_escapes_everything_but_the_marks():
    html = to_html("\ue000<b>\ue001 & <script>x</script> \ue001stray")

    assert html == "<mark>&lt;b&gt;</mark> &amp; &lt;script&gt;x&lt;/script&gt; stray"


def test_excerpt_starts_a_little_before_the_first_match():
    text = " ".join(f"w{n}" for n in range(100)) + " needle " + "tail " * 100

    shown = excerpt(text, ["needle"], words=20)

    assert shown.startswith("… w95 w96 w97 w98 w99 needle tail")
    assert shown.endswith(" …")
    assert len(shown.split()) == 22


SQLITE_SCRIPT = """
import django
django.setup()
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import setup_test_environment
from papers.ingest.upsert import upsert_records
from tests.papers.factories import paper_record
setup_test_environment()
call_command("migrate", verbosity=0)
upsert_records([
    paper_record("2606.00001", title="<i>Tool</i> use in agents"),
    paper_record("2606.00002", title="Robots", abstract="Robots use tools."),
])
response = Client().get("/search/", {"q": "tool -robots"})
print(connection.vendor, response.status_code)
print([paper.arxiv_id for paper in response.context["page"]])
print("&lt;i&gt;<mark>Tool</mark>&lt;/i&gt; use" in response.text)
"""


@pytest.mark.sqlite
def test_search_works_on_the_embedded_sqlite_default(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "EMAIL_URL"}
        and not key.startswith(("DJANGO_", "MOMENTUM_"))
    }
    env.update(
        MOMENTUM_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="config.settings.base"
    )

    result = subprocess.run(
        [sys.executable, "-c", SQLITE_SCRIPT],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:-1] == ["sqlite 200", "['2606.00001']", "True"]
