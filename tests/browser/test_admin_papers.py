"""The list of papers in admin, on a laptop and on a phone: a title is read
in lines of several words, and no row runs off its box."""

from __future__ import annotations

from datetime import date

import pytest

from papers.ingest.upsert import upsert_records
from tests.browser.conftest import PHONE
from tests.papers.factories import paper_record

pytestmark = pytest.mark.django_db(transaction=True)

TITLE = (
    "Scale Up Strategically: Learning Compositional Generalization via "
    "Bias-Aware Evaluation and Data Collection for Robotic Manipulation"
)

# The lines an element's text takes: its rectangles' distinct tops.
TEXT_LINES = """cell => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  const tops = [...range.getClientRects()].map(rect => Math.round(rect.top));
  return new Set(tops).size;
}"""

# What names a field in its card, its column's heading hidden.
NAMED = "cell => getComputedStyle(cell, '::before').content"


@pytest.fixture
def papers(transactional_db) -> None:
    upsert_records(
        [
            paper_record(
                f"2607.{n:05d}",
                title=TITLE,
                announced=date(2026, 7, 24),
                announce_type="new",
                categories=("cs.RO", "cs.LG"),
            )
            for n in range(1, 4)
        ]
    )


def test_a_papers_title_has_room_at_laptop_width(new_page, sign_in, admin_user, papers):
    """Beside the other columns' headings, each kept on one line (with the
    sorted one's arrows beside it), a title took a column a few words wide:
    nine lines for this one."""
    page = new_page(viewport={"width": 1366, "height": 900})
    sign_in(page, admin_user)
    page.goto("/admin/papers/paper/")

    results = page.locator("#changelist .results")
    assert results.evaluate("box => box.scrollWidth <= box.clientWidth")
    for title in page.locator("#result_list td.field-title_text").all():
        assert title.evaluate(TEXT_LINES) <= 4


def test_on_a_phone_each_paper_is_a_card(phone, sign_in, admin_user, papers):
    """The table was wider than the screen and scrolled sideways in its box,
    its category, date and withdrawn mark out of view: each row is a card, its
    fields one under another, each named."""
    sign_in(phone, admin_user)
    phone.goto("/admin/papers/paper/")

    results = phone.locator("#changelist .results")
    assert results.evaluate("box => box.scrollWidth <= box.clientWidth")
    rows = phone.locator("#result_list tbody tr")
    assert rows.count() == 3
    for row in rows.all():
        for cell in row.locator("th, td").all():
            box = cell.bounding_box()
            assert box is not None
            assert box["x"] >= 0
            assert box["x"] + box["width"] <= PHONE["width"]
    first = rows.first
    assert first.locator("td.field-first_announced").evaluate(NAMED) == (
        '"First announced"'
    )
    assert first.locator("td.field-title_text").evaluate(TEXT_LINES) <= 4
