"""Unrelated memories for the distractor mode of `benchmarks/locomo.py`, built once and cached.

Synthetic personal statements of the kind a person's memory holds (plans, habits, people, trips,
meals, purchases, feelings, work), written from templates over a few hundred names, places,
activities and things (the vocabulary of `benchmarks/recall_latency.py`, plus more templates):
every one distinct, and every one embedded with the real model (all-MiniLM-L6-v2), no shortcut.
They talk about the same sort of things LoCoMo's speakers do (painting, camping, a concert, a
sister), which is the point: recall must find a conversation's turns among many memories that
resemble them, not among noise. No name in them is a speaker of the development split.

The vectors are cached in var/benchmarks/distractors-<seed>/ in chunks of 10,000, so the embedding
(tens of minutes on two busy cores) runs once and resumes where it stopped.
"""

from __future__ import annotations

import random
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks._service import ROOT
from benchmarks.recall_latency import (
    ACTIVITIES,
    COMPANIES,
    EVENTS,
    FEELINGS,
    FOODS,
    JOBS,
    MONTHS,
    NAMES,
    PLACES,
    PRODUCTS,
    PROJECTS,
    RELATIONS,
    TEMPLATES,
    WEEKDAYS,
    words,
)

CACHE = ROOT / "var" / "benchmarks"

MORE_TEMPLATES = [
    ("episode", "Spent the afternoon {activity} with my {relation}; we talked about {topic}."),
    ("fact", "My {relation} {name} has a dog called {pet} and a cat called {pet2}."),
    ("episode", "Finally finished reading {book} on the train to {place}."),
    ("fact", "I have been {activity} every {weekday} for {years} years now."),
    ("foresight", "Need to buy a {product} before the trip to {place} in {month}."),
    ("episode", "{name} cooked {food} for my birthday and it was {feeling}-making good."),
    ("fact", "I started working at {company} as a {job} in {year}."),
    ("episode", "We watched {film} at the cinema in {place} with {name} and {name2}."),
    ("fact", "My doctor told me to cut down on {food} and do more {activity}."),
    ("foresight", "Want to learn {skill} this year, maybe with {name}."),
    ("episode", "The {event} in {place} was cancelled because of the weather, so we went {activity}."),
    ("fact", "{name} and {name2} got married in {place} in {month} {year}."),
    ("episode", "Lost my {product} at the {event}; {name} found it the next day."),
    ("fact", "I keep my {product} in the blue drawer next to the {thing}."),
    ("episode", "Volunteered at the {cause} shelter on {weekday} with {name}."),
    ("foresight", "{name} is moving to {place} in {month}; help with boxes on {weekday}."),
    ("fact", "I'm saving up for a {product} and a trip to {place}."),
    ("episode", "Had a long call with {name} about {topic}; felt {feeling} afterwards."),
    ("fact", "My {relation} studies {subject} at the university in {place}."),
    ("episode", "Tried {food} for the first time at a market in {place}. Not bad."),
]
PETS = words("Rex Bella Luna Max Coco Milo Nala Pepper Biscuit Ziggy Olive Mochi Rocky Daisy Simba")
BOOKS = words("Dune Emma Beloved Ulysses Rebecca Middlemarch Persuasion Siddhartha Solaris Kindred")
FILMS = words("Alien Vertigo Amelie Parasite Casablanca Arrival Heat Jaws Rocky Up Coco Brazil")
SKILLS = words("Spanish Japanese piano guitar sewing welding calligraphy coding sailing pottery")
SUBJECTS = words("biology history law medicine physics economics music architecture chemistry")
TOPICS = words("money school holidays health work politics moving family football books")
CAUSES = words("animal homeless food youth refugee")
THINGS = words("printer bookshelf window fridge sofa desk stairs mirror")


def _fill(template: str, rng: random.Random) -> str:
    values = {
        "name": rng.choice(NAMES),
        "name2": rng.choice(NAMES),
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
        "year": str(rng.randint(2015, 2024)),
        "years": str(rng.randint(2, 15)),
        "pet": rng.choice(PETS),
        "pet2": rng.choice(PETS),
        "book": rng.choice(BOOKS),
        "film": rng.choice(FILMS),
        "skill": rng.choice(SKILLS),
        "subject": rng.choice(SUBJECTS),
        "topic": rng.choice(TOPICS),
        "cause": rng.choice(CAUSES),
        "thing": rng.choice(THINGS),
    }
    return template.format(**values)


@dataclass
class Distractors:
    kinds: list[str]
    texts: list[str]
    vectors: Any  # numpy float32, (count, 384), unit length


# Embedded and cached in chunks of this many, so a long build resumes where it stopped and a smaller
# run (`--distractors 20000`) uses the first chunks of the same sequence.
CHUNK = 10_000


def _texts(*, count: int, seed: int) -> tuple[list[str], list[str]]:
    """The first `count` distinct statements of the sequence `seed` makes (a prefix is stable)."""
    rng = random.Random(seed)  # noqa: S311 - reproducible synthetic data, not secrets
    templates = TEMPLATES + MORE_TEMPLATES
    seen: set[str] = set()
    kinds: list[str] = []
    texts: list[str] = []
    while len(texts) < count:
        kind, template = rng.choice(templates)
        text = _fill(template, rng)
        if text not in seen:
            seen.add(text)
            kinds.append(kind)
            texts.append(text)
    return kinds, texts


def distractors(*, count: int, seed: int = 11) -> Distractors:
    """`count` distinct synthetic statements and their real embeddings (cached under var/)."""
    import numpy

    from memories import embeddings

    kinds, texts = _texts(count=count, seed=seed)
    folder = CACHE / f"distractors-{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    chunks = []
    started = time.perf_counter()
    for offset in range(0, count, CHUNK):
        path = folder / f"{offset:07d}.npy"
        if not path.exists():
            print(
                f"  embedding distractors {offset:,}-{offset + CHUNK:,} with the real model ...", flush=True
            )
            batch = _texts(count=offset + CHUNK, seed=seed)[1][offset:]
            numpy.save(path, numpy.array(embeddings.embed(batch), dtype=numpy.float32))
            print(f"    done ({time.perf_counter() - started:.0f} s so far)", flush=True)
        chunks.append(numpy.load(path))
    vectors = numpy.concatenate(chunks)[:count]
    return Distractors(kinds, texts, vectors)


def load_distractors(*, spaces: list[Any], data: Distractors) -> None:
    """COPY every distractor (with its Source) into each of `spaces`, then rebuild the indexes.

    Saved as notes over 2021-2024 (without sessions, one Source each), so they take part in every
    step of recall (text, vector, period, context) as a person's other memories would.
    """
    from django.db import connection

    rng = random.Random(5)  # noqa: S311 - reproducible synthetic data, not secrets
    start = datetime(2021, 1, 1, tzinfo=UTC)
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS memory_embedding_hnsw")
        cursor.execute("DROP INDEX IF EXISTS memory_search_gin")
        for space in spaces:
            with cursor.cursor.copy(
                "COPY memories_source (id, owner_id, space_id, origin, content, content_hash, session_id,"
                " source_kind, source_ref, version, versioning_mode, filename, media_type, size_bytes,"
                " refers_to, recorded_at, claimant, source_text, title) FROM STDIN"
            ) as source_copy:
                rows = []
                for kind, text, vector in zip(data.kinds, data.texts, data.vectors, strict=True):
                    saved = start + timedelta(minutes=rng.randrange(4 * 365 * 24 * 60))
                    source_id = uuid.uuid4()
                    source_copy.write_row(
                        (source_id, space.owner_id, space.pk, "rest", text, "-", None, "", "", 1,
                         "snapshot", "", "", len(text), saved, saved, "user", "", "")
                    )  # fmt: skip
                    rows.append((source_id, kind, text, vector, saved))
            with cursor.cursor.copy(
                "COPY memories_memory (id, owner_id, space_id, source_id, session_id, kind, content,"
                " fingerprint, slot, slot_value, tags, embedding, confidence, pinned, status,"
                " suppressed_reason, occurred_at, valid_from, due_at, recorded_at, superseded_at,"
                " category) FROM STDIN"
            ) as memory_copy:
                for source_id, kind, text, vector, saved in rows:
                    memory_copy.write_row(
                        (uuid.uuid4(), space.owner_id, space.pk, source_id, None, kind, text, "", "", "",
                         "{}", "[" + ",".join(f"{x:.6f}" for x in vector) + "]", 0.9, False, "active", "",
                         saved if kind == "episode" else None, saved if kind == "fact" else None,
                         saved + timedelta(days=20) if kind == "foresight" else None, saved, None, "")
                    )  # fmt: skip
            print(f"  loaded {len(data.texts):,} distractors into {space.owner}'s space", flush=True)
        print("  building the HNSW and GIN indexes ...", flush=True)
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute(
            "CREATE INDEX memory_embedding_hnsw ON memories_memory USING hnsw (embedding vector_cosine_ops)"
            " WITH (m = 16, ef_construction = 64)"
        )
        cursor.execute("CREATE INDEX memory_search_gin ON memories_memory USING gin (search_vector)")
        cursor.execute("ANALYZE")
