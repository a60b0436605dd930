from __future__ import annotations

import threading
import time
from dataclasses import replace
from datetime import UTC
from datetime import date
from datetime import datetime

import pytest
from django.contrib.postgres.search import SearchQuery
from django.db import IntegrityError
from django.db import connections
from django.db import transaction

from papers.ingest.records import AuthorRecord
from papers.ingest.records import VersionRecord
from papers.ingest.upsert import upsert_records
from papers.models import Authorship
from papers.models import Paper
from tests.concurrency import waiting_on_a_lock
from tests.papers.factories import paper_record

pytestmark = pytest.mark.django_db


def table_snapshot() -> list[tuple]:
    return list(
        Paper.objects.order_by("arxiv_id").values_list(
            "arxiv_id", "version", "title", "author_names", "first_announced"
        )
    ) + list(
        Authorship.objects.order_by("paper__arxiv_id", "position").values_list(
            "paper__arxiv_id", "position", "author__name"
        )
    )


def test_creates_papers_with_ordered_authors_affiliations_and_categories():
    record = replace(
        paper_record(categories=("cs.CL", "cs.AI")),
        authors=(
            AuthorRecord("Zoë Zed", ("Université de Paris",)),
            AuthorRecord("Ann Able", ("MIT", "Harvard")),
        ),
    )
    result = upsert_records([record])

    paper = Paper.objects.get(arxiv_id="2606.00001")
    assert result.new_ids == [paper.pk]
    assert [a.author.name for a in paper.authorships.order_by("position")] == [
        "Zoë Zed",
        "Ann Able",
    ]
    second = paper.authorships.get(position=1)
    assert sorted(second.affiliations.values_list("name", flat=True)) == [
        "Harvard",
        "MIT",
    ]
    assert sorted(paper.categories.values_list("code", flat=True)) == ["cs.AI", "cs.CL"]
    assert paper.primary_category.code == "cs.CL"
    assert paper.primary_category.name == "Computation and Language"
    # Submitted Monday 2026-06-08 15:00 UTC (11:00 ET): listed on Tuesday.
    assert paper.first_announced == date(2026, 6, 9)


def test_ingesting_the_same_records_twice_leaves_the_same_rows():
    records = [paper_record(f"2606.{n:05d}") for n in range(1, 30)]
    upsert_records(records)
    before = table_snapshot()

    result = upsert_records(records)

    assert result.new_ids == []
    assert result.updated_ids == []
    assert result.unchanged == 29
    assert table_snapshot() == before


def test_newer_version_updates_content_but_keeps_first_version_facts():
    upsert_records([paper_record(version=1, title="Old title", authors=("A", "B"))])
    first = Paper.objects.get()
    v2_time = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)

    result = upsert_records(
        [
            paper_record(
                version=2,
                title="New title",
                authors=("B", "C", "D"),
                published=None,
                updated=v2_time,
            )
        ]
    )

    paper = Paper.objects.get()
    assert result.updated_ids == [paper.pk]
    assert (paper.version, paper.title, paper.author_names) == (
        2,
        "New title",
        "B, C, D",
    )
    assert paper.updated == v2_time
    assert paper.published == first.published
    assert paper.first_announced == first.first_announced


@pytest.mark.parametrize("version", [1, 2])
def test_older_or_equal_version_changes_nothing(version):
    upsert_records([paper_record(version=2, title="Version two")])

    result = upsert_records([paper_record(version=version, title="Something else")])

    assert result.unchanged == 1
    assert Paper.objects.get().title == "Version two"


def test_record_without_version_number_is_ordered_by_its_update_time():
    upsert_records([paper_record(version=2, updated=datetime(2026, 6, 10, tzinfo=UTC))])

    older = paper_record(
        version=None, title="Stale", updated=datetime(2026, 6, 9, tzinfo=UTC)
    )
    newer = paper_record(
        version=None, title="Fresh", updated=datetime(2026, 6, 12, tzinfo=UTC)
    )

    assert upsert_records([older]).unchanged == 1
    assert upsert_records([newer]).updated_ids
    assert Paper.objects.get().title == "Fresh"


def test_duplicate_entries_in_one_batch_keep_the_newest():
    result = upsert_records(
        [
            paper_record(version=3, title="Three"),
            paper_record(version=1, title="One"),
            paper_record(version=2, title="Two"),
        ]
    )
    assert len(result.new_ids) == 1
    assert Paper.objects.get().title == "Three"


def test_database_refuses_a_second_row_for_the_same_arxiv_id():
    upsert_records([paper_record()])
    with pytest.raises(IntegrityError):
        Paper.objects.create(arxiv_id="2606.00001", title="Duplicate")


def test_search_vector_is_maintained_on_postgresql():
    upsert_records(
        [
            paper_record("2606.00001", title="Tree search for rollouts"),
            paper_record("2606.00002", title="Protein folding", abstract="Biology."),
        ]
    )
    found = Paper.objects.filter(search_vector=SearchQuery("rollout", config="english"))
    assert list(found.values_list("arxiv_id", flat=True)) == ["2606.00001"]

    Paper.objects.filter(arxiv_id="2606.00002").update(title="Rollouts in proteins")
    assert found.count() == 2


def mojibake(text: str, times: int = 2) -> str:
    """UTF-8 read as Windows-1252, `times` over: "\u03b1" twice is "ÃŽÂ±"."""
    for _ in range(times):
        text = text.encode("utf-8").decode("cp1252", errors="replace")
    return text


def test_a_correct_ingest_repairs_text_stored_with_mojibake():
    title = "$\\alpha$-divergence for Schrödinger bridges: \u03b1 > 0"
    garbled = mojibake(title)
    assert garbled != title
    upsert_records([paper_record("2607.00001", title=garbled)])

    result = upsert_records([paper_record("2607.00001", title=title)])

    assert len(result.updated_ids) == 1
    assert Paper.objects.get().title == title


def test_an_equal_version_with_other_text_still_changes_nothing():
    upsert_records([paper_record("2607.00001", title="Réseaux \u03b1")])

    result = upsert_records([paper_record("2607.00001", title="Réseaux \u03b2")])

    assert (result.updated_ids, result.unchanged) == ([], 1)
    assert Paper.objects.get().title == "Réseaux \u03b1"


def test_a_cross_list_read_from_a_listing_is_announced_that_day():
    """A listing carries no submission date; a cross-list is listed in its own
    category the same day, so the listing's day is its announcement's."""
    listed = paper_record(announced=date(2026, 8, 12), announce_type="cross")
    upsert_records([replace(listed, published=None, updated=None)])

    assert Paper.objects.get().first_announced == date(2026, 8, 12)


def test_a_paper_stored_without_a_day_takes_the_day_a_later_record_knows():
    """First read as a replacement in a listing (no day), then in a record that
    knows when it was listed: the day is filled, and the paper counts as
    changed (digests and lists find it by that day)."""
    listed = paper_record(
        version=2, announced=date(2026, 8, 12), announce_type="replace"
    )
    upsert_records([replace(listed, published=None, updated=None)])
    assert Paper.objects.get().first_announced is None

    result = upsert_records([paper_record(version=2)])

    paper = Paper.objects.get()
    assert (paper.first_announced, result.updated_ids) == (date(2026, 6, 9), [paper.pk])
    assert paper.published == datetime(2026, 6, 8, 15, 0, tzinfo=UTC)
    assert upsert_records([paper_record(version=2)]).unchanged == 1


def test_a_replacement_read_from_a_listing_keeps_the_version_history():
    submitted = datetime(2026, 6, 8, 15, 0, tzinfo=UTC)
    history = (VersionRecord(1, submitted, "1MB"),)
    upsert_records([paper_record(versions=history)])
    listed = paper_record(
        version=2, title="Revised", announced=date(2026, 8, 12), announce_type="replace"
    )

    upsert_records([replace(listed, published=None, updated=None)])

    paper = Paper.objects.get()
    assert (paper.version, paper.title) == (2, "Revised")
    assert paper.versions == [
        {"version": 1, "submitted": submitted.isoformat(), "size": "1MB"}
    ]


def test_a_withdrawal_replacing_a_listed_version_is_read_from_the_fuller_record():
    """A listing carries no comment: its replacement wiped the paper's, and
    the API's record of the same version, which says it is withdrawn, was
    "not newer" and changed nothing."""
    first = datetime(2026, 6, 8, 15, 0, tzinfo=UTC)
    upsert_records(
        [
            paper_record(
                comment="Workshop paper, 6 pages",
                authors=(),
                updated=first,
            )
        ]
    )
    listed = paper_record(
        version=2, announced=date(2026, 8, 12), announce_type="replace"
    )
    upsert_records([replace(listed, published=None, updated=None)])
    after_listing = Paper.objects.get()

    withdrawn = "This paper has been withdrawn by the authors due to an error"
    result = upsert_records(
        [
            paper_record(
                version=2,
                comment=withdrawn,
                withdrawn=True,
                published=first,
                updated=datetime(2026, 8, 11, 9, 0, tzinfo=UTC),
            )
        ]
    )

    paper = Paper.objects.get()
    assert after_listing.comment == "Workshop paper, 6 pages"
    assert result.updated_ids == [paper.pk]
    assert (paper.version, paper.withdrawn, paper.comment) == (2, True, withdrawn)
    assert paper.updated == datetime(2026, 8, 11, 9, 0, tzinfo=UTC)
    # Read again, the same record changes nothing.
    assert (
        upsert_records([paper_record(version=2, updated=paper.updated)]).unchanged == 1
    )


@pytest.mark.django_db(transaction=True)
def test_an_older_version_never_replaces_a_newer_one_stored_concurrently():
    upsert_records([paper_record("2606.00001", 1, title="Version one")])
    wrote_v3, commit_v3 = threading.Event(), threading.Event()

    def ingest_v3():  # one page of a run: upsert, tag, commit
        try:
            with transaction.atomic():
                upsert_records([paper_record("2606.00001", 3, title="Version three")])
                wrote_v3.set()
                assert commit_v3.wait(30)
        finally:
            connections.close_all()

    def ingest_v2():  # another run, a moment later, holding v2
        try:
            upsert_records([paper_record("2606.00001", 2, title="Version two")])
        finally:
            connections.close_all()

    first = threading.Thread(target=ingest_v3)
    first.start()
    assert wrote_v3.wait(30)
    second = threading.Thread(target=ingest_v2)
    second.start()
    for _ in range(100):  # until v2's UPDATE waits for v3's row lock
        if waiting_on_a_lock():
            break
        time.sleep(0.05)
    commit_v3.set()
    first.join(30)
    second.join(30)

    paper = Paper.objects.get()
    assert (paper.version, paper.title) == (3, "Version three")


def test_a_record_without_a_license_keeps_the_stored_one():
    """The query API's format has none: a newer version read from it wiped it."""
    licence = "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
    upsert_records([paper_record("2606.00001", 1, license=licence)])

    upsert_records([paper_record("2606.00001", 2, license="")])

    assert Paper.objects.get().license == licence


@pytest.mark.parametrize("field", ["primary_category", "license", "doi", "journal_ref"])
def test_a_same_version_record_fills_in_what_the_stored_one_lacked(field):
    """A snapshot's sorted categories name no primary; an API record has no
    license: whichever format came first, the other fills in the blank."""
    known = {
        "license": "http://creativecommons.org/licenses/by/4.0/",
        "doi": "10.1000/xyz",
        "journal_ref": "J. Agents 1 (2026)",
    }
    poorer = paper_record("2606.00001", 2)
    poorer = (
        replace(poorer, primary_category=None)
        if field == "primary_category"
        else poorer
    )
    richer = paper_record(
        "2606.00001", 2, **{k: v for k, v in known.items() if k == field}
    )
    upsert_records([poorer])

    result = upsert_records([richer])

    paper = Paper.objects.get()
    stored = (
        paper.primary_category.code
        if field == "primary_category"
        else getattr(paper, field)
    )
    assert stored == ("cs.LG" if field == "primary_category" else known[field])
    assert result.updated_ids == [paper.pk]


def test_an_older_versions_doi_is_not_the_newer_ones():
    upsert_records([paper_record("2606.00001", 2)])

    upsert_records([paper_record("2606.00001", 1, doi="10.1000/v1")])

    assert Paper.objects.get().doi == ""
