"""Account-level writes: sign up, change email or password, create and revoke access (tokens,
apps), delete the account.

Keyword-only, one transaction each, every change audited (audit rows never hold memory content
or a credential). The person acts on their own account: `actor.owner` is the account.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from django.db import transaction
from oauth2_provider.models import get_access_token_model, get_grant_model, get_refresh_token_model

from accounts.caller import Actor
from accounts.models import PersonalAccessToken, User
from accounts.services import pat_create, pat_revoke, pat_revoke_all
from memories.errors import AppError, Code
from memories.models import AuditEvent, Job, Relation, Space
from memories.services.audit import audit_record
from memories.services.purge import memories_hard_delete_in_space, purge_counts, purge_record
from memories.services.spaces import space_create_default
from memories.wire import PurgeReceipt

ACCOUNT = "account"
TOKEN = "personal_access_token"  # noqa: S105 - an audit target type, not a secret


def _audit_token(actor: Actor, action: str, token: PersonalAccessToken, **detail: object) -> None:
    # The token's id, scopes and whether it expires; never the token.
    detail["expires"] = token.expires_at is not None
    audit_record(actor=actor, action=action, target_type=TOKEN, target_id=token.id, detail=detail)


def _audit(actor: Actor, action: str, **detail: object) -> None:
    audit_record(actor=actor, action=action, target_type=ACCOUNT, target_id=actor.owner.id, detail=detail)


@transaction.atomic
def user_sign_up(*, email: str, password: str, request_id: str = "") -> User:
    """Create a user with their default space, in one transaction, and audit it."""
    user = User.objects.create_user(email=email, password=password)
    space_create_default(owner=user)
    _audit(Actor.owner_acting(user, request_id), AuditEvent.Action.ACCOUNT_CREATED)
    return user


@transaction.atomic
def account_password_changed(*, actor: Actor, how: str, sign_out: bool | None) -> dict[str, int]:
    """Record that the password changed (`how`: "changed" while signed in, or "reset" by email link)
    and, with `sign_out`, end the access of every app and token of the account; return what ended
    (empty when the person chose to keep them).

    A new password is the usual answer to a stolen one, and whoever had it may have connected an
    app or made a token, which would outlive the old password. With `sign_out` every OAuth refresh
    token, access token and pending grant of the user is deleted (each app must ask consent again)
    and every personal access token revoked. Other browser sessions end either way: Django ties a
    session to the password hash, and keeps only the session that changed it.

    `sign_out` is None when the request did not say (a script, a client that leaves the field out):
    then the safe choice is made, the same as ticked, and the audit row says the field was absent
    (`sign_out_field`), so a sign-out nobody chose can be told from one the person chose.

    Django's own password forms write the new hash; the views call this in the same transaction,
    so a password never changes without its audit row. The row holds no password, old or new, and
    says what was revoked.
    """
    said = sign_out is not None
    sign_out = True if sign_out is None else sign_out
    revoked: dict[str, int] = {}
    if sign_out:
        revoked = _oauth_access_delete(user=actor.owner)
        revoked["personal_access_tokens"] = pat_revoke_all(user=actor.owner)
    _audit(
        actor,
        AuditEvent.Action.PASSWORD_CHANGED,
        changed=how,
        signed_out=sign_out,
        sign_out_field="sent" if said else "absent",
        **revoked,
    )
    return revoked


def account_email_change(*, actor: Actor, email: str) -> User:
    """Change the sign-in email (stored lower-case); `email_taken` (409) if another account has it."""
    user = actor.owner
    email = email.strip().lower()
    if email == user.email:
        return user
    with transaction.atomic():
        if User.objects.filter(email=email).exclude(pk=user.pk).exists():
            raise AppError(Code.EMAIL_TAKEN, "Another account already uses this email.")
        user.email = email
        user.save(update_fields=["email"])
        _audit(actor, AuditEvent.Action.UPDATED, changed="email")
    return user


def account_time_zone_set(*, actor: Actor, time_zone: str) -> User:
    """Set the zone the dashboard shows the owner's times in (an IANA name; empty for UTC)."""
    import zoneinfo

    if time_zone and time_zone not in zoneinfo.available_timezones():
        raise AppError(
            Code.INVALID_VALUE, "Choose a time zone from the list.", details={"field": "time_zone"}
        )
    user = actor.owner
    if user.time_zone != time_zone:
        with transaction.atomic():
            user.time_zone = time_zone
            user.save(update_fields=["time_zone"])
            _audit(actor, AuditEvent.Action.UPDATED, changed="time_zone")
    return user


@transaction.atomic
def token_create(
    *, actor: Actor, name: str, scopes: list[str], expires_at: datetime | None = None
) -> tuple[PersonalAccessToken, str]:
    """Create a personal access token (`accounts.services.pat_create`) and audit it.

    Returns the row and the plaintext, which exists only in this return value. The audit row
    names the token and its scopes, never the token itself.
    """
    token, raw = pat_create(user=actor.owner, name=name, scopes=scopes, expires_at=expires_at)
    _audit_token(actor, AuditEvent.Action.TOKEN_CREATED, token, scopes=sorted(token.scope_set))
    return token, raw


@transaction.atomic
def token_revoke(*, actor: Actor, token_id: uuid.UUID) -> PersonalAccessToken:
    """Revoke one of the user's personal access tokens and audit it (once: revoking twice is a no-op).

    Raises `token_not_found` (404) for an unknown id and for another account's token.
    """
    live = PersonalAccessToken.objects.filter(user=actor.owner, pk=token_id, revoked_at__isnull=True).exists()
    token = pat_revoke(user=actor.owner, token_id=token_id)
    if live:
        _audit_token(actor, AuditEvent.Action.TOKEN_REVOKED, token, changed="revoked")
    return token


def _oauth_access_delete(*, user: User, application_id: int | None = None) -> dict[str, int]:
    """Delete the user's OAuth refresh tokens, access tokens and pending grants, of one application
    or (None) of all; return how many of each. Runs inside the caller's transaction.

    Deleted, not marked revoked: a deleted refresh token is refused by every path of the token
    endpoint, whatever grace period or reuse rule applies to a revoked one.
    """
    mine: dict[str, object] = {"user": user}
    if application_id is not None:
        mine["application_id"] = application_id
    access = get_access_token_model().objects.filter(**mine)
    refresh = get_refresh_token_model().objects.filter(**mine)
    grants = get_grant_model().objects.filter(**mine)
    counts = {"access_tokens": access.count(), "refresh_tokens": refresh.count(), "grants": grants.count()}
    # Refresh tokens first: each points at an access token, and deleting them first
    # means no refresh can mint a new access token between the two deletes.
    refresh.delete()
    access.delete()
    grants.delete()
    return counts


@transaction.atomic
def oauth_app_revoke(*, actor: Actor, application_id: int) -> dict[str, int]:
    """End an OAuth application's access to the user's memory: delete its tokens and pending grants.

    The application itself stays (other people may use it); it must ask this user
    for consent again. Raises `application_not_found` (404) when the application
    holds nothing of this user, which is also what another account's app looks like.
    """
    counts = _oauth_access_delete(user=actor.owner, application_id=application_id)
    if not any(counts.values()):
        raise AppError(Code.APPLICATION_NOT_FOUND, "No connected app with this id in your account.")
    # The application's id is a number, not a UUID, so it lives in detail, not target_id.
    detail = {"changed": "access_revoked", "application_id": application_id, **counts}
    audit_record(
        actor=actor, action=AuditEvent.Action.APP_REVOKED, target_type="oauth_application", detail=detail
    )
    return counts


@transaction.atomic
def account_delete(*, actor: Actor) -> PurgeReceipt:
    """Delete the account and everything in it; return the receipt.

    Every memory is hard-deleted space by space (the same purge as a single hard
    delete: content, evidence, orphaned entities, source text), then the user row
    goes and takes spaces, jobs, entities, relations, tokens and OAuth grants with
    it. The audit trail keeps rows without content, including this one, so the
    receipt can be checked later.
    """
    # Lock the user: a second delete from another tab waits, then finds nothing.
    locked = User.objects.select_for_update().filter(pk=actor.owner.pk).first()
    if locked is None:
        raise AppError(Code.ACCOUNT_NOT_FOUND, "This account no longer exists.")
    purged = purge_counts()
    spaces = list(Space.objects.filter(owner=locked).order_by("id"))
    for space in spaces:
        receipt = memories_hard_delete_in_space(actor=actor, space=space)
        for key, value in receipt["purged"].items():
            purged[key] = purged.get(key, 0) + int(value)
    # What went with the user row itself (the rest cascades from it).
    purged.update(
        relations=Relation.objects.filter(owner=locked).count(),
        spaces=len(spaces),
        jobs=Job.objects.filter(owner=locked).count(),
        personal_access_tokens=PersonalAccessToken.objects.filter(user=locked).count(),
        oauth_tokens=get_access_token_model().objects.filter(user=locked).count()
        + get_refresh_token_model().objects.filter(user=locked).count(),
    )
    action = AuditEvent.Action.ACCOUNT_DELETED
    receipt = purge_record(
        actor=actor, target_type=ACCOUNT, target_id=locked.id, purged=purged, action=action
    )
    locked.delete()
    return receipt
