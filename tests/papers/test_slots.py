"""A page rendered once for everyone never shows one reader another's state
(papers.slots): saves, follows, flags, what they had on screen in the feed
("seen"), the CSRF token, the menu and messages are each reader's own, with or
without JavaScript."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from papers.ingest.upsert import upsert_records
from papers.library import set_saved
from papers.models import Paper
from tests.clients import signed_in
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.flags import flag_not_relevant
from topics.models import Follow
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db

TOPIC = "/topics/agents/"


@pytest.fixture
def topic(db):
    topic = make_topic("Agents", rule="ti:agent", slug="agents")
    records = [paper_record(f"2606.{n:05d}", title=f"Agent {n}") for n in range(1, 6)]
    tag_papers(upsert_records(records).changed_ids)
    return topic


def pressed(html: str) -> list[str]:
    """The actions of the buttons that are on (saved, following)."""
    forms = re.findall(r'<form method="post" action="([^"]+)" class="toggle on"', html)
    return sorted(forms)


def tokens(html: str) -> set[str]:
    return set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', html))


@pytest.mark.parametrize("first", ["alice", "bob"])
def test_a_shared_topic_page_shows_each_reader_their_own_saves_and_follows(
    topic, alice, bob, first, django_assert_max_num_queries
):
    set_saved(alice, Paper.objects.get(arxiv_id="2606.00002"), True)
    Follow.objects.create(user=alice, topic=topic)
    clients = {"alice": signed_in(alice), "bob": signed_in(bob)}
    clients[first].get(TOPIC)  # renders the page for everyone

    later = "bob" if first == "alice" else "alice"
    clients[later].get(TOPIC)  # (its session is read into the cache)
    with django_assert_max_num_queries(2):  # the shared render, from the cache
        pages = {later: clients[later].get(TOPIC).text}
    pages[first] = clients[first].get(TOPIC).text

    assert pressed(pages["alice"]) == [
        "/papers/2606.00002/save/",
        "/topics/agents/follow/",
    ]
    assert pressed(pages["bob"]) == []
    assert 'aria-pressed="true">Following<' in pages["alice"]
    assert 'aria-pressed="false">Follow this topic<' in pages["bob"]


def test_each_reader_gets_their_own_working_csrf_token(topic, alice, bob):
    alice_client = signed_in(alice, enforce_csrf_checks=True)
    bob_client = signed_in(bob, enforce_csrf_checks=True)
    alice_page = alice_client.get(TOPIC).text
    bob_page = bob_client.get(TOPIC).text

    assert tokens(alice_page)
    assert tokens(bob_page)
    assert not tokens(alice_page) & tokens(bob_page)
    # Without JavaScript: the page's own form, with its own token, follows.
    (token,) = tokens(bob_page)
    response = bob_client.post(
        "/topics/agents/follow/",
        {"on": "1", "next": TOPIC, "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    assert Follow.objects.filter(user=bob, topic=topic).exists()


def test_a_visitor_after_a_reader_gets_no_token_and_log_in_buttons(topic, alice):
    signed_in(alice).get(TOPIC)

    page = Client().get(TOPIC).text

    assert "csrfmiddlewaretoken" not in page
    assert 'method="post"' not in page
    assert 'form method="get" action="/topics/agents/follow/"' in page
    assert "Log in" in page
    assert "Log out" not in page


def next_of(page: str, action: str) -> str:
    """The `next` address of the page's form that posts to `action`."""
    form = re.search(rf'action="{action}".*?name="next" value="([^"]+)"', page, re.S)
    assert form, action
    return html.unescape(form.group(1))


@pytest.mark.parametrize("who", ["alice", "visitor"])
def test_a_rows_save_and_rating_come_back_to_the_row_not_the_top(topic, alice, who):
    """Without JavaScript (and for a visitor, through logging in), saving a
    paper far down a list comes back to its row, not to the page's first screen."""
    client = signed_in(alice) if who == "alice" else Client()
    page = client.get(f"{TOPIC}?page=1").text
    row = f"{TOPIC}?page=1#paper-2606.00003"

    assert 'data-url="/papers/2606.00003/" id="paper-2606.00003"' in page
    assert next_of(page, "/papers/2606.00003/save/") == row
    assert next_of(page, "/papers/2606.00003/rate/") == row
    # Following the topic is no row's: it comes back to the page; nor are the
    # paper page's own buttons.
    assert next_of(page, "/topics/agents/follow/") == f"{TOPIC}?page=1"
    paper_page = client.get("/papers/2606.00003/").text
    assert next_of(paper_page, "/papers/2606.00003/save/") == "/papers/2606.00003/"
    assert next_of(paper_page, "/papers/2606.00003/rate/") == "/papers/2606.00003/"
    if who == "alice":
        response = client.post("/papers/2606.00003/save/", {"on": "1", "next": row})
        assert response["Location"] == row


def test_only_staff_see_the_admin_link_in_a_shared_page(topic, alice, staff):
    signed_in(staff).get(TOPIC)

    assert 'href="/admin/"' not in signed_in(alice).get(TOPIC).text
    assert 'href="/admin/"' in signed_in(staff).get(TOPIC).text


def test_a_shared_feed_marks_seen_only_what_this_reader_had_on_screen(
    topic, alice, bob
):
    for user in (alice, bob):
        Follow.objects.create(user=user, topic=topic)
    alice_client, bob_client = signed_in(alice), signed_in(bob)
    alice_client.post("/feed/seen/", {"paper": ["2606.00001", "2606.00002"]})

    assert alice_client.get("/").text.count('class="paper-row seen"') == 2
    assert bob_client.get("/").text.count('class="paper-row seen"') == 0


def test_a_flag_shows_only_to_the_reader_who_flagged(topic, alice, bob):
    paper = Paper.objects.get(arxiv_id="2606.00001")
    flag_not_relevant(alice, topic, paper)
    address = paper.get_absolute_url()
    signed_in(bob).get(address)

    assert "You flagged this" in signed_in(alice).get(address).text
    bob_page = signed_in(bob).get(address).text
    assert "You flagged this" not in bob_page
    assert 'action="/topics/agents/papers/2606.00001/not-relevant/"' in bob_page
    assert "Not relevant to Agents? Tell the curators" in bob_page
    assert "Not relevant to" not in Client().get(address).text


def test_a_message_shows_once_and_only_to_its_reader(topic, alice, bob):
    alice_client = signed_in(alice)
    paper = Paper.objects.get(arxiv_id="2606.00001")
    response = alice_client.post(
        f"/topics/agents/papers/{paper.arxiv_id}/not-relevant/",
        {"next": paper.get_absolute_url()},
    )
    signed_in(bob).get(paper.get_absolute_url())

    page = alice_client.get(response["Location"]).text

    assert "a curator will review" in page
    assert "a curator will review" not in signed_in(bob).get(response["Location"]).text
    assert "a curator will review" not in alice_client.get(response["Location"]).text


def test_the_last_harvest_is_read_with_the_page_not_after_it(
    client, topic, monkeypatch
):
    assert "No harvest from arXiv yet." in client.get("/").text  # stores it

    def separately(*args, **kwargs):
        raise AssertionError("the last harvest was read in a round trip of its own")

    monkeypatch.setattr("papers.slots.cached_value", separately)
    assert "No harvest from arXiv yet." in client.get("/").text
