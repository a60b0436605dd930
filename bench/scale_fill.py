"""bench/scale's fill: a size's database, the demo corpus through bench.pages'
pipeline and then SQL copies of its papers (see bench.scale)."""

from __future__ import annotations

import bench.pages_fill as pages_fill
from bench.common import Timer
from bench.common import corpus_rows
from bench.common import setup_django

TOPICS = 200
# Bump when the fill below changes what it stores.
FILL_VERSION = 2
SHIFT_DAYS = 9 * 7
GIN_INDEXES = {
    "paper_search_vector_gin": "papers_paper USING gin (search_vector)",
    "ruledocument_terms_gin": "topics_ruledocument USING gin (terms)",
}


def signature(papers: int) -> str:
    return (
        f"bench.scale v{FILL_VERSION} {papers} papers {TOPICS} topics "
        + (pages_fill.signature(corpus_size(), TOPICS).split()[1])
    )


def corpus_size() -> int:
    return sum(1 for _ in corpus_rows())


def prepare(url: str, papers: int, refill: bool) -> bool:
    """Fill the size's database, or reuse it; True when it was filled now."""
    wanted = signature(papers)
    name = url.rsplit("/", 1)[1]
    if not refill and pages_fill.stored_signature(url) == wanted:
        print(f"database: reusing {name} ({wanted})", flush=True)
        pages_fill.open_kept_database(url)
        refresh_search_index()
        return False
    print(f"database: filling {name}", flush=True)
    setup_django(fresh_database=True, url=url)
    pages_fill.fill(corpus_size(), TOPICS)
    from topics.prefilter import refresh_rule_documents

    with Timer() as timer:
        derived = refresh_rule_documents()
    print(f"  rule terms  {derived:9,}  in {timer.seconds:6.1f} s", flush=True)
    replicate(papers)

    from django.db import connection

    from topics.momentum import refresh_momentum

    with Timer() as timer:
        refresh_momentum()
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    print(f"  momentum, VACUUM ANALYZE   in {timer.seconds:6.1f} s", flush=True)
    refresh_search_index()
    pages_fill.store_signature(url, wanted)
    return True


def refresh_search_index() -> None:
    """What the daily task does: the full-text index of the newest papers."""
    from papers.recent_index import refresh_recent_index

    with Timer() as timer:
        done = refresh_recent_index()
    print(f"  newest papers' index: {done}, in {timer.seconds:.1f} s", flush=True)


def copied_models() -> list:
    """The tables a copy of a paper takes rows in, parents first."""
    from papers.models import Authorship
    from papers.models import Paper
    from topics.models import PaperTopic
    from topics.models import RuleDocument

    return [
        Paper,
        Paper.categories.through,
        Authorship,
        Authorship.affiliations.through,
        PaperTopic,
        RuleDocument,
    ]


def replicate(papers: int) -> None:
    """Copy the stored papers and what hangs off them until there are `papers`.

    Copy c gives every row the id `id + c * stride` (stride: the table's largest
    id plus one, so copies never collide), the papers the arXiv ids of bench.pages'
    copy c, and moves every date back c * SHIFT_DAYS. The rows copied were
    checked when first stored, so triggers and foreign-key checks are off
    (session_replication_role) and the search vectors and rule terms
    (RuleDocument) are copied, not derived; their indexes are built once at the
    end.
    """
    from django.db import connection
    from django.db import transaction

    from papers.models import Paper

    base = Paper.objects.count()
    models = copied_models()
    with connection.cursor() as cursor:
        strides = {}
        for model in models:
            cursor.execute(
                f"SELECT coalesce(max({model._meta.pk.column}), 0) + 1 "
                f"FROM {model._meta.db_table}"
            )
            strides[model] = cursor.fetchone()[0]
        for index in GIN_INDEXES:
            cursor.execute(f"DROP INDEX IF EXISTS {index}")
        cursor.execute("SET session_replication_role = replica")
        copy = 1
        with Timer() as timer:
            while (done := base * copy) < papers:
                rows = min(base, papers - done)
                with transaction.atomic():
                    last = _last_base_paper(cursor, rows, strides[Paper])
                    for model in models:
                        cursor.execute(_copy_sql(model, copy, strides, last))
                copy += 1
                print(f"  copy {copy - 1:3}  {done + rows:9,} papers", flush=True)
        cursor.execute("SET session_replication_role = DEFAULT")
        print(f"  copies    {papers - base:9,}  in {timer.seconds:6.1f} s", flush=True)
        with Timer() as timer:
            cursor.execute("SET maintenance_work_mem = '1GB'")
            for index, on in GIN_INDEXES.items():
                cursor.execute(f"CREATE INDEX {index} ON {on}")
            for model in models:
                if model._meta.pk.is_relation:
                    continue  # RuleDocument: its key is its paper's
                table = model._meta.db_table
                cursor.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"(SELECT max(id) FROM {table}))"
                )
        print(f"  full-text indexes          in {timer.seconds:6.1f} s", flush=True)


def _last_base_paper(cursor, rows: int, stride: int) -> int:
    """The id of the `rows`-th paper of the first fill, in id order."""
    cursor.execute(
        "SELECT id FROM papers_paper WHERE id < %s ORDER BY id OFFSET %s LIMIT 1",
        [stride, rows - 1],
    )
    return cursor.fetchone()[0]


def _copy_sql(model, copy: int, strides: dict, last: int) -> str:
    """INSERT ... SELECT of copy `copy` of the first fill's rows of `model` that
    belong to its papers up to id `last`."""
    from django.db import models as fields

    from papers.models import Authorship
    from papers.models import Paper

    days = copy * SHIFT_DAYS
    prefix = pages_fill.synthetic_id(copy, 0).split(".")[0]
    columns, values = [], []
    for field in model._meta.concrete_fields:
        column = field.column
        target = field.related_model if field.is_relation else None
        if target in (Paper, Authorship):  # RuleDocument's key too
            value = f"{column} + {copy * strides[target]}"
        elif field.primary_key:
            value = f"{column} + {copy * strides[model]}"
        elif model is Paper and column == "arxiv_id":
            value = f"'{prefix}.' || split_part(arxiv_id, '.', 2)"
        elif isinstance(field, fields.DateTimeField):
            value = f"{column} - interval '{days} days'"
        elif isinstance(field, fields.DateField):
            value = f"{column} - {days}"
        else:
            value = column
        columns.append(column)
        values.append(value)
    table = model._meta.db_table
    if model is Paper:
        where = f"id <= {last}"
    elif model is Authorship.affiliations.through:
        where = (
            "authorship_id IN (SELECT id FROM papers_authorship "
            f"WHERE paper_id <= {last})"
        )
    else:
        where = f"paper_id <= {last}"
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) "
        f"SELECT {', '.join(values)} FROM {table} WHERE {where}"
    )
