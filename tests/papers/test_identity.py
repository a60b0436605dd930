"""Who an author is (papers.identity): the normalised key, ingest finding
authors by it, and the merge the migration runs on authors stored before."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from papers.identity import author_key
from papers.ingest.upsert import upsert_records
from papers.models import Author
from papers.models import Authorship
from papers.models import Paper
from tests.papers.factories import paper_record


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("José García", "Jose Garcia"),  # accents
        ("Jürgen Müller", "JURGEN MULLER"),  # accents and case
        ("Ada  Lovelace", " Ada Lovelace "),  # whitespace
        ("J.Smith", "J. Smith"),  # punctuation spacing
        ("J. Smith", "J Smith"),  # the initial's dot
        ("Jean-Pierre Serre", "Jean Pierre Serre"),
        ("John Smith Jr.", "John Smith, Jr"),  # a suffix however punctuated
        ("Straße", "STRASSE"),  # case folding, not only lowering
        ("Ǆemal", "DŽemal"),  # compatibility forms
    ],
)
def test_printings_that_differ_only_in_form_have_one_key(one, other):
    assert author_key(one) == author_key(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("J. Smith", "John Smith"),  # an initial is not a name
        ("John Smith", "John Smith Jr."),  # a son is not his father
        ("Li Wei", "Wei Li"),  # the order of names
        ("Łukasz Nowak", "Lukasz Nowak"),  # Ł has no decomposition
    ],
)
def test_different_names_keep_different_keys(one, other):
    assert author_key(one) != author_key(other)


def test_the_key_is_lowercase_words_separated_by_one_space():
    assert author_key("  Émile  D'Arcy-Thompson, Jr. ") == "emile d arcy thompson jr"
    assert author_key("李 伟") == "李 伟"  # other scripts are kept


@pytest.mark.django_db
def test_ingest_finds_an_author_by_key_and_shows_the_first_printing():
    upsert_records([paper_record("2606.00001", authors=("José García", "Ada Byron"))])
    upsert_records(
        [
            paper_record("2606.00002", authors=("JOSE GARCIA",)),
            paper_record("2606.00003", authors=("J. Smith", "J.Smith")),
        ]
    )

    garcia = Author.objects.get(key="jose garcia")
    assert garcia.name == "José García"
    assert set(garcia.papers.values_list("arxiv_id", flat=True)) == {
        "2606.00001",
        "2606.00002",
    }
    # One person printed twice on one paper: one author in two places.
    smith = Author.objects.get(key="j smith")
    assert list(
        Authorship.objects.filter(paper__arxiv_id="2606.00003").values_list(
            "author_id", "position"
        )
    ) == [(smith.pk, 0), (smith.pk, 1)]
    # The paper's printed names are kept as arXiv printed them.
    assert Paper.objects.get(arxiv_id="2606.00002").author_names == "JOSE GARCIA"


@pytest.mark.django_db(transaction=True)
def test_the_migration_merges_authors_stored_before_it():
    """0007 on a database holding authors stored one per printed name (and a
    paper printing one of them twice): it runs, merges and then holds keys
    unique, with the foreign keys still checked."""
    executor = MigrationExecutor(connection)
    before = [("papers", "0006_ratings")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    paper = old.get_model("papers", "Paper").objects.create(
        arxiv_id="2606.00001", title="T"
    )
    author = old.get_model("papers", "Author")
    authorship = old.get_model("papers", "Authorship")
    accented = author.objects.create(name="José García")
    plain = author.objects.create(name="Jose Garcia")
    authorship.objects.create(paper=paper, author=accented, position=0)
    authorship.objects.create(paper=paper, author=plain, position=1)
    authorship.objects.create(
        paper=old.get_model("papers", "Paper").objects.create(
            arxiv_id="2606.00002", title="U"
        ),
        author=plain,
        position=0,
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert list(Author.objects.values_list("pk", "name", "key")) == [
        (plain.pk, "Jose Garcia", "jose garcia")
    ]
    assert list(
        Authorship.objects.filter(paper__arxiv_id="2606.00001")
        .order_by("position")
        .values_list("author_id", flat=True)
    ) == [plain.pk, plain.pk]


@pytest.mark.django_db(transaction=True)
def test_the_migration_splits_authors_stored_with_their_group():
    executor = MigrationExecutor(connection)
    before = [("papers", "0011_search_vector_inline")]
    executor.migrate(before)
    upsert_records(
        [paper_record("2606.00001", authors=("NVIDIA: Aditi", "Niket Agarwal"))]
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert list(
        Authorship.objects.order_by("position").values_list("author__name", flat=True)
    ) == ["NVIDIA", "Aditi", "Niket Agarwal"]
