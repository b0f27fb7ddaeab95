from django.http import HttpRequest

from accounts.models import User


class AuthedHttpRequest(HttpRequest):
    """The request of a view behind login_required: `user` is a real User."""

    user: User
