"""The topics' periodic sweeps, called as beat would."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from tests.topics.factories import make_topic
from topics.models import Topic
from topics.retagging import RETAG_LOST_AFTER
from topics.tasks import resend_lost_retags

pytestmark = pytest.mark.django_db


def test_a_lost_retag_is_sent_again_once_however_many_beats_fire():
    now = timezone.now()
    lost = make_topic("Lost", rule="ti:a", slug="lost")
    running = make_topic("Running", rule="ti:b", slug="running")
    done = make_topic("Done", rule="ti:c", slug="done")
    long_ago = now - RETAG_LOST_AFTER - timedelta(minutes=1)
    Topic.objects.filter(pk=lost.pk).update(retag_requested_at=long_ago)
    Topic.objects.filter(pk=running.pk).update(retag_requested_at=now)
    Topic.objects.filter(pk=done.pk).update(
        retag_requested_at=long_ago, retagged_at=long_ago + timedelta(seconds=5)
    )

    with mock.patch("topics.tasks.retag_topic.delay") as retag:
        assert resend_lost_retags() == 1
        assert resend_lost_retags() == 0

    retag.assert_called_once_with(lost.pk)
    lost.refresh_from_db()
    assert lost.retag_pending
