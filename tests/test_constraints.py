"""The database itself refuses duplicates, whatever code path tries to write them."""

from __future__ import annotations

import pytest
from django.db import IntegrityError

from papers.models import SavedPaper
from topics.models import Follow
from topics.models import PaperTopic
from topics.models import TopicExclusion

pytestmark = pytest.mark.django_db


def test_a_user_cannot_follow_a_topic_twice(alice, topic):
    Follow.objects.create(user=alice, topic=topic)
    with pytest.raises(IntegrityError):
        Follow.objects.create(user=alice, topic=topic)


def test_a_user_cannot_save_a_paper_twice(alice, paper):
    SavedPaper.objects.create(user=alice, paper=paper)
    with pytest.raises(IntegrityError):
        SavedPaper.objects.create(user=alice, paper=paper)


def test_two_users_can_save_the_same_paper(alice, bob, paper):
    SavedPaper.objects.create(user=alice, paper=paper)
    SavedPaper.objects.create(user=bob, paper=paper)
    assert paper.saves.count() == 2


def test_a_paper_is_tagged_into_a_topic_at_most_once(paper, topic):
    PaperTopic.objects.create(topic=topic, paper=paper)
    with pytest.raises(IntegrityError):
        PaperTopic.objects.create(
            topic=topic, paper=paper, source=PaperTopic.Source.PIN
        )


def test_a_paper_is_excluded_from_a_topic_at_most_once(paper, topic):
    TopicExclusion.objects.create(topic=topic, paper=paper)
    with pytest.raises(IntegrityError):
        TopicExclusion.objects.create(topic=topic, paper=paper)


def test_email_is_the_unique_login(alice):
    from accounts.models import User

    with pytest.raises(IntegrityError):
        User.objects.create_user("alice@example.com", "another password")
