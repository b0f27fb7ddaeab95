"""Writes for accounts. Views call these; nothing else creates users."""

from __future__ import annotations

from django.db import transaction

from accounts.models import User
from memories.services import space_create_default


@transaction.atomic
def user_sign_up(*, email: str, password: str) -> User:
    """Create a user with their default space, in one transaction."""
    user = User.objects.create_user(email=email, password=password)
    space_create_default(owner=user)
    return user
