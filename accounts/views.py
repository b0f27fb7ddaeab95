from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponseBase
from django.shortcuts import render

from accounts.forms import LoginForm


def signin_status(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """A sign-in page refused by its rate limit answers 429 with Retry-After (the page says why)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponseBase:
        response = view(request, *args, **kwargs)
        form = (getattr(response, "context_data", None) or {}).get("form")
        refusal = getattr(form, "refusal", None)
        if refusal is not None:
            response.status_code = refusal.http_status
            response["Retry-After"] = str(refusal.details["retry_after"])
        return response

    return wrapped


def operators_only(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """The admin's sign-in, except for a signed-in person who is no operator: a page that says the
    admin is the operators' area (403) instead of a second sign-in form that invites them to try
    another account."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponseBase:
        if request.user.is_authenticated and not request.user.is_staff:
            return render(request, "403.html", {"operator_area": True}, status=403)
        return view(request, *args, **kwargs)

    return wrapped


class LoginView(auth_views.LoginView):
    template_name = "accounts/login.html"
    authentication_form = LoginForm
    redirect_authenticated_user = True


class LogoutView(auth_views.LogoutView):
    pass
