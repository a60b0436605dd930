"""The live rule preview in admin: a preview superseded by more typing is aborted,
and only the latest rule's answer is shown."""

from __future__ import annotations

from urllib.parse import parse_qs
from urllib.parse import urlparse

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from papers.ingest.upsert import upsert_records
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics import prefilter
from topics.models import RuleDocument
from topics.preview import Preview
from topics.rules.terms import TERMS_VERSION

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def topic(transactional_db):
    upsert_records(
        [
            paper_record("2606.00001", title="An agent"),
            paper_record("2606.00002", title="A robot"),
            paper_record("2606.00003", title="An agent and a robot"),
            paper_record("2606.00004", title="Another robot"),
        ]
    )
    return make_topic(rule="ti:agent")


def test_typing_aborts_the_preview_in_flight(page, sign_in, admin_user, topic):
    sign_in(page, admin_user)
    held = []
    failed = []

    def hold_the_first(route) -> None:
        if not held:
            held.append(route)  # never answered: only the page can end it
            return
        route.continue_()

    page.route("**/preview/?*", hold_the_first)
    page.on("requestfailed", lambda request: failed.append(request))
    page.goto(f"/admin/topics/topic/{topic.pk}/change/")
    page.wait_for_function("document.querySelector('.rule-preview.loading')")
    page.fill("#id_rule", "ti:robot")

    expect(page.locator(".rule-preview")).to_contain_text("Matches 3 of 4 papers")
    [aborted] = failed
    assert parse_qs(urlparse(aborted.url).query)["rule"] == ["ti:agent"]
    assert held[0].request.url == aborted.url


def test_the_rule_keeps_its_width_and_its_preview_sits_below_it(
    new_page, sign_in, admin_user, topic
):
    page = new_page(viewport={"width": 1366, "height": 900})
    sign_in(page, admin_user)
    page.goto(f"/admin/topics/topic/{topic.pk}/change/")
    preview = page.locator(".rule-preview")
    expect(preview).to_contain_text("Matches 2 of 4 papers")

    rule = page.locator("#id_rule").bounding_box()
    shown = preview.bounding_box()
    assert rule is not None
    assert shown is not None
    assert rule["width"] > 600  # was squeezed to a third beside the preview
    assert shown["y"] >= rule["y"] + rule["height"]


def test_picking_a_category_previews_the_rule_within_it(page, sign_in, admin_user):
    """The categories are picked in admin's autocomplete, which tells jQuery,
    not the page, of its change: the preview went on counting every category,
    and promised to add papers that saving the topic left out."""
    upsert_records(
        [
            paper_record("2606.00001", title="An agent", categories=("cs.LG",)),
            paper_record("2606.00002", title="Another agent", categories=("cs.RO",)),
            paper_record("2606.00003", title="A robot", categories=("cs.RO",)),
        ]
    )
    topic = make_topic(rule="ti:agent")
    sign_in(page, admin_user)
    page.goto(f"/admin/topics/topic/{topic.pk}/change/")
    preview = page.locator(".rule-preview")
    expect(preview).to_contain_text("Matches 2 of 3 papers")

    page.locator(".field-categories .select2-selection").click()
    page.keyboard.type("cs.RO")
    page.locator(".select2-results__option", has_text="cs.RO").click()

    expect(preview).to_contain_text("Matches 1 of 3 papers")
    expect(preview).to_contain_text("Saving it adds to the topic (1)")


def test_a_preview_while_the_index_is_rebuilt_says_so(
    page, sign_in, admin_user, topic, monkeypatch
):
    monkeypatch.setattr(prefilter, "PREVIEW_DERIVES", 0)
    RuleDocument.objects.update(version=TERMS_VERSION - 1)
    cache.clear()
    sign_in(page, admin_user)
    page.goto(f"/admin/topics/topic/{topic.pk}/change/")

    notice = page.locator(".rule-preview .preview-notice")
    expect(notice).to_contain_text("rebuilt in the background (4 papers to go)")
    expect(page.locator(".rule-preview")).not_to_contain_text("Invalid rule")


def test_a_large_preview_writes_its_counts_as_the_site_does(
    page, sign_in, admin_user, topic
):
    """Counts read 25,002, not 25002: the answer is the server's shape with
    corpus-sized numbers in it."""
    answer = Preview(
        count=25002, scanned=1000000, checked=1234, seconds=0.8, added_count=1200
    ).as_json()
    page.route("**/preview/?*", lambda route: route.fulfill(json=answer))
    sign_in(page, admin_user)
    page.goto(f"/admin/topics/topic/{topic.pk}/change/")

    preview = page.locator(".rule-preview")
    expect(preview).to_contain_text("Matches 25,002 of 1,000,000 papers (0.8 s).")
    # How many the index left to read whole is for whoever tunes it, not the line.
    expect(preview.locator(".preview-count")).to_have_attribute(
        "title", "1,234 papers the search index could not decide were read in full."
    )
    expect(preview).to_contain_text("Latest matches (25,002)")
    expect(preview).to_contain_text("Saving it adds to the topic (1,200)")
    expect(preview).not_to_contain_text("retrains this topic's model")


def test_the_preview_says_a_model_deciding_papers_is_retrained_after(
    page, sign_in, admin_user, topic
):
    answer = Preview(count=3, scanned=4, added_count=2, retrains=True).as_json()
    page.route("**/preview/?*", lambda route: route.fulfill(json=answer))
    sign_in(page, admin_user)
    page.goto(f"/admin/topics/topic/{topic.pk}/change/")

    expect(page.locator(".rule-preview")).to_contain_text(
        "Saving also retrains this topic's model on the rule's new matches"
    )
