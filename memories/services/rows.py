"""Rows written in one message to PostgreSQL, for the writes on a request's critical path."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.models import Model
from django.db.models.sql import InsertQuery


def rows_insert(*objs: Model) -> None:
    """INSERT each of `objs`, in order, in one message: one round trip instead of one a row.

    PostgreSQL runs the statements of one message as one implicit transaction, so outside an
    atomic block the rows are all stored or none, without the BEGIN and COMMIT round trips; inside
    one they are part of it. Django's psycopg cursor binds parameters client-side, which is what
    allows several statements in one execute. The statements are the ones `Model.save()` would
    send (Django's insert compiler: defaults, `pre_save`, adapters); nothing is returned, so each
    primary key must already be set (our UUID defaults) or be the database's to number (an
    auto-created many-to-many row, whose id stays unknown here), and no save signals are sent (none
    of the models written here has receivers).
    """
    statements: list[str] = []
    params: list[Any] = []
    for obj in objs:
        meta = obj._meta
        numbered = obj.pk is None and meta.auto_field is not None and meta.pk is meta.auto_field
        if obj.pk is None and not (numbered and meta.auto_created):
            raise ValueError(f"{meta.label} has no primary key yet; rows_insert returns none")
        fields = [
            field
            for field in meta.local_concrete_fields
            if not field.generated and not (numbered and field is meta.auto_field)
        ]
        query = InsertQuery(type(obj))
        query.insert_values(fields, [obj])
        [(sql, values)] = query.get_compiler(connection=connection).as_sql()
        statements.append(sql)
        params.extend(values)
    with connection.cursor() as cursor:
        cursor.execute(";".join(statements), params)
    for obj in objs:
        obj._state.adding = False
        obj._state.db = connection.alias
