"""Ask about this topic in Chromium: the offline answer's lead, claims and
citations, and a model's answer streamed into the page, each citation linking
to the paper it names."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from urllib.parse import urlencode

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from papers.ingest.upsert import upsert_records
from tests.ask.conftest import ChatServer
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.models import Question
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "How do agents assign credit across turns?"
PAPERS = {
    "2607.13988": (
        "TRACE: Turn-level Reward Assignment via Credit Estimation",
        "Outcome rewards are sparse for long agent trajectories. We propose "
        "TRACE, which assigns credit to each turn of an agent from changes in "
        "value. TRACE raises BrowseComp-Plus accuracy from 7.2 to 35.6.",
    ),
    "2606.29745": (
        "ECHO: Epistemic Credit for Language Agents",
        "Agents must decide what to seek. We introduce ECHO, which assigns "
        "turn-level credit to agents with posterior-sensitive rewards.",
    ),
    "2606.11111": (
        "Agents for spreadsheets",
        "Agents edit spreadsheets. Digital Adoption Platforms are embedded "
        "overlays for enterprise software used by agents.",
    ),
}


@pytest.fixture
def topic(transactional_db):
    topic = make_topic("Credit assignment", rule="abs:agents", slug="credit")
    records = [
        paper_record(
            arxiv_id,
            title=title,
            abstract=abstract,
            published=datetime(2026, 7, day, 15, 0, tzinfo=UTC),
        )
        for day, (arxiv_id, (title, abstract)) in enumerate(PAPERS.items(), 10)
    ]
    tag_papers(upsert_records(records).changed_ids)
    return topic


def ask(page) -> None:
    page.goto("/topics/credit/ask/")
    page.fill("form[data-ask-form] input[name=q]", QUESTION)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def cited_papers(links) -> dict[str, str]:
    """{"[n]": the arXiv id its link opens}."""
    return {
        link.text_content(): link.get_attribute("href").strip("/").split("/")[-1]
        for link in links
    }


def test_the_offline_answer_leads_with_the_approaches_and_cites_the_right_papers(
    page, live_server, topic
):
    ask(page)

    lead = page.locator("[data-lead]")
    expect(lead).to_contain_text("Two lines of work:")
    claims = page.locator("ul.claims li")
    expect(claims).to_have_count(2)
    texts = claims.all_text_contents()
    assert any("We propose TRACE" in text for text in texts)
    assert not any("Digital Adoption Platforms" in text for text in texts)
    assert not any("Turn-level Reward Assignment" in text for text in texts)
    # Citations read [1], [2] in order, and each opens the paper it quotes.
    links = page.locator("ul.claims a.cite")
    numbers = links.all_text_contents()
    assert numbers == sorted(numbers)
    assert numbers[0] == "[1]"
    by_number = cited_papers(links.all())
    for item in claims.all():
        number = item.locator("a.cite").first.text_content()
        quoted = item.locator(".claim").text_content()
        assert quoted in PAPERS[by_number[number]][1]
    also = page.locator("[data-also-relevant] a")
    expect(also).to_have_text([PAPERS["2606.11111"][0]])


def test_a_model_answer_streams_in_with_citations_to_the_retrieved_papers(
    page, live_server, topic, httpserver, settings
):
    chat = ChatServer(httpserver)
    settings.MOMENTUM_ASK_API_BASE = chat.base_url
    settings.MOMENTUM_ASK_MODEL = "local-test-model"
    settings.MOMENTUM_ASK_TIMEOUT = 5.0
    ask(page)
    retrieved = {
        item.get_attribute("value"): item.locator("a").get_attribute("href")
        for item in page.locator("ol.retrieved > li").all()
    }
    trace = next(n for n, href in retrieved.items() if "2607.13988" in href)
    echo = next(n for n, href in retrieved.items() if "2606.29745" in href)
    chat.answer = (
        f"TRACE assigns credit to each turn from changes in value [{trace}]. "
        f"ECHO uses posterior-sensitive rewards [{echo}]. The moon is cheese [9]."
    )
    # The page asked before the answer was set: ask again, now streaming it
    # (the first answer, kept for a reload once its stream is done, forgotten).
    expect(page.locator("[data-attribution]")).to_be_visible()
    cache.clear()
    ask(page)

    claims = page.locator("[data-claims] .claim")
    expect(claims).to_have_count(2)
    expect(claims.first).to_have_text(
        "TRACE assigns credit to each turn from changes in value."
    )
    links = page.locator("[data-claims] a.cite")
    assert cited_papers(links.all()) == {
        f"[{trace}]": "2607.13988",
        f"[{echo}]": "2606.29745",
    }
    expect(page.locator("[data-cited-list] a")).to_have_count(2)
    assert "moon" not in page.locator("[data-claims]").text_content()
    # Said as the page without JavaScript says it.
    expect(page.locator("[data-attribution]")).to_have_text(
        "Written by a language model from the papers below; sentences that cite "
        "none of them are removed (1 here)."
    )


def test_a_stream_that_breaks_off_says_so_and_offers_it_again(
    page, live_server, topic, httpserver, settings
):
    """It showed the browser's own words ("Failed to fetch") and told a phone's
    reader to turn JavaScript off."""
    chat = ChatServer(httpserver)
    settings.MOMENTUM_ASK_API_BASE = chat.base_url
    settings.MOMENTUM_ASK_MODEL = "local-test-model"
    settings.MOMENTUM_ASK_TIMEOUT = 5.0
    chat.answer = "TRACE assigns credit to each turn from changes in value [1]."
    page.route("**/ask/stream/**", lambda route: route.abort("connectionreset"))

    ask(page)

    status = page.locator("[data-stream-status]")
    expect(status).to_contain_text(
        "The answer could not be loaded (the connection was lost)"
    )
    page.unroute("**/ask/stream/**")
    status.get_by_role("button", name="Try again").click()
    expect(page.locator("[data-claims] .claim")).to_have_count(1)
    expect(status).to_have_text("")


def test_the_answer_without_the_model_after_a_broken_stream_is_the_offline_one(
    page, live_server, topic, httpserver, settings
):
    """The link asked the model again: a slow one kept the reader waiting as
    long as before, a healthy one gave its answer under this label."""
    chat = ChatServer(httpserver)
    settings.MOMENTUM_ASK_API_BASE = chat.base_url
    settings.MOMENTUM_ASK_MODEL = "local-test-model"
    page.route("**/ask/stream/**", lambda route: route.abort("connectionreset"))
    ask(page)

    without = page.locator("[data-stream-status]").get_by_role(
        "link", name="the answer without the language model"
    )
    with page.expect_navigation():
        without.click()

    expect(page.locator("[data-lead]")).to_contain_text("Two lines of work:")
    expect(page.locator("section.answer")).to_contain_text(
        "Quoted from the papers' own sentences"
    )
    assert chat.requests == []


def test_a_model_that_stalls_mid_answer_gives_way_to_the_offline_one(
    page, live_server, topic, httpserver, settings
):
    """The model's first claims stayed on screen, unlabelled, above "could not
    answer"; the offline lead's [n] were plain text."""
    chat = ChatServer(httpserver)
    settings.MOMENTUM_ASK_API_BASE = chat.base_url
    settings.MOMENTUM_ASK_MODEL = "local-test-model"
    settings.MOMENTUM_ASK_TIMEOUT = 1.0
    chat.answer = "Agents assign credit per turn [1]. Then the model stalls [2]."
    chat.stream_then_stall = True

    ask(page)

    notice = page.locator("[data-notice]")
    expect(notice).to_contain_text("it did not answer within 1 second.")
    expect(page.locator("[data-claims] .claim")).to_have_count(0)
    lead = page.locator("[data-fallback-lead]")
    expect(lead).to_contain_text("Two lines of work:")
    links = cited_papers(lead.locator("a.cite").all())
    assert sorted(links.values()) == ["2606.29745", "2607.13988"]
    expect(page.locator("[data-fallback-claims] li .claim")).to_have_count(2)
    expect(page.locator("[data-attribution]")).to_have_text(
        "Quoted from the papers' own sentences; each is followed by the paper it "
        "comes from."
    )
    chat.stall.set()


def test_a_question_in_a_link_from_another_site_waits_for_the_readers_ask(
    page, live_server, topic, alice, sign_in
):
    """Chromium says where a navigation comes from (Sec-Fetch-Site): from
    another site (127.0.0.1 is another site than localhost), the question is
    filled in and asked only when the reader presses Ask."""
    sign_in(page, alice)
    page.goto(live_server.url.replace("localhost", "127.0.0.1") + "/")
    asked_by_link = f"{live_server.url}/topics/credit/ask/?{urlencode({'q': QUESTION})}"
    with page.expect_navigation():
        page.evaluate("url => { location.href = url; }", asked_by_link)

    expect(page.locator("p.notice")).to_contain_text("it is asked when you press Ask")
    expect(page.locator("form[data-ask-form] input[name=q]")).to_have_value(QUESTION)
    expect(page.locator("[data-lead]")).to_have_count(0)
    assert not Question.objects.exists()

    with page.expect_navigation():
        page.click("form[data-ask-form] button[type=submit]")

    expect(page.locator("[data-lead]")).to_contain_text("Two lines of work:")
    assert list(Question.objects.values_list("user", "text")) == [(alice.pk, QUESTION)]
