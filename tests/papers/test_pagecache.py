"""Pages rendered once for everyone (papers.pagecache): each change moves on the
versions of what it changed and nothing else, and a cache that fails is a miss."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from datetime import UTC
from datetime import date
from datetime import datetime
from types import SimpleNamespace
from unittest import mock

import pytest
from django.core.cache import cache
from django.core.cache.backends.base import BaseCache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from core.release import RELEASE
from papers import pagecache
from papers import slots
from papers import versions
from papers.ingest.records import PaperRecord
from papers.ingest.runs import ingest_entries
from papers.ingest.upsert import upsert_records
from papers.library import set_saved
from papers.models import IngestRun
from papers.models import Paper
from papers.versions import content_changed
from tests.cachetrips import cache_round_trips
from tests.clients import signed_in
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.curation import pin_paper
from topics.following import set_following
from topics.models import Topic
from topics.momentum import refresh_momentum
from topics.tagging import IngestTagger
from topics.tagging import tag_papers
from topics.topic_text import topic_text

pytestmark = pytest.mark.django_db

PAGES = [
    "/",
    "/topics/agents/",
    "/topics/robots/",
    "/papers/2606.00001/",
    "/papers/2606.00006/",
]


@pytest.fixture
def corpus(db):
    """Agents (papers 1-5, and 9 in both) and Robots (6-9)."""
    agents = make_topic("Agents", rule="ti:agent", slug="agents")
    robots = make_topic("Robots", rule="ti:robot", slug="robots")
    records = [paper_record(f"2606.{n:05d}", title=f"Agent {n}") for n in range(1, 6)]
    records += [paper_record(f"2606.{n:05d}", title=f"Robot {n}") for n in range(6, 9)]
    records.append(paper_record("2606.00009", title="An agent robot"))
    tag_papers(upsert_records(records).changed_ids)
    refresh_momentum()
    return {"agents": agents, "robots": robots}


@pytest.fixture
def ingest(django_capture_on_commit_callbacks):
    """Ingest records as a harvest does and commit: the versions of what they
    change move on."""

    def ingest(*records: PaperRecord) -> None:
        with django_capture_on_commit_callbacks(execute=True):
            ingest_entries(
                IngestRun.objects.create(source="t"),
                list(records),
                tagger=IngestTagger(),
            )

    return ingest


def served_from_cache(client: Client, address: str, capture) -> bool:
    """Whether a visitor's page came from the cache: then it costs no query."""
    with capture() as queries:
        assert client.get(address).status_code == 200
    return len(queries) == 0


@pytest.fixture
def warm(client, corpus, django_assert_num_queries):
    """The pages, cached; then a function saying which are still cached."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for address in PAGES:
        client.get(address)

    def still_cached() -> dict[str, bool]:
        return {
            address: served_from_cache(
                client, address, lambda: CaptureQueriesContext(connection)
            )
            for address in PAGES
        }

    assert all(still_cached().values())
    return still_cached


def test_ingesting_a_paper_in_one_topic_leaves_the_other_topics_page_cached(
    warm, ingest
):
    ingest(paper_record("2606.00100", title="A new agent"))

    assert warm() == {
        "/": False,  # the newest papers
        "/topics/agents/": False,
        "/topics/robots/": True,
        "/papers/2606.00001/": False,  # an Agents paper: related papers may change
        "/papers/2606.00006/": True,  # a Robots paper
    }


def test_editing_a_topic_moves_only_its_pages(
    warm, client, corpus, django_capture_on_commit_callbacks
):
    def version(topic: str) -> int:
        return cache.get(versions.version_key(versions.topic_key(topic)))

    agents, robots = version("agents"), version("robots")
    with django_capture_on_commit_callbacks(execute=True):
        corpus["robots"].description = "Robots that learn."
        corpus["robots"].save()

    assert (version("agents"), version("robots") != robots) == (agents, True)
    # The edit rendered the text it moved: no page costs a query.
    assert all(warm().values())
    assert "Robots that learn." in client.get("/topics/robots/").text


def test_renaming_a_topic_moves_every_page_that_shows_its_name(
    warm, corpus, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        corpus["robots"].name = "Robot Learning"
        corpus["robots"].save()

    assert not any(warm().values())


def test_a_follow_moves_only_the_followed_topics_page(
    warm, corpus, alice, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        set_following(alice, corpus["agents"], True)

    assert warm() == {
        "/": True,
        "/topics/agents/": False,  # its follower count
        "/topics/robots/": True,
        "/papers/2606.00001/": True,
        "/papers/2606.00006/": True,
    }


def test_a_follow_renders_no_topic_page_only_its_follower_count(
    client, corpus, alice, django_capture_on_commit_callbacks
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get("/topics/agents/")
    with django_capture_on_commit_callbacks(execute=True):
        set_following(alice, corpus["agents"], True)

    with CaptureQueriesContext(connection) as queries:
        page = client.get("/topics/agents/").text

    assert 'data-followers="1">1 follower<' in page
    assert "Momentum" in page
    assert "Robots" in page  # related: they share a paper
    # The count (a value read with the cached page): nothing renders anew.
    assert [q["sql"].split(" FROM ")[1].split()[0] for q in queries] == [
        '"topics_follow"'
    ]


def test_the_topic_pages_paper_count_follows_its_papers(client, corpus, ingest):
    assert '<span class="count">6</span>' in client.get("/topics/agents/").text
    ingest(paper_record("2606.00100", title="A new agent"))

    assert '<span class="count">7</span>' in client.get("/topics/agents/").text
    # Each week's count is its own: none in the week before the papers'.
    week = client.get("/topics/agents/?week=2026-05-25").text
    assert '<span class="count">0</span>' in week


def test_an_edit_of_a_topics_text_renders_no_page_only_the_text(
    client, corpus, django_capture_on_commit_callbacks
):
    client.get("/topics/agents/")
    with django_capture_on_commit_callbacks(execute=True):
        corpus["agents"].description = "Agents that <act>."
        corpus["agents"].definition = "Papers about agents.\n\nNot robots."
        corpus["agents"].save()

    with CaptureQueriesContext(connection) as queries:
        response = client.get("/topics/agents/")

    page = response.text
    assert '<meta name="description" content="Agents that &lt;act&gt;.">' in page
    assert "<p>Agents that &lt;act&gt;.</p>" in page
    assert "<p>Papers about agents.</p>\n\n<p>Not robots.</p>" in page
    assert '<span class="count">6</span>' in page
    assert "Agent 5" in page
    # The edit rendered the text (topics.topic_text): the page around it was
    # served as cached, and the text read with it.
    assert response.templates == []
    assert queries.captured_queries == []


def test_a_new_release_renders_its_pages_and_rows_anew(client, corpus, monkeypatch):
    """A deploy that changes a template or the code of a row serves what it
    renders, not the last release's cached pages (core.release)."""
    client.get("/topics/agents/")
    assert client.get("/topics/agents/").templates == []  # cached

    monkeypatch.setattr(pagecache, "RELEASE", "the-next-release")
    response = client.get("/topics/agents/")

    rendered = {template.name for template in response.templates}
    # The page, its rows (cached fragments) and its topic's text (a page value).
    assert {
        "topics/detail.html",
        "partials/paper_row.html",
        "topics/topic_text.html",
    } <= rendered
    assert client.get("/topics/agents/").templates == []  # cached, in this release


def test_a_topics_text_not_rendered_by_its_edit_is_rendered_by_its_page(
    client, corpus, django_capture_on_commit_callbacks
):
    client.get("/topics/agents/")
    with django_capture_on_commit_callbacks(execute=True):
        corpus["agents"].description = "Agents that act."
        corpus["agents"].save()
    # Evicted, or the edit's render failed.
    cache.delete(topic_text("agents", Topic.objects.get).key)

    with CaptureQueriesContext(connection) as queries:
        response = client.get("/topics/agents/")

    assert "Agents that act." in response.text
    assert [t.name for t in response.templates] == ["topics/topic_text.html"] * 4
    # The topic, read anew; not its papers, their count or related topics.
    assert [q["sql"].split(" FROM ")[1].split()[0] for q in queries] == [
        '"topics_topic"'
    ]


def test_an_edit_whose_text_render_fails_is_saved_and_shown(
    client, corpus, django_capture_on_commit_callbacks
):
    client.get("/topics/agents/")
    broken = mock.patch(
        "topics.topic_text.store_value", side_effect=RuntimeError("render failed")
    )
    with broken, django_capture_on_commit_callbacks(execute=True):
        corpus["agents"].description = "Agents that act."
        corpus["agents"].save()

    assert Topic.objects.get(slug="agents").description == "Agents that act."
    assert "Agents that act." in client.get("/topics/agents/").text


def test_a_change_to_a_listed_paper_shows_on_the_topic_page(client, corpus, ingest):
    assert "Agent 5" in client.get("/topics/agents/").text
    ingest(paper_record("2606.00005", 2, title="Agent five, revised"))

    page = client.get("/topics/agents/").text
    assert "Agent five, revised" in page
    assert "Agent 5<" not in page


def test_each_page_of_a_topics_papers_is_its_own(
    client, corpus, django_capture_on_commit_callbacks
):
    from topics import views

    with mock.patch.object(views, "PAPERS_PER_PAGE", 4):
        first = client.get("/topics/agents/").text
        second = client.get("/topics/agents/?page=2").text
        with django_capture_on_commit_callbacks(execute=True):
            corpus["agents"].description = "Agents that act."
            corpus["agents"].save()
        second_again = client.get("/topics/agents/?page=2").text

    assert "Page 1 of 2" in first
    assert "Page 2 of 2" in second
    assert "Page 2 of 2" in second_again
    assert 'href="?page=1"' in second_again


def momentum_block(client: Client, address: str) -> str:
    page = client.get(address).text
    return page.split('class="momentum"')[1].split('<div class="columns reader">')[0]


def test_the_momentum_refresh_shows_on_the_cached_topic_page(
    client, corpus, django_capture_on_commit_callbacks, ingest
):
    ingest(
        *[paper_record(f"2606.{n:05d}", title=f"Agent {n}") for n in range(100, 110)]
    )
    before = momentum_block(client, "/topics/agents/")

    with django_capture_on_commit_callbacks(execute=True):
        refresh_momentum()

    after = momentum_block(client, "/topics/agents/")
    assert after != before
    cache.clear()
    assert after == momentum_block(client, "/topics/agents/")


def related_block(client: Client, address: str) -> str:
    """The topic page's aside, up to its link to all topics."""
    page = client.get(address).text
    return page.split("<aside>")[1].split("All topics")[0]


@pytest.mark.parametrize("side", ["forward", "reverse"])
def test_a_curated_relation_shows_on_the_cached_topic_page(
    client, corpus, side, django_capture_on_commit_callbacks
):
    tools = make_topic("Tool Use", rule="ti:nothing-matches", slug="tools")
    assert "Tool Use" not in related_block(client, "/topics/robots/")

    with django_capture_on_commit_callbacks(execute=True):
        if side == "forward":
            corpus["robots"].related.add(tools)
        else:
            tools.topic_set.add(corpus["robots"])
    assert "Tool Use" in related_block(client, "/topics/robots/")

    with django_capture_on_commit_callbacks(execute=True):
        if side == "forward":
            corpus["robots"].related.clear()
        else:
            tools.topic_set.clear()
    assert "Tool Use" not in related_block(client, "/topics/robots/")


def test_papers_topics_come_to_share_show_on_the_cached_topic_page(
    client, corpus, django_capture_on_commit_callbacks
):
    make_topic("Grippers", rule="ti:gripper", slug="grippers")
    assert "Grippers" not in related_block(client, "/topics/robots/")

    with django_capture_on_commit_callbacks(execute=True):
        records = [paper_record("2606.00100", title="A robot gripper")]
        tag_papers(upsert_records(records).changed_ids)
        refresh_momentum()

    assert "Grippers" in related_block(client, "/topics/robots/")


def test_a_topic_made_anew_under_a_slug_does_not_read_the_old_count(
    client, corpus, django_capture_on_commit_callbacks
):
    assert '<span class="count">6</span>' in client.get("/topics/agents/").text
    with django_capture_on_commit_callbacks(execute=True):
        corpus["agents"].delete()
        make_topic("Agents", rule="ti:nothing-matches-this", slug="agents")

    assert '<span class="count">0</span>' in client.get("/topics/agents/").text


def test_a_warm_topic_page_reads_the_readers_user_with_the_page(
    corpus, alice, django_assert_num_queries
):
    reader = signed_in(alice)
    reader.get("/topics/agents/")
    reader.get("/topics/agents/")  # the reader's state, asked once, kept

    with django_assert_num_queries(0), cache_round_trips() as trips:
        page = reader.get("/topics/agents/")

    assert 'action="/accounts/logout/"' in page.text  # signed in
    # The session, then the page with the reader's user and state.
    assert len(trips) == 2
    assert f"auth:user:{alice.pk}" in " ".join(map(str, trips[1]))


def test_a_reader_signed_out_elsewhere_meets_the_page_as_a_visitor(corpus, alice):
    reader = signed_in(alice)
    reader.get("/topics/agents/")
    alice.set_password("a-new-password-for-alice")
    alice.save()  # other sessions end: their hash no longer matches

    page = reader.get("/topics/agents/").text

    assert 'action="/accounts/logout/"' not in page
    assert ">Log in</a>" in page


def test_a_save_moves_nothing_shared(warm, alice, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        set_saved(alice, Paper.objects.get(arxiv_id="2606.00001"), True)

    # Only the reader's own state moves (papers.slots).
    assert all(warm().values())


def test_a_pin_moves_the_topic_the_paper_and_the_topics_it_is_in(
    warm, corpus, django_capture_on_commit_callbacks, monkeypatch
):
    # Only the newest paper counts as on the home page, so this one is not.
    monkeypatch.setattr("papers.versions.LATEST_SHOWN", 1)
    paper = Paper.objects.get(arxiv_id="2606.00006")  # a robot paper
    with django_capture_on_commit_callbacks(execute=True):
        pin_paper(corpus["agents"], paper)

    assert warm() == {
        "/": True,
        "/topics/agents/": False,
        "/topics/robots/": False,  # the row's chips now show Agents
        "/papers/2606.00001/": False,  # its related papers are Agents'
        "/papers/2606.00006/": False,  # the pinned paper itself
    }
    assert "2606.00006" in Client().get("/topics/agents/").text


def test_a_refresh_that_changes_no_figures_moves_nothing(
    warm, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        refresh_momentum()

    assert callbacks == []
    assert all(warm().values())


def test_content_changed_with_nothing_named_moves_every_page(
    warm, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        content_changed()

    assert not any(warm().values())


def test_a_cached_paper_page_follows_its_related_papers(client, corpus, ingest):
    assert "A newer agent" not in client.get("/papers/2606.00001/").text

    ingest(paper_record("2606.00200", title="A newer agent"))

    # Related papers share its topics: the page depends on their versions.
    assert "A newer agent" in client.get("/papers/2606.00001/").text


def test_a_cached_paper_page_in_no_topic_follows_its_categorys_newest(client, ingest):
    """A paper in no topic lists its category's newest papers instead: a new
    one, or one of them retitled, shows at once, not once the page expires."""
    upsert_records([paper_record("2606.00300", title="A lone paper")])
    upsert_records([paper_record("2606.00301", title="Its neighbour")])
    assert "Newest in cs.LG" in client.get("/papers/2606.00300/").text

    ingest(paper_record("2606.00302", title="A newcomer"))
    assert "A newcomer" in client.get("/papers/2606.00300/").text

    ingest(paper_record("2606.00301", version=2, title="Its neighbour, v2"))
    assert "Its neighbour, v2" in client.get("/papers/2606.00300/").text


# --- The cache is down --------------------------------------------------------


class BrokenCache(BaseCache):
    """A cache whose server cannot be reached."""

    def __init__(self, location: str, params: dict) -> None:
        super().__init__(params)

    def _fail(self, *args: object, **kwargs: object) -> None:
        raise ConnectionError("cache unreachable")

    add = get = set = touch = delete = clear = has_key = _fail
    get_many = set_many = delete_many = incr = _fail


@pytest.fixture
def broken_cache(settings):
    settings.CACHES = {"default": {"BACKEND": f"{__name__}.BrokenCache"}}


def test_a_visitors_page_is_filled_once_and_kept_until_it_changes(
    client, corpus, ingest
):
    client.get("/topics/agents/")  # the last harvest's time cached on the way
    pagecache.filled_copies.clear()
    with mock.patch("papers.slots.fill", wraps=slots.fill) as filled:
        first = client.get("/topics/agents/").text
        with mock.patch.object(
            pagecache, "get_many_recent", wraps=pagecache.get_many_recent
        ) as read:
            again = client.get("/topics/agents/").text
        assert again == first
        assert filled.call_count == 1  # the second from the process
        # which read the versions, not the page nor its values' HTML.
        [(keys,)] = [call.args for call in read.call_args_list]
        assert not any(key.startswith("pages:page:") for key in keys)
        assert not any(
            key.startswith(("topic-text:", "topic-followers:")) for key in keys
        )

        # A change to the page: its render and its filling anew.
        ingest(paper_record("2606.00010", title="Agent 10"))
        # made in this process: seen at once (versions.get_many_recent)
        assert "Agent 10" in client.get("/topics/agents/").text
        assert filled.call_count == 2

        # Past FILLED_COPY_SECONDS (its "last harvest" age moves): filled again.
        with mock.patch.object(pagecache, "FILLED_COPY_SECONDS", 0):
            client.get("/topics/agents/")
        assert filled.call_count == 3


def test_a_visitors_copy_stands_on_versions_read_a_moment_before(
    client, corpus, alice, django_capture_on_commit_callbacks, monkeypatch
):
    # The versions' clock stands still until moved on below: "a moment" is
    # what the test says, not however long a loaded machine took.
    now = time.monotonic()
    clock = SimpleNamespace(monotonic=lambda: now, time_ns=time.time_ns)
    monkeypatch.setattr(versions, "time", clock)
    for _ in range(3):  # the harvest's time cached, the copy filled, checked
        client.get("/topics/agents/")
    with cache_round_trips() as trips:
        client.get("/topics/agents/")
    assert trips == []
    with django_capture_on_commit_callbacks() as commits:
        records = [paper_record("2606.00010", title="Agent 10")]
        ingest_entries(
            IngestRun.objects.create(source="t"), records, tagger=IngestTagger()
        )
    # Committed by another process: the versions move in the cache, and this
    # process does not know.
    with mock.patch.object(versions, "_moved_here", versions._moved_here):
        for commit in commits:
            commit()

    assert "Agent 10" in signed_in(alice).get("/topics/agents/").text  # at once
    assert "Agent 10" not in client.get("/topics/agents/").text
    now += versions.RECENT_SECONDS
    assert "Agent 10" in client.get("/topics/agents/").text


def test_no_copy_is_kept_of_a_page_rendered_while_the_cache_is_down(
    client, corpus, broken_cache
):
    with mock.patch("papers.slots.fill", wraps=slots.fill) as filled:
        client.get("/topics/agents/")
        client.get("/topics/agents/")
    assert filled.call_count == 2
    assert not pagecache.filled_copies


def test_a_readers_copy_is_theirs_until_they_change_something(
    corpus, alice, bob, django_capture_on_commit_callbacks
):
    reader = signed_in(alice)
    reader.get("/topics/agents/")  # the last harvest's time cached on the way
    pagecache.filled_copies.clear()
    with mock.patch("papers.slots.fill", wraps=slots.fill) as filled:
        first = reader.get("/topics/agents/").text
        again = reader.get("/topics/agents/").text
        assert filled.call_count == 1
        # Each response has its own CSRF token, and it is good.
        tokens = [
            re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[0]
            for page in (first, again)
        ]
        assert tokens[0] != tokens[1]
        assert "\x1a" not in again
        assert first.replace(tokens[0], "") == again.replace(tokens[1], "")
        with django_capture_on_commit_callbacks(execute=True):
            saved = reader.post(
                "/papers/2606.00001/save/", {"csrfmiddlewaretoken": tokens[1]}
            )
        assert saved.status_code == 302
        # Their save moves their own version: filled anew, the paper saved.
        assert 'aria-pressed="true"' in reader.get("/topics/agents/").text
        assert filled.call_count == 2
        # Another reader's copy is their own.
        assert 'aria-pressed="true"' not in signed_in(bob).get("/topics/agents/").text
        assert filled.call_count == 3


def test_a_kept_copy_takes_an_edited_text_without_the_page_read_or_filled(
    corpus, alice, django_capture_on_commit_callbacks
):
    reader = signed_in(alice)
    with django_capture_on_commit_callbacks(execute=True):
        set_saved(alice, Paper.objects.get(arxiv_id="2606.00001"), saved=True)
    reader.get("/topics/agents/")  # the last harvest's time cached on the way
    pagecache.filled_copies.clear()
    before = reader.get("/topics/agents/").text
    with django_capture_on_commit_callbacks(execute=True):
        corpus["agents"].description = "Agents that <act>."
        corpus["agents"].save()

    with (
        mock.patch("papers.slots.fill", wraps=slots.fill) as filled,
        mock.patch.object(pagecache, "get_many", wraps=pagecache.get_many) as read,
    ):
        edited = reader.get("/topics/agents/").text
        again = reader.get("/topics/agents/").text

    assert filled.call_count == 0
    keys = [key for call in read.call_args_list for key in call.args[0]]
    # Not the page (its reader's state, under the page's key, is small).
    assert not [key for key in keys if re.fullmatch(r"pages:page:\d+:\w+", key)]
    assert any(key.startswith("pages:page:") for key in keys)
    assert [key for key in keys if key.startswith("topic-text:")] == [
        f"topic-text:agents@{RELEASE}"
    ]
    # The new text in each of its places, the reader's own state kept, and
    # each response its own good token.
    assert '<meta name="description" content="Agents that &lt;act&gt;.">' in edited
    assert "<p>Agents that &lt;act&gt;.</p>" in edited
    assert edited.count('aria-pressed="true"') == before.count('aria-pressed="true"')
    assert "\x1a" not in edited
    token = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', again)[0]
    assert token not in edited
    blank = re.compile(r'(name="csrfmiddlewaretoken" value=")[^"]+')
    assert blank.sub(r"\1", again) == blank.sub(r"\1", edited)
    assert (
        reader.post(
            "/papers/2606.00002/save/", {"csrfmiddlewaretoken": token}
        ).status_code
        == 302
    )


def test_paper_text_cannot_spell_a_copys_value(client, corpus):
    stand_in = "\x1avalue text intro\x1a"
    tag_papers(
        upsert_records(
            [paper_record("2606.00020", title=f"Agent {stand_in} zero")]
        ).changed_ids
    )
    client.get("/topics/agents/")
    pagecache.filled_copies.clear()

    pages = [client.get("/topics/agents/") for _ in range(2)]

    assert [page.status_code for page in pages] == [200, 200]
    assert pages[0].text == pages[1].text
    assert f"Agent {stand_in} zero" in pages[1].text


def test_a_visitor_with_a_message_is_filled_for_themself(client, corpus, alice):
    client.get("/topics/agents/")
    reader = signed_in(alice)
    reader.get("/topics/agents/")
    with mock.patch("papers.slots.fill", wraps=slots.fill) as filled:
        # A visitor with a message (here: after logging out) sees it.
        reader.post("/accounts/logout/")
        page = reader.get("/topics/agents/").text
        assert "You have logged out." in page
        assert "Log out" not in page
    assert filled.call_count == 1


@pytest.mark.parametrize(
    "address",
    [
        "/",
        "/topics/",
        "/topics/trending/",
        "/topics/agents/",
        "/papers/2606.00001/",
        "/search/?q=agent",
        "/saved/",
    ],
)
@pytest.mark.parametrize("signed_in", [False, True])
def test_pages_answer_while_the_cache_is_down(
    corpus, alice, broken_cache, address, signed_in
):
    client = Client()
    if signed_in:
        set_following(alice, corpus["agents"], True)
        set_saved(alice, Paper.objects.get(arxiv_id="2606.00001"), True)
        client.force_login(alice)

    response = client.get(address)

    assert response.status_code == 200 if signed_in or address != "/saved/" else 302
    if signed_in:
        assert "Log out" in response.text
        assert "<!--slot:" not in response.text


def test_changes_commit_while_the_cache_is_down(
    corpus, alice, broken_cache, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        set_following(alice, corpus["agents"], True)
        records = [paper_record("2606.00100", title="A new agent")]
        run = IngestRun.objects.create(source="t")
        ingest_entries(run, records, tagger=IngestTagger())

    assert Client().get("/topics/agents/").status_code == 200


def test_a_reader_signs_in_and_out_while_the_cache_is_down(alice, broken_cache):
    client = Client()
    assert client.login(email="alice@example.com", password="correct horse battery")
    assert "Log out" in client.get("/topics/").text

    client.post("/accounts/logout/")

    assert "Log in" in client.get("/topics/").text


def test_no_slot_is_left_in_any_page(corpus, alice, staff):
    reader = signed_in(alice)
    for client in [Client(), reader]:
        for address in [*PAGES, "/topics/", "/topics/trending/", "/search/?q=agent"]:
            assert not re.search("<!--slot", client.get(address).text), address


def test_a_migration_renders_every_page_anew(warm, django_capture_on_commit_callbacks):
    from django.core.management.sql import emit_post_migrate_signal

    with django_capture_on_commit_callbacks(execute=True):
        emit_post_migrate_signal(verbosity=0, interactive=False, db="default")

    assert not any(warm().values())


# The day from the same version (its fuller account), or from its first.
@pytest.mark.parametrize("dated_version", [2, 1])
def test_a_paper_given_its_day_late_leaves_the_visitors_home_page(
    client, django_capture_on_commit_callbacks, dated_version
):
    """A replacement read from a listing is stored with no announcement day,
    and newest first puts it at the top of the home page; a later record with
    its older day moves it off at once, not once the page expires."""
    published = datetime(2026, 7, 1, 15, 0, tzinfo=UTC)
    upsert_records(
        [
            paper_record(f"2607.{n:05d}", title=f"Recent {n}", published=published)
            for n in range(1, 31)
        ]
    )
    replaced = replace(
        paper_record("2401.00001", version=2, title="An old paper replaced"),
        announce_type="replace",
        announced=date(2026, 7, 2),
        published=None,
        updated=None,
    )
    with django_capture_on_commit_callbacks(execute=True):
        ingest_entries(IngestRun.objects.create(source="t"), [replaced])
    if connection.vendor == "postgresql":  # NULLS FIRST in newest-first order
        assert "An old paper replaced" in client.get("/").text

    dated = paper_record(
        "2401.00001",
        version=dated_version,
        title="An old paper replaced",
        published=datetime(2024, 1, 2, 15, 0, tzinfo=UTC),
    )
    with django_capture_on_commit_callbacks(execute=True):
        ingest_entries(IngestRun.objects.create(source="t"), [dated])
    assert Paper.objects.get(arxiv_id="2401.00001").first_announced is not None
    assert "An old paper replaced" not in client.get("/").text
