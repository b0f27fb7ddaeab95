"""Property-based tests: whatever arrives at /mcp, the endpoint answers cleanly and writes nothing half-way.

Malformed JSON, wrong JSON-RPC types, huge strings, unicode oddities and unknown fields, thrown at
the real server process with a valid token, over both protocol revisions. For every request:
- never a 5xx, never a stack trace, SQL or path in the answer (rpc.FORBIDDEN);
- a tool error has the full error object, and bad input is never reported as our internal error;
- a request that failed stored nothing (sources, jobs and memories are counted before and after);
  a save that succeeded is waited for, so the worker cannot skew the next example's count.

Bounded and reproducible: derandomized, a fixed number of examples, no example database.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memories.models import Job
from tests.helpers import wait_for_job
from tests.mcp_gateway import rpc
from tests.mcp_gateway.rpc import LEGACY, MODERN

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)

TOOLS = ["recall", "answer", "remember", "forget"]
FIELDS = [
    "content",
    "session_id",
    "memory_id",
    "hard",
    "reason_code",
    "query",
    "question",
    "top_k",
    "types",
    "tags",
    "expand_entities",
    "at",
    "agent_id",
    "max_tokens",
]
METHODS = [
    "tools/call",
    "tools/list",
    "initialize",
    "server/discover",
    "ping",
    "notifications/initialized",
    "resources/list",
]

# --- strategies -------------------------------------------------------------------------

ODDITIES = [
    "\x00",
    "\ud800",  # lone surrogates: json.dumps escapes them as \ud800, which JSON allows
    "\udfff",
    "\u202e",  # right-to-left override
    "\u200f",  # right-to-left mark
    "\u200b",
    "\ufeff",
    "\uffff",
    "\U0010ffff",
    "\U0001f600",
    "\U0001f469\u200d\U0001f52c",
    "e\u0301",
    "\r\n",
    "\x1b[31m",
    "\\",
    '"',
    "'; DROP TABLE memories_memory; --",
    "../../etc/passwd",
    "%s%n{0}",
]
oddity = st.sampled_from(ODDITIES)
odd_text = st.lists(st.one_of(oddity, st.text(max_size=12)), max_size=6).map("".join)
# Long strings without a long hypothesis buffer: a short unit repeated up to ~200 KB.
long_text = st.builds(
    lambda unit, n: (unit * (n // len(unit) + 1))[:n],
    st.one_of(oddity, st.text(min_size=1, max_size=3)),
    st.one_of(st.integers(0, 3000), st.integers(99_990, 100_010), st.integers(100_000, 200_000)),
)
strings = st.one_of(st.text(max_size=40), odd_text, long_text)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    strings,
    st.uuids().map(str),
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=8,
)
arguments = st.dictionaries(
    st.one_of(st.sampled_from(FIELDS), st.text(max_size=15), oddity), json_values, max_size=5
)
protocols = st.sampled_from([None, LEGACY, MODERN])


def _deep(depth: int, kind: str) -> bytes:
    if kind == "arrays":
        return b"[" * depth + b"]" * depth
    if kind == "objects":
        return b'{"a":' * depth + b"1" + b"}" * depth
    if kind == "unclosed":
        return b"[" * depth
    body = json.dumps(rpc.tools_call("remember", {"content": "PLACEHOLDER"}))
    return body.replace('"PLACEHOLDER"', "[" * depth + "]" * depth).encode()


def _truncated(message: dict[str, Any], fraction: float) -> bytes:
    text = json.dumps(message).encode()
    return text[: int(len(text) * fraction)]


valid_messages = st.sampled_from(
    [
        rpc.tools_call("remember", {"content": "Truncated saves must not be stored."}),
        rpc.tools_call("forget", {"memory_id": "00000000-0000-0000-0000-000000000000", "hard": True}),
        rpc.tools_list(),
        rpc.initialize(),
        rpc.tools_call("remember", {"content": "modern"}, protocol=MODERN),
    ]
)
malformed_bodies = st.one_of(
    st.binary(max_size=300),
    st.builds(_truncated, valid_messages, st.floats(min_value=0, max_value=0.99)),
    st.builds(_deep, st.integers(1, 30_000), st.sampled_from(["arrays", "objects", "unclosed", "arguments"])),
    json_values.map(json.dumps),
    st.builds(
        lambda text, odd: text.replace('"modern"', json.dumps(odd)),
        st.just(json.dumps(rpc.tools_call("remember", {"content": "modern"}))),
        odd_text,
    ),
)


# --- the invariant ----------------------------------------------------------------------


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=120) as client:
        yield client


@pytest.fixture
def token(alice) -> str:
    return rpc.pat_token(alice)


def check(response: httpx.Response, before: dict[str, int], what: Any) -> None:
    """The property every answer of the endpoint has, whatever was sent."""
    rpc.assert_clean(response)
    stored = False
    if response.status_code == 200:
        answer = rpc.parse(response)
        assert isinstance(answer, dict) and answer.get("jsonrpc") == "2.0", (what, answer)
        result = answer.get("result")
        if isinstance(result, dict) and "structuredContent" in result:
            rpc.check_tool_result(result)
            payload = result["structuredContent"]
            if result.get("isError"):
                assert payload["code"] != "internal_error", (what, payload)
            elif "job_id" in payload:
                # A save may legitimately fail later (nothing_to_remember), never as our fault.
                job = wait_for_job(payload["job_id"], timeout=180)
                assert job.status == Job.Status.SUCCEEDED or job.error_code not in ("", "internal_error"), (
                    what,
                    job.error_code,
                    job.error_message,
                )
                stored = True
    elif response.status_code == 202:
        assert response.content == b"", (what, response.text)
    else:
        assert response.status_code in (400, 404, 406, 413, 415), (what, response.status_code, response.text)
        if response.content and response.headers.get("content-type", "").startswith("application/json"):
            body = response.json()
            assert "pydantic" not in response.text and "input_value" not in response.text, (what, body)
    if not stored:
        assert rpc.row_counts() == before, (what, response.status_code, response.text[:500])


# --- the properties ---------------------------------------------------------------------


@FUZZ
@given(body=malformed_bodies, protocol=protocols)
def test_malformed_json_is_answered_cleanly(asgi_server, token, http, body, protocol):
    before = rpc.row_counts()
    response = rpc.post(asgi_server.url, body, token=token, protocol=protocol, client=http)
    check(response, before, body[:300])


@FUZZ
@given(
    fields=st.fixed_dictionaries(
        {},
        optional={
            "jsonrpc": st.one_of(st.just("2.0"), json_values),
            "id": st.one_of(st.integers(), st.text(max_size=20), json_values),
            "method": st.one_of(st.sampled_from(METHODS), json_values),
            "params": st.one_of(
                json_values,
                st.fixed_dictionaries(
                    {"name": st.one_of(st.sampled_from(TOOLS), json_values), "arguments": json_values}
                ),
            ),
        },
    ),
    protocol=protocols,
    envelope=st.booleans(),
)
def test_wrong_json_rpc_types_are_answered_cleanly(asgi_server, token, http, fields, protocol, envelope):
    body = dict(fields)
    if protocol == MODERN and envelope and isinstance(body.get("params"), dict):
        body["params"] = rpc.message("x", body["params"], protocol=MODERN)["params"]
    before = rpc.row_counts()
    response = rpc.post(asgi_server.url, body, token=token, protocol=protocol, client=http)
    check(response, before, body)


@FUZZ
@given(
    tool=st.one_of(st.sampled_from(TOOLS), st.text(max_size=10)),
    arguments=st.one_of(arguments, json_values),
    protocol=st.sampled_from([LEGACY, MODERN]),
)
def test_odd_tool_arguments_are_answered_cleanly(asgi_server, token, http, tool, arguments, protocol):
    body = rpc.tools_call(tool, arguments, protocol=protocol)
    before = rpc.row_counts()
    response = rpc.post(asgi_server.url, body, token=token, protocol=protocol, client=http)
    check(response, before, (tool, str(arguments)[:300]))


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)


def _has_lone_surrogate(value: Any) -> bool:
    return any(0xD800 <= ord(char) <= 0xDFFF for text in _strings(value) for char in text)


def _has_unstorable_text(value: Any) -> bool:
    """NUL or a lone surrogate anywhere: text PostgreSQL cannot store."""
    return any("\x00" in text for text in _strings(value)) or _has_lone_surrogate(value)


VALID = {
    "remember": {"content": "I water the plants on Sundays."},
    "forget": {"memory_id": "00000000-0000-0000-0000-000000000000"},
    "recall": {"query": "plants"},
    "answer": {"question": "When do I water the plants?"},
}


@FUZZ
@given(
    tool=st.sampled_from(TOOLS),
    extra=st.dictionaries(
        st.one_of(st.text(min_size=1, max_size=20), oddity).filter(lambda k: k not in FIELDS),
        json_values,
        min_size=1,
        max_size=3,
    ),
    protocol=st.sampled_from([LEGACY, MODERN]),
)
def test_an_unknown_field_is_always_refused_and_stores_nothing(
    asgi_server, token, http, tool, extra, protocol
):
    body = rpc.tools_call(tool, {**VALID[tool], **extra}, protocol=protocol)
    before = rpc.row_counts()
    response = rpc.post(asgi_server.url, body, token=token, protocol=protocol, client=http)
    check(response, before, (tool, extra))
    if response.status_code == 413:  # far too large, or no id found: refused unread
        return
    answer = rpc.parse(response)
    if answer.get("result", {}).get("structuredContent", {}).get("code") == "body_too_large":
        return  # a huge value: refused before it is parsed, as the call's error result
    # As the server decodes it: an escaped surrogate pair in JSON is one character again.
    received = json.loads(json.dumps(extra))
    if protocol == LEGACY and _has_lone_surrogate(received):
        # The 2025-11-25 transport's JSON parser refuses lone surrogates outright.
        assert answer["error"]["code"] == -32700, answer
        return
    assert "result" in answer, (tool, extra, answer)  # every tool of the four is offered
    assert answer["result"]["isError"] is True, (tool, extra, answer)
    code = answer["result"]["structuredContent"]["code"]
    if _has_unstorable_text(received):
        return  # refusing the text itself first is as good (check() has ruled out internal_error)
    assert code == "unknown_field", (tool, extra, answer)


PROPERTIES = {
    "remember": ["content"],
    "forget": ["memory_id", "hard", "reason_code"],
    "recall": ["query", "top_k", "types", "tags", "expand_entities", "at", "session_id", "agent_id"],
    "answer": ["question", "top_k", "max_tokens", "at", "session_id", "agent_id"],
}


@FUZZ
@given(
    data=st.data(),
    tool=st.sampled_from(TOOLS),
    protocol=st.sampled_from([LEGACY, MODERN]),
)
def test_odd_values_in_known_fields_are_answered_cleanly(asgi_server, token, http, data, tool, protocol):
    """Mostly valid calls with one or two fields replaced: where odd text reaches the handlers."""
    fields = data.draw(st.lists(st.sampled_from(PROPERTIES[tool]), min_size=1, max_size=2, unique=True))
    values = {name: data.draw(st.one_of(strings, json_values), label=name) for name in fields}
    body = rpc.tools_call(tool, {**VALID[tool], **values}, protocol=protocol)
    before = rpc.row_counts()
    response = rpc.post(asgi_server.url, body, token=token, protocol=protocol, client=http)
    check(response, before, (tool, str(values)[:300]))
