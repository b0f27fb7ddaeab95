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
            context["space"] = self._space(context.get("application"))
        context["profile"] = self._profile()
        return context

    def _space(self, application: Any) -> Any:
        """The space the app will use: the one this app's grant switched to, else the default."""
        from memories.models import Space
        from memories.selectors import grant_space_id

        user = self.request.user
        if application is not None:
            chosen = grant_space_id(user=user, application_id=application.pk)
            if chosen is not None:
                return Space.objects.filter(owner=user, id=chosen).first()
        return space_default(owner=user)

    def _profile(self) -> Any:
        """The MCP tool profile the token is for (its `resource`), so the person sees what they allow."""
        from mcp_gateway.auth import resource_url
        from memories.operations.registry import PROFILES

        resource = (self.request.GET.get("resource") or self.request.POST.get("resource") or "").rstrip("/")
        return next((p for p in PROFILES.values() if resource_url(p.path) == resource), None)
