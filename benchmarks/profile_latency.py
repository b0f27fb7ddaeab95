"""Latency of the MCP profile tools (graph, evidence, ingest) through the real endpoint, one call at a time.

    .venv/bin/python benchmarks/profile_latency.py [--memories 20000] [--relations 4000] [--calls 100]
                                                   [--distinct 3000] [--keep]

It starts a throwaway service (`manage.py up` on a temporary data folder), creates one user with a
read+write personal access token, and bulk-loads one space straight into the embedded PostgreSQL with
COPY: `--memories` memories, each with its Source and supporting Evidence and linked to the people,
places and organisations it names; some saved again later by another claimant (a second piece of
evidence), some documents, a few suppressed, and a few superseded by a later memory (with the later
source as contradicting Evidence). On top of that up to about `--relations` Relations: lives_in and works_at
chains of the people, each older link superseded by the next one (as `relate` does: closed, and the
newer claim recorded as contradicting Evidence), some supported by two claimants. Ten real `ingest`
jobs are run through the worker for `pipeline_readiness`.

Then each operation is called `--calls` times through the MCP endpoint of its profile
(`POST /mcp/graph`, `/mcp/evidence`, `/mcp/ingest`: JSON-RPC, stateless, protocol 2025-11-25, with the
token as a Bearer), after a few warm-up calls. Every answer is checked to be a successful result (not
a JSON-RPC error, not an `isError` tool result), so the numbers are of real work. Latency is the
client's wall time per call (HTTP, query embedding, database).

Synthetic data, as in recall_latency.py (whose templates and vectors this reuses): `--distinct`
sentences are embedded with the real model and every memory takes its sentence's vector plus a little
noise. People carry full names ("Maya Okafor") here rather than its 57 first names, so that the space
holds over a thousand people to relate.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import random
import re
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._service import use_service_database
from benchmarks.locomo import percentile, service_with_data_dir
from benchmarks.recall_latency import (
    COMPANIES,
    EXTRAS,
    JOBS,
    MONTHS,
    PLACES,
    TAGS,
    TEMPLATES,
    Base,
    fill,
    queries,
    vector_text,
    words,
)

PROTOCOL = "2025-11-25"
SURNAMES = words(
    """
Okafor Berg Tanaka Mensah Novak Haddad Sharma Lindqvist Rossi Alvarez Sato Diallo Moreau Larsen Iyer
Dubois Costa Kowalski Nakamura Fischer Yilmaz Conti Petrov Ahmed Silva Jensen Romero Park Quinn Walsh
Horvat Eriksen Nguyen Bauer Santos Keller Murphy Ortega Vogel Adeyemi
"""
)
# Who asserted a source, as `Source.claimant` records it (filled in with real token ids).
USER = "user"
MEMORY_START = datetime(2024, 1, 1, tzinfo=UTC)
# Relations have their own, longer history: people move and change jobs over years.
RELATION_START = datetime(2021, 1, 1, tzinfo=UTC)
RELATION_END = datetime(2025, 12, 31, tzinfo=UTC)
PERSON_QUESTIONS = [
    "Where does {person} live?",
    "Where does {person} work?",
    "What do I know about {person}?",
    "{person} {place}",
    "Did {person} move recently?",
    "Who works at {company}?",
]
JOB_TEXTS = [
    "{person} moved to {place} in {month} and now works at {company} as a {job}.",
    "Note to self: {person} prefers meeting in {place}; they started at {company} last {month}.",
]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# --- the data ----------------------------------------------------------------------------------


def person_bases(count: int, rng: random.Random) -> list[Base]:
    """recall_latency.make_bases, with each person under a full name (first name and surname): over a
    thousand people to relate instead of its 57 first names."""
    from memories import embeddings

    seen: set[str] = set()
    bases: list[Base] = []
    while len(bases) < count:
        kind, template = rng.choice(TEMPLATES)
        text, entities = fill(template, rng)
        named: list[tuple[str, str]] = []
        for name, entity_type in entities:
            if entity_type == "Person":
                full = f"{name} {rng.choice(SURNAMES)}"
                text, replaced = re.subn(rf"\b{re.escape(name)}\b", full, text, count=1)
                assert replaced == 1, (name, text)
                name = full
            named.append((name, entity_type))
        if text not in seen:
            seen.add(text)
            bases.append(Base(kind, text, named))
    vectors = embeddings.embed([b.text for b in bases])
    for base, vector in zip(bases, vectors, strict=True):
        base.vector = vector
    return bases


@dataclass
class Loaded:
    """What the measuring needs to know of the loaded space."""

    people: list[str] = field(default_factory=list)  # persons with relations
    home: dict[str, str] = field(default_factory=dict)  # person -> current lives_in place
    memory_end: datetime = MEMORY_START


# Column lists of the COPYs; rows are built in this order.
SOURCE_COLUMNS = (
    "id, owner_id, space_id, origin, content, content_hash, session_id, source_kind, source_ref, version,"
    " versioning_mode, filename, title, claimant, source_text, media_type, size_bytes, refers_to, recorded_at"
)
ENTITY_COLUMNS = (
    "id, owner_id, space_id, name, normalized_name, type, aliases, attributes, created_at, updated_at"
)
MEMORY_COLUMNS = (
    "id, owner_id, space_id, source_id, session_id, kind, category, content, fingerprint, slot, slot_value,"
    " tags, embedding, confidence, pinned, status, suppressed_reason, suppressed_at, occurred_at, valid_from,"
    " valid_until, due_at, recorded_at, superseded_at, superseded_by_id"
)
RELATION_COLUMNS = (
    "id, owner_id, space_id, subject_id, object_id, type, valid_from, valid_until, recorded_at,"
    " superseded_at, superseded_by_id, embedding"
)
EVIDENCE_COLUMNS = "id, owner_id, source_id, memory_id, relation_id, stance, recorded_at"
# Positions in a memory row and a relation row that supersession rewrites.
M_VALID_FROM, M_VALID_UNTIL, M_RECORDED, M_SUPERSEDED_AT, M_SUPERSEDED_BY = 19, 20, 22, 23, 24
R_VALID_UNTIL, R_SUPERSEDED_AT, R_SUPERSEDED_BY = 7, 9, 10


@dataclass
class Rows:
    """The rows of one owner's space, ready to COPY."""

    owner: Any
    space: Any
    sources: list[tuple[Any, ...]] = field(default_factory=list)
    entities: dict[tuple[str, str], tuple[uuid.UUID, str]] = field(default_factory=dict)
    memories: list[list[Any]] = field(default_factory=list)
    links: set[tuple[uuid.UUID, uuid.UUID]] = field(default_factory=set)
    relations: list[list[Any]] = field(default_factory=list)
    evidence: list[tuple[Any, ...]] = field(default_factory=list)

    def entity(self, name: str, entity_type: str) -> uuid.UUID:
        from memories.pipeline.entities import normalize_entity_name

        key = (normalize_entity_name(name), entity_type)
        if key not in self.entities:
            self.entities[key] = (uuid.uuid4(), name)
        return self.entities[key][0]

    def source(
        self,
        *,
        content: str,
        claimant: str,
        at: datetime,
        origin: str = "rest",
        session: str | None = None,
        document: str = "",
    ) -> uuid.UUID:
        source_id = uuid.uuid4()
        kind, title = ("notes", f"Notes {document}") if document else ("", "")
        self.sources.append(
            (source_id, self.owner, self.space, origin, content, sha256(content), session, kind, document, 1,
             "snapshot", "", title, claimant, "", "text/markdown" if document else "", len(content.encode()),
             at, at)
        )  # fmt: skip
        return source_id

    def support(
        self,
        *,
        source: uuid.UUID,
        at: datetime,
        memory: Any = None,
        relation: Any = None,
        stance: str = "supports",
    ) -> None:
        self.evidence.append((uuid.uuid4(), self.owner, source, memory, relation, stance, at))


def memory_rows(
    rows: Rows, *, count: int, bases: list[Base], claimants: list[str], rng: random.Random
) -> datetime:
    """Memories in conversation-like sessions (as recall_latency.load), with sources and evidence;
    returns the last one's recorded_at."""
    import numpy

    matrix = numpy.array([b.vector for b in bases], dtype=numpy.float32)
    noise_rng = numpy.random.default_rng(7)
    moment = MEMORY_START
    session: str | None = None
    claimant = USER
    sources: list[uuid.UUID] = []
    for i in range(count):
        base_index = rng.randrange(len(bases))
        base = bases[base_index]
        content = base.text + rng.choice(EXTRAS)
        if i % rng.randint(5, 20) == 0:
            moment += timedelta(hours=rng.uniform(1, 12))
            session = str(uuid.uuid4()) if rng.random() < 0.6 else None
            claimant = rng.choices(claimants, weights=[5, 3, 2])[0]
        else:
            moment += timedelta(seconds=rng.uniform(5, 90))
        memory_id = uuid.uuid4()
        if rng.random() < 0.05:
            document = f"note-{i}"
            source_id = rows.source(
                content=content,
                claimant=f"document:notes:{document}",
                at=moment,
                origin="document",
                document=document,
            )
        else:
            source_id = rows.source(content=content, claimant=claimant, at=moment, session=session)
        sources.append(source_id)
        rows.support(source=source_id, memory=memory_id, at=moment)
        if rng.random() < 0.1:
            # Said again later by someone else: a second claimant, a second piece of evidence.
            later = moment + timedelta(days=rng.randint(1, 60))
            other = rng.choice([c for c in claimants if c != claimant])
            again = rows.source(content=content, claimant=other, at=later)
            rows.support(source=again, memory=memory_id, at=later)
        occurred = moment - timedelta(days=rng.randint(0, 30))
        suppressed = rng.random() < 0.02
        tags = "{" + ",".join(rng.sample(TAGS, rng.randint(0, 2))) + "}"
        noise = noise_rng.normal(0, 0.01, size=matrix.shape[1])
        rows.memories.append(
            [memory_id, rows.owner, rows.space, source_id, session, base.kind, "", content, "", "", "", tags,
             vector_text(matrix[base_index], noise, numpy), 0.9, rng.random() < 0.01,
             "suppressed" if suppressed else "active", "user_request" if suppressed else "",
             moment if suppressed else None,
             occurred if base.kind == "episode" else None,
             occurred if base.kind == "fact" else None,
             None,
             occurred + timedelta(days=20) if base.kind == "foresight" else None,
             moment, None, None]
        )  # fmt: skip
        for name, entity_type in base.entities:
            rows.links.add((memory_id, rows.entity(name, entity_type)))
    # A few are replaced by a later memory, whose source then contradicts them.
    for i, row in enumerate(rows.memories[:-1]):
        if rng.random() < 0.03:
            j = min(count - 1, i + rng.randint(1, 500))
            newer = rows.memories[j]
            row[M_SUPERSEDED_AT], row[M_SUPERSEDED_BY] = newer[M_RECORDED], newer[0]
            if row[M_VALID_FROM] is not None:
                row[M_VALID_UNTIL] = newer[M_RECORDED]
            rows.support(source=sources[j], memory=row[0], at=newer[M_RECORDED], stance="contradicts")
    return moment


def relation_rows(
    rows: Rows, *, target: int, claimants: list[str], rng: random.Random, loaded: Loaded
) -> None:
    """lives_in and works_at chains of the people, as `relate` leaves them: each newer link supersedes
    the older (closed when the newer one starts, the newer claim as contradicting evidence)."""
    people = sorted(name for (_, entity_type), (_, name) in rows.entities.items() if entity_type == "Person")
    rng.shuffle(people)
    span = (RELATION_END - RELATION_START).days
    for person in people:
        if len(rows.relations) >= target:
            break
        subject = rows.entity(person, "Person")
        loaded.people.append(person)
        for relation_type, entity_type, names, lengths in (
            ("lives_in", "Location", PLACES, [1, 1, 2, 2, 3, 4]),
            ("works_at", "Organization", COMPANIES, [0, 1, 1, 2, 3]),
        ):
            moment = RELATION_START + timedelta(days=rng.randint(0, span // 3))
            older: list[Any] | None = None
            for name in rng.sample(names, rng.choice(lengths)):
                if moment > RELATION_END:
                    break
                relation_id = uuid.uuid4()
                valid_from = moment - timedelta(days=rng.randint(0, 14)) if rng.random() < 0.7 else None
                claimant = rng.choice(claimants)
                statement = f"{person} {relation_type} {name}"
                source_id = rows.source(content=statement, claimant=claimant, at=moment, origin="relate")
                target_id = rows.entity(name, entity_type)
                row = [relation_id, rows.owner, rows.space, subject, target_id, relation_type, valid_from,
                       None, moment, None, None]  # fmt: skip
                rows.relations.append(row)
                rows.support(source=source_id, relation=relation_id, at=moment)
                if older is not None:
                    older[R_VALID_UNTIL] = valid_from or moment
                    older[R_SUPERSEDED_AT], older[R_SUPERSEDED_BY] = moment, relation_id
                    rows.support(source=source_id, relation=older[0], at=moment, stance="contradicts")
                if rng.random() < 0.25:
                    later = moment + timedelta(days=rng.randint(1, 20))
                    other = rng.choice([c for c in claimants if c != claimant])
                    again = rows.source(content=statement, claimant=other, at=later, origin="relate")
                    rows.support(source=again, relation=relation_id, at=later)
                older = row
                if relation_type == "lives_in":
                    loaded.home[person] = name
                moment += timedelta(days=rng.randint(30, 400))


def embed_relations(rows: Rows) -> None:
    """Give every relation row the embedding of its sentence with the real model, as `relate` does."""
    from memories import embeddings

    names = {entity_id: name for entity_id, name in rows.entities.values()}
    # The same sentence as Relation.sentence(): subject, type in words, object.
    sentences = [f"{names[row[3]]} {row[5].replace('_', ' ')} {names[row[4]]}" for row in rows.relations]
    print(f"  embedding {len(sentences)} relation sentences with the real model ...", flush=True)
    for row, vector in zip(rows.relations, embeddings.embed(sentences), strict=True):
        row.append("[" + ",".join(f"{x:.7f}" for x in vector) + "]")


def load(
    *, user: Any, claimants: list[str], bases: list[Base], args: argparse.Namespace, rng: random.Random
) -> Loaded:
    """COPY the synthetic space into `user`'s default space (indexes dropped for the load, rebuilt after)."""
    from django.db import connection

    from benchmarks.distractors import BULK_INDEXES
    from memories.models import Memory, Space

    space = Space.objects.get(owner=user, is_default=True)
    loaded = Loaded()
    rows = Rows(owner=user.pk, space=space.pk)
    loaded.memory_end = memory_rows(rows, count=args.memories, bases=bases, claimants=claimants, rng=rng)
    relation_rows(rows, target=args.relations, claimants=claimants, rng=rng, loaded=loaded)
    embed_relations(rows)
    entities = []
    for (normalized, entity_type), (entity_id, name) in rows.entities.items():
        # Some people are also known by their first name alone.
        alias = name.split()[0] if entity_type == "Person" and rng.random() < 0.1 else ""
        entities.append(
            (entity_id, rows.owner, rows.space, name, normalized, entity_type, "{" + alias + "}", "{}",
             MEMORY_START, MEMORY_START)
        )  # fmt: skip
    tables: list[tuple[str, str, Any]] = [
        ("memories_source", SOURCE_COLUMNS, rows.sources),
        ("memories_entity", ENTITY_COLUMNS, entities),
        ("memories_memory", MEMORY_COLUMNS, rows.memories),
        (
            "memories_memory_entities",
            "owner_id, memory_id, entity_id",
            [(rows.owner, *link) for link in rows.links],
        ),
        ("memories_relation", RELATION_COLUMNS, rows.relations),
        ("memories_evidence", EVIDENCE_COLUMNS, rows.evidence),
    ]
    with connection.cursor() as cursor:
        for name in BULK_INDEXES:
            cursor.execute(f"DROP INDEX IF EXISTS {name}")
        for table, columns, table_rows in tables:
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in table_rows:
                    copy.write_row(row)
        print("  building the HNSW and GIN indexes ...", flush=True)
        cursor.execute("SET maintenance_work_mem = '1GB'")
        # The migration's definitions (parameters included), not a copy of them.
        with connection.schema_editor() as editor:
            for index in Memory._meta.indexes:
                if index.name in BULK_INDEXES:
                    editor.add_index(Memory, index)
        cursor.execute("ANALYZE")
    return loaded


def counts(user: Any) -> str:
    """What the space holds, counted in the database (not from the generator's bookkeeping)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM memories_memory WHERE owner_id = %(o)s),"
            " (SELECT count(*) FROM memories_memory WHERE owner_id = %(o)s AND status = 'suppressed'),"
            " (SELECT count(*) FROM memories_memory WHERE owner_id = %(o)s AND superseded_at IS NOT NULL),"
            " (SELECT count(*) FROM memories_source WHERE owner_id = %(o)s),"
            " (SELECT count(*) FROM memories_evidence WHERE owner_id = %(o)s),"
            " (SELECT count(*) FROM memories_evidence WHERE owner_id = %(o)s AND stance = 'contradicts'),"
            " (SELECT count(*) FROM memories_relation WHERE owner_id = %(o)s),"
            " (SELECT count(*) FROM memories_relation WHERE owner_id = %(o)s AND superseded_at IS NOT NULL)",
            {"o": user.pk},
        )
        row = cursor.fetchone()
        assert row is not None
        memories, suppressed, superseded, sources, evidence, contradicting, relations, old_relations = row
        cursor.execute(
            "SELECT type, count(*) FROM memories_entity WHERE owner_id = %s GROUP BY type ORDER BY 2 DESC",
            [user.pk],
        )
        by_type = cursor.fetchall()
    entities = sum(n for _, n in by_type)
    return (
        f"{memories:,} memories ({suppressed:,} suppressed, {superseded:,} superseded), {sources:,} sources, "
        f"{evidence:,} evidence rows ({contradicting:,} contradicting), {entities:,} entities ("
        + ", ".join(f"{entity_type} {n:,}" for entity_type, n in by_type)
        + f"), {relations:,} relations ({old_relations:,} superseded)"
    )


# --- the endpoint ------------------------------------------------------------------------------


class Mcp:
    """Raw JSON-RPC to the MCP profiles: one POST per call, no session (the endpoint is stateless)."""

    def __init__(self, client: httpx.Client, token: str) -> None:
        self.client = client
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": PROTOCOL,
        }
        self.ids = 0

    def rpc(self, path: str, method: str, params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """(seconds, result) of one request; raises on anything but a successful JSON-RPC result."""
        self.ids += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        started = time.perf_counter()
        response = self.client.post(path, content=body, headers=self.headers)
        elapsed = time.perf_counter() - started
        if response.status_code != 200:
            raise RuntimeError(f"{path} {method}: HTTP {response.status_code}: {response.text[:1000]}")
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
            answer = json.loads(data[-1])
        else:
            answer = response.json()
        if answer.get("id") != self.ids or "result" not in answer:
            raise RuntimeError(f"{path} {method}: not a result: {json.dumps(answer)[:1000]}")
        return elapsed, dict(answer["result"])

    def tool(self, path: str, name: str, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """(seconds, structuredContent) of a tools/call that must succeed."""
        elapsed, result = self.rpc(path, "tools/call", {"name": name, "arguments": arguments})
        content = result.get("structuredContent")
        if result.get("isError") or not isinstance(content, dict):
            raise RuntimeError(
                f"{path} {name}({json.dumps(arguments)[:300]}) failed: {json.dumps(result)[:1000]}"
            )
        return elapsed, content

    def resource(self, path: str, uri: str) -> tuple[float, dict[str, Any]]:
        elapsed, result = self.rpc(path, "resources/read", {"uri": uri})
        contents = result.get("contents")
        if not isinstance(contents, list) or len(contents) != 1:
            raise RuntimeError(f"{path} {uri}: unexpected contents: {json.dumps(result)[:1000]}")
        return elapsed, dict(json.loads(contents[0]["text"]))


Call = Callable[[int], tuple[float, dict[str, Any]]]


def measure(call: Call, *, calls: int, warmup: int = 5) -> tuple[list[float], list[dict[str, Any]]]:
    for i in range(warmup):
        call(-1 - i)
    latencies, results = [], []
    for i in range(calls):
        elapsed, result = call(i)
        latencies.append(elapsed)
        results.append(result)
    return latencies, results


def report(label: str, latencies: list[float], detail: str) -> None:
    print(
        f"{label:<44} p50 {percentile(latencies, 50) * 1000:6.1f} ms"
        f"   p95 {percentile(latencies, 95) * 1000:6.1f} ms   max {max(latencies) * 1000:6.1f} ms"
        f"   ({len(latencies)} calls{', ' + detail if detail else ''})"
    )


def mean_of(results: list[dict[str, Any]], count: Callable[[dict[str, Any]], int]) -> float:
    return statistics.mean(count(r) for r in results)


def facts_detail(results: list[dict[str, Any]]) -> str:
    """How many facts an answer held, how many of them relations, how many contradicted."""
    facts = [r["facts"] for r in results]
    return (
        f"{statistics.mean(len(f) for f in facts):.1f} facts"
        f" ({statistics.mean(sum(x['fact_type'] == 'relation' for x in f) for f in facts):.1f} relations,"
        f" {statistics.mean(sum(x['contradiction_count'] > 0 for x in f) for f in facts):.1f} contradicted)"
    )


def claims_detail(results: list[dict[str, Any]]) -> str:
    claims = [r["claims"] for r in results]
    return (
        f"{statistics.mean(len(c) for c in claims):.1f} claims"
        f" ({statistics.mean(sum(bool(x['contradicts']) for x in c) for c in claims):.1f} contradicting)"
    )


def run_jobs(mcp: Mcp, texts: list[str]) -> list[str]:
    """Ingest `texts` as real jobs and wait (polling as an agent would) until the worker has done them all."""
    job_ids = [mcp.tool("/mcp/ingest", "ingest", {"content": text})[1]["job_id"] for text in texts]
    deadline = time.monotonic() + 600
    while True:
        status = mcp.tool("/mcp/ingest", "pipeline_readiness", {"job_ids": job_ids})[1]
        if status["stop_polling"]:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"ingest jobs did not finish: {status['summary']}")
        time.sleep((status["poll_after_ms"] or 500) / 1000)
    if status["summary"]["succeeded"] != len(job_ids):
        raise RuntimeError(f"ingest jobs did not all succeed: {json.dumps(status)[:2000]}")
    return job_ids


# --- main --------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument(
        "--relations",
        type=int,
        default=4000,
        help="about this many at most (whole chains, and bounded by the people)",
    )
    parser.add_argument("--distinct", type=int, default=3000, help="sentences embedded with the real model")
    parser.add_argument("--calls", type=int, default=100, help="measured calls per operation")
    parser.add_argument("--keep", action="store_true", help="keep the data folder afterwards")
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    rng = random.Random(42)  # noqa: S311 - reproducible synthetic data, not secrets

    with service_with_data_dir(keep=args.keep) as (url, _token, data_dir):
        if args.keep:
            print(f"data folder (kept): {data_dir}")
        # This process talks to the service's own embedded database for the bulk load only.
        use_service_database(data_dir)
        from django.db import connection

        from accounts.services import pat_create
        from memories.services.account import user_sign_up

        user = user_sign_up(email="profiles@example.com", password="bench-password-123")  # noqa: S106
        scopes = ["memory:read", "memory:write"]
        pat, token = pat_create(user=user, name="bench", scopes=scopes)
        importer, _ = pat_create(user=user, name="importer", scopes=scopes)
        claimants = [USER, f"token:{pat.pk}", f"token:{importer.pk}"]

        started = time.perf_counter()
        print(f"embedding {args.distinct} distinct synthetic sentences with the real model ...", flush=True)
        bases = person_bases(args.distinct, rng)
        print(f"  done in {time.perf_counter() - started:.0f} s; loading rows with COPY ...", flush=True)
        loaded = load(user=user, claimants=claimants, bases=bases, args=args, rng=rng)
        loaded_counts = counts(user)
        print(f"  loaded and indexed in {time.perf_counter() - started:.0f} s", flush=True)
        connection.close()

        n = args.calls
        people = loaded.people
        homed = sorted(loaded.home)
        span = (loaded.memory_end - MEMORY_START).total_seconds()

        def person_question(_: int) -> str:
            person = rng.choice(people)
            values = {"person": person, "place": rng.choice(PLACES), "company": rng.choice(COMPANIES)}
            return rng.choice(PERSON_QUESTIONS).format(**values)

        # Half about the related people by full name, half recall_latency's everyday questions.
        asked = [person_question(i) if i % 2 else q for i, q in enumerate(queries(n + 5, rng))]
        names = [
            rng.choice([p, p.split()[0], p.lower(), f"who is {p}?", p.split()[1]])
            for p in rng.choices(people, k=n + 5)
        ]
        past = [(MEMORY_START + timedelta(seconds=rng.uniform(0, span))).isoformat() for _ in range(n + 5)]

        with httpx.Client(base_url=url, timeout=120) as client:
            mcp = Mcp(client, token)
            job_texts = [
                rng.choice(JOB_TEXTS).format(
                    person=rng.choice(people), place=rng.choice(PLACES), company=rng.choice(COMPANIES),
                    month=rng.choice(MONTHS), job=rng.choice(JOBS),
                )
                for _ in range(10)
            ]  # fmt: skip
            print("running 10 ingest jobs through the worker ...", flush=True)
            job_ids = run_jobs(mcp, job_texts)

            print()
            print(f"data: synthetic; {loaded_counts}; plus 10 real ingest jobs")
            print(
                f"MCP over HTTP (protocol {PROTOCOL}, stateless, personal access token), one call at a time:"
            )

            def get_context(i: int) -> tuple[float, dict[str, Any]]:
                name = rng.choice(people)
                elapsed, result = mcp.tool("/mcp/graph", "get_context", {"entity_name": name})
                assert result["entity"]["name"] == name and result["entity"]["type"] == "Person", result[
                    "entity"
                ]
                return elapsed, result

            latencies, results = measure(get_context, calls=n)
            report(
                "graph get_context(person)",
                latencies,
                f"{mean_of(results, lambda r: r['memory_total']):.1f} memories, "
                f"{mean_of(results, lambda r: r['relation_total']):.1f} relations each",
            )

            latencies, results = measure(lambda i: mcp.tool("/mcp/graph", "list_entities", {}), calls=n)
            assert all(len(r["entities"]) == 50 and r["next_cursor"] for r in results)
            report("graph list_entities({})", latencies, "50 entities each")

            def relate(i: int) -> tuple[float, dict[str, Any]]:
                person = rng.choice(homed)
                place = rng.choice([p for p in PLACES if p != loaded.home[person]])
                arguments = {"source": person, "target": place, "relation_type": "lives_in"}
                elapsed, result = mcp.tool("/mcp/graph", "relate", arguments)
                assert result["created"] and len(result["superseded"]) == 1, result
                loaded.home[person] = place
                return elapsed, result

            latencies, results = measure(relate, calls=n)
            report("graph relate(lives_in), writes", latencies, "each supersedes the current home")

            latencies, results = measure(lambda i: mcp.resource("/mcp/graph", "graph://stats"), calls=n)
            assert all(r["memories"]["total"] >= args.memories for r in results)
            report("graph resources/read graph://stats", latencies, "")

            latencies, results = measure(
                lambda i: mcp.tool("/mcp/evidence", "resolve_entity", {"query": names[i]}), calls=n
            )
            report(
                "evidence resolve_entity(name)",
                latencies,
                f"{mean_of(results, lambda r: r['total']):.1f} candidates each",
            )

            latencies, results = measure(
                lambda i: mcp.tool("/mcp/evidence", "facts_context", {"query": asked[i], "k": 10}), calls=n
            )
            report("evidence facts_context(k=10)", latencies, facts_detail(results) + " each")

            latencies, results = measure(
                lambda i: mcp.tool(
                    "/mcp/evidence", "claims_and_sources_context", {"query": asked[i], "k": 10}
                ),
                calls=n,
            )
            report("evidence claims_and_sources_context(k=10)", latencies, claims_detail(results) + " each")

            latencies, results = measure(
                lambda i: mcp.tool("/mcp/evidence", "combined_context", {"query": asked[i], "k": 10}), calls=n
            )
            report(
                "evidence combined_context(k=10)",
                latencies,
                f"{facts_detail(results)} + {claims_detail(results)} each",
            )

            def facts_then(i: int) -> tuple[float, dict[str, Any]]:
                arguments = {"query": asked[i], "k": 10, "at": past[i]}
                elapsed, result = mcp.tool("/mcp/evidence", "facts_context", arguments)
                assert result["validity"]["view"] == "as_of", result["validity"]
                return elapsed, result

            latencies, results = measure(facts_then, calls=n)
            report("evidence facts_context(k=10, at=past)", latencies, facts_detail(results) + " each")

            def readiness(i: int) -> tuple[float, dict[str, Any]]:
                elapsed, result = mcp.tool("/mcp/ingest", "pipeline_readiness", {"job_ids": job_ids})
                assert result["summary"]["succeeded"] == len(job_ids) and result["stop_polling"], result
                return elapsed, result

            latencies, results = measure(readiness, calls=n)
            report("ingest pipeline_readiness(10 job ids)", latencies, "all succeeded")
        print(
            f"data: synthetic; {args.distinct} distinct sentences embedded with all-MiniLM-L6-v2, every "
            "memory reusing its sentence's vector plus Gaussian noise (sigma 0.01 per dimension, "
            "re-normalised)"
        )


if __name__ == "__main__":
    main()
