"""`manage.py user_create --email EMAIL`: an account as sign-up makes it (default space, audit)."""

from __future__ import annotations

import getpass
import sys

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.forms import SignUpForm
from memories.services.account import user_sign_up


class Command(BaseCommand):
    help = (
        "Create an account with its default space, as the sign-up page does. The password is read "
        "from standard input when it is not a terminal (echo ... | manage.py user_create), else asked for."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--email", required=True)

    def handle(self, *args: object, **options: object) -> None:
        if sys.stdin.isatty():
            password = getpass.getpass("Password: ")
            if getpass.getpass("Password (again): ") != password:
                raise CommandError("the two passwords differ")
        else:
            password = sys.stdin.readline().rstrip("\n")
        # The sign-up form holds the rules (email normalised and unique, password validators).
        form = SignUpForm({"email": options["email"], "password": password})
        if not form.is_valid():
            problems = "; ".join(
                f"{field}: {' '.join(str(e) for e in errors)}" for field, errors in form.errors.items()
            )
            raise CommandError(problems)
        user = user_sign_up(email=form.cleaned_data["email"], password=form.cleaned_data["password"])
        self.stdout.write(f"created {user.email} ({user.id})")
