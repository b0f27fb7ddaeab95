"""`manage.py open_query_roles`: the open query's database roles, for the administrator.

`--sql` prints what a PostgreSQL superuser runs once in the service's database (the query role,
and the functions taken from PUBLIC: memories/open_query/roles.py); `--check` logs in as the query
role and says whether it is only a reader of the views, as the open query checks before it runs.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memories.open_query.roles import admin_sql
from memories.selectors.open_query import query_role_problems


class Command(BaseCommand):
    help = (
        "Print the SQL a PostgreSQL superuser runs once for the open query's roles (--sql), or check "
        "the query role as this deployment has it (--check; exit status 1 when it is not safe)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--sql", action="store_true", help="print the administrator's SQL")
        group.add_argument("--check", action="store_true", help="check the query role")

    def handle(self, *args: object, **options: object) -> None:
        if options["sql"]:
            service = str(settings.DATABASES["default"].get("USER") or "")
            if not service:
                raise CommandError(
                    "DATABASE_URL names no user: the SQL grants the service's user what it uses"
                )
            self.stdout.write(admin_sql(service_role=service, query_role=settings.OPEN_QUERY_ROLE))
            return
        problems = query_role_problems()
        if problems:
            raise CommandError(f"the open query's role {settings.OPEN_QUERY_ROLE}: " + "; ".join(problems))
        self.stdout.write(f"{settings.OPEN_QUERY_ROLE}: logs in, reads the open_query views and nothing else")
