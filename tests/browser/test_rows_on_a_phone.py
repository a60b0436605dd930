"""A paper's row as a phone shows it, in a real browser: what a desktop's
pointer reads on hover (why the paper is in each of its topics, what a model
score means) is text a touch screen can reach."""

from __future__ import annotations

import re
from datetime import UTC
from datetime import datetime

import pytest
from playwright.sync_api import expect

from papers.ingest.upsert import upsert_records
from papers.models import Paper
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.curation import pin_paper
from topics.models import PaperTopic
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db(transaction=True)

MODELS = "2606.00001"  # in Robot Learning by its model, pinned in Picks


@pytest.fixture
def papers(transactional_db):
    """Two agent papers in RL for LLM Agents by its rule; the first also
    suggested by Robot Learning's model and pinned in Curated Picks."""
    make_topic("RL for LLM Agents", rule="ti:agent", slug="rl-agents")
    robots = make_topic("Robot Learning", rule="ti:robot", slug="robot-learning")
    picks = make_topic("Curated Picks", rule="ti:nothing", slug="picks")
    records = [
        paper_record(
            f"2606.{n:05d}",
            title=f"Agent paper {n}",
            published=datetime(2026, 6, n, 15, tzinfo=UTC),
        )
        for n in (1, 2)
    ]
    tag_papers(upsert_records(records).changed_ids)
    paper = Paper.objects.get(arxiv_id=MODELS)
    pin_paper(picks, paper)
    PaperTopic.objects.create(
        topic=robots, paper=paper, source=PaperTopic.Source.MODEL, score=0.87
    )


def test_a_rows_topics_say_why_the_paper_is_in_each_under_its_abstract(
    touch_phone, papers
):
    """Each chip said why only in its title, a tooltip a finger cannot bring
    up: the row's drawer (on a computer, the side panel) lists its topics
    with why, as the paper's page does."""
    page = touch_phone
    page.goto("/topics/robot-learning/")
    row = page.locator(f'[data-paper="{MODELS}"]')

    row.get_by_text("Abstract", exact=True).tap()

    reasons = row.locator(".drawer .why li")
    expect(reasons).to_have_text(
        [
            "Robot Learning suggested by the topic's model (score 0.87)",
            "Curated Picks pinned by a curator",
            "RL for LLM Agents matched agent in the title",
        ]
    )
    for n in range(3):
        expect(reasons.nth(n)).to_be_visible()


def test_a_model_score_on_a_topic_page_says_what_it_is(touch_phone, papers):
    """ "model 0.87" was explained only in its title: "Suggested by the
    topic's model"."""
    page = touch_phone
    page.goto("/topics/robot-learning/")
    score = page.locator(f'[data-paper="{MODELS}"] > .meta .model-score')

    expect(score).to_be_visible()
    expect(score).to_have_text("· suggested by the topic's model (score 0.87)")


# The rectangles of an element's text that lie over one of its row's buttons.
TEXT_UNDER_BUTTONS = """meta => {
  const range = document.createRange();
  range.selectNodeContents(meta);
  const row = meta.closest("[data-paper]");
  const buttons = [...row.querySelectorAll(".row-actions button")]
    .map(button => button.getBoundingClientRect());
  return [...range.getClientRects()].filter(text => buttons.some(button =>
    text.left < button.right && button.left < text.right &&
    text.top < button.bottom && button.top < text.bottom)).length;
}"""


def test_a_rows_date_and_authors_never_run_under_its_buttons(touch_phone, papers):
    """Beside a title of one line, the line under it ran on under the thumbs:
    "Alan Turing" and the model's score showed through them, and a tap on a
    name could land on a thumb."""
    page = touch_phone
    page.goto("/topics/robot-learning/")
    row = page.locator(f'[data-paper="{MODELS}"]')
    title = row.locator(".paper-title").bounding_box()
    assert title is not None
    assert title["height"] < 40  # one line

    assert row.locator("> .meta").evaluate(TEXT_UNDER_BUTTONS) == 0


def test_a_rows_folded_authors_are_a_tap_away(touch_phone, transactional_db):
    """ "+11" after three names meant "11 more authors" only in a tooltip: the
    fold says "more" and takes a finger to the paper's list of them all."""
    make_topic("RL for LLM Agents", rule="ti:agent", slug="rl-agents")
    authors = tuple(f"Writer {k}" for k in range(14))
    record = paper_record("2606.00001", title="Agent crowd", authors=authors)
    tag_papers(upsert_records([record]).changed_ids)
    page = touch_phone
    page.goto("/topics/rl-agents/")

    page.locator("[data-paper] > .meta").get_by_role(
        "link", name="+11 more authors"
    ).tap()

    expect(page).to_have_url(re.compile(r"/papers/2606\.00001/#authors$"))
    expect(page.locator("#authors li")).to_have_count(14)
    expect(page.locator("#authors").get_by_text("Writer 13")).to_be_in_viewport()
