"""Relevance models, the review queue, readers' flags and the judge's verdicts."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from papers.models import Paper
from topics.models.topic import Topic


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
    # What automatic decisions are expected to reach, cross-validated on the
    # curators' decisions (topics.membership.fit_thresholds): precision of the
    # papers decided in, recall of the relevant ones, and the share of decided
    # papers left in the band. None while too few decisions to fit thresholds.
    precision = models.FloatField(null=True, blank=True)
    recall = models.FloatField(null=True, blank=True)
    f1 = models.FloatField(null=True, blank=True)
    band = models.FloatField(null=True, blank=True)
    # The band's edges on the calibrated probability, and the calibration.
    include_at = models.FloatField(null=True, blank=True)
    exclude_at = models.FloatField(null=True, blank=True)
    calibration = models.JSONField(default=dict, blank=True)
    # A digest of the training set: an unchanged one needs no new training.
    fingerprint = models.CharField(max_length=64)
    # The fitted model as plain numbers (vocabulary, idf, coefficients): JSON, not
    # a pickle, so a row cannot run code when loaded.
    weights = models.JSONField(default=dict, blank=True)
    trained_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.topic} model v{self.version} ({self.get_state_display()})"


class ReviewItem(models.Model):
    """A paper a curator should look at for a topic: it is in the uncertain band
    (pending until a judge or a curator decides), the model and the rule disagree
    on it, or readers flagged its tag as not relevant. A decision (pin or
    exclusion) resolves it."""

    topic = models.ForeignKey(
        Topic, on_delete=models.CASCADE, related_name="review_items"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    score = models.FloatField(null=True, blank=True)
    # Calibrated from score and rule (automatic decisions): the queue's order.
    probability = models.FloatField(null=True, blank=True)
    # In the band with no verdict: not a member anywhere, awaiting review.
    pending = models.BooleanField(default=False)
    # The judge's last attempt at it (topics.judging): a claim, and a back-off.
    judged_at = models.DateTimeField(null=True, blank=True)
    # The rule's matched terms; empty when the rule does not match.
    rule_terms = models.JSONField(default=list, blank=True)
    rule_matched = models.BooleanField(default=False)
    # With automatic decisions, a rule match kept out of the topic (the model
    # is confident it is off-topic, it is pending, or the judge said out) until
    # a curator decides; tagging leaves it out too.
    vetoed = models.BooleanField(default=False)
    flags = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # Counted in admin: "498 papers to review" ("498 review queue" was the
        # plural read as a count). Admin's queue is titled "Review queue".
        verbose_name = "paper to review"
        verbose_name_plural = "papers to review"
        constraints = [
            models.UniqueConstraint(
                fields=["topic", "paper"], name="review_item_unique"
            ),
        ]
        indexes = [
            # "N awaiting review" per topic, and the judge's claims of pending rows.
            models.Index(
                fields=["topic", "judged_at"],
                condition=models.Q(pending=True),
                name="review_item_pending_idx",
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
        # Curators see flags, not who flagged (core.admin.ReadersHidden).
        return f"Flag of {self.paper.arxiv_id} in {self.topic}"


class JudgeVerdict(models.Model):
    """A language model's verdict on a paper of a topic's band (topics.judging):
    it decides a pending paper; a curator's decision always overrides it."""

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    belongs = models.BooleanField()
    reason = models.CharField(max_length=300)
    model = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["topic", "paper"], name="topics_judgeverdict_unique"
            ),
        ]

    def __str__(self) -> str:
        verdict = "in" if self.belongs else "out"
        return f"{self.paper_id} {verdict} of {self.topic_id} ({self.model})"
