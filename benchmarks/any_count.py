"""How thin the types are: `Any` in annotations per 1,000 lines of the service's code.

    .venv/bin/python benchmarks/any_count.py [ROOT]

Reads (never imports) every Python file of config/, accounts/, memories/ and mcp_gateway/ under
ROOT (default: this checkout), migrations left out, and counts each `Any` (a name or `typing.Any`)
inside an annotation: a parameter's, a return's or a variable's, and the type arguments of a
`cast`. Also counted: functions that return `dict[str, Any]`, and the TypedDicts defined. Lines are
all the lines of those files. Prints one line of figures, so two commits compare by it.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGES = ("config", "accounts", "memories", "mcp_gateway")


def _anys(node: ast.AST | None) -> int:
    if node is None:
        return 0
    return sum(
        1
        for part in ast.walk(node)
        if (isinstance(part, ast.Name) and part.id == "Any")
        or (isinstance(part, ast.Attribute) and part.attr == "Any")
        # A string annotation (a forward reference) is read as code.
        or (isinstance(part, ast.Constant) and isinstance(part.value, str) and _is_any_text(part.value))
    )


def _is_any_text(text: str) -> bool:
    try:
        parsed = ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return _anys(parsed) > 0


def _returns_any_dict(node: ast.expr | None) -> bool:
    return node is not None and ast.unparse(node).replace(" ", "") in ("dict[str,Any]", "'dict[str,Any]'")


def count(root: Path) -> dict[str, int]:
    figures = {"files": 0, "lines": 0, "any": 0, "dict_str_any_returns": 0, "typed_dicts": 0}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
            figures["files"] += 1
            figures["lines"] += len(text.splitlines())
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    arguments = node.args
                    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
                    figures["any"] += sum(_anys(a.annotation) for a in every) + _anys(node.returns)
                    figures["dict_str_any_returns"] += _returns_any_dict(node.returns)
                elif isinstance(node, ast.AnnAssign):
                    figures["any"] += _anys(node.annotation)
                elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("cast", "typing.cast"):
                    figures["any"] += _anys(node.args[0]) if node.args else 0
                elif isinstance(node, ast.ClassDef) and any(
                    ast.unparse(base) in ("TypedDict", "typing.TypedDict") for base in node.bases
                ):
                    figures["typed_dicts"] += 1
    return figures


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    figures = count(root)
    per_thousand = 1000 * figures["any"] / figures["lines"]
    print(
        f"Any in annotations: {figures['any']} in {figures['lines']} lines ({figures['files']} files): "
        f"{per_thousand:.1f} per 1,000 lines; functions returning dict[str, Any]: "
        f"{figures['dict_str_any_returns']}; TypedDicts: {figures['typed_dicts']}"
    )


if __name__ == "__main__":
    main()
