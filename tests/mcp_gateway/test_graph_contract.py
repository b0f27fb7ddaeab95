"""The context-graph contract at /mcp/graph, as an agent given the contract's own system prompt uses
it: exactly its seven tools in its order, with its parameters, enums and defaults; remember with a
category, entities, confidence and sourceText; recall with a limit; invalidate; switch_agent; and the
contract's workflow end to end. Over the official Python MCP SDK (and once over the stdio proxy),
with the real worker and model.

Alice owns the memories; Charlie is the outsider who must neither see nor change them.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.test import Client
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from accounts.caller import Actor
from mcp_gateway.stdio_proxy import DeepRecallClient, StdioProxy
from memories.models import AuditEvent, Entity, Job, Memory, Source, Space
from memories.pipeline.extract import extract
from memories.services.memories import memory_restore
from memories.services.spaces import space_create, space_create_default
from tests.helpers import READ, pat_client
from tests.mcp_gateway import rpc
from tests.mcp_gateway.sdk import session_run, structured
from tests.mcp_gateway.test_graph_profile import err, graph_rows, graph_url, ok

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# `deeprecall mcp`, the console script of this environment.
PROXY_SCRIPT = Path(sys.executable).parent / "deeprecall"

# The contract's tables (contracts/graph-mcp.txt): tool, {parameter: JSON type}, required.
CONTRACT: list[tuple[str, dict[str, str], list[str]]] = [
    (
        "remember",
        {
            "content": "string",
            "category": "string",
            "entities": "array",
            "confidence": "number",
            "sourceText": "string",
        },
        ["content", "category"],
    ),
    ("recall", {"query": "string", "limit": "number"}, ["query"]),
    ("get_context", {"entity_name": "string"}, ["entity_name"]),
    ("list_entities", {"type": "string"}, []),
    ("invalidate", {"memory_id": "string", "reason": "string"}, ["memory_id"]),
    (
        "relate",
        {"source": "string", "target": "string", "relation_type": "string"},
        ["source", "target", "relation_type"],
    ),
    ("switch_agent", {"agent_id": "string"}, ["agent_id"]),
]
CATEGORIES = ["fact", "preference", "intent", "decision", "context"]
ENTITY_TYPES = [
    "Person",
    "Organization",
    "Product",
    "Amount",
    "Date",
    "Location",
    "Concept",
    "Decision",
    "Action",
]
RELATION_TYPES = [
    "works_at",
    "wants",
    "has",
    "is_a",
    "related_to",
    "caused",
    "approved",
    "declined",
    "lives_in",
    "resulted_in",
    "mentioned_with",
]
CONTRACT_TOOLS = [name for name, _, _ in CONTRACT]
RESOURCES = ["graph://entities", "graph://memories", "graph://relations", "graph://stats"]
# Optional parameters we offer beyond the contract's (docs/mcp.md says what each does); the
# contract's four other tools take none.
EXTRAS = {
    "get_context": {"at"},
    "list_entities": {"limit", "cursor"},
    "relate": {"source_type", "target_type", "valid_from"},
}


def read(url: str, token: str, uri: str) -> dict[str, Any]:
    async def steps(session: ClientSession) -> dict[str, Any]:
        result = await session.read_resource(uri)
        text = getattr(result.contents[0], "text", None)
        assert isinstance(text, str)
        loaded: dict[str, Any] = json.loads(text)
        return loaded

    payload: dict[str, Any] = session_run(url, token, steps)
    return payload


def recalled_ids(url: str, token: str, query: str, **extra: Any) -> list[str]:
    return [m["id"] for m in ok(url, token, "recall", {"query": query, **extra})["memories"]]


def rows() -> dict[str, int]:
    """Every row a graph tool could write, and how many memories are suppressed."""
    return {**graph_rows(), "suppressed": Memory.objects.filter(status=Memory.Status.SUPPRESSED).count()}


# === discovery ============================================================================


def test_tools_list_is_the_contracts_seven_tools_with_its_parameters_enums_and_defaults(asgi_server, alice):
    async def listing(session: ClientSession) -> tuple[list[Any], list[Any]]:
        return (await session.list_tools()).tools, (await session.list_resources()).resources

    tools, resources = session_run(graph_url(asgi_server), rpc.pat_token(alice), listing)
    assert [t.name for t in tools] == [name for name, _, _ in CONTRACT]
    by_name = {t.name: t.input_schema for t in tools}
    for name, params, required in CONTRACT:
        schema = by_name[name]
        assert schema["additionalProperties"] is False, name
        assert sorted(schema.get("required", [])) == sorted(required), name
        properties = schema["properties"]
        assert set(properties) - set(params) == EXTRAS.get(name, set()), name
        for param, json_type in params.items():
            assert properties[param]["type"] == json_type, (name, param)
    remember, recall = by_name["remember"]["properties"], by_name["recall"]["properties"]
    assert remember["category"]["enum"] == CATEGORIES
    assert remember["entities"]["items"]["properties"]["type"]["enum"] == ENTITY_TYPES
    assert remember["entities"]["items"]["required"] == ["name", "type"]
    assert remember["confidence"]["default"] == 0.9
    assert (remember["confidence"]["minimum"], remember["confidence"]["maximum"]) == (0, 1)
    assert recall["limit"]["default"] == 10
    assert by_name["list_entities"]["properties"]["type"]["enum"] == ENTITY_TYPES
    assert by_name["relate"]["properties"]["relation_type"]["enum"] == RELATION_TYPES
    assert [str(r.uri) for r in resources] == RESOURCES


def test_the_contracts_own_examples_work_as_first_calls(asgi_server, alice):
    """Each tool's example from the contract, sent as it is written (the issue: the first call failed)."""
    url, token = graph_url(asgi_server), rpc.pat_token(alice)
    saved = ok(
        url,
        token,
        "remember",
        {
            "content": "Client prefers email communication over phone",
            "category": "preference",
            "entities": [{"name": "John Doe", "type": "Person"}],
            "confidence": 0.95,
        },
    )
    assert saved["status"] == "stored" and saved["memory_id"] == saved["memories"][0]["id"]
    example = ok(url, token, "recall", {"query": "pricing preferences", "limit": 5})
    assert example["total"] == len(example["memories"]) <= 5
    assert saved["memory_id"] in recalled_ids(url, token, "email communication preferences", limit=5)
    related = ok(
        url, token, "relate", {"source": "John Doe", "target": "Acme Corp", "relation_type": "works_at"}
    )
    assert related["relation"]["statement"] == "John Doe works_at Acme Corp"
    context = ok(url, token, "get_context", {"entity_name": "Acme Corp"})
    assert [r["other"]["name"] for r in context["relations"]] == ["John Doe"]
    people = ok(url, token, "list_entities", {"type": "Person"})["entities"]
    assert "John Doe" in [e["name"] for e in people] and {e["type"] for e in people} == {"Person"}
    gone = ok(
        url,
        token,
        "invalidate",
        {"memory_id": saved["memory_id"], "reason": "Pricing has been updated for Q2"},
    )
    assert gone["status"] == "suppressed" and gone["reason"] == "Pricing has been updated for Q2"
    own = str(Space.objects.get(owner=alice, is_default=True).id)
    switched = ok(url, token, "switch_agent", {"agent_id": own})
    assert switched["agent_id"] == switched["previous_agent_id"] == own and switched["changed"] is False


# === remember ==============================================================================


def test_remember_stores_category_confidence_entities_and_source_text(asgi_server, alice):
    url, token = graph_url(asgi_server), rpc.pat_token(alice)
    said = "Honestly, for calls with Maya: she'd much rather get an email than a phone call."
    saved = ok(
        url,
        token,
        "remember",
        {
            "content": "Maya Ortiz prefers email over phone calls.",
            "category": "preference",
            "entities": [
                {"name": "Maya Ortiz", "type": "Person"},
                {"name": "Globex", "type": "Organization"},
            ],
            "confidence": 0.7,
            "sourceText": said,
        },
    )
    assert saved["status"] == "stored"
    (memory,) = saved["memories"]
    assert memory["id"] == saved["memory_id"] and memory["outcome"] == "created"
    assert (memory["category"], memory["kind"], memory["confidence"]) == ("preference", "fact", 0.7)
    assert {(e["name"], e["type"]) for e in memory["entities"]} >= {
        ("Maya Ortiz", "Person"),
        ("Globex", "Organization"),
    }

    stored = Memory.objects.get(id=saved["memory_id"])
    assert (
        stored.owner == alice and stored.category == "preference" and stored.confidence == pytest.approx(0.7)
    )
    assert Entity.objects.get(owner=alice, normalized_name="globex").type == "Organization"
    assert stored.entities.filter(normalized_name="globex").exists()
    # The content is the memory; the original text is its source's testimony, never searched itself.
    source = Source.objects.get(id=stored.source_id)
    assert source.content == "Maya Ortiz prefers email over phone calls." and source.source_text == said
    assert saved["memory_id"] not in recalled_ids(url, token, "much rather honestly")

    # Recall and get_context show the confidence and category too.
    (hit,) = [
        m for m in ok(url, token, "recall", {"query": "Maya email"})["memories"] if m["id"] == str(stored.id)
    ]
    assert hit["confidence"] == 0.7 and hit["category"] == "preference"
    context = ok(url, token, "get_context", {"entity_name": "Maya Ortiz"})
    assert [(m["id"], m["confidence"], m["category"]) for m in context["memories"]] == [
        (str(stored.id), 0.7, "preference")
    ]
    listed = read(url, token, "graph://memories")["memories"]
    assert [(m["id"], m["confidence"]) for m in listed] == [(str(stored.id), 0.7)]

    # Without a confidence the contract's default, 0.9.
    plain = ok(url, token, "remember", {"content": "Globex is based in Lyon.", "category": "fact"})
    assert plain["memories"][0]["confidence"] == 0.9


@pytest.mark.parametrize(
    ("content", "category", "kind", "rules_agree"),
    [
        # The rules alone read a wish as a plan; a stated preference is a standing fact.
        ("I want to sit by the window on flights.", "preference", "fact", False),
        # The rules alone read the present tense as how things are; a stated intent is a plan.
        ("The team migrates the billing service to PostgreSQL.", "intent", "foresight", False),
        # A plan the words show already; its date is when it is due.
        ("Schedule the pricing review with Acme next Monday.", "intent", "foresight", True),
    ],
)
def test_a_category_that_names_a_kind_sets_it_and_its_clock(
    asgi_server, alice, content, category, kind, rules_agree
):
    url, token = graph_url(asgi_server), rpc.pat_token(alice)
    saved = ok(url, token, "remember", {"content": content, "category": category})
    (memory,) = saved["memories"]
    assert (memory["kind"], memory["category"]) == (kind, category)
    clocks = memory["clocks"]
    if kind == "fact":
        assert clocks["valid_from"] is not None and clocks["due_at"] is None
    else:
        assert clocks["valid_from"] is None and clocks["occurred_at"] is None
    # What the rules alone say: the category is what made the difference, where it did.
    _, [unstated] = extract(content, reference=Memory.objects.get(id=memory["id"]).recorded_at)
    assert (unstated.kind == kind) is rules_agree
    if "next Monday" in content:
        assert clocks["due_at"] is not None and unstated.due_at is not None


@pytest.mark.parametrize("category", ["fact", "decision", "context"])
def test_the_other_categories_keep_the_kind_the_words_show(asgi_server, alice, category):
    url, token = graph_url(asgi_server), rpc.pat_token(alice)
    for content in ("We decided to use PostgreSQL for the project.", "The budget is 50,000 euros."):
        saved = ok(url, token, "remember", {"content": content, "category": category})
        (memory,) = saved["memories"]
        _, [unstated] = extract(content, reference=Memory.objects.get(id=memory["id"]).recorded_at)
        assert (memory["kind"], memory["category"]) == (unstated.kind, category), content


def test_remember_goes_through_the_update_engine(asgi_server, alice, bob):
    url, token = graph_url(asgi_server), rpc.pat_token(alice)
    paris = ok(url, token, "remember", {"content": "Alice Novak lives in Paris.", "category": "fact"})
    berlin = ok(url, token, "remember", {"content": "Alice Novak lives in Berlin.", "category": "fact"})
    # A change supersedes: the older memory is history, named in what the new one replaced.
    assert berlin["memories"][0]["outcome"] == "created"
    assert [r["id"] for r in berlin["memories"][0]["replaced"]] == [paris["memory_id"]]
    older = Memory.objects.get(id=paris["memory_id"])
    assert str(older.superseded_by_id) == berlin["memory_id"]
    where = recalled_ids(url, token, "Where does Alice Novak live?")
    assert berlin["memory_id"] in where and paris["memory_id"] not in where

    # A rewording is evidence for the memory that is there, not a copy; another agent's counts.
    allergy = ok(url, token, "remember", {"content": "I'm allergic to peanuts.", "category": "fact"})
    count = Memory.objects.filter(owner=alice).count()
    other, _ = rpc.oauth_token(alice, url, app_name="Second Agent")
    again = ok(
        url, other, "remember", {"content": "I have a peanut allergy.", "category": "fact", "confidence": 1.0}
    )
    assert again["memory_id"] == allergy["memory_id"] and again["memories"][0]["outcome"] == "confirmed"
    assert again["memories"][0]["evidence_count"] == 2 and "already known" in again["note"]
    assert Memory.objects.filter(owner=alice).count() == count
    # The first claimant's confidence stays: a repetition is evidence, not an edit.
    assert Memory.objects.get(id=allergy["memory_id"]).confidence == pytest.approx(0.9)
    # Bob's identical words are his own memory.
    theirs = ok(
        url, rpc.pat_token(bob), "remember", {"content": "I'm allergic to peanuts.", "category": "fact"}
    )
    assert theirs["memories"][0]["outcome"] == "created" and theirs["memory_id"] != allergy["memory_id"]


def test_a_save_that_states_nothing_is_refused_saying_why(asgi_server, alice):
    # Refused at the save (issue 44), not accepted to fail as a job.
    url, token = graph_url(asgi_server), rpc.pat_token(alice)
    error = err(url, token, "remember", {"content": "...", "category": "context"})
    assert error["code"] == "nothing_to_remember" and error["retryable"] is False
    assert error["details"] == {"field": "content"} and "words" in error["agent_action"]
    assert not Job.objects.filter(owner=alice).exists()
    assert not Memory.objects.filter(owner=alice).exists()


# === recall ================================================================================


def test_recall_honours_limit_and_returns_active_memories_only(asgi_server, alice, charlie):
    url, token = graph_url(asgi_server), rpc.pat_token(alice)
    notes = " ".join(
        f"Ana Ruiz {doing} tea."
        for doing in (
            "brews sencha green",
            "buys oolong leaf from Taipei for her",
            "keeps rooibos jars beside the stove for",
            "grows chamomile flowers in the garden for",
            "orders darjeeling by mail from India as",
            "whisks ceremonial matcha powder into her",
            "smokes lapsang souchong leaves over pine for",
            "adds jasmine blossoms when steeping",
            "ages pu-erh cakes in clay pots as",
            "serves masala chai with cardamom and ginger as",
            "toasts genmaicha rice kernels before mixing",
            "chills hibiscus infusion with lemon slices as iced",
        )
    )
    saved = ok(url, token, "remember", {"content": notes, "category": "fact"})
    ids = [m["id"] for m in saved["memories"]]
    assert len(ids) == 12 and len(set(ids)) == 12
    default = recalled_ids(url, token, "Ana Ruiz tea")
    assert len(default) == 10 and set(default) <= set(ids)
    assert len(recalled_ids(url, token, "Ana Ruiz tea", limit=3)) == 3
    assert set(recalled_ids(url, token, "Ana Ruiz tea", limit=50)) == set(ids)

    ok(url, token, "invalidate", {"memory_id": default[0], "reason": "Ana stopped that blend"})
    left = recalled_ids(url, token, "Ana Ruiz tea", limit=50)
    assert default[0] not in left and set(left) == set(ids) - {default[0]}
    assert default[0] not in [m["id"] for m in read(url, token, "graph://memories")["memories"]]
    # The outsider's recall finds none of it.
    assert recalled_ids(url, rpc.pat_token(charlie), "Ana Ruiz tea", limit=50) == []


def test_recall_limit_is_a_number_and_a_whole_one_given_as_a_number_is_taken(asgi_server, alice):
    """contracts/graph-mcp.txt, recall: "| `limit` | number | No | Max results (default: 10) |" and
    its example { "query": "pricing preferences", "limit": 5 }: a client that writes numbers as
    floats sends 5.0."""
    url, token = graph_url(asgi_server), rpc.pat_token(alice)
    saved = ok(
        url,
        token,
        "remember",
        {
            "content": "Lena Park drinks oolong. Lena Park drinks sencha. Lena Park drinks matcha.",
            "category": "fact",
        },
    )
    assert len(saved["memories"]) == 3

    async def steps(session: ClientSession) -> tuple[dict[str, Any], list[Any]]:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        return tools["recall"].input_schema["properties"]["limit"], [
            await session.call_tool("recall", {"query": "Lena Park tea", "limit": limit})
            for limit in (2.0, 5.0, 2, 2.5, True, "2", 0.0, 51.0)
        ]

    schema, results = session_run(url, token, steps)
    assert schema["type"] == "number" and (schema["minimum"], schema["maximum"]) == (1, 50)
    assert schema["default"] == 10
    two_float, five_float, two_int = (structured(r) for r in results[:3])
    assert [m["id"] for m in two_float["memories"]] == [m["id"] for m in two_int["memories"]]
    assert len(two_float["memories"]) == 2
    assert len(five_float["memories"]) == 3
    codes = [structured(r)["code"] for r in results[3:]]
    assert codes == ["invalid_value", "wrong_type", "wrong_type", "value_out_of_range", "value_out_of_range"]


# === invalidate ============================================================================


def test_invalidate_is_a_restorable_suppression_with_its_reason(asgi_server, alice):
    url, token = graph_url(asgi_server), rpc.pat_token(alice)
    saved = ok(url, token, "remember", {"content": "The Q1 price is 40 euros per seat.", "category": "fact"})
    memory_id = saved["memory_id"]
    assert memory_id in recalled_ids(url, token, "Q1 price per seat")

    gone = ok(
        url, token, "invalidate", {"memory_id": memory_id.upper(), "reason": "  Pricing was updated for Q2 "}
    )
    assert gone["memory_id"] == memory_id and gone["reason"] == "Pricing was updated for Q2"
    stored = Memory.objects.get(id=memory_id)
    assert stored.status == "suppressed" and stored.suppressed_reason == "invalidated"
    assert stored.suppressed_note == "Pricing was updated for Q2"
    assert memory_id not in recalled_ids(url, token, "Q1 price per seat")
    stats = read(url, token, "graph://stats")["memories"]
    assert stats["suppressed"] == 1 and stats["active"] == 0
    # Audited without the reason's words (they may repeat the memory).
    event = AuditEvent.objects.get(target_id=memory_id, action=AuditEvent.Action.SUPPRESSED)
    assert event.detail == {"reason": "invalidated"}
    # Again: nothing changes, the first reason stays.
    again = ok(url, token, "invalidate", {"memory_id": memory_id, "reason": "another reason"})
    assert (again["reason"], again["invalidated_at"]) == (gone["reason"], gone["invalidated_at"])
    assert AuditEvent.objects.filter(target_id=memory_id, action=AuditEvent.Action.SUPPRESSED).count() == 1
    # Without a reason it is stored without one.
    other = ok(url, token, "remember", {"content": "Globex has 40 employees.", "category": "fact"})
    assert ok(url, token, "invalidate", {"memory_id": other["memory_id"]})["reason"] is None

    # The person sees it in the dashboard and restores it; it is recalled again.
    page = Client()
    page.force_login(alice)
    detail = page.get(f"/memories/{memory_id}/")
    assert detail.status_code == 200 and "Pricing was updated for Q2" in detail.content.decode()
    memory_restore(actor=Actor.owner_acting(alice), memory_id=memory_id)
    assert Memory.objects.get(id=memory_id).suppressed_note == ""
    assert memory_id in recalled_ids(url, token, "Q1 price per seat")


def test_an_outsider_cannot_invalidate_alices_memory(asgi_server, alice, charlie):
    url = graph_url(asgi_server)
    saved = ok(
        url,
        rpc.pat_token(alice),
        "remember",
        {"content": "Alice Novak works at Acme Corp.", "category": "fact"},
    )
    tokens = (rpc.pat_token(charlie), rpc.oauth_token(charlie, url, app_name="Charlie's Agent")[0])
    before = rows()
    for token in tokens:
        for memory_id in (saved["memory_id"], str(uuid.uuid4())):
            error = err(url, token, "invalidate", {"memory_id": memory_id, "reason": "mine now"})
            assert error["code"] == "memory_not_found", error
            assert "Acme" not in json.dumps(error)
    assert Memory.objects.get(id=saved["memory_id"]).status == "active"
    assert rows() == before
    assert saved["memory_id"] in recalled_ids(url, rpc.pat_token(alice), "Where does Alice Novak work?")


def test_invalidate_retires_a_relation_restorably_with_its_reason(asgi_server, alice, charlie):
    """contracts/graph-mcp.txt, Typical workflow: "1. remember: Store a new fact ("The client wants
    premium support") 2. relate: Link entities ("Client -> wants -> premium support") ... 5.
    invalidate: Mark outdated info ("The client switched to basic support")", and invalidate: "Mark a
    memory as no longer valid. The memory is kept for history but excluded from recall results." A
    relation is retired the same way, by its id (docs/decisions.md says why not by its memory)."""
    url, token = graph_url(asgi_server), rpc.pat_token(alice)
    said = ok(url, token, "remember", {"content": "The client wants premium support.", "category": "intent"})
    wants = ok(
        url, token, "relate", {"source": "Client", "target": "premium support", "relation_type": "wants"}
    )
    relation_id = wants["relation"]["id"]
    # The correction, as the contract's workflow makes it: invalidate what is outdated, remember the new.
    ok(
        url,
        token,
        "invalidate",
        {"memory_id": said["memory_id"], "reason": "The client switched to basic support"},
    )
    retired = ok(
        url, token, "invalidate", {"memory_id": relation_id, "reason": "  Switched to basic support "}
    )
    assert (retired["memory_id"], retired["target"], retired["status"]) == (
        relation_id,
        "relation",
        "invalidated",
    )
    assert retired["reason"] == "Switched to basic support" and retired["relation"]["current"] is False
    assert retired["relation"]["invalidation"] == {
        "at": retired["invalidated_at"],
        "reason": retired["reason"],
    }
    ok(url, token, "remember", {"content": "The client switched to basic support.", "category": "fact"})
    ok(url, token, "relate", {"source": "Client", "target": "basic support", "relation_type": "wants"})

    context = ok(url, token, "get_context", {"entity_name": "Client"})
    assert [r["statement"] for r in context["relations"]] == ["Client wants basic support"]
    listed = read(url, token, "graph://relations")["relations"]
    assert [r["statement"] for r in listed] == ["Client wants basic support"]
    # Kept for history: what held before it was retired, with the reason.
    before = ok(
        url, token, "get_context", {"entity_name": "Client", "at": wants["relation"]["clocks"]["recorded_at"]}
    )
    (then,) = before["relations"]
    assert then["id"] == relation_id and then["invalidation"]["reason"] == "Switched to basic support"
    # Again: nothing changes, the first reason stays.
    again = ok(url, token, "invalidate", {"memory_id": relation_id, "reason": "another"})
    assert (again["reason"], again["invalidated_at"]) == (retired["reason"], retired["invalidated_at"])
    assert AuditEvent.objects.filter(target_id=relation_id, action=AuditEvent.Action.SUPPRESSED).count() == 1
    # The outsider can neither retire nor restore it, and learns nothing of it.
    assert (
        err(url, rpc.pat_token(charlie), "invalidate", {"memory_id": relation_id})["code"]
        == "memory_not_found"
    )
    outsider = httpx.post(
        f"{asgi_server.url}/api/v1/relations/{relation_id}/restore",
        headers={"Authorization": f"Bearer {rpc.pat_token(charlie)}"},
        timeout=30,
    )
    assert outsider.status_code == 404 and outsider.json()["error"]["code"] == "relation_not_found"
    # Restorable: the person (REST, with the write scope) brings it back; it holds again.
    restored = httpx.post(
        f"{asgi_server.url}/api/v1/relations/{relation_id}/restore",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert restored.status_code == 200, restored.text
    assert (
        restored.json()["relation"]["current"] is True and restored.json()["relation"]["invalidation"] is None
    )
    context = ok(url, token, "get_context", {"entity_name": "Client"})
    assert sorted(r["statement"] for r in context["relations"]) == [
        "Client wants basic support",
        "Client wants premium support",
    ]


def test_a_retired_relation_said_again_is_a_new_one_and_the_old_cannot_come_back_beside_it(
    asgi_server, alice
):
    url, token = graph_url(asgi_server), rpc.pat_token(alice)
    first = ok(url, token, "relate", {"source": "Ines", "target": "Lisbon", "relation_type": "lives_in"})[
        "relation"
    ]
    ok(url, token, "invalidate", {"memory_id": first["id"], "reason": "Never lived there"})
    second = ok(url, token, "relate", {"source": "Ines", "target": "Lisbon", "relation_type": "lives_in"})
    assert second["created"] is True and second["relation"]["id"] != first["id"]
    refused = httpx.post(
        f"{asgi_server.url}/api/v1/relations/{first['id']}/restore",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "relation_not_restorable"
    assert refused.json()["error"]["details"]["holding"] == [second["relation"]["id"]]


# === switch_agent ==========================================================================


def test_switch_agent_returns_the_previous_and_new_agent_and_a_health_check(asgi_server, alice, charlie):
    url, token = graph_url(asgi_server), rpc.pat_token(alice)
    personal = space_create_default(owner=alice)
    work = space_create(actor=Actor.owner_acting(alice), name="Work")
    ok(url, token, "remember", {"content": "Dana Lee leads the Kite project.", "category": "fact"})
    switched = ok(url, token, "switch_agent", {"agent_id": str(work.id)})
    assert (switched["previous_agent_id"], switched["agent_id"]) == (str(personal.id), str(work.id))
    assert switched["changed"] is True and switched["health"]["database"]["reachable"] is True
    assert switched["health"]["active_memories"] == 0
    # Every later call targets the new graph.
    assert recalled_ids(url, token, "Dana Lee Kite project") == []
    saved = ok(url, token, "remember", {"content": "Kite ships in May.", "category": "decision"})
    assert saved["space"] == {"id": str(work.id), "name": "Work"}
    back = ok(url, token, "switch_agent", {"agent_id": str(personal.id)})
    assert back["previous_agent_id"] == str(work.id) and back["health"]["active_memories"] == 1

    # Unknown or another user's id: a clear error naming the ids the caller may use, nothing changed.
    charlies = space_create(actor=Actor.owner_acting(charlie), name="Charlie's Secret")
    before = rows()
    for agent_id in (str(charlies.id), str(uuid.uuid4())):
        error = err(url, token, "switch_agent", {"agent_id": agent_id})
        assert error["code"] == "space_not_found" and "agent_id" in error["message"]
        assert sorted(s["id"] for s in error["details"]["spaces"]) == sorted([str(personal.id), str(work.id)])
        assert "Secret" not in json.dumps(error)
    assert rows() == before
    assert ok(url, token, "list_entities", {})["space"]["id"] == str(personal.id)


# === the contract's workflow ===============================================================


def test_the_system_prompts_workflow_end_to_end(asgi_server, alice, charlie):
    """remember -> relate -> recall -> get_context -> invalidate + remember to correct."""
    url, token = (
        graph_url(asgi_server),
        rpc.oauth_token(alice, graph_url(asgi_server), app_name="Sales Agent")[0],
    )
    client = [{"name": "Acme Corp", "type": "Organization"}]
    premium = ok(
        url,
        token,
        "remember",
        {
            "content": "Acme Corp wants premium support.",
            "category": "fact",
            "entities": [*client, {"name": "premium support", "type": "Product"}],
            "confidence": 1.0,
        },
    )
    ok(url, token, "relate", {"source": "Acme Corp", "target": "premium support", "relation_type": "wants"})
    assert premium["memory_id"] in recalled_ids(url, token, "What does Acme Corp want?")
    context = ok(url, token, "get_context", {"entity_name": "Acme Corp"})
    assert context["entity"]["type"] == "Organization"
    assert [m["id"] for m in context["memories"]] == [premium["memory_id"]]
    assert [(r["type"], r["other"]["name"]) for r in context["relations"]] == [("wants", "premium support")]

    # The client switched: invalidate the stale memory, remember the new fact.
    ok(
        url,
        token,
        "invalidate",
        {"memory_id": premium["memory_id"], "reason": "The client switched to basic support"},
    )
    basic = ok(
        url,
        token,
        "remember",
        {
            "content": "Acme Corp switched to basic support.",
            "category": "fact",
            "entities": [*client, {"name": "basic support", "type": "Product"}],
            "confidence": 1.0,
        },
    )
    found = recalled_ids(url, token, "Which support does Acme Corp want?")
    assert basic["memory_id"] in found and premium["memory_id"] not in found
    after = ok(url, token, "get_context", {"entity_name": "Acme Corp"})
    assert [m["id"] for m in after["memories"]] == [basic["memory_id"]]
    # The old fact is still in history: kept, suppressed with its reason, shown by the REST API.
    history = pat_client(alice).get(f"/api/v1/memories/{premium['memory_id']}")
    assert history.status_code == 200 and history.json()["status"] == "suppressed"
    assert (
        Memory.objects.get(id=premium["memory_id"]).suppressed_note == "The client switched to basic support"
    )

    # The outsider sees none of it and cannot touch it.
    outsider = rpc.pat_token(charlie)
    assert recalled_ids(url, outsider, "Acme Corp support") == []
    assert err(url, outsider, "get_context", {"entity_name": "Acme Corp"})["code"] == "entity_not_found"
    assert err(url, outsider, "invalidate", {"memory_id": basic["memory_id"]})["code"] == "memory_not_found"
    assert Memory.objects.get(id=basic["memory_id"]).status == "active"


# === bad input =============================================================================

TOO_LONG = "x" * 100_001
REJECTED: list[tuple[str, dict[str, Any], str]] = [
    ("remember", {}, "missing_field"),
    ("remember", {"content": "Ana likes tea."}, "missing_field"),
    ("remember", {"category": "fact"}, "missing_field"),
    ("remember", {"content": "Ana likes tea.", "category": "opinion"}, "invalid_value"),
    ("remember", {"content": "Ana likes tea.", "category": "Fact"}, "invalid_value"),
    ("remember", {"content": "   ", "category": "fact"}, "value_too_short"),
    ("remember", {"content": TOO_LONG, "category": "fact"}, "value_too_long"),
    ("remember", {"content": 42, "category": "fact"}, "wrong_type"),
    ("remember", {"content": "Ana likes tea.", "category": "fact", "entities": "Ana"}, "wrong_type"),
    (
        "remember",
        {"content": "Ana likes tea.", "category": "fact", "entities": [{"name": "Ana"}]},
        "missing_field",
    ),
    (
        "remember",
        {"content": "Ana likes tea.", "category": "fact", "entities": [{"name": "Ana", "type": "Planet"}]},
        "invalid_value",
    ),
    (
        "remember",
        {
            "content": "Ana likes tea.",
            "category": "fact",
            "entities": [{"name": "Ana", "type": "Person", "role": "x"}],
        },
        "unknown_field",
    ),
    (
        "remember",
        {
            "content": "Ana likes tea.",
            "category": "fact",
            "entities": [{"name": "A" * 201, "type": "Person"}],
        },
        "value_too_long",
    ),
    ("remember", {"content": "Ana likes tea.", "category": "fact", "confidence": 1.5}, "value_out_of_range"),
    ("remember", {"content": "Ana likes tea.", "category": "fact", "confidence": -0.1}, "value_out_of_range"),
    ("remember", {"content": "Ana likes tea.", "category": "fact", "confidence": "high"}, "wrong_type"),
    ("remember", {"content": "Ana likes tea.", "category": "fact", "confidence": True}, "wrong_type"),
    ("remember", {"content": "Ana likes tea.", "category": "fact", "sourceText": " "}, "value_too_short"),
    ("remember", {"content": "Ana likes tea.", "category": "fact", "sourceText": TOO_LONG}, "value_too_long"),
    ("remember", {"content": "Ana likes tea.", "category": "fact", "source_text": "x"}, "unknown_field"),
    (
        "remember",
        {"content": "Ana likes tea.", "category": "fact", "session_id": str(uuid.uuid4())},
        "unknown_field",
    ),
    ("recall", {}, "missing_field"),
    ("recall", {"query": ""}, "value_too_short"),
    ("recall", {"query": "tea", "limit": 0}, "value_out_of_range"),
    ("recall", {"query": "tea", "limit": 51}, "value_out_of_range"),
    ("recall", {"query": "tea", "limit": "5"}, "wrong_type"),
    ("recall", {"query": "tea", "limit": 2.5}, "invalid_value"),
    ("recall", {"query": "tea", "limit": True}, "wrong_type"),
    ("recall", {"query": "tea", "top_k": 5}, "unknown_field"),
    ("invalidate", {}, "missing_field"),
    ("invalidate", {"memory_id": "abc123"}, "invalid_format"),
    ("invalidate", {"memory_id": 5}, "wrong_type"),
    ("invalidate", {"memory_id": str(uuid.uuid4()), "reason": ""}, "value_too_short"),
    ("invalidate", {"memory_id": str(uuid.uuid4()), "reason": "x" * 501}, "value_too_long"),
    ("invalidate", {"memory_id": str(uuid.uuid4()), "hard": True}, "unknown_field"),
    ("invalidate", {"memory_id": str(uuid.uuid4())}, "memory_not_found"),
]


def test_bad_input_to_each_tool_answers_the_one_error_shape_and_stores_nothing(asgi_server, alice):
    token = rpc.pat_token(alice)
    space_create_default(owner=alice)
    before = rows()

    async def steps(session: ClientSession) -> list[str]:
        codes = []
        for tool, arguments, _ in REJECTED:
            result = await session.call_tool(tool, arguments)
            error = structured(result)
            assert result.is_error is True and error["agent_action"] and error["request_id"], (tool, error)
            codes.append(error["code"])
        return codes

    codes = session_run(graph_url(asgi_server), token, steps)
    assert codes == [code for _, _, code in REJECTED]
    assert rows() == before


def test_a_read_only_token_may_recall_but_not_remember_or_invalidate(asgi_server, alice):
    url = graph_url(asgi_server)
    saved = ok(
        url,
        rpc.pat_token(alice),
        "remember",
        {"content": "Ana Ruiz likes green tea.", "category": "preference"},
    )
    reader = rpc.pat_token(alice, scopes=(READ,))
    before = rows()
    for tool, arguments in (
        ("remember", {"content": "Ana Ruiz likes black tea.", "category": "preference"}),
        ("invalidate", {"memory_id": saved["memory_id"]}),
    ):
        body = rpc.tools_call(tool, arguments)
        response = httpx.post(
            url,
            content=json.dumps(body),
            headers={**rpc.routing_headers(body, rpc.LEGACY), "Authorization": f"Bearer {reader}"},
            timeout=30,
        )
        rpc.assert_clean(response)
        assert (
            response.status_code == 403
            and 'error="insufficient_scope"' in response.headers["www-authenticate"]
        )
    assert rows() == before
    assert saved["memory_id"] in recalled_ids(url, reader, "Ana Ruiz tea")


# === the stdio proxy =======================================================================


def test_the_stdio_proxy_serves_the_contract_under_its_names(asgi_server, alice):
    client = DeepRecallClient(asgi_server.url, rpc.pat_token(alice), timeout=60)
    try:
        proxy = StdioProxy(client, "graph")

        def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
            reply = proxy.handle_line(
                json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
            )
            assert reply is not None
            answer: dict[str, Any] = json.loads(reply)
            return answer

        tools = request("tools/list", {})["result"]["tools"]
        assert [t["name"] for t in tools] == [name for name, _, _ in CONTRACT]
        saved = request(
            "tools/call",
            {"name": "remember", "arguments": {"content": "Ana Ruiz lives in Porto.", "category": "fact"}},
        )["result"]
        assert saved["isError"] is False and saved["structuredContent"]["status"] == "stored"
        memory_id = saved["structuredContent"]["memory_id"]
        found = request(
            "tools/call", {"name": "recall", "arguments": {"query": "Where does Ana Ruiz live?", "limit": 3}}
        )
        assert memory_id in [m["id"] for m in found["result"]["structuredContent"]["memories"]]
        refused = request("tools/call", {"name": "recall", "arguments": {"query": "Porto", "top_k": 3}})[
            "result"
        ]
        assert refused["isError"] is True and refused["structuredContent"]["code"] == "unknown_field"
    finally:
        client.close()


def test_deeprecall_mcp_with_the_graph_profile_serves_the_graph_resources_as_http_does(asgi_server, alice):
    """contracts/graph-mcp.txt, "Resources (4, read-only): Resources let the AI client read the full
    graph state. ... graph://entities, graph://memories, graph://relations, graph://stats". The stdio
    proxy (`deeprecall mcp`, DEEPRECALL_PROFILE=graph), driven by the official Python SDK's stdio
    client, serves what /mcp/graph serves."""
    url, token = graph_url(asgi_server), rpc.pat_token(alice)
    ok(url, token, "remember", {"content": "Ana Ruiz lives in Porto.", "category": "fact"})
    ok(url, token, "relate", {"source": "Ana Ruiz", "target": "Porto", "relation_type": "lives_in"})

    async def steps(session: ClientSession) -> tuple[Any, list[Any], dict[str, Any], MCPError]:
        listed = (await session.list_resources()).resources
        payloads = {}
        for uri in RESOURCES:
            contents = (await session.read_resource(uri)).contents
            assert len(contents) == 1 and contents[0].mime_type == "application/json"
            payloads[uri] = json.loads(getattr(contents[0], "text", "null"))
        try:
            await session.read_resource("graph://nothing")
        except MCPError as missing:
            return session, listed, payloads, missing
        raise AssertionError("an unknown resource was read")

    async def over_stdio() -> tuple[Any, list[Any], dict[str, Any], MCPError]:
        environment = {
            **os.environ,
            "DEEPRECALL_API_URL": asgi_server.url,
            "DEEPRECALL_API_TOKEN": token,
            "DEEPRECALL_PROFILE": "graph",
            # The console script of the shared environment, running this checkout's code.
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        }
        server = StdioServerParameters(command=str(PROXY_SCRIPT), args=["mcp"], env=environment)
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            hello = await session.initialize()
            assert hello.capabilities.resources is not None
            return await steps(session)

    _, local, local_payloads, local_missing = asyncio.run(over_stdio())
    _, remote, remote_payloads, remote_missing = session_run(url, token, steps)
    assert [r.model_dump() for r in local] == [r.model_dump() for r in remote]
    assert [str(r.uri) for r in local] == RESOURCES
    for uri in RESOURCES:
        assert _without_times(local_payloads[uri]) == _without_times(remote_payloads[uri]), uri
    assert [r["statement"] for r in local_payloads["graph://relations"]["relations"]] == [
        "Ana Ruiz lives_in Porto"
    ]
    assert local_missing.error.code == remote_missing.error.code == -32002
    assert local_missing.error.data["code"] == remote_missing.error.data["code"] == "unknown_resource"


def _without_times(payload: Any) -> Any:
    # graph://stats says when it was read; everything else must be equal.
    if isinstance(payload, dict):
        return {k: _without_times(v) for k, v in payload.items() if k not in ("computed_at", "checked_at")}
    if isinstance(payload, list):
        return [_without_times(item) for item in payload]
    return payload
