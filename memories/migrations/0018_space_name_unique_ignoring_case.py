"""Space names are unique per owner ignoring case ("Work" and "work" are one name).

Spaces that already differ only in case are renamed first ("work (2)"), so the constraint can be
added; nothing is merged, and the reverse keeps the new names (they are still valid)."""

import django.db.models.functions.text
from django.conf import settings
from django.db import migrations, models


def rename_case_twins(apps, schema_editor):
    Space = apps.get_model("memories", "Space")
    seen: dict[tuple[object, str], int] = {}
    taken = {(s.owner_id, s.name.lower()) for s in Space.objects.all()}
    for space in Space.objects.order_by("owner_id", "-is_default", "created_at", "id"):
        key = (space.owner_id, space.name.lower())
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 1:
            continue
        number = seen[key]
        while (space.owner_id, f"{space.name[:90]} ({number})".lower()) in taken:
            number += 1
        space.name = f"{space.name[:90]} ({number})"
        taken.add((space.owner_id, space.name.lower()))
        space.save(update_fields=["name"])


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0017_job_progress"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(rename_case_twins, migrations.RunPython.noop),
        migrations.RemoveConstraint(
            model_name="space",
            name="space_unique_name_per_owner",
        ),
        migrations.AddConstraint(
            model_name="space",
            constraint=models.UniqueConstraint(
                models.F("owner"),
                django.db.models.functions.text.Lower("name"),
                name="space_unique_name_per_owner_ci",
            ),
        ),
    ]
