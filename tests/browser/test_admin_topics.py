"""A curator's topic list and topic page in admin, on a laptop and on a phone:
every column and every row in view, without scrolling sideways inside its
box."""

from __future__ import annotations

from datetime import date
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from papers.ingest.upsert import upsert_records
from papers.models import Paper
from tests.browser.conftest import PHONE
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.curation import exclude_paper
from topics.curation import pin_paper
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicModel
from topics.models import TopicMomentum

pytestmark = pytest.mark.django_db(transaction=True)

LAPTOP = {"width": 1366, "height": 900}

# The lines an element's text takes: its rectangles' distinct tops.
TEXT_LINES = """cell => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  const tops = [...range.getClientRects()].map(rect => Math.round(rect.top));
  return new Set(tops).size;
}"""


@pytest.fixture
def topics(transactional_db) -> list[Topic]:
    """Topics as a curator's list shows them at their longest: a long name,
    momentum, a trained model in automatic mode with papers awaiting review and
    flagged, re-tagged in full; another being re-tagged."""
    upsert_records(
        [paper_record(f"2606.{n:05d}", title=f"Splatting {n}") for n in range(1, 4)]
    )
    now = timezone.now()
    done = make_topic(
        "3D Reconstruction and Gaussian Splatting",
        rule="ti:splatting",
        membership=Topic.Membership.AUTO,
        retag_requested_at=now - timedelta(hours=1),
        retagged_at=now,
    )
    running = make_topic(
        "Vision-Language-Action Models",
        rule="ti:vla",
        retag_requested_at=now,
        retag_done=12_000,
        retag_total=25_002,
        retag_progress_at=now,
    )
    for topic in (done, running):
        TopicMomentum.objects.create(
            topic=topic,
            as_of=date(2026, 11, 30),
            weekly=[60] * 4 + [85] * 4,
            corpus_weekly=[4000] * 8,
            complete=[True] * 8,
        )
    TopicModel.objects.create(
        topic=done,
        state=TopicModel.State.TRAINED,
        version=12,
        precision=0.91,
        recall=0.8,
        fingerprint="f" * 64,
        trained_at=now,
    )
    for n, paper in enumerate(Paper.objects.all()):
        ReviewItem.objects.create(
            topic=done, paper=paper, probability=0.5, pending=True, flags=n
        )
    return [done, running]


# Sorted by name, as the list opens, or by momentum: a sorted heading's arrows
# sat beside its words.
@pytest.mark.parametrize("order", ["", "?o=5"], ids=["by name", "by momentum"])
def test_every_column_of_the_topic_list_fits_beside_the_sidebars_at_laptop_width(
    new_page, sign_in, admin_user, topics, order
):
    """With admin's navigation sidebar open, the list's columns were wider than
    its box, which scrolled sideways: the re-tag column's heading read "RE-T"
    and its "done 2026-12-07 15:04" took four lines."""
    page = new_page(viewport=LAPTOP)
    sign_in(page, admin_user)
    page.goto(f"/admin/topics/topic/{order}")
    expect(page.locator("#nav-sidebar")).to_be_visible()

    results = page.locator("#changelist .results")
    assert results.evaluate("box => box.scrollWidth <= box.clientWidth")
    box = results.bounding_box()
    assert box is not None
    for cell in page.locator("#result_list th, #result_list td").all():
        cell_box = cell.bounding_box()
        assert cell_box is not None
        assert cell_box["x"] + cell_box["width"] <= box["x"] + box["width"] + 1
    done = page.locator("#result_list tbody tr").filter(has_text="3D Reconstruction")
    retagged = timezone.localtime(topics[0].retagged_at)
    status = done.locator("td.field-retag_status")
    expect(status).to_have_text(f"done {retagged:%b} {retagged.day}, {retagged:%H:%M}")
    expect(status.locator("time")).to_have_attribute(
        "title", f"re-tagged in full at {retagged:%Y-%m-%d %H:%M %Z}"
    )
    # Wrapped between words, not a word a line.
    assert done.locator("th.field-name").evaluate(TEXT_LINES) <= 3
    for column in ("momentum_summary", "retag_status"):
        assert done.locator(f"td.field-{column}").evaluate(TEXT_LINES) <= 2, column


# What names a field in its card, its column's heading hidden.
NAMED = "cell => getComputedStyle(cell, '::before').content"

TITLE = (
    "The Balkanization of Execution-Security Research for AI Coding Agents: "
    "Isolation, Access Control, and Time-of-Check-to-Time-of-Use Vulnerabilities"
)


def test_a_topics_pins_and_exclusions_are_readable_on_a_phone(
    phone, sign_in, admin_user, transactional_db
):
    """Each table was wider than the screen and scrolled sideways in its box:
    a title a word wide beside the arXiv id, its reason, curator, date and
    Delete off to the right. Each row is now a card, its fields one under
    another, each named."""
    upsert_records([paper_record(f"2607.0{n:04d}", title=TITLE) for n in range(1, 5)])
    topic = make_topic("Tool Use and Function Calling", rule="ti:agent")
    papers = list(Paper.objects.order_by("arxiv_id"))
    for paper in papers[:2]:
        pin_paper(topic, paper)
    for paper in papers[2:]:
        exclude_paper(
            topic, paper, reason="labelled off-topic in tool-use.json", by=admin_user
        )
    sign_in(phone, admin_user)
    phone.goto(f"/admin/topics/topic/{topic.pk}/change/")

    for group in ("#paper_topics-group", "#exclusions-group"):
        box = phone.locator(f"{group} .tabular")
        assert box.evaluate("box => box.scrollWidth <= box.clientWidth"), group
        rows = phone.locator(f"{group} tr.has_original")
        expect(rows).to_have_count(2)
        for row in rows.all():
            row_box = row.bounding_box()
            assert row_box is not None
            for cell in row.locator("td:not(.original)").all():
                cell_box = cell.bounding_box()
                assert cell_box is not None
                assert cell_box["x"] >= 0
                assert cell_box["x"] + cell_box["width"] <= PHONE["width"]
            title = row.locator("td.field-paper_title").bounding_box()
            assert title is not None
            # The row's width, not a column a word wide.
            assert title["width"] >= row_box["width"] * 0.8, group
            delete = row.locator("td.delete")
            assert delete.evaluate(NAMED) == '"Delete?"'
            checkbox = delete.get_by_role("checkbox").bounding_box()
            assert checkbox is not None
            assert checkbox["x"] + checkbox["width"] <= PHONE["width"]
    reason = phone.locator("#exclusions-group td.field-reason").first
    assert reason.evaluate(NAMED) == '"Reason"'


def test_on_a_phone_each_topic_in_the_list_is_a_card(
    phone, sign_in, admin_user, topics
):
    """The list was twice the screen's width and scrolled sideways in its box,
    a topic's momentum, membership, papers awaiting review and re-tag out of
    view: each row is a card, its fields one under another, each named."""
    sign_in(phone, admin_user)
    phone.goto("/admin/topics/topic/")

    results = phone.locator("#changelist .results")
    assert results.evaluate("box => box.scrollWidth <= box.clientWidth")
    rows = phone.locator("#result_list tbody tr")
    expect(rows).to_have_count(2)
    for row in rows.all():
        for cell in row.locator("th, td").all():
            box = cell.bounding_box()
            assert box is not None
            assert box["x"] >= 0
            assert box["x"] + box["width"] <= PHONE["width"]
    status = rows.first.locator("td.field-retag_status")
    assert status.evaluate(NAMED) == '"Re-tag"'
