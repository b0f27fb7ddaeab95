"""Reads of credentials: a user's personal access tokens and OAuth approvals. Nothing here writes."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from oauth2_provider.models import get_access_token_model

from accounts.models import PersonalAccessToken, User
from accounts.oauth import audience_allows


def pat_list(*, user: User) -> QuerySet[PersonalAccessToken]:
    """`user`'s tokens, newest first, revoked and expired ones included (a list shows their state)."""
    return PersonalAccessToken.objects.filter(user=user).order_by("-created_at", "-pk")


def oauth_consent_given(*, user: User, application: Any, scopes: set[str], resources: list[str]) -> bool:
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
