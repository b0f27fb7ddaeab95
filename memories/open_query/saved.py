"""The shipped saved queries (`examples.*`): useful questions over the open_query views.

The evidence contract closes its tool namespace: a new query pattern is a saved query here, never
another tool. They are listed by `list_saved_queries`, shown by `describe_saved_query` and run
only by `run_saved_query`, through the same guard and sandbox as any other SELECT (a test runs
every one of them through the guard). Parameters are named, typed by a JSON Schema that the
registry's strict validator checks, and passed to PostgreSQL as `$1, $2 ...` in `params` order,
never spliced into the text.

Evidence and contradiction counts are of distinct claimants (`sources.claimant`), as everywhere in
the service: one agent saying a thing twice is one piece of evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memories.models import Relation
from memories.operations.schemas import obj

UUID = {"type": "string", "format": "uuid"}
TIME = {"type": "string", "format": "date-time"}


@dataclass(frozen=True)
class SavedQuery:
    name: str
    title: str
    description: str
    sql: str
    # (name, JSON Schema) in `$n` order.
    params: tuple[tuple[str, dict[str, Any]], ...] = ()
    # Parameters that may be left out: passed as SQL NULL, which the query's text must allow for.
    optional: tuple[str, ...] = ()

    @property
    def input_schema(self) -> dict[str, object]:
        return obj(dict(self.params), required=[name for name, _ in self.params if name not in self.optional])

    def summary(self) -> dict[str, object]:
        """What discovery shows: no SQL, no content."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "parameters": self.input_schema,
        }

    def positional(self, validated: dict[str, Any]) -> list[Any]:
        return [validated.get(name) for name, _ in self.params]


def _p(description: str, schema: dict[str, Any]) -> dict[str, object]:
    return {**schema, "description": description}


_ENTITY = ("entity_id", _p("entities.id (resolve_entity returns it).", UUID))

SAVED: dict[str, SavedQuery] = {
    q.name: q
    for q in (
        SavedQuery(
            "examples.memories_by_month",
            "Memories recorded per month, by kind",
            "How many memories the service learned each month, per kind (fact, episode, foresight), and how "
            "many of them still hold.",
            """SELECT date_trunc('month', recorded_at)::date AS month, kind, count(*) AS memories,
       count(*) FILTER (WHERE holds_now) AS holding_now
FROM memories GROUP BY 1, 2 ORDER BY 1, 2""",
        ),
        SavedQuery(
            "examples.current_relations_of_entity",
            "Current relations of an entity",
            "The relations that hold now with the entity as subject or object.",
            """SELECT id, type, subject_name, object_name, valid_from, recorded_at,
       CASE WHEN subject_id = $1::uuid THEN 'outgoing' ELSE 'incoming' END AS direction
FROM relations WHERE holds_now AND (subject_id = $1::uuid OR object_id = $1::uuid)
ORDER BY type, recorded_at DESC""",
            (_ENTITY,),
        ),
        SavedQuery(
            "examples.relation_history_of_entity",
            "Relation history of an entity",
            "Every relation of the entity, current and replaced, with both clocks, oldest first.",
            """SELECT id, type, subject_name, object_name, world_from, world_until, recorded_at,
       superseded_at, superseded_by, holds_now
FROM relations WHERE subject_id = $1::uuid OR object_id = $1::uuid
ORDER BY world_from, recorded_at""",
            (_ENTITY,),
        ),
        SavedQuery(
            "examples.facts_with_contradictions",
            "Facts with contradictions",
            "Memories and relations that at least one claimant contradicts, with the distinct claimants "
            "that support and that contradict each.",
            """WITH counted AS (
    SELECT coalesce(e.memory_id, e.relation_id) AS fact_id,
           CASE WHEN e.memory_id IS NOT NULL THEN 'memory' ELSE 'relation' END AS fact_type,
           count(DISTINCT s.claimant) FILTER (WHERE e.stance = 'supports') AS evidence_count,
           count(DISTINCT s.claimant) FILTER (WHERE e.stance = 'contradicts') AS contradiction_count
    FROM evidence e JOIN sources s ON s.id = e.source_id
    GROUP BY 1, 2)
SELECT c.fact_id, c.fact_type,
       coalesce(m.content, r.subject_name || ' ' || r.type || ' ' || r.object_name) AS fact,
       coalesce(m.holds_now, r.holds_now) AS holds_now, c.evidence_count, c.contradiction_count
FROM counted c
LEFT JOIN memories m ON m.id = c.fact_id
LEFT JOIN relations r ON r.id = c.fact_id
WHERE c.contradiction_count > 0 AND (m.id IS NOT NULL OR r.id IS NOT NULL)
ORDER BY c.contradiction_count DESC, c.fact_id""",
        ),
        SavedQuery(
            "examples.sources_of_fact",
            "Sources of a fact",
            "The sources that support or contradict one memory or relation: who asserted it, when, and how.",
            """SELECT s.id AS source_id, e.stance, s.origin, s.claimant, s.title, s.source_kind, s.source_ref,
       s.version, s.recorded_at, s.purged
FROM evidence e JOIN sources s ON s.id = e.source_id
WHERE e.memory_id = $1::uuid OR e.relation_id = $1::uuid
ORDER BY s.recorded_at""",
            (("fact_id", _p("A memory's or a relation's id (facts_context returns it).", UUID)),),
        ),
        SavedQuery(
            "examples.changed_since",
            "What changed since a time",
            "Memories and relations the service learned or replaced after a moment (system time), newest "
            "first: what an agent missed since it last looked.",
            """SELECT 'memory' AS fact_type, id, content AS fact,
       CASE WHEN superseded_at > $1::timestamptz THEN 'superseded' ELSE 'recorded' END AS change,
       greatest(recorded_at, superseded_at) AS changed_at
FROM memories WHERE recorded_at > $1::timestamptz OR superseded_at > $1::timestamptz
UNION ALL
SELECT 'relation', id, subject_name || ' ' || type || ' ' || object_name,
       CASE WHEN superseded_at > $1::timestamptz THEN 'superseded' ELSE 'recorded' END,
       greatest(recorded_at, superseded_at)
FROM relations WHERE recorded_at > $1::timestamptz OR superseded_at > $1::timestamptz
ORDER BY changed_at DESC""",
            (("since", _p("RFC 3339 with an offset.", TIME)),),
        ),
        SavedQuery(
            "examples.superseded_facts",
            "Replaced facts and what replaced them",
            "Memories a newer memory replaced, with the replacement and when.",
            """SELECT old.id, old.content AS was, new.id AS replaced_by, new.content AS now_says,
       old.superseded_at
FROM memories old JOIN memories new ON new.id = old.superseded_by
ORDER BY old.superseded_at DESC""",
        ),
        SavedQuery(
            "examples.entities_by_mentions",
            "Entities by how often they are mentioned",
            "Entities ranked by the memories that mention them (and how many of those still hold).",
            """SELECT e.id, e.name, e.type, count(me.memory_id) AS memories,
       count(me.memory_id) FILTER (WHERE m.holds_now) AS holding_now
FROM entities e
LEFT JOIN memory_entities me ON me.entity_id = e.id
LEFT JOIN memories m ON m.id = me.memory_id
GROUP BY e.id, e.name, e.type ORDER BY memories DESC, e.name""",
        ),
        SavedQuery(
            "examples.memories_of_entity",
            "Memories about an entity",
            "The memories that mention an entity, those that hold now first, newest first.",
            """SELECT m.id, m.kind, m.content, m.holds_now, m.world_from, m.world_until, m.recorded_at
FROM memory_entities me JOIN memories m ON m.id = me.memory_id
WHERE me.entity_id = $1::uuid
ORDER BY m.holds_now DESC, m.recorded_at DESC""",
            (_ENTITY,),
        ),
        SavedQuery(
            "examples.facts_held_at",
            "What held at a time",
            "Memories and relations that held at a moment in the world (world time, as known now).",
            """SELECT 'memory' AS fact_type, id, content AS fact, world_from, world_until
FROM memories
WHERE world_from <= $1::timestamptz AND (world_until IS NULL OR world_until > $1::timestamptz)
UNION ALL
SELECT 'relation', id, subject_name || ' ' || type || ' ' || object_name, world_from, world_until
FROM relations
WHERE world_from <= $1::timestamptz AND (world_until IS NULL OR world_until > $1::timestamptz)
ORDER BY world_from""",
            (("at", _p("RFC 3339 with an offset.", TIME)),),
        ),
        SavedQuery(
            "examples.claims_by_claimant",
            "Claims per claimant",
            "How many sources each claimant (agent, token, the user, a document) asserted, by origin, with "
            "the first and the last.",
            """SELECT claimant, origin, count(*) AS sources, min(recorded_at) AS first,
       max(recorded_at) AS last
FROM sources GROUP BY claimant, origin ORDER BY sources DESC, claimant""",
        ),
        SavedQuery(
            "examples.upcoming_plans",
            "Upcoming plans",
            "Plans and expected events (foresight) that are due from now on, soonest first.",
            """SELECT id, content, due_at, recorded_at FROM memories
WHERE kind = 'foresight' AND holds_now AND (due_at IS NULL OR due_at >= now())
ORDER BY due_at NULLS LAST, recorded_at""",
        ),
        SavedQuery(
            "examples.episodes_between",
            "Episodes in a period",
            "Things that happened (episodes) between two moments of world time, in order.",
            """SELECT id, content, occurred_at, recorded_at FROM memories
WHERE kind = 'episode' AND coalesce(occurred_at, world_from) >= $1::timestamptz
  AND coalesce(occurred_at, world_from) < $2::timestamptz
ORDER BY coalesce(occurred_at, world_from)""",
            (
                ("start", _p("From (inclusive), RFC 3339 with an offset.", TIME)),
                ("end", _p("Until (exclusive), RFC 3339 with an offset.", TIME)),
            ),
        ),
        SavedQuery(
            "examples.single_source_facts",
            "Facts resting on one claimant",
            "Memories that hold now and are supported by exactly one distinct claimant: the least "
            "corroborated facts.",
            """SELECT m.id, m.content, min(s.claimant) AS claimant, count(*) AS sources
FROM memories m
JOIN evidence e ON e.memory_id = m.id AND e.stance = 'supports'
JOIN sources s ON s.id = e.source_id
WHERE m.holds_now
GROUP BY m.id, m.content
HAVING count(DISTINCT s.claimant) = 1
ORDER BY m.content""",
        ),
        SavedQuery(
            "examples.document_versions",
            "Versions of a document",
            "Every stored version of a document named by source_kind + source_ref, with the memories each "
            "produced and how many still hold.",
            """SELECT s.id AS source_id, s.version, s.versioning_mode, s.title, s.recorded_at,
       s.source_modified_at, count(m.id) AS memories, count(m.id) FILTER (WHERE m.holds_now) AS holding_now
FROM sources s LEFT JOIN memories m ON m.source_id = s.id
WHERE s.source_kind = $1 AND s.source_ref = $2
GROUP BY s.id, s.version, s.versioning_mode, s.title, s.recorded_at, s.source_modified_at
ORDER BY s.version""",
            (
                (
                    "source_kind",
                    _p(
                        "Where the document lives (gdrive, notion ...).",
                        {"type": "string", "minLength": 1, "maxLength": 50},
                    ),
                ),
                ("source_ref", _p("Its id there.", {"type": "string", "minLength": 1, "maxLength": 500})),
            ),
        ),
        SavedQuery(
            "examples.tag_counts",
            "Tags by use",
            "How many memories carry each tag, and how many of those hold now.",
            """SELECT tag, count(*) AS memories, count(*) FILTER (WHERE holds_now) AS holding_now
FROM memories, unnest(tags) AS tag GROUP BY tag ORDER BY memories DESC, tag""",
        ),
        SavedQuery(
            # The earlier evidence contract's own example row: relation_current(subject_entity_id,
            # predicate?), "current relations matching a subject and optional predicate".
            "examples.relation_current",
            "Current relations of a subject",
            "The relations that hold now with the entity as their subject, of one predicate (relation "
            "type) when given, with the object and both clocks.",
            """SELECT id, type AS predicate, subject_id, subject_name, object_id, object_name, valid_from,
       recorded_at
FROM relations
WHERE holds_now AND subject_id = $1::uuid AND ($2::text IS NULL OR type = $2::text)
ORDER BY type, recorded_at DESC""",
            (
                ("subject_entity_id", _p("entities.id of the subject (resolve_entity returns it).", UUID)),
                (
                    "predicate",
                    _p(
                        "Only relations of this type (lives_in, works_at ...); all types when left out.",
                        {"type": "string", "enum": list(Relation.Type.values)},
                    ),
                ),
            ),
            optional=("predicate",),
        ),
        SavedQuery(
            # The second clock: facts_held_at asks world time; this asks system time.
            "examples.facts_known_at",
            "What the service held at a moment of system time",
            "Memories and relations the service had recorded by a moment and not yet replaced then: what "
            "it believed at that moment, whatever world time they are about, oldest first.",
            """SELECT 'memory' AS fact_type, id, content AS fact, recorded_at, superseded_at
FROM memories
WHERE recorded_at <= $1::timestamptz AND (superseded_at IS NULL OR superseded_at > $1::timestamptz)
UNION ALL
SELECT 'relation', id, subject_name || ' ' || type || ' ' || object_name, recorded_at, superseded_at
FROM relations
WHERE recorded_at <= $1::timestamptz AND (superseded_at IS NULL OR superseded_at > $1::timestamptz)
ORDER BY recorded_at, id""",
            (("known_at", _p("System time, RFC 3339 with an offset.", TIME)),),
        ),
    )
}
