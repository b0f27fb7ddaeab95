"""Every column a statement names must be a column: resolved as PostgreSQL resolves it, scope by scope.

PostgreSQL reads `alias.name`, when `name` is not a column of `alias`, as the call `name(alias)`
(attribute notation), and `(expression).name` the same way; so a check that only looks at the
shape of a reference lets any one-argument function run, whatever the function allow-list says.
Here each `alias.name` must find `alias` in the scopes PostgreSQL would search (this SELECT's FROM
items, then the enclosing ones'), and `name` among that item's columns: a view's documented
columns, a CTE's or a subquery's output names, a set-returning function's own columns, or the
names an alias list gives. `(expression).name` is refused outright (array subscripts stay).

Output names are worked out as PostgreSQL's FigureColname does. Where that differs from the server
in some corner, the difference is harmless for safety: a name that is not really a column could only
be one taken from a column, an allowed function or type, or a fixed word, so at worst an allowed
(pure) function runs; and an explicit alias (`AS x`) is always a real column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pglast import ast
from pglast.enums.parsenodes import SetOperation
from pglast.enums.primnodes import MinMaxOp, SubLinkType

from memories.open_query.catalogue import VIEWS

# The columns of the set-returning functions the guard allows in FROM, when no alias list names them.
# A function not here returns one value, and its column is named after its alias (or itself).
_FUNCTION_COLUMNS: dict[str, tuple[str, ...]] = {
    "jsonb_each": ("key", "value"),
    "jsonb_each_text": ("key", "value"),
    "jsonb_array_elements": ("value",),
    "jsonb_array_elements_text": ("value",),
}


class NameProblem(Exception):
    """A reference that is not a column in scope; `reason` is the guard's `details.reason`."""

    def __init__(self, reason: str, message: str, **details: object) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.details = details


@dataclass
class _Scope:
    """One SELECT's names: its FROM items (alias -> columns), its CTEs, its output names."""

    parent: _Scope | None
    ranges: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ctes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    outputs: set[str] = field(default_factory=set)

    def outer(self, ranges: dict[str, tuple[str, ...]] | None = None) -> _Scope:
        """A scope that sees this one's CTEs and the enclosing levels, but of this level's FROM items
        only `ranges`: what a non-LATERAL subquery in FROM (none of them) or a JOIN's ON clause (the
        join's own) can see. PostgreSQL then searches the enclosing levels, so seeing more here would
        resolve a name to an item the server does not."""
        return _Scope(self.parent, dict(ranges or {}), self.ctes)

    def range_of(self, alias: str) -> tuple[str, ...] | None:
        scope: _Scope | None = self
        while scope is not None:
            if alias in scope.ranges:
                return scope.ranges[alias]
            scope = scope.parent
        return None

    def cte(self, name: str) -> tuple[str, ...] | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.ctes:
                return scope.ctes[name]
            scope = scope.parent
        return None

    def knows(self, name: str) -> bool:
        """A one-part name: a column of some FROM item in scope, a FROM item itself (its whole row),
        or an output name of this SELECT (ORDER BY and GROUP BY may use those)."""
        if name in self.outputs:
            return True
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.ranges or any(name in columns for columns in scope.ranges.values()):
                return True
            scope = scope.parent
        return False


def names_check(statement: ast.SelectStmt) -> None:
    """Raise NameProblem for the first reference that is not a column (or row) in scope."""
    _select(statement, None)


def _strings(nodes: Any) -> tuple[str, ...]:
    return tuple(str(node.sval) for node in nodes or () if isinstance(node, ast.String))


def _select(stmt: ast.SelectStmt, parent: _Scope | None) -> tuple[str, ...]:
    """Check `stmt` in a new scope under `parent`; its output column names."""
    scope = _Scope(parent)
    if stmt.withClause is not None:
        _with(stmt.withClause, scope)
    if stmt.op is not None and SetOperation(stmt.op) != SetOperation.SETOP_NONE:
        assert stmt.larg is not None and stmt.rarg is not None
        outputs = _select(stmt.larg, scope)
        _select(stmt.rarg, scope)
        scope.outputs.update(outputs)
    elif stmt.valuesLists:
        for row in stmt.valuesLists:
            _expr(row, scope)
        outputs = tuple(f"column{index}" for index in range(1, len(stmt.valuesLists[0]) + 1))
    else:
        for item in stmt.fromClause or ():
            _from_item(item, scope)
        outputs = _targets(stmt.targetList or (), scope)
        scope.outputs.update(outputs)
        for clause in (
            stmt.whereClause,
            stmt.groupClause,
            stmt.havingClause,
            stmt.windowClause,
            stmt.distinctClause,
        ):
            _expr(clause, scope)
    for clause in (stmt.sortClause, stmt.limitOffset, stmt.limitCount):
        _expr(clause, scope)
    return outputs


def _with(clause: ast.WithClause, scope: _Scope) -> None:
    for cte in clause.ctes or ():
        name = str(cte.ctename)
        query = cte.ctequery
        assert isinstance(query, ast.SelectStmt)  # the guard refuses any other CTE first
        aliases = _strings(cte.aliascolnames)
        if clause.recursive:
            # The recursive term reads the CTE itself: its columns come from the first term.
            first = query.larg if query.larg is not None else query
            scope.ctes[name] = aliases or _select(first, scope)
        columns = _select(query, scope)
        scope.ctes[name] = _renamed(columns, aliases)


def _renamed(columns: tuple[str, ...], aliases: tuple[str, ...]) -> tuple[str, ...]:
    """An alias list renames the first columns, in order, and leaves the rest."""
    return aliases + columns[len(aliases) :]


def _from_item(node: object, scope: _Scope) -> None:
    if isinstance(node, ast.RangeVar):
        name = str(node.relname)
        columns = scope.cte(name) if not node.schemaname else None
        if columns is None:
            view = VIEWS.get(name)
            # A relation the guard refuses anyway (it says why): no columns to know.
            columns = tuple(c.name for c in view.columns) if view is not None else ()
        _register(scope, node.alias, name, columns)
    elif isinstance(node, ast.RangeSubselect):
        assert isinstance(node.subquery, ast.SelectStmt)
        # LATERAL sees the FROM items before it; a plain subquery none of this level's.
        columns = _select(node.subquery, scope if node.lateral else scope.outer())
        _register(scope, node.alias, None, columns)
    elif isinstance(node, ast.RangeFunction):
        # A function in FROM is LATERAL by nature: its arguments see the items before it.
        _function_item(node, scope)
    elif isinstance(node, ast.JoinExpr):
        before = dict(scope.ranges)
        _from_item(node.larg, scope)
        _from_item(node.rarg, scope)
        own = {alias: cols for alias, cols in scope.ranges.items() if before.get(alias) is not cols}
        # The ON clause sees the two sides of the join only (and the enclosing levels).
        _expr(node.quals, scope.outer(own))
        if node.alias is not None:
            # An alias hides the names of the tables inside the join.
            scope.ranges = before
            joined = tuple(column for columns in own.values() for column in columns)
            _register(scope, node.alias, None, joined)
    else:
        # Anything else in FROM is a construct the guard refuses by its node type.
        _expr(node, scope)


def _function_item(node: ast.RangeFunction, scope: _Scope) -> None:
    functions = node.functions or ()
    if node.is_rowsfrom or len(functions) != 1:
        raise NameProblem("forbidden_construct", "Use one function per FROM item, not ROWS FROM (...).")
    call, definitions = functions[0]
    if definitions:
        raise NameProblem("forbidden_construct", "A column definition list is not allowed in the open query.")
    _expr(call, scope)
    name = _strings(call.funcname)[-1] if isinstance(call, ast.FuncCall) else "?column?"
    alias = str(node.alias.aliasname) if node.alias is not None else name
    columns = _FUNCTION_COLUMNS.get(name, (alias,))
    if node.ordinality:
        columns = (*columns, "ordinality")
    _register(scope, node.alias, name, columns)


def _register(scope: _Scope, alias: ast.Alias | None, default: str | None, columns: tuple[str, ...]) -> None:
    name = str(alias.aliasname) if alias is not None else default
    if alias is not None:
        columns = _renamed(columns, _strings(alias.colnames))
    if name is not None:
        scope.ranges[name] = columns


def _targets(targets: Any, scope: _Scope) -> tuple[str, ...]:
    names: list[str] = []
    for target in targets:
        assert isinstance(target, ast.ResTarget)
        _expr(target.val, scope)
        if isinstance(target.val, ast.ColumnRef) and isinstance((target.val.fields or ())[-1], ast.A_Star):
            names.extend(_star(target.val, scope))
        elif target.name:
            names.append(str(target.name))
        else:
            names.append(_column_name(target.val, scope)[0])
    return tuple(names)


def _star(ref: ast.ColumnRef, scope: _Scope) -> list[str]:
    """The columns `*` or `alias.*` stands for."""
    parts = _strings(ref.fields)
    if parts:
        return list(scope.range_of(parts[0]) or ())
    return [column for columns in scope.ranges.values() for column in columns]


def _column_name(node: object, scope: _Scope) -> tuple[str, int]:
    """PostgreSQL's FigureColname: the implicit name of an output column, and how sure it is (2: a
    name taken from the expression, 1: a default word, 0: none)."""
    if isinstance(node, ast.ColumnRef):
        parts = _strings(node.fields)
        return (parts[-1], 2) if parts else ("?column?", 0)
    if isinstance(node, ast.A_Indirection):
        fields = _strings(node.indirection)
        return (fields[-1], 2) if fields else _column_name(node.arg, scope)
    if isinstance(node, ast.FuncCall):
        return _strings(node.funcname)[-1], 2
    if isinstance(node, ast.TypeCast):
        name, strength = _column_name(node.arg, scope)
        if strength <= 1 and node.typeName is not None:
            type_names = _strings(node.typeName.names)
            if type_names:
                return type_names[-1], 1
        return name, strength
    if isinstance(node, ast.CollateClause):
        return _column_name(node.arg, scope)
    if isinstance(node, ast.SubLink):
        kind = SubLinkType(node.subLinkType or 0)
        if kind == SubLinkType.EXISTS_SUBLINK:
            return "exists", 2
        if kind == SubLinkType.ARRAY_SUBLINK:
            return "array", 2
        if kind == SubLinkType.EXPR_SUBLINK and isinstance(node.subselect, ast.SelectStmt):
            first = (node.subselect.targetList or (None,))[0]
            if isinstance(first, ast.ResTarget):
                # The subquery's own output name, whatever it is: always a sure one.
                return (str(first.name) if first.name else _column_name(first.val, scope)[0]), 2
        return "?column?", 0
    if isinstance(node, ast.CaseExpr):
        name, strength = _column_name(node.defresult, scope)
        return (name, strength) if strength > 1 else ("case", 1)
    if isinstance(node, ast.A_ArrayExpr):
        return "array", 2
    if isinstance(node, ast.RowExpr):
        return "row", 2
    if isinstance(node, ast.CoalesceExpr):
        return "coalesce", 2
    if isinstance(node, ast.MinMaxExpr):
        return ("greatest" if MinMaxOp(node.op or 0) == MinMaxOp.IS_GREATEST else "least"), 2
    if isinstance(node, ast.SQLValueFunction):
        name = str(getattr(node.op, "name", "")).removeprefix("SVFOP_").removesuffix("_N").lower()
        return name or "?column?", 2
    return "?column?", 0


def _expr(node: object, scope: _Scope) -> None:
    """Check every reference in an expression (or a list of them) against `scope`."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (list, tuple)):
            stack.extend(current)
            continue
        if not isinstance(current, ast.Node):
            continue
        if isinstance(current, ast.SelectStmt):
            _select(current, scope)
            continue
        if isinstance(current, ast.ColumnRef):
            _reference(current, scope)
            continue
        if isinstance(current, ast.A_Indirection):
            for item in current.indirection or ():
                if not isinstance(item, ast.A_Indices):
                    raise NameProblem(
                        "field_selection",
                        "(expression).name is not allowed: PostgreSQL may read it as a function call. "
                        "Select the column from its view or subquery by alias.column.",
                    )
        for slot in current.__slots__:  # type: ignore[attr-defined]  # pglast declares them per class
            stack.append(getattr(current, slot, None))


def _reference(ref: ast.ColumnRef, scope: _Scope) -> None:
    fields = ref.fields or ()
    if len(fields) == 1:
        if isinstance(fields[0], ast.A_Star):
            return
        name = str(fields[0].sval)
        if not scope.knows(name):
            raise NameProblem(
                "unknown_column",
                f"{name!r} is not a column of any view, CTE or subquery in scope here.",
                column=name[:100],
            )
        return
    if len(fields) != 2 or not isinstance(fields[0], ast.String):
        raise NameProblem("forbidden_relation", "Refer to columns as column or alias.column.")
    alias = str(fields[0].sval)
    columns = scope.range_of(alias)
    if columns is None:
        raise NameProblem(
            "unknown_column", f"{alias!r} is not a table or alias in scope here.", column=alias[:100]
        )
    if isinstance(fields[1], ast.A_Star):
        return
    name = str(fields[1].sval)
    if name not in columns:
        raise NameProblem(
            "unknown_column",
            f"{alias}.{name} is not a column of {alias!r} ({', '.join(columns[:40]) or 'no columns'}); "
            "PostgreSQL would read it as a function call, which the open query does not allow.",
            column=f"{alias}.{name}"[:200],
        )
