"""Small readers for environment variables that fail loudly on nonsense.

Each raises ImproperlyConfigured with a message that names the variable and
says what a good value looks like; `manage.py` prints that one line and exits.
"""

from __future__ import annotations

import os
import secrets
import uuid
from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use true or false")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum {minimum}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name}={value} is above the maximum {maximum}")
    return value


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default).lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} must be one of: {', '.join(choices)}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return list(default)
    items = [item.strip() for item in raw.split(",")]
    if any(not item for item in items):
        raise ImproperlyConfigured(f"{name}={raw!r} has an empty entry; use a comma-separated list")
    return items


def env_url(name: str, default: str, *, schemes: tuple[str, ...]) -> str:
    """A URL with one of `schemes` and a host; the trailing slash is removed."""
    raw = env_str(name, default)
    if not raw:
        return ""
    parts = urlsplit(raw)
    if parts.scheme not in schemes or not parts.netloc:
        raise ImproperlyConfigured(
            f"{name}={raw!r} is not a valid URL; expected {' or '.join(schemes)}://host[:port]"
        )
    return raw.rstrip("/")


def env_uuid(name: str) -> uuid.UUID | None:
    """A UUID in its canonical hyphenated form, or None when unset."""
    raw = env_str(name)
    if not raw:
        return None
    try:
        value = uuid.UUID(raw)
    except ValueError:
        value = None
    if value is None or str(value) != raw.lower():
        raise ImproperlyConfigured(
            f"{name}={raw!r} is not a UUID; use the hyphenated form (8-4-4-4-12 hex digits)"
        )
    return value


_RATE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def env_rate(name: str, default: str) -> str | None:
    """A rate limit as `<count>/<unit>` (unit s, m, h or d: `5/m`), or None for `off`."""
    raw = env_str(name, default)
    if raw.lower() == "off":
        return None
    count, _, unit = raw.partition("/")
    if not (count.isdigit() and int(count) >= 1 and unit in _RATE_UNITS):
        raise ImproperlyConfigured(
            f"{name}={raw!r} is not a rate; use <count>/<unit> with unit s, m, h or d (5/m), or off"
        )
    return f"{int(count)}/{unit}"


def env_networks(name: str) -> list[IPv4Network | IPv6Network]:
    """A comma-separated list of IP addresses or CIDR networks (`10.0.0.0/8, ::1`)."""
    networks = []
    for item in env_list(name, []):
        try:
            networks.append(ip_network(item, strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} has {item!r}, which is not an IP address or network (10.0.0.0/8)"
            ) from None
    return networks


def env_secret(name: str, *, required: bool, keep_in: Path) -> str:
    """A secret from the environment, or (when not required) one kept in `keep_in`.

    Development keeps a generated secret in var/ so sessions survive restarts;
    production must be given one and refuses to start without it.
    """
    value = env_str(name)
    if value:
        if len(value) < 32:
            raise ImproperlyConfigured(f"{name} is too short; use at least 32 random characters")
        return value
    if required:
        raise ImproperlyConfigured(
            f"{name} is not set; production needs one (generate it with: "
            "python3 -c 'import secrets; print(secrets.token_urlsafe(50))')"
        )
    try:
        return keep_in.read_text().strip()
    except FileNotFoundError:
        pass
    keep_in.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(50)
    # O_EXCL so two processes starting together cannot each write a different key.
    try:
        fd = os.open(keep_in, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return keep_in.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(value)
    return value


def database_from_url(url: str, *, name: str = "DATABASE_URL") -> dict[str, object]:
    """Django DATABASES entry from postgres://user:password@host:port/name?options."""
    from urllib.parse import parse_qsl, unquote

    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        raise ImproperlyConfigured(
            f"{name} must start with postgresql:// (got {parts.scheme or 'nothing'}://); "
            "Deep Recall needs PostgreSQL 15+ with pgvector"
        )
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise ImproperlyConfigured(f"{name} has no database name; add /NAME after the host")
    options = dict(parse_qsl(parts.query))
    host = options.pop("host", None) or unquote(parts.hostname or "")
    try:
        port = parts.port
    except ValueError:
        raise ImproperlyConfigured(f"{name} has a port that is not a number") from None
    return {
        "ENGINE": "config.postgres",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(port or options.pop("port", "") or ""),
        "OPTIONS": options,
    }
