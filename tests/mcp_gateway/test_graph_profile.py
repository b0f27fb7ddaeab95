"""The graph profile at /mcp/graph through the official Python MCP SDK: get_context,
list_entities, relate, switch_agent and the graph:// resources (the contract as a whole, and
remember, recall and invalidate, are in test_graph_contract.py).

Alice owns the graph; Bob has a graph of his own in the same database; Charlie is the
outsider whose tokens must never see or change anything of Alice's.
"""

from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from django.db.models import Q
from django.utils import timezone
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from accounts.caller import ALL_SCOPES, Actor, Caller
from accounts.models import User
from memories.errors import AppError
from memories.models import (
    AuditEvent,
    Entity,
    Evidence,
    GrantSpace,
    Job,
    Memory,
    Relation,
    Source,
    Space,
)
from memories.operations import registry
from memories.services.spaces import space_create, space_create_default
from tests.helpers import READ, WRITE, link
from tests.mcp_gateway import rpc
from tests.mcp_gateway.sdk import call, error_code, session_run, structured

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CORE_TOOLS = ["recall", "answer", "remember", "forget"]
# The contract's seven, in its order.
GRAPH_TOOLS = ["remember", "recall", "get_context", "list_entities", "invalidate", "relate", "switch_agent"]
RESOURCES = ["graph://entities", "graph://memories", "graph://relations", "graph://stats"]
ALICE_WORDS = ("Novak", "Paris", "Berlin", "Acme")


def graph_url(server: Any) -> str:
    return f"{server.url}/mcp/graph"


def core_url(server: Any) -> str:
    return f"{server.url}/mcp"


def ok(url: str, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = call(url, token, tool, arguments)
    payload = structured(result)
    assert result.is_error is not True, payload
    return payload


def err(url: str, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = call(url, token, tool, arguments)
    error_code(result)
    return structured(result)


def read_resources(url: str, token: str, uris: list[str] = RESOURCES) -> dict[str, dict[str, Any]]:
    """Each resource's JSON, read in one SDK session."""

    async def steps(session: ClientSession) -> dict[str, dict[str, Any]]:
        payloads = {}
        for uri in uris:
            result = await session.read_resource(uri)
            assert len(result.contents) == 1, result
            content = result.contents[0]
            assert str(content.uri) == uri and content.mime_type == "application/json", content
            text = getattr(content, "text", None)
            assert isinstance(text, str), content
            for needle in rpc.FORBIDDEN:
                assert needle not in text, needle
            payloads[uri] = json.loads(text)
        return payloads

    result: dict[str, dict[str, Any]] = session_run(url, token, steps)
    return result


def grant(
    server: Any, user: User, app_name: str, *, scopes: tuple[str, ...] = (READ, WRITE)
) -> tuple[str, Any]:
    """An OAuth token of a new application (a grant) for the graph endpoint."""
    return rpc.oauth_token(user, graph_url(server), app_name=app_name, scopes=scopes)


def remembered(url: str, token: str, content: str, category: str = "fact") -> Job:
    """Save through the graph `remember`, which answers once the job has finished."""
    saved = ok(url, token, "remember", {"content": content, "category": category})
    assert saved["status"] == "stored", saved
    job = Job.objects.get(id=saved["job_id"])
    assert job.status == Job.Status.SUCCEEDED, job.error_message
    return job


def graph_rows() -> dict[str, int]:
    """Every row a graph tool could write (for 'nothing was stored' checks)."""
    return {
        **rpc.row_counts(),
        "entities": Entity.objects.count(),
        "relations": Relation.objects.count(),
        "evidence": Evidence.objects.count(),
        "grant_spaces": GrantSpace.objects.count(),
        "audit": AuditEvent.objects.count(),
    }


def mcp_error(raised: BaseException) -> MCPError:
    """The MCPError the SDK raised, out of the task groups it arrives wrapped in."""
    while isinstance(raised, BaseExceptionGroup):
        assert len(raised.exceptions) == 1, raised
        raised = raised.exceptions[0]
    assert isinstance(raised, MCPError), repr(raised)
    return raised


def lives_in(context: dict[str, Any]) -> list[str]:
    return [r["other"]["name"] for r in context["relations"] if r["type"] == "lives_in"]


# === discovery ==========================================================================


def test_it_lists_the_contracts_tools_only_in_a_stable_order(asgi_server, alice):
    token = rpc.pat_token(alice)

    async def listing(session: ClientSession) -> tuple[list[Any], list[Any]]:
        tools = (await session.list_tools()).tools
        resources = (await session.list_resources()).resources
        return tools, resources

    tools, resources = session_run(graph_url(asgi_server), token, listing)
    assert [t.name for t in tools] == GRAPH_TOOLS
    again, _ = session_run(graph_url(asgi_server), token, listing)
    assert [t.name for t in again] == [t.name for t in tools]
    for tool in tools:
        assert tool.input_schema["additionalProperties"] is False, tool.name
        assert tool.output_schema is not None, tool.name
    by_name = {t.name: t for t in tools}
    assert by_name["relate"].input_schema["properties"]["relation_type"]["enum"] == list(Relation.Type.values)
    assert by_name["list_entities"].input_schema["properties"]["type"]["enum"] == list(Entity.Type.values)
    assert [str(r.uri) for r in resources] == RESOURCES
    assert {r.mime_type for r in resources} == {"application/json"}

    core_tools, core_resources = session_run(core_url(asgi_server), token, listing)
    assert [t.name for t in core_tools] == CORE_TOOLS
    assert core_resources == []
    # A graph tool is unknown on the core endpoint, and a core tool the contract lacks here.
    unknown = call(core_url(asgi_server), token, "list_entities", {})
    assert unknown.is_error is True and structured(unknown)["code"] == "unknown_operation"
    for core_only in ("answer", "forget", "switch_space"):
        unknown = call(graph_url(asgi_server), token, core_only, {})
        assert unknown.is_error is True and structured(unknown)["details"]["tool"] == core_only


# === relate and get_context ==============================================================


def test_it_supersedes_paris_by_berlin_and_keeps_paris_as_history(asgi_server, alice):
    token, app = grant(asgi_server, alice, "Alice's Graph Agent")
    url = graph_url(asgi_server)

    paris = ok(
        url, token, "relate", {"source": "Alice Novak", "target": "Paris", "relation_type": "lives_in"}
    )
    assert paris["created"] is True and paris["superseded"] == [] and paris["evidence_count"] == 1
    assert paris["relation"]["subject"]["type"] == "Person"
    assert paris["relation"]["object"]["type"] == "Location"
    assert sorted(e["name"] for e in paris["entities_created"]) == ["Alice Novak", "Paris"]
    between = datetime.now(UTC)

    berlin = ok(
        url, token, "relate", {"source": "alice  NOVAK", "target": "Berlin", "relation_type": "lives_in"}
    )
    assert berlin["created"] is True
    assert berlin["superseded"] == [paris["relation"]["id"]]
    assert berlin["relation"]["subject"]["id"] == paris["relation"]["subject"]["id"]  # same person, any case
    assert [e["name"] for e in berlin["entities_created"]] == ["Berlin"]

    now = ok(url, token, "get_context", {"entity_name": "Alice Novak"})
    assert now["entity"]["name"] == "Alice Novak" and now["entity"]["type"] == "Person"
    assert lives_in(now) == ["Berlin"]
    (current,) = now["relations"]
    assert current["current"] is True and current["direction"] == "outgoing"
    assert current["clocks"]["superseded_at"] is None and current["evidence_count"] == 1

    # Paris is history: superseded by Berlin, closed, and contradicted by Berlin's claim.
    old = Relation.objects.get(id=paris["relation"]["id"])
    assert old.superseded_at is not None and str(old.superseded_by_id) == berlin["relation"]["id"]
    assert old.valid_until is not None and old.valid_until <= old.superseded_at
    contradicting = Evidence.objects.get(relation=old, stance=Evidence.Stance.CONTRADICTS)
    assert str(contradicting.source_id) == berlin["source_id"]
    claim = Source.objects.get(id=berlin["source_id"])
    assert claim.origin == Source.Origin.RELATE and claim.content == "Alice Novak lives_in Berlin"
    assert claim.agent_id == app.pk and claim.claimant == f"agent:{app.pk}" and claim.owner_id == alice.pk

    # As of a time between the two claims, Alice lived in Paris.
    then = ok(url, token, "get_context", {"entity_name": "Alice Novak", "at": between.isoformat()})
    assert lives_in(then) == ["Paris"]
    (was,) = then["relations"]
    assert was["current"] is False and was["clocks"]["superseded_at"] is not None
    assert was["contradiction_count"] == 1 and then["at"] is not None

    # From Paris's side: no current relation, an incoming one in the past.
    assert ok(url, token, "get_context", {"entity_name": "paris"})["relations"] == []
    incoming = ok(url, token, "get_context", {"entity_name": "paris", "at": between.isoformat()})["relations"]
    assert [(r["direction"], r["other"]["name"]) for r in incoming] == [("incoming", "Alice Novak")]

    audit = AuditEvent.objects.filter(owner_id_snapshot=alice.pk, action=AuditEvent.Action.RELATION_CREATED)
    assert audit.count() == 2 and {a.actor_agent_id for a in audit} == {app.pk}
    for event in audit:
        assert not any(word in json.dumps(event.detail) for word in ALICE_WORDS), event.detail


def test_a_claim_told_late_about_an_earlier_time_becomes_history(asgi_server, alice):
    token = rpc.pat_token(alice)
    url = graph_url(asgi_server)
    ok(url, token, "relate", {"source": "Ana", "target": "Acme", "relation_type": "works_at"})
    late = ok(
        url,
        token,
        "relate",
        {
            "source": "Ana",
            "target": "Initech",
            "relation_type": "works_at",
            "valid_from": "2019-03-01T00:00:00+00:00",
        },
    )
    # Ana worked at Initech before she worked at Acme: Acme stays current.
    assert late["created"] is True and late["superseded"] == [] and late["relation"]["current"] is False
    assert late["relation"]["clocks"]["valid_until"] is not None
    context = ok(url, token, "get_context", {"entity_name": "Ana"})
    assert [r["other"]["name"] for r in context["relations"]] == ["Acme"]
    # At a time in 2020 Ana worked at Initech, as the service knows it now (it learned it late), and
    # not yet at Acme, which she joined when that was recorded.
    then = ok(url, token, "get_context", {"entity_name": "Ana", "at": "2020-01-01T00:00:00+00:00"})
    assert [r["other"]["name"] for r in then["relations"]] == ["Initech"]
    before = ok(url, token, "get_context", {"entity_name": "Ana", "at": "2019-01-01T00:00:00+00:00"})
    assert before["relations"] == []


def test_the_same_claim_from_two_agents_is_two_evidence_and_from_one_agent_twice_is_one(asgi_server, alice):
    url = graph_url(asgi_server)
    first, first_app = grant(asgi_server, alice, "First Agent")
    second, second_app = grant(asgi_server, alice, "Second Agent")
    claim = {"source": "Alice Novak", "target": "Acme Corp", "relation_type": "works_at"}

    one = ok(url, first, "relate", claim)
    assert one["created"] is True and one["evidence_count"] == 1
    two = ok(url, second, "relate", claim)
    assert two["created"] is False and two["relation"]["id"] == one["relation"]["id"]
    assert two["evidence_count"] == 2 and two["superseded"] == []
    again = ok(url, first, "relate", claim)
    assert again["created"] is False and again["evidence_count"] == 2
    assert Relation.objects.filter(owner=alice).count() == 1
    assert Evidence.objects.filter(relation_id=one["relation"]["id"], stance="supports").count() == 3
    context = ok(url, first, "get_context", {"entity_name": "acme corp"})
    assert [(r["direction"], r["evidence_count"]) for r in context["relations"]] == [("incoming", 2)]

    # One agent saying another thing twice: two claims stored, one piece of evidence.
    repeated = {"source": "Alice Novak", "target": "Lisbon", "relation_type": "lives_in"}
    assert ok(url, first, "relate", repeated)["evidence_count"] == 1
    twice = ok(url, first, "relate", repeated)
    assert twice["created"] is False and twice["evidence_count"] == 1
    assert (
        Source.objects.filter(owner=alice, origin="relate", content="Alice Novak lives_in Lisbon").count()
        == 2
    )
    assert {s.claimant for s in Source.objects.filter(owner=alice, origin="relate")} == {
        f"agent:{first_app.pk}",
        f"agent:{second_app.pk}",
    }


def test_it_links_relations_to_the_entities_the_worker_extracted(asgi_server, alice):
    token, _ = grant(asgi_server, alice, "Alice's Graph Agent")
    url = graph_url(asgi_server)
    paris_job = remembered(url, token, "Alice Novak lives in Paris.")
    between = datetime.now(UTC)
    berlin_job = remembered(url, token, "Alice Novak lives in Berlin.")
    person = Entity.objects.get(owner=alice, type="Person", normalized_name="alice novak")

    context = ok(url, token, "get_context", {"entity_name": "ALICE NOVAK"})
    assert context["entity"]["id"] == str(person.id)
    assert [m["content"] for m in context["memories"]] == ["Alice Novak lives in Berlin."]
    (memory,) = context["memories"]
    assert memory["id"] == str(Memory.objects.get(job=berlin_job).id)
    assert (
        memory["kind"] == "fact"
        and memory["evidence_count"] == 1
        and memory["clocks"]["superseded_at"] is None
    )
    assert context["memory_total"] == 1
    then = ok(url, token, "get_context", {"entity_name": "Alice Novak", "at": between.isoformat()})
    assert [m["id"] for m in then["memories"]] == [str(Memory.objects.get(job=paris_job).id)]

    related = ok(
        url, token, "relate", {"source": "Alice Novak", "target": "Acme Corp", "relation_type": "works_at"}
    )
    assert related["relation"]["subject"]["id"] == str(person.id)
    assert [e["name"] for e in related["entities_created"]] == ["Acme Corp"]
    listed = {e["name"]: e for e in ok(url, token, "list_entities", {})["entities"]}
    assert listed["Alice Novak"]["memory_count"] == 1 and listed["Alice Novak"]["relation_count"] == 1
    assert listed["Berlin"]["memory_count"] == 1 and listed["Berlin"]["type"] == "Location"
    assert listed["Paris"]["memory_count"] == 0  # its memory is superseded
    assert listed["Acme Corp"]["relation_count"] == 1 and listed["Acme Corp"]["type"] == "Organization"


def test_one_name_is_one_entity_whose_stated_types_refine_its_type(asgi_server, alice):
    token = rpc.pat_token(alice)
    url = graph_url(asgi_server)
    place = {"source_type": "Location", "target_type": "Location"}
    ok(url, token, "relate", {"source": "Jordan", "target": "Amman", "relation_type": "has", **place})
    person = {"source": "Jordan", "source_type": "Person"}
    works = ok(url, token, "relate", {**person, "target": "Acme", "relation_type": "works_at"})
    # A stated type is a mention of that type, not another entity: only Acme is new.
    assert [e["type"] for e in works["entities_created"]] == ["Organization"]
    ok(url, token, "relate", {**person, "target": "Lena", "relation_type": "related_to"})
    ok(url, token, "relate", {**person, "target": "Judo", "relation_type": "wants"})

    context = ok(url, token, "get_context", {"entity_name": "jordan"})
    assert context["entity"]["type"] == "Person" and context["entity"]["relation_count"] == 4
    assert context["entity"]["attributes"]["type_votes"] == {"Location": 1, "Person": 3}
    assert context["also_named"] == []
    # Without a stated type, relate finds the entity of that name and leaves its type as it is.
    moved = ok(url, token, "relate", {"source": "JORDAN", "target": "Oslo", "relation_type": "lives_in"})
    assert (
        moved["relation"]["subject"]["id"] == context["entity"]["id"]
        and moved["entities_created"][0]["name"] == "Oslo"
    )
    # An alias finds the entity too.
    Entity.objects.filter(id=context["entity"]["id"]).update(aliases=["Jordi Lopez"])
    by_alias = ok(url, token, "get_context", {"entity_name": "jordi lópez"})
    assert by_alias["entity"]["id"] == context["entity"]["id"] and by_alias["entity"]["aliases"] == [
        "Jordi Lopez"
    ]

    missing = err(url, token, "get_context", {"entity_name": "Nobody Here"})
    assert missing["code"] == "entity_not_found" and "list_entities" in missing["agent_action"]


def test_relate_refuses_one_entity_as_both_ends(asgi_server, alice):
    token = rpc.pat_token(alice)
    url = graph_url(asgi_server)
    before = graph_rows()
    error = err(url, token, "relate", {"source": "Bruno", "target": " bruno ", "relation_type": "related_to"})
    assert error["code"] == "same_entity", error
    assert graph_rows() == before


def test_it_pages_list_entities_by_name_and_type(asgi_server, alice):
    token = rpc.pat_token(alice)
    url = graph_url(asgi_server)
    for target in ("Delta", "Bravo", "Echo", "Alpha", "Charlie Project"):
        ok(url, token, "relate", {"source": "Zed", "target": target, "relation_type": "related_to"})
    ok(url, token, "relate", {"source": "Mia", "target": "Rome", "relation_type": "lives_in"})

    names: list[str] = []
    cursor = None
    pages = 0
    while True:
        arguments: dict[str, Any] = {"limit": 3, "type": "Concept"}
        if cursor:
            arguments["cursor"] = cursor
        page = ok(url, token, "list_entities", arguments)
        assert len(page["entities"]) <= 3 and all(e["type"] == "Concept" for e in page["entities"])
        names.extend(e["name"] for e in page["entities"])
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert names == ["Alpha", "Bravo", "Charlie Project", "Delta", "Echo", "Zed"] and pages == 2
    every = ok(url, token, "list_entities", {})
    assert [e["name"] for e in every["entities"]] == sorted([*names, "Mia", "Rome"])
    assert [e["name"] for e in ok(url, token, "list_entities", {"type": "Location"})["entities"]] == ["Rome"]
    assert ok(url, token, "list_entities", {"type": "Product"})["entities"] == []
    for cursor in ("not-a-cursor", "eyJuIjogMX0", "%%%"):
        assert err(url, token, "list_entities", {"cursor": cursor})["code"] == "invalid_cursor"


# === switch_agent =======================================================================


def test_switch_agent_moves_one_grant_and_later_calls_use_it(asgi_server, alice):
    default = space_create_default(owner=alice)
    work = space_create(actor=Actor.owner_acting(alice), name="Work")
    url = graph_url(asgi_server)
    first, first_app = grant(asgi_server, alice, "Work Agent")
    second, _ = grant(asgi_server, alice, "Home Agent")

    switched = ok(url, first, "switch_agent", {"agent_id": str(work.id)})
    assert switched["previous_agent_id"] == str(default.id) and switched["agent_id"] == str(work.id)
    assert switched["previous"] == {"id": str(default.id), "name": "Personal"}
    assert switched["current"] == {"id": str(work.id), "name": "Work"}
    assert switched["changed"] is True and switched["health"]["database"]["reachable"] is True
    assert switched["health"]["active_memories"] == 0
    choice = GrantSpace.objects.get(owner=alice)
    assert choice.application_id == first_app.pk and choice.space_id == work.id
    event = AuditEvent.objects.get(owner_id_snapshot=alice.pk, action=AuditEvent.Action.SPACE_SWITCHED)
    assert event.detail == {"from": str(default.id), "to": str(work.id), "grant": "oauth"}

    # Later calls of the same grant (new MCP sessions) write into and read from Work.
    job = remembered(url, first, "The quarterly review with Malia is on Thursday.")
    assert job.space_id == work.id
    assert Memory.objects.get(job=job).space_id == work.id
    found = ok(url, first, "recall", {"query": "quarterly review Malia"})["memories"]
    assert [m["space"]["id"] for m in found] == [str(work.id)]
    relation = ok(url, first, "relate", {"source": "Malia", "target": "Globex", "relation_type": "works_at"})
    assert relation["space"]["id"] == str(work.id)
    assert ok(url, first, "list_entities", {})["space"]["id"] == str(work.id)
    assert read_resources(url, first, ["graph://stats"])["graph://stats"]["space"]["id"] == str(work.id)
    # A new token of the same grant, on the core endpoint, is in Work too.
    refreshed, _ = rpc.oauth_token(alice, core_url(asgi_server), application=first_app)
    again = ok(core_url(asgi_server), refreshed, "recall", {"query": "quarterly review Malia"})["memories"]
    assert [m["id"] for m in again] == [m["id"] for m in found]

    # Another grant of the same user stays in the default space.
    assert ok(url, second, "recall", {"query": "quarterly review Malia"})["memories"] == []
    assert ok(url, second, "list_entities", {})["entities"] == []
    home = remembered(url, second, "My bicycle is a green Bianchi.")
    assert home.space_id == default.id
    found_home = ok(url, second, "recall", {"query": "bicycle"})["memories"]
    assert [(m["content"], m["space"]["id"]) for m in found_home] == [
        ("My bicycle is a green Bianchi.", str(default.id))
    ]

    # A personal token is a grant of its own; its health check sees Work's memory.
    pat = rpc.pat_token(alice)
    seen = ok(url, pat, "switch_agent", {"agent_id": str(work.id)})
    assert seen["health"]["active_memories"] == 1 and seen["health"]["pending_saves"] == 0
    assert seen["health"]["entities"] == Entity.objects.filter(owner=alice, space=work).count() > 0
    assert GrantSpace.objects.filter(owner=alice).count() == 2

    back = ok(url, first, "switch_agent", {"agent_id": str(default.id)})
    assert back["previous_agent_id"] == str(work.id) and back["agent_id"] == str(default.id)
    # Asked for both, recall finds only what the current space holds (the review is in Work).
    after = ok(url, first, "recall", {"query": "quarterly review Malia, or my bicycle"})["memories"]
    assert after and {m["space"]["id"] for m in after} == {str(default.id)}
    assert all("Malia" not in m["content"] for m in after)


def test_it_reads_ids_and_times_in_every_spelling_the_contracts_allow(asgi_server, alice):
    space_create_default(owner=alice)
    work = space_create(actor=Actor.owner_acting(alice), name="Work")
    token = rpc.pat_token(alice)
    url = graph_url(asgi_server)

    switched = ok(url, token, "switch_agent", {"agent_id": str(work.id).upper()})
    assert switched["current"] == {"id": str(work.id), "name": "Work"} and switched["changed"] is True

    # Lower-case t and an offset: stored as the instant they name.
    initech = ok(
        url,
        token,
        "relate",
        {
            "source": "Ana",
            "target": "Initech",
            "relation_type": "works_at",
            "valid_from": "2019-03-01t02:00:00+02:00",
        },
    )
    assert Relation.objects.get(id=initech["relation"]["id"]).valid_from == datetime(2019, 3, 1, tzinfo=UTC)
    between = datetime.now(UTC)
    ok(url, token, "relate", {"source": "Ana", "target": "Acme", "relation_type": "works_at"})

    in_utc = ok(
        url, token, "get_context", {"entity_name": "Ana", "at": between.strftime("%Y-%m-%dT%H:%M:%S.%fz")}
    )
    west = (between - timedelta(hours=7)).strftime("%Y-%m-%dT%H:%M:%S.%f") + "-07:00"
    in_the_west = ok(url, token, "get_context", {"entity_name": "Ana", "at": west})
    assert [r["other"]["name"] for r in in_utc["relations"]] == ["Initech"]
    assert in_the_west["relations"] == in_utc["relations"]
    assert datetime.fromisoformat(in_the_west["at"]) == datetime.fromisoformat(in_utc["at"]) == between


@pytest.fixture(params=["oauth", "pat"])
def charlie_token(request, asgi_server, charlie) -> str:
    if request.param == "oauth":
        raw, _ = grant(asgi_server, charlie, "Charlie's Agent")
        return raw
    return rpc.pat_token(charlie)


def test_switch_agent_to_a_space_not_of_the_caller_changes_nothing(
    asgi_server, alice, charlie, charlie_token
):
    alice_space = space_create(actor=Actor.owner_acting(alice), name="Secret Project")
    space_create_default(owner=alice)
    url = graph_url(asgi_server)
    before = graph_rows()
    charlies = space_create_default(owner=charlie)
    for space_id in (str(alice_space.id), str(uuid.uuid4())):
        error = err(url, charlie_token, "switch_agent", {"agent_id": space_id})
        assert error["code"] == "space_not_found", error
        assert "Secret Project" not in json.dumps(error) and error["details"]["agent_id"] == space_id
        # The ids Charlie may use instead: his own spaces, none of Alice's.
        assert error["details"]["spaces"] == [{"id": str(charlies.id), "name": "Personal"}]
    assert graph_rows() == before
    # Charlie still works in his own default space.
    assert ok(url, charlie_token, "list_entities", {})["space"]["id"] == str(
        Space.objects.get(owner=charlie, is_default=True).id
    )


def test_switch_agent_needs_a_grant(alice):
    work = space_create(actor=Actor.owner_acting(alice), name="Work")
    session = Caller(user=alice, scopes=ALL_SCOPES, via="session")
    with pytest.raises(AppError) as raised:
        registry.run("switch_agent", session, {"agent_id": str(work.id)})
    assert raised.value.code == "switch_space_unavailable"
    assert not GrantSpace.objects.exists()


# === outsiders ==========================================================================


@pytest.fixture
def alice_graph(asgi_server, alice) -> dict[str, Any]:
    """Alice's graph, built the real way: a remembered fact, then Paris and Berlin via relate."""
    token, _ = grant(asgi_server, alice, "Alice's Graph Agent")
    url = graph_url(asgi_server)
    remembered(url, token, "Alice Novak works at Acme Corp.")
    paris = ok(
        url, token, "relate", {"source": "Alice Novak", "target": "Paris", "relation_type": "lives_in"}
    )
    berlin = ok(
        url, token, "relate", {"source": "Alice Novak", "target": "Berlin", "relation_type": "lives_in"}
    )
    return {"token": token, "paris": paris, "berlin": berlin}


def alice_ids(alice: User) -> set[str]:
    return {
        *(str(i) for i in Entity.objects.filter(owner=alice).values_list("id", flat=True)),
        *(str(i) for i in Relation.objects.filter(owner=alice).values_list("id", flat=True)),
        *(str(i) for i in Memory.objects.filter(owner=alice).values_list("id", flat=True)),
        *(str(i) for i in Space.objects.filter(owner=alice).values_list("id", flat=True)),
    }


def assert_nothing_of_alice(payload: Any, alice: User) -> None:
    text = json.dumps(payload)
    for word in ALICE_WORDS:
        assert word not in text, word
    for identifier in alice_ids(alice):
        assert identifier not in text, identifier


def alice_relations(alice: User) -> list[tuple[Any, ...]]:
    rows = Relation.objects.filter(owner=alice).order_by("id")
    return [(r.id, r.subject_id, r.object_id, r.superseded_at, r.valid_until, r.space_id) for r in rows]


def test_an_outsider_never_sees_alices_graph(asgi_server, alice, charlie, alice_graph, charlie_token):
    url = graph_url(asgi_server)
    # The control: Alice's own token finds what Charlie's must not.
    mine = ok(url, alice_graph["token"], "get_context", {"entity_name": "Alice Novak"})
    assert lives_in(mine) == ["Berlin"] and mine["memories"]

    for name in ("Alice Novak", "Paris", "Berlin", "Acme Corp"):
        missing = err(url, charlie_token, "get_context", {"entity_name": name})
        assert missing["code"] == "entity_not_found"
        assert_nothing_of_alice({k: v for k, v in missing.items() if k != "details"}, alice)
    listed = ok(url, charlie_token, "list_entities", {"limit": 200})
    assert listed["entities"] == [] and listed["next_cursor"] is None
    assert_nothing_of_alice(listed, alice)

    payloads = read_resources(url, charlie_token)
    assert payloads["graph://entities"]["entities"] == []
    assert payloads["graph://memories"]["memories"] == []
    assert payloads["graph://relations"]["relations"] == []
    stats = payloads["graph://stats"]
    assert stats["entities"]["total"] == 0 and stats["memories"]["total"] == 0
    assert stats["relations"] == {"current": 0, "total": 0} and stats["sources"] == 0
    assert_nothing_of_alice(payloads, alice)


def test_relate_by_an_outsider_writes_only_into_the_outsiders_space(
    asgi_server, alice, charlie, alice_graph, charlie_token
):
    url = graph_url(asgi_server)
    before = alice_relations(alice)
    alice_entities = Entity.objects.filter(owner=alice).count()
    madrid = ok(
        url,
        charlie_token,
        "relate",
        {"source": "Alice Novak", "target": "Madrid", "relation_type": "lives_in"},
    )
    # Charlie's "Alice Novak" is a new entity of his own; Alice's Berlin is untouched.
    assert madrid["created"] is True and madrid["superseded"] == []
    assert sorted(e["name"] for e in madrid["entities_created"]) == ["Alice Novak", "Madrid"]
    relation = Relation.objects.get(id=madrid["relation"]["id"])
    assert relation.owner_id == charlie.pk and relation.space.owner_id == charlie.pk
    assert relation.subject.owner_id == charlie.pk
    assert Source.objects.get(id=madrid["source_id"]).owner_id == charlie.pk
    assert alice_relations(alice) == before
    assert Entity.objects.filter(owner=alice).count() == alice_entities
    assert madrid["relation"]["subject"]["id"] not in alice_ids(alice)

    theirs = ok(url, charlie_token, "get_context", {"entity_name": "Alice Novak"})
    assert lives_in(theirs) == ["Madrid"] and theirs["memories"] == [] and theirs["also_named"] == []
    assert lives_in(ok(url, alice_graph["token"], "get_context", {"entity_name": "Alice Novak"})) == [
        "Berlin"
    ]


# === resources ==========================================================================


def expected_stats(owner: User, space: Space) -> dict[str, Any]:
    """The counts of one user's space, straight from the database."""
    now = timezone.now()
    memories = Memory.objects.filter(owner=owner, space=space)
    current = Q(superseded_at__isnull=True) & (Q(valid_until__isnull=True) | Q(valid_until__gt=now))
    relations = Relation.objects.filter(owner=owner, space=space)
    entities = Entity.objects.filter(owner=owner, space=space)
    return {
        "entities": {
            "total": entities.count(),
            "by_type": {t: entities.filter(type=t).count() for t in Entity.Type.values},
        },
        "memories": {
            "total": memories.count(),
            "active": memories.filter(current, status="active").count(),
            "suppressed": memories.filter(status="suppressed", superseded_at__isnull=True).count(),
            "superseded": memories.filter(superseded_at__isnull=False).count(),
            "expired": memories.filter(
                status="active", superseded_at__isnull=True, valid_until__lte=now
            ).count(),
        },
        "relations": {"current": relations.filter(current).count(), "total": relations.count()},
        "sources": Source.objects.filter(owner=owner, space=space).count(),
    }


def test_graph_stats_match_the_database_for_that_user_and_space_only(asgi_server, alice, bob):
    url = graph_url(asgi_server)
    token, _ = grant(asgi_server, alice, "Alice's Graph Agent")
    alice_space = space_create_default(owner=alice)
    remembered(url, token, "Alice Novak lives in Paris.")
    remembered(url, token, "Alice Novak lives in Berlin.")
    private = remembered(url, token, "My locker code is 4471.")
    ok(url, token, "invalidate", {"memory_id": str(Memory.objects.get(job=private).id)})
    ok(url, token, "relate", {"source": "Alice Novak", "target": "Acme Corp", "relation_type": "works_at"})
    ok(url, token, "relate", {"source": "Alice Novak", "target": "Globex", "relation_type": "works_at"})
    # Alice's other space and Bob's graph are in the same database.
    pat = rpc.pat_token(alice)
    work = space_create(actor=Actor.owner_acting(alice), name="Work")
    ok(url, pat, "switch_agent", {"agent_id": str(work.id)})
    ok(url, pat, "relate", {"source": "Team Alpha", "target": "Project Kite", "relation_type": "has"})
    remembered(url, pat, "Project Kite ships in May.")
    bob_token, _ = grant(asgi_server, bob, "Bob's Agent")
    remembered(url, bob_token, "Bob Stone lives in Madrid.")
    ok(url, bob_token, "relate", {"source": "Bob Stone", "target": "Initech", "relation_type": "works_at"})

    payloads = read_resources(url, token)
    stats = payloads["graph://stats"]
    assert stats["space"] == {"id": str(alice_space.id), "name": "Personal"}
    expected = expected_stats(alice, alice_space)
    assert {k: stats[k] for k in expected} == expected
    # What this space holds, known from what was saved above.
    assert stats["memories"]["superseded"] == 1 and stats["memories"]["suppressed"] == 1
    assert stats["memories"]["active"] == 1 and stats["memories"]["total"] == 3
    assert stats["relations"] == {"current": 1, "total": 2}
    assert stats["entities"]["by_type"]["Person"] == 1 and stats["entities"]["by_type"]["Organization"] == 2
    assert stats["sources"] == 5 and stats["pending_saves"] == 0

    # The other resources list exactly what the stats count.
    memories = payloads["graph://memories"]
    assert [m["content"] for m in memories["memories"]] == ["Alice Novak lives in Berlin."]
    assert memories["count"] == stats["memories"]["active"] and memories["truncated"] is False
    assert {e["name"] for e in memories["memories"][0]["entities"]} == {"Alice Novak", "Berlin"}
    relations = payloads["graph://relations"]["relations"]
    assert [r["statement"] for r in relations] == ["Alice Novak works_at Globex"]
    assert relations[0]["current"] is True and relations[0]["evidence_count"] == 1
    entities = payloads["graph://entities"]
    assert entities["count"] == stats["entities"]["total"]
    assert [e["name"] for e in entities["entities"]] == [
        "Acme Corp",
        "Alice Novak",
        "Berlin",
        "Globex",
        "Paris",
    ]
    for word in ("Kite", "Team Alpha", "Bob", "Madrid", "Initech", "locker"):
        assert word not in json.dumps(payloads), word

    # The same reads by Bob and by Alice's switched grant count their own rows only.
    bob_stats = read_resources(url, bob_token, ["graph://stats"])["graph://stats"]
    bob_expected = expected_stats(bob, Space.objects.get(owner=bob, is_default=True))
    assert {k: bob_stats[k] for k in bob_expected} == bob_expected
    assert bob_stats["relations"] == {"current": 1, "total": 1}
    work_stats = read_resources(url, pat, ["graph://stats"])["graph://stats"]
    assert work_stats["space"]["id"] == str(work.id)
    assert {k: work_stats[k] for k in expected} == expected_stats(alice, work)


# === strict schemas and scopes ==========================================================

REJECTED: list[tuple[str, dict[str, Any], str]] = [
    ("relate", {"source": "A", "target": "B", "relation_type": "lives_in", "weight": 1}, "unknown_field"),
    ("relate", {"source": 5, "target": "B", "relation_type": "lives_in"}, "wrong_type"),
    ("relate", {"source": "A", "target": ["B"], "relation_type": "lives_in"}, "wrong_type"),
    ("relate", {"source": "A", "target": "B", "relation_type": "loves"}, "invalid_value"),
    (
        "relate",
        {"source": "A", "target": "B", "relation_type": "has", "source_type": "Planet"},
        "invalid_value",
    ),
    ("relate", {"source": "A" * 201, "target": "B", "relation_type": "has"}, "value_too_long"),
    ("relate", {"source": "A", "target": "   ", "relation_type": "has"}, "value_too_short"),
    ("relate", {"source": "A", "relation_type": "has"}, "missing_field"),
    ("relate", {"source": "A", "target": "B"}, "missing_field"),
    (
        "relate",
        {"source": "A", "target": "B", "relation_type": "has", "valid_from": "last May"},
        "invalid_format",
    ),
    (
        "relate",
        {"source": "A", "target": "B", "relation_type": "has", "valid_from": "2024-05-01T10:00:00"},
        "invalid_format",
    ),
    ("relate", {"source": "A\x00", "target": "B", "relation_type": "has"}, "invalid_characters"),
    ("get_context", {}, "missing_field"),
    ("get_context", {"entity_name": "A", "depth": 2}, "unknown_field"),
    ("get_context", {"entity_name": 7}, "wrong_type"),
    ("get_context", {"entity_name": "x" * 201}, "value_too_long"),
    ("get_context", {"entity_name": "Alice", "at": "yesterday"}, "invalid_format"),
    ("get_context", {"entity_name": "Alice", "at": "20240508T140000+0200"}, "invalid_format"),
    ("get_context", {"entity_name": "Alice", "at": "2024-05-08T14:00+02:00"}, "invalid_format"),
    ("list_entities", {"type": "Planet"}, "invalid_value"),
    ("list_entities", {"limit": 0}, "value_out_of_range"),
    ("list_entities", {"limit": 201}, "value_out_of_range"),
    ("list_entities", {"limit": "5"}, "wrong_type"),
    ("list_entities", {"limit": True}, "wrong_type"),
    ("list_entities", {"cursor": "x" * 601}, "value_too_long"),
    ("list_entities", {"space_id": str(uuid.uuid4())}, "unknown_field"),
    ("switch_agent", {}, "missing_field"),
    ("switch_agent", {"agent_id": "not-a-uuid"}, "invalid_format"),
    ("switch_agent", {"agent_id": f"urn:uuid:{uuid.uuid4()}"}, "invalid_format"),
    ("switch_agent", {"agent_id": f"{{{uuid.uuid4()}}}"}, "invalid_format"),
    ("switch_agent", {"agent_id": 42}, "wrong_type"),
    ("switch_agent", {"agent_id": str(uuid.uuid4()), "persist": True}, "unknown_field"),
    ("switch_agent", {"space_id": str(uuid.uuid4())}, "unknown_field"),
]


@pytest.mark.parametrize("kind", ["oauth", "pat"])
def test_strict_schemas_reject_bad_arguments_and_store_nothing(asgi_server, alice, kind):
    token = grant(asgi_server, alice, "Strict Agent")[0] if kind == "oauth" else rpc.pat_token(alice)
    space_create_default(owner=alice)
    before = graph_rows()

    async def steps(session: ClientSession) -> list[tuple[str, str, str]]:
        outcomes = []
        for tool, arguments, _ in REJECTED:
            result = await session.call_tool(tool, arguments)
            outcomes.append((tool, json.dumps(arguments)[:80], error_code(result)))
        return outcomes

    outcomes = session_run(graph_url(asgi_server), token, steps)
    assert [code for _, _, code in outcomes] == [code for _, _, code in REJECTED], outcomes
    assert graph_rows() == before


@pytest.mark.parametrize("kind", ["oauth", "pat"])
def test_a_read_only_token_gets_403_on_relate_and_may_read(asgi_server, alice, kind):
    url = graph_url(asgi_server)
    writer = rpc.pat_token(alice)
    ok(url, writer, "relate", {"source": "Alice Novak", "target": "Paris", "relation_type": "lives_in"})
    if kind == "oauth":
        token, _ = grant(asgi_server, alice, "Reader Agent", scopes=(READ,))
    else:
        token = rpc.pat_token(alice, scopes=(READ,))
    before = graph_rows()

    # The endpoint answers HTTP 403 before the tool runs; the SDK raises.
    with pytest.raises(BaseExceptionGroup) as raised:
        call(url, token, "relate", {"source": "Alice Novak", "target": "Berlin", "relation_type": "lives_in"})
    assert mcp_error(raised.value).message == "Server returned an error response"

    body = rpc.tools_call("relate", {"source": "Alice Novak", "target": "Rome", "relation_type": "lives_in"})
    response = httpx.post(
        url,
        content=json.dumps(body),
        headers={**rpc.routing_headers(body, rpc.LEGACY), "Authorization": f"Bearer {token}"},
        timeout=30,
    )
    rpc.assert_clean(response)
    assert response.status_code == 403, response.text
    header = response.headers["www-authenticate"]
    assert header.startswith('Bearer error="insufficient_scope"'), header
    assert 'scope="memory:read memory:write"' in header
    assert f'resource_metadata="{asgi_server.url}/.well-known/oauth-protected-resource/mcp/graph"' in header
    assert graph_rows() == before

    # Reading needs only memory:read.
    assert lives_in(ok(url, token, "get_context", {"entity_name": "Alice Novak"})) == ["Paris"]
    assert [e["name"] for e in ok(url, token, "list_entities", {})["entities"]] == ["Alice Novak", "Paris"]
    assert read_resources(url, token, ["graph://relations"])["graph://relations"]["count"] == 1
    switched = ok(url, token, "switch_agent", {"agent_id": str(Space.objects.get(owner=alice).id)})
    assert switched["changed"] is False


# === races ==============================================================================


def test_concurrent_relates_of_one_subject_leave_one_current_single_valued_relation(asgi_server, alice):
    """The subject's row lock: eight moves at once (and a new subject created by all of them)
    end with one entity, one current lives_in, and every other one superseded by a later one."""
    url = graph_url(asgi_server)
    tokens = [grant(asgi_server, alice, f"Racing Agent {i}")[0] for i in range(8)]
    cities = ["Oslo", "Riga", "Quito", "Lima", "Kyiv", "Baku", "Doha", "Suva"]

    def move(i: int) -> dict[str, Any]:
        return ok(
            url, tokens[i], "relate", {"source": "Nora Vik", "target": cities[i], "relation_type": "lives_in"}
        )

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(move, range(8)))
    assert all(r["created"] for r in results)
    assert Entity.objects.filter(owner=alice, normalized_name="nora vik").count() == 1
    relations = Relation.objects.filter(owner=alice, type="lives_in")
    assert relations.count() == 8
    (current,) = relations.filter(superseded_at__isnull=True)
    for older in relations.exclude(id=current.id):
        assert older.superseded_by_id is not None and older.superseded_by.recorded_at >= older.recorded_at
    context = ok(url, tokens[0], "get_context", {"entity_name": "Nora Vik"})
    assert [r["id"] for r in context["relations"]] == [str(current.id)]
    # Every superseded relation is contradicted by the claim that replaced it.
    assert Evidence.objects.filter(relation__in=relations, stance="contradicts").count() == 7


def test_get_context_shows_what_each_memory_replaced(db, alice):
    """The chain is visible where an agent reads an entity: the current memory and its history."""
    from tests.memories.test_api_read import default_space, make_memory

    berlin_entity = Entity.objects.create(
        owner=alice, space=default_space(alice), name="Berlin", normalized_name="berlin", type="Location"
    )
    newer = make_memory(alice, "I moved to Berlin.")
    older = make_memory(alice, "I live in Paris.", superseded_at=newer.recorded_at, superseded_by=newer)
    link(newer, berlin_entity)
    result = registry.run("get_context", Caller(user=alice, scopes=ALL_SCOPES), {"entity_name": "Berlin"})
    [shown] = result["memories"]
    assert shown["id"] == str(newer.id)
    assert [(r["id"], r["content"], r["superseded_by"]) for r in shown["replaced"]] == [
        (str(older.id), "I live in Paris.", str(newer.id))
    ]
