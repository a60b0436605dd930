from __future__ import annotations

from datetime import datetime
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models.signals import pre_delete
from django.dispatch import receiver
from django.utils.text import Truncator

from papers.identity import MAX_KEY_LENGTH
from papers.identity import author_key
from papers.ingest.records import versioned_id
from papers.routes import address
from papers.routes import author_address


class Category(models.Model):
    """An arXiv subject class such as cs.LG."""

    code = models.CharField(max_length=32, unique=True)
    name = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["code"]
        verbose_name_plural = "categories"

    def __str__(self) -> str:
        return self.code

    @property
    def archive(self) -> str:
        return self.code.split(".", 1)[0]


class Author(models.Model):
    """A name as arXiv prints it. arXiv has no author ids, so one name is one
    author: the printings of a name whose normalised `key` is the same
    (papers.identity) are one author, shown as first seen (or, where existing
    authors were merged, as most of their papers printed it)."""

    name = models.CharField(max_length=300)
    key = models.CharField(max_length=MAX_KEY_LENGTH, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.key = self.key or author_key(self.name)
        renamed = _renamed(self)
        super().save(*args, **kwargs)
        if renamed:
            _shown_on_papers_changed(Authorship.objects.filter(author=self))
            _followers_changed(self)

    def get_absolute_url(self) -> str:
        return author_address(self.pk)


class AuthorFollow(models.Model):
    """A reader following an author: the author's new papers join their feed
    and digest."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="author_follows",
    )
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="follows")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "author"], name="author_follow_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} follows {self.author}"


class Affiliation(models.Model):
    name = models.CharField(max_length=500, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        renamed = _renamed(self)
        super().save(*args, **kwargs)
        if renamed:
            _shown_on_papers_changed(Authorship.objects.filter(affiliations=self))


@receiver(pre_delete, sender=Affiliation)
def _affiliation_deleted(instance: Affiliation, **kwargs: Any) -> None:
    """An affiliation deleted, one or many (admin's "Delete selected"): its
    papers no longer print it. (An author on a paper cannot be deleted.)"""
    _shown_on_papers_changed(Authorship.objects.filter(affiliations=instance))


def _renamed(named: Author | Affiliation) -> bool:
    """Whether a stored author or affiliation is being saved with a new name
    (a curator's correction in admin)."""
    stored = type(named).objects.filter(pk=named.pk) if named.pk else None
    return stored is not None and not stored.filter(name=named.name).exists()


def _followers_changed(author: Author) -> None:
    """Move the own state of the readers who follow this author: what they
    follow is cached with its name, which their feeds show (topics.reader_feed)."""
    from papers.versions import reader_changed  # it imports this module

    reader_changed(
        AuthorFollow.objects.filter(author=author).values_list("user_id", flat=True)
    )


def _shown_on_papers_changed(authorships: models.QuerySet[Authorship]) -> None:
    """Date the papers these authorships are on, and move their versions once
    the change commits: their pages, lists and the API show the names."""
    from papers.versions import content_changed  # it imports this module
    from papers.versions import pages_changed

    paper_ids = set(authorships.values_list("paper_id", flat=True))
    if paper_ids:
        pages_changed(paper_ids)
        content_changed(papers=paper_ids)


class Paper(models.Model):
    """The latest known version of one arXiv paper, keyed by its id without version."""

    arxiv_id = models.CharField("arXiv id", max_length=40)
    # None when the source did not say (OAI-PMH "arXiv" records carry dates only).
    version = models.PositiveSmallIntegerField(null=True, blank=True)
    title = models.TextField()
    abstract = models.TextField(blank=True)
    comment = models.TextField(blank=True)
    journal_ref = models.TextField(blank=True)
    doi = models.CharField("DOI", max_length=255, blank=True)
    license = models.CharField(max_length=255, blank=True)
    primary_category = models.ForeignKey(
        Category, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    categories = models.ManyToManyField(Category, related_name="papers", blank=True)
    authors = models.ManyToManyField(
        Author, through="Authorship", related_name="papers", blank=True
    )
    # Authors' names in order, kept for full-text search and cheap list display.
    author_names = models.TextField(blank=True)
    published = models.DateTimeField(
        null=True, blank=True, help_text="When the first version was submitted."
    )
    updated = models.DateTimeField(
        null=True, blank=True, help_text="When the current version was submitted."
    )
    first_announced = models.DateField(
        null=True, blank=True, help_text="The arXiv listing day of the first version."
    )
    withdrawn = models.BooleanField(default=False)
    versions = models.JSONField(default=list, blank=True)
    # Maintained by a PostgreSQL trigger (papers/migrations/0002); NULL on SQLite.
    search_vector = SearchVectorField(null=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    modified_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-first_announced", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["arxiv_id"], name="paper_arxiv_id_unique"),
        ]
        indexes = [
            # Latest-papers lists and the momentum windows scan by announcement day.
            models.Index(
                fields=["-first_announced", "-id"], name="paper_announced_idx"
            ),
            # What was written since a mark (saved searches, similar papers, the
            # demo's fingerprint) and the latest write: a range, not a scan.
            models.Index(fields=["modified_at"], name="paper_modified_idx"),
            # Admin's search by the start of an id (LIKE '2607.1%'): PostgreSQL
            # reads a LIKE from an index only in this order, where the unique
            # constraint's is in the database's collation (unique=True would
            # have had Django add it); with the ids, the matches' rows are
            # never read to find them.
            models.Index(
                fields=["arxiv_id"],
                name="paper_arxiv_id_start_idx",
                opclasses=["varchar_pattern_ops"],
                include=["id"],
            ),
        ]

    def __str__(self) -> str:
        return f"{self.arxiv_id}: {Truncator(self.title).chars(80)}"

    def get_absolute_url(self) -> str:
        return address("papers:detail", "arxiv_id", self.arxiv_id)

    @property
    def versioned_id(self) -> str:
        return versioned_id(self.arxiv_id, self.version)

    @property
    def version_history(self) -> list[dict[str, Any]]:
        """`versions`, each with its submission time as a datetime (stored as
        ISO text by papers.ingest.upsert), to show as a date."""
        return [
            {**version, "submitted": datetime.fromisoformat(version["submitted"])}
            for version in self.versions
        ]

    @property
    def dois(self) -> list[str]:
        """The DOIs arXiv's field holds: one, or several apart (repeats once)."""
        return list(dict.fromkeys(self.doi.split()))

    @property
    def abs_url(self) -> str:
        return f"https://arxiv.org/abs/{self.versioned_id}"

    @property
    def cited_url(self) -> str:
        """arXiv's page of the paper's latest version, which a citation links."""
        return f"https://arxiv.org/abs/{self.arxiv_id}"

    @property
    def pdf_url(self) -> str:
        return f"https://arxiv.org/pdf/{self.versioned_id}"


class Authorship(models.Model):
    """One author's place on one paper, with the affiliations given on that paper."""

    paper = models.ForeignKey(
        Paper, on_delete=models.CASCADE, related_name="authorships"
    )
    author = models.ForeignKey(
        Author, on_delete=models.PROTECT, related_name="authorships"
    )
    position = models.PositiveSmallIntegerField()
    affiliations = models.ManyToManyField(Affiliation, blank=True, related_name="+")

    class Meta:
        ordering = ["paper", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["paper", "position"], name="authorship_paper_position_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.author} on {self.paper.arxiv_id}"


class PageDate(models.Model):
    """When what a paper's page shows from other rows last changed (papers.
    versions.pages_changed): a topic it joined or left, why it is in one, a
    topic's or an author's name. The sitemap dates the page by the later of
    this and the paper's modified_at, which marks its own text for re-deriving
    (terms, similar papers, saved searches) and which this must not move.

    A row of its own, not a column of Paper: its writers (tagging, curation,
    renames) stamp tens of thousands of papers at once, inside their own
    transaction; a narrow row is cheap to rewrite where a paper's is wide and
    in every index of papers_paper (full text too), and ingest, which upserts
    papers, never locks it."""

    paper = models.OneToOneField(
        Paper, on_delete=models.CASCADE, primary_key=True, related_name="page_date"
    )
    changed_at = models.DateTimeField()

    class Meta:
        indexes = [
            # The sitemap's newest change: the latest, read from the index.
            models.Index(fields=["changed_at"], name="page_date_changed_idx"),
        ]

    def __str__(self) -> str:
        return f"page of {self.paper_id} changed {self.changed_at:%Y-%m-%d %H:%M}"


class SavedPaper(models.Model):
    """A paper in one user's library."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_papers"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="saves")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "paper"], name="saved_paper_unique"
            ),
        ]
        indexes = [
            # The saved page lists one user's papers, most recently saved first.
            models.Index(fields=["user", "-created_at"], name="saved_user_recent_idx"),
        ]

    def __str__(self) -> str:
        # Staff given saves see what is saved, not who (core.admin.ReadersHidden).
        return f"Save of {self.paper.arxiv_id}"


class Rating(models.Model):
    """One reader's thumbs up (+1) or down (-1) on a paper: with their saves, the
    signal their own recommendations learn from."""

    UP = 1
    DOWN = -1

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ratings"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="ratings")
    value = models.SmallIntegerField(choices=[(UP, "up"), (DOWN, "down")])
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "paper"], name="rating_unique"),
            models.CheckConstraint(
                condition=models.Q(value__in=[1, -1]), name="rating_value_up_or_down"
            ),
        ]
        indexes = [
            models.Index(fields=["user", "-created_at"], name="rating_user_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.user} rated {self.paper.arxiv_id} {self.value:+d}"


class SimilarPaper(models.Model):
    """One of the papers nearest to `paper` by the text of its title and abstract
    (topics.similar): rank 1 is the nearest, at most SIMILAR_SHOWN per paper."""

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    similar = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveSmallIntegerField()
    # Cosine of the two papers' tf-idf vectors, rounded to 6 places.
    score = models.FloatField()

    class Meta:
        ordering = ["paper", "rank"]
        constraints = [
            models.UniqueConstraint(
                fields=["paper", "rank"], name="similar_paper_rank_unique"
            ),
            models.UniqueConstraint(
                fields=["paper", "similar"], name="similar_paper_pair_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.similar_id} is #{self.rank} similar to {self.paper_id}"


class SimilarityIndex(models.Model):
    """The vocabulary and idf similar papers were computed with, one row: new
    papers are read with the same, so their scores compare with the stored ones
    until the next full build."""

    vocabulary = models.JSONField(default=list)
    idf = models.JSONField(default=list)
    # How many papers the vocabulary was fitted on, and what the corpus was then
    # (topics.tagging.corpus_fingerprint): a second build of the same skips.
    papers = models.PositiveIntegerField(default=0)
    fingerprint = models.CharField(max_length=200, blank=True)
    built_at = models.DateTimeField(null=True, blank=True)
    # Papers modified up to here have their lists; later ones are the next update's.
    checked_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "similarity index"

    def __str__(self) -> str:
        return f"similarity index of {self.papers} papers"


class PaperVector(models.Model):
    """A paper's unit tf-idf vector over SimilarityIndex's vocabulary: the
    columns (int32) and values (float32) of its nonzero terms, little-endian.
    Written with similar papers (topics.similar); read by readers' For you
    models (topics.recommend), so neither tokenises the corpus again."""

    paper = models.OneToOneField(
        Paper, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    terms = models.BinaryField()
    weights = models.BinaryField()

    def __str__(self) -> str:
        return f"vector of {self.paper_id}"


class ReaderModel(models.Model):
    """A reader's For you model (topics.foryou) and the papers it ranks highest.

    Both are arrays, stored packed (topics.recommend), one row per reader: the
    model's largest weights over SimilarityIndex's vocabulary, and the ids and
    scores of the best of the newest papers, best first. Scoring new papers
    for every reader reads and writes one row each, not a row per paper."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="+",
    )
    terms = models.BinaryField()
    weights = models.BinaryField()
    # How many positives (saves and thumbs up) it learnt from, and a digest of
    # the whole signal: the same signal is not learnt twice.
    positives = models.PositiveIntegerField()
    signal = models.CharField(max_length=64)
    trained_at = models.DateTimeField()
    recommended = models.BinaryField()
    scores = models.BinaryField()
    scored_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"For you model of {self.user_id}"


class ShownPaper(models.Model):
    """A paper one reader had on screen in their feed: what the feed marks
    "seen" on later visits. Records older than MOMENTUM_SEEN_DAYS are dropped as
    new ones are written (papers.library.record_seen), so the table stays
    bounded."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    shown_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "paper"], name="shown_paper_unique"
            ),
        ]
        indexes = [
            # Forgetting one reader's oldest records.
            models.Index(fields=["user", "shown_at"], name="shown_user_time_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.paper.arxiv_id} shown to {self.user}"


class FeedSource(models.Model):
    """A place papers come from, edited by curators in admin and run on a schedule."""

    class Kind(models.TextChoices):
        LISTING = "listing", "Daily listing feed (one category)"
        API_QUERY = "api_query", "arXiv API query"
        OAI = "oai", "OAI-PMH harvest (backfill)"

    name = models.CharField(max_length=120, unique=True)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    category = models.CharField(
        max_length=40,
        blank=True,
        help_text="Listing: the category (cs.AI). OAI-PMH: the set (cs, or cs:cs:AI).",
    )
    query = models.TextField(
        blank=True,
        help_text="API: a search in arXiv's syntax, the syntax of topic rules, with "
        'explicit operators (abs:"tool use" AND cat:cs.AI); or arXiv ids separated '
        "by spaces.",
    )
    enabled = models.BooleanField(default=True)
    next_run_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    # A run claims its source with a lease; a worker that dies lets it expire.
    claimed_by = models.CharField(max_length=200, blank=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    # Conditional requests for listing feeds.
    etag = models.CharField(max_length=200, blank=True)
    last_modified = models.CharField(max_length=100, blank=True)
    # OAI-PMH checkpoint: a harvest restarts from here after a crash or an
    # expired resumption token (arXiv's expire daily).
    harvested_until = models.DateField(null=True, blank=True)
    resumption_token = models.TextField(blank=True)
    # API query checkpoint: how far into the results a run stopped midway had
    # read (0 once a run reads to its end, or to results it knew): the next
    # run reads past it before it stops at a page it knows.
    api_resume_at = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(kind="listing") | ~models.Q(category=""),
                name="feedsource_listing_has_category",
            ),
            models.CheckConstraint(
                condition=~models.Q(kind="api_query") | ~models.Q(query=""),
                name="feedsource_api_query_has_query",
            ),
        ]
        indexes = [
            # The beat tick looks for enabled sources that are due.
            models.Index(
                fields=["next_run_at"],
                condition=models.Q(enabled=True),
                name="feedsource_due_idx",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class IngestRun(models.Model):
    """One pass over one source: what it found, what it changed, what went wrong."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        PARTIAL = "partial", "Partial"
        FAILED = "failed", "Failed"

    source = models.CharField(max_length=500)
    feed = models.ForeignKey(
        FeedSource,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="runs",
    )
    format = models.CharField(max_length=40, blank=True)
    checksum = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of the input, when it was a file."
    )
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.RUNNING
    )
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    fetched_count = models.PositiveIntegerField(default=0)
    new_count = models.PositiveIntegerField(default=0)
    updated_count = models.PositiveIntegerField(default=0)
    unchanged_count = models.PositiveIntegerField(default=0)
    rejected_count = models.PositiveIntegerField(default=0)
    # [{"entry": "<arXiv id or position>", "message": "..."}, ...]
    errors = models.JSONField(default=list, blank=True)
    message = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]
        indexes = [
            # "Latest successful harvest" and the admin list read newest runs first.
            models.Index(
                fields=["status", "-started_at"], name="ingestrun_status_recent_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source} ({self.status})"

    @property
    def duration(self) -> timedelta | None:
        if self.finished_at is None:
            return None
        return self.finished_at - self.started_at
