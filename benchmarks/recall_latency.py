"""Recall latency at scale: p50/p95 of `recall` through the API with 100,000 memories in one space.

    .venv/bin/python benchmarks/recall_latency.py [--memories 100000] [--others 3] [--other-memories 20000]
                                                  [--queries 300] [--keep] [--profile]
    .venv/bin/python benchmarks/recall_latency.py --service URL --data-dir DIR [--profile]

It starts a throwaway service (`manage.py up` on a temporary data folder), creates the measured user
and `--others` other users, and bulk-loads memories straight into the embedded PostgreSQL with COPY:
`--memories` in the measured user's default space and `--other-memories` for each other user, every
one with its Source (saved in conversation-like sessions), entity links, tags and clocks, a few
suppressed and superseded. Then it asks `--queries` varied questions through
`POST /api/v1/operations/recall` (HTTP, the query's embedding included), one at a time.

Synthetic data, said plainly: embedding 160,000 texts with the real model would take most of an
hour on two cores, so the text comes from templates over a few hundred names, places and topics;
`--distinct` of those sentences are embedded with the real model (all-MiniLM-L6-v2) and every row
takes the vector of its sentence with a little Gaussian noise (then re-normalised), so vectors are
clustered as real ones are and rows are not exact duplicates. The HNSW and GIN indexes are dropped
for the load and rebuilt after it (as a bulk import would), then the tables are analysed.

`--profile` adds the time split of one recall per stage (auth, embedding, each SQL statement, the
Python around them), run in this process through Django's test client against the same database:
where a recall's time goes, without HTTP. `--keep` keeps the data folder; `--service URL --data-dir
DIR` measures a service already running on such a folder (`DEEPRECALL_VAR_DIR=DIR manage.py up`),
skipping the load, so code can be compared on the same data.
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._service import cpu_seconds, cpu_spent, service_processes, use_service_database
from benchmarks.locomo import percentile, service_with_data_dir


def words(text: str) -> list[str]:
    """A list from a block of space-separated words: long word lists stay readable."""
    return text.split()


NAMES = words(
    """
Maya Tomas Aiko Kwame Lena Omar Priya Jonas Sofia Mateo Yuki Amara Lucas Ingrid Ravi Chloe Diego Hana
Felix Zara Noah Elif Marco Nadia Oscar Leila Hugo Freya Sami Alma Theo Rosa Ivan Mina Pablo Greta Kofi
Lucia Arjun Clara Emil Nora Tariq Ines Kai Vera Malik Olga Jasper Mei Rafael Sara Anton Layla Bruno Tove
"""
)
PLACES = words(
    """
Lisbon Berlin Osaka Nairobi Montreal Lima Oslo Hanoi Porto Vienna Seoul Dublin Madrid Prague Kyoto Cairo
Athens Zurich Bogota Helsinki Marseille Krakow Tallinn Valencia Munich Boston Denver Chicago Toronto
Vancouver Sydney Auckland Istanbul Budapest Copenhagen Amsterdam Edinburgh Florence Naples Seville
"""
)
ACTIVITIES = words(
    """
hiking swimming climbing cycling running kayaking skiing surfing camping sailing painting pottery baking
dancing singing gardening fishing birdwatching photography yoga chess knitting woodworking
"""
)
FOODS = words(
    """
ramen sushi pizza tacos curry paella dumplings falafel risotto pho burritos lasagna couscous bibimbap
pancakes goulash ceviche gnocchi kimchi empanadas
"""
)
COMPANIES = words(
    """
Siemens Nokia Spotify Airbus Philips Ericsson Zalando Adyen Canva Atlassian Shopify Klarna Bosch Lego
Ikea Maersk Novartis Roche Unilever Heineken
"""
)
PROJECTS = words(
    """
Atlas Beacon Cobalt Delta Ember Falcon Granite Harbor Iris Juniper Kestrel Lumen Meridian Nova Orion
Pioneer Quartz Raven Summit Tundra
"""
)
JOBS = words("designer engineer nurse teacher architect accountant chef pilot lawyer researcher")
RELATIONS = words("sister brother cousin friend colleague neighbour aunt uncle mentor roommate")
FEELINGS = words("happy tired proud nervous relaxed grateful frustrated excited calm anxious")
EVENTS = words("concert wedding conference marathon exhibition workshop festival interview match party")
PRODUCTS = words("laptop bicycle camera phone kettle backpack tent guitar headphones watch")
MONTHS = words("January February March April May June July August September October November December")
WEEKDAYS = words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
TAGS = ["work", "family", "health", "travel", "food", "hobby", "finance", "friends"]
EXTRAS = [
    "",
    "",
    " It was a lot of fun.",
    " I want to do it again soon.",
    " Need to follow up on this.",
    " It rained the whole time.",
    " We stayed until late.",
    " I should write this down properly.",
]

TEMPLATES = [
    ("episode", "I went {activity} with {name} near {place} last {weekday}."),
    ("fact", "My {relation} {name} works at {company} as a {job}."),
    ("fact", "My favourite food is {food}, especially the {food} in {place}."),
    ("foresight", "Remind me to call {name} about the {project} project next {weekday}."),
    ("episode", "I had {food} for dinner with {name} at a small place in {place}."),
    ("foresight", "The {project} project deadline moved to {day} {month}."),
    ("fact", "{name} is allergic to {food} and hates {activity}."),
    ("episode", "I felt {feeling} after the {event} in {place} on {weekday}."),
    ("foresight", "We booked a trip to {place} in {month} to go {activity}."),
    ("episode", "I bought a new {product} for {activity} from a shop in {place}."),
    ("fact", "{name} lives in {place} and is learning {activity}."),
    ("episode", "The meeting with {company} about {project} went well; {name} presented."),
    ("fact", "I prefer {activity} over {activity2} on weekends."),
    ("episode", "{name} and I went to a {event} in {place} in {month}."),
    ("foresight", "I plan to start {activity} lessons with {name} in {month}."),
]
QUESTIONS = [
    "What did I do with {name} in {place}?",
    "Where does my {relation} work?",
    "What is my favourite food?",
    "When is the {project} deadline?",
    "Who is allergic to {food}?",
    "How did I feel after the {event}?",
    "Where am I travelling in {month}?",
    "What did I buy for {activity}?",
    "Where does {name} live?",
    "How did the meeting with {company} go?",
    "Do I prefer {activity} or {activity2}?",
    "What should I talk to {name} about?",
    "when did I last go {activity}",
    "{name} {company} {project}",
    "dinner in {place}",
    "Tell me everything about {name}.",
]


def fill(template: str, rng: random.Random) -> tuple[str, list[tuple[str, str]]]:
    values = {
        "name": rng.choice(NAMES),
        "place": rng.choice(PLACES),
        "activity": rng.choice(ACTIVITIES),
        "activity2": rng.choice(ACTIVITIES),
        "food": rng.choice(FOODS),
        "company": rng.choice(COMPANIES),
        "project": rng.choice(PROJECTS),
        "job": rng.choice(JOBS),
        "relation": rng.choice(RELATIONS),
        "feeling": rng.choice(FEELINGS),
        "event": rng.choice(EVENTS),
        "product": rng.choice(PRODUCTS),
        "month": rng.choice(MONTHS),
        "weekday": rng.choice(WEEKDAYS),
        "day": str(rng.randint(1, 28)),
    }
    text = template.format(**values)
    entities = [
        (values[key], kind)
        for key, kind in (("name", "Person"), ("place", "Location"), ("company", "Organization"))
        if "{" + key + "}" in template
    ]
    return text, entities


@dataclass
class Base:
    kind: str
    text: str
    entities: list[tuple[str, str]]
    vector: Any = None


def make_bases(count: int, rng: random.Random) -> list[Base]:
    from memories import embeddings

    seen: set[str] = set()
    bases: list[Base] = []
    while len(bases) < count:
        kind, template = rng.choice(TEMPLATES)
        text, entities = fill(template, rng)
        if text not in seen:
            seen.add(text)
            bases.append(Base(kind, text, entities))
    vectors = embeddings.embed([b.text for b in bases])
    for base, vector in zip(bases, vectors, strict=True):
        base.vector = vector
    return bases


def vector_text(base: Any, noise: Any, numpy: Any) -> str:
    vector = base + noise
    vector /= numpy.linalg.norm(vector)
    return "[" + ",".join(f"{x:.6f}" for x in vector) + "]"


def load(*, owners: list[tuple[Any, int]], bases: list[Base], rng: random.Random) -> None:
    """COPY `count` memories (with sources and entity links) into each owner's default space."""
    import numpy
    from django.db import connection

    from benchmarks.distractors import BULK_INDEXES
    from memories.models import Memory, Space
    from memories.pipeline.entities import normalize_entity_name
    from memories.pipeline.timeparse import mentions_time

    matrix = numpy.array([b.vector for b in bases], dtype=numpy.float32)
    noise_rng = numpy.random.default_rng(7)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    with connection.cursor() as cursor:
        for name in BULK_INDEXES:
            cursor.execute(f"DROP INDEX IF EXISTS {name}")
        for user, count in owners:
            space = Space.objects.get(owner=user, is_default=True)
            entity_ids: dict[tuple[str, str], uuid.UUID] = {}
            sources, memories, links = [], [], []
            moment: datetime = start
            session: str | None = None
            for i in range(count):
                base_index = rng.randrange(len(bases))
                base = bases[base_index]
                content = base.text + rng.choice(EXTRAS)
                # Conversation-like saving: bursts of a few seconds apart, hours between sessions.
                if i % rng.randint(5, 20) == 0:
                    moment += timedelta(hours=rng.uniform(1, 12))
                    session = str(uuid.uuid4()) if rng.random() < 0.6 else None
                else:
                    moment += timedelta(seconds=rng.uniform(5, 90))
                source_id, memory_id = uuid.uuid4(), uuid.uuid4()
                sources.append((source_id, content, session, moment))
                occurred = moment - timedelta(days=rng.randint(0, 30))
                status = "suppressed" if rng.random() < 0.02 else "active"
                superseded = moment + timedelta(days=10) if rng.random() < 0.03 else None
                tags = "{" + ",".join(rng.sample(TAGS, rng.randint(0, 2))) + "}"
                noise = noise_rng.normal(0, 0.01, size=matrix.shape[1])
                memories.append(
                    (memory_id, user.pk, space.pk, source_id, session, base.kind, content, "", "", "", tags,
                     vector_text(matrix[base_index], noise, numpy), 0.9, rng.random() < 0.01, status, "",
                     occurred if base.kind == "episode" else None,
                     occurred if base.kind == "fact" else None,
                     occurred + timedelta(days=20) if base.kind == "foresight" else None,
                     moment, superseded, "", "", mentions_time(content))
                )  # fmt: skip
                for name, kind in base.entities:
                    key = (normalize_entity_name(name), kind)
                    if key not in entity_ids:
                        entity_ids[key] = uuid.uuid4()
                    links.append((memory_id, entity_ids[key]))
            with cursor.cursor.copy(
                "COPY memories_source (id, owner_id, space_id, origin, content, content_hash, session_id,"
                " source_kind, source_ref, version, versioning_mode, filename, media_type, size_bytes,"
                " refers_to, recorded_at, claimant, source_text, title, image_name, source_version_ref)"
                " FROM STDIN"
            ) as copy:
                for source_id, content, session, saved_at in sources:
                    copy.write_row(
                        (source_id, user.pk, space.pk, "rest", content, "-", session, "", "", 1, "snapshot",
                         "", "", len(content), saved_at, saved_at, "user", "", "", "", "")
                    )  # fmt: skip
            with cursor.cursor.copy(
                "COPY memories_entity (id, owner_id, space_id, name, normalized_name, type, aliases,"
                " attributes, created_at, updated_at) FROM STDIN"
            ) as copy:
                for (normalized, kind), entity_id in entity_ids.items():
                    copy.write_row(
                        (entity_id, user.pk, space.pk, normalized.title(), normalized, kind, "{}", "{}",
                         start, start)
                    )  # fmt: skip
            with cursor.cursor.copy(
                "COPY memories_memory (id, owner_id, space_id, source_id, session_id, kind, content,"
                " fingerprint, slot, slot_value, tags, embedding, confidence, pinned, status,"
                " suppressed_reason, occurred_at, valid_from, due_at, recorded_at, superseded_at,"
                " category, suppressed_note, names_time) FROM STDIN"
            ) as copy:
                for row in memories:
                    copy.write_row(row)
            with cursor.cursor.copy(
                "COPY memories_memory_entities (owner_id, memory_id, entity_id) FROM STDIN"
            ) as copy:
                for link in links:
                    copy.write_row((user.pk, *link))
            print(f"  loaded {count} memories for {user.email}", flush=True)
        print("  building the HNSW and GIN indexes ...", flush=True)
        cursor.execute("SET maintenance_work_mem = '1GB'")
        # The migration's definitions (parameters included), not a copy of them.
        with connection.schema_editor() as editor:
            for index in Memory._meta.indexes:
                if index.name in BULK_INDEXES:
                    editor.add_index(Memory, index)
        cursor.execute("ANALYZE")
        prewarm(cursor)


def prewarm(cursor: Any) -> None:
    """Read the memory table and its indexes into PostgreSQL's cache, as a service that has been
    answering for a while has them (and as autoprewarm restores them after a restart): measured
    right after a bulk load, the first recalls would otherwise be page reads from the OS cache."""
    import psycopg
    from django.db import connection

    from config.embedded_pg import ensure_running

    # The service logs in without superuser rights, which creating an extension needs: the cluster's
    # superuser creates it (in the service's database), as an administrator would.
    server = ensure_running(Path(str(connection.settings_dict["PGDATA"])))
    with psycopg.connect(server.conninfo(str(connection.settings_dict["NAME"])), autocommit=True) as admin:
        admin.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    cursor.execute(
        "SELECT sum(pg_prewarm(c.oid)) FROM pg_class c"
        " WHERE c.oid = 'memories_memory'::regclass"
        " OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'memories_memory'::regclass)"
    )


AT = "2024-06-01T00:00:00+00:00"


def queries(count: int, rng: random.Random | None = None) -> list[str]:
    # By default their own seed, so a run on a kept data folder asks the same questions as the run
    # that loaded it (profile_latency.py passes its own generator).
    rng = rng or random.Random(4242)  # noqa: S311 - reproducible synthetic data, not secrets
    return [fill(rng.choice(QUESTIONS), rng)[0] for _ in range(count)]


def distinct_queries(count: int, rng: random.Random) -> list[str]:
    """`count` different questions from the same templates, in the order first drawn."""
    seen: dict[str, None] = {}
    for _ in range(count * 200):
        seen.setdefault(fill(rng.choice(QUESTIONS), rng)[0])
        if len(seen) == count:
            return list(seen)
    raise ValueError(f"the templates make fewer than {count} different questions")


# Where a statement's time is booked in the profile, by what it reads (first match wins).
STAGES = [
    # Before the SET LOCALs: they may travel in the same message as the retrieval statement.
    ("vector_pool", "recall: retrieval statement"),
    # The text side as a statement of its own, while the query is embedded on another thread.
    ("text_ranked", "recall: text side (overlaps the embedding)"),
    ("accounts_personalaccesstoken", "auth: token lookup"),
    ("django_cache", "auth: throttle cache"),
    ("set_config", "recall: SET LOCAL (hnsw)"),
    ("memories_memory_entities", "recall: hit entities"),
    ("memories_memory", "recall: hit rows"),
    ("memories_job", "freshness: pending saves"),
    ("memories_space", "space lookup"),
]


def _stage_of(sql: str) -> str:
    if sql.lstrip().upper().startswith(("SAVEPOINT", "RELEASE", "ROLLBACK", "BEGIN", "COMMIT")):
        return "sql: transaction control"
    return next((stage for marker, stage in STAGES if marker in sql), "sql: other")


def _split(values: list[float]) -> str:
    return f"p50 {percentile(values, 50) * 1000:6.2f} ms   p95 {percentile(values, 95) * 1000:6.2f} ms"


EMBEDDING = "query embedding (its own thread)"


def profile(token: str, bodies: list[dict[str, Any]]) -> None:
    """Print the median time per stage of a recall, run in this process (no HTTP), and the statements."""
    from django.db import connection
    from django.test import Client

    from memories import embeddings

    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {token}")
    current: dict[str, float] = {}
    counts: dict[str, int] = {}

    def timed_sql(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            stage = _stage_of(sql)
            current[stage] = current.get(stage, 0.0) + time.perf_counter() - started
            counts[stage] = counts.get(stage, 0) + 1

    real_embed = embeddings.embed

    def timed_embed(texts: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return real_embed(texts, *args, **kwargs)
        finally:
            current[EMBEDDING] = current.get(EMBEDDING, 0.0) + time.perf_counter() - started

    split: dict[str, list[float]] = {}
    totals: list[float] = []
    statements: list[int] = []
    embeddings.embed = timed_embed
    try:
        with connection.execute_wrapper(timed_sql):
            for index, body in enumerate([bodies[0]] * 5 + bodies):
                current.clear()
                counts.clear()
                started = time.perf_counter()
                response = client.post("/api/v1/operations/recall", body, content_type="application/json")
                total = time.perf_counter() - started
                if response.status_code != 200:
                    raise RuntimeError(f"recall answered {response.status_code}: {response.content[:300]!r}")
                if index < 5:
                    continue  # warm-up: the first calls pay for imports and the pool
                totals.append(total)
                statements.append(sum(counts.values()))
                # The query's embedding runs on a thread of its own while the text side's statement
                # runs (memories.retrieval.recall), so it is not part of the serial sum: what this
                # thread waited for the vector beyond that statement is in the Python line.
                serial = sum(v for stage, v in current.items() if stage != EMBEDDING)
                if not any("text side" in stage for stage in current):
                    serial += current.get(EMBEDDING, 0.0)
                current["python (Django, rendering; waiting for vector)"] = total - serial
                for stage, seconds in current.items():
                    split.setdefault(stage, []).append(seconds)
    finally:
        embeddings.embed = real_embed
    print(f"time split of one recall, in this process (Django test client, no HTTP), {len(totals)} calls:")
    for stage, values in sorted(split.items(), key=lambda item: -statistics.median(item[1])):
        values += [0.0] * (len(totals) - len(values))
        print(f"  {stage:<46} {_split(values)}")
    print(
        f"  {'total':<46} {_split(totals)}   ({statistics.median(statements):.0f} SQL statements per recall)"
    )


@dataclass
class Measured:
    latencies: list[float]
    mean_hits: float
    # CPU milliseconds per recall of the web process and of PostgreSQL (its backends and helpers):
    # unlike wall time, what a recall costs whatever else the machine is doing, and what bounds
    # throughput (two cores give 2,000 ms of CPU a second).
    web_cpu_ms: float
    database_cpu_ms: float


def measure(client: httpx.Client, token: str, bodies: list[dict[str, Any]]) -> Measured:
    headers = {"Authorization": f"Bearer {token}"}
    latencies = []
    hits = []
    url = str(client.base_url).rstrip("/")
    before = cpu_seconds(service_processes(url))
    for body in bodies:
        started = time.perf_counter()
        response = client.post("/api/v1/operations/recall", json=body, headers=headers)
        latencies.append(time.perf_counter() - started)
        response.raise_for_status()
        hits.append(len(response.json()["memories"]))
    spent = cpu_spent(before, cpu_seconds(service_processes(url)))
    per_call = {part: seconds * 1000 / len(bodies) for part, seconds in spent.items()}
    return Measured(latencies, statistics.mean(hits), per_call["web"], per_call["database"])


def report(label: str, measured: Measured) -> None:
    latencies = measured.latencies
    print(
        f"{label:<34} p50 {percentile(latencies, 50) * 1000:6.1f} ms"
        f"   p95 {percentile(latencies, 95) * 1000:6.1f} ms   max {max(latencies) * 1000:6.1f} ms"
        f"   CPU/recall web {measured.web_cpu_ms:5.1f} ms + database {measured.database_cpu_ms:5.1f} ms"
        f"   ({len(latencies)} calls, {measured.mean_hits:.1f} hits each)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--others", type=int, default=3)
    parser.add_argument("--other-memories", type=int, default=20_000)
    parser.add_argument("--distinct", type=int, default=6000, help="sentences embedded with the real model")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--seed",
        type=int,
        default=4242,
        help="of the questions: another seed on a kept service asks questions it has not embedded yet",
    )
    parser.add_argument("--keep", action="store_true", help="keep the data folder afterwards")
    parser.add_argument("--profile", action="store_true", help="also print the time split per stage")
    parser.add_argument("--service", help="URL of a service already running on --data-dir (no load)")
    parser.add_argument("--data-dir", type=Path, help="a data folder kept by --keep (with --service)")
    args = parser.parse_args()
    if bool(args.service) != bool(args.data_dir):
        parser.error("--service and --data-dir go together")
    # The benchmark process talks HTTP in a loop; one log line per request would drown the numbers.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    if args.service:
        use_service_database(args.data_dir)
        run(args, args.service, loaded=True)
        return
    with service_with_data_dir(keep=args.keep) as (url, _token, data_dir):
        if args.keep:
            print(f"data folder (kept): {data_dir}")
        # This process talks to the service's own embedded database for the bulk load only.
        use_service_database(data_dir)
        run(args, url, loaded=False)


def run(args: argparse.Namespace, url: str, *, loaded: bool) -> None:
    """Load the data unless `loaded`, then measure recall through `url` (and profile it)."""
    from django.db import connection

    from accounts.models import User
    from accounts.services import pat_create
    from memories import embeddings
    from memories.services.account import user_sign_up

    emails = [f"latency-{i}@example.com" for i in range(1 + args.others)]
    if loaded:
        users = [User.objects.get(email=email) for email in emails]
    else:
        users = [
            user_sign_up(email=email, password="bench-password-123")  # noqa: S106
            for email in emails
        ]
    token = pat_create(user=users[0], name="bench", scopes=["memory:read", "memory:write"])[1]
    other_token = pat_create(user=users[1], name="bench", scopes=["memory:read"])[1] if args.others else ""
    if not loaded:
        rng = random.Random(42)  # noqa: S311 - reproducible synthetic data, not secrets
        started = time.perf_counter()
        print(f"embedding {args.distinct} distinct synthetic sentences with the real model ...", flush=True)
        bases = make_bases(args.distinct, rng)
        print(f"  done in {time.perf_counter() - started:.0f} s; loading rows with COPY ...", flush=True)
        owners = [(users[0], args.memories)] + [(u, args.other_memories) for u in users[1:]]
        load(owners=owners, bases=bases, rng=rng)
        print(f"  loaded and indexed in {time.perf_counter() - started:.0f} s", flush=True)

    # Every measured call asks a question the service has not seen: it caches query embeddings, and
    # a repeated question would not pay for its embedding (the templates repeat themselves often,
    # 219 distinct in 300 draws). Each case and the warm-up get their own questions.
    fresh = iter(distinct_queries(args.queries + 420, random.Random(args.seed)))  # noqa: S311
    questions = [next(fresh) for _ in range(args.queries)]
    warm_up = [next(fresh) for _ in range(20)]
    cases = {name: [next(fresh) for _ in range(100)] for name in ("filtered", "expand", "at", "other")}
    embed_times = []
    for question in questions[:100]:
        t = time.perf_counter()
        embeddings.embed([question])
        embed_times.append(time.perf_counter() - t)
    connection.close()

    with httpx.Client(base_url=url, timeout=60) as client:
        measure(client, token, [{"query": q} for q in warm_up])
        print()
        total = args.memories + args.others * args.other_memories
        print(
            f"recall through the API, {args.memories:,} memories in the measured space, "
            f"{total:,} in the table, one call at a time:"
        )
        report("default (top_k 20)", measure(client, token, [{"query": q} for q in questions]))
        report(
            "types=[episode] + tags=[travel]",
            measure(
                client,
                token,
                [{"query": q, "types": ["episode"], "tags": ["travel"]} for q in cases["filtered"]],
            ),
        )
        report(
            "expand_entities=true",
            measure(client, token, [{"query": q, "expand_entities": True} for q in cases["expand"]]),
        )
        report(
            "at = 2024-06-01 (time travel)",
            measure(client, token, [{"query": q, "at": "2024-06-01T00:00:00+00:00"} for q in cases["at"]]),
        )
        if other_token:
            report(
                f"another owner ({args.other_memories:,} memories)",
                measure(client, other_token, [{"query": q} for q in cases["other"]]),
            )
    print()
    print(
        "query embedding alone (in this process, same model): "
        f"p50 {percentile(embed_times, 50) * 1000:.1f} ms, "
        f"p95 {percentile(embed_times, 95) * 1000:.1f} ms"
    )
    print(
        f"data: synthetic; {args.distinct} distinct sentences embedded with all-MiniLM-L6-v2, every row "
        "reusing its sentence's vector plus Gaussian noise (sigma 0.01 per dimension, re-normalised)"
    )
    if args.profile:
        print()
        profile(token, [{"query": q} for q in questions[:100]])
        print()
        profile(token, [{"query": q, "expand_entities": True} for q in questions[:100]])


if __name__ == "__main__":
    main()
