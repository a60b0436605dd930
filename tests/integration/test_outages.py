"""The site under outages of its parts: the cache's Redis stopped mid-test (our
own redis-server, never the shared one), and the broker unreachable. Pages, the
API and sign-up keep answering; deferred work resumes when the part is back."""

from __future__ import annotations

import signal
import threading
import time
from datetime import timedelta
from unittest import mock

import pytest
from allauth.account.models import EmailAddress
from django.core import mail
from django.db import close_old_connections
from django.db import connection
from django.db import connections
from django.test import Client
from django.utils import timezone

from accounts.tasks import send_account_mail
from config import cache as resilient
from config.celery_app import app
from config.celery_app import heartbeat
from core.queue import send
from notifications.delivery import hand_out
from notifications.models import Digest
from papers.models import FeedSource
from papers.tasks import enqueue_due_sources
from tests.clients import signed_in
from tests.integration.redis_server import redis_server
from tests.integration.smtp_server import body
from tests.integration.smtp_server import free_port
from tests.integration.smtp_server import smtp_server
from tests.topics.test_admin_curation import change_form
from topics import relevance
from topics.editing import save_topic
from topics.models import Follow
from topics.models import Topic
from topics.models import TopicModel
from topics.tasks import train_topic_model

pytestmark = pytest.mark.django_db

PAGES = [
    "/",
    "/topics/",
    "/topics/rl-for-llm-agents/",
    "/papers/2606.00001/",
    "/search/?q=agent",
    "/topics/rl-for-llm-agents/feed/",
    "/topics/rl-for-llm-agents/ask/?q=which+agents",
    "/api/v1/papers/",
    "/api/v1/topics/rl-for-llm-agents/papers/",
    "/accounts/login/",
]


@pytest.fixture
def cache_redis(settings):
    """The cache on a redis-server of this test's own, as production has it."""
    with redis_server() as server:
        settings.CACHES = {
            "default": {
                "BACKEND": "config.cache.ResilientRedisCache",
                "LOCATION": server.url,
                "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
            }
        }
        resilient._Breaker.open_until = 0.0
        resilient._Breaker.lost_writes = False
        yield server
        resilient._Breaker.open_until = 0.0
        resilient._Breaker.lost_writes = False


def statuses(client: Client) -> dict[str, int]:
    return {path: client.get(path).status_code for path in PAGES}


@pytest.mark.usefixtures("corpus")
def test_with_the_cache_down_every_page_and_the_api_still_answer(cache_redis, alice):
    reader = Client()
    reader.force_login(alice)
    Follow.objects.create(user=alice, topic=Topic.objects.get(slug="robot-learning"))
    assert set(statuses(Client()).values()) == {200}

    cache_redis.stop()

    assert statuses(Client()) == dict.fromkeys(PAGES, 200)
    signed_in = statuses(reader)
    assert signed_in.pop("/accounts/login/") == 302  # already signed in
    assert set(signed_in.values()) == {200}
    follow = reader.post("/topics/rl-for-llm-agents/follow/", {"on": "1"})
    save = reader.post("/papers/2606.00001/save/", {"on": "1"})
    assert (follow.status_code, save.status_code) == (302, 302)
    assert Follow.objects.filter(user=alice).count() == 2


def test_with_the_cache_down_a_topic_is_still_changed_on_what_was_read(
    cache_redis, anonymous, as_staff, corpus
):
    """If-Match is checked against the topic's row, not against what the cache
    kept of the read: an edit on a read from before the outage, or during it,
    goes through while the topic is as read, and is a 412 (nothing written)
    once another write changed it. It used to be a 412 whatever was sent, and
    reading again did not help while the cache was down."""
    agents = "/api/v1/topics/rl-for-llm-agents/"
    before = anonymous.get(agents)["ETag"]
    cache_redis.stop()
    during = anonymous.get(agents)["ETag"]

    with mock.patch("topics.tasks.retag_topic.apply_async"):
        first = as_staff.patch(
            agents, {"description": "First."}, format="json", HTTP_IF_MATCH=before
        )
        stale = as_staff.patch(
            agents, {"description": "Stale."}, format="json", HTTP_IF_MATCH=during
        )
        second = as_staff.patch(
            agents,
            {"definition": "Second."},
            format="json",
            HTTP_IF_MATCH=first["ETag"],
        )

    assert before != during  # no cached content version: each read its own
    assert first.status_code == 200, first.content
    assert stale.status_code == 412, stale.content
    assert second.status_code == 200, second.content
    topic = Topic.objects.get(pk=corpus["agents"].pk)
    assert (topic.description, topic.definition) == ("First.", "Second.")


def test_with_the_cache_down_sign_up_still_sends_its_mail(cache_redis, db):
    cache_redis.stop()

    response = Client().post(
        "/accounts/signup/",
        {
            "email": "new@example.org",
            "password1": "correct horse battery",
            "password2": "correct horse battery",
        },
    )

    assert response.status_code == 302
    assert EmailAddress.objects.filter(email="new@example.org").exists()
    (message,) = mail.outbox
    assert "new@example.org" in message.to


def test_healthz_reports_the_cache_down_but_keeps_the_node_in(cache_redis, db):
    client = Client()
    assert client.get("/healthz").json()["cache"] == "ok"

    cache_redis.stop()
    down = client.get("/healthz")
    cache_redis.start()
    resilient._Breaker.open_until = 0.0
    for queue in ("ingest", "tagging", "email"):
        heartbeat(queue)
    back = client.get("/healthz")

    assert down.status_code == 200
    assert down.json()["status"] == "degraded"
    assert down.json()["cache"].startswith("down: ConnectionError")
    assert down.json()["database"] == "ok"
    # The heartbeats are kept in the cache: not "no heartbeat yet".
    assert set(down.json()["workers"].values()) == {
        "unknown: the cache, which keeps heartbeats, is down"
    }
    assert back.json() == {
        "status": "ok",
        "database": "ok",
        "cache": "ok",
        "broker": "ok",
        "workers": {"ingest": "ok", "tagging": "ok", "email": "ok"},
    }


@pytest.mark.usefixtures("corpus")
def test_an_outage_costs_one_attempt_per_breaker_window_not_one_per_call(cache_redis):
    cache_redis.stop()
    started = time.monotonic()

    for _ in range(20):
        assert Client().get("/topics/").status_code == 200

    # 20 pages of several cache calls each; with the breaker open they do not
    # wait on connection timeouts (0.5 s each).
    assert time.monotonic() - started < 10


def test_the_kept_redis_client_serves_again_after_a_restart(cache_redis):
    from django.core.cache import cache

    cache.set("greeting", "hello")
    client = cache._cache.get_client(write=True)
    # One client per connection pool, kept: building one per call cost more
    # than the round trip.
    assert cache._cache.get_client() is client

    cache_redis.stop()
    assert cache.get("greeting") is None  # a miss, not an error
    cache_redis.start()
    resilient._Breaker.open_until = 0.0  # as once its window has passed

    cache.set("greeting", "hello again")
    assert cache.get("greeting") == "hello again"
    assert cache._cache.get_client() is client


# --- The broker down --------------------------------------------------------------


@pytest.fixture
def broker_down():
    """The Celery app pointed at a port where nothing listens."""
    before = app.conf.broker_url, app.conf.broker_write_url
    app.conf.broker_url = app.conf.broker_write_url = (
        f"redis://127.0.0.1:{free_port()}/0"
    )
    _forget_connections()
    yield
    app.conf.broker_url, app.conf.broker_write_url = before
    _forget_connections()


def _forget_connections() -> None:
    # Celery keeps a pool of broker connections and producers: the next send
    # must connect to the broker now configured.
    app._pool = None
    app.amqp._producer_pool = None


def test_run_now_with_the_broker_down_says_so_and_beat_runs_it_later(
    broker_down, admin_client
):
    source = FeedSource.objects.create(
        name="cs.AI", kind="listing", category="cs.AI", next_run_at=None
    )
    FeedSource.objects.filter(pk=source.pk).update(
        next_run_at=timezone.now() + timedelta(days=1)
    )

    response = admin_client.post(
        "/admin/papers/feedsource/",
        {"action": "run_now", "_selected_action": [source.pk]},
        follow=True,
    )

    assert response.status_code == 200
    assert "The task queue is unavailable: 1 source(s) will run" in response.text
    source.refresh_from_db()
    assert source.next_run_at <= timezone.now()


def test_a_source_the_tick_could_not_send_is_sent_by_the_next_one(broker_down):
    """The broker lost between beat's tick reaching a worker and its sends (a
    Redis restart, a failover): the tick failed with the sources already moved
    to their next run, a listing's the next weekday's, so that day's
    announcement was never read."""
    listing = FeedSource.objects.create(
        name="cs.AI", kind="listing", category="cs.AI", next_run_at=None
    )
    oai = FeedSource.objects.create(name="cs", kind="oai", category="cs")

    assert enqueue_due_sources() == 0

    due = FeedSource.objects.filter(next_run_at__lte=timezone.now())
    assert set(due.values_list("pk", flat=True)) == {listing.pk, oai.pk}


@pytest.mark.usefixtures("corpus")
def test_a_test_digest_with_the_broker_down_is_kept_and_sent_by_the_next_tick(
    broker_down, alice
):
    EmailAddress.objects.create(user=alice, email=alice.email, verified=True)
    Follow.objects.create(user=alice, topic=Topic.objects.get(slug="robot-learning"))
    client = signed_in(alice)

    response = client.post("/digest/test/", follow=True)

    assert response.status_code == 200
    assert "your test digest is saved and goes out once it is back." in response.text
    digest = Digest.objects.get()
    assert digest.status == Digest.Status.PENDING
    # Beat's next sweep, not the first after a claim's ten minutes.
    assert hand_out() == [digest.pk]


@pytest.mark.usefixtures("corpus")
def test_a_topic_saved_with_the_broker_down_is_retagged_once_it_is_back(
    broker_down, admin_client
):
    topic = Topic.objects.get(slug="robot-learning")

    response = admin_client.post(
        f"/admin/topics/topic/{topic.pk}/change/",
        change_form(topic, rule="ti:robot OR ti:arm"),
    )

    assert response.status_code == 302
    topic.refresh_from_db()
    assert topic.rule == "ti:robot OR ti:arm"
    # Its request is recorded: resend_lost_retags sends it once the broker is back.
    assert topic.retag_pending


@pytest.mark.django_db(transaction=True)
def test_a_database_connection_cut_between_requests_costs_no_request(
    monkeypatch, client
):
    """A web process keeps its connection a while (CONN_MAX_AGE); one cut
    meanwhile (a failover, a restart, an idle timeout) is replaced before the
    next request's first query, not answered with a 500 or a failed probe."""
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 60)
    connection.close()
    assert client.get("/healthz").status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    other = connection.copy()
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()
    # What a server's every request starts with; the test client leaves it out.
    close_old_connections()

    assert client.get("/healthz").status_code == 200
    assert client.get("/topics/").status_code == 200


def test_a_broker_that_hangs_is_given_up_on_as_one_that_is_down(settings, db):
    """A Redis that takes connections and answers nothing (frozen, partitioned,
    failing over) held a reader's save on its task for good: gunicorn killed
    the worker, and the reader saw a 500 for a save that was made."""
    from topics.tasks import train_topic_model

    before = app.conf.broker_url, app.conf.broker_write_url
    with redis_server() as server:
        app.conf.broker_url = app.conf.broker_write_url = server.url
        _forget_connections()
        try:
            assert send(train_topic_model, 0)  # it answers
            server.process.send_signal(signal.SIGSTOP)
            outcome: list[bool] = []
            probed: list[dict] = []

            def send_then_probe() -> None:
                outcome.append(send(train_topic_model, 0))
                probed.append(Client().get("/healthz").json())
                connections.close_all()  # this thread's own

            sending = threading.Thread(target=send_then_probe, daemon=True)
            sending.start()
            sending.join(timeout=30)  # a hang, not a measure of speed
            hung = sending.is_alive()
            server.process.send_signal(signal.SIGCONT)
        finally:
            app.conf.broker_url, app.conf.broker_write_url = before
            _forget_connections()

    assert not hung
    assert outcome == [False]
    # The probe too: every node sharing that Redis would fail it at once.
    ((probe,),) = [probed]
    assert (probe["status"], probe["database"]) == ("degraded", "ok")
    assert probe["broker"].startswith("down")


def test_healthz_answers_within_its_timeout_when_the_one_redis_hangs(
    cache_redis, settings, db
):
    """The cache and the broker on one Redis, frozen: the probe took their
    socket timeouts one after the other (2-2.5 s against a 1 s probe), so every
    node sharing that Redis failed its load balancer's check at once, though
    each could serve. The checks run side by side, within one timeout."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    before = app.conf.broker_url, app.conf.broker_write_url
    app.conf.broker_url = app.conf.broker_write_url = cache_redis.url
    _forget_connections()
    probed: list[dict] = []

    def probe() -> None:
        probed.append(Client().get("/healthz").json())
        connections.close_all()  # this thread's own

    cache_redis.process.send_signal(signal.SIGSTOP)
    try:
        probing = threading.Thread(target=probe, daemon=True)
        probing.start()
        probing.join(timeout=30)  # a hang, not a measure of speed
        hung = probing.is_alive()
    finally:
        cache_redis.process.send_signal(signal.SIGCONT)
        app.conf.broker_url, app.conf.broker_write_url = before
        _forget_connections()

    assert not hung
    [state] = probed
    assert (state["status"], state["database"]) == ("degraded", "ok")
    assert state["cache"].startswith("down: TimeoutError")
    # Past the probe's timeout it answers for the broker rather than wait.
    assert state["broker"] == "down: no answer within 1 s"


@pytest.mark.usefixtures("corpus")
def test_what_changed_while_the_cache_hung_is_what_shows_once_it_is_back(
    cache_redis, verified_alice
):
    """A Redis that hangs (frozen, partitioned) keeps what it held: a sign-out
    whose session it could not remove came back for its two weeks, and an
    edit whose page versions it could not move showed undone for ten minutes."""
    reader = Client()
    reader.force_login(verified_alice)
    cookie = reader.cookies["sessionid"].value
    topic = Topic.objects.get(slug="robot-learning")
    assert reader.get("/settings/").status_code == 200
    assert "Robots, edited" not in Client().get("/topics/robot-learning/").text

    cache_redis.process.send_signal(signal.SIGSTOP)
    try:
        reader.post("/accounts/logout/")
        save_topic(topic, fields={"description": "Robots, edited."}, retag=False)
    finally:
        cache_redis.process.send_signal(signal.SIGCONT)
    resilient._Breaker.open_until = 0.0  # as once its window has passed

    thief = Client()
    thief.cookies["sessionid"] = cookie
    assert thief.get("/settings/").status_code == 302  # to log in
    assert "Robots, edited." in Client().get("/topics/robot-learning/").text


def smtp_at(settings, port: int) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_TIMEOUT = 2


def test_a_sign_up_while_the_mail_server_is_down_gets_its_mail_once_it_is_back(
    settings, db
):
    """It was a 500 once the account was made, and its confirmation was never
    sent: signing up again said the address was taken."""
    port = free_port()
    smtp_at(settings, port)  # nothing listens there yet
    with mock.patch("accounts.tasks.send_account_mail.apply_async") as queued:
        response = Client().post(
            "/accounts/signup/",
            {
                "email": "new@example.org",
                "password1": "correct horse battery",
                "password2": "correct horse battery",
            },
        )

    assert (response.status_code, response["Location"]) == (
        302,
        "/accounts/confirm-email/",
    )
    assert EmailAddress.objects.filter(email="new@example.org").exists()
    ((args,), options) = queued.call_args
    assert options == {}
    (data,) = args

    with smtp_server() as (handler, back_on):  # a worker's try, once it is back
        smtp_at(settings, back_on)
        send_account_mail.apply(args=[data])

    (message,) = handler.to("new@example.org")
    assert message["Subject"] == "[Momentum] Confirm your email address"
    assert "/accounts/confirm-email/" in body(message, "plain")
    # As it was made, headers and all.
    assert message["Reply-To"] == settings.MOMENTUM_CONTACT_EMAIL
    assert message["Auto-Submitted"] == "auto-generated"


def test_a_sign_up_with_the_mail_server_and_the_broker_down_is_told_to_try_again(
    settings, broker_down, db
):
    """Its mail had nowhere to wait: it was lost while the page said it was sent."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    smtp_at(settings, free_port())  # nothing listens there

    page = Client().post(
        "/accounts/signup/",
        {
            "email": "new@example.org",
            "password1": "correct horse battery",
            "password2": "correct horse battery",
        },
        follow=True,
    )

    assert "We could not send the email to new@example.org just now" in page.text
    assert "try again in a few minutes" in page.text
    assert "Confirmation email sent" not in page.text


@pytest.mark.usefixtures("corpus")
def test_a_membership_changed_with_the_broker_down_is_applied_by_the_nightly_training(
    broker_down, admin_client, django_capture_on_commit_callbacks
):
    """The save was a 500 once committed, and the training it asked for, the
    one that applies the new membership, was lost: the nightly one found the
    same decisions and changed nothing."""
    topic = Topic.objects.get(slug="robot-learning")
    relevance.retrain(topic.pk)

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            f"/admin/topics/topic/{topic.pk}/change/",
            change_form(topic, membership="suggest"),
        )

    assert response.status_code == 302
    topic.refresh_from_db()
    assert topic.membership == "suggest"
    train_topic_model(topic.pk)  # what the nightly train_topic_models sends
    assert TopicModel.objects.get(topic=topic).version == 2


@pytest.mark.usefixtures("corpus")
def test_train_now_with_the_broker_down_is_made_up_by_the_nightly_training(
    broker_down, admin_client, django_capture_on_commit_callbacks
):
    topic = Topic.objects.get(slug="robot-learning")
    relevance.retrain(topic.pk)

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/topics/topic/",
            {"action": "train_model", "_selected_action": [topic.pk]},
            follow=True,
        )

    assert response.status_code == 200
    train_topic_model(topic.pk)
    assert TopicModel.objects.get(topic=topic).version == 2


def test_resend_with_the_broker_down_says_so_and_the_next_tick_sends_them(
    broker_down, admin_client, alice, django_capture_on_commit_callbacks
):
    """The page was a 500 once the digests were put back, and they waited out
    a claim's ten minutes before a tick handed them out."""
    failed = Digest.objects.create(
        user=alice,
        frequency="weekly",
        period_start=timezone.now().date(),
        due_at=timezone.now(),
        status=Digest.Status.FAILED,
    )

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/notifications/digest/",
            {
                "action": "resend_digests",
                "_selected_action": [failed.pk],
                "post": "yes",
            },
            follow=True,
        )

    assert response.status_code == 200
    assert "The task queue is unavailable: 1 digest(s) will go" in response.text
    assert hand_out() == [failed.pk]
