"""The error catalogue (memories/errors.py) is the one list of codes, and everything raises from it.

The catalogue's own consistency, the codes the code can raise (read from the source, so a new code
that is not in the catalogue fails here before any client sees it), the generated table in
docs/api.md, and what the framework's own refusals turn into.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from memories.errors import CATALOGUE, AppError, Code, job_code, markdown_table
from memories.management.commands.error_codes import docs_path, with_table
from tests.helpers import pat_client

ROOT = Path(__file__).resolve().parents[2]
CODE_DIRS = ("memories", "accounts", "mcp_gateway", "config")
# A retry can only succeed where the failure is ours or temporary, and none of these writes.
RETRYABLE = {Code.INTERNAL_ERROR, Code.RATE_LIMITED, Code.DATABASE_UNAVAILABLE}
STATUSES = {400, 401, 403, 404, 405, 406, 409, 410, 413, 415, 422, 429, 500, 503}


def test_it_describes_every_code_once():
    assert set(CATALOGUE) == set(Code)
    for code, entry in CATALOGUE.items():
        assert entry.meaning and entry.action, code
        assert entry.response or entry.job, code
        if entry.response:
            assert entry.status in STATUSES, code
        else:
            assert entry.status is None, code
        assert entry.retryable == (code in RETRYABLE), code


def test_it_takes_status_retry_and_default_words_from_the_catalogue():
    error = AppError(Code.SPACE_NOT_FOUND)
    assert (error.http_status, error.retryable) == (404, False)
    assert error.as_dict() == {
        "code": "space_not_found",
        "message": CATALOGUE[Code.SPACE_NOT_FOUND].message,
        "retryable": False,
        "agent_action": CATALOGUE[Code.SPACE_NOT_FOUND].action,
    }
    specific = AppError(Code.MISSING_FIELD, "Send file.", details={"field": "file"}, agent_action="send file")
    assert specific.as_dict(request_id="r1")["agent_action"] == "send file"
    assert AppError(Code.INTERNAL_ERROR).as_dict()["retryable"] is True


def test_it_refuses_a_code_the_catalogue_lacks_and_a_job_code_as_a_response():
    with pytest.raises(ValueError):
        AppError("no_such_code", "x")
    with pytest.raises(ValueError, match="job failure code"):
        AppError(Code.SOURCE_MISSING, "x")
    with pytest.raises(ValueError, match="not a job failure code"):
        job_code(Code.SPACE_NOT_FOUND)
    assert job_code(Code.RETRIES_EXHAUSTED) == "retries_exhausted"


def _calls(name: str):
    for directory in CODE_DIRS:
        for path in sorted((ROOT / directory).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "id", getattr(node.func, "attr", "")) == name
                ):
                    yield f"{path.relative_to(ROOT)}:{node.lineno}", node


def _is_code_member(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Code"


def test_every_raise_names_a_catalogue_member_and_leaves_status_and_retry_to_it():
    wrong = []
    for where, call in _calls("AppError"):
        code = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "code"), None)
        # A variable passes through: mypy holds it to `Code` (AppError.code's type), and __post_init__
        # refuses anything else at run time.
        if isinstance(code, ast.Name):
            continue
        if code is None or not _is_code_member(code) or code.attr not in Code.__members__:
            wrong.append(f"{where}: the code is not a Code member")
        wrong.extend(
            f"{where}: passes {k.arg}" for k in call.keywords if k.arg in ("http_status", "retryable")
        )
    for where, call in _calls("job_fail"):
        code = next((k.value for k in call.keywords if k.arg == "code"), None)
        # A variable is fine when it holds Code members (job_fail checks it with job_code at run time),
        # and so is the `code` of an error, which mypy holds to `Code` (DocumentRefused.code).
        passed_on = isinstance(code, ast.Name) or (isinstance(code, ast.Attribute) and code.attr == "code")
        if code is None or not (_is_code_member(code) or passed_on):
            wrong.append(f"{where}: job_fail without a Code")
    assert wrong == []


def test_no_code_is_spelled_out_beside_the_catalogue():
    # A code written as a string somewhere else is a second list in the making. The stdio proxy is
    # a standalone client of the API (it may not import the service); the MCP endpoint's
    # WWW-Authenticate challenge carries RFC 6750's own `insufficient_scope`; and "not_found" is
    # also a job status word of pipeline_readiness.
    allowed = {
        ("mcp_gateway/stdio_proxy.py", "unknown_operation"),
        ("mcp_gateway/stdio_proxy.py", "unknown_resource"),
        ("mcp_gateway/app.py", "insufficient_scope"),
    }
    values = {code.value for code in Code} - {"not_found"}
    found = []
    for directory in CODE_DIRS:
        for path in sorted((ROOT / directory).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if "migrations" in path.parts or relative == "memories/errors.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                spelled = isinstance(node, ast.Constant) and node.value in values
                if spelled and (relative, node.value) not in allowed:
                    found.append(f"{relative}:{node.lineno}: {node.value}")
    assert found == []


def test_the_table_in_the_api_docs_is_the_catalogue():
    text = docs_path().read_text()
    assert with_table(text) == text, "run: python3 manage.py error_codes --write"
    assert all(f"`{code.value}`" in markdown_table() for code in Code)


@pytest.mark.django_db
def test_a_framework_refusal_answers_with_a_catalogue_code(alice):
    client = pat_client(alice)
    refused = client.get("/api/v1/memories", HTTP_ACCEPT="text/html")
    assert refused.status_code == 406
    assert refused.json()["error"]["code"] == "not_acceptable"
    unknown = client.get("/api/v1/no-such-endpoint")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
