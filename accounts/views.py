from __future__ import annotations

from typing import Any

from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from oauth2_provider import views as oauth_views

from accounts.forms import LoginForm, SignUpForm
from accounts.services import user_sign_up
from memories.selectors import space_default


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = user_sign_up(email=form.cleaned_data["email"], password=form.cleaned_data["password"])
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
    return render(request, "accounts/signup.html", {"form": form}, status=400 if form.errors else 200)


class LoginView(auth_views.LoginView):
    template_name = "accounts/login.html"
    authentication_form = LoginForm
    redirect_authenticated_user = True


class LogoutView(auth_views.LogoutView):
    pass


class ConsentView(oauth_views.AuthorizationView):
    """The OAuth consent page: which app, which scopes, which space."""

    template_name = "accounts/consent.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        if self.request.user.is_authenticated:
            context["space"] = space_default(owner=self.request.user)
        return context
