"""A Content-Security-Policy header on every response (Django 5.2 has none built in).

Scripts and styles come only from this site's own files: no inline script, no
CDN. `form-action` is left out on purpose: the OAuth consent form posts here and
is then redirected to the client's own redirect URI (another origin), and
browsers apply `form-action` to that redirect too.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

HEADER = "Content-Security-Policy"
POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ]
)


class ContentSecurityPolicyMiddleware:
    """Adds POLICY unless the view set its own header."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if HEADER not in response:
            response[HEADER] = POLICY
        return response
