"""`manage.py token_create --email EMAIL --name NAME`: a personal access token, printed once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from memories.management.operator import app_errors_as_command_errors, operator_acting, user_by_email
from memories.services.account import token_create


class Command(BaseCommand):
    help = (
        "Create a personal access token for an account and print it (the only time it is shown). "
        "The creation is audited like one made in the dashboard."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--email", required=True, help="the account's email")
        parser.add_argument("--name", required=True, help="what the token is for (shown in the dashboard)")
        parser.add_argument(
            "--scopes",
            default="memory:read,memory:write",
            help="comma-separated scopes (default memory:read,memory:write)",
        )
        parser.add_argument("--expires-in-days", type=int, default=None, help="default: never expires")

    def handle(self, *args: Any, **options: Any) -> None:
        user = user_by_email(options["email"])
        days = options["expires_in_days"]
        expires_at = timezone.now() + timedelta(days=days) if days is not None else None
        scopes = [s.strip() for s in options["scopes"].split(",") if s.strip()]
        with app_errors_as_command_errors():
            token, raw = token_create(
                actor=operator_acting(user, "token_create"),
                name=options["name"],
                scopes=scopes,
                expires_at=expires_at,
            )
        self.stderr.write(f"token {token.id} for {user.email}; it is shown once:")
        self.stdout.write(raw)
