"""Rows written in one message to PostgreSQL, for the writes on a request's critical path."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from django.db import DatabaseError, connection
from django.db.models import CASCADE, DO_NOTHING, SET_NULL, Field, ForeignObjectRel, Model
from django.db.models.sql import InsertQuery


def rows_insert(*objs: Model) -> None:
    """INSERT each of `objs`, in order, in one message: one round trip instead of one a row.

    PostgreSQL runs the statements of one message as one implicit transaction, so outside an
    atomic block the rows are all stored or none, without the BEGIN and COMMIT round trips; inside
    one they are part of it. Django's psycopg cursor binds parameters client-side, which is what
    allows several statements in one execute. The statements are the ones `Model.save()` would
    send (Django's insert compiler: defaults, `pre_save`, adapters); nothing is returned, so each
    primary key must already be set (our UUID defaults) or be the database's to number (a
    memory-entity link, whose id stays unknown here), and no save signals are sent (none
    of the models written here has receivers).
    """
    statements: list[str] = []
    params: list[Any] = []
    for obj in objs:
        sql, values = _insert_of(obj)
        statements.append(sql)
        params.extend(values)
    with connection.cursor() as cursor:
        cursor.execute(";".join(statements), params)
    for obj in objs:
        obj._state.adding = False
        obj._state.db = connection.alias


def _insert_of(obj: Model) -> tuple[str, list[Any]]:
    """The INSERT of `obj` and its parameters, as Django's insert compiler makes them. Compiling it
    is most of the cost (0.3 ms for a memory's 40 columns, against 0.05 for its values), and its
    text depends only on the model and on whether the database numbers the row, while every value
    is plain: it is compiled once for the first such row (`_INSERTS`), and each row's values made as
    the compiler makes them (each field's `pre_save`, then `get_db_prep_save`; a placeholder is
    "%s", or a cast that depends on the field alone). A value that is an expression (`Now()`, a
    database default) makes SQL of its own: such a row is compiled whole."""
    meta = obj._meta
    numbered = obj.pk is None and meta.auto_field is not None and meta.pk is meta.auto_field
    if obj.pk is None and not numbered:
        raise ValueError(f"{meta.label} has no primary key yet; rows_insert returns none")
    fields = _insert_fields(type(obj), numbered)
    saved = [field.pre_save(obj, True) for field in fields]
    if any(hasattr(value, "resolve_expression") for value in saved):
        return _insert_compiled(obj, fields)
    key = (type(obj), numbered)
    sql = _INSERTS.get(key)
    if sql is None:
        sql, values = _insert_compiled(obj, fields)
        _INSERTS[key] = sql
        return sql, values
    return sql, [
        field.get_db_prep_save(value, connection) for field, value in zip(fields, saved, strict=True)
    ]


# The INSERT of each model (and whether its row is numbered), compiled once per process.
_INSERTS: dict[tuple[type[Model], bool], str] = {}


@functools.cache
def _insert_fields(model: type[Model], numbered: bool) -> list[Field[Any, Any]]:
    meta = model._meta
    return [
        field
        for field in meta.local_concrete_fields
        if not field.generated and not (numbered and field is meta.auto_field)
    ]


def _insert_compiled(obj: Model, fields: list[Field[Any, Any]]) -> tuple[str, list[Any]]:
    query = InsertQuery(type(obj))
    query.insert_values(fields, [obj])
    [(sql, values)] = query.get_compiler(connection=connection).as_sql()
    return sql, list(values)


def row_update(obj: Model, fields: tuple[str, ...]) -> None:
    """UPDATE `fields` of `obj`'s row: what `obj.save(update_fields=fields)` stores (each field's
    `pre_save` and database value), in a statement built once per model and fields. The save
    machinery built and compiled an UPDATE each time, three times the CPU of the statement itself
    (0.16-0.23 ms against 0.05, 2,000 updates of an entity). No save signals are sent (none of the
    models written here has receivers). Raises DatabaseError when the row is gone, as save does."""
    sql, params = _update_of(obj, fields)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if cursor.rowcount != 1:
            raise DatabaseError("Save with update_fields did not affect any rows.")


def rows_update(objs: list[Model], fields: tuple[str, ...]) -> None:
    """row_update for each of `objs` (of one model), in one message: one round trip for all. The
    caller holds the rows locked (a row gone cannot be told apart in one message's count)."""
    if not objs:
        return
    statements: list[str] = []
    params: list[Any] = []
    for obj in objs:
        sql, values = _update_of(obj, fields)
        statements.append(sql)
        params.extend(values)
    with connection.cursor() as cursor:
        cursor.execute(";".join(statements), params)


def _update_of(obj: Model, fields: tuple[str, ...]) -> tuple[str, list[Any]]:
    # The UPDATE of `fields` of `obj`'s row and its parameters.
    sql, columns = _update_statement(type(obj), fields)
    values = [field.get_db_prep_save(field.pre_save(obj, False), connection) for field in columns]
    owner = [obj.owner_id] if _owned(type(obj)) else []  # type: ignore[attr-defined]
    return sql, [*values, *owner, obj.pk]


@functools.cache
def _update_statement(model: type[Model], fields: tuple[str, ...]) -> tuple[str, list[Field[Any, Any]]]:
    meta = model._meta
    columns: list[Field[Any, Any]] = [meta.get_field(name) for name in fields]  # type: ignore[misc]
    quote = connection.ops.quote_name
    # Concrete fields: each has a column.
    assignments = ", ".join(f"{quote(str(field.column))} = %s" for field in columns)
    pk = quote(str(meta.pk.column))
    # A tenant row is found by its owner too: the statement goes to the owner's shard alone.
    owner = f"{quote(OWNER)} = %s AND " if _owned(model) else ""
    # Only the model's own names, quoted; every value is a parameter.
    sql = f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {owner}{pk} = %s"  # noqa: S608
    return sql, columns


OWNER = "owner_id"


def _owned(model: type[Model]) -> bool:
    return any(field.column == OWNER for field in model._meta.concrete_fields)


def rows_delete(model: type[Model], *, owner_id: Any, ids: Iterable[Any]) -> dict[str, int]:
    """Delete the rows `ids` of the tenant `model` and what their on_delete rules reach (CASCADE
    deletes, SET_NULL clears), as Model.delete() would, but with every statement held to `owner_id`.
    Django's collector finds and deletes related rows by id alone, which a database sharded by owner
    sends to every shard (docs/scale.md). Returns the rows deleted per model label. No delete signals
    are sent (none of the models has receivers); the foreign keys are deferred, so the order of the
    statements is free inside the caller's transaction."""
    deleted: dict[str, int] = {}
    _delete(model, owner_id=owner_id, ids=list(ids), deleted=deleted)
    return deleted


def _delete(model: type[Model], *, owner_id: Any, ids: list[Any], deleted: dict[str, int]) -> None:
    if not ids:
        return
    # As Django's collector finds them: hidden ones too (related_name="+": the link table's).
    relations = [
        f
        for f in model._meta.get_fields(include_hidden=True)
        if f.auto_created and not f.concrete and (f.one_to_many or f.one_to_one)
    ]
    for relation in relations:
        assert isinstance(relation, ForeignObjectRel)
        field = relation.field
        related = relation.related_model
        assert isinstance(related, type)
        rows = related._base_manager.filter(**{f"{field.attname}__in": ids})
        if _owned(related):
            rows = rows.filter(**{OWNER: owner_id})
        rule = field.remote_field.on_delete
        if rule is CASCADE:
            children = list(rows.values_list("pk", flat=True))
            if related is model:
                children = [child for child in children if child not in ids]
            _delete(related, owner_id=owner_id, ids=children, deleted=deleted)
        elif rule is SET_NULL:
            rows.update(**{field.attname: None})
        elif rule is not DO_NOTHING:
            raise NotImplementedError(f"{related._meta.label}.{field.name}: on_delete {rule}")
    quote = connection.ops.quote_name
    owner = f"{quote(OWNER)} = %s AND " if _owned(model) else ""
    with connection.cursor() as cursor:
        table, pk = quote(model._meta.db_table), quote(str(model._meta.pk.column))
        # Only the model's own names, quoted; every value is a parameter.
        cursor.execute(
            f"DELETE FROM {table} WHERE {owner}{pk} = ANY(%s)",  # noqa: S608
            [*([owner_id] if owner else []), ids],
        )
        deleted[model._meta.label] = deleted.get(model._meta.label, 0) + cursor.rowcount
