from __future__ import annotations

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import password_validation
from django.contrib.auth.forms import AuthenticationForm

from accounts.models import User
from accounts.throttles import account_ident, client_address, throttle_check, throttle_record
from memories.errors import AppError

# The column's own limit: every form that takes an email reads it from here. (A CharField always
# has a max_length; the stubs type it as optional for the other fields.)
EMAIL_MAX_LENGTH: int = User._meta.get_field("email").max_length  # type: ignore[assignment]


# What AUTH_PASSWORD_VALIDATORS ask, in one sentence, shown before a person types a new password.
PASSWORD_RULES = " ".join(  # the rules, not a password
    [
        "At least 8 characters; not only digits, not a common password, and not like your email.",
        "A few unrelated words make a good one.",
    ]
)


class SignUpForm(forms.Form):
    email = forms.EmailField(
        max_length=EMAIL_MAX_LENGTH, widget=forms.EmailInput(attrs={"autocomplete": "email"})
    )
    password = forms.CharField(
        strip=False,
        widget=forms.PasswordInput(
            attrs={"autocomplete": "new-password", "aria-describedby": "id_password-help"}
        ),
        help_text=PASSWORD_RULES,
    )

    def clean_email(self) -> str:
        email = self.cleaned_data["email"].strip().lower()
        if User.objects.filter(email=email).exists():
            raise forms.ValidationError("An account with this email already exists. Log in instead.")
        return email

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        password = data.get("password")
        if password and "email" in data:
            try:
                password_validation.validate_password(password, User(email=data["email"]))
            except forms.ValidationError as exc:
                self.add_error("password", exc)
        return data


class ThrottledSignIn(AuthenticationForm):
    """A sign-in form that refuses once the account or the address has spent its failed sign-ins.

    The limits are checked before the password is, so past them even the right password is
    refused; each failure counts against both. `refusal` is the AppError of a refused attempt,
    for the view's status and Retry-After (accounts.views.signin_status).
    """

    refusal: AppError | None = None

    def _signin_idents(self) -> list[tuple[str, str]]:
        assert self.request is not None  # the login views always pass it
        return [
            ("signin_account", account_ident(self.data.get("username"))),
            ("signin_address", "address:" + client_address(self.request)),
        ]

    def clean(self) -> dict[str, object]:
        idents = self._signin_idents()
        try:
            for limit, ident in idents:
                throttle_check(limit=limit, ident=ident)
        except AppError as exc:
            self.refusal = exc
            raise forms.ValidationError(
                f"Too many failed sign-ins. Wait {exc.details['retry_after']} seconds and try again.",
                code=exc.code.value,
            ) from None
        try:
            return super().clean()
        except forms.ValidationError:
            for limit, ident in idents:
                throttle_record(limit=limit, ident=ident)
            raise


class AdminSignInForm(ThrottledSignIn, AdminAuthenticationForm):
    """The admin's sign-in form, under the same limits as the dashboard's (one budget per account)."""


class LoginForm(ThrottledSignIn):
    username = forms.EmailField(
        label="Email",
        max_length=EMAIL_MAX_LENGTH,
        widget=forms.EmailInput(attrs={"autofocus": True, "autocomplete": "email"}),
    )

    def clean_username(self) -> str:
        return self.cleaned_data["username"].strip().lower()
