"""The review queue as a curator meets it on a laptop and on a phone: every
row's Include and Exclude buttons in view (beside admin's sidebars; on a phone
under the paper), without scrolling sideways."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from papers.ingest.upsert import upsert_records
from papers.models import Paper
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.models import ReviewItem
from topics.models import Topic

pytestmark = pytest.mark.django_db(transaction=True)

ABSTRACT = (
    "Multi-view 3D Visual Question Answering requires integrating partial "
    "observations into a coherent 3D scene representation and selecting "
    "informative viewpoints for multi-step spatial reasoning. " * 3
)


@pytest.fixture
def topic(transactional_db) -> Topic:
    upsert_records(
        [
            paper_record(
                f"2606.{n:05d}",
                title="Dense Reward for Multi-View 3D Reasoning with Global Maps",
                abstract=ABSTRACT,
            )
            for n in range(1, 6)
        ]
    )
    topic = make_topic(
        name="Tool Use and Function Calling",
        rule="ti:agent",
        membership=Topic.Membership.AUTO,
        definition="Language models that call tools.",
    )
    for n, paper in enumerate(Paper.objects.all()):
        ReviewItem.objects.create(
            topic=topic,
            paper=paper,
            score=0.6891,
            probability=0.45 + n / 100,
            pending=True,
            rule_matched=bool(n % 2),
            rule_terms=["tool-augmented language model"] if n % 2 else [],
        )
    return topic


@pytest.mark.parametrize("filtered", [False, True], ids=["all topics", "one topic"])
def test_the_decisions_are_in_view_at_laptop_width(
    new_page, sign_in, admin_user, topic, filtered
):
    page = new_page(viewport={"width": 1366, "height": 900})
    sign_in(page, admin_user)
    query = f"?topic__id__exact={topic.pk}" if filtered else ""
    page.goto(f"/admin/topics/reviewitem/{query}")

    results = page.locator("#changelist .results").bounding_box()
    buttons = page.locator("#result_list td.field-decision .button")
    assert results is not None
    assert buttons.count() == 10
    for button in buttons.all():
        box = button.bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= results["x"] + results["width"]


def test_on_a_phone_each_row_is_a_card_with_its_decisions_in_view(
    new_page, sign_in, admin_user, topic
):
    """The table was twice the screen's width: Include and Exclude sat to the
    right of the paper, out of view. Each is named with its paper."""
    page = new_page(viewport={"width": 390, "height": 844})
    sign_in(page, admin_user)
    page.goto("/admin/topics/reviewitem/")

    buttons = page.locator("#result_list td.field-decision .button")
    assert buttons.count() == 10
    for button in buttons.all():
        box = button.bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= 390
        assert box["height"] >= 24
    first = page.locator("#result_list tbody tr").first
    arxiv_id = first.locator("td.field-paper_link").inner_text().split("arXiv:")[1][:10]
    expect(first.locator("td.field-decision .button").first).to_have_accessible_name(
        f"Include arXiv:{arxiv_id}"
    )
