"""Find in the database the papers a rule could match, so that only they are matched.

Each paper's index terms (topics.rules.terms) are stored once in a RuleDocument,
derived again only when the paper changed since (its modified_at) or the terms'
version did. A rule's condition becomes one full-text match per stretch of words
(a tsquery against a GIN index on PostgreSQL, FTS5 MATCH on SQLite) and category
look-ups for ``cat:`` terms, their ids combined as the rule combines its terms.
The papers it admits are a superset of the rule's matches: the exact matcher runs
on them and decides.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Iterable
from datetime import datetime

from django.core.cache import cache
from django.db import connection
from django.db import transaction
from django.db.models import Exists
from django.db.models import OuterRef
from django.db.models import QuerySet

from papers.models import Category
from papers.models import Paper
from papers.names import printed_authors
from papers.query import LATE_COMMIT_OVERLAP
from papers.query import last_modified
from topics.models import RuleDocument
from topics.rules import CompiledRule
from topics.rules import Document
from topics.rules.terms import TERMS_VERSION
from topics.rules.terms import AllOf
from topics.rules.terms import AnyOf
from topics.rules.terms import Condition
from topics.rules.terms import InCategory
from topics.rules.terms import Not
from topics.rules.terms import Word
from topics.rules.terms import document_terms
from topics.rules.terms import rule_condition
from topics.rules.terms import sure_condition

CHUNK_SIZE = 1000
FTS_TABLE = "topics_ruledocument_fts"  # SQLite (topics/migrations/0008)
# The newest modified_at the last check of every paper's terms saw. Papers
# stamped up to LATE_COMMIT_OVERLAP before it are looked at again; after
# CHECK_KEPT seconds, or with the cache lost, every paper is checked again
# (what a restored database would otherwise hide).
CHECKED_KEY = f"rule-documents-checked:{TERMS_VERSION}"
CHECK_KEPT = 3600
# A rule preview derives at most this many papers' terms itself (about a
# second). More are stale after a release that changed the terms, or a
# restored database: the derive-rule-terms sweep derives them in the
# background, and the preview says so until it is done.
PREVIEW_DERIVES = 2000
# How many papers' terms were stale when a preview last found too many, kept
# this long for the previews that follow (while the sweep derives them, each
# would count them again: at a million papers, 0.8 s of anti-join).
STALE_COUNT_KEY = f"rule-documents-stale:{TERMS_VERSION}"
STALE_COUNT_KEPT = 30


class TermsNotReady(Exception):
    """More papers' terms are stale than a preview may derive."""

    def __init__(self, remaining: int) -> None:
        super().__init__(f"{remaining} papers' index terms are out of date")
        self.remaining = remaining


def stale_papers(papers: QuerySet[Paper] | None = None) -> dict[int, datetime]:
    """The papers (of `papers`, default all) whose stored terms are missing or out
    of date, with their modified_at (what terms derived now are stored against)."""
    current = RuleDocument.objects.filter(
        paper=OuterRef("pk"),
        source_modified=OuterRef("modified_at"),
        version=TERMS_VERSION,
    )
    papers = Paper.objects.all() if papers is None else papers
    return dict(
        papers.filter(~Exists(current)).order_by().values_list("pk", "modified_at")
    )


def refresh_rule_documents(limit: int | None = None) -> int:
    """Derive the terms of every paper that needs it; return how many, or raise
    TermsNotReady, deriving none, when more than `limit` do. Each rule preview
    asks: after the first, only the papers written since are checked (at a
    million papers, the whole check is an anti-join of 0.8 s), and while too
    many are stale, the previews of the next STALE_COUNT_KEPT seconds are told
    the count found last. Committed in chunks outside a transaction (the
    sweep's): work done before an interruption is kept."""
    if limit is not None:
        counted = cache.get(STALE_COUNT_KEY)
        if counted is not None and counted > limit:
            raise TermsNotReady(counted)
    latest = last_modified()
    checked = cache.get(CHECKED_KEY)
    papers = Paper.objects.all()
    if checked is not None:
        papers = papers.filter(modified_at__gt=checked - LATE_COMMIT_OVERLAP)
    stale = stale_papers(papers)
    if limit is not None and len(stale) > limit:
        cache.set(STALE_COUNT_KEY, len(stale), STALE_COUNT_KEPT)
        raise TermsNotReady(len(stale))
    ids = sorted(stale)
    for start in range(0, len(ids), CHUNK_SIZE):
        chunk = ids[start : start + CHUNK_SIZE]
        rows = Paper.objects.filter(pk__in=chunk).values_list(
            "pk", "title", "abstract", "author_names", "comment"
        )
        store_terms(
            (
                pk,
                stale[pk],
                document_terms(
                    Document.from_fields(
                        title=title,
                        abstract=abstract,
                        authors=printed_authors(author_names or ""),
                        comment=comment,
                    )
                ),
            )
            for pk, title, abstract, author_names, comment in rows
        )
    if latest is not None:
        cache.set(CHECKED_KEY, latest, CHECK_KEPT)
    if ids:
        cache.delete(STALE_COUNT_KEY)
    return len(ids)


@transaction.atomic
def store_terms(rows: Iterable[tuple[int, datetime, Collection[str]]]) -> None:
    """Store (paper id, its modified_at, its terms) rows, replacing older ones."""
    # Terms hold no spaces: one string per paper carries them on both databases.
    documents = [
        RuleDocument(
            paper_id=pk,
            source_modified=modified,
            version=TERMS_VERSION,
            terms=" ".join(sorted(terms)),
        )
        for pk, modified, terms in rows
    ]
    if not documents:
        return
    if connection.vendor == "postgresql":
        _store_tsvectors(documents)
        return
    RuleDocument.objects.bulk_create(
        documents,
        update_conflicts=True,
        unique_fields=["paper"],
        update_fields=["terms", "source_modified", "version"],
    )


def _store_tsvectors(documents: list[RuleDocument]) -> None:
    # array_to_tsvector keeps each term a lexeme as written; to_tsvector would
    # parse and stem it.
    sql = """
        INSERT INTO topics_ruledocument (paper_id, source_modified, version, terms)
        SELECT paper_id, source_modified, %s,
            array_to_tsvector(string_to_array(terms, ' '))
        FROM unnest(%s::bigint[], %s::timestamptz[], %s::text[])
            AS rows (paper_id, source_modified, terms)
        ON CONFLICT (paper_id) DO UPDATE SET terms = EXCLUDED.terms,
            source_modified = EXCLUDED.source_modified, version = EXCLUDED.version
    """
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [
                TERMS_VERSION,
                [doc.paper_id for doc in documents],
                [doc.source_modified for doc in documents],
                [doc.terms for doc in documents],
            ],
        )


def candidate_ids(
    rule: CompiledRule, scope: Collection[str] = (), derive_limit: int | None = None
) -> set[int] | None:
    """Return the ids of the papers (in one of `scope`'s categories, if any) that
    could match the rule: every paper it matches, and some more. None when the
    rule gives no condition to find them by: every paper must be matched.
    Stale terms are derived first (TermsNotReady past `derive_limit`)."""
    condition = rule_condition(rule.node)
    if condition is None:
        return None
    refresh_rule_documents(derive_limit)
    ids = _ids(condition)
    if scope:
        ids &= ids_in_categories(Category.objects.filter(code__in=scope))
    return ids


def sure_ids(rule: CompiledRule, candidates: set[int]) -> set[int]:
    """Return those of the rule's candidates that it surely matches: their terms
    and categories decide it (topics.rules.terms.sure_condition)."""
    condition = sure_condition(rule.node)
    if condition is None:
        return set()
    if condition == rule_condition(rule.node):
        return set(candidates)  # the terms decide every candidate
    return _ids(condition) & candidates


def ids_in_categories(categories: QuerySet[Category]) -> set[int]:
    """The ids of the papers in one of these categories."""
    through = Paper.categories.through
    return set(
        through.objects.filter(category__in=categories).values_list(
            "paper_id", flat=True
        )
    )


def _ids(condition: Condition) -> set[int]:
    """The papers satisfying the condition: words side by side are answered by
    one text match, categories by their rows, and the sets combined here."""
    if _is_text(condition):
        return _text_match(condition)
    if isinstance(condition, InCategory):
        return _in_category(condition)
    assert isinstance(condition, AllOf | AnyOf)  # Not only inside AllOf
    items = [item for item in condition.items if not isinstance(item, Not)]
    words = tuple(item for item in items if _is_text(item))
    parts = [_ids(item) for item in items if not _is_text(item)]
    kind = type(condition)
    if words:
        parts.append(_text_match(words[0] if len(words) == 1 else kind(words)))
    if kind is AnyOf:
        return set.union(*parts)
    ids = set.intersection(*parts)
    for item in condition.items:
        if isinstance(item, Not) and ids:
            ids -= _ids(item.item)
    return ids


def _is_text(condition: Condition) -> bool:
    if isinstance(condition, Word):
        return True
    if isinstance(condition, InCategory | Not):
        return False
    return all(map(_is_text, condition.items))


def _in_category(condition: InCategory) -> set[int]:
    # Categories are few: the ones meant are picked here, as Document reads them.
    ids = [
        pk
        for pk, code in Category.objects.values_list("pk", "code")
        if (code.lower().split(".")[0] if condition.archive else code.lower())
        == condition.name
    ]
    return ids_in_categories(Category.objects.filter(pk__in=ids))


def _text_match(condition: Condition) -> set[int]:
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            cursor.execute(
                f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s",
                [_fts5_query(condition)],
            )
            return {pk for (pk,) in cursor.fetchall()}
        # The planner does not count the cost of reading each row's large
        # tsvector back, and so prefers reading the table whole (or by primary
        # key) to the GIN index for queries of many words, which the index
        # answers in a tenth of the time: for this query, only the index.
        with transaction.atomic():
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_indexscan = off")
            try:
                cursor.execute(
                    "SELECT paper_id FROM topics_ruledocument"
                    " WHERE terms @@ %s::tsquery",
                    [_tsquery(condition)],
                )
                return {pk for (pk,) in cursor.fetchall()}
            finally:
                # SET LOCAL lasts to the end of the transaction, which may
                # be the caller's: the planner gets its settings back now.
                cursor.execute("RESET enable_seqscan")
                cursor.execute("RESET enable_indexscan")


def _tsquery(condition: Condition) -> str:
    if isinstance(condition, Word):
        quoted = "'" + condition.value.replace("\\", "\\\\").replace("'", "''") + "'"
        return quoted + ":*" if condition.prefix else quoted
    assert isinstance(condition, AllOf | AnyOf)  # a text condition (_is_text)
    operator = " & " if isinstance(condition, AllOf) else " | "
    return "(" + operator.join(map(_tsquery, condition.items)) + ")"


def _fts5_query(condition: Condition) -> str:
    if isinstance(condition, Word):
        quoted = '"' + condition.value.replace('"', '""') + '"'
        return quoted + " *" if condition.prefix else quoted
    assert isinstance(condition, AllOf | AnyOf)  # a text condition (_is_text)
    operator = " AND " if isinstance(condition, AllOf) else " OR "
    return "(" + operator.join(map(_fts5_query, condition.items)) + ")"
