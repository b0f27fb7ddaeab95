"""Forms of the account pages. They validate input; accounts.services_account and accounts.tokens act."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Any

from django import forms
from django.utils import timezone

from accounts.caller import SCOPE_READ, SCOPE_WRITE
from accounts.models import User
from accounts.tokens import NAME_MAX_LENGTH
from memories.dashboard.forms import DashboardForm, DateInput


class _PasswordCheck(DashboardForm):
    """A form that asks for the current password before an account change."""

    password = forms.CharField(
        label="Current password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_password(self) -> str:
        password = str(self.cleaned_data["password"])
        if not self.user.check_password(password):
            raise forms.ValidationError("This is not your current password.")
        return password


class EmailChangeForm(_PasswordCheck):
    email = forms.EmailField(
        label="New email", max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "email"})
    )
    field_order = ["email", "password"]

    def clean_email(self) -> str:
        email = str(self.cleaned_data["email"]).strip().lower()
        if User.objects.filter(email=email).exclude(pk=self.user.pk).exists():
            raise forms.ValidationError("Another account already uses this email.")
        return email


class AccountDeleteForm(_PasswordCheck):
    email = forms.CharField(
        label="Type your email to confirm",
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
    field_order = ["email", "password"]

    def clean_email(self) -> str:
        typed = str(self.cleaned_data["email"]).strip().lower()
        if typed != self.user.email:
            raise forms.ValidationError(f"Type {self.user.email} exactly to delete this account.")
        return typed


class TokenCreateForm(DashboardForm):
    name = forms.CharField(
        label="Name",
        max_length=NAME_MAX_LENGTH,
        help_text="Where you will use it, e.g. “laptop Claude”.",
    )
    scopes = forms.MultipleChoiceField(
        label="What it may do",
        widget=forms.CheckboxSelectMultiple,
        choices=[
            (SCOPE_READ, "Read: recall and answer (memory:read)"),
            (SCOPE_WRITE, "Write: save and forget (memory:write)"),
        ],
        initial=[SCOPE_READ, SCOPE_WRITE],
        error_messages={"required": "Choose at least one thing the token may do."},
    )
    expires_on = forms.DateField(
        label="Expires on (optional)",
        required=False,
        widget=DateInput(),
        help_text="It stops working at the start of this day (UTC). Leave empty for no expiry.",
    )

    def clean_name(self) -> str:
        name = str(self.cleaned_data["name"]).strip()
        if not name:
            raise forms.ValidationError("Give the token a name.")
        return name

    def clean_expires_on(self) -> date | None:
        day = self.cleaned_data.get("expires_on")
        if day is not None and datetime.combine(day, time.min, tzinfo=UTC) <= timezone.now():
            raise forms.ValidationError("Choose a day after today.")
        return day

    @property
    def expires_at(self) -> datetime | None:
        day = self.cleaned_data.get("expires_on")
        return datetime.combine(day, time.min, tzinfo=UTC) if day else None
