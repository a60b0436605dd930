"""core.bulk: rows written in bulk, on PostgreSQL and (run again) on SQLite."""

from __future__ import annotations

import pytest
from django.db import connection

from core.bulk import ensure_names
from core.bulk import ids_by
from core.bulk import insert_rows
from papers.models import Author
from papers.models import Category
from tests.sqlite_run import run_module_on_sqlite

pytestmark = pytest.mark.django_db


def test_insert_rows_writes_plain_rows():
    insert_rows(Category, ["code", "name"], [("cs.AI", "AI"), ("cs.LG", "ML")])

    assert dict(Category.objects.values_list("code", "name")) == {
        "cs.AI": "AI",
        "cs.LG": "ML",
    }


def test_insert_rows_can_skip_rows_that_exist():
    Category.objects.create(code="cs.AI", name="Kept")

    insert_rows(
        Category,
        ["code", "name"],
        [("cs.AI", "Replaced?"), ("cs.LG", "ML")],
        ignore_conflicts=True,
    )

    assert dict(Category.objects.values_list("code", "name")) == {
        "cs.AI": "Kept",
        "cs.LG": "ML",
    }


def test_ensure_names_creates_the_missing_and_maps_every_name():
    kept = Author.objects.create(name="Ada Lovelace")

    ids = ensure_names(Author, {"Ada Lovelace", "Alan Turing"})

    assert ids["Ada Lovelace"] == kept.pk
    assert ids == dict(Author.objects.values_list("name", "pk"))
    assert ids_by(Author, "name", ["Alan Turing"]) == {
        "Alan Turing": ids["Alan Turing"]
    }


# On SQLite the suite ran this module already; from PostgreSQL it runs it there.
@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the suite runs on SQLite"
)
@pytest.mark.sqlite
@pytest.mark.slow
def test_this_module_passes_on_sqlite(tmp_path):
    result = run_module_on_sqlite(__file__, tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
