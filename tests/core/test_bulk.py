"""core.bulk: rows written in bulk, on PostgreSQL and (run again) on SQLite."""

from __future__ import annotations

import pytest
from django.db import connection

from core.bulk import ensure_names
from core.bulk import ids_by
from core.bulk import insert_rows
from papers.models import Affiliation
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
    # Affiliations: authors are found by their key (papers.identity) instead.
    kept = Affiliation.objects.create(name="CERN")

    ids = ensure_names(Affiliation, {"CERN", "MIT"})

    assert ids["CERN"] == kept.pk
    assert ids == dict(Affiliation.objects.values_list("name", "pk"))
    assert ids_by(Affiliation, "name", ["MIT"]) == {"MIT": ids["MIT"]}


# On SQLite the suite ran this module already; from PostgreSQL it runs it there.
@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the suite runs on SQLite"
)
@pytest.mark.sqlite
@pytest.mark.slow
def test_this_module_passes_on_sqlite(tmp_path):
    result = run_module_on_sqlite(__file__, tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
