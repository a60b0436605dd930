"""The main pages, checked by axe-core in a real browser, in light and dark mode,
and at a phone's width: no serious or critical violation, no sideways scroll."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC
from datetime import datetime

import pytest
from axe_playwright_python.sync_playwright import Axe

from papers.ingest.records import AuthorRecord
from papers.ingest.upsert import upsert_records
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.momentum import refresh_momentum
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db(transaction=True)

SERIOUS = {"serious", "critical"}
PAGES = [
    ("/", "visitor"),
    ("/", "reader"),
    ("/topics/", "visitor"),
    ("/topics/rl-agents/", "visitor"),
    ("/papers/2606.00001/", "visitor"),
    ("/search/?q=agent", "visitor"),
    ("/saved/", "reader"),
]
PHONE_PAGES = [*PAGES, ("/settings/", "reader")]


@pytest.fixture
def topic(transactional_db):
    """Two topics over twelve weeks of papers (so the topic page has its chart),
    one paper with affiliations and a withdrawn one."""
    topic = make_topic(
        "RL for LLM Agents",
        rule="ti:agent",
        slug="rl-agents",
        glossary="RL: Reinforcement Learning",
    )
    make_topic("Tool Use", rule="ti:tools", slug="tool-use")
    records = [
        paper_record(
            f"2606.{n:05d}",
            title=f"Agent paper {n} with tools" if n % 3 else f"Agent paper {n}",
            published=datetime(2026, 4 + n // 28, 1 + n % 28, 15, tzinfo=UTC),
            withdrawn=n == 7,
        )
        for n in range(1, 80)
    ]
    authors = (AuthorRecord("Ada Lovelace", ("University of London",)),)
    records[0] = replace(records[0], authors=authors)
    tag_papers(upsert_records(records).changed_ids)
    refresh_momentum()
    return topic


def serious_violations(page) -> list[str]:
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at "
        + ", ".join(str(node["target"]) for node in v["nodes"])
        for v in results.response["violations"]
        if v["impact"] in SERIOUS
    ]


def open_page(new_page, sign_in, user, *, scheme="light", width=1280):
    page = new_page(color_scheme=scheme, viewport={"width": width, "height": 900})
    if user is not None:
        sign_in(page, user)
    return page


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(("address", "who"), PAGES)
def test_main_pages_have_no_serious_or_critical_axe_violations(
    new_page, sign_in, follower, address, who, scheme
):
    page = open_page(
        new_page,
        sign_in,
        follower if who == "reader" else None,
        scheme=scheme,
    )
    page.goto(address)

    assert serious_violations(page) == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_an_open_drawer_and_the_keys_dialog_have_no_serious_violations(
    new_page, sign_in, follower, scheme
):
    page = open_page(new_page, sign_in, follower, scheme=scheme, width=390)
    page.goto("/saved/")
    page.locator("[data-paper] .drawer summary").first.click()
    page.keyboard.press("j")
    assert serious_violations(page) == []

    page.keyboard.press("?")
    assert serious_violations(page) == []


@pytest.mark.parametrize(("address", "who"), PHONE_PAGES)
def test_no_page_scrolls_sideways_on_a_phone(new_page, sign_in, follower, address, who):
    page = open_page(
        new_page, sign_in, follower if who == "reader" else None, width=390
    )
    page.goto(address)

    assert page.evaluate("document.documentElement.scrollWidth") <= 390
