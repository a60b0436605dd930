"""Download your data: everything of a reader's as one JSON file, theirs alone,
with no secret in it, read in as many queries for 30 saved papers as for 2."""

from __future__ import annotations

import json
import re
from datetime import UTC
from datetime import date
from datetime import datetime

import pytest
from allauth.account.models import EmailAddress
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import feed_tokens
from accounts import tokens
from accounts.models import DigestPreferences
from accounts.models import User
from notifications.models import Digest
from notifications.models import DigestPaper
from papers.ingest.upsert import upsert_records
from papers.models import Author
from papers.models import AuthorFollow
from papers.models import Paper
from papers.models import Rating
from papers.models import ReaderModel
from papers.models import SavedPaper
from papers.models import ShownPaper
from tests.clients import signed_in
from tests.concurrency import in_thread
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.models import Follow
from topics.models import Question
from topics.models import RelevanceFlag
from topics.models import SavedSearch
from topics.models import TopicExclusion

pytestmark = pytest.mark.django_db

URL = "/settings/data/"
MOMENT = datetime(2026, 7, 1, 9, 30, tzinfo=UTC)


def body(response) -> str:
    return response.getvalue().decode()


def text_of(client) -> str:
    response = client.get(URL)
    assert response.status_code == 200
    return body(response)


def download(client) -> dict:
    return json.loads(text_of(client))


def give_everything(user: User, paper: Paper, topic, author) -> dict[str, str]:
    """One of each kind of the reader's data, on `paper`, `topic` and `author`;
    the secrets their API token and private feed hold."""
    user.first_name, user.last_name = "Ada", user.email.split("@")[0].title()
    user.save()
    EmailAddress.objects.create(
        user=user, email=user.email, verified=True, primary=True
    )
    EmailAddress.objects.create(user=user, email=f"old-{user.email}", verified=False)
    DigestPreferences.objects.create(
        user=user, frequency="daily", weekday=2, hour=7, time_zone="Europe/Paris"
    )
    Follow.objects.create(user=user, topic=topic, muted=True)
    AuthorFollow.objects.create(user=user, author=author)
    SavedPaper.objects.create(user=user, paper=paper)
    Rating.objects.create(user=user, paper=paper, value=Rating.DOWN)
    SavedSearch.objects.create(
        user=user, name=f"{user.email} search", query="diffusion", syntax="search"
    )
    Question.objects.create(user=user, topic=topic, text=f"What does {user.email} ask?")
    Question.objects.create(user=user, paper=paper, text="What is the dataset?")
    RelevanceFlag.objects.create(user=user, topic=topic, paper=paper)
    TopicExclusion.objects.create(
        topic=topic, paper=paper, reason=f"{user.email} excluded", created_by=user
    )
    ShownPaper.objects.create(user=user, paper=paper, shown_at=MOMENT)
    ReaderModel.objects.create(
        user=user,
        terms=b"",
        weights=b"",
        positives=7,
        signal="s" * 64,
        trained_at=MOMENT,
        recommended=b"",
        scores=b"",
        scored_at=MOMENT,
    )
    digest = Digest.objects.create(
        user=user,
        frequency="daily",
        period_start=date(2026, 7, 1),
        due_at=MOMENT,
        status=Digest.Status.SENT,
        sent_at=MOMENT,
        to_email=user.email,
        paper_count=1,
    )
    DigestPaper.objects.create(digest=digest, user=user, paper=paper, topic=topic)
    Digest.objects.create(
        user=user,
        frequency="daily",
        period_start=date(2026, 7, 2),
        due_at=datetime(2026, 7, 2, 9, 30, tzinfo=UTC),
        status=Digest.Status.SKIPPED,
    )
    api_key = tokens.create_token(user=user).key
    feed_key = feed_tokens.create_feed(user)
    return {"api": api_key, "feed": feed_key}


@pytest.fixture
def everything(alice, bob):
    """alice and bob each with one of every kind, on papers and topics of
    their own: what is bob's must not be in alice's file."""
    upsert_records(
        [
            paper_record("2606.00001", title="Agents that plan"),
            paper_record("2606.00002", title="Robots that grasp", authors=("Bo",)),
        ]
    )
    first, second = Paper.objects.order_by("arxiv_id")
    agents = make_topic("RL for LLM Agents")
    robots = make_topic("Robot Learning", rule="ti:robot")
    return {
        "alice": give_everything(
            alice, first, agents, Author.objects.get(name="Ada Lovelace")
        ),
        "bob": give_everything(bob, second, robots, Author.objects.get(name="Bo")),
    }


def test_the_file_holds_each_kind_of_the_readers_data(alice, everything):
    data = download(signed_in(alice))

    assert data["account"] == {
        "email": "alice@example.com",
        "name": "Ada Alice",
        "date_joined": DjangoJSONEncoder().default(alice.date_joined),
        "last_login": data["account"]["last_login"],
        "email_addresses": [
            {"email": "alice@example.com", "verified": True, "primary": True},
            {"email": "old-alice@example.com", "verified": False, "primary": False},
        ],
    }
    assert data["account"]["last_login"] is not None  # signed_in logged in
    assert data["digest_preferences"] == {
        "frequency": "daily",
        "weekday": "Wednesday",
        "hour": 7,
        "time_zone": "Europe/Paris",
        "max_papers": 30,
    }
    assert set(data["api_token"]) == {"created"}
    assert set(data["private_feed"]) == {"created"}
    [follow] = data["followed_topics"]
    assert (follow["topic"], follow["name"], follow["muted"]) == (
        "rl-for-llm-agents",
        "RL for LLM Agents",
        True,
    )
    [author] = data["followed_authors"]
    assert author["name"] == "Ada Lovelace"
    [saved] = data["saved_papers"]
    assert (saved["arxiv_id"], saved["title"]) == ("2606.00001", "Agents that plan")
    assert saved["saved_at"]
    [rating] = data["ratings"]
    assert (rating["arxiv_id"], rating["rating"]) == ("2606.00001", -1)
    [search] = data["saved_searches"]
    assert (search["name"], search["query"], search["syntax"]) == (
        "alice@example.com search",
        "diffusion",
        "search",
    )
    assert [(q["text"], q["topic"], q["paper"]) for q in data["questions"]] == [
        ("What is the dataset?", None, "2606.00001"),
        ("What does alice@example.com ask?", "rl-for-llm-agents", None),
    ]
    [flag] = data["relevance_flags"]
    assert (flag["topic"], flag["arxiv_id"]) == ("rl-for-llm-agents", "2606.00001")
    assert [
        (d["period_start"], d["status"], d["to_email"], d["papers"])
        for d in data["digests"]
    ] == [
        ("2026-07-02", "skipped", "", []),
        ("2026-07-01", "sent", "alice@example.com", ["2606.00001"]),
    ]
    assert data["shown_papers"] == [
        {"arxiv_id": "2606.00001", "shown_at": "2026-07-01T09:30:00Z"}
    ]
    assert data["for_you"] == {
        "trained_at": "2026-07-01T09:30:00Z",
        "positives": 7,
        "scored_at": "2026-07-01T09:30:00Z",
    }
    [exclusion] = data["topic_exclusions"]
    assert exclusion["reason"] == "alice@example.com excluded"


def test_the_file_holds_nothing_of_another_readers(alice, everything):
    text = text_of(signed_in(alice))

    for theirs in ["bob", "Bob", "2606.00002", "Robot", 'Bo"']:
        assert theirs not in text


def test_the_file_holds_no_secret(alice, everything):
    """Neither key (the API token's, the private feed's, both passwords to the
    account), the feed's nonce and digest, the password's hash, the session."""
    client = signed_in(alice)
    text = text_of(client)
    feed = alice.feed_token
    alice.refresh_from_db()

    for secret in [
        everything["alice"]["api"],
        everything["alice"]["feed"],
        feed.nonce,
        feed.digest,
        alice.password,
        client.session.session_key,
    ]:
        assert secret not in text
    assert "signal" not in text


def test_a_reader_with_nothing_gets_a_file_of_empty_lists(alice):
    data = download(signed_in(alice))

    assert data["account"]["email_addresses"] == []
    assert data["api_token"] is None
    assert data["private_feed"] is None
    assert data["for_you"] is None
    for kind in ["followed_topics", "saved_papers", "ratings", "digests", "questions"]:
        assert data[kind] == []


def test_the_streamed_file_is_json_dumps_of_it_whole(alice, everything):
    text = text_of(signed_in(alice))

    assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"


def test_it_is_a_dated_attachment_streamed_and_not_cached(alice, everything):
    response = signed_in(alice).get(URL)

    assert response.streaming
    assert response["Content-Type"] == "application/json; charset=utf-8"
    # The day where the reader is (their digest's time zone).
    today = timezone.localdate(timezone=DigestPreferences.objects.get(user=alice).zone)
    assert response["Content-Disposition"] == (
        f'attachment; filename="momentum-data-{today:%Y-%m-%d}.json"'
    )
    assert "no-store" in response["Cache-Control"]


def all_queries(client) -> int:
    """Those of reading the whole file: a streamed one reads as it is sent."""
    with CaptureQueriesContext(connection) as queries:
        body(client.get(URL))
    return len(queries)


def test_as_many_queries_for_30_saved_papers_as_for_1(alice, everything, monkeypatch):
    """Every list is one query, read in chunks by a cursor: more papers, or
    more chunks of them, read no more."""
    monkeypatch.setattr("accounts.data_export.CHUNK", 10)
    client = signed_in(alice)
    client.get(URL)  # the session and user, read once and kept
    one = all_queries(client)
    more = upsert_records(
        [paper_record(f"2606.{n:05d}", title=f"Agent {n}") for n in range(100, 130)]
    )
    papers = Paper.objects.filter(pk__in=more.changed_ids)
    for paper in papers:
        SavedPaper.objects.create(user=alice, paper=paper)
        Rating.objects.create(user=alice, paper=paper, value=Rating.UP)
        ShownPaper.objects.create(user=alice, paper=paper, shown_at=MOMENT)
    digest = Digest.objects.filter(user=alice, status="sent").get()
    DigestPaper.objects.bulk_create(
        DigestPaper(digest=digest, user=alice, paper=paper) for paper in papers
    )

    data = download(client)
    assert len(data["saved_papers"]) == 31
    assert len(data["digests"][1]["papers"]) == 31
    assert all_queries(client) == one <= 25


def test_anonymous_is_sent_to_log_in(client, db):
    response = client.get(URL)

    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={URL}"


def test_downloads_are_limited_per_reader(alice, bob, monkeypatch):
    monkeypatch.setattr("accounts.data_export.DOWNLOADS_PER_HOUR", 2)
    client = signed_in(alice)
    for _ in range(2):
        assert client.get(URL).status_code == 200

    refused = client.get(URL)

    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 3600
    # When, in words; and no "Log in" for a reader who is.
    page = refused.content.decode()
    minutes = -(-int(refused["Retry-After"]) // 60)
    assert re.search(rf"You can download it again in {minutes} minutes?\.", page)
    assert "/accounts/login/" not in page
    assert signed_in(bob).get(URL).status_code == 200


def test_the_settings_page_offers_the_download(reader):
    page = reader.get("/settings/").content.decode()

    assert f'href="{URL}"' in page
    assert "Download your data" in page


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="SQLite's snapshot: see user_data"
)
@pytest.mark.django_db(transaction=True)
def test_the_file_is_read_as_of_one_moment(alice):
    """A save made while the file streams is not half in it: every list is read
    in the snapshot of the file's first query."""
    upsert_records([paper_record("2606.00001"), paper_record("2606.00002")])
    first, second = Paper.objects.order_by("arxiv_id")
    SavedPaper.objects.create(user=alice, paper=first)
    response = signed_in(alice).get(URL)
    pieces = iter(response.streaming_content)
    head = b""
    while b'"account"' not in head:
        head += next(pieces)

    in_thread(lambda: SavedPaper.objects.create(user=alice, paper=second)).join()

    saved = json.loads(head + b"".join(pieces))["saved_papers"]
    assert [row["arxiv_id"] for row in saved] == ["2606.00001"]
    assert SavedPaper.objects.filter(user=alice).count() == 2
    assert not connection.in_atomic_block


def test_a_test_digest_lists_the_papers_it_showed(alice, everything):
    """A test digest records no DigestPaper (its papers stay new for the next
    digest); the papers its mail showed are in its plan, and listed from there,
    in the mail's order, without one deleted since."""
    more = upsert_records(
        [paper_record(f"2606.{n:05d}", title=f"Agent {n}") for n in (201, 202, 203)]
    )
    first, second, gone = Paper.objects.filter(pk__in=more.changed_ids).order_by(
        "arxiv_id"
    )
    topic = Follow.objects.get(user=alice).topic
    Digest.objects.create(
        user=alice,
        kind=Digest.Kind.TEST,
        frequency="daily",
        period_start=date(2026, 7, 3),
        due_at=datetime(2026, 7, 3, 9, 30, tzinfo=UTC),
        status=Digest.Status.SENT,
        sent_at=datetime(2026, 7, 3, 9, 30, tzinfo=UTC),
        to_email=alice.email,
        sections=[
            {"topic": topic.pk, "papers": [[second.pk, []], [gone.pk, []]], "more": 4},
            {"topic": None, "papers": [[first.pk, [], [], [1]]], "more": 0},
        ],
        paper_count=3,
    )
    gone.delete()

    test_digest = download(signed_in(alice))["digests"][0]

    assert test_digest["kind"] == "test"
    assert test_digest["papers"] == ["2606.00202", "2606.00201"]


def test_a_digest_is_dated_by_the_papers_its_mail_covered(alice, everything):
    """A test digest's period is the week it was asked for; its mail held the
    latest week harvested, "first announced since" a day months before (or a
    late paper's day, earlier still): the file says that day, as the mail did."""
    topic = Follow.objects.get(user=alice).topic
    paper = Paper.objects.get(arxiv_id="2606.00001")
    Digest.objects.create(
        user=alice,
        kind=Digest.Kind.TEST,
        frequency="weekly",
        period_start=date(2026, 12, 2),
        due_at=datetime(2026, 12, 2, 9, 30, tzinfo=UTC),
        status=Digest.Status.SENT,
        sent_at=datetime(2026, 12, 7, 15, 0, tzinfo=UTC),
        to_email=alice.email,
        since=date(2026, 7, 18),
        sections=[{"topic": topic.pk, "papers": [[paper.pk, []]], "more": 0}],
        paper_count=1,
    )
    Digest.objects.create(
        user=alice,
        kind=Digest.Kind.TEST,
        frequency="weekly",
        period_start=date(2026, 12, 9),
        due_at=datetime(2026, 12, 9, 9, 30, tzinfo=UTC),
        status=Digest.Status.SENT,
        sent_at=datetime(2026, 12, 9, 15, 0, tzinfo=UTC),
        to_email=alice.email,
        since=date(2026, 7, 18),
        sections=[
            {"topic": topic.pk, "papers": [[paper.pk, []]], "more": 0},
            {"topic": None, "papers": [], "more": 2, "since": "2026-07-16"},
        ],
        paper_count=3,
    )

    digests = download(signed_in(alice))["digests"]

    assert [(d["period_start"], d["papers_announced_since"]) for d in digests] == [
        ("2026-12-09", "2026-07-16"),
        ("2026-12-02", "2026-07-18"),
        ("2026-07-02", None),
        ("2026-07-01", None),
    ]
