"""The account pages of the dashboard: account, password, tokens, connected apps, export, deletion.

Thin views over memories.services.account, accounts.services and the export.
Revocations ask first: dashboard.js shows a confirm dialog and marks the form
`confirmed`; without JavaScript the POST lands on a confirmation page instead,
so nothing is revoked by a single unconfirmed request either way.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.handlers.asgi import ASGIRequest
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.caller import Actor
from accounts.forms import SignUpForm
from accounts.http import AuthedHttpRequest
from accounts.selectors import pat_list
from accounts.throttles import client_address, throttle_take
from memories.api.base import request_id_of, session_actor
from memories.api.export import stream_chunks, stream_chunks_async
from memories.dashboard.forms import (
    AccountDeleteForm,
    EmailChangeForm,
    PasswordChangeForm,
    SetPasswordForm,
    TimeZoneForm,
    TokenCreateForm,
)
from memories.errors import AppError
from memories.selectors.agents import connected_app_get, connected_app_list
from memories.services import account as account_services
from memories.services.account import (
    account_email_change,
    account_password_changed,
    account_time_zone_set,
    oauth_app_revoke,
    user_sign_up,
)
from memories.services.export import export_begin

CONFIRMED = "yes"


def _confirmed(request: AuthedHttpRequest) -> bool:
    return request.POST.get("confirmed") == CONFIRMED


@login_required
@require_http_methods(["GET", "POST"])
def account(request: AuthedHttpRequest) -> HttpResponse:
    """The account page; POST changes the sign-in email (the current password is asked)."""
    form = EmailChangeForm(request.POST if request.method == "POST" else None, user=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            account_email_change(actor=session_actor(request), email=form.cleaned_data["email"])
        except AppError as exc:
            form.add_error("email", exc.message)
        else:
            messages.success(request, "Your sign-in email is changed.")
            return redirect("account:account")
    context = {"form": form, "zone_form": TimeZoneForm(initial={"time_zone": request.user.time_zone})}
    return render(request, "dashboard/account/account.html", context, status=400 if form.errors else 200)


@login_required
@require_POST
def time_zone_set(request: AuthedHttpRequest) -> HttpResponse:
    """Save the zone the dashboard's times are shown in."""
    form = TimeZoneForm(request.POST)
    if form.is_valid():
        try:
            account_time_zone_set(actor=session_actor(request), time_zone=form.cleaned_data["time_zone"])
        except AppError as exc:
            form.add_error("time_zone", exc.message)
        else:
            zone = form.cleaned_data["time_zone"] or "UTC"
            messages.success(request, f"Times are now shown in {zone.replace('_', ' ')}.")
            return redirect("account:account")
    context = {"form": EmailChangeForm(user=request.user), "zone_form": form}
    return render(request, "dashboard/account/account.html", context, status=400)


class _NoColonLabels:
    """Django's auth forms with the dashboard's labels (no colon: the label sits above its field)."""

    def get_form_kwargs(self) -> dict[str, object]:
        return {**super().get_form_kwargs(), "label_suffix": ""}  # type: ignore[misc]


SIGNED_OUT = "Your apps and tokens are signed out: connect them again where you still use them."


class PasswordChangeView(_NoColonLabels, auth_views.PasswordChangeView):
    template_name = "dashboard/account/password_change.html"
    form_class = PasswordChangeForm
    success_url = reverse_lazy("account:account")

    def form_valid(self, form: Any) -> HttpResponse:
        with transaction.atomic():
            response = super().form_valid(form)
            revoked = account_password_changed(
                actor=session_actor(self.request), how="changed", sign_out=form.cleaned_data["sign_out"]
            )
        messages.success(self.request, "Your password is changed.")
        if revoked:
            messages.success(self.request, SIGNED_OUT)
        return response

    def form_invalid(self, form: Any) -> HttpResponse:
        response = super().form_invalid(form)
        response.status_code = 400
        return response


class PasswordResetView(_NoColonLabels, auth_views.PasswordResetView):
    template_name = "dashboard/account/password_reset.html"
    email_template_name = "dashboard/account/password_reset_email.txt"
    subject_template_name = "dashboard/account/password_reset_subject.txt"
    success_url = reverse_lazy("account:password-reset-done")


class PasswordResetDoneView(auth_views.PasswordResetDoneView):
    template_name = "dashboard/account/password_reset_done.html"


class PasswordResetConfirmView(_NoColonLabels, auth_views.PasswordResetConfirmView):
    template_name = "dashboard/account/password_reset_confirm.html"
    form_class = SetPasswordForm
    success_url = reverse_lazy("account:password-reset-complete")

    def form_valid(self, form: Any) -> HttpResponse:
        with transaction.atomic():
            response = super().form_valid(form)
            revoked = account_password_changed(
                actor=Actor.owner_acting(form.user, request_id_of(self.request)),
                how="reset",
                sign_out=form.cleaned_data["sign_out"],
            )
        if revoked:
            messages.success(self.request, SIGNED_OUT)
        return response


class PasswordResetCompleteView(auth_views.PasswordResetCompleteView):
    template_name = "dashboard/account/password_reset_complete.html"


@login_required
@require_POST
def export_download(request: AuthedHttpRequest) -> StreamingHttpResponse:
    """Everything in the account as JSON Lines (the same file as GET /api/v1/export), audited."""
    lines = export_begin(actor=session_actor(request))
    chunks: Iterator[str] = stream_chunks(lines)
    content: Any = stream_chunks_async(chunks) if isinstance(request, ASGIRequest) else chunks
    response = StreamingHttpResponse(content, content_type="application/x-ndjson")
    filename = f"deeprecall-export-{timezone.now().date().isoformat()}.jsonl"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "no-store"
    return response


@login_required
@never_cache
@require_http_methods(["GET", "POST"])
def account_delete(request: AuthedHttpRequest) -> HttpResponse:
    """Delete the account after the email is typed and the password given; show the receipt."""
    form = AccountDeleteForm(request.POST if request.method == "POST" else None, user=request.user)
    if request.method == "POST" and form.is_valid():
        email = request.user.email
        receipt = account_services.account_delete(actor=session_actor(request))
        logout(request)
        context = {
            "receipt": receipt,
            "email": email,
            "purged_at": datetime.fromisoformat(receipt["purged_at"]),
        }
        return render(request, "dashboard/account/deleted.html", context)
    return render(
        request, "dashboard/account/delete.html", {"form": form}, status=400 if form.errors else 200
    )


# Where a new token waits, in the session, for the one page view that shows it.
NEW_TOKEN_KEY = "dashboard_new_token"  # noqa: S105 - a session key, not a secret


@login_required
@never_cache
@require_http_methods(["GET", "POST"])
def token_list(request: AuthedHttpRequest) -> HttpResponse:
    """The tokens; POST creates one and redirects here (post/redirect/get), where the new token is
    shown once, taken from the session: a reload neither creates a second token nor shows it again."""
    form = TokenCreateForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            token, raw = account_services.token_create(
                actor=session_actor(request),
                name=form.cleaned_data["name"],
                scopes=list(form.cleaned_data["scopes"]),
                expires_at=form.expires_at,
            )
        except AppError as exc:
            form.add_error(None, exc.message)
        else:
            request.session[NEW_TOKEN_KEY] = {"id": str(token.pk), "raw": raw}
            return redirect("account:tokens")
    tokens = list(pat_list(user=request.user))
    waiting = request.session.pop(NEW_TOKEN_KEY, None) if request.method == "GET" else None
    created = next((t for t in tokens if waiting and str(t.pk) == waiting.get("id")), None)
    context = {
        "form": form,
        "tokens": tokens,
        "created": created,
        "raw_token": waiting["raw"] if created is not None and waiting else "",
        "now": timezone.now(),
    }
    return render(request, "dashboard/account/tokens.html", context, status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def token_revoke(request: AuthedHttpRequest, token_id: uuid.UUID) -> HttpResponse:
    token = pat_list(user=request.user).filter(pk=token_id).first()
    if token is None:
        raise Http404("No such token in your account.")
    if request.method == "POST" and _confirmed(request):
        account_services.token_revoke(actor=session_actor(request), token_id=token_id)
        messages.success(request, f"Revoked “{token.name}”: it no longer works.")
        return redirect("account:tokens")
    context = {
        "title": f"Revoke the token “{token.name}”?",
        "body": "Scripts and agents that use it stop working at once. This cannot be undone.",
        "button": "Revoke token",
        "cancel_url": reverse_lazy("account:tokens"),
    }
    return render(request, "dashboard/account/confirm.html", context)


@login_required
@require_GET
def app_list(request: AuthedHttpRequest) -> HttpResponse:
    apps = connected_app_list(user=request.user)
    return render(request, "dashboard/account/apps.html", {"apps": apps})


@login_required
@require_http_methods(["GET", "POST"])
def app_revoke(request: AuthedHttpRequest, application_id: int) -> HttpResponse:
    app = connected_app_get(user=request.user, application_id=application_id)
    if app is None:
        raise Http404("No such connected app in your account.")
    if request.method == "POST" and _confirmed(request):
        oauth_app_revoke(actor=session_actor(request), application_id=application_id)
        messages.success(request, f"Disconnected “{app.name}”: it must ask you again to use your memory.")
        return redirect("account:apps")
    context = {
        "title": f"Disconnect “{app.name}”?",
        "body": "Its access and refresh tokens are deleted now; it can no longer read or save memories "
        "until you approve it again. The memories it saved stay.",
        "button": "Disconnect",
        "cancel_url": reverse_lazy("account:apps"),
    }
    return render(request, "dashboard/account/confirm.html", context)


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    if request.method == "POST":
        try:
            throttle_take(limit="signup", ident=client_address(request))
        except AppError as exc:
            # Refused before the form is validated: no word on whether the email is taken.
            response = render(
                request,
                "accounts/signup.html",
                {
                    "form": SignUpForm(),
                    "refusal": f"Too many sign-ups from your network. Wait "
                    f"{exc.details['retry_after']} seconds and try again.",
                },
                status=exc.http_status,
            )
            response["Retry-After"] = str(exc.details["retry_after"])
            return response
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = user_sign_up(
            email=form.cleaned_data["email"],
            password=form.cleaned_data["password"],
            request_id=request_id_of(request),
        )
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
    return render(request, "accounts/signup.html", {"form": form}, status=400 if form.errors else 200)
