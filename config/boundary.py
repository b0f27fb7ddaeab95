"""The error boundary of every entry point (`manage.py`, `deeprecall`, the ASGI application, the
Celery app): configuration mistakes (a bad DATABASE_URL, a missing production secret, a busy port)
end as one line on stderr that says what to fix, and exit status 2, never a traceback.

At the bottom of config/ so the lower layers can raise ServiceConfigError and the Celery app can
load its settings without importing the command line.
"""

from __future__ import annotations

import os
import sys

EXIT_CONFIG = 2


class ServiceConfigError(Exception):
    """A problem the operator must fix; the message says how."""


def fail(message: str) -> None:
    print(f"deeprecall: error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(EXIT_CONFIG)


def settings_load() -> None:
    """Load the settings behind the same boundary, for entry points Django's command line does not
    run: the ASGI application (uvicorn, gunicorn) and the Celery app (`celery -A config`)."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    try:
        # Reading any setting loads (and validates) all of them.
        settings.INSTALLED_APPS  # noqa: B018
    except ImproperlyConfigured as exc:
        fail(str(exc))
