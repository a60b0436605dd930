"""Rows written before a release that refuses or cleans what they hold: after
the upgrade, what readers see of them still works."""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from dataclasses import replace

import feedparser
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from accounts import feed_tokens
from papers.ingest.records import AuthorRecord
from papers.ingest.upsert import upsert_records
from papers.models import Affiliation
from papers.models import Author
from papers.models import AuthorFollow
from papers.models import Paper
from tests.clients import signed_in
from tests.papers.factories import paper_record
from tests.sqlite_run import run_module_on_sqlite
from topics.following import set_following
from topics.models import SavedSearch
from topics.models import Topic
from topics.saved_searches import create_search
from topics.saved_searches import update_search

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("old", ["A page\x0cbreak", "An \x1b escape", "Non\ufffe"])
def test_topic_feed_of_a_description_saved_before_the_refusal(client, corpus, old):
    Topic.objects.filter(pk=corpus["agents"].pk).update(description=old)

    response = client.get("/topics/rl-for-llm-agents/feed/")

    assert response.status_code == 200
    assert not feedparser.parse(response.content).bozo


def test_topic_feed_of_an_author_stored_before_names_were_cleaned(client, corpus):
    Paper.objects.filter(arxiv_id="2606.00001").update(
        author_names="Ada \x1bLovelace, Alan Turing"
    )

    response = client.get("/topics/rl-for-llm-agents/feed/")

    assert response.status_code == 200
    assert not feedparser.parse(response.content).bozo


def test_private_feed_of_a_search_named_before_the_refusal(alice, corpus):
    search = create_search(alice, name="Old ideas", query="old", syntax="search")
    SavedSearch.objects.filter(pk=search.pk).update(name="Old\ufffe ideas")
    set_following(alice, corpus["agents"], True)

    response = Client().get(f"/feed/{feed_tokens.create_feed(alice)}.atom")

    assert response.status_code == 200
    assert not feedparser.parse(response.content).bozo


@pytest.mark.django_db(transaction=True)
def test_a_search_saved_with_spaces_around_before_they_were_stripped(alice, corpus):
    """Migration topics/0022: its 'Run it' says it is saved, as a new one's does."""
    executor = MigrationExecutor(connection)
    before = [("topics", "0021_topic_text_without_page_breaks")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("topics", "SavedSearch")
    old.objects.create(
        user_id=alice.pk, name="Robots", query=" robot ", syntax="search"
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    reader = signed_in(alice)
    page = reader.get("/settings/").text
    run = page.split('<a href="/search/?q=')[1].split('"')[0]
    results = reader.get(f"/search/?q={run}").text.split('class="save-search"')[1]
    assert "Saved as “Robots”" in results


@pytest.mark.django_db(transaction=True)
def test_topic_text_saved_before_control_characters_were_refused(caplog):
    """Migration topics/0023: a curator can save the topic again (admin runs
    full_clean); a name that cleans to another topic's takes its slug, or
    stays for a curator when that is taken too."""
    executor = MigrationExecutor(connection)
    before = [("topics", "0022_saved_search_query_stripped")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("topics", "Topic")
    fields = {"rule": "ti:robot"}
    old.objects.create(name="Agents", slug="agents", **fields)
    old.objects.create(
        name="Robot\x1b Learning ",
        slug="robots",
        description="A page\x0cbreak",
        definition="\u202eReversed\u202c, then \x7fnot",
        glossary="RL:\x07 Reinforcement Learning\x0cLLM: Large Language Model",
        **fields,
    )
    old.objects.create(name="Agents\ufffe", slug="agents-2", **fields)
    old.objects.create(name="Agents (agents-3)", slug="other", **fields)
    old.objects.create(name="Agents\x1b", slug="agents-3", **fields)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    # At WARNING whatever the run's level: caplog reads what the logger lets by.
    with caplog.at_level(logging.WARNING, logger="topics"):
        executor.migrate(executor.loader.graph.leaf_nodes())

    robots = Topic.objects.get(slug="robots")
    assert (robots.name, robots.description, robots.definition, robots.glossary) == (
        "Robot Learning",
        "A page break",
        "Reversed, then not",
        "RL: Reinforcement Learning\nLLM: Large Language Model",
    )
    assert Topic.objects.get(slug="agents").name == "Agents"
    assert Topic.objects.get(slug="agents-2").name == "Agents (agents-2)"
    assert Topic.objects.get(slug="agents-3").name == "Agents\x1b"
    assert any("keeps its name" in record.msg for record in caplog.records)
    for topic in Topic.objects.exclude(slug="agents-3"):
        topic.full_clean()


@pytest.mark.django_db(transaction=True)
def test_a_search_named_before_control_characters_were_refused(alice):
    """Migration topics/0023: the reader can change it (the settings' form
    sends its name back), and a name that cleans to another of theirs is
    numbered."""
    executor = MigrationExecutor(connection)
    before = [("topics", "0022_saved_search_query_stripped")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("topics", "SavedSearch")
    fields = {"user_id": alice.pk, "query": "robot", "syntax": "search"}
    old.objects.create(name="Robots", **fields)
    old.objects.create(name="Robots\x1b", **fields)
    old.objects.create(name="Old\ufffe ideas", **fields)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    names = SavedSearch.objects.order_by("pk").values_list("name", flat=True)
    assert list(names) == ["Robots", "Robots (2)", "Old ideas"]
    for search in SavedSearch.objects.all():
        update_search(search, name=search.name, query="robots")


def migrate_from(app, migration):
    """Migrate back to before `migration` (the rows a test then writes are an
    older release's), and return a function migrating forward to the latest."""
    executor = MigrationExecutor(connection)
    executor.migrate([(app, migration)])

    def forward():
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())

    return forward


@pytest.mark.django_db(transaction=True)
def test_author_names_stored_before_control_characters_were_dropped(alice, caplog):
    """Migration papers/0017: the names read as today's ingest writes them, on
    the paper's page, in the API and on the author's page; a name that then is
    another author's joins that author, with its papers and followers."""
    migrate_forward = migrate_from("papers", "0016_recent_index_days")
    upsert_records(
        [
            paper_record("2606.00001", authors=("Ada Lovelace", "Alan Turing")),
            paper_record("2606.00002", title="Compilers", authors=("Grace Hopper",)),
            # An escape within a word: its key was another author's.
            paper_record("2606.00003", title="Cobol", authors=("Gra\x1bce Hopper",)),
        ]
    )
    Author.objects.filter(name="Alan Turing").update(name="Alan\x0cTuring")
    Paper.objects.filter(arxiv_id="2606.00001").update(
        author_names="Ada Lovelace, Alan\x0cTuring"
    )
    escaped = Author.objects.get(name="Gra\x1bce Hopper")
    AuthorFollow.objects.create(user=alice, author=escaped)

    with caplog.at_level(logging.INFO, logger="papers"):
        migrate_forward()

    client = Client()
    page = client.get("/papers/2606.00001/").text
    assert "Alan Turing" in page
    assert "\x0c" not in page
    detail = client.get("/api/v1/papers/2606.00001/").json()
    assert [author["name"] for author in detail["authors"]] == [
        "Ada Lovelace",
        "Alan Turing",
    ]
    listed = Paper.objects.get(arxiv_id="2606.00001").author_names
    assert listed == "Ada Lovelace, Alan Turing"
    hopper = Author.objects.get(name="Grace Hopper")
    assert not Author.objects.filter(name__contains="\x1b").exists()
    author_page = client.get(hopper.get_absolute_url()).text
    assert "Compilers" in author_page
    assert "Cobol" in author_page
    assert AuthorFollow.objects.get(user=alice).author == hopper
    assert any("joins author" in record.getMessage() for record in caplog.records)


@pytest.mark.django_db(transaction=True)
def test_text_stored_decomposed_before_ingest_composed_it():
    """Migration papers/0018: a title, an abstract and a name whose accents
    were stored as letters of their own (NFD) read composed (NFC), as today's
    ingest writes them: search marks the word a reader typed, and the page
    and the API give the text a reader would search for."""
    migrate_forward = migrate_from(
        "papers", "0017_author_names_without_control_characters"
    )
    upsert_records(
        [
            paper_record("2606.00001", title="Plain agents"),
            paper_record(
                "2606.00002",
                title="Bézier curves for Schrödinger bridges",
                abstract="Smooth Bézier paths.",
                authors=("Jörg Müller", "Zoë Ng"),
            ),
        ]
    )
    author = Author.objects.filter(name="Jörg Müller")
    author.update(name=unicodedata.normalize("NFD", "Jörg Müller"))
    Paper.objects.filter(arxiv_id="2606.00002").update(
        **{
            field: unicodedata.normalize("NFD", value)
            for field, value in {
                "title": "Bézier curves for Schrödinger bridges",
                "abstract": "Smooth Bézier paths.",
                "author_names": "Jörg Müller, Zoë Ng",
            }.items()
        }
    )

    migrate_forward()

    client = Client()
    found = client.get("/search/", {"q": "Bézier"})
    [paper] = found.context["page"]
    assert paper.highlighted_title == (
        "<mark>Bézier</mark> curves for Schrödinger bridges"
    )
    assert "Smooth <mark>Bézier</mark> paths." in paper.snippet
    page = client.get("/papers/2606.00002/").text
    assert "Jörg Müller" in page
    assert "Schrödinger" in page
    detail = client.get("/api/v1/papers/2606.00002/").json()
    assert detail["title"] == "Bézier curves for Schrödinger bridges"
    assert detail["abstract"] == "Smooth Bézier paths."
    assert [author["name"] for author in detail["authors"]] == ["Jörg Müller", "Zoë Ng"]
    listed = Paper.objects.get(arxiv_id="2606.00002").author_names
    assert listed == "Jörg Müller, Zoë Ng"


@pytest.mark.django_db(transaction=True)
def test_journal_refs_and_dois_stored_decomposed_before_ingest_composed_them():
    """Migration papers/0022: 0018 composed the text ingest then composed,
    not the journal reference and DOI, which it composed as well: a stored
    NFD one differed from the same reference typed or sent composed."""
    migrate_forward = migrate_from("papers", "0021_paper_arxiv_id_start_idx")
    upsert_records([paper_record("2606.00001"), paper_record("2606.00002")])
    Paper.objects.filter(arxiv_id="2606.00002").update(
        journal_ref=unicodedata.normalize("NFD", "Annales Henri Poincaré 3 (2026)"),
        doi=unicodedata.normalize("NFD", "10.1000/poincaré.7"),
    )

    migrate_forward()

    detail = Client().get("/api/v1/papers/2606.00002/").json()
    assert detail["journal_ref"] == "Annales Henri Poincaré 3 (2026)"
    assert detail["doi"] == "10.1000/poincaré.7"
    assert Paper.objects.filter(journal_ref__contains="Poincaré").count() == 1


@pytest.mark.django_db(transaction=True)
def test_topic_text_saved_decomposed_before_it_was_composed():
    """Migration topics/0026: a topic's name, description, definition and
    glossary saved with NFD accents read composed, as a curator's save now
    stores them; a name that then is another topic's takes its slug."""
    migrate_forward = migrate_from("topics", "0025_topic_date")
    nfd = functools.partial(unicodedata.normalize, "NFD")
    Topic.objects.create(name="Café", slug="cafe", rule="ti:cafe")
    Topic.objects.create(
        name=nfd("Café"),
        slug="cafe-nfd",
        rule="ti:cafe",
        description=nfd("Café models."),
        definition=nfd("Schrödinger\nand Bézier."),
        glossary=nfd("CM: Café Models"),
    )

    migrate_forward()

    topic = Topic.objects.get(slug="cafe-nfd")
    assert (topic.name, topic.description, topic.definition, topic.glossary) == (
        "Café (cafe-nfd)",
        "Café models.",
        "Schrödinger\nand Bézier.",
        "CM: Café Models",
    )
    assert Topic.objects.get(slug="cafe").name == "Café"


@pytest.mark.django_db(transaction=True)
def test_affiliations_stored_before_ingest_cleaned_them(caplog):
    """Migration papers/0019: an affiliation with a control character, or its
    accents decomposed, reads as today's ingest writes it; one that then is
    another's (names are unique) is that one on its authors' papers."""
    migrate_forward = migrate_from("papers", "0018_text_composed")
    authors = (
        AuthorRecord("Ada Lovelace", ("Analytical Engines", "Université Paris")),
        AuthorRecord("Alan Turing", ("Bletchley Park",)),
    )
    upsert_records([replace(paper_record("2606.00001"), authors=authors)])
    Affiliation.objects.filter(name="Analytical Engines").update(
        name="Analytical\x1b Engines"
    )
    Affiliation.objects.filter(name="Université Paris").update(
        name=unicodedata.normalize("NFD", "Université Paris")
    )
    # Stored once as ingest writes it today, once as an old release did.
    old = Affiliation.objects.create(name="Bletchley\x0cPark")
    for authorship in Paper.objects.get().authorships.all():
        authorship.affiliations.add(old)

    with caplog.at_level(logging.INFO, logger="papers"):
        migrate_forward()

    detail = Client().get("/api/v1/papers/2606.00001/").json()
    assert [sorted(author["affiliations"]) for author in detail["authors"]] == [
        ["Analytical Engines", "Bletchley Park", "Université Paris"],
        ["Bletchley Park"],
    ]
    page = Client().get("/papers/2606.00001/").text
    assert "Analytical Engines" in page
    assert "Université Paris" in page
    assert not Affiliation.objects.filter(name__contains="\x0c").exists()
    assert any("joins affiliation" in record.getMessage() for record in caplog.records)


@pytest.mark.sqlite
@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the run it starts is the SQLite one"
)
def test_this_module_passes_on_sqlite(tmp_path):
    """The migrations select and write the old rows their own way on SQLite,
    which `make run` uses."""
    result = run_module_on_sqlite(__file__, tmp_path)

    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert re.search(r"\d+ passed", result.stdout)
