"""Bulk writes of thousands of rows: on PostgreSQL, COPY and array parameters
keep the statements short and cheap to build, send and plan; other databases
get the ORM's bulk methods. Imports no app."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any

import psycopg
from django.db import connection
from django.db.models import Field
from django.db.models import JSONField
from django.db.models import Model


def ensure_names(model: type[Model], names: set[str]) -> dict[str, int]:
    """Create the rows of `model` (unique on `name`) that don't exist yet for
    names, and return name -> id for all; safe beside a concurrent writer."""
    ids = ids_by(model, "name", names)
    missing = names - ids.keys()
    if missing:
        ids.update(insert_names(model, missing))
        # Names a concurrent ingest added meanwhile were skipped, not returned.
        if skipped := missing - ids.keys():
            ids.update(ids_by(model, "name", skipped))
    return ids


def ids_by(model: type[Model], field: str, values: Iterable[str]) -> dict[str, int]:
    """Map each of values to the id of the row whose `field` holds it."""
    values = list(values)
    if connection.vendor == "postgresql":
        column = connection.ops.quote_name(_column(_concrete(model, field)))
        table = connection.ops.quote_name(model._meta.db_table)
        sql = f"SELECT {column}, id FROM {table} WHERE {column} = ANY(%b)"
        return dict(with_arrays(sql, [values]))
    ids: dict[str, int] = {}
    # Chunked: SQLite limits the number of parameters in one query.
    for start in range(0, len(values), 500):
        lookup = {f"{field}__in": values[start : start + 500]}
        ids.update(model._default_manager.filter(**lookup).values_list(field, "id"))
    return ids


def insert_names(model: type[Model], names: set[str]) -> dict[str, int]:
    """Add rows for names, skipping existing ones; return the ids it knows of."""
    if connection.vendor != "postgresql":
        model._default_manager.bulk_create(
            [model(name=name) for name in names], ignore_conflicts=True
        )
        return {}
    table = connection.ops.quote_name(model._meta.db_table)
    sql = (
        f"INSERT INTO {table} (name) SELECT unnest(%b) "
        "ON CONFLICT DO NOTHING RETURNING name, id"
    )
    return dict(with_arrays(sql, [list(names)]))


def with_arrays(sql: str, arrays: Sequence[Sequence[object]]) -> list[tuple[Any, ...]]:
    """Run one statement on PostgreSQL with lists as its array parameters."""
    # Django's cursors bind parameters into the SQL text, quoting each element
    # of an array in Python; a plain psycopg cursor sends the array in binary
    # (%b), several times faster for thousands of values.
    connection.ensure_connection()
    with (
        connection.wrap_database_errors,
        psycopg.Cursor(connection.connection) as cursor,
    ):
        cursor.execute(sql, arrays)
        return cursor.fetchall() if cursor.description else []


def insert_rows(
    model: type[Model],
    fields: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    ignore_conflicts: bool = False,
) -> None:
    """Insert plain rows (values in `fields` order) without reading anything back.

    On PostgreSQL this is one COPY, or with ignore_conflicts one INSERT of
    columns sent as binary arrays; either costs a fraction of bulk_create for
    thousands of rows. Other databases get bulk_create.
    """
    if not rows:
        return
    if connection.vendor != "postgresql":
        model._default_manager.bulk_create(
            [model(**dict(zip(fields, row, strict=True))) for row in rows],
            ignore_conflicts=ignore_conflicts,
        )
        return
    columns = [_concrete(model, name) for name in fields]
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    names = ", ".join(quote(_column(column)) for column in columns)
    rows = json_adapted(columns, rows)
    if ignore_conflicts:
        arrays = ", ".join(f"%b::{column.db_type(connection)}[]" for column in columns)
        with_arrays(
            f"INSERT INTO {table} ({names}) SELECT * FROM unnest({arrays}) "
            "ON CONFLICT DO NOTHING",
            [list(values) for values in zip(*rows, strict=True)],
        )
        return
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row(row)


def update_rows(
    model: type[Model], fields: Sequence[str], objs: Sequence[Model]
) -> None:
    """Write these fields of these saved objects, found by primary key.

    On PostgreSQL this is one UPDATE joined to the values sent as binary arrays,
    where bulk_update would build a CASE of every row for every field (seconds
    of Python for thousands of rows). Other databases get bulk_update.
    """
    if not objs:
        return
    if connection.vendor != "postgresql":
        model._default_manager.bulk_update(objs, fields, batch_size=500)
        return
    key = model._meta.pk
    assert key is not None  # every concrete model has one
    columns = [_concrete(model, name) for name in fields]
    quote = connection.ops.quote_name
    names = [quote(_column(column)) for column in [key, *columns]]
    arrays = ", ".join(
        f"%b::{column.db_type(connection)}[]" for column in [key, *columns]
    )
    assignments = ", ".join(f"{name} = v.{name}" for name in names[1:])
    table = quote(model._meta.db_table)
    rows = json_adapted(
        [key, *columns],
        [[obj.pk, *(getattr(obj, name) for name in fields)] for obj in objs],
    )
    with_arrays(
        f"UPDATE {table} SET {assignments} FROM unnest({arrays}) "
        f"AS v({', '.join(names)}) WHERE {table}.{names[0]} = v.{names[0]}",
        [list(values) for values in zip(*rows, strict=True)],
    )


def json_adapted(
    columns: list[Field[Any, Any]], rows: Sequence[Sequence[object]]
) -> Sequence[Sequence[object]]:
    # psycopg sends Python values as they are, except JSON (a list would
    # become an array), which Django wraps for it.
    json_columns = [
        n for n, column in enumerate(columns) if isinstance(column, JSONField)
    ]
    if not json_columns:
        return rows
    adapted = []
    for row in rows:
        row = list(row)
        for n in json_columns:
            row[n] = columns[n].get_db_prep_save(row[n], connection)
        adapted.append(row)
    return adapted


def _concrete(model: type[Model], name: str) -> Field[Any, Any]:
    field = model._meta.get_field(name)
    assert isinstance(field, Field)  # get_field also finds reverse relations
    return field


def _column(field: Field[Any, Any]) -> str:
    assert field.column is not None  # None only for fields with no column (m2m)
    return field.column
