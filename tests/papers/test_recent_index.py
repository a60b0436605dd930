"""The full-text index of the newest papers (papers.recent_index): built once
the corpus is large, used by a search's first windows, rebuilt from a later day
once the papers past its cutoff have doubled."""

from __future__ import annotations

import importlib
from datetime import date
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection

from papers import recent_index
from papers import search
from papers.ingest.upsert import upsert_records
from papers.models import Paper
from papers.recent_index import recent_cutoff
from papers.recent_index import refresh_recent_index
from papers.search import search_papers
from papers.tasks import refresh_recent_search_index
from tests.papers.factories import paper_record

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="SQLite searches with FTS5"
)
FIRST_DAY = date(2026, 6, 1)


@pytest.fixture(autouse=True)
def newest(monkeypatch):
    monkeypatch.setattr(recent_index, "RECENT_PAPERS", 3)


def add_days(first: int, count: int) -> None:
    """Papers first..first+count-1, one a day from FIRST_DAY + first days."""
    upsert_records(
        [
            paper_record(f"2606.{n:05d}", title=f"Agents and models {n}")
            for n in range(first, first + count)
        ]
    )
    for n in range(first, first + count):
        Paper.objects.filter(arxiv_id=f"2606.{n:05d}").update(
            first_announced=FIRST_DAY + timedelta(days=n)
        )
    # The test's transaction checks its deferred keys now: PostgreSQL builds
    # no index on a table with checks pending (the task runs outside one).
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def plan(sql: str, params) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.django_db
def test_a_small_corpus_keeps_no_index_of_its_newest():
    add_days(1, 6)

    assert refresh_recent_index() == "not needed"
    assert recent_cutoff() is None


@pytest.mark.django_db
def test_it_is_built_from_the_day_of_the_newest_papers_and_searches_use_it(
    monkeypatch,
):
    add_days(1, 7)
    # A first window of the newest two papers (2026-06-07 on).
    monkeypatch.setattr(search, "WINDOW_PAPERS", (2,))
    cache.delete(search.WINDOWS_KEY)

    assert refresh_recent_index() == "built from 2026-06-06"

    assert recent_cutoff() == date(2026, 6, 6)
    queries = []
    with connection.execute_wrapper(
        lambda run, sql, params, many, context: (
            queries.append((sql, params)) or run(sql, params, many, context)
        )
    ):
        # What a search finds is the same with it.
        assert len(search_papers("agents")) == 7
    [first_window, the_whole_corpus] = [
        (sql, p) for sql, p in queries if "ts_rank" in sql
    ]
    assert date(2026, 6, 7) in first_window[1]
    # Beside the whole corpus's index (the date's dropped for this test, as
    # on 7 papers PostgreSQL would rather read that), the newest papers'.
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX paper_announced_idx")
    first_plan = plan(*first_window)
    assert "paper_search_recent_gin" in first_plan
    # Read there with its day: only the window's papers are taken from it.
    [index_condition] = [
        line for line in first_plan.split("\n") if "Index Cond" in line
    ]
    assert recent_index.DAY in index_condition
    assert "paper_search_vector_gin" in plan(*the_whole_corpus)
    # The window cannot read the whole corpus's index, whose cost PostgreSQL
    # underestimates for a common word: without the newest papers' index, it
    # reads the window's papers.
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {recent_index.INDEX}")
    assert "paper_search_vector_gin" not in plan(*first_window)


@pytest.mark.django_db
def test_an_index_of_the_plain_vector_from_an_earlier_release_is_built_again():
    add_days(1, 7)
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX {recent_index.INDEX} ON papers_paper USING gin "
            "(search_vector) WHERE first_announced >= DATE '2026-06-06' "
            "OR first_announced IS NULL"
        )

    # Windows would not ask for what it indexes: as if there were none.
    assert recent_cutoff() is None
    assert refresh_recent_index() == "built from 2026-06-06"
    assert recent_cutoff() == date(2026, 6, 6)


@pytest.mark.django_db
def test_an_index_without_the_days_from_an_earlier_release_is_built_again():
    add_days(1, 7)
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX {recent_index.INDEX} ON papers_paper USING gin "
            f"(({recent_index.VECTOR})) WHERE first_announced >= DATE '2026-06-06' "
            "OR first_announced IS NULL"
        )

    assert recent_cutoff() is None
    assert refresh_recent_index() == "built from 2026-06-06"
    assert recent_cutoff() == date(2026, 6, 6)


@pytest.mark.django_db(transaction=True)
def test_the_migration_builds_an_index_without_the_days_again_from_its_day():
    """Concurrently, as a migrate runs it (outside a transaction)."""
    add_days(1, 7)
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX {recent_index.INDEX} ON papers_paper USING gin "
            f"(({recent_index.VECTOR})) WHERE first_announced >= DATE '2026-06-03' "
            "OR first_announced IS NULL"
        )
    migration = importlib.import_module("papers.migrations.0016_recent_index_days")

    with connection.schema_editor(atomic=False) as editor:
        migration.with_days(None, editor)

    # From the same day, although the papers since would have it start later.
    assert recent_cutoff() == date(2026, 6, 3)
    assert refresh_recent_index() == "kept, from 2026-06-03"
    # Back: gone, with what a build cut short left; the extension stays.
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX {recent_index.BUILDING} ON papers_paper USING gin "
            f"(({recent_index.DAY}), ({recent_index.VECTOR}))"
        )
    with connection.schema_editor(atomic=False) as editor:
        migration.without(None, editor)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_class WHERE relname LIKE 'paper_search_recent%%'"
        )
        assert cursor.fetchone() == (0,)
        cursor.execute("SELECT count(*) FROM pg_extension WHERE extname = 'btree_gin'")
        assert cursor.fetchone() == (1,)


@pytest.mark.django_db
def test_a_paper_without_a_day_is_in_every_window_of_the_index(monkeypatch):
    """It comes first in a search's order (papers.search.NEWEST_FIRST)."""
    add_days(1, 7)
    add_days(99, 1)
    dayless = Paper.objects.get(arxiv_id="2606.00099")
    Paper.objects.filter(pk=dayless.pk).update(first_announced=None)
    refresh_recent_index()  # from 2026-06-06
    # One candidate, from a window of the newest three: no later query reads
    # the whole corpus, so a paper the window left out would not be found.
    monkeypatch.setattr(search, "CANDIDATES", 1)
    monkeypatch.setattr(search, "WINDOW_PAPERS", (3,))
    cache.delete(search.WINDOWS_KEY)

    assert search.window_starts() == [(3, date(2026, 6, 7), True)]
    assert search_papers("agents").ids == [dayless.pk]


@pytest.mark.django_db
def test_it_is_kept_until_the_papers_past_its_cutoff_double_then_moves_on():
    add_days(1, 7)
    refresh_recent_index()
    add_days(8, 2)  # 5 past the cutoff of 2026-06-06: not yet twice 3

    assert refresh_recent_index() == "kept, from 2026-06-06"

    add_days(10, 2)  # 7 past it
    assert refresh_recent_index() == "built from 2026-06-10"
    assert recent_cutoff() == date(2026, 6, 10)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_class WHERE relname LIKE 'paper_search_recent%%'"
        )
        assert cursor.fetchone()[0] == 1


@pytest.mark.django_db
def test_the_daily_task_tells_searches_which_windows_the_new_index_holds(
    monkeypatch,
):
    add_days(1, 7)
    monkeypatch.setattr(search, "WINDOW_PAPERS", (2, 6))
    cache.delete(search.WINDOWS_KEY)
    refresh_recent_index()  # from 2026-06-06
    kept = search.window_starts()
    add_days(8, 4)

    assert refresh_recent_search_index() == "built from 2026-06-10"

    # The first window started on 2026-06-07, in the old index, not the new.
    assert kept[0] == (2, date(2026, 6, 7), True)
    assert search.window_starts() == [
        (2, date(2026, 6, 11), True),
        (6, date(2026, 6, 7), False),
    ]


@pytest.mark.django_db
def test_a_build_cut_short_is_dropped_by_the_next_refresh():
    add_days(1, 7)
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX {recent_index.BUILDING} ON papers_paper (first_announced)"
        )

    assert refresh_recent_index() == "built from 2026-06-06"
    assert recent_cutoff() == date(2026, 6, 6)


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_it_is_built_concurrently():
    add_days(1, 7)

    assert refresh_recent_index() == "built from 2026-06-06"

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c "
            "ON c.oid = i.indexrelid WHERE c.relname = %s",
            [recent_index.INDEX],
        )
        assert cursor.fetchone() == (True,)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {recent_index.INDEX}")
