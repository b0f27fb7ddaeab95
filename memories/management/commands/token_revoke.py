"""`manage.py token_revoke --email EMAIL TOKEN_ID`: revoke one personal access token."""

from __future__ import annotations

import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from accounts.selectors import pat_list
from memories.management.operator import app_errors_as_command_errors, operator_acting, user_by_email
from memories.services.account import token_revoke


class Command(BaseCommand):
    help = (
        "Revoke one of an account's personal access tokens (audited). Without a token id, list the "
        "account's tokens with their ids."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--email", required=True, help="the account's email")
        parser.add_argument("token_id", nargs="?", help="the token's id (from the list)")

    def handle(self, *args: Any, **options: Any) -> None:
        user = user_by_email(options["email"])
        if not options["token_id"]:
            now = timezone.now()
            for t in pat_list(user=user):
                expired = t.expires_at is not None and t.expires_at <= now
                state = "revoked" if t.revoked_at else "expired" if expired else "active"
                self.stdout.write(f"{t.id}\t{t.prefix}...\t{t.name}\t{t.scopes}\t{state}")
            return
        try:
            token_id = uuid.UUID(options["token_id"])
        except ValueError:
            raise CommandError(f"{options['token_id']!r} is not a token id (a UUID)") from None
        with app_errors_as_command_errors():
            token = token_revoke(actor=operator_acting(user, "token_revoke"), token_id=token_id)
        self.stdout.write(f"revoked {token.id} ({token.name}) of {user.email}")
