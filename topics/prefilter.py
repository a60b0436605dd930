"""Find in the database the papers a rule could match, so that only they are matched.

Each paper's index terms (topics.rules.terms) are stored once in a RuleDocument,
derived again only when the paper changed since (its modified_at) or the terms'
version did. A rule's condition becomes one full-text match per stretch of words
(a tsquery against a GIN index on PostgreSQL, FTS5 MATCH on SQLite) and category
look-ups for ``cat:`` terms. The papers it admits are a superset of the rule's
matches: the exact matcher runs on them and decides.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Iterable
from datetime import datetime

from django.db import connection
from django.db import transaction
from django.db.models import Exists
from django.db.models import OuterRef
from django.db.models import Q
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from papers.models import Category
from papers.models import Paper
from topics.models import RuleDocument
from topics.rules import CompiledRule
from topics.rules import Document
from topics.rules.terms import TERMS_VERSION
from topics.rules.terms import AllOf
from topics.rules.terms import Condition
from topics.rules.terms import InCategory
from topics.rules.terms import Word
from topics.rules.terms import document_terms
from topics.rules.terms import rule_condition

CHUNK_SIZE = 1000
FTS_TABLE = "topics_ruledocument_fts"  # SQLite (topics/migrations/0008)


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


def refresh_rule_documents() -> int:
    """Derive the terms of every paper that needs it; return how many."""
    stale = stale_papers()
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
                        authors=author_names.split(", ") if author_names else (),
                        comment=comment,
                    )
                ),
            )
            for pk, title, abstract, author_names, comment in rows
        )
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


def candidate_filter(rule: CompiledRule) -> Q | None:
    """Return a filter on papers that admits every paper the rule matches, or None
    when the rule gives no condition (every paper must be matched)."""
    condition = rule_condition(rule.node)
    return None if condition is None else _filter(condition)


def in_categories(codes: Iterable[str]) -> Q:
    """Papers in one of these categories (codes as stored, e.g. cs.LG)."""
    through = Paper.categories.through
    return Q(
        Exists(
            through.objects.filter(paper_id=OuterRef("pk"), category__code__in=codes)
        )
    )


def _filter(condition: Condition) -> Q:
    if _is_text(condition):
        return _text_match(condition)
    if isinstance(condition, InCategory):
        return _in_category(condition)
    # Words side by side are answered by one text match, the rest one by one.
    words = tuple(item for item in condition.items if _is_text(item))
    others = [_filter(item) for item in condition.items if not _is_text(item)]
    kind = type(condition)
    parts = [_text_match(words[0] if len(words) == 1 else kind(words))] if words else []
    parts += others
    combined = parts[0]
    for part in parts[1:]:
        combined = combined & part if kind is AllOf else combined | part
    return combined


def _is_text(condition: Condition) -> bool:
    if isinstance(condition, Word):
        return True
    if isinstance(condition, InCategory):
        return False
    return all(map(_is_text, condition.items))


def _in_category(condition: InCategory) -> Q:
    # Categories are few: the ones meant are picked here, as Document reads them.
    codes = [
        code
        for code in Category.objects.values_list("code", flat=True)
        if (code.lower().split(".")[0] if condition.archive else code.lower())
        == condition.name
    ]
    return in_categories(codes)


def _text_match(condition: Condition) -> Q:
    if connection.vendor == "postgresql":
        sql = "SELECT paper_id FROM topics_ruledocument WHERE terms @@ %s::tsquery"
        return Q(pk__in=RawSQL(sql, [_tsquery(condition)]))
    sql = f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s"
    return Q(pk__in=RawSQL(sql, [_fts5_query(condition)]))


def _tsquery(condition: Condition) -> str:
    if isinstance(condition, Word):
        quoted = "'" + condition.value.replace("\\", "\\\\").replace("'", "''") + "'"
        return quoted + ":*" if condition.prefix else quoted
    operator = " & " if isinstance(condition, AllOf) else " | "
    return "(" + operator.join(map(_tsquery, condition.items)) + ")"


def _fts5_query(condition: Condition) -> str:
    if isinstance(condition, Word):
        quoted = '"' + condition.value.replace('"', '""') + '"'
        return quoted + " *" if condition.prefix else quoted
    operator = " AND " if isinstance(condition, AllOf) else " OR "
    return "(" + operator.join(map(_fts5_query, condition.items)) + ")"
