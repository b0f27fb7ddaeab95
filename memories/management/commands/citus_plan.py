"""`manage.py citus_plan`: the SQL that distributes this database with Citus (docs/scale.md)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from memories.sharding import LOCAL_TABLES, REFERENCE_TABLES, citus_plan


class Command(BaseCommand):
    help = (
        "Print the statements that distribute this database with Citus, in order: the reference "
        "tables, then every tenant table by its owner column in one colocation group "
        "(docs/scale.md, 'Sharding by owner (Citus)'). Prints; runs nothing."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write("-- Run on the Citus coordinator, as the database's owner, after migrate.")
        self.stdout.write("SET citus.multi_shard_modify_mode TO 'sequential';")
        for line in citus_plan():
            self.stdout.write(line)
        self.stdout.write("-- Left on the coordinator (local tables): " + ", ".join(sorted(LOCAL_TABLES)))
        self.stdout.write(
            "-- Copied to every node (reference tables): " + ", ".join(sorted(REFERENCE_TABLES))
        )
