"""Bulk, idempotent upsert of parsed records into papers, keyed by arXiv id.

A newer version replaces the row's content; an older or equal one changes
nothing, unless it is the stored text with its mojibake undone. The
first-version facts (published, first announced) are never lost to a later
source that does not know them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import date
from datetime import datetime
from typing import TypeVar

from django.db import IntegrityError
from django.db import transaction
from django.utils import timezone

from core.bulk import ensure_names
from core.bulk import ids_by
from core.bulk import insert_rows
from papers.identity import author_key
from papers.ingest.records import PaperRecord
from papers.ingest.records import repair_text
from papers.ingest.schedule import listing_day
from papers.models import Affiliation
from papers.models import Author
from papers.models import Authorship
from papers.models import Category
from papers.models import Paper
from papers.names import AUTHOR_SEPARATOR
from papers.taxonomy import category_name

_Named = TypeVar("_Named", Author, Affiliation)

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
# What a new paper's row is written with; the trigger fills search_vector.
PAPER_COLUMNS = [
    "arxiv_id",
    "created_at",
    *(name for name in UPDATED_FIELDS if name != "primary_category"),
    "primary_category_id",
]


@dataclass
class UpsertResult:
    new_ids: list[int] = field(default_factory=list)
    updated_ids: list[int] = field(default_factory=list)
    unchanged: int = 0
    # The papers now stored exactly as a record says (new or updated; not those
    # only cross-listed), so their tags can be matched on the record. Per call:
    # add() leaves it out, so a long run's total holds no records.
    written: dict[int, PaperRecord] = field(default_factory=dict)
    # The papers given the announcement day they were stored without: stored
    # with none, they were the newest, and may no longer be.
    dated_ids: list[int] = field(default_factory=list)

    @property
    def changed_ids(self) -> list[int]:
        return self.new_ids + self.updated_ids

    def add(self, other: UpsertResult) -> None:
        self.new_ids += other.new_ids
        self.updated_ids += other.updated_ids
        self.unchanged += other.unchanged
        self.dated_ids += other.dated_ids


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


def _fills_in(record: PaperRecord, paper: Paper) -> bool:
    """Whether the record is the fuller account of the stored version: of the
    same version, it knows when that was submitted, which the stored row,
    written from a daily listing (no dates, comments or affiliations), does
    not. A withdrawal announced in a listing is said in the comment that the
    API or OAI-PMH brings later."""
    return (
        record.version is not None
        and record.version == paper.version
        and record.updated is not None
        and (paper.updated is None or record.updated > paper.updated)
    )


def _repairs(
    pairs: list[tuple[PaperRecord, Paper]],
) -> list[tuple[PaperRecord, Paper]]:
    """The (record, paper) pairs whose record is the paper's stored text with its
    mojibake undone (stored before ingest repaired text, from a source that
    declared the wrong encoding): it replaces the text, though not newer."""
    # Repaired text is not ASCII: only those records' stored text is read.
    candidates = [
        (record, paper)
        for record, paper in pairs
        if not (record.title.isascii() and record.abstract.isascii())
    ]
    if not candidates:
        return []
    stored = {
        pk: (title, abstract)
        for pk, title, abstract in Paper.objects.filter(
            pk__in=[paper.pk for _, paper in candidates]
        ).values_list("pk", "title", "abstract")
    }
    return [
        (record, paper)
        for record, paper in candidates
        if _is_repair(stored[paper.pk], (record.title, record.abstract))
    ]


def _is_repair(stored: tuple[str, ...], incoming: tuple[str, ...]) -> bool:
    differ = [
        (old, new) for old, new in zip(stored, incoming, strict=True) if old != new
    ]
    return bool(differ) and all(repair_text(old) == new for old, new in differ)


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
    existing = _existing(records)
    to_create: list[PaperRecord] = []
    to_update: list[tuple[PaperRecord, Paper]] = []
    not_newer: list[tuple[PaperRecord, Paper]] = []
    for arxiv_id, record in records.items():
        paper = existing.get(arxiv_id)
        if paper is None:
            to_create.append(record)
        elif is_newer(
            record.version, record.updated, paper.version, paper.updated
        ) or _fills_in(record, paper):
            to_update.append((record, paper))
        else:
            not_newer.append((record, paper))
    repairs = _repairs(not_newer)
    to_update += repairs
    not_newer = [pair for pair in not_newer if pair not in repairs]
    result.dated_ids = _add_missing_days(not_newer)
    known = _add_cross_listings(not_newer) + result.dated_ids + _fill_blanks(not_newer)
    changed_ids = sorted(set(known))
    result.unchanged = len(not_newer) - len(changed_ids)
    result.updated_ids = changed_ids
    if not to_create and not to_update:
        return result

    changed = to_create + [record for record, _ in to_update]
    category_ids = _ensure_categories(changed)
    now = timezone.now()

    if to_create:
        rows = [_new_row(record, category_ids, now) for record in to_create]
        insert_rows(Paper, PAPER_COLUMNS, rows)
        ids = ids_by(Paper, "arxiv_id", [record.arxiv_id for record in to_create])
        result.new_ids = [ids[record.arxiv_id] for record in to_create]

    updated_ids = [paper.pk for _, paper in to_update]
    if to_update:
        for record, paper in to_update:
            undated = paper.first_announced is None
            _apply(record, paper, category_ids, now)
            if undated and paper.first_announced is not None:
                result.dated_ids.append(paper.pk)
        Paper.objects.bulk_update([paper for _, paper in to_update], UPDATED_FIELDS)
        result.updated_ids += updated_ids
        # Their categories and authorships are replaced; new papers have none.
        Paper.categories.through.objects.filter(paper_id__in=updated_ids).delete()
        Authorship.objects.filter(paper_id__in=updated_ids).delete()
    pairs = list(zip(changed, result.new_ids + updated_ids, strict=True))
    result.written = {paper_id: record for record, paper_id in pairs}
    _add_categories(pairs, category_ids)
    _add_authorships(pairs)
    return result


def _existing(arxiv_ids: Iterable[str]) -> dict[str, Paper]:
    """The stored papers with these ids, with what deciding an update needs."""
    # Most ingested papers are new: one cheap look-up of ids usually ends it.
    ids = ids_by(Paper, "arxiv_id", arxiv_ids)
    if not ids:
        return {}
    # Locked, in one order, until the page commits: a writer holding an older
    # version waits here for one storing a newer, then reads it, and leaves it.
    # (FOR NO KEY UPDATE: a row inserted meanwhile that points at the paper, a
    # re-tag's tag or a reader's flag, checks its key without waiting, where
    # FOR UPDATE deadlocked with a re-tag holding the paper's tag.)
    papers = (
        Paper.objects.filter(pk__in=ids.values())
        .select_for_update(no_key=True)
        .order_by("pk")
    ).only(
        "id",
        "arxiv_id",
        "version",
        "updated",
        "published",
        "first_announced",
        "primary_category",
        "versions",
        "comment",
        "license",
        "doi",
        "journal_ref",
        "withdrawn",
    )
    return {paper.arxiv_id: paper for paper in papers}


def _first_announced(record: PaperRecord) -> date | None:
    """The day the paper's first version was listed: the listing's own for a
    new paper, and for a cross-list (listed in its own category the same day;
    a listing carries no submission date); else the listing day of its
    submission; None for a replacement read from a listing."""
    if record.announced and record.announce_type in ("", "new", "cross"):
        return record.announced
    return listing_day(record.published) if record.published else None


def _add_missing_days(pairs: list[tuple[PaperRecord, Paper]]) -> list[int]:
    """Give a paper stored without an announcement day (first read as a
    replacement in a listing) the day an equal or older record knows, and its
    submission time. Returns the ids of papers changed."""
    filled = []
    for record, paper in pairs:
        if paper.first_announced is None and (day := _first_announced(record)):
            paper.first_announced = day
            paper.published = paper.published or record.published
            paper.modified_at = timezone.now()
            filled.append(paper)
    Paper.objects.bulk_update(filled, ["first_announced", "published", "modified_at"])
    return [paper.pk for paper in filled]


# What a paper's version may be stored without, which another record of that
# version may know.
BLANKS = ("license", "doi", "journal_ref")


def _fill_blanks(pairs: list[tuple[PaperRecord, Paper]]) -> list[int]:
    """Give a paper the primary category it was stored without (a snapshot's
    sorted categories name none) that an equal or older record knows, and the
    license, DOI and journal reference (the query API's format has no license)
    that a record of the same version knows, whichever format came first; a
    withdrawn paper keeps what it has. Returns the ids of papers changed."""
    primaries = [
        r for r, p in pairs if r.primary_category and not p.primary_category_id
    ]
    category_ids = _ensure_categories(primaries) if primaries else {}
    filled = []
    for record, paper in pairs:
        changed = False
        if record.primary_category and not paper.primary_category_id:
            paper.primary_category_id = category_ids[record.primary_category]
            changed = True
        same_version = record.version is not None and record.version == paper.version
        for name in BLANKS if same_version and not paper.withdrawn else ():
            if getattr(record, name) and not getattr(paper, name):
                setattr(paper, name, getattr(record, name))
                changed = True
        if changed:
            paper.modified_at = timezone.now()
            filled.append(paper)
    Paper.objects.bulk_update(filled, ["primary_category", *BLANKS, "modified_at"])
    return [paper.pk for paper in filled]


def _new_row(
    record: PaperRecord, category_ids: dict[str, int], now: datetime
) -> tuple[object, ...]:
    """A new paper's row, values in PAPER_COLUMNS order."""
    values = _content(record, category_ids)
    values.update(arxiv_id=record.arxiv_id, created_at=now, modified_at=now)
    return tuple(values[name] for name in PAPER_COLUMNS)


def _apply(
    record: PaperRecord, paper: Paper, category_ids: dict[str, int], now: datetime
) -> None:
    """Copy a record's content onto a paper, keeping first-version facts it lacks."""
    values = _content(record, category_ids)
    values["published"] = paper.published or record.published
    values["updated"] = record.updated or paper.updated
    values["first_announced"] = paper.first_announced or values["first_announced"]
    # A listing names no versions: the history stays what the last record said.
    values["versions"] = values["versions"] or paper.versions
    # Nor comments: the last one stays until a fuller record of this version.
    if record.announced is not None and not record.comment:
        values["comment"] = paper.comment
    if not record.primary_category:
        values["primary_category_id"] = paper.primary_category_id
    # Nor has the query API's format a license.
    values["license"] = values["license"] or paper.license
    values["modified_at"] = now
    for name, value in values.items():
        setattr(paper, name, value)


def _content(record: PaperRecord, category_ids: dict[str, int]) -> dict[str, object]:
    """The paper fields (by attribute name) that a record sets."""
    primary = record.primary_category
    return {
        "version": record.version,
        "title": record.title,
        "abstract": record.abstract,
        "comment": record.comment,
        "journal_ref": record.journal_ref,
        "doi": record.doi,
        "license": record.license,
        "primary_category_id": category_ids[primary] if primary else None,
        "author_names": AUTHOR_SEPARATOR.join(author.name for author in record.authors),
        "published": record.published,
        "updated": record.updated,
        "first_announced": _first_announced(record),
        "withdrawn": record.withdrawn,
        "versions": [
            {"version": v.version, "submitted": v.submitted.isoformat(), "size": v.size}
            for v in record.versions
        ],
    }


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


def _add_categories(
    pairs: list[tuple[PaperRecord, int]], category_ids: dict[str, int]
) -> None:
    insert_rows(
        Paper.categories.through,
        ["paper_id", "category_id"],
        [
            (paper_id, category_ids[code])
            for record, paper_id in pairs
            for code in dict.fromkeys(record.categories)
        ],
    )


def _ensure_authors(names: Iterable[str]) -> dict[str, int]:
    """Each printed name's author id, found by the name's key (papers.identity),
    so "J. Müller" and "J.Muller" are one author; one new to the site is
    created under the first printing seen. Safe beside a concurrent writer."""
    key_of = {name: author_key(name) for name in names}
    first_printed: dict[str, str] = {}
    for name, key in key_of.items():
        first_printed.setdefault(key, name)
    ids = ids_by(Author, "key", first_printed)
    if missing := first_printed.keys() - ids.keys():
        rows = [(first_printed[key], key) for key in sorted(missing)]
        insert_rows(Author, ["name", "key"], rows, ignore_conflicts=True)
        ids.update(ids_by(Author, "key", missing))
    return {name: ids[key] for name, key in key_of.items()}


def _add_authorships(pairs: list[tuple[PaperRecord, int]]) -> None:
    author_ids = _ensure_authors(
        [author.name for record, _ in pairs for author in record.authors]
    )
    insert_rows(
        Authorship,
        ["paper_id", "author_id", "position"],
        [
            (paper_id, author_ids[author.name], position)
            for record, paper_id in pairs
            for position, author in enumerate(record.authors)
        ],
    )
    affiliated = [
        (record, paper_id)
        for record, paper_id in pairs
        if any(author.affiliations for author in record.authors)
    ]
    if not affiliated:
        return
    affiliation_ids = ensure_names(
        Affiliation,
        {
            name
            for record, _ in affiliated
            for author in record.authors
            for name in author.affiliations
        },
    )
    # COPY returns no ids, so the authorships that need them are read back.
    authorship_ids = {
        (paper_id, position): pk
        for pk, paper_id, position in Authorship.objects.filter(
            paper_id__in=[paper_id for _, paper_id in affiliated]
        ).values_list("pk", "paper_id", "position")
    }
    insert_rows(
        Authorship.affiliations.through,
        ["authorship_id", "affiliation_id"],
        [
            (authorship_ids[paper_id, position], affiliation_ids[name])
            for record, paper_id in affiliated
            for position, author in enumerate(record.authors)
            for name in dict.fromkeys(author.affiliations)
        ],
    )
