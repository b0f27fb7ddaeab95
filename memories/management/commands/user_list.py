"""`manage.py user_list`: every account, one a line."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from accounts.selectors import user_list
from memories.management.operator import as_json


class Command(BaseCommand):
    help = "List every account: email, id, when it joined, and whether it is active or staff."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print JSON instead of text")

    def handle(self, *args: object, **options: object) -> None:
        rows = [
            {
                "email": u.email,
                "id": str(u.id),
                "joined": u.date_joined.isoformat(timespec="seconds"),
                "active": u.is_active,
                "staff": u.is_staff,
            }
            for u in user_list()
        ]
        if options["json"]:
            self.stdout.write(as_json(rows))
            return
        for row in rows:
            flags = ",".join(
                f for f in ("staff" if row["staff"] else "", "" if row["active"] else "inactive") if f
            )
            self.stdout.write(f"{row['email']}\t{row['id']}\t{row['joined']}\t{flags}".rstrip())
