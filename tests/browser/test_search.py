"""Search in a real browser: an id typed in the header opens the paper, and the
search page fits a phone's screen and does not zoom as a box is tapped."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from papers.ingest.upsert import upsert_records
from tests.browser.conftest import PHONE
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def papers(transactional_db):
    make_topic(
        "Vision-Language-Action Models for Long-Horizon Robot Manipulation",
        rule="ti:robot",
        slug="vla",
    )
    records = [
        paper_record("2607.04713", title="Robot policies from video"),
        paper_record("2607.04714", title="Robot hands that grasp"),
    ]
    tag_papers(upsert_records(records).changed_ids)


def test_an_arxiv_link_in_the_header_search_opens_the_paper(page, live_server, papers):
    page.goto("/")
    page.fill("#site-search", "https://arxiv.org/abs/2607.04713v2")
    page.keyboard.press("Enter")

    # At the version asked, which the page names when it is not the one held.
    expect(page).to_have_url(f"{live_server.url}/papers/2607.04713/?v=2")
    expect(page.locator("h1")).to_have_text("Robot policies from video")


def test_the_search_page_does_not_scroll_sideways_on_a_phone(phone, papers):
    phone.goto("/search/?q=robot")

    expect(phone.locator("#results")).to_have_text("2 papers")
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_on_a_phone_no_field_is_small_enough_to_zoom_the_page(touch_phone, papers):
    """A phone's browser (Safari on iOS) zooms the page in on a field whose text
    is under 16 px as it is tapped, and leaves it zoomed, wider than the screen:
    the header's search box, on every page, was 14.4 px."""
    touch_phone.goto("/search/?q=robot")
    fields = touch_phone.locator(
        "input:not([type=hidden]):not([type=checkbox]):not([type=radio]),"
        " select, textarea"
    )
    expect(fields.first).to_be_attached()

    sizes = fields.evaluate_all(
        "fields => fields.map(f => [f.name, parseFloat(getComputedStyle(f).fontSize)])"
    )

    assert [(name, size) for name, size in sizes if size < 16] == []
