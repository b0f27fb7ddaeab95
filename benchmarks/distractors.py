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

import hashlib
import random
import sys
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
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


def _chunk_key(texts: list[str]) -> str:
    """A digest of a chunk's texts: a cached chunk is used only for the texts it was embedded from."""
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]


def distractors(*, count: int, seed: int = 11) -> Distractors:
    """`count` distinct synthetic statements and their real embeddings (cached under var/).

    Resumable: each chunk of CHUNK vectors is written (atomically, beside a digest of its texts) as
    soon as it is embedded, so an interrupted build loses at most one chunk, and a chunk whose texts
    changed (the generator was edited) is embedded again rather than silently reused.
    """
    import numpy

    from memories import embeddings

    chunks_needed = -(-count // CHUNK)
    kinds, texts = _texts(count=chunks_needed * CHUNK, seed=seed)
    folder = CACHE / f"distractors-{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    chunks = []
    started = time.perf_counter()
    embedded = 0
    for offset in range(0, chunks_needed * CHUNK, CHUNK):
        batch = texts[offset : offset + CHUNK]
        key = _chunk_key(batch)
        path = folder / f"{offset:07d}-{key}.npy"
        if not path.exists():
            print(f"  embedding distractors {offset:,}-{offset + CHUNK:,} ...", flush=True)
            vectors = numpy.array(embeddings.embed(batch), dtype=numpy.float32)
            partial = path.with_suffix(".partial.npy")
            numpy.save(partial, vectors)
            partial.replace(path)
            embedded += len(batch)
            elapsed = time.perf_counter() - started
            print(f"    done ({elapsed:.0f} s so far, {embedded / elapsed:.0f} texts/s)", flush=True)
        chunks.append(numpy.load(path))
    vectors = numpy.concatenate(chunks)[:count]
    return Distractors(kinds[:count], texts[:count], vectors)


@dataclass
class Saved:
    """One statement to store as a memory, as if saved through REST at `saved` (no job, no agent)."""

    text: str
    vector: Any  # numpy float32 (384,), unit length
    saved: datetime
    session_id: uuid.UUID | None = None
    # Tags the saver gave (the worker merges them with the text's own #tags).
    tags: list[str] = field(default_factory=list)
    status: str = "active"
    pinned: bool = False
    superseded_at: datetime | None = None


def stored_form(text: str, *, saved: datetime) -> Any:
    """What the worker's rules make of `text` saved at `saved`: its kind, clocks (occurred_at,
    valid_from, due_at, stated_at, starts_by), entities, tags, slot and span, from the same function
    the worker calls (`memories.pipeline.extract.extract`). Every generated statement is one sentence,
    so it is one candidate with the text unchanged, and the cached vector is the vector of its content.
    """
    from memories.pipeline.extract import extract

    _, candidates = extract(text, reference=saved)
    if len(candidates) != 1 or candidates[0].content != text:
        raise ValueError(f"expected one candidate equal to the text, got {len(candidates)}: {text!r}")
    candidate = candidates[0]
    # As the worker does (`_candidates`): a statement states its own save time.
    candidate.stated_at = candidate.stated_at or saved
    return candidate


def vector_literal(vector: Any) -> str:
    return "[" + ",".join(f"{x:.6f}" for x in vector) + "]"


def copy_memories(cursor: Any, *, owner_id: int, space_id: Any, items: Iterable[Saved]) -> int:
    """COPY `items` into `space_id` as the worker stores a save: a Source per save, a Memory with the
    pipeline's kind, clocks, tags, slot and span (`stored_form`), and the entities it names linked
    (new entities made once per space, existing ones reused, as `entity_record` does).

    Left out, because recall reads none of it: the Job and Evidence rows, deduplication and
    supersession against earlier rows (the statements are distinct, and a slot rival stays current,
    so every loaded row competes in recall: harder than the service would make it, never easier).
    Returns the number of memories written. Call inside `bulk_indexes_dropped` for big loads.
    """
    from memories.pipeline.dedupe import fingerprint_of
    from memories.pipeline.entities import normalize_entity_name

    cursor.execute(
        "SELECT normalized_name, id FROM memories_entity WHERE owner_id = %s AND space_id = %s",
        [owner_id, space_id],
    )
    entity_ids: dict[str, Any] = dict(cursor.fetchall())
    new_entities: list[tuple[Any, str, str, str]] = []
    sources, memories, links = [], [], []
    for item in items:
        candidate = stored_form(item.text, saved=item.saved)
        source_id, memory_id = uuid.uuid4(), uuid.uuid4()
        sources.append((source_id, item))
        tags = "{" + ",".join(dict.fromkeys([*candidate.tags, *item.tags])) + "}"
        memories.append(
            (memory_id, owner_id, space_id, source_id, item.session_id, candidate.kind, item.text,
             fingerprint_of(item.text), candidate.slot[:200], candidate.slot_value[:200], tags,
             vector_literal(item.vector), 0.9, item.pinned, item.status, "", "", candidate.occurred_at,
             candidate.valid_from, candidate.due_at, candidate.stated_at, candidate.starts_by,
             candidate.span_start, candidate.span_end, item.saved, item.superseded_at, "",
             candidate.names_time)
        )  # fmt: skip
        for name, kind in candidate.entities:
            key = normalize_entity_name(name)
            if not key:
                continue
            if key not in entity_ids:
                entity_ids[key] = uuid.uuid4()
                new_entities.append((entity_ids[key], name[:200], key[:200], kind))
            links.append((memory_id, entity_ids[key]))
    with cursor.cursor.copy(
        "COPY memories_source (id, owner_id, space_id, origin, content, content_hash, session_id,"
        " source_kind, source_ref, version, versioning_mode, filename, media_type, size_bytes,"
        " refers_to, recorded_at, claimant, source_text, title, image_name, source_version_ref)"
        " FROM STDIN"
    ) as copy:
        for source_id, item in sources:
            digest = hashlib.sha256(item.text.encode()).hexdigest()
            copy.write_row(
                (source_id, owner_id, space_id, "rest", item.text, digest, item.session_id, "", "", 1,
                 "snapshot", "", "", len(item.text), None, item.saved, "user", "", "", "", "")
            )  # fmt: skip
    with cursor.cursor.copy(
        "COPY memories_entity (id, owner_id, space_id, name, normalized_name, type, aliases,"
        " attributes, created_at, updated_at) FROM STDIN"
    ) as copy:
        moment = datetime(2020, 1, 1, tzinfo=UTC)
        for entity_id, name, key, kind in new_entities:
            copy.write_row((entity_id, owner_id, space_id, name, key, kind, "{}", "{}", moment, moment))
    with cursor.cursor.copy(
        "COPY memories_memory (id, owner_id, space_id, source_id, session_id, kind, content,"
        " fingerprint, slot, slot_value, tags, embedding, confidence, pinned, status,"
        " suppressed_reason, suppressed_note, occurred_at, valid_from, due_at, stated_at, starts_by,"
        " span_start, span_end, recorded_at, superseded_at, category, names_time) FROM STDIN"
    ) as copy:
        for row in memories:
            copy.write_row(row)
    with cursor.cursor.copy(
        "COPY memories_memory_entities (owner_id, memory_id, entity_id) FROM STDIN"
    ) as copy:
        for link in links:
            copy.write_row((owner_id, *link))
    return len(memories)


# Dropped for a bulk load and built again after it, as a bulk import would: the model's own
# definitions (memories.models.Memory.Meta.indexes, which the migrations create), not copies.
BULK_INDEXES = ("memory_embedding_hnsw", "memory_search_gin")


@contextmanager
def bulk_indexes_dropped(cursor: Any) -> Iterator[None]:
    """Drop the HNSW and full-text indexes, run the load, then build them again and ANALYZE."""
    from django.db import connection

    from memories.models import Memory

    indexes = [index for index in Memory._meta.indexes if index.name in BULK_INDEXES]
    for index in indexes:
        cursor.execute(f"DROP INDEX IF EXISTS {index.name}")
    yield
    started = time.perf_counter()
    # The HNSW graph is built in memory while it fits in maintenance_work_mem, and much more slowly
    # on disk past it: about 2.2 KB a row with 384 dimensions and m = 16 (the vector and the
    # neighbour lists), so 3 KB a row, at least 2 GB, at most a quarter of this machine's memory
    # (1M rows: 2.9 GB). Set for this session only.
    cursor.execute("SELECT count(*) FROM memories_memory")
    rows = cursor.fetchone()[0]
    megabytes = min(max(2048, rows * 3 // 1024), psutil.virtual_memory().total // 4 // 2**20)
    cursor.execute(f"SET maintenance_work_mem = '{megabytes}MB'")
    with connection.schema_editor() as editor:
        for index in indexes:
            editor.add_index(Memory, index)
    cursor.execute("ANALYZE")
    print(f"  HNSW and full-text indexes built in {time.perf_counter() - started:.0f} s", flush=True)


def load_distractors(*, spaces: list[Any], data: Distractors) -> None:
    """Store every distractor in each of `spaces` (`copy_memories`), then rebuild the indexes.

    Saved as separate notes (no session, one Source each) over 2021-2024, so they take part in every
    step of recall (text, vector, period, dated, entities) as a person's other notes would; context
    spreading passes over them because notes without a session are not a conversation.
    """
    from django.db import connection

    rng = random.Random(5)  # noqa: S311 - reproducible synthetic data, not secrets
    start = datetime(2021, 1, 1, tzinfo=UTC)
    minutes = 4 * 365 * 24 * 60
    with connection.cursor() as cursor, bulk_indexes_dropped(cursor):
        for space in spaces:
            items = (
                Saved(text, vector, start + timedelta(minutes=rng.randrange(minutes)))
                for text, vector in zip(data.texts, data.vectors, strict=True)
            )
            copy_memories(cursor, owner_id=space.owner_id, space_id=space.pk, items=items)
            print(f"  loaded {len(data.texts):,} distractors into {space.owner}'s space", flush=True)


def main() -> None:
    """Build (or resume) the embedding cache alone, e.g. in the background before a long run."""
    import argparse
    import os

    parser = argparse.ArgumentParser(description="Embed and cache the distractor statements.")
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    # Only the settings are needed (which embedder to use); no database is opened.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    started = time.perf_counter()
    data = distractors(count=args.count, seed=args.seed)
    print(f"{len(data.texts):,} distractors embedded and cached in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
