"""The release that keys cached renders: what changes it and what does not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.release import ROOT
from core.release import release_of


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the sources that name a release."""
    for source in ("templates", "papers"):
        shutil.copytree(ROOT / source, tmp_path / source)
    return tmp_path


@pytest.mark.parametrize(
    "changed",
    ["templates/base.html", "papers/rows.py", "papers/new_module.py"],
)
def test_a_change_to_a_template_or_the_code_is_a_new_release(tree, changed):
    before = release_of(tree)
    with (tree / changed).open("a") as file:
        file.write("\n")

    assert release_of(tree) != before


@pytest.mark.parametrize(
    "changed",
    [
        "papers/__pycache__/rows.cpython-311.pyc",
        "papers/migrations/9999_later.py",
        "bench/pages.py",
    ],
)
def test_caches_and_migrations_are_not(tree, changed):
    before = release_of(tree)
    (tree / changed).parent.mkdir(parents=True, exist_ok=True)
    (tree / changed).write_bytes(b"anything")

    assert release_of(tree) == before


def test_two_checkouts_of_the_same_sources_are_the_same_release(
    tree, tmp_path, monkeypatch
):
    """As two machines' are: in another place, their files listed in another
    order by another filesystem (comparing one tree with itself could tell
    neither)."""
    other = tmp_path / "elsewhere" / "checkout"
    shutil.copytree(tree, other)
    release = release_of(tree)
    listed = Path.rglob
    monkeypatch.setattr(
        Path, "rglob", lambda self, pattern: reversed(list(listed(self, pattern)))
    )

    assert release_of(other) == release
