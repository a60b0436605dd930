"""Authors on the site: their page, links to it from every name, following
one, and their new papers in the feed."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.feed_tokens import create_feed
from papers.authors import COAUTHOR_PLACES_COUNTED
from papers.authors import set_following_author
from papers.ingest.records import AuthorRecord
from papers.ingest.runs import ingest_entries
from papers.ingest.upsert import upsert_records
from papers.models import Author
from papers.models import AuthorFollow
from papers.models import IngestRun
from tests.clients import signed_in
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from tests.visible import visible_text
from topics.following import set_following
from topics.saved_searches import create_search
from topics.tagging import IngestTagger
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db

# A page rendered anew: who, the author, the count and page of papers, the
# co-authors (the papers counted, then who), the topics, the rows, the
# reader's state.
MAX_PAGE_QUERIES = 12


def day(n: int) -> datetime:
    return datetime(2026, 6, n, 15, tzinfo=UTC)


@pytest.fixture
def corpus(db):
    """Ada wrote three agent papers (two with Alan, one with Grace) and a robot
    paper with Grace; Alan wrote one alone, and Edsger one without Ada."""
    agents = make_topic("RL for LLM Agents", rule="ti:agent", slug="rl-agents")
    robots = make_topic("Robot Learning", rule="ti:robot", slug="robot-learning")
    records = [
        paper_record("2606.00001", title="Agent one", published=day(1)),
        paper_record("2606.00002", title="Agent two", published=day(2)),
        paper_record(
            "2606.00003",
            title="Agent three",
            published=day(3),
            authors=("Ada Lovelace", "Grace Hopper"),
        ),
        paper_record(
            "2606.00004",
            title="Robot four",
            published=day(4),
            authors=("ADA LOVELACE", "Grace Hopper"),
        ),
        paper_record(
            "2606.00005",
            title="Robot <b>five</b>",
            published=day(5),
            authors=("Alan Turing",),
        ),
        paper_record(
            "2606.00006",
            title="Plain six",
            published=day(6),
            authors=("Edsger Dijkstra",),
        ),
    ]
    tag_papers(upsert_records(records).changed_ids)
    return {
        "agents": agents,
        "robots": robots,
        **{a.name.split()[0].lower(): a for a in Author.objects.all()},
    }


def ingest(record) -> None:
    """Store a paper as a harvest does: its pages' versions move at commit."""
    run = IngestRun.objects.create(source="test")
    ingest_entries(run, [record], tagger=IngestTagger())


def listed(html: str) -> list[str]:
    return re.findall(r'data-paper="([^"]+)"', html)


# --- The author's page -------------------------------------------------------


@pytest.mark.parametrize("who", ["visitor", "reader"])
def test_author_page_lists_papers_coauthors_and_topics(
    who, alice, corpus, django_assert_max_num_queries
):
    client = Client() if who == "visitor" else signed_in(alice)
    ada = corpus["ada"]

    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        page = client.get(f"/authors/{ada.pk}/")

    assert page.status_code == 200
    assert "<h1>Ada Lovelace</h1>" in page.text
    # Both printings of her name are hers, newest first.
    assert listed(page.text) == ["2606.00004", "2606.00003", "2606.00002", "2606.00001"]
    coauthors = page.text.split('id="coauthors"')[1].split("</ul>")[0]
    assert re.findall(
        r'href="/authors/(\d+)/">([^<]+)</a> <span[^>]*>(\d+)', coauthors
    ) == [
        (str(corpus["alan"].pk), "Alan Turing", "2"),
        (str(corpus["grace"].pk), "Grace Hopper", "2"),
    ]
    topics = page.text.split('id="author-topics"')[1].split("</ul>")[0]
    assert re.findall(
        r'href="(/topics/[^"]+/)">([^<]+)</a> <span[^>]*>(\d+)', topics
    ) == [
        ("/topics/rl-agents/", "RL for LLM Agents", "3"),
        ("/topics/robot-learning/", "Robot Learning", "1"),
    ]
    # What the numbers count is said, not only on hover, which a phone has not.
    assert "the papers written together" in coauthors
    assert "Papers together" not in coauthors
    assert "this author's papers in it" in topics
    # The rows are the shared rows, with the reader's own Save button.
    assert 'action="/papers/2606.00004/save/"' in page.text
    assert f'action="/authors/{ada.pk}/follow/"' in page.text


def test_author_page_is_paged_and_served_from_the_cache(
    client, corpus, django_assert_max_num_queries
):
    ada = corpus["ada"]
    upsert_records(
        [
            paper_record(f"2606.{n:05d}", title=f"More {n}", published=day(7))
            for n in range(100, 130)
        ]
    )
    first = client.get(f"/authors/{ada.pk}/")
    second = client.get(f"/authors/{ada.pk}/?page=2")

    assert len(listed(first.text)) == 25
    assert listed(second.text)[-1] == "2606.00001"
    assert "Page 2 of 2" in second.text
    with django_assert_max_num_queries(0):
        again = client.get(f"/authors/{ada.pk}/")
    assert again.text == first.text


def test_a_shared_authors_preview_and_canonical_address_are_their_page(
    client, corpus, settings
):
    """A chat app's preview names the author, and a search engine is told the
    page's one address: ?page= past the end shows the last page, and other
    parameters show the same page (a paper's and a topic's page said so,
    an author's did not)."""
    ada = corpus["ada"]
    upsert_records(
        [
            paper_record(f"2606.{n:05d}", title=f"More {n}", published=day(7))
            for n in range(100, 130)
        ]
    )
    first = f"{settings.MOMENTUM_SITE_URL}/authors/{ada.pk}/"
    named = {"": first, "1": first, "x": first, "2": f"{first}?page=2"}
    named["999"] = named["2"]

    for page, canonical in named.items():
        html = client.get(f"/authors/{ada.pk}/", {"page": page, "x": "1"}).text
        assert f'<link rel="canonical" href="{canonical}">' in html, page
        assert f'<meta property="og:url" content="{canonical}">' in html, page
        assert '<meta property="og:title" content="Ada Lovelace">' in html
        assert (
            '<meta property="og:description" content="Papers by Ada Lovelace on '
            'arXiv, their frequent co-authors and topics.">'
        ) in html


def test_a_new_paper_by_the_author_shows_on_their_cached_page(
    client, corpus, django_capture_on_commit_callbacks
):
    ada = corpus["ada"]
    assert "Fresh agent" not in client.get(f"/authors/{ada.pk}/").text

    with django_capture_on_commit_callbacks(execute=True):
        ingest(paper_record("2606.00200", title="Fresh agent", published=day(9)))

    assert listed(client.get(f"/authors/{ada.pk}/").text)[0] == "2606.00200"


def coauthor_counts(html: str) -> list[tuple[str, str]]:
    shown = html.split('id="coauthors"')[1].split("</ul>")[0]
    return re.findall(r'">([^<]+)</a> <span[^>]*>(\d+)', shown)


def collaboration(papers: int, size: int) -> Author:
    """A collaboration's papers, one a day, newest last: `size` authors each, the
    first of them ("Lead") on every one and "Member k" on paper n when k
    divides n + 1 (so Member 1 is on all, Member 2 on every second)."""
    upsert_records(
        [
            paper_record(
                f"2606.{n:05d}",
                title=f"Collaboration result {n}",
                published=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=n),
                authors=(
                    "Lead",
                    *[f"Member {k}" for k in range(1, 30) if (n + 1) % k == 0],
                    *[f"Student {n} {k}" for k in range(size)],
                )[:size],
            )
            for n in range(papers)
        ]
    )
    return Author.objects.get(name="Lead")


def test_coauthors_are_counted_among_the_newest_papers_up_to_a_bound(
    client, db, monkeypatch
):
    """GIVEN the co-authors counted over papers of at most 60 author places,
    WHEN a collaboration's lead has twelve papers of 20 authors,
    THEN the three newest are counted (papers 9, 10, 11), and the page says so."""
    monkeypatch.setattr("papers.authors.COAUTHOR_PLACES_COUNTED", 60)
    lead = collaboration(12, 20)

    page = client.get(f"/authors/{lead.pk}/").text

    # n + 1 is 10, 11 and 12: Member 2 is on two of them; ties go by name.
    assert coauthor_counts(page) == [
        ("Member 1", "3"),
        ("Member 2", "2"),
        ("Member 10", "1"),
        ("Member 11", "1"),
        ("Member 12", "1"),
        ("Member 3", "1"),
        ("Member 4", "1"),
        ("Member 5", "1"),
        ("Member 6", "1"),
        ("Student 10 0", "1"),
    ]
    assert "the papers written together among this author's 3 newest" in page


def test_an_authors_coauthors_are_all_counted_below_the_bound(client, db):
    lead = collaboration(12, 20)

    page = client.get(f"/authors/{lead.pk}/").text

    assert coauthor_counts(page)[:6] == [
        ("Member 1", "12"),
        ("Member 2", "6"),
        ("Member 3", "4"),
        ("Member 4", "3"),
        ("Member 5", "2"),
        ("Member 6", "2"),
    ]
    assert "Beside each, the papers written together.</p>" in page


def test_a_large_collaborations_author_page_is_bounded(
    client, db, django_assert_max_num_queries
):
    """An author of 60 papers of 500 authors each (30,000 author places): the
    co-authors are counted over the newest papers that hold the bound's places,
    in as many queries as any author's page."""
    lead = collaboration(60, 500)
    counted = COAUTHOR_PLACES_COUNTED // 500

    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        page = client.get(f"/authors/{lead.pk}/").text

    assert f"among this author's {counted} newest papers" in page
    assert coauthor_counts(page)[0] == ("Member 1", str(counted))


def test_an_author_left_without_papers_has_a_page(client, db):
    nobody = Author.objects.create(name="Nobody")

    page = client.get(f"/authors/{nobody.pk}/")

    assert "No papers by this author yet." in page.text
    assert 'id="coauthors"' not in page.text


def test_an_unknown_author_is_404(client, db):
    assert client.get("/authors/999999/").status_code == 404
    assert client.get("/authors/x/").status_code == 404


# --- Links from every name -------------------------------------------------------


def test_every_printed_author_name_links_to_the_authors_page(client, corpus):
    ada, grace = corpus["ada"], corpus["grace"]
    ada_link = f'<a href="/authors/{ada.pk}/">Ada Lovelace</a>'

    home = client.get("/").text
    topic = client.get("/topics/robot-learning/").text
    paper = client.get("/papers/2606.00004/").text
    search = client.get("/search/?q=robot").text

    for html in (home, topic, paper, search):
        assert ada_link in html
    assert f'<a href="/authors/{grace.pk}/">Grace Hopper</a>' in paper


def test_linking_names_adds_no_query_per_row(client, corpus):
    upsert_records(
        [
            paper_record(
                f"2606.{n:05d}",
                title=f"Agent {n}",
                authors=tuple(f"Writer {n} {k}" for k in range(5)),
            )
            for n in range(300, 320)
        ]
    )

    with CaptureQueriesContext(connection) as captured:
        home = client.get("/").text

    assert len(listed(home)) == 25
    assert home.count('href="/authors/') >= 25 * 3
    authorships = [q for q in captured if 'FROM "papers_authorship" ' in q["sql"]]
    assert len(authorships) == 1  # the rows' authors, read with the rows


def test_a_rows_folded_authors_are_shown_and_reached_without_hovering(client, db):
    """A row named three authors and then "+11", whose meaning ("11 more
    authors") only a tooltip gave, which a phone never shows: the fold says
    "more" and links to the paper's list of every author."""
    make_topic("RL for LLM Agents", rule="ti:agent", slug="rl-agents")
    record = paper_record("2606.00001", title="Agent crowd")
    authors = tuple(AuthorRecord(f"Writer {k}", (f"Lab {k}",)) for k in range(14))
    tag_papers(upsert_records([replace(record, authors=authors)]).changed_ids)

    page = client.get("/topics/rl-agents/").text
    row = visible_text(page)

    # Three names and affiliations in the row's line; twelve and six in its drawer.
    assert "Writer 2 +11 more" in row
    assert "Writer 11 +2 more" in row
    assert "Lab 2 +11 more" in row
    assert "Lab 5 +8 more" in row
    folds = re.findall(
        r'<a class="more" href="([^"]+)">\+\d+ more<span [^>]+> (\w+)', page
    )
    everyone = "/papers/2606.00001/#authors"
    assert folds == [(everyone, "authors"), (everyone, "affiliations")] * 2
    # There, every author with their affiliation.
    paper = client.get("/papers/2606.00001/").text
    assert '<ol class="authors" id="authors">' in paper
    assert "Writer 13 (Lab 13)" in visible_text(paper)


# --- Following an author ------------------------------------------------------------


def json_post(client: Client, url: str, on: int):
    return client.post(url, {"on": on}, headers={"accept": "application/json"})


def test_follow_an_author_in_place(reader, alice, corpus):
    url = f"/authors/{corpus['ada'].pk}/follow/"

    assert json_post(reader, url, 1).json() == {"on": True}
    json_post(reader, url, 1)  # the same request again changes nothing more
    assert AuthorFollow.objects.filter(user=alice, author=corpus["ada"]).count() == 1

    assert json_post(reader, url, 0).json() == {"on": False}
    assert not AuthorFollow.objects.exists()


def test_follow_an_author_without_javascript(reader, alice, corpus):
    page = f"/authors/{corpus['ada'].pk}/"
    assert "Follow this author" in reader.get(page).text

    response = reader.post(f"{page}follow/", {"on": "1", "next": page})

    assert response.status_code == 302
    assert response["Location"] == page
    button = reader.get(page).text.split(f'action="{page}follow/"')[1]
    assert 'aria-pressed="true">Following</button>' in button.split("</form>")[0]


def test_a_visitor_following_an_author_signs_in_first(client, alice, corpus):
    page = f"/authors/{corpus['ada'].pk}/"

    response = client.post(f"{page}follow/", {"on": "1", "next": page})

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert not AuthorFollow.objects.exists()
    client.force_login(alice)
    confirm = client.get(f"{page}follow/?on=1&next={page}")
    assert "Follow Ada Lovelace?" in confirm.text
    assert not AuthorFollow.objects.exists()  # a GET changes nothing


def test_following_an_author_needs_csrf(alice, corpus):
    client = signed_in(alice, enforce_csrf_checks=True)

    url = f"/authors/{corpus['ada'].pk}/follow/"
    assert client.post(url, {"on": "1"}).status_code == 403
    assert not AuthorFollow.objects.exists()


def test_a_follow_changes_the_readers_cached_page_only(alice, bob, corpus):
    page = f"/authors/{corpus['ada'].pk}/"
    as_alice, as_bob = signed_in(alice), signed_in(bob)
    as_alice.get(page)
    as_bob.get(page)

    set_following_author(alice, corpus["ada"], True)

    assert 'aria-pressed="true">Following' in as_alice.get(page).text
    assert 'aria-pressed="true">Following' not in as_bob.get(page).text


def test_settings_list_the_authors_followed_each_with_an_unfollow_button(
    reader, alice, corpus
):
    """They were listed nowhere there (only beside the feed and in the API):
    a reader could neither see nor leave them from their settings."""
    ada, grace = corpus["ada"], corpus["grace"]
    set_following_author(alice, grace, True)
    set_following_author(alice, ada, True)
    back = "/settings/#digest-authors-heading"

    page = reader.get("/settings/").text
    left = reader.post(f"/authors/{grace.pk}/follow/", {"on": "0", "next": back})

    authors = page.split('id="digest-authors-heading"')[1].split("</ul>")[0]
    assert authors.index("Grace Hopper") < authors.index("Ada Lovelace")
    assert f'<a href="/authors/{grace.pk}/">Grace Hopper</a>' in authors
    assert f'action="/authors/{grace.pk}/follow/"' in authors
    assert f'value="{back}"' in authors
    assert 'aria-label="Unfollow Grace Hopper">Unfollow</button>' in authors
    assert left.url == back
    assert [f.author for f in AuthorFollow.objects.filter(user=alice)] == [ada]
    assert "Grace Hopper" not in reader.get("/settings/").text


def test_settings_cost_as_many_queries_for_40_authors_followed_as_for_one(
    reader, alice, corpus, django_assert_num_queries
):
    set_following_author(alice, corpus["ada"], True)
    reader.get("/settings/")  # the session and user, read once and kept
    with CaptureQueriesContext(connection) as one:
        reader.get("/settings/")
    more = Author.objects.bulk_create(
        Author(name=f"Author {n}", key=f"author {n}") for n in range(39)
    )
    AuthorFollow.objects.bulk_create(AuthorFollow(user=alice, author=a) for a in more)

    with django_assert_num_queries(len(one)):
        page = reader.get("/settings/").text

    assert page.count('">Unfollow</button>') == 40


@pytest.mark.parametrize(
    ("follows", "said"),
    [
        ({"authors"}, "by the authors you follow"),
        ({"searches"}, "matching your saved searches"),
        (
            {"authors", "searches"},
            "by the authors you follow and matching your saved searches",
        ),
    ],
)
def test_settings_without_topics_say_what_the_digest_holds(
    follows, said, reader, alice, corpus
):
    """It told a reader following authors or keeping searches to "Follow
    topics to get their new papers", as if they followed nothing."""
    if "authors" in follows:
        set_following_author(alice, corpus["ada"], True)
    if "searches" in follows:
        create_search(alice, name="Robots", query="robot", syntax="search")

    page = reader.get("/settings/").text

    assert (
        f"No topic is in your digest: it holds the new papers {said}. "
        "Follow topics to get theirs too."
    ) in page
    assert "Your digest has nothing to hold" not in page


def test_settings_of_a_reader_following_nothing_say_so_once(reader, corpus):
    page = reader.get("/settings/").text

    assert "Your digest has nothing to hold: follow a topic" in page
    assert "No topic is in your digest" not in page
    assert "Follow topics to get" not in page


def test_settings_of_a_reader_following_a_topic_list_it(reader, alice, corpus):
    set_following(alice, corpus["robots"], True)
    set_following_author(alice, corpus["ada"], True)

    page = reader.get("/settings/").text

    assert "Topics in your digest" in page
    assert "No topic is in your digest" not in page


# --- The feed ----------------------------------------------------------------------


def test_the_feed_holds_new_papers_of_followed_topics_and_authors(
    reader, alice, corpus, django_assert_max_num_queries
):
    reader.get("/")  # signed in: the session and user are cached
    set_following(alice, corpus["robots"], True)
    set_following_author(alice, corpus["grace"], True)

    # A topic feed's (tests/test_pages.py: a page, and the saved searches and
    # model read with the follows), and the followed authors and which rows
    # they wrote; serving it writes nothing (papers.views.seen).
    with django_assert_max_num_queries(MAX_PAGE_QUERIES + 2 + 2):
        feed = reader.get("/").text

    # Robots: 4 and 5; by Grace: 3 and 4 (once, with its reason).
    assert listed(feed) == ["2606.00005", "2606.00004", "2606.00003"]
    grace = corpus["grace"]
    why = f'By <a href="/authors/{grace.pk}/">Grace Hopper</a>, whom you follow'
    assert feed.count(why) == 2
    before_five = feed.split('data-paper="2606.00005"')[0]
    assert "whom you follow" not in before_five.split('data-paper="')[-1]
    assert "from the 1 topic and by the 1 author you follow" in feed
    assert "Your authors" in feed


def test_a_feed_of_authors_only_shows_their_papers(reader, alice, corpus):
    set_following_author(alice, corpus["alan"], True)

    feed = reader.get("/").text

    assert listed(feed) == ["2606.00005", "2606.00002", "2606.00001"]
    assert "You don't follow any topic yet" not in feed


def test_readers_following_the_same_share_a_feed_that_others_do_not(alice, bob, corpus):
    set_following_author(alice, corpus["alan"], True)
    set_following_author(bob, corpus["edsger"], True)

    assert listed(signed_in(alice).get("/").text)[0] == "2606.00005"
    assert listed(signed_in(bob).get("/").text) == ["2606.00006"]


def test_a_followed_authors_new_paper_enters_the_cached_feed(
    reader, alice, corpus, django_capture_on_commit_callbacks
):
    set_following_author(alice, corpus["edsger"], True)
    assert listed(reader.get("/").text) == ["2606.00006"]

    with django_capture_on_commit_callbacks(execute=True):
        ingest(
            paper_record(
                "2606.00400",
                title="Go to considered",
                published=day(10),
                authors=("Edsger W. Dijkstra", "EDSGER DIJKSTRA"),
            )
        )

    assert listed(reader.get("/").text) == ["2606.00400", "2606.00006"]


def test_an_author_renamed_in_admin_is_named_anew_in_their_followers_feeds(
    reader, alice, admin_client, corpus, django_capture_on_commit_callbacks
):
    grace = corpus["grace"]
    set_following_author(alice, grace, True)
    atom = f"/feed/{create_feed(alice)}.atom"
    assert "Grace Hopper</a>, whom you follow" in reader.get("/").text
    assert "by Grace Hopper" in reader.get(atom).text

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(
            f"/admin/papers/author/{grace.pk}/change/", {"name": "Grace B. Hopper"}
        )

    feed = reader.get("/").text
    assert "Grace Hopper" not in feed
    assert "Grace B. Hopper</a>, whom you follow" in feed
    assert f'<li><a href="/authors/{grace.pk}/">Grace B. Hopper</a></li>' in feed
    assert "New papers by Grace B. Hopper" in reader.get(atom).text
