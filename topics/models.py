from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.core.validators import MinValueValidator
from django.db import models

from papers.models import Category
from papers.models import Paper
from papers.routes import address
from papers.versions import NAMES
from papers.versions import TOPICS
from papers.versions import content_changed
from topics.rules import RuleError
from topics.rules import compile_rule

# Pages at /topics/<name>/ that a topic with that slug would hide (topics/urls.py).
RESERVED_SLUGS = frozenset({"trending"})


class Topic(models.Model):
    """A research topic that curators define with a rule in arXiv's search syntax."""

    name = models.CharField(max_length=120, unique=True)
    slug = models.SlugField(max_length=120, unique=True)
    description = models.CharField(max_length=300, blank=True)
    glossary = models.TextField(
        blank=True,
        help_text='One abbreviation per line, as "RL: Reinforcement Learning".',
    )
    rule = models.TextField(
        help_text='arXiv search syntax, e.g. abs:"reinforcement learning" AND ti:agent'
    )
    categories = models.ManyToManyField(
        Category,
        blank=True,
        related_name="topics",
        help_text="Only papers in these categories are tagged. Empty means any.",
    )
    related = models.ManyToManyField("self", symmetrical=False, blank=True)
    is_active = models.BooleanField(default=True)

    class Membership(models.TextChoices):
        RULE = "rule", "Rule only"
        SUGGEST = (
            "suggest",
            "Rule plus suggestions (the model proposes, a curator decides)",
        )
        AUTO = "auto", "Rule plus automatic tags (the model decides when confident)"

    membership = models.CharField(
        max_length=10, choices=Membership.choices, default=Membership.RULE
    )
    model_confidence = models.FloatField(
        default=0.8,
        validators=[MinValueValidator(0.5), MaxValueValidator(0.99)],
        help_text=(
            "With automatic tags: a paper whose score is at least this joins the "
            "topic, and a rule match whose score is at most 1 minus this leaves it."
        ),
    )
    papers = models.ManyToManyField(
        Paper, through="PaperTopic", related_name="topics", blank=True
    )
    # A changed rule re-tags every paper in the background; admin shows progress.
    retag_requested_at = models.DateTimeField(null=True, blank=True)
    retag_done = models.PositiveIntegerField(default=0)
    retag_total = models.PositiveIntegerField(default=0)
    retagged_at = models.DateTimeField(null=True, blank=True)
    # What the last full re-tag saw (topics.tagging.tagging_fingerprint): the demo
    # loader re-tags only topics whose rule, categories or corpus changed since.
    tagged_fingerprint = models.CharField(max_length=64, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    # Cached pages show topics: a change moves this topic's pages and the
    # directory's, and a new name, address or state every chip that shows it.
    def save(self, *args: Any, **kwargs: Any) -> None:
        before = (
            Topic.objects.filter(pk=self.pk).values("name", "slug", "is_active").first()
            if self.pk
            else None
        )
        super().save(*args, **kwargs)
        now = {"name": self.name, "slug": self.slug, "is_active": self.is_active}
        lists = [TOPICS] if before == now else [TOPICS, NAMES]
        slugs = {self.slug, before["slug"] if before else self.slug}
        content_changed(topics=slugs, lists=lists)

    def get_absolute_url(self) -> str:
        return address("topics:detail", "slug", self.slug)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        content_changed(topics=[self.slug], lists=[TOPICS, NAMES])
        return super().delete(*args, **kwargs)

    def clean(self) -> None:
        errors = {}
        if self.slug in RESERVED_SLUGS:
            errors["slug"] = (
                f"“{self.slug}” is the address of a page of the site "
                f"(/topics/{self.slug}/); choose another slug."
            )
        try:
            compile_rule(self.rule)
        except RuleError as exc:
            errors["rule"] = f"Invalid rule: {exc}"
        if errors:
            raise ValidationError(errors)

    @property
    def retag_pending(self) -> bool:
        return self.retag_requested_at is not None and (
            self.retagged_at is None or self.retagged_at < self.retag_requested_at
        )

    @property
    def glossary_entries(self) -> list[tuple[str, str]]:
        entries = []
        for line in self.glossary.splitlines():
            term, sep, meaning = line.partition(":")
            if sep and term.strip() and meaning.strip():
                entries.append((term.strip(), meaning.strip()))
        return entries


class TopicAlias(models.Model):
    """A former address of a topic (the slug of a topic merged into it): its pages
    and feed redirect there, so links and feed subscriptions keep working."""

    slug = models.SlugField(max_length=120, unique=True)
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="aliases")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "topic aliases"

    def __str__(self) -> str:
        return f"{self.slug} → {self.topic}"


class PaperTopic(models.Model):
    """A paper's membership of a topic, and why: the rule's matched terms, the
    model's score, or a pin."""

    class Source(models.TextChoices):
        RULE = "rule", "Rule"
        MODEL = "model", "Model"
        PIN = "pin", "Pinned by a curator"

    paper = models.ForeignKey(
        Paper, on_delete=models.CASCADE, related_name="paper_topics"
    )
    topic = models.ForeignKey(
        Topic, on_delete=models.CASCADE, related_name="paper_topics"
    )
    source = models.CharField(
        max_length=10, choices=Source.choices, default=Source.RULE
    )
    matched_terms = models.JSONField(default=list, blank=True)
    # The topic model's probability that the paper belongs, where a model is used.
    score = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # Leads with topic: topic pages read one topic's papers.
            models.UniqueConstraint(
                fields=["topic", "paper"], name="paper_topic_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.paper.arxiv_id} in {self.topic}"


class TopicExclusion(models.Model):
    """A curator's decision that a paper is not in a topic, whatever the rule says."""

    topic = models.ForeignKey(
        Topic, on_delete=models.CASCADE, related_name="exclusions"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["topic", "paper"], name="topic_exclusion_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.paper.arxiv_id} excluded from {self.topic}"


class Follow(models.Model):
    """A user following a topic; `muted` leaves it out of their digests."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="follows"
    )
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="follows")
    muted = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["user", "topic"], name="follow_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} follows {self.topic}"


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
        return f"{self.user}: {self.text[:60]}"


class TopicModel(models.Model):
    """A topic's relevance model, trained on the rule and the curators' decisions
    (topics.relevance). One row per topic, replaced by each training."""

    class State(models.TextChoices):
        TRAINED = "trained", "Trained"
        TOO_FEW = "too_few", "Too few decisions: the rule alone decides"

    topic = models.OneToOneField(Topic, on_delete=models.CASCADE, related_name="model")
    state = models.CharField(max_length=10, choices=State.choices)
    version = models.PositiveIntegerField(default=1)
    # What the training saw: positives (pins, unexcluded rule matches), negatives
    # (exclusions, sampled non-matches) and how many were curators' decisions.
    positives = models.PositiveIntegerField(default=0)
    negatives = models.PositiveIntegerField(default=0)
    decisions = models.PositiveIntegerField(default=0)
    # Cross-validated on the training labels (None when too few to train).
    precision = models.FloatField(null=True, blank=True)
    recall = models.FloatField(null=True, blank=True)
    f1 = models.FloatField(null=True, blank=True)
    # A digest of the training set: an unchanged one needs no new training.
    fingerprint = models.CharField(max_length=64)
    # The fitted model as plain numbers (vocabulary, idf, coefficients): JSON, not
    # a pickle, so a row cannot run code when loaded.
    weights = models.JSONField(default=dict, blank=True)
    trained_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.topic} model v{self.version} ({self.get_state_display()})"


class ReviewItem(models.Model):
    """A paper a curator should look at for a topic: the model and the rule disagree
    on it, or readers flagged its tag as not relevant. A decision (pin or
    exclusion) resolves it."""

    topic = models.ForeignKey(
        Topic, on_delete=models.CASCADE, related_name="review_items"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    score = models.FloatField(null=True, blank=True)
    # The rule's matched terms; empty when the rule does not match.
    rule_terms = models.JSONField(default=list, blank=True)
    rule_matched = models.BooleanField(default=False)
    # With automatic tags, a rule match the model is confident is off-topic is
    # kept out of the topic until a curator decides.
    vetoed = models.BooleanField(default=False)
    flags = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "review queue item"
        verbose_name_plural = "review queue"
        constraints = [
            models.UniqueConstraint(
                fields=["topic", "paper"], name="review_item_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.paper.arxiv_id} for {self.topic}"


class RelevanceFlag(models.Model):
    """A reader's report that a paper's tag is not relevant to the topic. Flags
    only put the paper in the review queue; they never change membership."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "topic", "paper"], name="relevance_flag_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} flagged {self.paper.arxiv_id} in {self.topic}"


class RuleTermsField(models.TextField):
    """A paper's index terms: a tsvector on PostgreSQL (GIN-indexed, migration
    0008), text with the terms separated by spaces elsewhere (an FTS5 table kept
    by triggers serves it on SQLite). Written by topics.prefilter only."""

    def db_type(self, connection: Any) -> str:
        return "tsvector" if connection.vendor == "postgresql" else "text"


class RuleDocument(models.Model):
    """The index terms of one paper (topics.rules.terms), derived once from its
    text so that a rule's candidates are found in the database."""

    paper = models.OneToOneField(
        Paper, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    terms = RuleTermsField()
    # The paper's modified_at and the terms' version they were derived at: a
    # mismatch means derive again.
    source_modified = models.DateTimeField()
    version = models.PositiveSmallIntegerField()

    def __str__(self) -> str:
        return f"terms of paper {self.paper_id}"
