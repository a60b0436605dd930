"""What topic pages read precomputed (momentum, relations) and Ask's questions."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from papers.models import Paper
from topics.models.topic import Topic


class TopicMomentum(models.Model):
    """A topic's weekly figures and the corpus's, precomputed by topics.momentum
    after ingest, so a page reads everything its momentum block says in one row."""

    topic = models.OneToOneField(
        Topic, on_delete=models.CASCADE, related_name="momentum"
    )
    as_of = models.DateField()
    weekly = models.JSONField(
        default=list, help_text="The topic's papers per week, oldest first."
    )
    corpus_weekly = models.JSONField(
        default=list, help_text="All new papers per week, oldest first."
    )
    complete = models.JSONField(
        default=list, help_text="Whether each week was fully harvested."
    )
    # The trending rank (topics.momentum); NULL with too little history or papers.
    trend_score = models.FloatField(null=True, blank=True)
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "topic momentum"
        indexes = [
            # Trending topics: the highest scores first.
            models.Index(fields=["-trend_score"], name="momentum_trending_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.topic}: {sum(self.weekly[-4:])} papers as of {self.as_of}"


class TopicRelation(models.Model):
    """How many papers two topics share, precomputed by topics.momentum's
    refresh so that a topic page reads its related topics in one indexed query.
    One row per ordered pair sharing at least one paper."""

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    other = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    shared = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["topic", "other"], name="topics_topicrelation_unique_pair"
            ),
        ]
        indexes = [
            # A topic page's related topics: the most shared first.
            models.Index(fields=["topic", "-shared"], name="relation_shared_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.topic_id} ~ {self.other_id}: {self.shared}"


class Question(models.Model):
    """A question a signed-in user asked about a topic's papers or one paper."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="questions"
    )
    topic = models.ForeignKey(
        Topic, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    paper = models.ForeignKey(
        Paper, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    text = models.CharField(max_length=500)
    # The window of a topic's papers it was asked of, as dates: reopened from
    # the recent questions, it asks of the same papers.
    since = models.DateField(null=True, blank=True)
    until = models.DateField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(topic__isnull=True) ^ models.Q(paper__isnull=True),
                name="question_topic_xor_paper",
            ),
        ]
        indexes = [
            # Ask pages list one user's latest questions.
            models.Index(
                fields=["user", "-created_at"], name="question_user_recent_idx"
            ),
        ]

    def __str__(self) -> str:
        # Staff given questions see what is asked, not who (core.admin.ReadersHidden).
        return self.text[:60]
