"""Topics, their papers and curators' decisions, and who follows them."""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.core.validators import MinValueValidator
from django.db import models
from django.db import transaction

from core.text import SHOWABLE
from core.text import shown
from papers.models import Category
from papers.models import Paper
from papers.routes import address
from papers.versions import NAMES
from papers.versions import TOPICS
from papers.versions import content_changed
from papers.versions import pages_changed
from topics.rules import CompiledRule
from topics.rules import RuleError
from topics.rules import compile_new_rule
from topics.rules import compile_rule
from topics.rules import parse_rule

# What a curator writes for readers to read (the rule, search syntax, is left
# as written).
TEXT_FIELDS = ("name", "description", "definition", "glossary")
# Pages at /topics/<name>/ that a topic with that slug would hide (topics/urls.py).
RESERVED_SLUGS = frozenset({"trending"})


def target_field(default: float, help_text: str) -> models.FloatField:
    """A share the topic's membership thresholds must keep (topics.membership)."""
    return models.FloatField(
        default=default,
        validators=[MinValueValidator(0.5), MaxValueValidator(0.999)],
        help_text=help_text,
    )


# Admin and the API refuse it: the topic page would link to itself.
NOT_ITS_OWN_RELATED = "A topic cannot be related to itself."


class Topic(models.Model):
    """A research topic that curators define with a rule in arXiv's search syntax."""

    name = models.CharField(max_length=120, unique=True, validators=[SHOWABLE])
    slug = models.SlugField(max_length=120, unique=True)
    description = models.CharField(
        max_length=300,
        blank=True,
        validators=[SHOWABLE],
        help_text=(
            "A sentence or two: shown under the name on the topic page, in the "
            "list of topics, in the topic's feed and to search engines."
        ),
    )
    definition = models.TextField(
        blank=True,
        validators=[SHOWABLE],
        help_text=(
            "What belongs here and what does not, in a few sentences: shown on the "
            "topic page, in the review queue and to the judge."
        ),
    )
    glossary = models.TextField(
        blank=True,
        validators=[SHOWABLE],
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
        AUTO = (
            "auto",
            "Rule plus model decides the sure papers; the unsure wait for review",
        )

    membership = models.CharField(
        max_length=10, choices=Membership.choices, default=Membership.RULE
    )
    precision_target = target_field(
        0.95,
        "With automatic decisions: the share of the papers decided in "
        "automatically that must belong, on your decisions cross-validated.",
    )
    recall_target = target_field(
        0.90,
        "With automatic decisions: the share of the relevant papers that must "
        "stay above the automatic exclusions, on your decisions cross-validated. "
        "A higher target keeps more unsure papers in the band for review.",
    )
    papers = models.ManyToManyField(
        Paper, through="PaperTopic", related_name="topics", blank=True
    )
    # A changed rule re-tags every paper in the background; admin shows progress.
    retag_requested_at = models.DateTimeField(null=True, blank=True)
    retag_done = models.PositiveIntegerField(default=0)
    retag_total = models.PositiveIntegerField(default=0)
    # When a running re-tag last counted its progress: one that stopped moving
    # lost its worker (or its database connection) and is sent again.
    retag_progress_at = models.DateTimeField(null=True, blank=True)
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
        if before and before["slug"] != self.slug:
            # Its old address leads here for good (follow_merges), as a merged
            # topic's does: links, subscribed feeds and old digests keep working.
            TopicAlias.objects.update_or_create(
                slug=before["slug"], defaults={"topic": self}
            )
            TopicAlias.objects.filter(slug=self.slug, topic=self).delete()
        now = {"name": self.name, "slug": self.slug, "is_active": self.is_active}
        lists = [TOPICS] if before == now else [TOPICS, NAMES]
        if before and before != now:
            # Its papers' pages show it by name and address, if it is active.
            pages_changed(
                PaperTopic.objects.filter(topic=self).values_list("paper_id", flat=True)
            )
        slugs = {self.slug, before["slug"] if before else self.slug}
        content_changed(topics=slugs, lists=lists)
        # After the versions move (callbacks run in order): the topic's text
        # rendered once here, not by its next reader. Not worth failing for.
        from topics.topic_text import topic_text_changed  # it imports this module

        slug = self.slug
        transaction.on_commit(lambda: topic_text_changed(slug), robust=True)

    def get_absolute_url(self) -> str:
        return address("topics:detail", "slug", self.slug)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        content_changed(topics=[self.slug], lists=[TOPICS, NAMES])
        pages_changed(
            PaperTopic.objects.filter(topic=self).values_list("paper_id", flat=True)
        )
        return super().delete(*args, **kwargs)

    def clean(self) -> None:
        # Composed (NFC), as ingest stores papers' text: an accent typed as a
        # character of its own (text pasted from a Mac) matched no search or
        # comparison, and the same name twice passed as unique.
        for name in TEXT_FIELDS:
            setattr(self, name, unicodedata.normalize("NFC", getattr(self, name)))
        errors: dict[str, str | ValidationError] = {}
        if self.slug in RESERVED_SLUGS:
            errors["slug"] = (
                f"“{self.slug}” is the address of a page of the site "
                f"(/topics/{self.slug}/); choose another slug."
            )
        elsewhere = TopicAlias.objects.filter(slug=self.slug).exclude(topic_id=self.pk)
        former = elsewhere.select_related("topic").first()
        if former is not None:
            # The holder's page in admin lists it, to release (TopicForm links it).
            errors["slug"] = ValidationError(
                "“%(slug)s” was an address of %(holder)s, and its links and feeds "
                "lead there; choose another slug, or release it on the page of "
                "%(holder_page)s: under Former addresses, tick Delete? and save.",
                code="unique",
                params={
                    "slug": self.slug,
                    "holder": former.topic.name,
                    "holder_page": former.topic.name,
                    "holder_id": former.topic_id,
                },
            )
        try:
            # An empty rule is the field's to refuse (required): not twice.
            if self.rule:
                self.compile_as_written(self.rule)
        except RuleError as exc:
            errors["rule"] = f"Invalid rule: {exc}, {exc.near(self.rule)}"
        if errors:
            raise ValidationError(errors)

    def compile_as_written(self, rule: str) -> CompiledRule:
        """The rule compiled as a curator writes it: a new or changed rule must
        name arXiv's categories (compile_new_rule); the one stored compiles as
        it is, so that a topic keeps saving (its text, its active flag)."""
        stored = Topic.objects.filter(pk=self.pk).values_list("rule", flat=True)
        if self.pk and rule == stored.first():
            return compile_rule(rule)
        return compile_new_rule(rule)

    @property
    def rule_problem(self) -> str:
        """Why the stored rule no longer parses ("" when it does): one stored
        before a release refused what it holds, which tagging skips."""
        return rule_problem(self.rule)

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


def related_changed(
    instance: Topic, action: str, reverse: bool, pk_set: set[int] | None, **kwargs: Any
) -> None:
    """m2m_changed of Topic.related, whoever writes it (admin, the API, seeding):
    the topics whose curated related topics changed show them anew."""
    if action not in ("post_add", "post_remove", "pre_clear"):
        return
    if not reverse:
        slugs = [instance.slug]
    elif action == "pre_clear":
        slugs = list(
            Topic.objects.filter(related=instance).values_list("slug", flat=True)
        )
    else:
        slugs = list(
            Topic.objects.filter(pk__in=pk_set or ()).values_list("slug", flat=True)
        )
    if slugs:
        content_changed(related=slugs)


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
        JUDGE = "judge", "Judged in by a language model"

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


class TopicDate(models.Model):
    """When the list of papers a topic's page shows last changed by a paper
    leaving it or changing why it is in (papers.versions.pages_changed, which
    writes it with its papers' PageDates): the sitemap dates the page by the
    latest of this, the topic's own edit and its newest paper's joining, which
    a paper gone no longer shows. A narrow row, as PageDate, so that tagging
    never locks the topic's row, which a curator's edit holds."""

    topic = models.OneToOneField(
        Topic, on_delete=models.CASCADE, primary_key=True, related_name="page_date"
    )
    changed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"papers of {self.topic_id} changed {self.changed_at:%Y-%m-%d %H:%M}"


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
        # Staff given follows see what is followed, not who (core.admin.ReadersHidden).
        return f"Follow of {self.topic}"


@lru_cache(maxsize=1024)
def rule_problem(rule: str) -> str:
    """Topic.rule_problem of a rule's text. Admin's topic list asks it of
    every topic on each view, and parsing a long rule again each time was
    most of that page's time; only parsing refuses a rule."""
    try:
        parse_rule(rule)
    except RuleError as exc:
        # Without the character itself, which a page shows as nothing.
        return f"{exc}, {shown(exc.near(rule))}"
    return ""
