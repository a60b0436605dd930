"""Home, all topics, a topic and a paper, as anonymous, user and staff."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta

import feedparser
import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from accounts.deletion import delete_account
from accounts.models import DigestPreferences
from config.celery_app import HEARTBEAT_KEY
from config.celery_app import heartbeat
from papers.ingest.harvest import claim
from papers.ingest.records import VersionRecord
from papers.ingest.runs import finish_run
from papers.ingest.upsert import upsert_records
from papers.models import Author
from papers.models import FeedSource
from papers.models import IngestRun
from papers.models import Paper
from tests.clients import signed_in
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from tests.visible import visible_text
from topics.following import set_following
from topics.models import Follow
from topics.momentum import refresh_momentum
from topics.tagging import retag_all
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db

# A page rendered anew (its rows too); served from the cache it costs 2 or 3.
MAX_PAGE_QUERIES = 12
# A topic's momentum is read apart from it (an edit of its text reads the topic
# alone): one more.
MAX_TOPIC_PAGE_QUERIES = MAX_PAGE_QUERIES + 1


@pytest.fixture
def corpus(db):
    """Two topics and papers, some in both."""
    agents = make_topic(
        "RL for LLM Agents", rule="ti:agent", glossary="RL: Reinforcement Learning"
    )
    robots = make_topic("Robot Learning", rule="ti:robot", slug="robot-learning")
    agents.related.add(robots)
    records = [paper_record(f"2606.{n:05d}", title=f"Agent {n}") for n in range(1, 8)]
    records.append(paper_record("2606.00100", title="An agent and a robot"))
    records.append(paper_record("math/0601001", version=2, title="Old style <b>id</b>"))
    tag_papers(upsert_records(records).changed_ids)
    return {"agents": agents, "robots": robots}


@pytest.fixture(params=["anonymous", "user", "staff"])
def visitor(request, alice, staff) -> Client:
    client = Client()
    if request.param == "user":
        client.force_login(alice)
    elif request.param == "staff":
        client.force_login(staff)
    return client


def test_home_shows_visitors_latest_papers_and_a_sign_up_call(
    client, corpus, django_assert_max_num_queries
):
    refresh_momentum()
    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        response = client.get("/")

    assert response.status_code == 200
    assert "An agent and a robot" in response.text
    assert "RL for LLM Agents" in response.text
    assert "Sign up" in response.text


@pytest.mark.parametrize("role", ["user", "staff"])
def test_home_shows_a_reader_the_feed_of_followed_topics(
    role, alice, staff, corpus, django_assert_max_num_queries
):
    reader = {"user": alice, "staff": staff}[role]
    client = signed_in(reader)
    assert "You don't follow any topic yet" in client.get("/").text

    set_following(reader, corpus["robots"], True)
    # Whether the reader has a For you model and their saved searches, read
    # with what they follow; serving the feed writes nothing (papers.views.seen).
    with django_assert_max_num_queries(MAX_PAGE_QUERIES + 2):
        response = client.get("/")

    assert response.status_code == 200
    assert "An agent and a robot" in response.text
    assert "Agent 1<" not in response.text  # only in the topic not followed


def test_home_says_when_the_last_harvest_was(
    client, corpus, django_capture_on_commit_callbacks
):
    assert "No harvest from arXiv yet" in client.get("/").text

    with django_capture_on_commit_callbacks(execute=True):
        finish_run(IngestRun.objects.create(source="cs.AI listing"))
    IngestRun.objects.update(finished_at=timezone.now() - timedelta(hours=3))
    cache.clear()  # cached pages say "ago" for at most pagecache.TIMEOUT

    page = client.get("/").text
    assert "Last harvest from arXiv" in page
    assert "3\xa0hours ago" in page
    # Its time in words, not only in a tooltip, which a phone never shows.
    finished = IngestRun.objects.get().finished_at
    assert (
        f"Last harvest from arXiv 3\xa0hours ago ({finished:%b} {finished.day}, "
        f"{finished.year}, {finished:%H:%M} UTC)" in visible_text(page)
    )
    # How current the papers are, which the harvest's time alone does not say.
    newest = Paper.objects.order_by("-first_announced").first().first_announced
    assert (
        f'; the newest papers were announced <time datetime="{newest:%Y-%m-%d}">'
        f"{newest:%b} {newest.day}, {newest.year}</time>." in page
    )
    # HTML's date and time: whole seconds (at most three digits of a fraction).
    assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000"', page)


def test_the_last_harvest_is_told_in_the_readers_own_time_zone_named(
    client, reader, alice, corpus, django_capture_on_commit_callbacks
):
    """A reader in Tokyo read "14:48" as their own afternoon: the time is in
    the zone their settings give (their digest's), named; a visitor's in UTC,
    named too."""
    with django_capture_on_commit_callbacks(execute=True):
        finish_run(IngestRun.objects.create(source="cs.AI listing"))
    finished = datetime(2026, 7, 24, 14, 48, tzinfo=UTC)
    IngestRun.objects.update(finished_at=finished)
    cache.clear()
    DigestPreferences.objects.create(user=alice, time_zone="Asia/Tokyo")
    set_following(alice, corpus["agents"], True)  # their feed says it

    assert "(Jul 24, 2026, 14:48 UTC)" in visible_text(client.get("/").text)
    assert "(Jul 24, 2026, 23:48 Asia/Tokyo)" in visible_text(reader.get("/").text)

    # A new zone saved in settings shows on the next page, not a kept copy's.
    form = {"frequency": "weekly", "weekday": 0, "hour": 8, "max_papers": 30}
    response = reader.post("/settings/", {**form, "time_zone": "America/New_York"})
    assert response.status_code == 302

    page = visible_text(reader.get("/").text)
    assert "(Jul 24, 2026, 10:48 America/New_York)" in page


def test_topic_list_shows_every_active_topic_with_its_count(visitor, corpus):
    make_topic("Hidden", rule="ti:hidden", is_active=False)

    response = visitor.get("/topics/")

    assert response.status_code == 200
    assert "Robot Learning" in response.text
    assert "Hidden" not in response.text
    assert "8 papers" in response.text


def test_topic_page_lists_its_papers_glossary_and_related_topics(
    visitor, corpus, django_assert_max_num_queries
):
    with django_assert_max_num_queries(MAX_TOPIC_PAGE_QUERIES):
        response = visitor.get("/topics/rl-for-llm-agents/")

    assert response.status_code == 200
    page = response.text
    assert "Agent 7" in page
    assert "RL</abbr>: Reinforcement Learning" in page
    assert 'href="/topics/robot-learning/"' in page
    assert response.context["page"].paginator.count == 8


def test_a_topic_without_a_description_still_describes_its_page(client, corpus):
    """What a search engine's result and a shared link's preview show under
    the name: a topic's description is optional, and one left blank gave an
    empty description to both."""
    page = client.get("/topics/robot-learning/").text

    description = (
        "The newest arXiv papers in Robot Learning, how fast the topic grows "
        "and the topics related to it."
    )
    assert f'<meta name="description" content="{description}">' in page
    assert f'<meta property="og:description" content="{description}">' in page


def test_topic_page_says_how_many_follow_it(
    client, alice, bob, corpus, django_assert_max_num_queries
):
    assert "0 followers" in client.get("/topics/rl-for-llm-agents/").text
    Follow.objects.create(user=alice, topic=corpus["agents"])
    Follow.objects.create(user=bob, topic=corpus["robots"])
    cache.clear()

    with django_assert_max_num_queries(MAX_TOPIC_PAGE_QUERIES):
        page = client.get("/topics/rl-for-llm-agents/").text
    assert 'data-followers="1">1 follower<' in page
    Follow.objects.create(user=bob, topic=corpus["agents"])
    cache.clear()
    assert "2 followers" in client.get("/topics/rl-for-llm-agents/").text


@pytest.mark.parametrize("deleted_by", ["themselves", "admin"])
def test_a_deleted_accounts_follows_leave_the_counts(
    client, alice, corpus, deleted_by, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        set_following(alice, corpus["agents"], True)
    assert "1 follower<" in client.get("/topics/rl-for-llm-agents/").text

    with django_capture_on_commit_callbacks(execute=True):
        if deleted_by == "themselves":
            delete_account(user=alice)
        else:
            alice.delete()  # as admin's delete does

    assert "0 followers" in client.get("/topics/rl-for-llm-agents/").text


def test_topic_page_query_count_does_not_grow_with_papers(
    client, corpus, django_assert_max_num_queries
):
    records = [
        paper_record(f"2607.{n:05d}", title=f"More agents {n}") for n in range(40)
    ]
    tag_papers(upsert_records(records).changed_ids)

    with django_assert_max_num_queries(MAX_TOPIC_PAGE_QUERIES):
        response = client.get("/topics/rl-for-llm-agents/?page=2")

    assert response.status_code == 200


def test_unknown_or_inactive_topic_is_404(client, corpus):
    corpus["robots"].is_active = False
    corpus["robots"].save()

    assert client.get("/topics/robot-learning/").status_code == 404
    assert client.get("/topics/nothing-here/").status_code == 404


def test_paper_page_answers_at_its_id(visitor, corpus, django_assert_max_num_queries):
    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        response = visitor.get("/papers/2606.00100/")

    assert response.status_code == 200
    assert "An agent and a robot" in response.text
    assert "matched <q>agent</q> in the title" in response.text
    assert 'href="https://arxiv.org/abs/2606.00100v1"' in response.text


@pytest.mark.parametrize(
    ("address", "moved"),
    [
        ("2606.00100v1", "/papers/2606.00100/?v=1"),
        ("2606.00100v9", "/papers/2606.00100/?v=9"),
        ("arXiv:2606.00100", "/papers/2606.00100/"),
        ("abs/2606.00100v1", "/papers/2606.00100/?v=1"),
    ],
)
def test_paper_page_at_any_other_form_of_its_id_moves_to_its_address(
    visitor, corpus, address, moved
):
    """One page per paper, as search's ids and links lead there: it shows the
    paper (its newest version held), whatever version was asked, and says
    which was asked."""
    response = visitor.get(f"/papers/{address}/")

    assert response.status_code == 301
    assert response["Location"] == moved


def test_a_paper_page_asked_at_another_version_says_which_it_shows(client, db):
    """A citation's link to v1 opens the page of v2: it says so, with v1 on
    arXiv; a version newer than the one harvested is said to be newer."""
    upsert_records([paper_record("2606.00101", version=2, title="Two versions")])

    older = client.get("/papers/2606.00101v1/", follow=True).text
    newer = client.get("/papers/2606.00101v3/", follow=True).text
    same = client.get("/papers/2606.00101v2/", follow=True).text

    assert (
        "You followed a link to v1 of this paper; this page shows v2, the latest. "
        '<a href="https://arxiv.org/abs/2606.00101v1">v1 on arXiv</a>'
    ) in older
    assert (
        "You followed a link to v3 of this paper, newer than v2, the latest "
        'harvested here. <a href="https://arxiv.org/abs/2606.00101v3">v3 on arXiv</a>'
    ) in newer
    assert "You followed a link" not in same
    assert "You followed a link" not in client.get("/papers/2606.00101/?v=x").text


@pytest.mark.parametrize(
    "address", ["/papers/2606.00001/", "/topics/robot-learning/", "/authors/{ada}/"]
)
def test_a_shared_link_to_a_paper_topic_or_author_has_a_card_on_x(
    client, corpus, address
):
    """X shows a link's preview card only for a page naming its kind of card
    (twitter:card); its title and description it takes from OpenGraph's."""
    ada = Author.objects.get(name="Ada Lovelace")
    page = client.get(address.format(ada=ada.pk)).text

    assert '<meta name="twitter:card" content="summary">' in page
    assert '<meta property="og:title" content="' in page


def test_paper_page_serves_old_style_ids_and_escapes_titles(client, corpus):
    moved = client.get("/papers/math/0601001v2/")["Location"]
    assert moved == "/papers/math/0601001/?v=2"
    response = client.get("/papers/math/0601001/")

    assert response.status_code == 200
    assert "Old style &lt;b&gt;id&lt;/b&gt;" in response.text
    assert "<b>id</b>" not in response.text


def test_paper_page_says_which_date_is_which(client, db):
    """The listing day the paper was announced on, and each version's
    submission day, both as dates: not a bare "Jun 9" above a "2026-06-05"."""
    upsert_records(
        [
            paper_record(
                version=2,
                versions=(
                    VersionRecord(1, datetime(2026, 6, 5, 17, 0, tzinfo=UTC), "812kb"),
                    VersionRecord(2, datetime(2026, 6, 20, 9, 30, tzinfo=UTC)),
                ),
            )
        ]
    )
    Paper.objects.update(first_announced=date(2026, 6, 9))

    page = client.get("/papers/2606.00001/").text

    assert "Announced Jun 9, 2026" in page
    assert "<li>v1: submitted Jun 5, 2026 (812kb)</li>" in page
    assert "<li>v2: submitted Jun 20, 2026</li>" in page


def test_a_category_is_named_in_text_not_only_on_hover(client, db):
    """ "cs.LG" told its name only in a title, which a phone cannot hover: the
    paper page's line and list, and a row's abstract drawer, name it."""
    upsert_records([paper_record(categories=("cs.LG", "cs.AI"))])
    Paper.objects.update(first_announced=date(2026, 6, 9))

    page = client.get("/papers/2606.00001/").text
    drawer = client.get("/search/?q=agents").text.split('class="drawer"')[1]

    assert "Announced Jun 9, 2026, Machine Learning (cs.LG)" in page
    assert "<dd>Artificial Intelligence (cs.AI), Machine Learning (cs.LG)</dd>" in page
    assert "Jun 9, 2026, Machine Learning (cs.LG)" in drawer
    assert 'title="Machine Learning"' not in page + drawer


def test_script_in_a_title_is_shown_as_text(client, db):
    upsert_records([paper_record(title="<script>alert(1)</script> agents")])

    response = client.get("/")

    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text
    assert "<script>alert(1)" not in response.text


def test_a_paper_is_named_by_its_id_and_title_cut_with_an_ellipsis(db):
    """As admin's lists and links name it."""
    title = "A title long enough to be cut where admin lists papers " * 2
    upsert_records([paper_record(title=title)])

    name = str(Paper.objects.get())

    assert name.startswith("2606.00001: A title long enough to be cut")
    assert name.endswith("…")
    assert len(name) == len("2606.00001: ") + 80


def test_withdrawn_paper_says_so_without_naming_who_withdrew_it(client, db):
    """arXiv's administrators withdraw papers too (text reuse, policy): the
    comment, shown on the page, says who; the notice does not guess."""
    comment = (
        "arXiv admin note: This submission has been withdrawn by arXiv "
        "administrators due to inappropriate text reuse from external sources"
    )
    upsert_records([paper_record(withdrawn=True, comment=comment)])

    response = client.get("/papers/2606.00001/")
    row = client.get("/search/?q=agents").text

    assert "This paper has been withdrawn." in response.text
    assert "withdrawn by arXiv administrators" in response.text
    assert "by its authors" not in response.text + row
    assert '<p class="notice">Withdrawn.</p>' in row


@pytest.mark.parametrize("address", ["/papers/9999.99999/", "/papers/not-an-id/"])
def test_unknown_or_malformed_paper_id_is_404(client, db, address):
    assert client.get(address).status_code == 404


def test_a_paper_not_held_links_to_arxiv_and_is_served_once_harvested(client, db):
    """A well-formed id Momentum does not hold (arxiv.org's path on this site,
    an old paper) says so and where to read it; not cached, so the paper shows
    as soon as it is harvested."""
    missing = client.get("/papers/2606.00001v2/")

    assert missing.status_code == 404
    assert "arXiv:2606.00001v2 is not in Momentum." in missing.text
    assert 'href="https://arxiv.org/abs/2606.00001v2"' in missing.text
    assert "There is nothing at this address" not in missing.text

    upsert_records([paper_record("2606.00001", title="Harvested since")])
    assert "Harvested since" in client.get("/papers/2606.00001v2/", follow=True).text


def test_healthz_reports_each_dependency(client, db, settings):
    for queue in settings.HEARTBEAT_QUEUES:
        heartbeat(queue)  # as a worker of each queue answers beat's

    response = client.get("/healthz")

    assert response.status_code == 200
    # Tests run on the real broker and a local-memory cache.
    assert response.json() == {
        "status": "ok",
        "database": "ok",
        "cache": "ok",
        "broker": "ok",
        "workers": {"ingest": "ok", "tagging": "ok", "email": "ok"},
    }


def test_healthz_reports_a_queue_no_worker_has_answered(client, db, settings):
    """Workers that died (or beat, which sends the heartbeats) showed nowhere:
    digests just stopped. A node still serves: 200, degraded."""
    period = settings.HEARTBEAT["schedule"]
    heartbeat("ingest")
    cache.set(HEARTBEAT_KEY.format(queue="email"), time.time() - 3 * period - 120)

    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json()["status"] == "degraded"
    assert response.json()["workers"] == {
        "ingest": "ok",
        "tagging": f"unknown: no heartbeat yet (beat sends one every {period} s)",
        "email": "down: no worker has answered for 17 min (dead, or busy with a "
        "long task; or beat is down)",
    }


def test_healthz_reports_the_ingest_queue_running_while_a_harvest_progresses(
    client, db, settings
):
    """The one ingest worker answers no heartbeat while it harvests (for up to
    hours): it was reported down. A harvest's lease, renewed at each page it
    stores, says it runs; once the lease lapses (stuck, or killed) it is down."""
    period = settings.HEARTBEAT["schedule"]
    for queue in settings.HEARTBEAT_QUEUES:
        heartbeat(queue)
    stale = time.time() - 3 * period - 120
    cache.set(HEARTBEAT_KEY.format(queue="ingest"), stale)
    source = FeedSource.objects.create(name="cs.AI", kind="listing", category="cs.AI")
    assert claim(source, owner="worker-1:3f0c")  # as ingest_source's harvest does

    running = client.get("/healthz").json()

    assert running["status"] == "ok"
    assert running["workers"]["ingest"] == (
        "running: harvesting cs.AI (it began or stored a page within 15 min)"
    )
    FeedSource.objects.update(claimed_until=timezone.now() - timedelta(seconds=1))
    lapsed = client.get("/healthz").json()
    assert lapsed["status"] == "degraded"
    assert lapsed["workers"]["ingest"].startswith("down: no worker has answered")


MANIFEST_STORAGE = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}


def test_healthz_fails_a_node_without_the_releases_collected_files(
    client, db, settings, tmp_path
):
    """Production serves the files collectstatic hashed: a node where it was
    not run (a machine added, an upgrade's step missed) answered every page
    with a 500, and /healthz with 200 ok, so the load balancer kept it in."""
    settings.STORAGES = MANIFEST_STORAGE
    settings.STATIC_ROOT = tmp_path
    # What an older release collected: all but the newest of the site's files.
    collected = {"css/site.css": "css/site.0123456789ab.css"}
    (tmp_path / "staticfiles.json").write_text(
        json.dumps({"paths": collected, "version": "1.1"})
    )

    probed = client.get("/healthz")

    assert probed.status_code == 503
    assert probed.json()["status"] == "error"
    assert probed.json()["static"].startswith("down: ")
    assert "js/site.js" in probed.json()["static"]
    assert "run manage.py collectstatic" in probed.json()["static"]


def test_topic_page_shows_momentum_with_its_formula_and_chart(client, corpus):
    refresh_momentum()

    page = client.get("/topics/rl-for-llm-agents/").text

    # One week of papers: nothing to compare it with (tests/topics has the rest).
    assert "8 papers</strong> in the last four weeks; not enough fully" in page
    assert "How this is computed" in page
    assert page.count('<rect x="') == 16
    assert "?week=" in page


def test_home_links_trending_topics_to_the_trending_page(client, corpus):
    refresh_momentum()

    page = client.get("/").text

    assert "Trending topics" in page
    assert 'href="/topics/trending/"' in page


def test_related_topics_are_curated_first_then_by_shared_papers(client, corpus):
    make_topic("Agents Again", rule="ti:agent", slug="agents-again")
    retag_all()
    refresh_momentum()  # counts the papers topics share, as after every re-tag

    related = client.get("/topics/robot-learning/").context["related"]

    # Robot Learning has no curated neighbours; both share its one paper.
    assert {t.slug for t in related} == {"rl-for-llm-agents", "agents-again"}
    agents_related = client.get("/topics/rl-for-llm-agents/").context["related"]
    assert [t.slug for t in agents_related] == ["robot-learning", "agents-again"]


@pytest.mark.parametrize(
    ("address", "visitor_status"),
    [
        ("/", 200),
        ("/topics/", 200),
        ("/topics/rl-for-llm-agents/", 200),
        ("/topics/rl-for-llm-agents/?week=2026-06-08", 200),
        ("/topics/rl-for-llm-agents/feed/", 200),
        ("/papers/2606.00100/", 200),
        ("/search/?q=agent", 200),
        ("/saved/", 302),
        ("/saved/bibtex/", 302),
        ("/settings/", 302),
        ("/settings/delete/", 302),
    ],
)
def test_every_page_answers_each_kind_of_visitor(
    visitor, request, corpus, address, visitor_status
):
    response = visitor.get(address)

    signed_in = request.node.callspec.params["visitor"] != "anonymous"
    assert response.status_code == (200 if signed_in else visitor_status)


def test_a_server_error_page_reads_on_a_phone(client, db, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("database on fire")

    monkeypatch.setattr("papers.views.get_paper", broken)
    client.raise_request_exception = False

    response = client.get("/papers/2606.00100/")

    assert response.status_code == 500
    page = response.text
    assert '<meta name="viewport" content="width=device-width' in page
    assert "<main>" in page  # its landmark, for a screen reader
    assert "Something went wrong on our side" in page
    assert "fire" not in page


def test_the_site_has_an_icon_even_where_the_layout_does_not_link_it(client, db):
    response = client.get("/favicon.ico")

    assert response.status_code == 302
    assert response["Location"] == "/static/favicon.svg"
    assert client.get("/static/favicon.svg").status_code == 200


@pytest.mark.parametrize(
    "address",
    [
        "/topics/",
        "/topics/trending/",
        "/topics/rl-for-llm-agents/",
        "/papers/2606.00100/",
        "/search/?q=agent",
    ],
)
def test_a_cached_page_costs_anyone_no_query(
    visitor, corpus, address, request, django_assert_max_num_queries
):
    visitor.get(address)  # rendered and cached (for everyone)
    visitor.get(address)  # the session is cached too
    # Staff's copies are filled anew (their slots count what moves no version:
    # "N awaiting review"): a slot's query at most.
    staff = request.node.callspec.params["visitor"] == "staff"

    # A reader's user and own state (saved, followed, flagged) are cached too.
    with django_assert_max_num_queries(1 if staff else 0):
        assert visitor.get(address).status_code == 200


def test_a_cached_feed_costs_a_reader_no_query(
    alice, corpus, django_assert_max_num_queries
):
    set_following(alice, corpus["agents"], True)
    client = signed_in(alice)
    client.get("/")  # rendered
    client.get("/")  # their state is cached

    # What they follow and their state (with what is seen) are all cached.
    with django_assert_max_num_queries(0):
        assert "Agent 7" in client.get("/").text


def test_a_feed_follows_a_new_follow_and_a_deactivated_topic_at_once(
    alice, corpus, django_capture_on_commit_callbacks
):
    tag_papers(
        upsert_records([paper_record("2606.00200", title="A robot arm")]).changed_ids
    )
    set_following(alice, corpus["agents"], True)
    client = signed_in(alice)
    client.get("/")
    client.get("/")  # what they follow, cached
    assert "A robot arm" not in client.get("/").text

    set_following(alice, corpus["robots"], True)
    assert "A robot arm" in client.get("/").text

    with django_capture_on_commit_callbacks(execute=True):
        corpus["robots"].is_active = False
        corpus["robots"].save()
    assert "A robot arm" not in client.get("/").text


def test_a_reader_whose_topics_are_all_paused_is_told_so_not_that_they_follow_none(
    alice, bob, corpus, django_capture_on_commit_callbacks
):
    set_following(alice, corpus["robots"], True)
    client = signed_in(alice)
    client.get("/")  # what they follow, cached

    with django_capture_on_commit_callbacks(execute=True):
        corpus["robots"].is_active = False
        corpus["robots"].save()
    home = client.get("/").text

    assert "You don't follow any topic yet" not in home
    assert "The topic you follow is paused by the curators" in home
    # Another reader's empty home, shared with no one who follows a paused one.
    assert "You don't follow any topic yet" in signed_in(bob).get("/").text


def test_a_topic_feed_names_each_author_of_a_paper(client, corpus):
    feed = feedparser.parse(client.get("/topics/rl-for-llm-agents/feed/").content)

    assert not feed.bozo
    for entry in feed.entries:
        # One <author> each, as a feed reader lists them, not one joined name.
        assert [author.name for author in entry.authors] == [
            "Ada Lovelace",
            "Alan Turing",
        ]
