from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import password_validation
from django.contrib.auth.forms import AuthenticationForm

from accounts.models import User

# The column's own limit: every form that takes an email reads it from here. (A CharField always
# has a max_length; the stubs type it as optional for the other fields.)
EMAIL_MAX_LENGTH: int = User._meta.get_field("email").max_length  # type: ignore[assignment]


class SignUpForm(forms.Form):
    email = forms.EmailField(
        max_length=EMAIL_MAX_LENGTH, widget=forms.EmailInput(attrs={"autocomplete": "email"})
    )
    password = forms.CharField(
        strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )

    def clean_email(self) -> str:
        email = self.cleaned_data["email"].strip().lower()
        if User.objects.filter(email=email).exists():
            raise forms.ValidationError("An account with this email already exists. Log in instead.")
        return email

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        password = data.get("password")
        if password and "email" in data:
            try:
                password_validation.validate_password(password, User(email=data["email"]))
            except forms.ValidationError as exc:
                self.add_error("password", exc)
        return data


class LoginForm(AuthenticationForm):
    username = forms.EmailField(
        label="Email",
        max_length=EMAIL_MAX_LENGTH,
        widget=forms.EmailInput(attrs={"autofocus": True, "autocomplete": "email"}),
    )

    def clean_username(self) -> str:
        return self.cleaned_data["username"].strip().lower()
