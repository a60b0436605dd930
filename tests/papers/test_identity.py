"""Who an author is (papers.identity): the normalised key, ingest finding
authors by it, and the merge the migration runs on authors stored before."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from papers.identity import author_key
from papers.identity import merge_authors
from papers.identity import split_group_authors
from papers.ingest.upsert import upsert_records
from papers.models import Affiliation
from papers.models import Author
from papers.models import AuthorFollow
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


def _stored_before(name: str, stale_key: str) -> Author:
    """An author as stored before keys: each its own, whatever its name."""
    return Author.objects.create(name=name, key=stale_key)


@pytest.mark.django_db
def test_merge_makes_authors_whose_keys_collide_one(alice, bob):
    upsert_records(
        [
            paper_record("2606.00001", authors=("Anna Kowalska",)),
            paper_record("2606.00002", authors=("Anna Kowalska",)),
            paper_record("2606.00003", authors=("Anna Kowalska",)),
        ]
    )
    kept = Author.objects.get()
    kept.key = "stale-key-1"
    kept.save()
    rare = _stored_before("ANNA KOWALSKA", "stale-key-2")
    other = _stored_before("Anna  Kowalska", "stale-key-3")
    alone = _stored_before("Ada Lovelace", "stale-key-4")
    # 2606.00003 printed her twice: once in each form, at two places.
    shared = Paper.objects.get(arxiv_id="2606.00003")
    Authorship.objects.create(paper=shared, author=rare, position=1)
    Authorship.objects.create(
        paper=Paper.objects.get(arxiv_id="2606.00001"), author=other, position=1
    )
    AuthorFollow.objects.create(user=alice, author=rare)
    AuthorFollow.objects.create(user=bob, author=kept)
    AuthorFollow.objects.create(user=bob, author=other)

    merged = merge_authors(Author, Authorship, AuthorFollow)

    assert merged == 2
    # The one with the most papers stays, with its printing of the name.
    assert list(Author.objects.order_by("pk").values_list("pk", "name", "key")) == [
        (kept.pk, "Anna Kowalska", "anna kowalska"),
        (alone.pk, "Ada Lovelace", "ada lovelace"),
    ]
    assert list(
        shared.authorships.order_by("position").values_list("author_id", "position")
    ) == [(kept.pk, 0), (kept.pk, 1)]
    assert set(kept.papers.values_list("arxiv_id", flat=True)) == {
        "2606.00001",
        "2606.00002",
        "2606.00003",
    }
    # Follows move with them, once per reader.
    assert sorted(AuthorFollow.objects.values_list("user_id", "author_id")) == sorted(
        [(alice.pk, kept.pk), (bob.pk, kept.pk)]
    )


@pytest.mark.django_db
def test_merge_with_nothing_to_merge_only_sets_keys():
    author = _stored_before("Émile Borel", "stale-key")

    assert merge_authors(Author, Authorship) == 0

    author.refresh_from_db()
    assert (author.name, author.key) == ("Émile Borel", "emile borel")


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


@pytest.mark.django_db
def test_authors_stored_with_their_group_are_split_in_place(alice, bob):
    upsert_records(
        [
            paper_record("2606.00001", authors=("Sherif El Abd",)),
            paper_record(
                "2606.00002",
                authors=(
                    "Gemma Team: Sherif El Abd",
                    "Vaibhav Aggarwal",
                    "Alek Andreev",
                ),
            ),
        ]
    )
    joined = Author.objects.get(name="Gemma Team: Sherif El Abd")
    sherif = Author.objects.get(name="Sherif El Abd")
    gemma_paper = Paper.objects.get(arxiv_id="2606.00002")
    affiliation = Affiliation.objects.create(name="Google DeepMind")
    gemma_paper.authorships.get(position=0).affiliations.add(affiliation)
    AuthorFollow.objects.create(user=alice, author=joined)
    AuthorFollow.objects.create(user=bob, author=joined)
    AuthorFollow.objects.create(user=bob, author=sherif)

    split = split_group_authors(Author, Authorship, AuthorFollow)

    assert split == 1
    assert not Author.objects.filter(pk=joined.pk).exists()
    # The group, then the person (the one already stored), then the rest.
    assert [
        (authorship.position, authorship.author.name)
        for authorship in gemma_paper.authorships.order_by("position")
    ] == [
        (0, "Gemma Team"),
        (1, "Sherif El Abd"),
        (2, "Vaibhav Aggarwal"),
        (3, "Alek Andreev"),
    ]
    assert set(sherif.papers.values_list("arxiv_id", flat=True)) == {
        "2606.00001",
        "2606.00002",
    }
    # The person keeps the affiliations; follows go to the person, once per reader.
    person = gemma_paper.authorships.get(position=1)
    assert list(person.affiliations.all()) == [affiliation]
    assert sorted(AuthorFollow.objects.values_list("user_id", "author_id")) == sorted(
        [(alice.pk, sherif.pk), (bob.pk, sherif.pk)]
    )
    assert split_group_authors(Author, Authorship, AuthorFollow) == 0


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
