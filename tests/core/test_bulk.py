"""core.bulk: rows written in bulk, on PostgreSQL and (run again) on SQLite."""

from __future__ import annotations

import pytest
from django.db import connection
from django.utils import timezone

from accounts.models import User
from core.bulk import ensure_names
from core.bulk import ids_by
from core.bulk import insert_rows
from core.bulk import update_rows
from papers.models import Affiliation
from papers.models import Category
from papers.models import ReaderModel
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


def test_update_rows_writes_the_fields_of_each_object_only(alice, bob):
    alice.first_name, alice.last_name = "Alice", "Liddell"
    bob.first_name = "Bob"

    update_rows(User, ["first_name"], [alice, bob])

    assert dict(User.objects.values_list("email", "first_name")) == {
        alice.email: "Alice",
        bob.email: "Bob",
    }
    assert User.objects.get(pk=alice.pk).last_name == ""  # not a field written


def test_update_rows_writes_bytes_and_dates(alice):
    stored = ReaderModel.objects.create(
        user=alice,
        terms=b"",
        weights=b"",
        positives=1,
        signal="",
        trained_at=timezone.now(),
        recommended=b"",
        scores=b"",
        scored_at=timezone.now(),
    )
    stored.recommended, stored.scored_at = b"\x00\x01\xff", timezone.now()

    update_rows(ReaderModel, ["recommended", "scored_at"], [stored])

    again = ReaderModel.objects.get(pk=stored.pk)
    assert bytes(again.recommended) == b"\x00\x01\xff"
    assert again.scored_at == stored.scored_at


# On SQLite the suite ran this module already; from PostgreSQL it runs it there.
@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the suite runs on SQLite"
)
@pytest.mark.sqlite
@pytest.mark.slow
def test_this_module_passes_on_sqlite(tmp_path):
    result = run_module_on_sqlite(__file__, tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
