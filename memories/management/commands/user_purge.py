"""`manage.py user_purge --email EMAIL --yes`: delete an account and everything in it."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memories.management.operator import (
    app_errors_as_command_errors,
    as_json,
    operator_acting,
    user_by_email,
)
from memories.services.account import account_delete


class Command(BaseCommand):
    help = (
        "Delete an account and everything in it, as the account's own deletion does (every memory "
        "hard-deleted, source text purged, tokens and grants gone), and print the purge receipt. "
        "The audit trail keeps the receipt without content."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--email", required=True, help="the account's email")
        parser.add_argument("--yes", action="store_true", help="confirm: this cannot be undone")

    def handle(self, *args: Any, **options: Any) -> None:
        user = user_by_email(options["email"])
        if not options["yes"]:
            raise CommandError(f"this deletes {user.email} and all of its memories for good; add --yes")
        with app_errors_as_command_errors():
            receipt = account_delete(actor=operator_acting(user, "user_purge"))
        self.stdout.write(as_json(receipt))
