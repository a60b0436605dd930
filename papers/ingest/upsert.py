"""Bulk, idempotent upsert of parsed records into papers, keyed by arXiv id.

A newer version replaces the row's content; an older or equal one changes
nothing. The first-version facts (published, first announced) are never lost to a
later source that does not know them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import date
from datetime import datetime

from django.db import IntegrityError
from django.db import transaction
from django.utils import timezone

from papers.ingest.records import PaperRecord
from papers.ingest.schedule import listing_day
from papers.models import Affiliation
from papers.models import Author
from papers.models import Authorship
from papers.models import Category
from papers.models import Paper
from papers.taxonomy import category_name

UPDATED_FIELDS = [
    "version",
    "title",
    "abstract",
    "comment",
    "journal_ref",
    "doi",
    "license",
    "primary_category",
    "author_names",
    "published",
    "updated",
    "first_announced",
    "withdrawn",
    "versions",
    "modified_at",
]


@dataclass
class UpsertResult:
    new_ids: list[int] = field(default_factory=list)
    updated_ids: list[int] = field(default_factory=list)
    unchanged: int = 0

    @property
    def changed_ids(self) -> list[int]:
        return self.new_ids + self.updated_ids

    def add(self, other: UpsertResult) -> None:
        self.new_ids += other.new_ids
        self.updated_ids += other.updated_ids
        self.unchanged += other.unchanged


def is_newer(
    version: int | None,
    updated: datetime | None,
    than_version: int | None,
    than_updated: datetime | None,
) -> bool:
    """True if (version, updated) is later than (than_version, than_updated)."""
    if version is not None and than_version is not None:
        return version > than_version
    # One side does not know its version number (OAI-PMH "arXiv" records): the
    # submission time of the current version orders them instead.
    if updated is None or than_updated is None:
        return False
    return updated > than_updated


def upsert_records(records: Sequence[PaperRecord]) -> UpsertResult:
    """Insert new papers and update those with a newer version; idempotent.

    Runs in a savepoint and retries once if a concurrent writer inserted the same
    paper between our read and our insert.
    """
    latest = _latest_per_id(records)
    for attempt in (1, 2):
        try:
            with transaction.atomic():
                result = _upsert(latest)
            # The same entry twice in one source is stored once.
            result.unchanged += len(records) - len(latest)
            return result
        except IntegrityError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _latest_per_id(records: Iterable[PaperRecord]) -> dict[str, PaperRecord]:
    latest: dict[str, PaperRecord] = {}
    for record in records:
        seen = latest.get(record.arxiv_id)
        if seen is None or is_newer(
            record.version, record.updated, seen.version, seen.updated
        ):
            latest[record.arxiv_id] = record
    return latest


def _upsert(records: dict[str, PaperRecord]) -> UpsertResult:
    result = UpsertResult()
    existing = {
        paper.arxiv_id: paper
        for paper in Paper.objects.filter(arxiv_id__in=records).only(
            "id",
            "arxiv_id",
            "version",
            "updated",
            "published",
            "first_announced",
            "primary_category",
        )
    }
    to_create: list[PaperRecord] = []
    to_update: list[tuple[PaperRecord, Paper]] = []
    not_newer: list[tuple[PaperRecord, Paper]] = []
    for arxiv_id, record in records.items():
        paper = existing.get(arxiv_id)
        if paper is None:
            to_create.append(record)
        elif is_newer(record.version, record.updated, paper.version, paper.updated):
            to_update.append((record, paper))
        else:
            not_newer.append((record, paper))
    cross_listed = _add_cross_listings(not_newer)
    result.unchanged = len(not_newer) - len(cross_listed)
    result.updated_ids = cross_listed
    if not to_create and not to_update:
        return result

    changed = to_create + [record for record, _ in to_update]
    category_ids = _ensure_categories(changed)
    now = timezone.now()

    created = [_new_paper(record, category_ids, now) for record in to_create]
    Paper.objects.bulk_create(created)
    result.new_ids = [paper.pk for paper in created]

    for record, paper in to_update:
        _apply(record, paper, category_ids, now)
    Paper.objects.bulk_update([paper for _, paper in to_update], UPDATED_FIELDS)
    result.updated_ids += [paper.pk for _, paper in to_update]

    pairs = list(zip(to_create, created, strict=False)) + to_update
    _replace_categories(pairs, category_ids)
    _replace_authorships(pairs)
    return result


def _first_announced(record: PaperRecord) -> date | None:
    if record.announced and record.announce_type in ("", "new"):
        return record.announced
    return listing_day(record.published) if record.published else None


def _new_paper(
    record: PaperRecord, category_ids: dict[str, int], now: datetime
) -> Paper:
    paper = Paper(arxiv_id=record.arxiv_id, created_at=now)
    _apply(record, paper, category_ids, now)
    return paper


def _apply(
    record: PaperRecord, paper: Paper, category_ids: dict[str, int], now: datetime
) -> None:
    """Copy a record's content onto a paper, keeping first-version facts it lacks."""
    paper.version = record.version
    paper.title = record.title
    paper.abstract = record.abstract
    paper.comment = record.comment
    paper.journal_ref = record.journal_ref
    paper.doi = record.doi
    paper.license = record.license
    if record.primary_category:
        paper.primary_category_id = category_ids[record.primary_category]
    paper.author_names = ", ".join(author.name for author in record.authors)
    paper.published = paper.published or record.published
    paper.updated = record.updated or paper.updated
    paper.first_announced = paper.first_announced or _first_announced(record)
    paper.withdrawn = record.withdrawn
    paper.versions = [
        {"version": v.version, "submitted": v.submitted.isoformat(), "size": v.size}
        for v in record.versions
    ]
    paper.modified_at = now


def _ensure_categories(records: Iterable[PaperRecord]) -> dict[str, int]:
    codes = {code for record in records for code in record.categories}
    codes.update(r.primary_category for r in records if r.primary_category)
    Category.objects.bulk_create(
        [Category(code=code, name=category_name(code)) for code in codes],
        ignore_conflicts=True,
    )
    return dict(Category.objects.filter(code__in=codes).values_list("code", "id"))


def _add_cross_listings(pairs: list[tuple[PaperRecord, Paper]]) -> list[int]:
    """Add categories an equal or older record lists that its paper lacks.

    A cross-list announces an existing version in one more category; categories
    are only ever added this way, never removed. Returns the ids of papers changed.
    """
    if not pairs:
        return []
    through = Paper.categories.through
    have: dict[int, set[str]] = defaultdict(set)
    for paper_id, code in through.objects.filter(
        paper_id__in=[paper.pk for _, paper in pairs]
    ).values_list("paper_id", "category__code"):
        have[paper_id].add(code)
    missing = {
        (paper.pk, code)
        for record, paper in pairs
        for code in record.categories
        if code not in have[paper.pk]
    }
    if not missing:
        return []
    category_ids = _ensure_categories([record for record, _ in pairs])
    through.objects.bulk_create(
        [through(paper_id=pk, category_id=category_ids[code]) for pk, code in missing],
        ignore_conflicts=True,
    )
    changed = sorted({pk for pk, _ in missing})
    Paper.objects.filter(pk__in=changed).update(modified_at=timezone.now())
    return changed


def _replace_categories(
    pairs: list[tuple[PaperRecord, Paper]], category_ids: dict[str, int]
) -> None:
    through = Paper.categories.through
    through.objects.filter(paper_id__in=[paper.pk for _, paper in pairs]).delete()
    through.objects.bulk_create(
        [
            through(paper_id=paper.pk, category_id=category_ids[code])
            for record, paper in pairs
            for code in dict.fromkeys(record.categories)
        ]
    )


def _replace_authorships(pairs: list[tuple[PaperRecord, Paper]]) -> None:
    Authorship.objects.filter(paper_id__in=[paper.pk for _, paper in pairs]).delete()
    author_ids = _ensure_names(
        Author, {a.name for record, _ in pairs for a in record.authors}
    )
    affiliation_ids = _ensure_names(
        Affiliation,
        {
            name
            for record, _ in pairs
            for a in record.authors
            for name in a.affiliations
        },
    )
    authorships = []
    affiliations = []
    for record, paper in pairs:
        for position, author in enumerate(record.authors):
            authorships.append(
                Authorship(
                    paper_id=paper.pk,
                    author_id=author_ids[author.name],
                    position=position,
                )
            )
            affiliations.append(author.affiliations)
    Authorship.objects.bulk_create(authorships)
    through = Authorship.affiliations.through
    through.objects.bulk_create(
        [
            through(authorship_id=authorship.pk, affiliation_id=affiliation_ids[name])
            for authorship, names in zip(authorships, affiliations, strict=False)
            for name in dict.fromkeys(names)
        ]
    )


def _ensure_names(
    model: type[Author] | type[Affiliation], names: set[str]
) -> dict[str, int]:
    """Create the named rows that don't exist yet and return name -> id for all."""
    model.objects.bulk_create(
        [model(name=name) for name in names], ignore_conflicts=True
    )
    ids: dict[str, int] = {}
    names_list = list(names)
    # Chunked: SQLite limits the number of parameters in one query.
    for start in range(0, len(names_list), 500):
        chunk = names_list[start : start + 500]
        ids.update(model.objects.filter(name__in=chunk).values_list("name", "id"))
    return ids
