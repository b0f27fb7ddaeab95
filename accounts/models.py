"""People who own memories. Email is the login; there is no username."""

from __future__ import annotations

import hashlib
import uuid
from typing import ClassVar

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.db import models
from django.utils import timezone


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def _create(self, email: str, password: str | None, **extra: object) -> User:
        if not email:
            raise ValueError("an email address is required")
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email: str, password: str | None = None, **extra: object) -> User:
        extra.setdefault("is_staff", False)
        extra.setdefault("is_superuser", False)
        return self._create(email, password, **extra)

    def create_superuser(self, email: str, password: str | None = None, **extra: object) -> User:
        extra["is_staff"] = True
        extra["is_superuser"] = True
        return self._create(email, password, **extra)


class User(AbstractBaseUser, PermissionsMixin):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Stored lower-cased (see UserManager and the sign-up form) so the unique
    # constraint also covers Alice@x and alice@x.
    email = models.EmailField("email address", unique=True, max_length=254)
    display_name = models.CharField(max_length=150, blank=True)
    # An IANA zone name ("Europe/Lisbon") the dashboard shows times and reads dates in; empty is UTC.
    time_zone = models.CharField(max_length=64, blank=True, default="")
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False)
    date_joined = models.DateTimeField(default=timezone.now)

    objects: ClassVar[UserManager] = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: ClassVar[list[str]] = []

    class Meta:
        ordering = ["email"]

    def __str__(self) -> str:
        return self.email

    def get_full_name(self) -> str:
        return self.display_name or self.email

    def get_short_name(self) -> str:
        return self.display_name or self.email.split("@")[0]


class PersonalAccessToken(models.Model):
    """A long-lived bearer token a person makes for their own scripts and CLI.

    Only the sha256 of the token is stored: a database leak must not hand out
    working credentials. `prefix` is the token's harmless start, kept so a list
    of tokens can be told apart.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="access_tokens")
    name = models.CharField(max_length=100)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=12, editable=False)
    # Space-separated, as django-oauth-toolkit stores scopes, so both kinds of
    # token are read the same way.
    scopes = models.CharField(max_length=255)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def scope_set(self) -> frozenset[str]:
        return frozenset(self.scopes.split())


class AuthorizationCodeUse(models.Model):
    """An OAuth authorization code that was exchanged, and the token family it issued.

    django-oauth-toolkit deletes a code's grant when it is used, so without this a replayed code
    is only refused; RFC 6749 4.1.2 asks that the tokens it issued be revoked as well (someone
    else holds the code). Only the code's SHA-256 is kept. A row goes with its family's tokens,
    in the hourly OAuth clean-up, once the longest refresh token of it could have expired.
    """

    code_hash = models.CharField(max_length=64, unique=True)
    token_family = models.UUIDField()
    used_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self) -> str:
        return f"code {self.code_hash[:8]}… used {self.used_at:%Y-%m-%d %H:%M}"


TOKEN_PREFIX = "drp_"  # noqa: S105 - a public marker, not a secret


def token_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class AppPause(models.Model):
    """A person's pause of one OAuth application: while the row exists, the app's tokens for this
    person are refused (`app_paused`) everywhere, and nothing else changes. Deleting the row resumes
    the app: its tokens, consent and space work again, unlike a disconnect, which deletes them.
    """

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    application = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    paused_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "application"], name="app_pause_one_per_app")]

    def __str__(self) -> str:
        return f"{self.user_id} paused app {self.application_id}"
