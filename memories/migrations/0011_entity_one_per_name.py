"""One entity per name in a space: merge the entities that the new key makes one, then make
(space, normalized_name) unique.

Before this, a name was one entity per type ("Acme" the Organization and "Acme" the Concept) and
"Acme Corp" was another name than "Acme". Every row is re-keyed with `normalize_entity_name` (the
key the code looks entities up with, so it is imported rather than copied), and in each space the
rows that share a key become one:

- the kept row: a specific type before Concept, then the type with most votes in the group, then
  the most linked memories, then the oldest, then the smallest id (deterministic);
- its type votes (`attributes["type_votes"]`) are the group's linked memories per type (a row with
  none counts one), so later mentions refine the type from real counts;
- memory links and relations (subject and object, the only foreign keys to Entity) move to it,
  without duplicate (memory, entity) pairs; the others' names and aliases become its aliases; its
  attributes win over theirs; the others are deleted.

Relations that now repeat one another, or link an entity to itself ("Acme Corp related_to Acme"),
are left as they are: they carry claims, and dropping claims is not a migration's call.
The reverse restores the per-type constraint; merged rows stay merged.
"""

from collections import defaultdict

from django.db import migrations, models
from django.db.models import Count
from django.utils import timezone

from memories.pipeline.entities import normalize_entity_name
from memories.pipeline.language import fold

CONCEPT = "Concept"


def merge_entities(apps, schema_editor):
    Entity = apps.get_model("memories", "Entity")
    Memory = apps.get_model("memories", "Memory")
    Relation = apps.get_model("memories", "Relation")
    Links = Memory.entities.through
    # Check foreign keys per statement, not at commit: deferred checks still pending would make
    # PostgreSQL refuse the ALTER TABLE that adds the new constraint in this same transaction.
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    now = timezone.now()
    space_ids = Entity.objects.order_by().values_list("space_id", flat=True).distinct()
    for space_id in list(space_ids):
        rows = list(Entity.objects.filter(space_id=space_id).order_by("created_at", "id"))
        linked = dict(
            Links.objects.filter(entity__space_id=space_id)
            .order_by()
            .values_list("entity_id")
            .annotate(n=Count("id"))
        )
        groups = defaultdict(list)
        for row in rows:
            groups[normalize_entity_name(row.name) or row.normalized_name].append(row)
        changed = []
        for key, group in groups.items():
            votes = defaultdict(int)
            for row in group:
                votes[row.type] += max(1, linked.get(row.id, 0))

            def rank(row, votes=votes):
                return (row.type == CONCEPT, -votes[row.type], -linked.get(row.id, 0), row.created_at, str(row.id))

            keeper, *others = sorted(group, key=rank)
            aliases = list(keeper.aliases)
            seen = {fold(keeper.name), *(fold(alias) for alias in aliases)}
            attributes = {}
            for other in reversed(others):
                attributes.update(other.attributes)
                for spelling in (other.name, *other.aliases):
                    if fold(spelling) not in seen:
                        seen.add(fold(spelling))
                        aliases.append(spelling)
                # One memory at a time: two of the merged rows may share a memory.
                already = Links.objects.filter(entity_id=keeper.id).values("memory_id")
                Links.objects.filter(entity_id=other.id, memory_id__in=already).delete()
                Links.objects.filter(entity_id=other.id).update(entity_id=keeper.id)
                Relation.objects.filter(subject_id=other.id).update(subject_id=keeper.id)
                Relation.objects.filter(object_id=other.id).update(object_id=keeper.id)
            if others:
                Entity.objects.filter(id__in=[other.id for other in others]).delete()
            attributes.update(keeper.attributes)
            attributes["type_votes"] = dict(sorted(votes.items()))
            keeper.normalized_name = key
            keeper.aliases = aliases
            keeper.attributes = attributes
            if others:
                keeper.updated_at = now
            changed.append(keeper)
        Entity.objects.bulk_update(
            changed, ["normalized_name", "aliases", "attributes", "updated_at"], batch_size=500
        )


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0010_memory_source_span"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="entity", name="entity_unique_per_space"),
        migrations.RunPython(merge_entities, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="entity",
            constraint=models.UniqueConstraint(
                fields=("space", "normalized_name"), name="entity_unique_name_per_space"
            ),
        ),
    ]
