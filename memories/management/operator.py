"""What the operator commands share: finding an account, acting as the operator, one-line errors.

Each command is thin: it parses, calls one service or selector, prints. A failure is a
CommandError, which Django prints as one line (exit status 1), never a traceback.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

from django.core.management.base import CommandError

from accounts.caller import Actor
from accounts.models import User
from accounts.selectors import user_get_by_email
from memories.errors import AppError


def user_by_email(email: str) -> User:
    user = user_get_by_email(email=email)
    if user is None:
        raise CommandError(f"no account has the email {email!r}; see manage.py user_list")
    return user


def operator_acting(owner: User, command: str) -> Actor:
    """The audit trail's actor: the account changes, nobody signed in acts (an operator at a shell);
    the command's name stands where a request id would, to find the change in the logs."""
    return Actor(owner=owner, user=None, request_id=f"manage.py {command}")


@contextlib.contextmanager
def app_errors_as_command_errors() -> Iterator[None]:
    """A service's refusal (an AppError, message safe to show) becomes the command's one line."""
    try:
        yield
    except AppError as exc:
        raise CommandError(f"{exc.message} ({exc.code})") from None


def as_json(value: object) -> str:
    return json.dumps(value, indent=2, sort_keys=True, default=str)
