"""A forgotten memory never resurfaces (issue 40, section 1).

A person saves where they work and forgets it, then saves a new employer; they also save where they
live, then a move, and forget the old home (already history when it is forgotten). Each way of
forgetting is walked: the core `forget` (soft, reason `private`), the graph profile's `invalidate`,
and a hard delete. Then every reader is asked: every operation of the registry through every MCP
profile that offers it and through REST, every graph:// resource, every REST route, and every
dashboard page (the Ask page among them) but the owner's own views of forgotten memories. No agent's
reader may show the forgotten words or a forgotten memory's id; no page the forgotten words (the
owner's pages may link an id). The owner's views of forgotten memories (the dashboard's Suppressed
page and the memory's page, REST's `status=suppressed` listing and the memory itself, the export)
still show a soft-forgotten memory; a hard-deleted one is in no table at all.

The tables are checked against the operations registry and the URL configuration
(`TestTheTablesCoverEverything`), so a new tool, resource, route or page fails here until it is
added to the walk. `test_words_said_again_after_forgetting_are_new_testimony` holds the decision
on what a save of forgotten words becomes (docs/decisions.md).

Alice owns everything; the outsider cases of these readers are test_tenancy's and test_forget's.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.test import Client
from django.urls import URLPattern, reverse
from mcp import ClientSession, types

from accounts.models import User
from memories.api import urls as api_urls
from memories.dashboard import urls as dashboard_urls
from memories.models import AuditEvent, Entity, Job, Memory, Relation, Space
from memories.open_query.catalogue import VIEWS
from memories.open_query.saved import SAVED
from memories.operations import registry
from memories.operations.registry import PROFILES
from tests.helpers import pat_client, tables_containing, wait_for_job
from tests.mcp_gateway import rpc
from tests.mcp_gateway.sdk import session_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WORK_FORGOTTEN = "I work at Quillfeather Analytics as a data engineer."
WORK_NEW = "I work at Brightwater Labs as a data engineer."
HOME_FORGOTTEN = "I live in Quorndale."
HOME_NEW = "I live in Porto."
# Words only the forgotten memories say.
MARKERS = ("quillfeather", "quorndale")
QUESTIONS = (
    "Where do I work?",
    "Who is my employer?",
    "Where do I live?",
    "Quillfeather Analytics",
    "Quorndale",
)


@dataclass
class World:
    """What the scenario made: the ids and times the tables refer to."""

    user: User
    token: str
    base_url: str
    forgotten: list[str]
    forgotten_jobs: list[str]
    current: dict[str, str]
    jobs: list[str]
    space_id: str
    before_move: datetime
    scratch_forget: str
    scratch_invalidate: str
    scratch_rest: str
    entity_ids: dict[str, str] = field(default_factory=dict)
    relation_id: str = ""
    receipt_id: str = ""
    application_id: int = 0


@dataclass(frozen=True)
class Call:
    """One request of a walk. `ok`: it must succeed (an error is allowed only where it is the answer)."""

    arguments: dict[str, Any]
    ok: bool = True


# --- the operations: every registry operation, called as an agent would -------------------------

Calls = Callable[[World], list[Call]]


def _questions(key: str, *, at: bool = True) -> Calls:
    def calls(world: World) -> list[Call]:
        asked = [Call({key: q}) for q in QUESTIONS]
        past = [Call({key: "Where did I live?", "at": world.before_move.isoformat()})] if at else []
        return [*asked, *past]

    return calls


def _evidence(world: World) -> list[Call]:
    past = world.before_move.isoformat()
    return [
        *(Call({"query": q}) for q in QUESTIONS),
        Call({"query": "Where did I live?", "at": past}),
        Call({"query": "Where did I live?", "known_at": past}),
    ]


def _saved_query_params(name: str, world: World) -> dict[str, Any]:
    values = {
        "entity_id": world.entity_ids.get("brightwater labs", str(uuid.uuid4())),
        "fact_id": world.current["work"],
        "since": "2000-01-01T00:00:00+00:00",
        "at": world.before_move.isoformat(),
        "start": "2000-01-01T00:00:00+00:00",
        "end": "2100-01-01T00:00:00+00:00",
        "source_kind": "notes",
        "source_ref": "walk",
        "subject_entity_id": world.entity_ids.get("brightwater labs", str(uuid.uuid4())),
        "known_at": "2100-01-01T00:00:00+00:00",
    }
    return {param: values[param] for param, _ in SAVED[name].params if param in values}


OPERATION_CALLS: dict[str, Calls] = {
    # core (and every profile whose tools no contract fixes)
    "recall": _questions("query"),
    "answer": _questions("question"),
    "remember": lambda w: [Call({"content": "I like green tea in the afternoon."})],
    "forget": lambda w: [Call({"memory_id": w.scratch_forget, "reason_code": "private"})],
    # graph
    "graph_remember": lambda w: [
        Call({"content": WORK_NEW, "category": "fact"}),
        Call({"content": HOME_NEW, "category": "fact"}),
        Call({"content": "Actually I now work at Brightwater Labs.", "category": "fact"}),
    ],
    "graph_recall": _questions("query", at=False),
    "get_context": lambda w: [
        Call({"entity_name": "Brightwater Labs"}),
        Call({"entity_name": "Porto"}),
        Call({"entity_name": "Brightwater Labs", "at": w.before_move.isoformat()}),
        # Known only from forgotten memories: there is no such entity for an agent.
        Call({"entity_name": "Quillfeather Analytics"}, ok=False),
        Call({"entity_name": "Quorndale"}, ok=False),
    ],
    "list_entities": lambda w: [
        Call({}),
        Call({"type": "Organization"}),
        Call({"type": "Location"}),
        Call({"type": "Concept"}),
    ],
    "invalidate": lambda w: [Call({"memory_id": w.scratch_invalidate, "reason": "no longer true"})],
    "relate": lambda w: [
        Call(
            {
                "source": "Alice",
                "target": "Brightwater Labs",
                "relation_type": "works_at",
                "source_type": "Person",
                "target_type": "Organization",
            }
        )
    ],
    "switch_agent": lambda w: [Call({"agent_id": w.space_id})],
    # evidence: writes, the assured operations, the open query
    "ingest": lambda w: [
        Call({"content": "The team standup is at 10:00."}),
        Call({"content": WORK_NEW, "source_kind": "notes", "source_ref": "walk"}),
    ],
    "pipeline_readiness": lambda w: [Call({"job_ids": [*w.forgotten_jobs, *w.jobs]})],
    "resolve_entity": lambda w: [
        *(Call({"query": q}) for q in ("Quillfeather Analytics", "Quorndale", "Brightwater", "Porto")),
        Call({"query": "Quillfeather", "type": "Organization"}),
    ],
    "facts_context": _evidence,
    "claims_and_sources_context": _evidence,
    "combined_context": _evidence,
    "query_space": lambda w: [Call({})],
    "describe_view": lambda w: [Call({"view": name}) for name in VIEWS],
    "validate_query": lambda w: [Call({"sql": "SELECT id, content FROM memories"})],
    "query": lambda w: [
        *(Call({"sql": f"SELECT * FROM {name}", "limit": 500}) for name in VIEWS),  # noqa: S608 - view names
        Call({"sql": "SELECT id, content FROM memories WHERE content ILIKE $1", "params": ["%Quill%"]}),
    ],
    "list_saved_queries": lambda w: [Call({})],
    "describe_saved_query": lambda w: [Call({"name": name}) for name in SAVED],
    "run_saved_query": lambda w: [
        Call({"name": name, "params": _saved_query_params(name, w), "limit": 500}) for name in SAVED
    ],
}


# --- REST: every route of memories/api/urls.py ----------------------------------------------------

# A request: (method, path, JSON body or None, whether it must succeed).
Request = tuple[str, str, dict[str, Any] | None, bool]
Requests = Callable[[World], list[Request]]
# Routes that are the owner's own view of forgotten memories, checked by `_owner_sees_it`.
OWNER_VIEW = "the owner's own view of forgotten memories"


def _tool_route(tool: str, url_name: str, *, get: bool = False) -> Requests:
    def requests(world: World) -> list[Request]:
        path = reverse(url_name)
        posts: list[Request] = [("POST", path, c.arguments, c.ok) for c in OPERATION_CALLS[tool](world)]
        return [("GET", path, None, True), *posts] if get else posts

    return requests


def _every_operation(world: World) -> list[Request]:
    return [
        ("POST", reverse("api-operation-run", args=[op.name]), call.arguments, call.ok)
        for op in registry.operations()
        for call in OPERATION_CALLS[op.name](world)
    ]


def _memory_paths(world: World, name: str) -> list[str]:
    return [reverse(name, args=[memory_id]) for memory_id in (*world.current.values(), world.scratch_rest)]


def _get(*paths: str) -> list[Request]:
    return [("GET", path, None, True) for path in paths]


def _post(body: dict[str, Any], *paths: str) -> list[Request]:
    return [("POST", path, body, True) for path in paths]


REST_ROUTES: dict[str, Requests | str] = {
    "api-schema": lambda w: _get(reverse("api-schema")),
    "api-docs": lambda w: _get(reverse("api-docs")),
    "api-operations": lambda w: _get(reverse("api-operations")),
    "api-operation-run": _every_operation,
    "api-resources": lambda w: _get(reverse("api-resources"), reverse("api-resources") + "?profile=graph"),
    "api-resource-read": lambda w: _get(
        *(
            reverse("api-resource-read") + "?" + urlencode({"uri": resource.uri})
            for resource in registry.resources()
        )
    ),
    "api-ingest": _tool_route("ingest", "api-ingest", get=True),
    "api-readiness": _tool_route("pipeline_readiness", "api-readiness"),
    "api-query-space": _tool_route("query_space", "api-query-space", get=True),
    "api-query-view": _tool_route("describe_view", "api-query-view"),
    "api-query-validate": _tool_route("validate_query", "api-query-validate"),
    "api-query": _tool_route("query", "api-query"),
    "api-saved-queries": _tool_route("list_saved_queries", "api-saved-queries", get=True),
    "api-saved-query": _tool_route("describe_saved_query", "api-saved-query"),
    "api-saved-query-run": _tool_route("run_saved_query", "api-saved-query-run"),
    "api-memories": lambda w: [
        *_get(reverse("api-memories"), reverse("api-memories") + "?include_superseded=true"),
        *_post({"content": HOME_NEW, "wait": 20}, reverse("api-memories")),
    ],
    "api-memory-search": lambda w: _get(
        *(
            reverse("api-memory-search") + "?" + urlencode({"q": q, **history})
            for q in QUESTIONS
            for history in ({}, {"include_history": "true"})
        )
    ),
    "api-memory": lambda w: _get(*_memory_paths(w, "api-memory")),
    "api-memory-pin": lambda w: _post({}, *_memory_paths(w, "api-memory-pin")),
    "api-memory-unpin": lambda w: _post({}, *_memory_paths(w, "api-memory-unpin")),
    "api-memory-suppress": lambda w: _post(
        {"reason_code": "private"}, reverse("api-memory-suppress", args=[w.scratch_rest])
    ),
    "api-memory-restore": lambda w: _post({}, reverse("api-memory-restore", args=[w.scratch_rest])),
    "api-relation": "DELETE only: its answer is a purge receipt of counts",
    "api-relation-restore": (
        "POST only, by a relation's id: its answer is that relation (its two entities, which a relation "
        "keeps visible), as relate's"
    ),
    "api-documents": "a save: answers with its job, as POST api-memories does (job_response)",
    "api-images": "a save of a picture: answers with its job, as POST api-memories does (job_response)",
    "api-image": "the bytes of a picture the owner uploaded, by a signed link",
    "api-jobs": lambda w: _get(reverse("api-jobs")),
    "api-job": lambda w: _get(*(reverse("api-job", args=[job]) for job in (*w.forgotten_jobs, *w.jobs))),
    "api-export": OWNER_VIEW,
    "api-imports": lambda w: _get(reverse("api-imports")),
    "api-import": (
        "an import's counts, skip reasons and undo receipt, its items named by their source ids, never "
        "a memory's words (memories.wire.import_dict)"
    ),
    "api-import-cancel": "POST only: cancels an import; answers with it (import_dict)",
    "api-import-undo": "POST only: undoes an import; answers with its purge receipt of counts",
    "api-spaces": lambda w: _get(reverse("api-spaces")),
    "api-space": lambda w: _get(reverse("api-space", args=[w.space_id])),
    "api-tokens": "tokens are managed from the signed-in dashboard only (session_required)",
    "api-token": "DELETE only: revokes a token",
}


# --- the dashboard: every page of memories/dashboard/urls.py --------------------------------------

Pages = Callable[[World], list[str]]


def _page(name: str, *args: Any, query: str = "") -> Pages:
    return lambda w: [reverse(f"dashboard:{name}", args=list(args)) + query]


def _per_memory(name: str) -> Pages:
    return lambda w: [reverse(f"dashboard:{name}", args=[m]) for m in w.current.values()]


POST_ACTION = "a POST action that redirects"
DASHBOARD_PAGES: dict[str, Pages | str] = {
    "memories": lambda w: [
        reverse("dashboard:memories"),
        *(reverse("dashboard:memories") + "?" + urlencode({"q": q}) for q in QUESTIONS),
    ],
    "suppressed": OWNER_VIEW,
    "save": _page("save"),
    "upload": _page("upload"),
    "upload-image": _page("upload-image"),
    "memory-bulk": "a POST that confirms an action on the memories the person ticked",
    "receipt": lambda w: [reverse("dashboard:receipt", args=[w.receipt_id])],
    "memory": _per_memory("memory"),
    "memory-pin": POST_ACTION,
    "memory-unpin": POST_ACTION,
    "memory-suppress": POST_ACTION,
    "memory-restore": POST_ACTION,
    "memory-edit": _per_memory("memory-edit"),
    "memory-delete": _per_memory("memory-delete"),
    "relations": _page("relations"),
    "relation-delete": lambda w: [reverse("dashboard:relation-delete", args=[w.relation_id])],
    "jobs": _page("jobs"),
    "job": lambda w: [reverse("dashboard:job", args=[job]) for job in (*w.forgotten_jobs, *w.jobs)],
    "spaces": _page("spaces"),
    "space-current": POST_ACTION,
    "space-rename": POST_ACTION,
    "space-default": POST_ACTION,
    "space-delete": lambda w: [reverse("dashboard:space-delete", args=[w.space_id])],
    "connect": _page("connect"),
    "stdio-proxy": "the stdio proxy's source file",
    "overview": _page("overview"),
    "overview-data": _page("overview-data"),
    "graph": _page("graph"),
    "graph-data": _page("graph-data"),
    "graph-relation": lambda w: [reverse("dashboard:graph-relation", args=[w.relation_id])],
    "ask": lambda w: [reverse("dashboard:ask") + "?" + urlencode({"q": q}) for q in QUESTIONS],
    "activity": _page("activity"),
    "agents": _page("agents"),
    "agent": lambda w: [reverse("dashboard:agent", args=[w.application_id])],
    "agent-pause": POST_ACTION,
    "imports": _page("imports"),
    "import": "an import's page: its counts, skip reasons and receipt (import_dict), never a memory's words",
    "import-cancel": POST_ACTION,
    "import-undo": POST_ACTION,
    "agent-resume": POST_ACTION,
}


def _names(patterns: list[Any]) -> set[str]:
    return {p.name for p in patterns if isinstance(p, URLPattern) and p.name}


class TestTheTablesCoverEverything:
    """The walk's tables name every operation, route and page there is, and nothing else."""

    def test_it_has_a_call_for_every_operation_of_the_registry(self):
        assert set(OPERATION_CALLS) == {op.name for op in registry.operations()}

    def test_it_walks_every_profile_and_reads_every_resource(self):
        # Every profile's tools are those operations (the walk calls each through each profile), and
        # every resource belongs to a profile the walk reads it through.
        offered = {op.name for name in PROFILES for op in registry.operations(name)}
        assert offered == set(OPERATION_CALLS)
        assert all(set(r.profiles) <= set(PROFILES) for r in registry.resources())

    def test_it_has_a_request_or_a_reason_for_every_rest_route(self):
        assert set(REST_ROUTES) == _names(api_urls.urlpatterns)

    def test_it_has_a_page_or_a_reason_for_every_dashboard_page(self):
        assert set(DASHBOARD_PAGES) == _names(dashboard_urls.urlpatterns)


# --- the scenario -------------------------------------------------------------------------------


def _saved(client: Any, content: str) -> tuple[str, str]:
    """(memory id, job id) of a REST save that made one new memory."""
    response = client.post("/api/v1/memories", {"content": content, "wait": 20}, format="json")
    assert response.status_code == 201, response.json()
    job = response.json()["job"]
    assert job["status"] == "succeeded", job
    made = Memory.objects.filter(job_id=job["id"]).values_list("id", flat=True)
    assert len(made) == 1, (content, job)
    return str(made[0]), job["id"]


def _mcp(url: str, token: str, tool: str, arguments: dict[str, Any]) -> Any:
    """One tool call that must succeed, through the SDK; its structured result."""

    async def steps(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool(tool, arguments)

    result: types.CallToolResult = session_run(url, token, steps)
    assert result.is_error is not True, result
    return result.structured_content


# How a memory is forgotten: (the server's URL, a token, the memory's id).
Forgetting = Callable[[str, str, str], None]


def _forget_private(server_url: str, token: str, memory_id: str) -> None:
    arguments = {"memory_id": memory_id, "reason_code": "private"}
    assert _mcp(f"{server_url}/mcp", token, "forget", arguments)["action"] == "suppressed"


def _invalidate(server_url: str, token: str, memory_id: str) -> None:
    arguments = {"memory_id": memory_id, "reason": "not true"}
    assert _mcp(f"{server_url}/mcp/graph", token, "invalidate", arguments)["status"] == "suppressed"


def _hard_delete(server_url: str, token: str, memory_id: str) -> None:
    arguments = {"memory_id": memory_id, "hard": True, "reason_code": "private"}
    assert _mcp(f"{server_url}/mcp", token, "forget", arguments)["action"] == "hard_deleted"


FORGETTING: dict[str, Forgetting] = {
    "forget_private": _forget_private,
    "invalidate": _invalidate,
    "hard_delete": _hard_delete,
}
SOFTLY = ("forget_private", "invalidate")


def _scenario(server: Any, alice: User, forgetting: Forgetting) -> World:
    token = rpc.pat_token(alice)
    client = pat_client(alice)
    space = Space.objects.get(owner=alice, is_default=True)
    world = World(
        user=alice,
        token=token,
        base_url=server.url,
        forgotten=[],
        forgotten_jobs=[],
        current={},
        jobs=[],
        space_id=str(space.id),
        before_move=datetime.now(UTC),
        scratch_forget="",
        scratch_invalidate="",
        scratch_rest="",
    )
    world.scratch_forget, _ = _saved(client, "I keep a fern on my desk.")
    world.scratch_invalidate, _ = _saved(client, "My bike is a green Brompton.")
    world.scratch_rest, _ = _saved(client, "I play chess on Sundays.")
    receipt_memory, _ = _saved(client, "My locker number is 4411.")
    world.receipt_id = client.delete(f"/api/v1/memories/{receipt_memory}").json()["receipt"]["audit_event_id"]

    # Where they work, said through an agent (the agent's page lists what it saved), then forgotten;
    # then the new employer.
    agent_token, application = rpc.oauth_token(alice, f"{server.url}/mcp", app_name="Walk Agent")
    world.application_id = application.pk
    saved = _mcp(f"{server.url}/mcp", agent_token, "remember", {"content": WORK_FORGOTTEN})
    job = wait_for_job(saved["job_id"])
    assert job.status == Job.Status.SUCCEEDED, job.error_message
    work_forgotten = str(Memory.objects.get(job=job).id)
    world.forgotten_jobs.append(str(job.id))
    forgetting(server.url, token, work_forgotten)
    world.current["work"], work_job = _saved(client, WORK_NEW)

    # Where they live, then a move: the old home is history when it is forgotten.
    home_forgotten, home_job = _saved(client, HOME_FORGOTTEN)
    world.forgotten_jobs.append(home_job)
    world.before_move = datetime.now(UTC)
    world.current["home"], move_job = _saved(client, HOME_NEW)
    forgetting(server.url, token, home_forgotten)

    world.current["other"], other_job = _saved(client, "My sister Anna is a nurse in Lisbon.")
    world.forgotten = [work_forgotten, home_forgotten]
    world.jobs = [work_job, move_job, other_job]
    world.entity_ids = {e.normalized_name: str(e.id) for e in Entity.objects.filter(owner=alice, space=space)}
    return world


# --- the walk -------------------------------------------------------------------------------------


def _leaks(world: World, text: str, sent: Any = None) -> list[str]:
    """What of the forgotten memories `text` shows: a marker word or a forgotten memory's id. Words
    the request itself carried (a name echoed back in an error) are the caller's own."""
    for value in _strings(sent):
        text = text.replace(value, "")
        text = text.replace(json.dumps(value)[1:-1], "")
    lowered = text.casefold()
    found = [marker for marker in MARKERS if marker in lowered]
    return found + [memory_id for memory_id in world.forgotten if memory_id in lowered]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _mcp_walk(world: World) -> list[str]:
    """Every tool of every profile with every call of its row, and every resource it offers."""
    problems: list[str] = []
    for name, profile in PROFILES.items():
        calls = [(op, call) for op in registry.operations(name) for call in OPERATION_CALLS[op.name](world)]
        uris = [resource.uri for resource in registry.resources(name)]

        async def steps(session: ClientSession, calls: Any = calls, uris: list[str] = uris) -> list[Any]:
            answers: list[Any] = []
            for op, call in calls:
                answers.append(await session.call_tool(op.tool_name, call.arguments))
            for uri in uris:
                answers.append(await session.read_resource(uri))
            return answers

        answers = session_run(f"{world.base_url}{profile.path}", world.token, steps)
        for (op, call), result in zip(calls, answers, strict=False):
            where = f"MCP {profile.path} {op.tool_name} {json.dumps(call.arguments)}"
            text = "".join(getattr(block, "text", "") for block in result.content)
            if call.ok and result.is_error:
                problems.append(f"{where}: failed: {text[:300]}")
            if leaked := _leaks(world, text + json.dumps(result.structured_content), call.arguments):
                problems.append(f"{where}: shows {leaked}")
        for uri, result in zip(uris, answers[len(calls) :], strict=True):
            text = "".join(getattr(content, "text", "") for content in result.contents)
            if leaked := _leaks(world, text):
                problems.append(f"MCP {profile.path} resource {uri}: shows {leaked}")
    return problems


def _rest_walk(world: World) -> list[str]:
    client = pat_client(world.user)
    problems: list[str] = []
    for name, requests in REST_ROUTES.items():
        if isinstance(requests, str):
            continue
        for method, path, body, must_succeed in requests(world):
            if method == "GET":
                response = client.get(path)
            else:
                response = client.generic(method, path, json.dumps(body), content_type="application/json")
            text = _body(response)
            where = f"REST {name} {method} {path} {json.dumps(body) if body else ''}"
            if must_succeed and response.status_code >= 400:
                problems.append(f"{where}: {response.status_code} {text[:300]}")
            if leaked := _leaks(world, text, body):
                problems.append(f"{where}: shows {leaked}")
    return problems


def _body(response: Any) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode()
    return str(response.content.decode())


def _dashboard_walk(world: World) -> list[str]:
    client = Client()
    client.force_login(world.user)
    problems: list[str] = []
    for name, pages in DASHBOARD_PAGES.items():
        if isinstance(pages, str):
            continue
        for path in pages(world):
            response = client.get(path)
            text = _body(response)
            where = f"dashboard {name} {path}"
            if response.status_code != 200:
                problems.append(f"{where}: {response.status_code}")
            # The words only: a page may link the owner's audit trail by id. The page's own query
            # (the search box, the question asked) is the person's text.
            asked = [v for values in parse_qs(urlsplit(path).query).values() for v in values]
            if leaked := [m for m in _leaks(world, text, asked) if m in MARKERS]:
                problems.append(f"{where}: shows {leaked}")
    return problems


def _owner_sees_it(world: World, *, kept: bool) -> list[str]:
    """The owner's own views of forgotten memories: they show a soft-forgotten memory (and nothing of
    a hard-deleted one, which is nowhere at all)."""
    client = pat_client(world.user)
    dashboard = Client()
    dashboard.force_login(world.user)
    listings = {
        "dashboard suppressed": _body(dashboard.get(reverse("dashboard:suppressed"))),
        # A forgotten memory that had been replaced is history: the listing's history switch shows it.
        "REST status=suppressed": _body(
            client.get("/api/v1/memories?status=suppressed&include_superseded=true")
        ),
        "REST export": _body(client.get("/api/v1/export")),
    }
    views: list[tuple[str, str, tuple[str, ...]]] = [
        (where, text, MARKERS) for where, text in listings.items()
    ]
    for memory_id, marker in zip(world.forgotten, MARKERS, strict=True):
        rest = _body(client.get(f"/api/v1/memories/{memory_id}"))
        page = _body(dashboard.get(reverse("dashboard:memory", args=[memory_id])))
        views += [
            (f"REST memory {memory_id}", rest, (marker,)),
            (f"dashboard memory {memory_id}", page, (marker,)),
        ]
    problems = []
    for where, text, markers in views:
        for marker in markers:
            if (marker in text.casefold()) != kept:
                problems.append(f"{where}: {'does not show' if kept else 'shows'} {marker}")
    if not kept:
        for marker in MARKERS:
            if left := tables_containing(marker):
                problems.append(f"hard delete left {marker} in {left}")
    return problems


def _answer(client: Any, question: str) -> str:
    response = client.post("/api/v1/operations/answer", {"question": question}, format="json")
    assert response.status_code == 200, response.json()
    return str(response.json()["answer"])


@pytest.mark.parametrize("how", list(FORGETTING))
def test_a_forgotten_memory_never_resurfaces(asgi_server, alice, how):
    world = _scenario(asgi_server, alice, FORGETTING[how])
    work_forgotten, home_forgotten = world.forgotten
    if how in SOFTLY:
        assert Memory.objects.filter(id__in=world.forgotten, status=Memory.Status.SUPPRESSED).count() == 2
        # No judgement: the new employer did not close the forgotten one (it was no rival), while
        # the old home keeps the history it had when it was forgotten (restored, it is history).
        work = Memory.objects.get(id=work_forgotten)
        assert (work.superseded_at, work.superseded_by_id) == (None, None)
        assert str(Memory.objects.get(id=home_forgotten).superseded_by_id) == world.current["home"]
    else:
        assert not Memory.objects.filter(id__in=world.forgotten).exists()
        assert AuditEvent.objects.filter(target_id__in=world.forgotten, action="hard_deleted").count() == 2
    # What holds is still answered, without the words that were forgotten.
    client = pat_client(alice)
    assert "Brightwater Labs" in _answer(client, "Where do I work?")
    assert "Porto" in _answer(client, "Where do I live?")

    problems = _mcp_walk(world)
    # The walk's `relate` made the relation the dashboard's relation pages show.
    world.relation_id = str(Relation.objects.get(owner=alice).id)
    problems += [*_rest_walk(world), *_dashboard_walk(world), *_owner_sees_it(world, kept=how in SOFTLY)]
    assert problems == [], "\n".join(problems)


PARAPHRASE = "Quillfeather Analytics employs me as a data engineer."


@pytest.mark.parametrize("how", SOFTLY)
def test_words_said_again_after_forgetting_are_new_testimony(asgi_server, alice, how):
    # docs/decisions.md, "A forgotten memory takes no part in any judgement": the same words, or
    # other words for the same fact, saved after the person forgot it are a new memory, judged
    # as if the forgotten one did not exist; the forgotten one gains nothing and stays forgotten.
    token = rpc.pat_token(alice)
    graph, ingest = f"{asgi_server.url}/mcp/graph", f"{asgi_server.url}/mcp/ingest"
    forgotten, _ = _saved(pat_client(alice), WORK_FORGOTTEN)
    FORGETTING[how](asgi_server.url, token, forgotten)

    def remembered(content: str) -> dict[str, Any]:
        saved = _mcp(graph, token, "remember", {"content": content, "category": "fact"})
        assert saved["status"] == "stored" and forgotten not in json.dumps(saved), saved
        assert all(m["status"] == "active" and m["replaced"] == [] for m in saved["memories"]), saved
        return dict(saved)

    # The same words: a new memory, not evidence for the forgotten one.
    again = remembered(WORK_FORGOTTEN)
    assert [m["outcome"] for m in again["memories"]] == ["created"], again
    # Other words for it: judged against what is not forgotten (here, the new memory).
    paraphrased = remembered(PARAPHRASE)
    # The same words once more: evidence for the new memory.
    third = remembered(WORK_FORGOTTEN)
    assert [(m["id"], m["outcome"]) for m in third["memories"]] == [(again["memory_id"], "confirmed")], third
    jobs = [again["job_id"], paraphrased["job_id"], third["job_id"]]

    readiness = _mcp(ingest, token, "pipeline_readiness", {"job_ids": jobs})
    assert all(job["searchable"] and forgotten not in json.dumps(job) for job in readiness["jobs"]), readiness
    recalled = _mcp(ingest, token, "recall", {"query": "Where do I work?"})
    assert any("Quillfeather" in m["content"] for m in recalled["memories"]), recalled
    assert forgotten not in json.dumps(recalled)

    memory = Memory.objects.get(id=forgotten)
    assert memory.status == Memory.Status.SUPPRESSED
    assert (memory.superseded_at, memory.evidence.count()) == (None, 1)
    assert (
        Memory.objects.filter(owner=alice, status=Memory.Status.ACTIVE, content=WORK_FORGOTTEN).count() <= 1
    )
