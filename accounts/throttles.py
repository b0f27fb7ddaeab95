"""Rate limits: who may try again how soon, counted in the cache every process shares.

Each limit in `settings.RATE_LIMITS` is a budget over a sliding window, kept per identity
(an account, a client address, a user). The counting is DRF's `SimpleRateThrottle` (a list of
recent timestamps per key in the default cache), used here outside DRF views too, so sign-in,
the token endpoint and MCP count the same way the REST API would.

What each limit counts, and when it is checked:

- `signin_account` / `signin_address`: failed sign-ins, per submitted email (trimmed, lower
  case) from any address, and per client address whatever the email. Both are checked before
  the password is, so once either is spent even the right password is refused until the oldest
  failure leaves the window; a refused attempt is not itself counted.
- `token`: failed token requests per client_id and address.
- `signup`: sign-up attempts per address (each one says whether an email is taken).
- `register`: successful dynamic client registrations per address.
- `save`, `upload`: saves and document and image uploads per user, counted when accepted.
- `image`: image uploads per user (also counted as uploads): what one account may ask of the
  workers' OCR, a few CPU seconds each.

Two requests arriving together can both read the same history and both pass (the cache's
get-then-set is not atomic), so a budget can be overshot by the number of requests in flight at
once, never by more.
"""

from __future__ import annotations

import hashlib
import math
from ipaddress import IPv6Address, ip_address, ip_network
from typing import Any, cast

from django.conf import settings
from django.http import HttpRequest
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from memories.errors import AppError, Code


class _Window(SimpleRateThrottle):
    """DRF's sliding window for one limit and one identity, recording only when asked to."""

    def __init__(self, limit: str, ident: str, rate: str, *, record: bool) -> None:
        self.scope = limit
        self.rate = rate
        self.num_requests, self.duration = self.parse_rate(rate)
        # Hashed: an email or an address is not kept in the cache, and any text makes a valid key.
        self._key = self.cache_format % {
            "scope": limit,
            "ident": hashlib.sha256(ident.encode()).hexdigest(),
        }
        self._record = record

    def get_cache_key(self, request: object, view: object) -> str:
        return self._key

    def throttle_success(self) -> bool:
        return super().throttle_success() if self._record else True

    def allowed(self) -> bool:
        # Only the key above is read from the request and view; DRF's signature wants both.
        return self.allow_request(cast(Request, None), cast(APIView, None))


def _window(limit: str, ident: str, *, record: bool) -> _Window | None:
    rate = settings.RATE_LIMITS[limit]
    return _Window(limit, ident, rate, record=record) if rate else None


def rate_limited(*, limit: str, wait: float | None) -> AppError:
    seconds = max(1, math.ceil(wait or 1))
    return AppError(
        Code.RATE_LIMITED,
        f"Too many attempts; try again in {seconds} s.",
        details={"retry_after": seconds, "limit": limit},
        agent_action=f"wait {seconds} seconds and retry",
    )


def throttle_check(*, limit: str, ident: str) -> None:
    """Raise `rate_limited` if `ident` has spent its `limit` budget; count nothing."""
    window = _window(limit, ident, record=False)
    if window is not None and not window.allowed():
        raise rate_limited(limit=limit, wait=window.wait())


def throttle_record(*, limit: str, ident: str) -> None:
    """Count one event against `ident`'s `limit` (a failure, a success), after the fact."""
    window = _window(limit, ident, record=True)
    if window is not None:
        window.allowed()


def throttle_take(*, limit: str, ident: str) -> None:
    """Check and count one event at once: raise `rate_limited` if the budget is spent."""
    window = _window(limit, ident, record=True)
    if window is not None and not window.allowed():
        raise rate_limited(limit=limit, wait=window.wait())


def user_throttle(*, limit: str, user: Any) -> None:
    """A save or an upload by `user`: counted, refused past the budget."""
    throttle_take(limit=limit, ident=f"user:{user.pk}")


def client_address(request: HttpRequest) -> str:
    """The client's address, for keying limits: REMOTE_ADDR, unless that is a trusted proxy.

    Behind trusted proxies (settings.TRUSTED_PROXIES) X-Forwarded-For is read from the right, and
    the first hop that is not a trusted proxy is the client: the left of it is what the client
    itself claims, which anyone can forge. IPv6 clients are keyed by their /64, which one
    subscriber usually holds whole.

    This is the only rule: REMOTE_ADDR must be the connection's peer, so the web server must not
    rewrite it from the headers (uvicorn runs with --no-proxy-headers, `manage.py up`'s
    `web_command` and the units in docs/deploy/).
    """
    remote = _parsed(str(request.META.get("REMOTE_ADDR", "")))
    if remote is not None and _trusted(remote):
        for hop in reversed(request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")):
            address = _parsed(hop.strip())
            if address is None:
                break
            remote = address
            if not _trusted(address):
                break
    if remote is None:
        return "unknown"
    if isinstance(remote, IPv6Address) and remote.ipv4_mapped is None:
        return str(ip_network(f"{remote}/64", strict=False))
    return str(remote.ipv4_mapped if isinstance(remote, IPv6Address) and remote.ipv4_mapped else remote)


def _parsed(value: str) -> Any:
    try:
        return ip_address(value)
    except ValueError:
        return None


def _trusted(address: object) -> bool:
    return any(address in network for network in settings.TRUSTED_PROXIES)


def account_ident(email: object) -> str:
    """The account a sign-in names, as the login form normalises it (trimmed, lower case)."""
    return "account:" + (email.strip().lower() if isinstance(email, str) else "")
