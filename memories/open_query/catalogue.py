"""The documented views of the open query: what an agent may read, column by column.

The views live in the PostgreSQL schema `open_query` (created by migration
0013_open_query_views_and_role, which holds their SQL). Each shows only the caller's current
space: its rows are filtered on the scope row the running transaction wrote as the service's
own user (memories.selectors.open_query), and the query role may read nothing but these views.
Forgotten (suppressed) memories are not in them at all, like everywhere an agent reads; an entity
known only from forgotten memories is left out too.
Sources show their metadata, never their text: a forgotten memory's words may be inside a
source, and cutting them out is the claims layer's rule (claims_and_sources_context), not SQL's.

tests/memories/test_open_query.py checks that the deployed views have exactly these columns.
"""

from __future__ import annotations

from dataclasses import dataclass

SCHEMA = "open_query"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    description: str


@dataclass(frozen=True)
class View:
    name: str
    description: str
    columns: tuple[Column, ...]

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name,
            "description": self.description,
            "columns": [{"name": c.name, "type": c.type, "description": c.description} for c in self.columns],
        }


def _c(name: str, type_: str, description: str) -> Column:
    return Column(name, type_, description)


_WORLD = (
    _c(
        "world_from",
        "timestamptz",
        "When it started to hold in the world: valid_from, else occurred_at, else "
        "stated_at, else recorded_at.",
    ),
    _c("world_until", "timestamptz", "When it stopped holding: valid_until, else superseded_at; null: open."),
    _c(
        "holds_now",
        "boolean",
        "Holds now: before its valid_until, or without one and not superseded (the current view).",
    ),
)

VIEWS: dict[str, View] = {
    v.name: v
    for v in (
        View(
            "memories",
            "The active memories (facts, episodes, plans) of the current space, current and past. "
            "Forgotten memories are not here.",
            (
                _c("id", "uuid", "The memory's id (as facts_context returns it)."),
                _c("kind", "text", "fact, episode or foresight."),
                _c("category", "text", "The category a REST save gave it, or empty."),
                _c("content", "text", "The statement."),
                _c("tags", "text[]", "Its tags."),
                _c("confidence", "float8", "0-1."),
                _c("pinned", "boolean", "Pinned by the user."),
                _c("occurred_at", "timestamptz", "World time: when an episode happened."),
                _c("valid_from", "timestamptz", "World time: a fact's stated start."),
                _c("valid_until", "timestamptz", "World time: a fact's stated end."),
                _c("due_at", "timestamptz", "World time: when a plan is due."),
                _c("stated_at", "timestamptz", "When it was said (the time its source refers to)."),
                _c("recorded_at", "timestamptz", "System time: when the service learned it."),
                _c("superseded_at", "timestamptz", "System time: when a newer memory replaced it."),
                _c("superseded_by", "uuid", "The memory that replaced it."),
                _c("source_id", "uuid", "The source it was derived from (sources.id)."),
                _c("job_id", "uuid", "The job that derived it."),
                _c("session_id", "uuid", "The session it was saved in."),
                *_WORLD,
            ),
        ),
        View(
            "entities",
            "People, organisations, places and things the space's memories or relations mention.",
            (
                _c("id", "uuid", "The entity's id (as resolve_entity returns it)."),
                _c("name", "text", "Its name."),
                _c("type", "text", "Person, Organization, Location, Product, Concept, Event ..."),
                _c("aliases", "text[]", "Other names it goes by."),
                _c("created_at", "timestamptz", "System time: first seen."),
                _c("updated_at", "timestamptz", "System time: last changed."),
            ),
        ),
        View(
            "memory_entities",
            "Which entities each memory mentions.",
            (
                _c("memory_id", "uuid", "memories.id"),
                _c("entity_id", "uuid", "entities.id"),
            ),
        ),
        View(
            "relations",
            "Typed links between two entities (lives_in, works_at ...), current and past.",
            (
                _c("id", "uuid", "The relation's id."),
                _c("type", "text", "The relation type."),
                _c("subject_id", "uuid", "entities.id of the subject."),
                _c("subject_name", "text", "The subject's name."),
                _c("object_id", "uuid", "entities.id of the object."),
                _c("object_name", "text", "The object's name."),
                _c("valid_from", "timestamptz", "World time: its stated start."),
                _c("valid_until", "timestamptz", "World time: its stated end."),
                _c("recorded_at", "timestamptz", "System time: when the service learned it."),
                _c("superseded_at", "timestamptz", "System time: when a newer relation replaced it."),
                _c("superseded_by", "uuid", "The relation that replaced it."),
                _c("world_from", "timestamptz", "When it started to hold: valid_from, else recorded_at."),
                *_WORLD[1:],
            ),
        ),
        View(
            "sources",
            "What was asserted (saves, documents, relates): the claims, by whom and when. Metadata "
            "only; claims_and_sources_context gives their text.",
            (
                _c("id", "uuid", "The source's id (as claims_and_sources_context returns it)."),
                _c("origin", "text", "remember, document, api, relate ..."),
                _c("claimant", "text", "Who asserted it: agent:<id>, token:<id>, user, document:<name>."),
                _c("session_id", "uuid", "The session it was saved in."),
                _c("source_kind", "text", "A document's home (gdrive, notion ...), or empty."),
                _c("source_ref", "text", "A document's id there, or empty."),
                _c("version", "int4", "The document's version number."),
                _c("versioning_mode", "text", "snapshot or living."),
                _c("title", "text", "A document's title, or empty."),
                _c("media_type", "text", "A document's type, or empty."),
                _c("size_bytes", "int8", "How big the saved content is."),
                _c("source_modified_at", "timestamptz", "When the document last changed at its source."),
                _c("refers_to", "timestamptz", "The time the content refers to."),
                _c("recorded_at", "timestamptz", "System time: when it was saved."),
                _c("purged", "boolean", "Its content was deleted (a hard delete)."),
            ),
        ),
        View(
            "evidence",
            "The bridge between claims and facts: which source supports or contradicts which memory or "
            "relation.",
            (
                _c("id", "uuid", "The evidence row's id."),
                _c("source_id", "uuid", "sources.id"),
                _c("memory_id", "uuid", "memories.id, or null for a relation."),
                _c("relation_id", "uuid", "relations.id, or null for a memory."),
                _c("stance", "text", "supports or contradicts."),
                _c("recorded_at", "timestamptz", "System time: when it was recorded."),
            ),
        ),
    )
}
