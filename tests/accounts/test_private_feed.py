"""The private Atom feed: a reader's feed at a secret, revocable address that a
feed reader opens without signing in."""

from __future__ import annotations

import re

import feedparser
import pytest
from django.test import Client

from accounts import feed_tokens
from accounts.models import FeedToken
from accounts.models import User
from accounts.tokens import token_digest
from papers.authors import set_following_author
from papers.ingest.upsert import upsert_records
from papers.models import Author
from papers.versions import content_changed
from tests.clients import signed_in
from tests.papers.factories import paper_record
from topics.following import set_following
from topics.saved_searches import create_search
from topics.tagging import tag_papers

SITE = "https://momentum.example"
AGENT_PAPERS = 8  # corpus: seven agent papers and one about an agent and a robot


@pytest.fixture(autouse=True)
def site(settings):
    settings.MOMENTUM_SITE_URL = SITE


def follow(user, *topics) -> None:
    for topic in topics:
        set_following(user, topic, True)


def feed_path(user) -> str:
    return f"/feed/{feed_tokens.create_feed(user)}.atom"


def read(path: str) -> feedparser.FeedParserDict:
    """The feed as a feed reader gets it: no session, no cookies."""
    response = Client().get(path)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/atom+xml; charset=utf-8"
    parsed = feedparser.parse(response.content)
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    return parsed


# --- What the feed holds ----------------------------------------------------------


def test_the_feed_lists_the_new_papers_of_the_followed_topics(alice, corpus):
    follow(alice, corpus["agents"])
    path = feed_path(alice)

    feed = read(path)

    assert feed.feed.title == "Your feed · Momentum"
    assert feed.feed.subtitle == "New papers in RL for LLM Agents"
    assert len(feed.entries) == AGENT_PAPERS
    newest = feed.entries[0]
    assert newest.title.startswith("Agent") or newest.title == "An agent and a robot"
    # Links name the site, never example.com, the test server or a port.
    for entry in feed.entries:
        assert re.fullmatch(rf"{SITE}/papers/2606\.\d{{5}}/", entry.link)
        assert entry.id == entry.link
        # One <author> each, as a feed reader lists them.
        assert [author.name for author in entry.authors] == [
            "Ada Lovelace",
            "Alan Turing",
        ]
    assert feed.feed.link == f"{SITE}/"
    [own] = [link.href for link in feed.feed.links if link.rel == "self"]
    assert own == SITE + path
    # Its id is its own, not the site's that every reader's feed shared.
    assert feed.feed.id == SITE + path


def test_a_feed_readers_poll_of_an_unchanged_feed_is_a_304(alice, corpus):
    follow(alice, corpus["agents"])
    path = feed_path(alice)
    etag = Client().get(path)["ETag"]

    again = Client().get(path, HTTP_IF_NONE_MATCH=etag)

    assert (again.status_code, again.content) == (304, b"")
    assert again["Cache-Control"] == "private"


def test_the_feed_says_what_it_follows_in_words_for_each_kind(alice, corpus):
    """It read "New papers in by Ada Lovelace" for a followed author."""
    follow(alice, corpus["agents"], corpus["robots"])
    set_following_author(alice, Author.objects.get(name="Ada Lovelace"), True)
    create_search(alice, name="Old ideas", query='"old style"', syntax="search")
    create_search(alice, name="Planning", query="planning", syntax="search")

    feed = read(feed_path(alice))

    assert feed.feed.subtitle == (
        "New papers in RL for LLM Agents, Robot Learning; by Ada Lovelace; matching "
        'your searches "Old ideas", "Planning"'
    )


def test_each_entry_a_followed_author_wrote_says_so(alice, corpus):
    """As the home feed's rows and the digest do; only a saved search's entries
    said why they were there."""
    set_following_author(alice, Author.objects.get(name="Ada Lovelace"), True)
    create_search(alice, name="Old ideas", query='"old style"', syntax="search")

    entries = read(feed_path(alice)).entries

    reasons = {entry.title: [tag.term for tag in entry.tags] for entry in entries}
    assert reasons["Old style id"] == [
        'Matches your search "Old ideas"',
        "By Ada Lovelace, whom you follow",
    ]
    assert reasons["Agent 1"] == ["By Ada Lovelace, whom you follow"]


def test_the_feed_shows_latex_titles_as_text(alice, corpus):
    follow(alice, corpus["agents"])
    changed = upsert_records(
        [paper_record("2606.00300", title=r"$\alpha$-agent studies")]
    ).changed_ids
    tag_papers(changed)

    titles = [entry.title for entry in read(feed_path(alice)).entries]

    assert "\N{GREEK SMALL LETTER ALPHA}-agent studies" in titles


def test_the_feed_marks_a_withdrawn_paper(alice, corpus):
    """As the digest does ("(withdrawn)" after its title)."""
    follow(alice, corpus["agents"])
    record = paper_record("2606.00301", title="Agent withdrawn", withdrawn=True)
    tag_papers(upsert_records([record]).changed_ids)

    titles = [entry.title for entry in read(feed_path(alice)).entries]

    assert "Agent withdrawn (withdrawn)" in titles
    assert "Agent 1" in titles


def test_a_reader_following_nothing_gets_an_empty_feed_that_says_so(alice, corpus):
    feed = read(feed_path(alice))

    assert feed.entries == []
    assert feed.feed.subtitle.startswith("You follow no topics yet")


def test_each_reader_gets_only_their_own_feed(alice, bob, corpus):
    follow(alice, corpus["agents"])
    follow(bob, corpus["robots"])

    alices = read(feed_path(alice))
    bobs = read(feed_path(bob))

    assert len(alices.entries) == AGENT_PAPERS
    assert [entry.title for entry in bobs.entries] == ["An agent and a robot"]


def test_readers_of_the_same_topics_share_a_render_but_not_an_address(
    alice, bob, corpus
):
    follow(alice, corpus["agents"])
    follow(bob, corpus["agents"])
    alices_path, bobs_path = feed_path(alice), feed_path(bob)
    read(alices_path)  # rendered and cached for the readers of these topics

    response = Client().get(bobs_path)

    assert bobs_path.encode() in response.content
    assert alices_path.encode() not in response.content


def test_the_feed_follows_a_new_follow_and_a_new_paper(
    alice, corpus, django_capture_on_commit_callbacks
):
    follow(alice, corpus["robots"])
    path = feed_path(alice)
    assert len(read(path).entries) == 1

    follow(alice, corpus["agents"])
    assert len(read(path).entries) == AGENT_PAPERS

    with django_capture_on_commit_callbacks(execute=True):
        changed = upsert_records([paper_record("2606.00301")]).changed_ids
        tag_papers(changed)
        content_changed(papers=changed)  # what the ingest pipeline says
    assert len(read(path).entries) == AGENT_PAPERS + 1


def test_the_feed_costs_few_queries_and_one_once_cached(
    alice, corpus, django_assert_max_num_queries
):
    follow(alice, corpus["agents"], corpus["robots"])
    path = feed_path(alice)
    client = Client()

    # The key, the followed topics and authors, the saved searches and whether a
    # model ranks for the reader, the topics' names, the newest of the topics
    # and the papers.
    with django_assert_max_num_queries(8):
        assert client.get(path).status_code == 200
    # The key alone: the follows and the Atom come from the cache.
    with django_assert_max_num_queries(1):
        assert client.get(path).status_code == 200


def test_the_feed_is_kept_by_no_shared_cache(alice, corpus):
    response = Client().get(feed_path(alice))

    assert response["Cache-Control"] == "private"
    assert response["X-Robots-Tag"] == "noindex"


# --- The key ----------------------------------------------------------------------


def not_found(path: str) -> bytes:
    response = Client().get(path)
    assert response.status_code == 404
    return response.content


def test_an_unknown_a_revoked_and_a_malformed_key_are_the_same_404(alice, corpus):
    path = feed_path(alice)
    unknown = not_found("/feed/" + "0" * feed_tokens.KEY_LENGTH + ".atom")

    assert feed_tokens.revoke_feed(alice)

    assert not_found(path) == unknown
    assert not_found("/feed/not-a-key.atom") == unknown


def test_rotating_kills_the_old_address_and_opens_a_new_one(alice, corpus):
    old = feed_path(alice)
    new = f"/feed/{feed_tokens.rotate_feed(alice)}.atom"

    assert new != old
    not_found(old)
    read(new)


def test_a_deactivated_readers_feed_is_gone(alice, corpus):
    path = feed_path(alice)
    User.objects.filter(pk=alice.pk).update(is_active=False)

    not_found(path)


def test_only_a_digest_of_the_key_is_stored(alice):
    key = feed_tokens.create_feed(alice)

    stored = FeedToken.objects.get(user=alice)
    assert stored.digest == token_digest(key)
    assert key not in {stored.nonce, stored.digest}
    # Creating again gives the same address: it is made again, not stored.
    assert feed_tokens.create_feed(alice) == key


def test_a_key_that_cannot_be_made_again_still_opens_the_feed(alice, corpus, settings):
    path = feed_path(alice)
    settings.SECRET_KEY = "another secret key, rotated by the operator" * 2

    assert feed_tokens.key_of(FeedToken.objects.get(user=alice)) is None
    read(path)


# --- The settings page ------------------------------------------------------------


def test_settings_create_show_rotate_and_revoke_without_javascript(alice, corpus):
    client = signed_in(alice)
    assert "Create a private feed" in client.get("/settings/").text

    response = client.post("/settings/feed/create/")
    assert (response.status_code, response["Location"]) == (
        302,
        "/settings/#feed-heading",
    )
    page = client.get("/settings/").text
    [address] = re.findall(r'id="feed-url"[^>]* value="([^"]+)"', page)
    assert address.startswith(f"{SITE}/feed/")
    # Shown again on every visit, so it can be copied into another reader.
    assert address in client.get("/settings/").text
    read(address.removeprefix(SITE))

    client.post("/settings/feed/rotate/")
    [rotated] = re.findall(
        r'id="feed-url"[^>]* value="([^"]+)"', client.get("/settings/").text
    )
    assert rotated != address
    not_found(address.removeprefix(SITE))

    client.post("/settings/feed/revoke/")
    assert "Create a private feed" in client.get("/settings/").text
    not_found(rotated.removeprefix(SITE))
    # Rotate from a page of before the revoke: the feed stays off.
    stale = client.post("/settings/feed/rotate/", follow=True)
    assert "You had no private feed, so none was made; create one." in stale.text
    assert not FeedToken.objects.exists()


@pytest.mark.parametrize("action", ["create", "rotate", "revoke"])
def test_settings_feed_actions_are_posts_of_a_signed_in_reader(alice, action):
    assert signed_in(alice).get(f"/settings/feed/{action}/").status_code == 405
    response = Client().post(f"/settings/feed/{action}/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert not FeedToken.objects.exists()
