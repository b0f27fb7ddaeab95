"""The open query's `holds_now` follows the one rule of "current" (memories.as_of.current_q): a row
holds while its `valid_until` is to come, replaced or not (a change that starts later: "Starting in
March I'll be at Acme" leaves the current employer holding until March), and a row without one until
it is superseded. The views are 0026's with only that column changed, replaced in place (same
columns, so the role's grants stay)."""

from importlib import import_module

from django.db import migrations

_0026 = import_module("memories.migrations.0026_open_query_scope_by_backend")

_OLD = "({a}.superseded_at IS NULL AND ({a}.valid_until IS NULL OR {a}.valid_until > now())) AS holds_now"
_NEW = "({a}.valid_until > now() OR ({a}.valid_until IS NULL AND {a}.superseded_at IS NULL)) AS holds_now"


def _replaced(old: str, new: str) -> str:
    """The views of 0026 that have `holds_now`, with its expression `old` replaced by `new`."""
    views = _0026._views(_0026._OLD_SCOPE, _0026._NEW_SCOPE)
    statements = []
    for statement in views.split(";"):
        if "holds_now" not in statement:
            continue
        for alias in ("m", "r"):
            statement = statement.replace(old.format(a=alias), new.format(a=alias))
        statements.append(statement.strip().replace("CREATE VIEW", "CREATE OR REPLACE VIEW", 1) + ";")
    # The memories and relations views, each with the column as `new` says (or as 0026 had it).
    assert len(statements) == 2, statements
    return "\n".join(statements)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0030_imports"),
    ]

    operations = [
        migrations.RunSQL(_replaced(_OLD, _NEW), reverse_sql=_replaced(_NEW, _OLD)),
    ]
