"""Reads of credentials: a user's personal access tokens and OAuth approvals. Nothing here writes."""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils import timezone
from oauth2_provider.models import get_access_token_model

from accounts.models import AppPause, PersonalAccessToken, User
from accounts.oauth import audience_allows
from memories.errors import AppError, Code


def pat_list(*, user: User) -> QuerySet[PersonalAccessToken]:
    """`user`'s tokens, newest first, revoked and expired ones included (a list shows their state)."""
    return PersonalAccessToken.objects.filter(user=user).order_by("-created_at", "-pk")


def oauth_consent_given(*, user: User, application: object, scopes: set[str], resources: list[str]) -> bool:
    """Whether `user` already approved `application` for these scopes at these resources: a live
    access token of theirs covers both. django-oauth-toolkit's auto-approval looks at scopes only,
    so approving an app for one MCP URL would silently approve it for every other."""
    live = get_access_token_model().objects.filter(
        user=user, application=application, expires__gt=timezone.now()
    )
    return any(
        token.allow_scopes(scopes) and all(audience_allows(token.resource, r) for r in resources)
        for token in live
    )


def user_list() -> QuerySet[User]:
    """Every account, by email: the operator's list (`manage.py user_list`), not a tenant's read."""
    return User.objects.order_by("email")


def user_get_by_email(*, email: str) -> User | None:
    """The account with this email (stored lower-cased, as the sign-up form writes it), or None."""
    return User.objects.filter(email=email.strip().lower()).first()


def app_paused_ids(*, user: User) -> set[int]:
    """The ids of the OAuth applications `user` has paused."""
    return set(AppPause.objects.filter(user=user).values_list("application_id", flat=True))


def app_pause_check(*, user: User, application_id: int | None) -> None:
    """Refuse a token of an app its owner paused: raise `app_paused` (403). Every surface that
    accepts an OAuth token calls this after the token itself was found valid."""
    if (
        application_id is not None
        and AppPause.objects.filter(user=user, application_id=application_id).exists()
    ):
        raise AppError(Code.APP_PAUSED)
