"""The main pages, checked by axe-core in a real browser, in light and dark mode,
and at a phone's width: no violation above minor (two search forms with one
name was a moderate one), no sideways scroll."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from datetime import UTC
from datetime import datetime

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from papers.ingest.records import AuthorRecord
from papers.ingest.upsert import upsert_records
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.momentum import refresh_momentum
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db(transaction=True)

# A landmark in Chromium's accessibility tree (Playwright's ARIA snapshot):
# its role, and its name when it has one.
LANDMARK = re.compile(
    r"^\s*- (banner|navigation|main|search|region|complementary|contentinfo|form)"
    r'(?: "([^"]*)")?:'
)

# axe-core's impacts above "minor".
FAILING = {"moderate", "serious", "critical"}
PAGES = [
    ("/", "visitor"),
    ("/", "reader"),
    ("/topics/", "visitor"),
    ("/topics/rl-agents/", "visitor"),
    ("/papers/2606.00001/", "visitor"),
    ("/search/?q=agent", "visitor"),
    # Its errors, each tied to its field (axe: a list's items, ids named).
    ("/search/?q=agent&from=xx&to=2026-13-01&category=%25%25", "visitor"),
    ("/saved/", "reader"),
    ("/settings/", "reader"),
    ("/topics/trending/", "visitor"),
    ("/accounts/login/", "visitor"),
]
PHONE_PAGES = PAGES


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


def violations(page) -> list[str]:
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at "
        + ", ".join(str(node["target"]) for node in v["nodes"])
        for v in results.response["violations"]
        if v["impact"] in FAILING
    ]


def open_page(new_page, sign_in, user, *, scheme="light", width=1280):
    page = new_page(color_scheme=scheme, viewport={"width": width, "height": 900})
    if user is not None:
        sign_in(page, user)
    return page


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(("address", "who"), PAGES)
def test_main_pages_have_no_axe_violations_above_minor(
    new_page, sign_in, follower, address, who, scheme
):
    page = open_page(
        new_page,
        sign_in,
        follower if who == "reader" else None,
        scheme=scheme,
    )
    page.goto(address)

    assert violations(page) == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_an_open_drawer_and_the_keys_dialog_have_no_axe_violations_above_minor(
    new_page, sign_in, follower, scheme
):
    page = open_page(new_page, sign_in, follower, scheme=scheme, width=390)
    page.goto("/saved/")
    page.locator("[data-paper] .drawer summary").first.click()
    page.keyboard.press("j")
    assert violations(page) == []

    page.keyboard.press("?")
    assert violations(page) == []


@pytest.mark.parametrize(("address", "who"), PAGES)
def test_landmarks_of_one_role_have_distinct_names(
    new_page, sign_in, follower, address, who
):
    """A screen reader lists landmarks by role and name: two search forms
    without names (the header's and the search page's) cannot be told apart.
    axe-core 4.14 reports it (landmark-unique); the 4.12 bundled here does not."""
    page = open_page(new_page, sign_in, follower if who == "reader" else None)
    page.goto(address)

    found = [
        match.groups()
        for line in page.locator("body").aria_snapshot().splitlines()
        if (match := LANDMARK.match(line))
    ]
    assert found
    assert [landmark for landmark, n in Counter(found).items() if n > 1] == []


@pytest.mark.parametrize(("address", "who"), PHONE_PAGES)
def test_no_page_scrolls_sideways_on_a_phone(new_page, sign_in, follower, address, who):
    page = open_page(
        new_page, sign_in, follower if who == "reader" else None, width=390
    )
    page.goto(address)

    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_each_follow_button_in_a_list_of_topics_is_named_by_its_topic(
    new_page, sign_in, follower
):
    """/topics/ had 36 buttons all named "Follow" for a screen reader."""
    page = open_page(new_page, sign_in, follower)
    page.goto("/topics/")
    tool_use = page.get_by_role("button", name="Follow Tool Use", exact=True)
    expect(tool_use).to_have_attribute("aria-pressed", "false")

    tool_use.click()

    # The label says the state; the name still says the topic.
    following = page.get_by_role("button", name="Following Tool Use", exact=True)
    expect(following).to_have_attribute("aria-pressed", "true")
    assert following.inner_text().startswith("Following")


def test_save_this_search_is_said_once_in_its_named_section(
    new_page, sign_in, follower
):
    """A visually hidden heading named the section, and the disclosure under it
    said the same: a screen reader read "Save this search" twice in a row. The
    section is named by its one visible "Save this search"."""
    page = open_page(new_page, sign_in, follower)
    page.goto("/search/?q=agent")

    section = page.get_by_role("region", name="Save this search", exact=True)
    said = section.aria_snapshot().splitlines()
    assert [line for line in said if "Save this search" in line] == [
        '- region "Save this search":',
        "  - group: Save this search",
    ]
    expect(page.get_by_text("Save this search", exact=True)).to_have_count(1)


def test_a_failed_login_is_said_at_once_as_an_alert(page, verified_alice):
    """A wrong password reloaded the page with its error in a plain list above
    the fields: a screen reader heard "Log in" again, as if nothing was sent,
    and only found the error by reading on."""
    page.goto("/accounts/login/")
    page.get_by_label("Email").fill(verified_alice.email)
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Log in").click()

    expect(page.get_by_role("alert")).to_have_text(
        "The email address and/or password you specified are not correct."
    )
