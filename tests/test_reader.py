"""What a reader does on the site: follow, save, the feed, weeks, feeds, BibTeX."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta
from urllib.parse import parse_qs
from urllib.parse import urlsplit
from xml.etree import ElementTree

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import feed_tokens
from papers.authors import set_following_author
from papers.ingest.runs import ingest_entries
from papers.ingest.upsert import upsert_records
from papers.models import IngestRun
from papers.models import Paper
from papers.models import SavedPaper
from papers.models import ShownPaper
from papers.versions import reader_key
from papers.versions import version_of
from tests.cachetrips import cache_round_trips
from tests.clients import signed_in
from tests.notifications.factories import add_papers
from tests.papers.factories import collaboration
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from tests.visible import visible_text
from topics.curation import exclude_paper
from topics.following import set_following
from topics.models import Follow
from topics.tagging import IngestTagger
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db

# A topic page rendered anew: who, the topic, its momentum (read apart: an edit
# of the topic's text reads the topic alone), its papers and rows, its follower
# count and the reader's state.
MAX_PAGE_QUERIES = 12
HOSTILE = "<script>alert(1)</script> & {braces} 100% _under_"
ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture
def topic(db):
    topic = make_topic("RL for LLM Agents", rule="ti:agent", slug="rl-agents")
    records = [
        paper_record(
            f"2606.{n:05d}",
            title=f"Agent study {n}",
            published=datetime(2026, 6, day, 15, tzinfo=UTC),
        )
        for n, day in enumerate([1, 2, 8, 9, 10, 15, 16], start=1)
    ]
    records.append(paper_record("2606.00100", title=f"Agent {HOSTILE}"))
    tag_papers(upsert_records(records).changed_ids)
    return topic


def json_post(client: Client, url: str, on: int):
    return client.post(url, {"on": on}, headers={"accept": "application/json"})


# --- Follow ---------------------------------------------------------------------


def test_follow_and_unfollow_in_place(reader, alice, topic):
    response = json_post(reader, "/topics/rl-agents/follow/", 1)
    assert response.json() == {"on": True}
    assert Follow.objects.filter(user=alice, topic=topic).exists()

    # Explicit state: the same request twice changes nothing more.
    json_post(reader, "/topics/rl-agents/follow/", 1)
    assert Follow.objects.filter(user=alice).count() == 1

    assert json_post(reader, "/topics/rl-agents/follow/", 0).json() == {"on": False}
    assert not Follow.objects.filter(user=alice).exists()


def test_follow_without_javascript_is_a_form_that_returns_to_the_page(
    reader, alice, topic
):
    page = reader.get("/topics/rl-agents/")
    assert 'action="/topics/rl-agents/follow/"' in page.text
    assert "csrfmiddlewaretoken" in page.text

    response = reader.post(
        "/topics/rl-agents/follow/", {"on": "1", "next": "/topics/rl-agents/"}
    )

    assert response.status_code == 302
    assert response["Location"] == "/topics/rl-agents/"
    assert "Following" in reader.get("/topics/rl-agents/").text


def test_follow_needs_csrf(alice, topic):
    client = signed_in(alice, enforce_csrf_checks=True)

    assert client.post("/topics/rl-agents/follow/", {"on": "1"}).status_code == 403
    assert not Follow.objects.exists()


def test_anonymous_follow_goes_to_login_then_back_to_finish(client, alice, topic):
    response = client.post(
        "/topics/rl-agents/follow/", {"on": "1", "next": "/topics/rl-agents/"}
    )
    assert response.status_code == 302
    login = urlsplit(response["Location"])
    assert login.path == "/accounts/login/"
    come_back = parse_qs(login.query)["next"][0]

    client.force_login(alice)
    confirm = client.get(come_back)
    assert "Follow RL for LLM Agents?" in confirm.text
    assert not Follow.objects.exists()  # a GET changes nothing

    client.post(come_back.split("?")[0], {"on": "1", "next": "/topics/rl-agents/"})
    assert Follow.objects.filter(user=alice, topic=topic).exists()


def test_anonymous_in_place_click_gets_the_login_address(client, topic):
    response = json_post(client, "/topics/rl-agents/follow/", 1)

    assert response.status_code == 401
    assert response.json()["login_url"].startswith("/accounts/login/?next=")


def test_next_never_leaves_the_site(reader, topic):
    response = reader.post(
        "/topics/rl-agents/follow/", {"on": "1", "next": "https://evil.example/"}
    )

    assert response["Location"] == "/topics/rl-agents/"


# --- Save and the saved page ------------------------------------------------------


def test_save_and_unsave_in_place_and_the_saved_page(reader, alice, bob, topic):
    json_post(reader, "/papers/2606.00003/save/", 1)
    json_post(reader, "/papers/2606.00100v1/save/", 1)
    SavedPaper.objects.create(user=bob, paper=Paper.objects.get(arxiv_id="2606.00005"))

    page = reader.get("/saved/")
    assert "Agent study 3" in page.text
    assert "Agent study 5" not in page.text  # bob's
    assert "&lt;script&gt;" in page.text

    json_post(reader, "/papers/2606.00003/save/", 0)
    assert list(alice.saved_papers.values_list("paper__arxiv_id", flat=True)) == [
        "2606.00100"
    ]


def test_a_visitors_save_or_rating_is_confirmed_under_the_title_as_text(reader, db):
    """Back from logging in, a visitor's Save asked 'Save “X$^3$-OPD: …”?',
    the title's TeX as arXiv stores it, where the row they clicked read X³-OPD."""
    upsert_records([paper_record("2606.00400", title="X$^3$-OPD: Distilling")])

    save = reader.get("/papers/2606.00400/save/?on=1&next=/")
    rate = reader.get("/papers/2606.00400/rate/?rating=up&next=/")

    assert "Save “X³-OPD: Distilling”?" in visible_text(save.text)
    assert "Thumbs up for “X³-OPD: Distilling”?" in visible_text(rate.text)


def test_saved_page_says_what_each_export_format_is_for(reader, alice, topic):
    """What RIS and CSL-JSON are for was said only in their buttons' tooltips,
    which a phone never shows."""
    SavedPaper.objects.create(
        user=alice, paper=Paper.objects.get(arxiv_id="2606.00001")
    )

    page = visible_text(reader.get("/saved/").text)

    assert (
        "BibTeX is for LaTeX; RIS for Zotero, Mendeley and EndNote; "
        "CSL-JSON for citeproc, Pandoc and Zotero." in page
    )


def test_saved_page_needs_login(client, db):
    assert client.get("/saved/").status_code == 302


def test_bibtex_of_all_or_ticked_saved_papers(reader, alice, topic):
    for arxiv_id in ["2606.00001", "2606.00100"]:
        SavedPaper.objects.create(
            user=alice, paper=Paper.objects.get(arxiv_id=arxiv_id)
        )

    everything = reader.get("/saved/bibtex/")
    ticked = reader.get("/saved/bibtex/?id=2606.00001").getvalue().decode()

    assert everything["Content-Disposition"].startswith("attachment")
    text = everything.getvalue().decode()
    assert text.count("@misc{") == 2
    assert "eprint = {2606.00001}" in text
    assert r"\& {braces} 100\% \_under\_" in text  # TeX kept, specials escaped
    assert "author = {Ada Lovelace and Alan Turing}" in text
    assert ticked.count("@misc{") == 1
    assert "2606.00001" in ticked


def test_paper_page_shows_why_related_papers_and_bibtex(
    reader, topic, django_assert_max_num_queries
):
    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        response = reader.get("/papers/2606.00003/")

    assert "matched <q>agent</q> in the title" in response.text
    assert "More in RL for LLM Agents</h2>" in response.text
    assert "Agent study 7" in response.text  # shares the topic
    assert "@misc{arxiv:2606.00003," in response.text
    assert 'aria-pressed="false"' in response.text


def test_related_papers_come_from_the_weeks_around_the_paper(reader, topic):
    long_before = add_papers(topic, date(2025, 6, 1), 3, title="Agent history")
    page = reader.get("/papers/2606.00003/").text

    assert "Agent study 7" in page
    assert "Agent history" not in page  # a year older, though it shares the topic
    # From the old paper's side the same: its neighbours, not this year's.
    old = reader.get(f"/papers/{long_before[0].arxiv_id}/").text
    assert "Agent history" in old
    assert "Agent study 7" not in old


def test_related_papers_sharing_more_topics_come_first(reader, topic):
    make_topic("Agent planning", rule="ti:planning", slug="planning")
    records = [
        paper_record(
            f"2606.0020{n}",
            title=f"Agent planning {n}",
            published=datetime(2026, 6, 2 + n, 15, tzinfo=UTC),
        )
        for n in (1, 2)
    ]
    tag_papers(upsert_records(records).changed_ids)

    page = reader.get("/papers/2606.00201/").text
    assert "More in Agent planning and RL for LLM Agents</h2>" in page
    start = page.index('class="related-papers"')
    related = page[start : page.index("</ul>", start)]

    # Both of its topics before one, though "Agent study 7" is newer.
    assert related.index("Agent planning 2") < related.index("Agent study 7")
    assert related.index("Agent study 7") < related.index("Agent study 6")
    assert related.count("Agent planning 1") == 0  # not itself


def test_a_paper_in_no_topic_names_its_category_for_the_newest_there(reader, topic):
    """With no topic to share, the list is its category's newest papers, and
    says so: they are not related to it."""
    record = paper_record("2606.00301", title="A loom", categories=("cs.HC",))
    others = [
        paper_record(f"2606.0030{n}", title=f"Weaving {n}", categories=("cs.HC",))
        for n in (2, 3)
    ]
    tag_papers(upsert_records([record, *others]).changed_ids)

    page = reader.get("/papers/2606.00301/").text

    assert "Newest in cs.HC</h2>" in page
    assert "Related papers" not in page
    assert "Weaving 2" in page


def test_a_paper_listed_with_no_primary_category_has_the_newest_of_its_first(
    reader, topic
):
    """Some of arXiv's records name no primary category: the list and its
    heading take the first of its categories."""
    record = paper_record("2606.00301", title="A loom", categories=("cs.HC", "cs.CY"))
    record = dataclasses.replace(record, primary_category=None)
    other = paper_record("2606.00302", title="Weaving", categories=("cs.CY",))
    tag_papers(upsert_records([record, other]).changed_ids)

    page = reader.get("/papers/2606.00301/").text

    assert "Newest in cs.CY</h2>" in page
    assert "Weaving" in page


# --- Topic page: weeks, pages, feed -----------------------------------------------


def test_topic_page_filters_by_week(client, topic):
    response = client.get("/topics/rl-agents/?week=2026-06-08")

    assert "Papers of the week of Jun 8, 2026" in response.text
    titles = re.findall(r"Agent study \d+", response.text)
    assert sorted(set(titles)) == ["Agent study 3", "Agent study 4", "Agent study 5"]


@pytest.mark.parametrize(
    ("week", "said"),
    [
        ("last-tuesday", "“last-tuesday” is not a date (YYYY-MM-DD)"),
        # Echoed without the control characters no page can show.
        ("%00last%1b", "“last” is not a date (YYYY-MM-DD)"),
        # A date whose week would end past the last date there is.
        ("9999-12-25", "“9999-12-25” is not a week papers are announced in"),
    ],
)
def test_topic_page_with_an_unreadable_week_says_so_and_shows_all(
    client, topic, week, said
):
    response = client.get(f"/topics/rl-agents/?week={week}")

    assert response.status_code == 200
    assert f"{said}; showing all weeks." in response.text
    assert "Agent study 7" in response.text


def test_topic_page_for_a_reader_shows_follow_and_saved_state(
    reader, alice, topic, django_assert_max_num_queries
):
    Follow.objects.create(user=alice, topic=topic)
    SavedPaper.objects.create(
        user=alice, paper=Paper.objects.get(arxiv_id="2606.00007")
    )

    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        response = reader.get("/topics/rl-agents/")

    assert "Following" in response.text
    assert response.text.count('aria-pressed="true"') == 2  # followed + one saved
    assert "J</kbd>/<kbd>K</kbd> move" in response.text


def test_topic_atom_feed_lists_papers_escaped(client, topic):
    response = client.get("/topics/rl-agents/feed/")

    assert response["Content-Type"].startswith("application/atom+xml")
    feed = ElementTree.fromstring(response.content)
    titles = [entry.findtext(f"{ATOM}title") for entry in feed.iter(f"{ATOM}entry")]
    # Escaped in the XML and read back whole; the braces are TeX's, read as typeset.
    assert f"Agent {HOSTILE}".replace("{braces}", "braces") in titles
    assert len(titles) == 8


def test_topic_atom_feed_dates_papers_read_from_a_daily_listing(client, topic):
    """A listing names no submission time, only its announcement day: each
    entry is dated by that (Atom requires an <updated>; without one a feed
    reader dates the paper by when it fetched it)."""
    listed = dataclasses.replace(
        paper_record("2606.00200", title="Agent from a listing"),
        published=None,
        updated=None,
        announced=date(2026, 6, 17),
        announce_type="new",
    )
    tag_papers(upsert_records([listed]).changed_ids)

    entry = atom_entry(client.get("/topics/rl-agents/feed/"), "Agent from a listing")

    # The listing's own stamp: midnight in New York on its day.
    assert entry.findtext(f"{ATOM}updated") == "2026-06-17T00:00:00-04:00"


def test_topic_atom_feed_dates_a_replacement_read_from_a_daily_listing(client, topic):
    """A paper first read as a replacement in a listing has no dates at all,
    not even an announcement day, until another record fills them in: its
    entry still has the <updated> Atom requires (when it was stored)."""
    listed = dataclasses.replace(
        paper_record("2606.00201", version=2, title="Agent replaced in a listing"),
        published=None,
        updated=None,
        announced=date(2026, 6, 17),
        announce_type="replace",
    )
    tag_papers(upsert_records([listed]).changed_ids)
    stored = Paper.objects.get(arxiv_id="2606.00201")
    assert stored.first_announced is None

    response = client.get("/topics/rl-agents/feed/")

    entry = atom_entry(response, "Agent replaced in a listing")
    assert entry.findtext(f"{ATOM}updated") == stored.created_at.isoformat()


def test_topic_atom_feed_marks_a_withdrawn_paper(client, topic):
    """As the digest does: its entry read as any other, new work to read."""
    withdrawn = paper_record("2606.00007", version=2, title="Agent study 7")
    tag_papers(
        upsert_records([dataclasses.replace(withdrawn, withdrawn=True)]).changed_ids
    )

    feed = ElementTree.fromstring(client.get("/topics/rl-agents/feed/").content)

    titles = [entry.findtext(f"{ATOM}title") for entry in feed.iter(f"{ATOM}entry")]
    assert "Agent study 7 (withdrawn)" in titles
    assert "Agent study 6" in titles


def atom_ids(response) -> tuple[str, dict[str, str]]:
    """The feed's <id> and each entry's, by the entry's title."""
    feed = ElementTree.fromstring(response.content)
    entries = {
        entry.findtext(f"{ATOM}title"): entry.findtext(f"{ATOM}id")
        for entry in feed.iter(f"{ATOM}entry")
    }
    return feed.findtext(f"{ATOM}id"), entries


def test_topic_atom_feed_keeps_its_ids_when_the_topic_is_renamed(client, topic):
    """Feed readers know entries by their ids: new ones would show every paper
    again as new. The feed's link follows the new address."""
    before = atom_ids(client.get("/topics/rl-agents/feed/"))

    topic.name, topic.slug = "LLM Agents", "llm-agents"
    topic.save()
    response = client.get("/topics/rl-agents/feed/", follow=True)

    assert atom_ids(response) == before
    link = ElementTree.fromstring(response.content).find(f"{ATOM}link")
    assert link.get("href").endswith("/topics/llm-agents/")


def atom_entry(response, title: str) -> ElementTree.Element:
    """The feed's one entry of this title."""
    [entry] = [
        entry
        for entry in ElementTree.fromstring(response.content).iter(f"{ATOM}entry")
        if entry.findtext(f"{ATOM}title") == title
    ]
    return entry


def test_topic_atom_feed_names_a_collaborations_first_authors(client, db):
    """Every name of 50 papers of 2,000 authors was 5 MB of feed, more than
    feed readers fetch (CommaFeed stops at 5 MiB, some at 2): an entry names
    the first 25 and its summary counts the others."""
    make_topic("Collaborations", rule="ti:collaboration", slug="big")
    tag_papers(upsert_records(collaboration(1, 300)).changed_ids)

    entry = atom_entry(client.get("/topics/big/feed/"), "Collaboration result 1")

    names = [a.findtext(f"{ATOM}name") for a in entry.iter(f"{ATOM}author")]
    assert names[:3] == ["Spokesperson", "Deputy", "Member 2"]
    assert names[-1] == "Member 24"
    assert len(names) == 25
    assert "And 275 more authors" in entry.findtext(f"{ATOM}summary")


def test_a_feed_readers_poll_of_an_unchanged_feed_is_a_304(client, topic):
    """Not the whole feed again; and a change that leaves the newest entry's
    date as it was (a paper leaving the topic) is a new feed, not a 304."""
    first = client.get("/topics/rl-agents/feed/")
    etag = first["ETag"]

    again = client.get("/topics/rl-agents/feed/", HTTP_IF_NONE_MATCH=etag)
    assert (again.status_code, again.content) == (304, b"")
    exclude_paper(topic, Paper.objects.get(arxiv_id="2606.00001"))
    changed = client.get("/topics/rl-agents/feed/", HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200
    assert "Last-Modified" not in changed


def test_both_feeds_say_the_language_every_page_says(client, alice, topic):
    """The topic feed said xml:lang="en-us" (Django's LANGUAGE_CODE), the
    private feed "en", the pages <html lang="en">."""
    xml_lang = "{http://www.w3.org/XML/1998/namespace}lang"
    page = re.search(r'<html lang="([^"]+)"', client.get("/topics/").text)
    topic_feed = ElementTree.fromstring(client.get("/topics/rl-agents/feed/").content)
    own = client.get(f"/feed/{feed_tokens.create_feed(alice)}.atom")

    assert page is not None
    assert topic_feed.get(xml_lang) == page[1]
    assert ElementTree.fromstring(own.content).get(xml_lang) == page[1]


def test_feed_of_unknown_topic_is_404(client, db):
    assert client.get("/topics/nope/feed/").status_code == 404


# --- The reader's feed ------------------------------------------------------------


def test_feed_marks_seen_only_the_papers_reported_on_screen(reader, alice, topic):
    Follow.objects.create(user=alice, topic=topic)
    served = list(seen_rows(reader.get("/")))
    assert len(served) == 8

    # site.js reports the rows the reader had on screen: two of the eight.
    assert report_seen(reader, served[:2]).status_code == 204
    seen = seen_rows(reader.get("/"))

    assert [arxiv_id for arxiv_id, mark in seen.items() if mark] == served[:2]


def report_seen(client: Client, arxiv_ids: list[str]):
    return client.post("/feed/seen/", {"paper": arxiv_ids})


def changed_outside_the_pipeline() -> None:
    """Papers written straight to the database move no page version (ingest,
    tagging and curation do): forget the cached pages instead."""
    cache.clear()


def seen_rows(response) -> dict[str, bool]:
    rows = re.findall(
        r'<article class="paper-row( seen)?" data-paper="([^"]+)"', response.text
    )
    return {arxiv_id: bool(mark) for mark, arxiv_id in rows}


def test_a_new_account_sees_nothing_marked_seen(reader, alice, topic):
    Follow.objects.create(user=alice, topic=topic)

    rows = seen_rows(reader.get("/"))

    assert len(rows) == 8
    assert not any(rows.values())


def test_a_newly_followed_topics_papers_are_new_in_the_feed(reader, alice, topic):
    Follow.objects.create(user=alice, topic=topic)
    report_seen(reader, list(seen_rows(reader.get("/"))))
    other = make_topic("Older topic", rule="ti:robot")
    older = add_papers(other, date(2026, 5, 4), 3, title="Robot")
    Follow.objects.create(user=alice, topic=other)

    rows = seen_rows(reader.get("/"))

    assert not any(rows[paper.arxiv_id] for paper in older)
    assert rows["2606.00001"]


def test_visiting_the_feed_writes_nothing(reader, alice, topic):
    Follow.objects.create(user=alice, topic=topic)

    for _ in range(2):
        with CaptureQueriesContext(connection) as queries:
            reader.get("/")

        writes = ("INSERT", "UPDATE", "DELETE")
        assert not [q for q in queries.captured_queries if q["sql"].startswith(writes)]
    assert not ShownPaper.objects.exists()


def test_a_feed_shown_again_costs_no_query(
    reader, alice, topic, django_assert_num_queries
):
    Follow.objects.create(user=alice, topic=topic)
    reader.get("/")  # renders the page
    reader.get("/")  # fills it for the reader, and keeps that in the process

    # The reader's state is read with the page: no query, and the cache in two
    # round trips (the session; the page with the reader's user and the
    # versions of what they follow, as this process last read it).
    with django_assert_num_queries(0), cache_round_trips() as trips:
        reader.get("/")
    assert len(trips) == 2


def test_a_report_of_papers_seen_costs_a_few_queries_whatever_its_size(
    reader, alice, topic, django_assert_max_num_queries
):
    Follow.objects.create(user=alice, topic=topic)
    add_papers(topic, date(2026, 7, 1), 30, title="Agent")
    page = list(seen_rows(reader.get("/")))

    with django_assert_max_num_queries(6):
        report_seen(reader, page)

    assert ShownPaper.objects.filter(user=alice).count() == 25


def test_a_report_of_papers_already_seen_leaves_the_readers_pages_as_they_are(
    reader, alice, topic, django_capture_on_commit_callbacks
):
    Follow.objects.create(user=alice, topic=topic)
    page = list(seen_rows(reader.get("/")))
    with django_capture_on_commit_callbacks(execute=True):
        report_seen(reader, page[:2])
    before = version_of(reader_key(alice.pk))

    # Every visit reports the rows on screen again, those marked already too.
    with django_capture_on_commit_callbacks(execute=True):
        report_seen(reader, page[:2])
    assert version_of(reader_key(alice.pk)) == before

    with django_capture_on_commit_callbacks(execute=True):
        report_seen(reader, page[:3])
    assert version_of(reader_key(alice.pk)) != before


@pytest.mark.parametrize(
    ("papers", "status"),
    [
        ([], 204),
        (["2606.00001", "9999.99999", "<script>", "x" * 500], 204),
        (["2606.00001", "2606.00002\x00"], 204),  # PostgreSQL refuses NUL
        ([f"2606.{n:05d}" for n in range(101)], 400),
    ],
)
def test_a_report_of_papers_seen_takes_only_what_it_can(
    reader, alice, topic, papers, status
):
    response = report_seen(reader, papers)

    assert response.status_code == status
    expected = {"2606.00001"} if status == 204 and papers else set()
    marked = ShownPaper.objects.filter(user=alice)
    assert set(marked.values_list("paper__arxiv_id", flat=True)) == expected


def test_a_report_of_papers_seen_is_a_signed_in_post(client, reader, topic):
    assert report_seen(client, ["2606.00001"]).status_code == 403
    assert reader.get("/feed/seen/").status_code == 405
    forged = Client(enforce_csrf_checks=True)
    forged.cookies = reader.cookies
    assert report_seen(forged, ["2606.00001"]).status_code == 403
    assert not ShownPaper.objects.exists()


def test_what_a_reader_follows_kept_by_a_process_is_read_anew_once_it_changes(
    reader, alice, topic, django_capture_on_commit_callbacks
):
    robots = make_topic("Robot Learning", rule="ti:robot", slug="robots")
    tag_papers(
        upsert_records([paper_record("2606.00200", title="A robot")]).changed_ids
    )
    Follow.objects.create(user=alice, topic=topic)
    assert "A robot" not in reader.get("/").text  # what they follow, kept

    # Followed in another process (a follow moves the reader's version).
    with django_capture_on_commit_callbacks(execute=True):
        set_following(alice, robots, True)
    assert "A robot" in reader.get("/").text

    # A followed topic renamed moves topics' names.
    with django_capture_on_commit_callbacks(execute=True):
        topic.name = "Agents, renamed"
        topic.save()
    assert "Agents, renamed" in reader.get("/").text


def test_a_reader_signed_out_elsewhere_gets_the_visitors_home(alice, topic):
    Follow.objects.create(user=alice, topic=topic)
    reader = signed_in(alice)
    assert "you follow" in reader.get("/").text
    alice.set_password("a-new-password-for-alice")
    alice.save()  # other sessions end: their hash no longer matches

    home = reader.get("/").text

    assert "you follow" not in home
    assert ">Log in</a>" in home
    # The follows read for that session are the user's own, still.
    assert "you follow" in signed_in(alice).get("/").text


def test_the_feed_forgets_what_was_seen_long_ago(reader, alice, topic, settings):
    Follow.objects.create(user=alice, topic=topic)
    report_seen(reader, list(seen_rows(reader.get("/"))))
    ShownPaper.objects.update(
        shown_at=timezone.now() - timedelta(days=settings.MOMENTUM_SEEN_DAYS + 1)
    )

    report_seen(reader, ["2606.00001"])

    # Only this report's record remains: the table does not grow without bound.
    assert ShownPaper.objects.filter(user=alice).count() == 1
    assert not ShownPaper.objects.filter(
        shown_at__lt=timezone.now() - timedelta(days=1)
    ).exists()


# --- Safety -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "address", ["/", "/topics/", "/topics/rl-agents/", "/papers/2606.00100/", "/saved/"]
)
def test_pages_satisfy_the_content_security_policy(reader, topic, address):
    response = reader.get(address)

    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "style-src 'self'" in policy
    html = response.text
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "inline script"
    assert not re.search(r"\son[a-z]+\s*=", html), "inline event handler"
    assert not re.search(r"\sstyle\s*=", html), "style attribute"
    assert "<script>alert(1)" not in html


# --- Cached pages for visitors ----------------------------------------------------


def test_visitor_buttons_are_get_forms_to_log_in_so_pages_carry_no_csrf_token(
    client, topic
):
    page = client.get("/topics/rl-agents/")

    assert 'method="get" action="/topics/rl-agents/follow/"' in page.text
    assert "csrfmiddlewaretoken" not in page.text
    response = client.get("/topics/rl-agents/follow/?on=1&next=/topics/rl-agents/")
    assert urlsplit(response["Location"]).path == "/accounts/login/"


def test_visitor_pages_are_cached_until_content_changes(
    client, topic, django_assert_num_queries, django_capture_on_commit_callbacks
):
    client.get("/topics/rl-agents/")
    with django_assert_num_queries(0):
        assert "Agent study 7" in client.get("/topics/rl-agents/").text

    with django_capture_on_commit_callbacks(execute=True):
        topic.name = "Agentic RL"
        topic.save()
    assert "Agentic RL" in client.get("/topics/rl-agents/").text

    with django_capture_on_commit_callbacks(execute=True):
        records = [paper_record("2606.00300", title="Agent newcomer")]
        run = IngestRun.objects.create(source="test")
        ingest_entries(run, records, tagger=IngestTagger())
    assert "Agent newcomer" in client.get("/topics/rl-agents/").text


def test_a_visitors_cached_topic_page_counts_followers_as_they_come_and_go(
    client, reader, topic, django_capture_on_commit_callbacks
):
    assert "0 followers" in client.get("/topics/rl-agents/").text

    with django_capture_on_commit_callbacks(execute=True):
        json_post(reader, "/topics/rl-agents/follow/", 1)
    assert "1 follower<" in client.get("/topics/rl-agents/").text

    with django_capture_on_commit_callbacks(execute=True):
        json_post(reader, "/topics/rl-agents/follow/", 0)
    assert "0 followers" in client.get("/topics/rl-agents/").text


def test_a_readers_own_state_is_cached_until_they_change_it(
    reader, alice, topic, django_assert_num_queries
):
    reader.get("/topics/rl-agents/")
    with django_assert_num_queries(0):  # who the reader is and their state: cached
        assert 'aria-pressed="true"' not in reader.get("/topics/rl-agents/").text

    set_following(alice, topic, True)

    assert 'aria-pressed="true"' in reader.get("/topics/rl-agents/").text


def test_the_feed_pages_through_its_newest_papers_and_says_so(
    reader, alice, topic, monkeypatch
):
    """A reader following most topics waited seconds for a page: the feed
    counted and paged all they hold. It pages through its newest
    FEED_CANDIDATES (here 3) of every source together, and says that older
    papers are on the pages of what it follows."""
    monkeypatch.setattr("topics.views.FEED_CANDIDATES", 3, raising=False)
    Follow.objects.create(user=alice, topic=topic)
    upsert_records([paper_record("2606.00300", authors=("Ada Newest",))])
    by_author = Paper.objects.get(arxiv_id="2606.00300")
    Paper.objects.filter(pk=by_author.pk).update(first_announced=date(2026, 9, 1))
    set_following_author(alice, by_author.authors.get(), True)
    changed_outside_the_pipeline()

    page = reader.get("/")

    assert '<span class="count">3+</span>' in page.text
    newest_in_topic = Paper.objects.filter(paper_topics__topic=topic).order_by(
        "-first_announced", "-id"
    )
    expected = ["2606.00300", *(p.arxiv_id for p in newest_in_topic[:2])]
    assert list(seen_rows(page)) == expected
    assert "Your feed shows its newest 3 papers" in page.text
