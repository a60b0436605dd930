"""A researcher's first visit, in a real browser: sign up, verify, follow, read
with the keyboard, save, unfollow; and the same buttons without JavaScript."""

from __future__ import annotations

import re
from datetime import UTC
from datetime import datetime

import pytest
from django.core import mail
from playwright.sync_api import Page
from playwright.sync_api import expect

from accounts.models import DigestPreferences
from accounts.models import User
from papers.ingest.upsert import upsert_records
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.models import Follow
from topics.models import RelevanceFlag
from topics.momentum import refresh_momentum
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a long and unusual passphrase"


@pytest.fixture
def topic(transactional_db):
    topic = make_topic("RL for LLM Agents", rule="ti:agent", slug="rl-agents")
    records = [
        paper_record(
            f"2606.{n:05d}",
            title=f"Agent paper {n}",
            published=datetime(2026, 6, n, 15, tzinfo=UTC),
        )
        for n in range(1, 6)
    ]
    tag_papers(upsert_records(records).changed_ids)
    return topic


def sign_up_and_verify(page: Page, email: str) -> None:
    page.goto("/accounts/signup/")
    page.fill("input[name=email]", email)
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.locator("main form button[type=submit]").last.click()
    expect(page.locator("main")).to_contain_text("erif")  # "Verify your email"

    body = mail.outbox[-1].body
    link = re.search(r"https?://\S+/accounts/confirm-email/\S+/", body).group()
    page.goto(link)
    page.locator("main form button[type=submit]").click()
    # Confirmed in the browser that signed up: signed in, no password asked again.
    expect(page.get_by_role("link", name="Saved")).to_be_visible()


def test_sign_up_follow_read_with_the_keyboard_save_and_unfollow(page, topic):
    sign_up_and_verify(page, "reader@example.com")
    user = User.objects.get(email="reader@example.com")

    page.goto("/topics/rl-agents/")
    follow = page.locator("form.toggle[data-kind=follow] button")
    follow.click()
    expect(follow).to_have_text("Following")
    assert Follow.objects.filter(user=user, topic=topic).exists()

    rows = page.locator("[data-paper]")
    # The first paper is selected on load; J moves on.
    expect(rows.nth(0)).to_have_class(re.compile(r"\bselected\b"))
    expect(page.locator("#paper-panel")).to_contain_text("Agent paper 5")
    page.keyboard.press("j")
    expect(rows.nth(1)).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("k")
    expect(rows.nth(0)).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("j")
    selected = rows.nth(1)
    arxiv_id = selected.get_attribute("data-paper")
    page.keyboard.press("s")
    expect(selected.locator("form.toggle button")).to_have_text("Saved")
    assert user.saved_papers.filter(paper__arxiv_id=arxiv_id).exists()

    page.keyboard.press("?")
    expect(page.locator("#keys")).to_be_visible()
    page.keyboard.press("Escape")
    page.keyboard.press("/")
    expect(page.locator("#site-search")).to_be_focused()
    page.locator("#site-search").blur()

    page.keyboard.press("Enter")  # nothing selected by focus: opens the selection
    expect(page).to_have_url(re.compile(rf"/papers/{arxiv_id}/$"))
    # Tell the curators the paper does not belong: back on its page, flagged.
    page.get_by_role(
        "button", name=re.compile(r"^Not relevant to .+\? Tell the curators$")
    ).click()
    expect(page.locator(".flagged")).to_have_text("You flagged this")
    expect(page).to_have_url(re.compile(rf"/papers/{arxiv_id}/$"))
    assert RelevanceFlag.objects.filter(user=user, paper__arxiv_id=arxiv_id).exists()

    page.goto("/saved/")
    expect(page.locator("[data-paper]")).to_have_count(1)
    expect(page.locator("main")).to_contain_text("Agent paper 4")

    page.goto("/topics/rl-agents/")
    page.locator("form.toggle[data-kind=follow] button").click()
    expect(page.locator("form.toggle[data-kind=follow] button")).to_have_text(
        "Follow this topic"
    )
    assert not Follow.objects.filter(user=user).exists()


def test_signing_up_sets_the_digest_to_the_browsers_time_zone(new_page, topic):
    page = new_page(timezone_id="America/Los_Angeles")

    sign_up_and_verify(page, "west@example.com")

    user = User.objects.get(email="west@example.com")
    assert DigestPreferences.objects.for_user(user).time_zone == "America/Los_Angeles"
    page.goto("/settings/")
    expect(page.locator("#id_time_zone")).to_have_value("America/Los_Angeles")


# Chromium names India's zone by tz's older name, which the list leaves out.
@pytest.mark.parametrize("zone", ["Europe/Berlin", "Asia/Calcutta"])
def test_settings_offer_the_browsers_time_zone_where_the_digest_has_utc(
    new_page, sign_in, alice, zone
):
    page = new_page(timezone_id=zone)
    sign_in(page, alice)
    page.goto("/settings/")

    page.get_by_role("button", name="Use it").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#id_time_zone")).to_have_value(zone)
    # The button is gone: the focus is on what it set, and what it did is said.
    expect(page.locator("#id_time_zone")).to_be_focused()
    expect(page.get_by_role("status").filter(has_text="Set to")).to_have_text(
        f"Set to {zone}: save to keep it."
    )
    page.get_by_role("button", name="Save digest preferences").click()

    expect(page.locator("#id_time_zone")).to_have_value(zone)
    assert DigestPreferences.objects.for_user(alice).time_zone == zone
    expect(page.locator(".zone-offer")).to_have_count(0)  # nothing more to offer


@pytest.mark.usefixtures("verified_alice")
def test_anonymous_follow_logs_in_and_comes_back_to_finish(page, topic, alice):
    page.goto("/topics/rl-agents/")
    page.locator("form.toggle[data-kind=follow] button").click()

    expect(page).to_have_url(re.compile(r"/accounts/login/\?next="))
    page.fill("input[name=login]", alice.email)
    page.fill("input[name=password]", "correct horse battery")
    page.locator("main form button[type=submit]").click()
    expect(page.locator("main h1")).to_have_text("Follow RL for LLM Agents?")
    page.get_by_role("button", name="Yes").click()

    expect(page).to_have_url(re.compile(r"/topics/rl-agents/$"))
    assert Follow.objects.filter(user=alice, topic=topic).exists()


@pytest.mark.usefixtures("verified_alice")
def test_buttons_work_as_plain_forms_without_javascript(page_without_js, topic, alice):
    page = page_without_js
    page.goto("/accounts/login/")
    page.fill("input[name=login]", alice.email)
    page.fill("input[name=password]", "correct horse battery")
    page.locator("main form button[type=submit]").click()

    page.goto("/topics/rl-agents/")
    # No key works without JavaScript: none is offered.
    expect(page.locator(".key-hint")).to_be_hidden()
    page.locator("form.toggle[data-kind=follow] button").click()
    expect(page).to_have_url(re.compile(r"/topics/rl-agents/$"))
    expect(page.locator("form.toggle[data-kind=follow] button")).to_have_text(
        "Following"
    )
    page.locator("[data-paper] form.toggle button").first.click()
    expect(page.locator("[data-paper] form.toggle button").first).to_have_text("Saved")
    thumb_down = page.locator("[data-paper] form.rating button[data-rating=down]")
    thumb_down.first.click()
    # Back to the row it was pressed on (the first: the newest).
    expect(page).to_have_url(re.compile(r"/topics/rl-agents/#paper-2606\.00005$"))
    expect(thumb_down.first).to_have_attribute("aria-pressed", "true")
    page.goto("/papers/2606.00002/")
    page.locator("form.rating button[data-rating=up]").click()
    expect(page).to_have_url(re.compile(r"/papers/2606.00002/$"))
    expect(page.locator("form.rating button[data-rating=up]")).to_have_attribute(
        "aria-pressed", "true"
    )
    # A topic's Follow in the list of topics comes back to its card.
    page.goto("/topics/")
    page.locator(f"#topic-{topic.slug} form.toggle button").click()
    expect(page).to_have_url(re.compile(rf"/topics/#topic-{topic.slug}$"))
    expect(page.locator(f"#topic-{topic.slug} form.toggle button")).to_have_text(
        re.compile("^Follow")
    )

    assert not Follow.objects.filter(user=alice, topic=topic).exists()
    assert alice.saved_papers.count() == 1
    assert sorted(alice.ratings.values_list("paper__arxiv_id", "value")) == [
        ("2606.00002", 1),
        ("2606.00005", -1),  # the first row: the newest
    ]


def test_following_a_suggested_topic_on_an_empty_feed_leads_to_the_feed(
    page, sign_in, topic, alice
):
    """The feed of a reader who follows nothing offers topics to follow, in
    place: after following one it still said "You don't follow any topic yet",
    with no way to the papers now gathered but a reload."""
    refresh_momentum()  # a topic is suggested with its figures
    sign_in(page, alice)
    page.goto("/")
    follow = page.locator(f"#topic-{topic.slug} form.toggle button")

    follow.click()

    expect(follow).to_have_text(re.compile("^Following"))
    follows_none = page.get_by_text("You don't follow any topic yet")
    expect(follows_none).to_be_hidden()
    to_feed = page.get_by_role("link", name="Show your feed")
    expect(to_feed).to_be_visible()
    # Unfollowed again: the page says so once more.
    follow.click()
    expect(follow).to_have_text(re.compile("^Follow "))
    expect(follows_none).to_be_visible()
    expect(to_feed).to_be_hidden()

    follow.click()
    to_feed.click()
    expect(page.locator("[data-paper]")).to_have_count(5)
