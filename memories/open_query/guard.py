"""What SQL the open query accepts: one read-only SELECT over the documented views, nothing else.

The text is parsed by PostgreSQL's own parser (pglast wraps libpg_query, the server's grammar as a
library), so what is checked is what the server would run; a tokenizer or a regular expression
would be fooled by comments, quoting and dollar strings. The check is one layer of several: the
statement also runs as a role that may read only the views, in a READ ONLY transaction with a
statement timeout, and the views themselves show only the caller's current space
(memories.selectors.open_query). So this module refuses what those layers cannot: a function with a
side effect or a way around them (`set_config`, `pg_sleep`, `query_to_xml`, `dblink`,
`pg_read_file`), and reads of the system catalogs, which every role may read.

Refused: anything but a single SELECT; `SELECT ... INTO`; locking clauses (FOR UPDATE / SHARE);
writable CTEs; a relation other than a documented view or a CTE of the statement; a schema other
than the views' own; a function outside `ALLOWED_FUNCTIONS`; a cast to a type outside
`ALLOWED_TYPES` (`'pg_authid'::regclass` reads the catalogs); any syntax node not listed in
`_ALLOWED_NODES` (an allow-list: a construct added by a newer PostgreSQL is refused until looked at).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pglast import ast, parse_sql
from pglast.enums.primnodes import SQLValueFunctionOp
from pglast.parser import ParseError

from memories.errors import AppError, Code
from memories.open_query.catalogue import SCHEMA, VIEWS
from memories.open_query.names import NameProblem, names_check

MAX_SQL_CHARS = 20_000

# Plain computation over values: no side effects, no access to anything but the arguments.
ALLOWED_FUNCTIONS: frozenset[str] = frozenset(
    [
        "count",
        "sum",
        "avg",
        "min",
        "max",
        "bool_and",
        "bool_or",
        "every",
        "array_agg",
        "string_agg",
        "json_agg",
        "jsonb_agg",
        "json_object_agg",
        "jsonb_object_agg",
        "stddev",
        "stddev_pop",
        "stddev_samp",
        "variance",
        "var_pop",
        "var_samp",
        "percentile_cont",
        "percentile_disc",
        "mode",
        "row_number",
        "rank",
        "dense_rank",
        "percent_rank",
        "cume_dist",
        "ntile",
        "lag",
        "lead",
        "first_value",
        "last_value",
        "nth_value",
        "lower",
        "upper",
        "initcap",
        "length",
        "char_length",
        "character_length",
        "octet_length",
        "substring",
        "substr",
        "left",
        "right",
        "trim",
        "btrim",
        "ltrim",
        "rtrim",
        "lpad",
        "rpad",
        "replace",
        "translate",
        "position",
        "strpos",
        "concat",
        "concat_ws",
        "split_part",
        "starts_with",
        "reverse",
        "repeat",
        "format",
        "md5",
        "regexp_replace",
        "regexp_match",
        "regexp_matches",
        "regexp_like",
        "regexp_count",
        "regexp_substr",
        "regexp_split_to_array",
        "similar_to_escape",
        "date_trunc",
        "date_part",
        "extract",
        "date_bin",
        "age",
        "now",
        "timezone",
        "overlaps",
        "make_date",
        "make_interval",
        "make_timestamptz",
        "to_char",
        "to_date",
        "to_timestamp",
        "to_number",
        "justify_days",
        "justify_hours",
        "justify_interval",
        "isfinite",
        "abs",
        "round",
        "floor",
        "ceil",
        "ceiling",
        "trunc",
        "sign",
        "mod",
        "power",
        "sqrt",
        "ln",
        "log",
        "exp",
        "greatest",
        "least",
        "width_bucket",
        "cardinality",
        "array_length",
        "array_position",
        "array_positions",
        "array_to_string",
        "array_remove",
        "array_append",
        "array_prepend",
        "array_cat",
        "unnest",
        "generate_series",
        "jsonb_array_length",
        "jsonb_typeof",
        "jsonb_extract_path",
        "jsonb_extract_path_text",
        "jsonb_object_keys",
        "jsonb_array_elements",
        "jsonb_array_elements_text",
        "jsonb_each",
        "jsonb_each_text",
        "jsonb_build_object",
        "jsonb_build_array",
        "json_build_object",
        "json_build_array",
        "to_json",
        "to_jsonb",
        "jsonb_strip_nulls",
        "jsonb_path_query",
        "jsonb_path_exists",
    ]
)

# Casts to these types only (and arrays of them): values, never catalog lookups (reg* types).
ALLOWED_TYPES: frozenset[str] = frozenset(
    [
        "text",
        "varchar",
        "bpchar",
        "char",
        "name",
        "bool",
        "boolean",
        "int2",
        "int4",
        "int8",
        "smallint",
        "integer",
        "int",
        "bigint",
        "numeric",
        "decimal",
        "float4",
        "float8",
        "real",
        "double",
        "date",
        "time",
        "timetz",
        "timestamp",
        "timestamptz",
        "interval",
        "uuid",
        "json",
        "jsonb",
    ]
)

# The syntax a read-only analytic SELECT needs. Anything else is refused by name.
_ALLOWED_NODES: frozenset[type[ast.Node]] = frozenset(
    {
        ast.RawStmt,
        ast.SelectStmt,
        ast.ResTarget,
        ast.ColumnRef,
        ast.A_Star,
        ast.A_Const,
        ast.A_Expr,
        ast.A_ArrayExpr,
        ast.A_Indirection,
        ast.A_Indices,
        ast.BoolExpr,
        ast.BooleanTest,
        ast.NullTest,
        ast.CaseExpr,
        ast.CaseWhen,
        ast.CoalesceExpr,
        ast.MinMaxExpr,
        ast.FuncCall,
        ast.TypeCast,
        ast.TypeName,
        ast.SubLink,
        ast.RowExpr,
        ast.SQLValueFunction,
        ast.ParamRef,
        ast.RangeVar,
        ast.RangeSubselect,
        ast.RangeFunction,
        ast.JoinExpr,
        ast.Alias,
        ast.SortBy,
        ast.WindowDef,
        ast.WithClause,
        ast.CommonTableExpr,
        ast.GroupingSet,
        ast.CollateClause,
        ast.String,
        ast.Integer,
        ast.Float,
        ast.Boolean,
        ast.BitString,
    }
)


_CLOCK_FUNCTIONS = frozenset(
    op
    for op in SQLValueFunctionOp
    if op.name.startswith(("SVFOP_CURRENT_DATE", "SVFOP_CURRENT_TIME", "SVFOP_LOCAL"))
)


@dataclass(frozen=True)
class CheckedQuery:
    """A statement the guard accepted: its text, how many `$n` parameters it uses, and where."""

    sql: str
    parameter_count: int
    views: tuple[str, ...]
    # (offset in `sql`, n) of every `$n`, as PostgreSQL's parser found them.
    parameter_at: tuple[tuple[int, int], ...] = ()

    def driver_sql(self) -> str:
        """The text for psycopg: `$n` as `%(pn)s` and every other `%` doubled. The offsets come
        from the parser, so a `$1` or a `%` inside a string literal or a comment is left alone."""
        if not self.parameter_at:
            return self.sql
        out, start = [], 0
        for offset, number in sorted(self.parameter_at):
            out.append(self.sql[start:offset].replace("%", "%%"))
            out.append(f"%(p{number})s")
            start = offset + 1 + len(str(number))
        out.append(self.sql[start:].replace("%", "%%"))
        return "".join(out)

    def driver_params(self, values: list[Any]) -> dict[str, Any] | None:
        return {f"p{index}": value for index, value in enumerate(values, 1)} if self.parameter_at else None


def rejected(reason: str, message: str, **details: object) -> AppError:
    """The refusal of a statement, with a stable `details.reason` an agent can branch on."""
    return AppError(
        Code.QUERY_REJECTED,
        message,
        details={"reason": reason, **details},
        agent_action=(
            "write a single select statement over the documented views (query_space lists them and the "
            "allowed functions) and try again"
        ),
    )


def query_check(sql: str) -> CheckedQuery:
    """Parse `sql` with PostgreSQL's parser and accept it only if it is one safe SELECT."""
    if len(sql) > MAX_SQL_CHARS:
        raise rejected("too_long", f"The statement is longer than {MAX_SQL_CHARS:,} characters.")
    try:
        statements = parse_sql(sql)
    except ParseError as exc:
        # The parser's message names the token near the error, from the caller's own text.
        raise rejected("syntax_error", f"PostgreSQL cannot parse this statement: {str(exc)[:300]}.") from None
    if len(statements) != 1:
        raise rejected("multiple_statements", f"Send exactly one statement; this text has {len(statements)}.")
    statement = statements[0].stmt
    if not isinstance(statement, ast.SelectStmt):
        raise rejected(
            "not_select",
            f"Only a select statement is accepted, not {type(statement).__name__.removesuffix('Stmt')}.",
        )
    cte_names = {str(node.ctename) for node in _walk(statement) if isinstance(node, ast.CommonTableExpr)}
    views: set[str] = set()
    parameters: set[int] = set()
    nodes = list(_walk(statement))
    for node in nodes:
        _check_node(node, cte_names=cte_names, views=views, parameters=parameters)
    try:
        names_check(statement)
    except NameProblem as problem:
        raise rejected(problem.reason, problem.message, **problem.details) from None
    if parameters and parameters != set(range(1, max(parameters) + 1)):
        raise rejected("parameters", "Parameters must be numbered $1, $2, ... without gaps.")
    raw = statements[0]
    # Only the statement itself (no trailing semicolon): it is run inside DECLARE ... CURSOR FOR.
    begin = int(raw.stmt_location or 0)
    end = begin + int(raw.stmt_len) if raw.stmt_len else len(sql)
    text = sql[begin:end]
    at = tuple(
        (int(node.location or 0) - begin, int(node.number or 0))
        for node in nodes
        if isinstance(node, ast.ParamRef)
    )
    return CheckedQuery(
        sql=text, parameter_count=max(parameters, default=0), views=tuple(sorted(views)), parameter_at=at
    )


def _check_node(node: ast.Node, *, cte_names: set[str], views: set[str], parameters: set[int]) -> None:
    kind = type(node)
    if kind not in _ALLOWED_NODES:
        raise rejected(
            "forbidden_construct",
            f"{kind.__name__} is not allowed in the open query.",
            construct=kind.__name__,
        )
    if isinstance(node, ast.SelectStmt):
        if node.intoClause is not None:
            raise rejected("select_into", "select ... into creates a table; only reading is allowed.")
        if node.lockingClause:
            raise rejected("locking_clause", "FOR UPDATE / FOR SHARE lock rows; only reading is allowed.")
    elif isinstance(node, ast.CommonTableExpr):
        if not isinstance(node.ctequery, ast.SelectStmt):
            raise rejected(
                "writable_cte", f"The CTE {node.ctename!r} is not a SELECT; only reading is allowed."
            )
    elif isinstance(node, ast.RangeVar):
        _check_relation(node, cte_names=cte_names, views=views)
    elif isinstance(node, ast.FuncCall):
        name = _function_name(node)
        if name not in ALLOWED_FUNCTIONS:
            raise rejected(
                "forbidden_function",
                f"The function {name!r} is not allowed in the open query.",
                function=name[:100],
            )
    elif isinstance(node, ast.TypeName):
        type_name = _qualified(node.names, default_schema="pg_catalog")
        if type_name not in ALLOWED_TYPES:
            raise rejected(
                "forbidden_type", f"The type {type_name!r} is not allowed here.", type=type_name[:100]
            )
    elif isinstance(node, ast.SQLValueFunction):
        # CURRENT_DATE and friends; not CURRENT_USER, CURRENT_CATALOG ...: those describe the server.
        if node.op not in _CLOCK_FUNCTIONS:
            raise rejected("forbidden_function", "Only the date and time SQL value functions are allowed.")
    elif isinstance(node, ast.ParamRef):
        number = int(node.number or 0)
        if not 1 <= number <= 100:
            raise rejected("parameters", "Parameters are $1 to $100.")
        parameters.add(number)
    elif isinstance(node, ast.ColumnRef) and len(node.fields or ()) > 2:
        # schema.view.column would name a relation the FROM list never checked.
        raise rejected("forbidden_relation", "Refer to columns as column or alias.column.")
    elif isinstance(node, (ast.A_Expr, ast.SubLink, ast.SortBy)):
        # OPERATOR(schema.op), in an expression, `op ANY (subquery)` or `ORDER BY ... USING`: an
        # operator is a function; only pg_catalog's, found by the server.
        names = (
            node.name
            if isinstance(node, ast.A_Expr)
            else node.operName
            if isinstance(node, ast.SubLink)
            else node.useOp
        )
        if len(names or ()) > 1 and _qualified((names or ())[:-1], default_schema="") != "pg_catalog":
            raise rejected("forbidden_function", "Only PostgreSQL's own operators are allowed.")


def _check_relation(node: ast.RangeVar, *, cte_names: set[str], views: set[str]) -> None:
    name = str(node.relname)
    if node.catalogname or (node.schemaname and node.schemaname != SCHEMA):
        raise rejected(
            "forbidden_relation",
            f"Only the documented views can be read, not {node.schemaname}.{name}.",
            relation=f"{node.schemaname}.{name}"[:200],
        )
    if name in VIEWS:
        views.add(name)
        return
    # A CTE of the statement; never a pg_* name, which outside the CTE's scope could be a catalog.
    if not node.schemaname and name in cte_names and not name.startswith("pg_"):
        return
    raise rejected(
        "forbidden_relation",
        f"{name!r} is not one of the views ({', '.join(VIEWS)}).",
        relation=name[:200],
    )


def _function_name(node: ast.FuncCall) -> str:
    return _qualified(node.funcname, default_schema="pg_catalog")


def _qualified(names: Any, *, default_schema: str) -> str:
    """The name of a function or type as the server looks it up: exactly as spelt (the parser has
    already folded unquoted names to lower case; a quoted "LOWER" is another name, which no
    allow-list holds), without `default_schema`; any other schema is kept, so it never matches."""
    parts = [str(part.sval) for part in names or () if isinstance(part, ast.String)]
    if len(parts) == 2 and parts[0] == default_schema:
        parts = parts[1:]
    return ".".join(parts)


def _walk(node: object) -> Iterator[ast.Node]:
    """Every syntax node under `node`, itself included."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Node):
            yield current
            for slot in current.__slots__:  # type: ignore[attr-defined]  # pglast declares them per class
                stack.append(getattr(current, slot, None))
        elif isinstance(current, (list, tuple)):
            stack.extend(current)
