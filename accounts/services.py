"""Writes of credentials: personal access tokens, and pausing an OAuth app. Audited entry points
that surfaces call are in `memories.services.account` (the audit trail is the memory's).

A token is shown to its owner once, at creation; only its sha256 is stored, so
the database never holds a working credential.
"""

from __future__ import annotations

import secrets
import uuid
from datetime import datetime

from django.db.models import QuerySet
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from accounts.caller import ALL_SCOPES
from accounts.models import TOKEN_PREFIX, AppPause, PersonalAccessToken, User, token_hash
from memories.errors import AppError, Code, name_checked

# What a list shows of a token: "drp_" and 8 random characters, too little to guess the rest.
DISPLAY_PREFIX_LENGTH = 12


# The column's own limit, so the service, the REST schema and the dashboard form cannot drift from it.
NAME_MAX_LENGTH: int = PersonalAccessToken._meta.get_field("name").max_length  # type: ignore[assignment]


def _clean_name(name: str) -> str:
    return name_checked(name, max_length=NAME_MAX_LENGTH, code=Code.INVALID_TOKEN_NAME, what="A token name")


def _clean_scopes(scopes: list[str]) -> str:
    allowed = ", ".join(sorted(ALL_SCOPES))
    # A bare string is iterable too; "memory:read" must not become eleven one-letter scopes.
    if isinstance(scopes, str) or not scopes:
        raise AppError(
            Code.INVALID_SCOPE,
            f"Choose at least one scope from: {allowed}.",
            agent_action=f"pass a list of scopes from: {allowed}",
        )
    unknown = sorted({s for s in scopes if s not in ALL_SCOPES}, key=str)
    if unknown:
        raise AppError(
            Code.INVALID_SCOPE,
            f"Unknown scope {unknown[0]!r}; the scopes are: {allowed}.",
            agent_action=f"pass a list of scopes from: {allowed}",
            details={"unknown_scopes": unknown},
        )
    if len(set(scopes)) != len(scopes):
        raise AppError(
            Code.INVALID_SCOPE,
            "Each scope may be given only once.",
            agent_action="remove the repeated scope",
        )
    return " ".join(sorted(scopes))


def _clean_expiry(expires_at: datetime | None, *, now: datetime) -> datetime | None:
    if expires_at is None:
        return None
    # A naive datetime cannot be compared with the aware clock and would be read
    # in whatever zone the server runs in.
    if not isinstance(expires_at, datetime) or timezone.is_naive(expires_at):
        raise AppError(
            Code.INVALID_EXPIRY,
            "The expiry must be a date and time with a time zone.",
            agent_action="send expires_at as an ISO 8601 time with an offset",
        )
    if expires_at <= now:
        raise AppError(
            Code.INVALID_EXPIRY,
            "The expiry must be in the future.",
            agent_action="choose an expiry later than now, or none",
        )
    return expires_at


def pat_create(
    *, user: User, name: str, scopes: list[str], expires_at: datetime | None = None
) -> tuple[PersonalAccessToken, str]:
    """Create a personal access token for `user`.

    Returns the stored row and the plaintext token. The plaintext is not kept
    anywhere: this is the only time anyone sees it. Raises AppError
    (`invalid_token_name`, `invalid_scope`, `invalid_expiry`) before storing anything.
    """
    now = timezone.now()
    clean_name = _clean_name(name)
    clean_scopes = _clean_scopes(scopes)
    clean_expiry = _clean_expiry(expires_at, now=now)
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = PersonalAccessToken.objects.create(
        user=user,
        name=clean_name,
        token_hash=token_hash(raw),
        prefix=raw[:DISPLAY_PREFIX_LENGTH],
        scopes=clean_scopes,
        created_at=now,
        expires_at=clean_expiry,
    )
    return token, raw


def pat_revoke(*, user: User, token_id: uuid.UUID | str) -> PersonalAccessToken:
    """Revoke one of `user`'s tokens; it stops working at once.

    Idempotent: revoking a revoked token keeps the first revocation time. Someone
    else's token and an unknown id both raise `token_not_found`, so the answer does
    not reveal whether a token exists.
    """
    try:
        pk = token_id if isinstance(token_id, uuid.UUID) else uuid.UUID(str(token_id))
    except ValueError:
        raise _token_not_found() from None
    mine = PersonalAccessToken.objects.filter(user=user, pk=pk)
    _revoke(mine)
    token = mine.select_related("user").first()
    if token is None:
        raise _token_not_found()
    return token


def pat_revoke_all(*, user: User) -> int:
    """Revoke every live token of `user`; they stop working at once. Returns how many were live."""
    return _revoke(PersonalAccessToken.objects.filter(user=user))


def _revoke(tokens: QuerySet[PersonalAccessToken]) -> int:
    # One conditional UPDATE rather than read-then-save: two concurrent revokes
    # cannot overwrite each other's timestamp.
    return tokens.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())


def _token_not_found() -> AppError:
    return AppError(
        Code.TOKEN_NOT_FOUND,
        "No personal access token with this id exists in your account.",
        agent_action="list your tokens to find the right id",
    )


def _app_connected(*, user: User, application_id: int) -> bool:
    # Any token of the app for this user, live or not: a paused app's access token may expire
    # while it is paused, and resuming it must still work.
    mine = {"user": user, "application_id": application_id}
    return (
        get_access_token_model().objects.filter(**mine).exists()
        or get_refresh_token_model().objects.filter(**mine).exists()
    )


def app_pause(*, user: User, application_id: int) -> AppPause:
    """Pause an OAuth application for `user`: its tokens are refused (`app_paused`) until resumed.

    Pausing twice keeps the first pause. Raises `application_not_found` (404) when the app holds no
    token of this user, which is also what another account's app looks like: a person can pause
    only what they connected, and only for themselves.
    """
    if not _app_connected(user=user, application_id=application_id):
        raise AppError(Code.APPLICATION_NOT_FOUND, "No connected app with this id in your account.")
    pause, _ = AppPause.objects.get_or_create(user=user, application_id=application_id)
    return pause


def app_resume(*, user: User, application_id: int) -> None:
    """Resume a paused application: its tokens work again. Resuming an app that is not paused
    changes nothing; an app that holds nothing of `user` is `application_not_found` (404)."""
    if not _app_connected(user=user, application_id=application_id):
        raise AppError(Code.APPLICATION_NOT_FOUND, "No connected app with this id in your account.")
    AppPause.objects.filter(user=user, application_id=application_id).delete()
