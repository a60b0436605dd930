"""The review queue as a curator meets it on a laptop: every row's Include and
Exclude buttons in view beside admin's sidebars, without scrolling sideways."""

from __future__ import annotations

import pytest

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
