"""Which tenant tables a statement reads or writes without naming one owner: PostgreSQL's own parser
(pglast, as the open query's guard uses) over the statements a path sent.

Citus routes a statement to one node when every distributed table in it is held to one value of the
distribution column. So each occurrence of a tenant table (memories.sharding) must have its owner
column equal to the owner's literal id, directly (`m.owner_id = '…'`) or through another occurrence
that has (`e.owner_id = m.owner_id`), by an equality that is not under OR or NOT; an INSERT's owner
column must be that literal in every row. Every owner literal of the statement must be the same one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pglast import ast, parse_sql
from pglast.enums.parsenodes import A_Expr_Kind
from pglast.enums.primnodes import BoolExprType


@dataclass
class _Walk:
    owners: dict[str, str]  # tenant table -> its owner column
    occurrences: list[tuple[str, str]] = field(default_factory=list)  # (table, alias)
    parent: dict[Any, Any] = field(default_factory=dict)

    def find(self, term: Any) -> Any:
        self.parent.setdefault(term, term)
        while self.parent[term] != term:
            self.parent[term] = self.parent[self.parent[term]]
            term = self.parent[term]
        return term

    def union(self, a: Any, b: Any) -> None:
        self.parent[self.find(a)] = self.find(b)


def _children(node: Any) -> list[Any]:
    out = []
    for name in type(node).__slots__:
        value = getattr(node, name, None)
        if isinstance(value, ast.Node):
            out.append(value)
        elif isinstance(value, (list, tuple)):
            out += [v for v in value if isinstance(v, ast.Node)]
    return out


def _range_vars(node: Any) -> list[ast.RangeVar]:
    if isinstance(node, ast.RangeVar):
        return [node]
    if isinstance(node, ast.JoinExpr):
        return _range_vars(node.larg) + _range_vars(node.rarg)
    return []


def _literal(node: Any) -> str | None:
    while isinstance(node, ast.TypeCast):
        node = node.arg
    if isinstance(node, ast.A_Const) and isinstance(node.val, ast.String):
        return str(node.val.sval).replace("-", "").lower()
    return None


class _Checker:
    def __init__(self, owners: dict[str, str]) -> None:
        self.w = _Walk(owners)

    def term(self, node: Any, scopes: list[dict[str, int]]) -> Any:
        literal = _literal(node)
        if literal is not None:
            return ("literal", literal)
        if isinstance(node, ast.ColumnRef):
            names = [str(f.sval) for f in node.fields or () if isinstance(f, ast.String)]
            if len(names) == 2:
                for level in reversed(scopes):
                    if names[0] in level:
                        occ = level[names[0]]
                        table = self.w.occurrences[occ][0]
                        return ("occurrence", occ) if self.w.owners[table] == names[1] else None
                return None
            if len(names) == 1:
                for level in reversed(scopes):
                    hits = {o for o in level.values() if self.w.owners[self.w.occurrences[o][0]] == names[0]}
                    if len(hits) == 1:
                        return ("occurrence", hits.pop())
                    if hits:
                        return None
        return None

    def enter(self, node: Any) -> dict[str, int]:
        """The tenant tables a statement (or subquery) reads or writes at its own level, by alias."""
        level: dict[str, int] = {}
        sources = list(getattr(node, "fromClause", None) or ()) + list(
            getattr(node, "usingClause", None) or ()
        )
        if getattr(node, "relation", None) is not None:
            sources.append(node.relation)
        for source in sources:
            for rv in _range_vars(source):
                if rv.relname in self.w.owners and rv.schemaname in (None, "public"):
                    alias = str(rv.alias.aliasname if rv.alias else rv.relname)
                    self.w.occurrences.append((str(rv.relname), alias))
                    level[self.w.occurrences[-1][1]] = len(self.w.occurrences) - 1
        target: Any = node.relation if isinstance(node, ast.InsertStmt) else None
        if target is not None and target.relname in self.w.owners:
            occ = level[str(target.alias.aliasname if target.alias else target.relname)]
            columns = [c.name for c in node.cols or ()]
            owner = self.w.owners[target.relname]
            chosen: Any = node.selectStmt
            rows = (chosen.valuesLists or ()) if chosen is not None else ()
            if owner in columns:
                place = columns.index(owner)
                for row in rows:
                    literal = _literal(row[place])
                    if literal is not None:
                        self.w.union(("occurrence", occ), ("literal", literal))
                    else:
                        self.w.union(("occurrence", occ), ("unknown", id(row)))
        return level

    def walk(self, node: Any, scopes: list[dict[str, int]], loose: bool = False) -> None:
        # pglast's nodes are typed loosely (every slot optional): read here as Any.
        if isinstance(node, (ast.SelectStmt, ast.UpdateStmt, ast.DeleteStmt, ast.InsertStmt)):
            scopes = [*scopes, self.enter(node)]
            # A subquery's own WHERE holds its own tables, however its result is used (under an OR).
            loose = False
        if isinstance(node, ast.BoolExpr) and node.boolop != BoolExprType.AND_EXPR:
            loose = True
        if isinstance(node, ast.A_Expr) and not loose and [n.sval for n in node.name or ()] == ["="]:
            right = node.rexpr
            if node.kind == A_Expr_Kind.AEXPR_IN and isinstance(right, (list, tuple)) and len(right) == 1:
                right = right[0]
            if node.kind in (A_Expr_Kind.AEXPR_OP, A_Expr_Kind.AEXPR_IN) and not isinstance(
                right, (list, tuple)
            ):
                a, b = self.term(node.lexpr, scopes), self.term(right, scopes)
                if a is not None and b is not None:
                    self.w.union(a, b)
        for child in _children(node):
            self.walk(child, scopes, loose)


def unrouted(sql: str, *, owners: dict[str, str], owner_id: str) -> list[str]:
    """What keeps `sql` (one or more statements) from naming exactly the owner `owner_id`: one line a
    problem, empty when every tenant table in it is held to that owner."""
    problems = []
    expected = owner_id.replace("-", "").lower()
    for raw in parse_sql(sql):
        checker = _Checker(owners)
        checker.walk(raw.stmt, [])
        w = checker.w
        literals: dict[Any, set[str]] = {}
        for term in list(w.parent):
            if term[0] == "literal":
                literals.setdefault(w.find(term), set()).add(term[1])
        named = set().union(*literals.values()) if literals else set()
        for occ, (table, alias) in enumerate(w.occurrences):
            root = w.find(("occurrence", occ))
            held = literals.get(root, set())
            if held != {expected} or any(t[0] == "unknown" and w.find(t) == root for t in list(w.parent)):
                problems.append(f"{table} (as {alias}) is held to {sorted(held) or 'no owner'}")
        if w.occurrences and len(named) > 1:
            problems.append(f"names several owners {sorted(named)}")
    return problems
