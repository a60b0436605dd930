"""A digest at the most papers a reader may ask for stays whole in Gmail, which
clips an email whose HTML passes 102 KB: the clip would hide the papers after
it, the "More new papers" list and the footer's Unsubscribe."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from accounts.models import DIGEST_MAX_PAPERS
from accounts.models import DigestPreferences
from tests.clients import signed_in
from tests.notifications.factories import add_papers
from tests.notifications.factories import preferences
from tests.topics.factories import make_topic
from topics.models import Follow
from topics.saved_searches import create_search

GMAIL_CLIP_BYTES = 102 * 1000
# A section's momentum line, which these topics have none of (about 250 bytes).
MOMENTUM_LINE_BYTES = 300


def test_the_largest_digest_a_reader_may_ask_for_is_not_clipped(
    subscriber, agents, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    preferences(subscriber, max_papers=DIGEST_MAX_PAPERS)
    day = datetime.now(UTC).date() - timedelta(days=20)
    topics = [agents] + [
        make_topic(f"Topic {n} on long-horizon multi-agent planning", rule="ti:x")
        for n in range(40)
    ]
    Follow.objects.bulk_create(
        Follow(user=subscriber, topic=topic) for topic in topics[1:]
    )
    # As long as arXiv's get: three topics each, a saved search matching all.
    for n, topic in enumerate(topics):
        add_papers(
            [topic, topics[n - 1], topics[n - 2]],
            day,
            count=DIGEST_MAX_PAPERS,
            title="Agents " + "that plan over very long horizons with tools " * 5,
            abstract="We study agents. " * 100,
            authors=", ".join(f"Firstname{k} van der Lastname" for k in range(9)),
        )
    create_search(subscriber, name="Agents " * 10, query="agents", syntax="search")

    signed_in(subscriber).post("/digest/test/")

    [message] = mail.outbox
    html = message.alternatives[0][0]
    assert html.count("Firstname0 van der Lastname") == DIGEST_MAX_PAPERS
    assert len(html.encode()) + len(topics) * MOMENTUM_LINE_BYTES < GMAIL_CLIP_BYTES


@pytest.mark.django_db(transaction=True)
def test_readers_who_asked_for_more_get_the_most_a_digest_holds(alice, bob):
    """Migration 0008: a cap above DIGEST_MAX_PAPERS (200 was allowed) becomes it."""
    executor = MigrationExecutor(connection)
    before = [("accounts", "0007_time_zones_are_places")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model(
        "accounts", "DigestPreferences"
    )
    old.objects.create(user_id=alice.pk, max_papers=200)
    old.objects.create(user_id=bob.pk, max_papers=12)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert DigestPreferences.objects.get(user=alice).max_papers == DIGEST_MAX_PAPERS
    assert DigestPreferences.objects.get(user=bob).max_papers == 12
