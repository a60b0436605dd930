"""The search page: ranked full-text search, arXiv ids, filters, highlights.

The suite runs this module on PostgreSQL; the last test runs it again, in a
subprocess, on the embedded SQLite default (FTS5), where the PostgreSQL-only
tests are skipped and the SQLite-only ones run.
"""

from __future__ import annotations

import re
from datetime import date
from datetime import timedelta

import pytest
from django import forms
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.http import QueryDict

from papers.forms import SearchForm
from papers.forms import WrittenInput
from papers.forms import topic_choices
from papers.highlight import excerpt
from papers.highlight import mark_runs
from papers.highlight import marked_runs
from papers.highlight import to_html
from papers.ingest.snapshot import iter_snapshot
from papers.ingest.upsert import upsert_records
from papers.letters import plain_letters
from papers.letters import search_text
from papers.models import Paper
from papers.search import Term
from papers.search import arxiv_id_query
from papers.search import matching_papers
from papers.search import parse_query
from papers.versions import NAMES
from papers.versions import current_versions
from papers.versions import get_many
from papers.versions import version_key
from tests.papers.factories import paper_record
from tests.papers.test_parse_snapshot import line as snapshot_line
from tests.sqlite_run import run_module_on_sqlite
from tests.topics.factories import make_topic
from topics.models import Topic
from topics.tagging import tag_papers

# A search page rendered anew (README), its windows included, for a reader
# whether they saved this search already, and a topic filter's topic (read by
# its id: papers.search.filtered_papers).
MAX_PAGE_QUERIES = 15
POSTGRESQL = connection.vendor == "postgresql"
postgresql_only = pytest.mark.skipif(not POSTGRESQL, reason="PostgreSQL only")
sqlite_only = pytest.mark.skipif(
    POSTGRESQL, reason="runs in test_this_module_passes_on_sqlite"
)
FTS_TRIGGERS = {
    "papers_paper_fts_insert",
    "papers_paper_fts_update",
    "papers_paper_fts_delete",
}


def add_papers(*records) -> None:
    tag_papers(upsert_records(list(records)).changed_ids)


def announce(arxiv_id: str, day: date) -> None:
    Paper.objects.filter(arxiv_id=arxiv_id).update(first_announced=day)


def titles(response) -> list[str]:
    return [paper.title for paper in response.context["page"]]


def marked_title(response, arxiv_id: str) -> str:
    [paper] = [p for p in response.context["page"] if p.arxiv_id == arxiv_id]
    return paper.highlighted_title


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


# Ranking and matching


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
def test_an_author_match_ranks_above_an_abstract_only_match(client, db):
    add_papers(
        paper_record(
            "2606.00031", title="Lattices", authors=("Edsger Dijkstra", "Tony Hoare")
        ),
        paper_record(
            "2606.00032",
            title="Shortest paths",
            abstract="We revisit the algorithm of Dijkstra on sparse graphs today.",
        ),
    )
    announce("2606.00031", date(2026, 6, 1))
    announce("2606.00032", date(2026, 6, 2))

    response = client.get("/search/", {"q": "dijkstra"})

    assert titles(response) == ["Lattices", "Shortest paths"]


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
def test_words_match_their_stemmed_forms_in_titles_and_abstracts(client, corpus):
    response = client.get("/search/", {"q": "grasp demonstration"})

    assert titles(response) == ["Robot grasping with agents"]


@pytest.mark.django_db
def test_authors_are_searchable(client, corpus):
    response = client.get("/search/", {"q": "liskov"})

    assert titles(response) == ["Robot grasping with agents"]
    assert "Barbara Liskov" in response.text


@pytest.mark.django_db
def test_a_surname_is_not_stemmed_into_another(client, db):
    add_papers(
        paper_record("2606.00041", authors=("Sergey Levine",), title="Offline RL"),
        paper_record("2606.00042", authors=("Ilya Levin",), title="Online RL"),
        paper_record("2606.00043", authors=("Ada Lovelace",), title="Robots in RL"),
    )

    levine = client.get("/search/", {"q": "Levine"})
    levin = client.get("/search/", {"q": "levin"})
    mixed = client.get("/search/", {"q": "levine offline"})
    phrase = client.get("/search/", {"q": '"sergey levine"'})

    assert titles(levine) == ["Offline RL"]
    assert titles(levin) == ["Online RL"]
    assert titles(mixed) == ["Offline RL"]
    assert titles(phrase) == ["Offline RL"]


@pytest.mark.django_db
def test_author_names_match_unstemmed(client, db):
    add_papers(
        paper_record("2606.00021", authors=("Sarah Jones",), title="Lattices"),
        paper_record("2606.00022", authors=("Ann Lee",), title="Robots for Jones"),
    )

    response = client.get("/search/", {"q": "jones -robots"})

    assert titles(response) == ["Lattices"]


@pytest.fixture
def accented(db):
    """Accented letters as arXiv's metadata writes them: in TeX and in Unicode."""
    add_papers(
        paper_record(
            "2606.00111",
            title=r"Motion planning with B\'ezier curves",
            abstract=r"A Schr\"{o}dinger bridge between {\AA}ngstr\"om scales.",
            authors=(r"Paul Erd\H{o}s",),
        ),
        paper_record(
            "2606.00112",
            title="Bézier surfaces for Poincaré maps",
            abstract="Naïve bounds.",
            authors=("Jürgen Müller",),
        ),
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Bézier", {"2606.00111", "2606.00112"}),
        ("bezier", {"2606.00111", "2606.00112"}),
        (r"B\'ezier", {"2606.00111", "2606.00112"}),
        ("Schrödinger", {"2606.00111"}),
        ("schrodinger bridge", {"2606.00111"}),
        ("Ångström", {"2606.00111"}),
        ("Erdős", {"2606.00111"}),
        ("erdos", {"2606.00111"}),
        ("Muller", {"2606.00112"}),
        ("poincare", {"2606.00112"}),
        ("naive", {"2606.00112"}),
    ],
)
def test_a_word_matches_however_its_accents_are_written(
    client, accented, text, expected
):
    response = client.get("/search/", {"q": text})

    assert {paper.arxiv_id for paper in response.context["page"]} == expected


@pytest.fixture
def shown(db):
    """Titles and names whose page shows other letters than arXiv's TeX."""
    add_papers(
        paper_record(
            "2606.00121",
            title=r"H$^2$SD: Hybrid Hindsight Self-Distillation",
            abstract=r"A $\kappa$-$\mu$ fading channel with $10^5$ draws at T$_c$.",
            authors=("Søren Jørgensen",),
        ),
        paper_record(
            "2606.00122",
            title="α-Jailbreak: prompt injection for X$_{3}$-OPD",  # noqa: RUF001
            abstract=r"Strategies of Pawe{\l} and Ø, a λόγος.",
            authors=("Paweł Gajewski",),
        ),
        paper_record("2606.00123", title=r"$\tau$-Rec: Recommending with rewards"),
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("H²SD", {"2606.00121"}),  # as the page shows it, pasted
        ("H2SD", {"2606.00121"}),
        ("H$^2$SD", {"2606.00121"}),
        ("κ μ fading", {"2606.00121"}),
        ("α-Jailbreak", {"2606.00122"}),  # noqa: RUF001
        ("alpha jailbreak", {"2606.00122"}),
        ("X₃-OPD", {"2606.00122"}),
        ("Jorgensen", {"2606.00121"}),
        ("Jørgensen Søren", {"2606.00121"}),
        ("Pawel Gajewski", {"2606.00122"}),
        ("Paweł", {"2606.00122"}),
        ("T_c", {"2606.00121"}),  # a letter's subscript is shown as written
        ("τ-Rec", {"2606.00123"}),  # as shown, from arXiv's $\tau$-Rec
        ("tau-rec", {"2606.00123"}),
        ("λογος", {"2606.00122"}),
        ("λόγος", {"2606.00122"}),
    ],
)
def test_a_title_is_found_as_its_page_shows_it(client, shown, text, expected):
    response = client.get("/search/", {"q": text})

    assert {paper.arxiv_id for paper in response.context["page"]} == expected


@pytest.mark.django_db
def test_a_search_as_shown_marks_the_words_shown(client, shown):
    response = client.get("/search/", {"q": "H2SD or α"})  # noqa: RUF001

    assert marked_title(response, "2606.00121").startswith("<mark>H²SD</mark>:")
    # A hyphenated word is marked whole, as "multi-agent" is.
    assert marked_title(response, "2606.00122").startswith("<mark>α-Jailbreak</mark>:")  # noqa: RUF001


@pytest.mark.django_db
def test_an_unaccented_search_marks_the_accented_words_shown(client, accented):
    response = client.get("/search/", {"q": "bezier schrodinger"})

    assert marked_title(response, "2606.00111") == (
        "Motion planning with <mark>Bézier</mark> curves"
    )
    assert "A <mark>Schrödinger</mark> bridge" in response.text


@pytest.mark.django_db
def test_a_title_sent_with_its_accents_decomposed_is_marked_whole(client):
    """A source may send "ö" as o and a combining diaeresis (NFD, as text pasted
    from a Mac is): found, but the mark split the word around its accent, or
    marked none of it ("Schrödinger" typed composed)."""
    add_papers(
        *iter_snapshot(
            [
                snapshot_line(
                    title="Schro\u0308dinger bridges",
                    abstract="A nai\u0308ve bound.",
                    authors="Jose\u0301 Garci\u0301a",
                )
            ]
        )
    )

    response = client.get("/search/", {"q": "Schrödinger naive"})

    assert marked_title(response, "2607.00001") == "<mark>Schrödinger</mark> bridges"
    assert "A <mark>naïve</mark> bound." in response.text
    assert Paper.objects.get().author_names == "José García"


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
    groups = client.get("/search/", {"q": "tools robots or survey planning"})

    assert set(titles(phrase)) == {"A survey of planning", "Tool use in robots"}
    assert set(titles(excluded)) == {
        "Planning agents with language models",
        "A survey of planning",
    }
    assert set(titles(either)) == {"Robot grasping with agents", "A survey of planning"}
    assert set(titles(groups)) == {"Tool use in robots", "A survey of planning"}


@pytest.mark.django_db
@pytest.mark.parametrize("typed", ["LLM", "LLMs", "llm", "GNNs"])
def test_an_acronym_finds_its_plural_and_its_singular_and_marks_both(client, db, typed):
    """English stemming leaves an acronym whole, its plural too (to PostgreSQL
    LLMs is not LLM): a word with no vowel is searched in both numbers."""
    add_papers(
        paper_record("2606.00001", title="Evaluating LLMs and GNNs on tables"),
        paper_record("2606.00002", title="An LLM with a GNN for tables"),
        paper_record("2606.00003", title="Tables, read"),
    )

    response = client.get("/search/", {"q": typed})
    quoted = client.get("/search/", {"q": f'"{typed}"'})

    assert set(titles(response)) == {
        "Evaluating LLMs and GNNs on tables",
        "An LLM with a GNN for tables",
    }
    word = typed.rstrip("s").upper()
    assert f"<mark>{word}s</mark>" in marked_title(response, "2606.00001")
    assert f"<mark>{word}</mark>" in marked_title(response, "2606.00002")
    assert len(titles(quoted)) < 2 or not POSTGRESQL


@pytest.mark.django_db
@pytest.mark.parametrize("typed", ["multi-agent", "multi agent", '"multi agent"'])
def test_a_hyphenated_word_and_its_words_written_apart(client, db, typed):
    """Written apart, the words find the hyphenated word too; the hyphenated
    word finds itself, and on SQLite the words written apart (PostgreSQL
    indexes the compound: a phrase of its parts would cost four times a
    search, docs/website.md)."""
    add_papers(
        paper_record("2606.00001", title="Multi-agent planning"),
        paper_record("2606.00002", title="Planning for multi agent teams"),
        paper_record("2606.00003", title="Agent planning with multi tools"),
    )

    response = client.get("/search/", {"q": typed})

    found = {"Multi-agent planning", "Planning for multi agent teams"}
    if typed == "multi agent":  # words, not a phrase: in any order
        found.add("Agent planning with multi tools")
    if typed == "multi-agent" and POSTGRESQL:
        found = {"Multi-agent planning"}
    assert set(titles(response)) == found


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("typed", "title"),
    [
        ("COVID-19", "Forecasting COVID-19 cases"),
        ('"COVID-19 cases"', "Forecasting COVID-19 cases"),
        ("GPT-4", "Probing GPT-4 on tables"),
        ("ResNet-50", "Pruning ResNet-50 quickly"),
        ("GPT-4o", "Asking GPT-4o about maps"),
        ("SARS-CoV-2", "SARS-CoV-2 spike folding"),
    ],
)
def test_a_word_hyphenated_before_a_number_finds_itself(client, db, typed, title):
    """PostgreSQL reads "COVID-19" as covid and -19: searched as typed too."""
    add_papers(paper_record("2606.00001", title=title))

    response = client.get("/search/", {"q": typed})
    excluded = client.get("/search/", {"q": f"-{typed} or zebras"})

    assert titles(response) == [title]
    assert [paper.title for paper in matching_papers(typed)] == [title]
    assert title not in titles(excluded)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("typed", "other"),
    [("GPS", "Sparse GP regression"), ("tracking vs", "Tracking a v-shaped target")],
)
def test_an_acronym_ending_in_s_is_no_plural(client, db, typed, other):
    add_papers(
        paper_record("2606.00001", title="GPS tracking vs dead reckoning"),
        paper_record("2606.00002", title=other),
    )

    response = client.get("/search/", {"q": typed})

    assert (titles(response) == ["GPS tracking vs dead reckoning"]) or not POSTGRESQL


@pytest.mark.django_db
def test_stop_words_are_neither_needed_nor_marked_on_either_database(client, db):
    add_papers(
        paper_record(
            "2606.00001",
            title="The state of planning",
            abstract="Cardiovascular diseases are the leading cause of death. "
            "A state-of-the-art planner helps.",
        ),
        paper_record("2606.00002", title="Art and the state", abstract="Essays."),
    )

    response = client.get("/search/", {"q": "state of the art"})

    assert set(titles(response)) == {"The state of planning", "Art and the state"}
    [paper] = [p for p in response.context["page"] if p.arxiv_id == "2606.00001"]
    marked = re.findall(r"<mark>(.*?)</mark>", paper.snippet.lower())
    assert marked
    assert not {"the", "of"} & set(marked)


@pytest.mark.django_db
@pytest.mark.parametrize("symbol", ["+", "&", "\u2013", "\u2192", "/", ":"])
def test_a_word_of_symbols_in_a_pasted_title_is_no_term(client, db, symbol):
    add_papers(paper_record("2606.00001", title=f"Fusing LiDAR {symbol} camera"))

    response = client.get("/search/", {"q": f"LiDAR {symbol} camera"})

    assert titles(response) == [f"Fusing LiDAR {symbol} camera"]


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


# arXiv ids


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("2607.04713", ""),
        ("2607.04713v1", "?v=1"),
        (" arXiv:2607.04713 ", ""),
        ("arxiv: 2607.04713v2", "?v=2"),
        ("https://arxiv.org/abs/2607.04713v2", "?v=2"),
        ("http://arxiv.org/pdf/2607.04713v1.pdf", "?v=1"),
        ("arxiv.org/html/2607.04713v1/", "?v=1"),
    ],
)
def test_an_arxiv_id_or_link_opens_its_paper(client, db, text, version):
    """At the version asked, which its page says when it is not the one held."""
    add_papers(paper_record("2607.04713", title="The paper"))

    response = client.get("/search/", {"q": text})

    assert response.status_code == 302
    assert response["Location"] == "/papers/2607.04713/" + version


@pytest.mark.django_db
def test_an_old_style_id_opens_its_paper(client, db):
    add_papers(paper_record("hep-th/9901001", title="Strings"))

    response = client.get("/search/", {"q": "hep-th/9901001v2"})

    assert response.status_code == 302
    assert response["Location"] == "/papers/hep-th/9901001/?v=2"


@pytest.mark.django_db
def test_an_id_not_stored_says_so_and_links_to_arxiv(client, corpus):
    response = client.get("/search/", {"q": "arXiv:2607.99999v3"})

    assert response.status_code == 200
    assert "arXiv:2607.99999v3 is not in Momentum" in response.text
    assert 'href="https://arxiv.org/abs/2607.99999v3"' in response.text
    assert response.context["page"] is None
    assert "Type some words" not in response.text


@pytest.mark.django_db
def test_an_id_among_other_words_is_searched_as_text(client, db):
    add_papers(
        paper_record(
            "2607.04713", title="Follow-up", abstract="We extend 2606.00001 here."
        ),
    )

    response = client.get("/search/", {"q": "extend 2606.00001"})

    assert response.status_code == 200
    assert titles(response) == ["Follow-up"]


def test_arxiv_id_query_reads_ids_and_links_only():
    assert arxiv_id_query("2607.04713v12") == ("2607.04713", 12)
    assert arxiv_id_query("https://www.arxiv.org/abs/math/0601001") == (
        "math/0601001",
        None,
    )
    assert arxiv_id_query("2607.04713 agents") is None
    assert arxiv_id_query("https://example.org/abs/2607.04713") is None
    # As arXiv's listings link a paper, and in any case.
    assert arxiv_id_query("https://arxiv.org/abs/2607.01775?context=cs") == (
        "2607.01775",
        None,
    )
    assert arxiv_id_query("arxiv.org/pdf/2607.01775V2#page=3") == ("2607.01775", 2)
    assert arxiv_id_query("HEP-TH/9901001") == ("hep-th/9901001", None)
    assert arxiv_id_query("Math.gt/0309136") == ("math.GT/0309136", None)
    # Numbers arXiv never gave: five digits since 2015, four before.
    assert arxiv_id_query("2607.1775") is None
    assert arxiv_id_query("1412.12345") is None
    assert arxiv_id_query("1412.1234") == ("1412.1234", None)


@pytest.mark.django_db
def test_arxivs_field_prefixes_are_explained_with_the_search_meant(client, corpus):
    response = client.get(
        "/search/", {"q": "au:Lee ti:agents cat:cs.RO", "from": "2026-01-01", "page": 2}
    )

    html = response.content.decode()
    assert "Search does not read arXiv's field prefixes (<code>au:</code>, " in html
    assert "<code>cat:</code>, <code>ti:</code>)" in html
    assert (
        '<a href="?q=Lee+agents&amp;from=2026-01-01&amp;category=cs.RO">'
        "Search for “Lee agents” in cs.RO instead</a>"
    ) in html
    plain = client.get("/search/", {"q": "agents: a survey"}).content.decode()
    assert "field prefixes" not in plain


# Highlights


@pytest.mark.django_db
def test_matches_are_marked_in_title_and_snippet(client, corpus):
    response = client.get("/search/", {"q": "grasping"})

    assert "Robot <mark>grasping</mark> with agents" in response.text
    assert '<p class="snippet"><mark>Grasping</mark> robots learn' in response.text


@pytest.mark.django_db
def test_marks_cover_whole_words_and_the_forms_that_matched(client, db):
    add_papers(
        paper_record(
            "2606.00051",
            title="Models for multi-agent planning",
            abstract="A model's modeling of LLM-based planners.",
        )
    )

    response = client.get("/search/", {"q": "model agent llm"})

    assert marked_title(response, "2606.00051") == (
        "<mark>Models</mark> for <mark>multi-agent</mark> planning"
    )
    assert (
        "<mark>model&#x27;s modeling</mark> of <mark>LLM-based</mark> planners"
        in response.text
    )


@pytest.mark.django_db
def test_a_phrase_is_marked_as_one(client, corpus):
    response = client.get("/search/", {"q": '"tool use"'})

    assert marked_title(response, "2606.00004") == "<mark>Tool use</mark> in robots"


@pytest.mark.django_db
def test_a_phrases_words_are_marked_only_where_they_stand_in_a_row(client, db):
    add_papers(
        paper_record(
            "2606.00052",
            title="World models for robots",
            abstract="Real world robots; a world of models. A world model, again.",
        )
    )

    response = client.get("/search/", {"q": '"world model" robot'})

    assert marked_title(response, "2606.00052") == (
        "<mark>World models</mark> for <mark>robots</mark>"
    )
    assert (
        "Real world <mark>robots</mark>; a world of models. "
        "A <mark>world model</mark>, again." in response.text
    )


@pytest.mark.django_db
def test_excluded_words_are_not_marked(client, corpus):
    response = client.get("/search/", {"q": "agents -tool"})

    assert "<mark>robot" not in response.text.lower()
    assert "Robot grasping with <mark>agents</mark>" in response.text


@pytest.mark.django_db
def test_the_snippet_starts_near_the_first_match(client, db):
    abstract = " ".join(f"w{n}" for n in range(60)) + " needle " + "tail " * 60
    add_papers(paper_record("2606.00061", title="Hay", abstract=abstract))

    page = client.get("/search/", {"q": "needle"}).text

    assert '<p class="snippet">… w50 w51' in page
    assert "w59 <mark>needle</mark> tail" in page


@pytest.mark.django_db
def test_latex_is_rendered_in_results_and_their_marks(client, db):
    add_papers(
        paper_record(
            "2606.00071",
            title=r"$\alpha$-divergence bounds for \emph{sparse} models",
            abstract=r"We bound the divergence in $O(n^2)$ time.",
        )
    )

    response = client.get("/search/", {"q": "divergence"})

    assert marked_title(response, "2606.00071") == (
        "<mark>\u03b1-divergence</mark> bounds for sparse models"
    )
    assert "<mark>divergence</mark> in O(n²) time." in response.text
    assert "\\emph" not in response.text


@pytest.mark.django_db
def test_hostile_text_is_escaped_around_the_marks(client, db):
    add_papers(
        paper_record(
            "2606.00666",
            title="<script>alert(1)</script> agents",
            abstract='Agents <img src=x onerror="alert(2)"> everywhere.',
        ),
        paper_record(
            "2606.00667",
            title=r"$a<b$ \emph{<b>agents</b>}",
            abstract="Plain.",
        ),
    )

    page = client.get("/search/", {"q": "agents"}).text

    assert "<script>" not in page.replace('<script src="', "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; <mark>agents</mark>" in page
    assert "<img" not in page
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in page
    assert "<b>" not in page
    assert "a&lt;b &lt;b&gt;<mark>agents</mark>&lt;/b&gt;" in page


@pytest.mark.django_db
def test_a_shared_row_takes_each_querys_highlights(
    client, db, django_assert_max_num_queries
):
    add_papers(
        paper_record(
            "2606.00670",
            title="Planning agents",
            abstract="Agents plan with robots.",
        )
    )
    client.get("/search/", {"q": "agents"})

    # The row is in the cache now: another query only fills in its marks (the
    # candidates, their ranking; the topic choices are kept).
    with django_assert_max_num_queries(2):
        other = client.get("/search/", {"q": "robots"}).text

    assert "Planning agents</a>" in other
    assert "plan with <mark>robots</mark>." in other
    assert "<mark>agents</mark>" not in other.lower()


@pytest.mark.django_db
def test_the_topic_choices_are_read_once_and_follow_a_rename(
    client, corpus, django_assert_num_queries, django_capture_on_commit_callbacks
):
    client.get("/search/", {"q": "agents"})
    names = current_versions([NAMES], get_many([version_key(NAMES)]))[NAMES]
    with django_assert_num_queries(0):
        assert ("robots", "Robot Learning") in topic_choices(names)
    topic = Topic.objects.get(slug="robots")

    topic.name = "Robots That Learn"
    with django_capture_on_commit_callbacks(execute=True):
        topic.save()  # the names' version moves once it commits
    page = client.get("/search/", {"q": "agents", "topic": "robots"}).text

    assert '<option value="robots" selected>Robots That Learn</option>' in page
    assert "Any topic" in page
    assert "Retired" not in page


@pytest.mark.django_db
def test_a_search_at_a_topics_former_slug_goes_to_it(
    client, corpus, django_capture_on_commit_callbacks
):
    """Old digests link their sections' searches by the topic's slug then."""
    topic = Topic.objects.get(slug="robots")
    topic.slug = "robot-learning"
    with django_capture_on_commit_callbacks(execute=True):
        topic.save()

    moved = client.get("/search/", {"q": "agents", "topic": "robots", "page": "2"})
    unknown = client.get("/search/", {"topic": "no-such-topic"})

    assert moved.status_code == 301
    assert moved["Location"] == "/search/?q=agents&topic=robot-learning&page=2"
    assert unknown.status_code == 200
    assert "There is no topic “no-such-topic”." in unknown.text


@pytest.mark.django_db
def test_text_that_spells_a_rows_hole_is_shown_as_text(client, db):
    add_papers(
        paper_record(
            "2606.00671",
            title="Agents <!--search:title--> and <!--search:snippet-->",
            abstract="Agents <!--search:snippet--> everywhere.",
            authors=("Ada <!--search:snippet-->",),
        )
    )

    page = client.get("/search/", {"q": "agents"}).text

    assert "<!--search:" not in page
    assert "<mark>Agents</mark> &lt;!--search:title--&gt; and" in page
    assert "Ada &lt;!--search:snippet--&gt;" in page
    assert page.count('<p class="snippet">') == 1


# A bounded candidate set: the newest matches, ranked


def dated_papers(count: int, *, title: str = "Agent number {n}") -> list[str]:
    """`count` matching papers, announced a day apart, newest last; their ids."""
    arxiv_ids = [f"2605.{n:05d}" for n in range(1, count + 1)]
    add_papers(
        *(
            paper_record(arxiv_id, title=title.format(n=n))
            for n, arxiv_id in enumerate(arxiv_ids, 1)
        )
    )
    for n, arxiv_id in enumerate(arxiv_ids):
        announce(arxiv_id, date(2026, 1, 1) + timedelta(days=n))
    return arxiv_ids


def shown_ids(response) -> list[str]:
    return [paper.arxiv_id for paper in response.context["page"]]


@pytest.mark.django_db
def test_only_the_newest_matches_are_ranked_and_the_count_says_more(
    client, db, monkeypatch
):
    monkeypatch.setattr("papers.search.CANDIDATES", 5)
    arxiv_ids = dated_papers(8)
    # The oldest paper is the best match, but not among the five newest.
    Paper.objects.filter(arxiv_id=arxiv_ids[0]).update(title="Agent agents agent")

    response = client.get("/search/", {"q": "agent"})

    assert sorted(shown_ids(response)) == sorted(arxiv_ids[-5:])
    assert response.context["page"].paginator.count == 5
    assert "5+ papers" in response.text
    assert "these are the best of the newest 5" in response.text


@pytest.mark.django_db
def test_an_uncapped_count_is_exact_and_says_nothing_more(client, db, monkeypatch):
    monkeypatch.setattr("papers.search.CANDIDATES", 5)
    dated_papers(5)

    response = client.get("/search/", {"q": "agent"})

    assert response.context["page"].paginator.count == 5
    assert "5 papers" in response.text
    assert "5+ papers" not in response.text
    assert "best of the newest" not in response.text


@pytest.mark.django_db
def test_the_candidates_are_ranked_best_first(client, db, monkeypatch):
    monkeypatch.setattr("papers.search.CANDIDATES", 3)
    dated_papers(2, title="Planning number {n}")
    add_papers(
        paper_record("2605.00010", title="Planning", abstract="Agents plan."),
        paper_record("2605.00011", title="Agents that plan", abstract="Planning."),
    )
    announce("2605.00010", date(2026, 3, 2))
    announce("2605.00011", date(2026, 3, 1))

    response = client.get("/search/", {"q": "agents"})

    # Both newer papers are candidates; the title match ranks above the newer
    # abstract-only match.
    assert shown_ids(response)[:2] == ["2605.00011", "2605.00010"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("ages", "wanted"),
    [
        # The newest week holds enough: older matches are never read.
        ([0, 1, 2, 3, 40, 400], [0, 1, 2]),
        # It does not: the windows widen until one does, or all papers are in.
        ([0, 40, 41, 42, 400], [0, 40, 41]),
        ([0, 400, 401, 900], [0, 400, 401]),
        ([0, 1, 500, 501, 900], [0, 1, 500]),
        # A paper without a day comes first, as in the unwindowed order.
        ([None, 0, 1, 2, 3, 400], [None, 0, 1]),
    ],
)
def test_the_newest_matches_are_found_window_by_window(
    client, db, monkeypatch, ages, wanted
):
    monkeypatch.setattr("papers.search.CANDIDATES", 3)
    newest = date(2026, 7, 24)
    arxiv_ids = dated_papers(len(ages))
    for arxiv_id, age in zip(arxiv_ids, ages, strict=True):
        day = None if age is None else newest - timedelta(days=age)
        announce(arxiv_id, day)
    # An old paper that does not match: the corpus spans years.
    add_papers(paper_record("2001.00001", title="Old", abstract="Unrelated."))
    announce("2001.00001", date(2020, 1, 1))
    by_age = dict(zip(ages, arxiv_ids, strict=True))

    response = client.get("/search/", {"q": "agent"})

    assert sorted(shown_ids(response)) == sorted(by_age[age] for age in wanted)
    assert "3+ papers" in response.text


@pytest.mark.django_db
def test_pages_run_through_the_candidate_set_only(client, db, monkeypatch):
    monkeypatch.setattr("papers.search.CANDIDATES", 30)
    arxiv_ids = dated_papers(40)

    first = client.get("/search/", {"q": "agent"})
    second = client.get("/search/", {"q": "agent", "page": 2})
    beyond = client.get("/search/", {"q": "agent", "page": 3})

    assert "30+ papers" in first.text
    assert "Page 1 of 2" in first.text
    assert len(shown_ids(first)) == 25
    assert len(shown_ids(second)) == 5
    assert sorted(shown_ids(first) + shown_ids(second)) == sorted(arxiv_ids[-30:])
    # Past the last page, the last page (as Paginator.get_page does).
    assert shown_ids(beyond) == shown_ids(second)


@pytest.mark.django_db
@pytest.mark.parametrize("params", [{"q": "robot"}, {"category": "cs.LG"}])
def test_windows_of_the_newest_papers_find_what_the_whole_corpus_does(
    client, db, monkeypatch, params
):
    monkeypatch.setattr("papers.search.CANDIDATES", 4)
    arxiv_ids = dated_papers(13)
    # Every third paper matches: the newest five matches reach past the first
    # window (3 papers); the next is sized from its density (12 for the
    # category, none for the word, which reads all).
    for arxiv_id in arxiv_ids[::3]:
        Paper.objects.filter(arxiv_id=arxiv_id).update(title="Robot agents")

    def shown(windows: tuple[int, ...]) -> tuple[list[str], bool]:
        monkeypatch.setattr("papers.search.WINDOW_PAPERS", windows)
        cache.clear()  # the windows' days and the page
        response = client.get("/search/", params)
        return shown_ids(response), "4+ papers" in response.text

    assert shown((3, 6, 12)) == shown((3,)) == shown(())
    assert shown(())[1]


@pytest.mark.django_db
def test_filters_without_text_take_the_newest_candidates_newest_first(
    client, db, monkeypatch
):
    monkeypatch.setattr("papers.search.CANDIDATES", 4)
    arxiv_ids = dated_papers(6)

    response = client.get("/search/", {"category": "cs.LG"})

    assert shown_ids(response) == arxiv_ids[-4:][::-1]
    assert "4+ papers" in response.text


@pytest.mark.django_db
def test_a_capped_search_costs_a_bounded_number_of_queries(
    client, alice, db, monkeypatch, django_assert_max_num_queries
):
    monkeypatch.setattr("papers.search.CANDIDATES", 30)
    dated_papers(45)
    client.force_login(alice)

    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        response = client.get("/search/", {"q": "agent", "page": 2})

    assert len(shown_ids(response)) == 5


# Pages, input, queries


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
@pytest.mark.parametrize(
    "text", ['""', "&|!:*", "-", "- or -", "the", "of the -and", "(the) A* the."]
)
def test_text_without_searchable_words_finds_nothing(client, corpus, text):
    response = client.get("/search/", {"q": text})

    assert response.status_code == 200
    assert "No papers found" in response.text
    assert "There is no word to search for here" in response.text
    assert "Save this search" not in response.text


@pytest.mark.django_db
@pytest.mark.parametrize(
    "text",
    [
        '"',
        '"unterminated phrase',
        'a"b',
        "NEAR(agents robots)",
        "agents AND OR NOT robots",
        "title:agents",
        "{title abstract}: agents",
        "^agents",
        "agent*",
        "--agents",
        "(agents",
        "agents)",
        "'",
        "\\",
        "or",
        "agents or",
        "-agents or -robots",
        "agents:*",
        "!agents",
        "ẞ ǅ ﬁ 文字",
        "$\\alpha$",
    ],
)
def test_no_text_can_break_the_search(client, corpus, text):
    response = client.get("/search/", {"q": text})

    assert response.status_code == 200


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
def test_an_arxiv_id_costs_two_queries_to_open(
    client, corpus, django_assert_max_num_queries
):
    client.get("/search/", {"q": "agents"})

    # The paper; the form's topic choices are kept from the search before.
    with django_assert_max_num_queries(1):
        response = client.get("/search/", {"q": "2606.00003"})

    assert response["Location"] == "/papers/2606.00003/"


# The two databases


@postgresql_only
@pytest.mark.django_db
def test_the_fts5_migration_does_nothing_on_postgresql():
    assert "papers_paper_fts" not in connection.introspection.table_names()


@postgresql_only
@pytest.mark.django_db
def test_a_papers_search_vector_is_kept_in_its_row():
    # A long abstract: ~1.5 KB of text, a vector of ~2 KB (migration 0011).
    words = " ".join(f"finding{n} of the method{n}" for n in range(80))
    add_papers(paper_record("2606.00091", abstract=words))

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_size(search_vector) FROM papers_paper "
            "WHERE arxiv_id = '2606.00091'"
        )
        [(vector_bytes,)] = cursor.fetchall()
        cursor.execute(
            "SELECT reltoastrelid::regclass FROM pg_class "
            "WHERE relname = 'papers_paper'"
        )
        [(toast,)] = cursor.fetchall()
        cursor.execute(f"SELECT count(*) FROM {toast}")
        [(chunks,)] = cursor.fetchall()

    assert vector_bytes > 1500
    assert chunks == 0


# Every branch of papers.letters' patterns, and TeX around them left alone.
LETTERS = [
    r"B\'ezier",
    r"Poincar{\'e} and \'{e}t\'e",
    r"Erd\H{o}s, \v{C}ech, \c c, \u{g}, \k{a}, \r{u}, \d{s}, \b{t}, \t{oo}",
    r"{\AA}ngstr{\"o}m, {\aa}, \aa, \AA, \aA, \aab",
    r"{\ss}, \ss t, {\o}re, \O, \l, {\L}, {\ae}, \AE, \oe, {\OE}, \i, {\j}",
    r"\'{\i}, \"\i, \` a, \^ {e}, \~n, \=o, \.z",
    r"\omega, \emph{x}, \'{}, \\, $\alpha$, \cdot, \verb, \u, {\'",
    "Unicode: Bézier, Erdős, Ω, ß, ø",
    "",
]


# Every step of papers.letters.search_text, and what it leaves alone.
SEARCH_TEXTS = [
    *LETTERS,
    r"H$^2$SD, X$^{3}$-OPD, C$_2$, $10^5$, 10$^5$, a$^{b}$c$_{d}$, T$_c$, L$^p$",
    r"$\tau$-Rec, $\gamma$-ray, $\varepsilon$-greedy, $\Omega$, $\alpha_1$, $\alphax$",
    "λόγος ΆΈΉΊΌΎΏΪΫ άέήίόύώϊϋΐΰ",
    "αβγδεζηθικλμνξοπρστυφχψωϑϕϖϱς ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ",
    "Jørgensen Paweł Đorđe Ðóra æther Œuvre þorn ıi ÆØŁÞ Straße",  # noqa: RUF001
    r"Pawe{\l} $\alpha$ α ℓ² ü 漢字",  # noqa: RUF001
]


@postgresql_only
@pytest.mark.django_db
@pytest.mark.parametrize(
    ("function", "twin", "texts"),
    [
        ("papers_plain_letters", plain_letters, LETTERS),  # migration 0014
        ("papers_search_text", search_text, SEARCH_TEXTS),  # migration 0015
    ],
)
def test_the_indexs_functions_are_papers_letters(function, twin, texts):
    """The migrations write papers.letters' functions for PostgreSQL."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {function}(t) FROM unnest(%s::text[]) "
            "WITH ORDINALITY AS texts (t, n) ORDER BY n",
            [texts],
        )
        indexed = [text for (text,) in cursor.fetchall()]

    assert indexed == [twin(text) for text in texts]


@sqlite_only
@pytest.mark.django_db
def test_the_fts5_index_follows_new_changed_and_deleted_papers(client):
    add_papers(paper_record("2606.00081", title="Quantum walks", abstract="Old."))
    add_papers(paper_record("2606.00081", 2, title="Classical walks", abstract="New."))
    changed = {q: titles(client.get("/search/", {"q": q})) for q in ("quantum", "new")}
    Paper.objects.filter(arxiv_id="2606.00081").delete()

    assert changed == {"quantum": [], "new": ["Classical walks"]}
    assert titles(client.get("/search/", {"q": "classical"})) == []
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM papers_paper_fts_authors")
        assert cursor.fetchone() == (0,)


@sqlite_only
@pytest.mark.django_db
def test_the_fts5_triggers_exist_after_all_migrations():
    """Django rebuilds a SQLite table for most ALTERs, dropping its triggers: a
    later migration of papers_paper must recreate them (see migration 0005)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        triggers = {name for (name,) in cursor.fetchall()}

    assert triggers >= FTS_TRIGGERS


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_the_fts5_migration_indexes_the_papers_already_stored(client):
    call_command("migrate", "papers", "0003", verbosity=0)
    try:
        # No authors: today's ingest finds them by a key 0003 does not have.
        record = paper_record("2606.00091", title="Stored before search", authors=())
        upsert_records([record])
    finally:
        call_command("migrate", verbosity=0)

    assert titles(client.get("/search/", {"q": "stored"})) == ["Stored before search"]


@pytest.mark.sqlite
@postgresql_only  # the run it starts is the SQLite one
def test_this_module_passes_on_sqlite(tmp_path):
    result = run_module_on_sqlite(__file__, tmp_path)

    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert re.search(r"\d+ passed", result.stdout)
    # The SQLite-only tests ran: none was skipped for running on PostgreSQL.
    assert "PostgreSQL only" in result.stdout
    assert "runs in test_this_module_passes_on_sqlite" not in result.stdout


# Pure functions behind the queries and the highlights


def test_parse_query_reads_phrases_exclusions_and_alternatives():
    assert parse_query('tool  "large   language" -robot or -"red team" OR x') == [
        [Term("tool"), Term("large language"), Term("robot", excluded=True)],
        [Term("red team", excluded=True)],
        [Term("x")],
    ]
    assert parse_query('or "or" - "" x or') == [[Term("or"), Term("x")]]


def test_parse_query_reads_the_syntax_as_phones_and_input_methods_type_it():
    # Curly quotes, a minus sign and full-width letters.
    typed = "\u201cchain of thought\u201d \u2212reasoning \uff27\uff30\uff34"
    assert parse_query(typed) == [
        [
            Term("chain of thought"),
            Term("reasoning", excluded=True),
            Term("GPT", also="GPTs"),
        ]
    ]


def test_marked_runs_reads_every_run_the_database_marked():
    marked = (
        "multi-\ue000agent\ue001 \ue000Tool use\ue001 and \ue000LLMs\ue001 \ue000\ue001"
    )

    assert marked_runs(marked) == {("agent",), ("tool", "use"), ("llms",)}
    assert marked_runs(None) == set()


def test_mark_runs_marks_whole_words_and_drops_stray_sentinels():
    marked = mark_runs("Large\nLanguage models \ue000and\ue001 LLM-based", {("llm",)})

    assert to_html(marked) == "Large\nLanguage models and <mark>LLM-based</mark>"


def test_mark_runs_marks_a_phrase_only_where_its_words_stand_in_a_row():
    text = "World models, a world of models: world-model agents model the world."

    marked = mark_runs(text, {("world", "models"), ("world", "model"), ("agents",)})

    assert to_html(marked) == (
        "<mark>World models</mark>, a world of models: "
        "<mark>world-model agents</mark> model the world."
    )


def test_mark_runs_marks_only_whole_atoms_in_ascii_and_other_text_alike():
    runs = {("agent",), ("case",), ("bézier",), ("\u03b1",), ("x86",)}
    text = "Agents: an agent, snake_case, Bezier on x86_64 with alpha-agent."

    marked = to_html(mark_runs(text, runs))

    assert marked == (
        "Agents: an <mark>agent</mark>, <mark>snake_case</mark>, "
        "<mark>Bezier</mark> on <mark>x86_64</mark> with <mark>alpha-agent</mark>."
    )
    # The same words in a text that is not ASCII, marked a part at a time.
    assert to_html(mark_runs(f"{text} é", runs)) == f"{marked} é"


def test_to_html_escapes_everything_but_the_marks():
    html = to_html("\ue000<b>\ue001 & <script>x</script> \ue001stray")

    assert html == "<mark>&lt;b&gt;</mark> &amp; &lt;script&gt;x&lt;/script&gt; stray"


def test_excerpt_starts_a_little_before_the_first_match():
    text = " ".join(f"w{n}" for n in range(100)) + " needle " + "tail " * 100

    shown = excerpt(text, {("needle",)}, size=20)

    assert shown.startswith("… w95 w96 w97 w98 w99 needle tail")
    assert shown.endswith(" …")
    assert len(shown.split()) == 22


def test_an_excerpt_ends_with_an_ellipsis_only_when_words_follow():
    text = " ".join(f"w{n}" for n in range(20)) + " \n "

    assert excerpt(text, {("w5",)}, size=20) == text.strip()
    assert excerpt(text, {("w1",)}, size=19) == " ".join(text.split()[:19]) + " …"
    assert (
        excerpt(text, {("w9",)}, size=10) == "… " + " ".join(text.split()[7:17]) + " …"
    )
    assert excerpt("", {("w1",)}) == ""


def test_an_excerpt_starts_before_the_phrase_not_its_first_word():
    text = "world " * 30 + " ".join(f"w{n}" for n in range(30)) + " (world model)"

    shown = excerpt(text, {("world", "model")}, size=8)

    assert shown == "… w28 w29 (world model)"


@pytest.mark.parametrize(
    "query",
    [
        "",
        "q=a+%22quoted%22+%3Cb%3E+%26+%27x%27&category=cs.LG&from=2026-01-02&to=xx",
        f"q={'x' * 201}&category=%3Cnope%3E&from=2026-13-01&to=2026-01-01",
    ],
)
def test_the_search_forms_inputs_are_written_as_djangos_templates_write_them(
    db, monkeypatch, query
):
    def inputs() -> list[str]:
        form = SearchForm(QueryDict(query), names_version=None)
        form.is_valid()
        return [str(form[name]) for name in ("q", "category", "from", "to")]

    written = inputs()
    # Django's own, through input.html and attrs.html.
    monkeypatch.setattr(WrittenInput, "render", forms.Widget.render)

    assert written == inputs()


def test_each_search_error_is_tied_to_its_field(client, db):
    page = client.get("/search/", {"q": "agent", "from": "xx"}).text

    assert 'aria-describedby="id_from_error"' in page
    assert '<ul id="id_from_error"><li>' in page
    assert '<div class="notice search-errors" role="alert">' in page


def test_a_question_too_long_is_marked_on_its_field(client, topic):
    page = client.get(f"/topics/{topic.slug}/ask/", {"q": "a" * 600}).text

    assert 'aria-invalid="true" aria-describedby="id_q_error"' in page
    assert '<ul id="id_q_error"><li>' in page
