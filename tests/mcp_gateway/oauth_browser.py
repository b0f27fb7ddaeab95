"""Plays the person in the browser during an OAuth flow: logs in and approves the consent page."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

from tests.conftest import PASSWORD


def _csrf(html: str) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert match is not None, html[:500]
    return match.group(1)


def _hidden_fields(html: str) -> dict[str, Any]:
    """What the consent form sends as the page shows it: hidden fields, selected options and
    ticked boxes (a list per name)."""
    fields: dict[str, Any] = {}
    for tag in re.findall(r"<input[^>]+>", html):
        if 'type="hidden"' not in tag:
            continue
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name:
            fields[name.group(1)] = (value.group(1) if value else "").replace("&amp;", "&")
    for tag in re.findall(r"<input[^>]+>", html):
        if 'type="checkbox"' in tag and " checked" in tag:
            name, value = re.search(r'name="([^"]+)"', tag), re.search(r'value="([^"]*)"', tag)
            if name and value:
                fields.setdefault(name.group(1), []).append(value.group(1))
    # A select sends its selected option, as a browser does.
    for name, options in re.findall(r'<select name="([^"]+)"[^>]*>(.*?)</select>', html, re.S):
        chosen = re.search(r'<option value="([^"]*)" selected>', options)
        if chosen:
            fields[name] = chosen.group(1)
    return fields


class Browser:
    """A cookie-keeping HTTP client that logs in once and answers consent pages."""

    def __init__(
        self, base_url: str, email: str, *, allow: bool = True, withhold: list[set[str]] | None = None
    ) -> None:
        self.base_url = base_url
        self.email = email
        self.allow = allow
        # Scopes the person unticks, one set per consent page in turn (then none).
        self.withhold = list(withhold or [])
        self.http = httpx.Client(base_url=base_url, follow_redirects=False, timeout=30)
        self.consent_pages: list[str] = []

    def authorize(self, authorization_url: str) -> dict[str, str]:
        """Follow an authorization URL to the client's redirect; return its query (code, state...)."""
        response = self.http.get(authorization_url)
        trail = []
        for _ in range(10):
            trail.append(f"{response.status_code} {response.url} -> {response.headers.get('location')}")
            if response.status_code in (301, 302, 303):
                location = urljoin(str(response.url), response.headers["location"])
                if not location.startswith(self.base_url):
                    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
                response = self.http.get(location)
                continue
            html = response.text
            if 'name="password"' in html:  # the log-in page
                response = self.http.post(
                    str(response.url),
                    data={
                        "csrfmiddlewaretoken": _csrf(html),
                        "username": self.email,
                        "password": PASSWORD,
                        "next": parse_qs(urlsplit(str(response.url)).query).get("next", [""])[0],
                    },
                )
                continue
            if 'id="authorizationForm"' in html:  # the consent page
                self.consent_pages.append(html)
                data = _hidden_fields(html)
                unticked = self.withhold.pop(0) if self.withhold else set()
                data["granted"] = [scope for scope in data.get("granted", []) if scope not in unticked]
                if self.allow:
                    data["allow"] = "Authorize"
                response = self.http.post(str(response.url), data=data)
                continue
            raise AssertionError(f"unexpected page {response.status_code}: {html[:800]}")
        raise AssertionError("too many redirects:\n" + "\n".join(trail))

    def sign_in(self, path: str) -> None:
        """Log in on the sign-in page at `path`, as the person does before using the dashboard."""
        page = self.http.get(path)
        data = {"csrfmiddlewaretoken": _csrf(page.text), "username": self.email, "password": PASSWORD}
        response = self.http.post(path, data=data)
        assert response.status_code == 302, response.text[:800]

    def submit(self, path: str, data: dict[str, str]) -> tuple[str, httpx.Response]:
        """Open the form page at `path` and post `data` with its CSRF token; (the page, the answer)."""
        page = self.http.get(path)
        assert page.status_code == 200, page.text[:800]
        return page.text, self.http.post(path, data={"csrfmiddlewaretoken": _csrf(page.text), **data})
