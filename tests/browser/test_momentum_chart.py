"""The momentum chart in a real browser: no serious accessibility violation,
bars out of the Tab order, week links that work by mouse and by keyboard."""

from __future__ import annotations

from datetime import date

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page
from playwright.sync_api import expect

from papers.ingest.upsert import upsert_records
from tests.topics.factories import announced_papers
from tests.topics.factories import make_topic
from topics.momentum import refresh_momentum
from topics.tagging import retag_all

pytestmark = pytest.mark.django_db(transaction=True)

AS_OF = date(2026, 7, 24)
URL = "/topics/agents/"


@pytest.fixture
def topic(transactional_db):
    """Eight weeks of papers, the first a harvest's first (partial)."""
    topic = make_topic("Agents", rule="ti:agent", slug="agents")
    records = announced_papers(AS_OF, [20, *[200] * 7], title="other", series=2)
    records += announced_papers(AS_OF, [1, *[20] * 7], title="agent")
    upsert_records(records)
    retag_all()
    refresh_momentum()
    return topic


def test_the_momentum_block_has_no_serious_accessibility_violation(page: Page, topic):
    axe = Axe()
    page.goto(URL)
    page.eval_on_selector_all(
        "section.momentum details", "d => d.forEach(e => e.open = true)"
    )

    results = axe.run(page, context={"include": [["section.momentum"]]})

    serious = [
        (v["id"], v["help"], [n["target"] for n in v["nodes"]])
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == []


def test_bars_are_not_tab_stops_before_the_paper_list(page: Page, topic):
    page.goto(URL)
    first_paper = page.locator("[data-paper-list] .paper-title a").first

    stops = []
    for _ in range(40):
        page.keyboard.press("Tab")
        if first_paper.evaluate("a => a === document.activeElement"):
            break
        stops.append(page.evaluate("document.activeElement.closest('svg') !== null"))
    else:
        pytest.fail("Tab never reached the paper list")

    assert not any(stops)
    assert len(stops) < 16


def test_a_bar_opens_its_week_by_mouse(page: Page, topic):
    page.goto(URL)

    page.locator("svg.chart a").nth(8).click()

    expect(page).to_have_url(f"{URL}?week=2026-05-30")
    expect(page.locator("#latest")).to_contain_text("Papers of the week of May 30")


def test_the_weeks_table_opens_a_week_by_keyboard(page: Page, topic):
    page.goto(URL)
    summary = page.get_by_text("Weeks as a table")
    summary.focus()
    page.keyboard.press("Enter")
    link = page.locator(".chart-table a").last

    for _ in range(40):
        if link.evaluate("a => a === document.activeElement"):
            break
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")

    expect(page).to_have_url(f"{URL}?week=2026-07-18")
