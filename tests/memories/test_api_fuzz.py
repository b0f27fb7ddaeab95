"""Property-based tests of the REST API: whatever arrives at /api/, the answer is clean and nothing is
written on error.

Every route of memories/api/urls.py (read from the URL patterns, so a new endpoint is fuzzed
without editing this file) gets any method, odd query strings, malformed, huge or deeply nested
bodies, wrong content types, many fields, wrong types, bad ids and bad dates: with a personal
access token, a read-only one, the session (CSRF header and all), nothing, and Charlie's token
(the outsider, who must never reach anything of Alice's). For every request:
- never a 5xx, never a stack trace, SQL or path in the answer (rpc.FORBIDDEN);
- an error is the one shape, `{"error": {code, message, retryable, agent_action, request_id}}`,
  with a catalogue code whose status and retry flag are the response's, and the request id also
  in the X-Request-ID header (the Swagger page is HTML: it only has to stay under 500);
- a refused request wrote nothing: every table a REST call can write reads the same after it.

In-process through Django's test client, against the real database in autocommit (as in
production: a refused statement cannot poison the next example); bounded and reproducible:
derandomized, a fixed number of examples, no example database. About 25 s of requests in all
(plus loading the embedding model once, which recall needs); a longer run is marked slow.
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

import psutil
import pytest
import yaml
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, models
from django.test.client import encode_multipart
from hypothesis import assume, event, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from accounts.caller import Actor
from accounts.models import PersonalAccessToken, User
from accounts.services import pat_create
from memories.api import urls as api_urls
from memories.api.documents import UPLOAD_SCHEMA
from memories.api.images import UPLOAD_SCHEMA as IMAGE_UPLOAD_SCHEMA
from memories.api.memories import MEMORY_LIST_PARAMS, MEMORY_SEARCH_PARAMS, SAVE_SCHEMA
from memories.api.open_query import OPEN_QUERY_ROUTES, WRITE_ROUTES
from memories.api.query import REASON_SCHEMA
from memories.api.tokens import CREATE_SCHEMA
from memories.errors import CATALOGUE, Code
from memories.models import (
    AuditEvent,
    Entity,
    Evidence,
    GrantSpace,
    Import,
    Job,
    Memory,
    Relation,
    Source,
    Space,
)
from memories.operations.registry import get_operation, operations
from memories.services.spaces import space_create
from tests.helpers import READ, WRITE, pat_client, session_client
from tests.mcp_gateway.rpc import FORBIDDEN
from tests.mcp_gateway.test_fuzz import FUZZ as MCP_FUZZ
from tests.mcp_gateway.test_fuzz import VALID as MCP_VALID
from tests.mcp_gateway.test_fuzz import _deep, json_values, odd_text, oddity, strings
from tests.mcp_gateway.test_profile_fuzz import VALID as PROFILE_VALID
from tests.memories.test_api_read import default_space, make_job, make_memory
from tests.memories.test_relation_delete import relate

pytestmark = pytest.mark.django_db(transaction=True)

# The MCP suite's settings (derandomized, no database, no deadline), fewer examples per test.
FUZZ = hypothesis_settings(MCP_FUZZ, max_examples=120)

MAX_BODY = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
MAX_FIELDS = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
MAX_FILES = settings.DATA_UPLOAD_MAX_NUMBER_FILES
NIL = "00000000-0000-0000-0000-000000000000"
SCHEMA_PATH = "/api/schema/"
HTML_PATH = "/api/docs/"  # Swagger UI: an HTML page, whose errors are HTML too

# --- the routes -------------------------------------------------------------------------

_CONVERTER = re.compile(r"<(?:(\w+):)?(\w+)>")
ROUTES = ["/api/" + str(pattern.pattern) for pattern in api_urls.urlpatterns]
HANDLERS = ("get", "post", "put", "patch", "delete")


def served(template: str) -> list[str]:
    """The HTTP methods the route's view implements (upper case)."""
    pattern = next(p for p in api_urls.urlpatterns if "/api/" + str(p.pattern) == template)
    view = getattr(pattern.callback, "cls", None)  # a DRF view function carries its class
    if view is None:
        return ["GET"]  # a plain Django view: the signed image link, which serves GET and HEAD
    return [name.upper() for name in HANDLERS if hasattr(view, name)]


def test_every_route_of_the_api_is_fuzzed():
    assert len(ROUTES) == len(api_urls.urlpatterns) >= 20
    for template in ROUTES:
        for converter, _ in _CONVERTER.findall(template):
            assert converter in ("uuid", "str"), template
    # Every body an endpoint takes has a valid example below, which the field fuzz starts from.
    with_body = {(m, t) for t in ROUTES for m in served(t) if m in ("POST", "PUT", "PATCH")}
    assert with_body == {(m, t) for m, t, _ in BODIES}
    assert sorted(VALID_ARGUMENTS) == sorted(op.name for op in operations())


# --- the world the requests meet --------------------------------------------------------


@dataclass
class World:
    clients: dict[str, APIClient]
    # Alice's ids by the URL parameter they fill (a handler gets far with these), and everyone's.
    own: dict[str, list[str]]
    everyone: list[str] = field(default_factory=list)


@pytest.fixture
def paused_worker() -> Iterator[None]:
    """The suite's real worker, if an earlier test started one, paused for this test: its
    recovery sweep re-sends jobs queued over 30 s ago (a fuzzed save's, or the world's), and what
    it then writes would look like a write by whichever request the comparison was around."""
    workers = [
        process
        for process in psutil.Process().children(recursive=True)
        if "celery" in " ".join(process.cmdline()) and "worker" in process.cmdline()
    ]
    family = [p for worker in workers for p in (worker, *worker.children(recursive=True))]
    for process in family:
        process.send_signal(signal.SIGSTOP)
    try:
        yield
    finally:
        for process in family:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.send_signal(signal.SIGCONT)


def _import(owner: User) -> Import:
    """An import waiting for the worker (none listens): cancel stops it, undo is refused until then."""
    job = make_job(owner, kind=Job.Kind.IMPORT)
    return Import.objects.create(
        owner=owner, space=job.space, job=job, format="mem0", items_total=1, data=b"{}"
    )


@pytest.fixture
def world(alice, bob, charlie, settings, no_worker_broker, paused_worker) -> World:
    # A save or an upload answers at once (no worker listens): `wait` must not hold the test.
    settings.SAVE_MAX_WAIT_SECONDS = 0
    work = space_create(actor=Actor.owner_acting(alice), name="Work")
    own = {
        "memory_id": [
            str(make_memory(alice, text).id) for text in ("Likes tea", "Lives in Oslo", "Owns a cat")
        ],
        "space_id": [str(work.id), str(default_space(alice).id)],
        "job_id": [str(make_job(alice).id)],
        "relation_id": [str(relate(alice, "Mara Lind", "Oslo").id)],
        "token_id": [str(pat_create(user=alice, name="spare", scopes=[READ])[0].id)],
        "import_id": [str(_import(alice).id)],
    }
    # The signed image link's path takes a source id (a note's here: no picture, so a 403 or 404).
    own["source_id"] = [str(Memory.objects.get(id=own["memory_id"][0]).source_id)]
    outsider = [
        str(make_memory(bob, "Bob's secret").id),
        str(default_space(bob).id),
        str(make_job(bob).id),
        str(relate(bob, "Ola Nordmann", "Bergen").id),
        str(pat_create(user=bob, name="bob", scopes=[READ])[0].id),
        str(_import(bob).id),
    ]
    clients = {
        "pat": pat_client(alice),
        "read_only": pat_client(alice, scopes=(READ,)),
        "session": session_client(alice),
        "anonymous": APIClient(),
        "outsider": pat_client(charlie),
    }
    return World(clients, own, [*(i for ids in own.values() for i in ids), *outsider, NIL])


# --- what is stored ---------------------------------------------------------------------

WRITABLE: list[type[models.Model]] = [
    Import,
    Memory,
    Source,
    Job,
    Space,
    Entity,
    Relation,
    Evidence,
    GrantSpace,
    AuditEvent,
    PersonalAccessToken,
    User,
]
# Bookkeeping of a successful authentication, and columns derived from others.
UNCOMPARED = ["last_used_at", "last_login", "embedding", "search_vector"]


def _digest_sql(model: type[models.Model]) -> str:
    """A count and an md5 of the table's rows (as JSON, less the uncompared columns), in pk order."""
    primary_key = model._meta.pk
    assert primary_key is not None and primary_key.column
    table = connection.ops.quote_name(model._meta.db_table)
    pk = connection.ops.quote_name(primary_key.column)
    rows = f"string_agg((to_jsonb(t) - %s::text[])::text, '|' ORDER BY t.{pk})"
    return f"(SELECT count(*) || ':' || md5(coalesce({rows}, '')) FROM {table} t)"  # noqa: S608 - model names


# One round trip per snapshot: a digest of every row of every table a REST call can write.
_SNAPSHOT = "SELECT " + ", ".join(_digest_sql(model) for model in WRITABLE)


def snapshot() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(_SNAPSHOT, [UNCOMPARED] * len(WRITABLE))
        row = cursor.fetchone()
    return {model.__name__: digest for model, digest in zip(WRITABLE, row, strict=True)}


# --- the invariant ----------------------------------------------------------------------


@dataclass
class Call:
    via: str
    method: str
    path: str
    query: str = ""
    body: bytes | None = None
    content_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        body = (self.body or b"")[:200]
        return f"{self.via} {self.method} {self.path}?{self.query[:200]} {self.content_type!r} {body!r}"


def sendable(call: Call) -> bool:
    """Whether Django's test client can build the request at all.

    Its WSGIRequest reads the query while it is constructed when the Content-Type names a
    charset, and raises there for too many parameters; the service's ASGI request does not
    (config/asgi.py), which test_request_limits.py checks through the ASGI handler itself.
    """
    return "charset" not in call.content_type or call.query.count("&") < MAX_FIELDS


def send(world: World, call: Call) -> Any:
    client = world.clients[call.via]
    url = f"{call.path}?{call.query}" if call.query else call.path
    extra: dict[str, Any] = {f"HTTP_{name.upper().replace('-', '_')}": v for name, v in call.headers.items()}
    if call.body is None:
        return client.generic(call.method, url, **extra)
    body: Any = call.body  # bytes, which the test client sends as they are
    return client.generic(call.method, url, body, content_type=call.content_type, **extra)


def check(world: World, call: Call) -> None:
    """Send the call; the property every answer has, whatever was sent (and Charlie, the
    outsider, never gets anywhere with an id of Alice's)."""
    before = snapshot()
    response = send(world, call)
    status = response.status_code
    event(f"status {status}")
    content = b"".join(response.streaming_content) if response.streaming else response.content
    text = content.decode("utf-8", "replace")
    assert status < 500, (str(call), status, text[:500])
    sent = f"{call.path} {call.query} {(call.body or b'').decode('utf-8', 'replace')}"
    # The open query's answers are about SQL (view examples, saved queries): there SQL is content,
    # not a leak, on its own routes and on the generic operations route that runs the same
    # operations (`/api/v1/operations/describe_saved_query`); every other needle (tracebacks,
    # paths, internals) still counts.
    about_sql = call.path.startswith("/api/v1/query") or any(
        call.path.startswith(f"/api/v1/operations/{name}") for name in OPEN_QUERY_ROUTES
    )
    allowed = {"SELECT "} if about_sql else set()
    leaked = [
        needle for needle in FORBIDDEN if needle in text and needle not in sent and needle not in allowed
    ]
    assert not leaked, (str(call), leaked, text[:500])
    alices = any(i in call.path for ids in world.own.values() for i in ids)
    if call.via == "outsider" and alices and call.method != "OPTIONS":
        assert status >= 400, (str(call), status, text[:500])
    if status < 400:
        return
    assert snapshot() == before, (str(call), status, text[:500])
    if call.method == "HEAD" or call.path.startswith(HTML_PATH):
        return
    # The schema endpoint renders its errors in the format it was asked for (YAML by default);
    # JSON is YAML, so one loader reads both.
    body = yaml.safe_load(text) if call.path.startswith(SCHEMA_PATH) else json.loads(text)
    assert isinstance(body, dict) and set(body) == {"error"}, (str(call), body)
    error = body["error"]
    assert {"code", "message", "retryable", "agent_action", "request_id"} <= set(error), (str(call), error)
    event(f"code {error['code']}")
    entry = CATALOGUE[Code(error["code"])]
    assert (entry.status, entry.retryable) == (status, error["retryable"]), (str(call), status, error)
    assert error["request_id"] == response["X-Request-ID"], (str(call), error)
    assert error["message"] and error["agent_action"], (str(call), error)


# --- strategies -------------------------------------------------------------------------

METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "PROPFIND", "FOO", "get"]
VIAS = ["pat", "read_only", "session", "anonymous", "outsider"]
BAD_IDS = [
    "not-a-uuid",
    "0",
    NIL[:-1],
    NIL + "0",
    NIL.upper().replace("0", "A"),
    NIL.replace("-", ""),
    "{" + NIL + "}",
    "urn:uuid:" + NIL,
    "%00",
    "..%2F..%2Fetc%2Fpasswd",
    "%E2%80%AE",
    "%ZZ",
]
BAD_DATES = [
    "2025-03-01",
    "2025-03-01T09:30:00",
    "2025-03-01T09:30:00+01:00",
    "2025-03-01T09:30:00 01:00",
    "2025-02-30",
    "2025-13-01T00:00:00Z",
    "2025-03-01T25:00:00Z",
    "2025-03-01T09:30:60Z",
    "9999-12-31T23:59:59+23:59",
    "0001-01-01T00:00:00-23:59",
    "10000-01-01",
    "yesterday",
    "1741000000",
    "2025-03-01T09:30:00+99:00",
]
NUMBERS = ["0", "1", "-1", "20", "50", "51", "100", "101", "1.5", "1e3", " 7", "99999999999999999999", "NaN"]
WORDS = ["true", "false", "True", "1", "yes", "", "move", "delete", "other", "fact", "queued", "active"]
# Query parameter names some endpoint takes, and DRF's `format` override.
QUERY_NAMES = sorted({*MEMORY_LIST_PARAMS, *MEMORY_SEARCH_PARAMS, "memories", "reason_code", "format"})
# Body fields some endpoint takes (the REST schemas and the registry's), for near-miss bodies.
BODY_FIELDS = sorted(
    {
        *SAVE_SCHEMA["properties"],
        *UPLOAD_SCHEMA["properties"],
        *IMAGE_UPLOAD_SCHEMA["properties"],
        *CREATE_SCHEMA["properties"],
        *REASON_SCHEMA["properties"],
        "name",
        "is_default",
        *(name for op in operations() for name in op.input_schema["properties"]),
    }
)

ids = st.one_of(
    st.uuids().map(str), st.sampled_from(BAD_IDS), st.text(max_size=20).map(lambda t: quote(t, safe=""))
)
query_values = st.one_of(
    st.sampled_from(BAD_DATES + NUMBERS + WORDS + BAD_IDS),
    st.uuids().map(str),
    strings.map(lambda t: t[:3000]),
    odd_text,
)
query_pairs = st.lists(
    st.tuples(st.one_of(st.sampled_from(QUERY_NAMES), st.text(max_size=10), oddity), query_values), max_size=6
)
raw_queries = st.sampled_from(
    ["%zz", "a=%00", "&&&", "=", "q", "q=a&q=b", "tag=" + "&tag=".join("t" * 25), "%"]
)
many_fields = st.sampled_from([MAX_FIELDS - 1, MAX_FIELDS, MAX_FIELDS + 1, 5 * MAX_FIELDS]).map(
    lambda n: "&".join(f"f{i}=1" for i in range(n))
)
queries = st.one_of(
    st.just(""),
    query_pairs.map(lambda pairs: urlencode(pairs, errors="surrogatepass")),
    raw_queries,
    many_fields,
)


def _sized(size: int) -> bytes:
    """A save body of exactly `size` bytes."""
    frame = b'{"content": ""}'
    return b'{"content": "' + b"x" * (size - len(frame)) + b'"}'


def _utf8(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8", "surrogatepass")


JSON_TYPES = ["application/json", "application/json; charset=utf-8"]
CONTENT_TYPES = [
    *JSON_TYPES,
    "application/json; charset=latin-1",
    "application/json; charset=utf-16",
    "application/json; charset=nonsense",
    "application/json;;;",
    "application/vnd.api+json",
    "text/plain",
    "text/html",
    "application/xml",
    "application/x-www-form-urlencoded",
    "multipart/form-data",
    "multipart/form-data; boundary=",
    "*/*",
    "",
    "nonsense",
]
BOUNDARY = "fuzzboundary"
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"

deep_bodies = st.builds(
    _deep,
    st.one_of(st.sampled_from([99, 100, 101, 102]), st.integers(1, 3000), st.just(100_000)),
    st.sampled_from(["arrays", "objects", "unclosed", "in a field"]),
)
big_bodies = st.sampled_from([MAX_BODY - 1, MAX_BODY + 1, 3 * MAX_BODY]).map(_sized)
json_bodies = st.one_of(
    st.dictionaries(
        st.one_of(st.sampled_from(BODY_FIELDS), st.text(max_size=15), oddity), json_values, max_size=6
    ),
    json_values,
).map(_utf8)
malformed = st.one_of(
    st.binary(max_size=300),
    json_bodies.flatmap(lambda text: st.integers(0, max(len(text) - 1, 0)).map(lambda n: text[:n])),
    json_bodies.map(lambda text: text.replace(b'"', b'"\xff', 1)),
    json_values.map(lambda v: json.dumps(v).encode("utf-16")),
    st.sampled_from([b"NaN", b"Infinity", b'{"content": -Infinity}', b"\xef\xbb\xbf{}", b"{} {}", b"[1,]"]),
)
form_bodies = st.integers(0, MAX_FIELDS + 1).map(lambda n: "&".join(f"f{i}=1" for i in range(n)).encode())


def _form_text(value: Any) -> str:
    """A value as a form field can carry it: UTF-8 cannot encode a lone surrogate."""
    return str(value).encode("utf-8", "replace").decode()


def _multipart(fields: dict[str, Any], files: int, big_field: bool) -> bytes:
    data: dict[str, Any] = {_form_text(name): _form_text(value) for name, value in fields.items()}
    for i in range(files):
        data[f"file{i}" if i else "file"] = SimpleUploadedFile(
            f"note{i}.txt", b"The boiler was serviced in May."
        )
    if big_field:
        data["source_ref"] = "x" * (MAX_BODY + 1)
    return encode_multipart(BOUNDARY, data)


multipart_bodies = st.builds(
    _multipart,
    st.dictionaries(
        st.one_of(st.sampled_from(BODY_FIELDS), st.text(min_size=1, max_size=10)), query_values, max_size=4
    ),
    st.one_of(st.integers(0, 2), st.sampled_from([MAX_FILES, MAX_FILES + 1])),
    st.booleans(),
)
# (body, content type): mostly the type the body claims, sometimes a wrong one.
bodies = st.one_of(
    st.tuples(st.none(), st.just("")),
    st.tuples(st.one_of(json_bodies, malformed, deep_bodies), st.sampled_from(CONTENT_TYPES)),
    st.tuples(st.one_of(json_bodies, deep_bodies, big_bodies), st.sampled_from(JSON_TYPES)),
    st.tuples(form_bodies, st.just("application/x-www-form-urlencoded")),
    st.tuples(
        multipart_bodies, st.sampled_from([MULTIPART, MULTIPART, "multipart/form-data; boundary=other"])
    ),
)
headers = st.fixed_dictionaries(
    {},
    optional={
        "Accept": st.sampled_from(
            ["application/json", "*/*", "text/html", "application/xml", "application/json; q=0", "x", ""]
        ),
        "X-Request-ID": st.one_of(st.text(max_size=80), st.sampled_from(["a" * 64, "a" * 65, "\u202e"])),
    },
)


@st.composite
def paths(draw: st.DrawFn, world: World, template: str, *, own: bool = False) -> str:
    """The route with its parameters filled: Alice's ids, anyone's, or ids that are no ids."""

    def fill(match: re.Match[str]) -> str:
        converter, name = match.group(1) or "str", match.group(2)
        if converter == "str":
            names = sorted(VALID_ARGUMENTS)
            return draw(st.sampled_from(names) if own else st.one_of(st.sampled_from(names), ids))
        if own:
            return draw(st.sampled_from(world.own[name]))
        return draw(st.one_of(st.sampled_from(world.own[name]), st.sampled_from(world.everyone), ids))

    return _CONVERTER.sub(fill, template)


# --- the properties ---------------------------------------------------------------------


def any_request(world: World, data: st.DataObject) -> None:
    template = data.draw(st.sampled_from(ROUTES), label="route")
    body, content_type = data.draw(bodies, label="body")
    call = Call(
        via=data.draw(st.sampled_from(VIAS), label="via"),
        method=data.draw(
            st.one_of(st.sampled_from(served(template)), st.sampled_from(METHODS)), label="method"
        ),
        path=data.draw(paths(world, template), label="path"),
        query=data.draw(queries, label="query"),
        body=body,
        content_type=content_type,
        headers=data.draw(headers, label="headers"),
    )
    assume(sendable(call))
    check(world, call)


@FUZZ
@given(data=st.data())
def test_any_request_to_any_route_is_answered_cleanly(world, data):
    any_request(world, data)


@pytest.mark.slow
@hypothesis_settings(FUZZ, max_examples=2000)
@given(data=st.data())
def test_many_more_requests_to_any_route_are_answered_cleanly(world, data):
    """The same property at length (a few minutes), for a change to the API's edges."""
    any_request(world, data)


@hypothesis_settings(FUZZ, max_examples=60)
@given(data=st.data())
def test_bodies_at_and_over_the_limits_are_answered_cleanly(world, data):
    """Nesting, size and field counts around their limits, on every route that takes a body."""
    template, method = data.draw(st.sampled_from([(t, m) for t in ROUTES for m in served(t) if m != "GET"]))
    body, content_type = data.draw(
        st.one_of(
            st.tuples(st.one_of(deep_bodies, big_bodies), st.sampled_from(JSON_TYPES)),
            st.tuples(multipart_bodies, st.just(MULTIPART)),
            st.tuples(form_bodies, st.just("application/x-www-form-urlencoded")),
        )
    )
    via = data.draw(st.sampled_from(["pat", "session"]))
    path = data.draw(paths(world, template, own=True))
    call = Call(via, method, path, data.draw(st.one_of(st.just(""), many_fields)), body, content_type)
    assume(sendable(call))
    check(world, call)


# The MCP fuzz suites' valid call of every operation: REST runs the same registry.
VALID_ARGUMENTS: dict[str, dict[str, Any]] = {**MCP_VALID, **PROFILE_VALID}
# A valid body of every endpoint that takes one, and the fields it may hold.
_ACTION = "/api/v1/memories/<uuid:memory_id>/"
BODIES: list[tuple[str, str, tuple[dict[str, Any], list[str]]]] = [
    (
        "POST",
        "/api/v1/memories",
        ({"content": "I water the plants on Sundays."}, sorted(SAVE_SCHEMA["properties"])),
    ),
    ("POST", _ACTION + "pin", ({}, [])),
    ("POST", _ACTION + "unpin", ({}, [])),
    ("POST", _ACTION + "restore", ({}, [])),
    ("POST", _ACTION + "suppress", ({"reason_code": "other"}, ["reason_code"])),
    ("POST", "/api/v1/spaces", ({"name": "Garden"}, ["name"])),
    ("PATCH", "/api/v1/spaces/<uuid:space_id>", ({"name": "Garden shed"}, ["name", "is_default"])),
    (
        "POST",
        "/api/v1/tokens",
        ({"name": "cli", "scopes": [READ, WRITE]}, sorted(CREATE_SCHEMA["properties"])),
    ),
    (
        "POST",
        "/api/v1/documents",
        ({"source_kind": "notes", "source_ref": "a"}, sorted(UPLOAD_SCHEMA["properties"])),
    ),
    (
        "POST",
        "/api/v1/images",
        (
            {"caption": "The whiteboard after the planning meeting."},
            sorted(IMAGE_UPLOAD_SCHEMA["properties"]),
        ),
    ),
    ("POST", "/api/v1/operations/<str:name>", ({}, [])),  # per operation: VALID_ARGUMENTS
    ("POST", "/api/v1/relations/<uuid:relation_id>/restore", ({}, [])),
    # An import's body is the export itself (or a multipart file): any JSON that is no export is
    # refused as such.
    ("POST", "/api/v1/imports", ({}, ["space", "results"])),
    ("POST", "/api/v1/imports/<uuid:import_id>/cancel", ({}, [])),
    ("POST", "/api/v1/imports/<uuid:import_id>/undo", ({}, [])),
    # The evidence contract's write and open-query tools, one route each, the body their arguments.
    *[
        (
            "POST",
            f"/api/{route}",
            (VALID_ARGUMENTS[tool], sorted(get_operation(tool).input_schema.get("properties", {}))),
        )
        for routes in (WRITE_ROUTES, OPEN_QUERY_ROUTES)
        for tool, (route, _) in routes.items()
    ],
]
odd_values = st.one_of(
    strings,
    json_values,
    st.sampled_from(BAD_DATES + BAD_IDS + NUMBERS),
    st.integers(min_value=-(2**70), max_value=2**70),
)


@FUZZ
@given(data=st.data())
def test_odd_values_in_known_fields_are_answered_cleanly(world, data):
    """Valid bodies with one or two fields replaced: wrong types, huge values, bad ids and dates."""
    method, template, (valid, fields) = data.draw(st.sampled_from(BODIES), label="endpoint")
    path = data.draw(paths(world, template, own=True), label="path")
    if template.endswith("<str:name>"):
        name = path.rsplit("/", 1)[1]
        valid = VALID_ARGUMENTS[name]
        fields = sorted(next(op for op in operations() if op.name == name).input_schema["properties"])
    replaced = data.draw(
        st.lists(st.sampled_from(fields or ["content"]), max_size=2, unique=True), label="fields"
    )
    body = {**valid, **{name: data.draw(odd_values, label=name) for name in replaced}}
    via = data.draw(st.sampled_from(["pat", "session"]), label="via")
    if template == "/api/v1/documents":
        file = SimpleUploadedFile("note.txt", b"The boiler was serviced in May.")
        encoded = encode_multipart(BOUNDARY, {**{k: _form_text(v) for k, v in body.items()}, "file": file})
        check(world, Call(via, method, path, body=encoded, content_type=MULTIPART))
    else:
        check(world, Call(via, method, path, body=_utf8(body), content_type="application/json"))


# A valid query of every endpoint that takes parameters, and the parameters it takes.
QUERIES: list[tuple[str, str, dict[str, str], list[str]]] = [
    ("GET", "/api/v1/memories", {}, sorted(MEMORY_LIST_PARAMS)),
    ("GET", "/api/v1/memories/search", {"q": "plants"}, sorted(MEMORY_SEARCH_PARAMS)),
    ("GET", "/api/v1/jobs", {}, ["status", "cursor", "page_size"]),
    ("DELETE", "/api/v1/spaces/<uuid:space_id>", {"memories": "move"}, ["memories"]),
    ("DELETE", "/api/v1/memories/<uuid:memory_id>", {}, ["reason_code"]),
    ("DELETE", "/api/v1/relations/<uuid:relation_id>", {}, ["reason_code"]),
    ("GET", "/api/v1/resources", {"profile": "graph"}, ["profile"]),
    ("GET", "/api/v1/resources/read", {"uri": "graph://stats", "profile": "graph"}, ["uri", "profile"]),
]


@FUZZ
@given(data=st.data())
def test_odd_values_in_known_parameters_are_answered_cleanly(world, data):
    """Valid queries with one to three parameters replaced or repeated: bad dates, ids, numbers."""
    method, template, valid, names = data.draw(st.sampled_from(QUERIES), label="endpoint")
    replaced = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3), label="parameters")
    pairs = [*((k, v) for k, v in valid.items() if k not in replaced)]
    pairs += [(name, data.draw(query_values, label=name)) for name in replaced]
    query = urlencode(pairs, errors="surrogatepass")
    via = data.draw(st.sampled_from(["pat", "session", "read_only"]), label="via")
    check(world, Call(via, method, data.draw(paths(world, template, own=True)), query))
