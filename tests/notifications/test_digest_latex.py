"""A digest shows a paper's LaTeX as plain text, in text and HTML alike."""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime

import pytest
from django.core import mail

from accounts.models import User
from notifications.delivery import hand_out
from notifications.delivery import open_due_digests
from notifications.delivery import send_digests
from notifications.mailer import Mailer
from tests.accounts.factories import verified
from tests.notifications.factories import add_papers
from tests.topics.factories import make_topic
from topics.models import Follow

pytestmark = pytest.mark.django_db

MONDAY_9 = datetime(2026, 7, 13, 9, tzinfo=UTC)  # default: Mondays 08:00 UTC


def test_digest_titles_and_summaries_show_latex_as_text(alice):
    agents = make_topic("Agents", rule="ti:agent", slug="agents")
    User.objects.filter(pk=alice.pk).update(
        date_joined=datetime(2026, 7, 1, tzinfo=UTC)
    )
    Follow.objects.create(user=alice, topic=agents)
    verified(User.objects.get(pk=alice.pk))
    add_papers(
        agents,
        date(2026, 7, 10),
        title=r"$\alpha$-divergence for \emph{agents}",
        abstract=r"We plan in $O(n^2)$ time. Then more.",
    )

    open_due_digests(at=MONDAY_9)
    send_digests(hand_out(), mailer=Mailer())

    [message] = mail.outbox
    html = message.alternatives[0][0]
    assert "\u03b1-divergence for agents" in message.body
    assert "We plan in O(n²) time." in message.body
    assert "\u03b1-divergence for agents</a>" in html
    assert "\\emph" not in message.body + html
