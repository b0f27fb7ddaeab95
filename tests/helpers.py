"""Small builders shared by the API tests: real tokens, real clients, waiting for jobs."""

from __future__ import annotations

import re
import secrets
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone
from django.utils.crypto import get_random_string
from oauth2_provider.models import get_access_token_model, get_application_model
from rest_framework.test import APIClient

from accounts.models import User
from accounts.oauth import REST_PATH, resource_url
from accounts.services import pat_create
from memories.models import Job

READ = "memory:read"
WRITE = "memory:write"


def pat_client(user: User, scopes: tuple[str, ...] = (READ, WRITE)) -> APIClient:
    """An API client authenticated with a real personal access token."""
    _, raw = pat_create(user=user, name="tests", scopes=list(scopes))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def session_client(user: User) -> APIClient:
    """An API client signed in to the dashboard's session, sending the CSRF cookie and header a page
    sends (DRF checks CSRF for a session on unsafe methods, as it does in production)."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    secret = get_random_string(32)
    client.cookies[settings.CSRF_COOKIE_NAME] = secret
    client.credentials(HTTP_X_CSRFTOKEN=secret)
    return client


def oauth_app(name: str, user: User | None = None, redirect_uri: str = "http://127.0.0.1:9/callback") -> Any:
    """A public OAuth application (an agent), registered as dynamic client registration would."""
    return get_application_model().objects.create(
        name=name,
        user=user,
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris=redirect_uri,
    )


def assert_bad_request(response: Any, code: str, field: str | None = None) -> None:
    """A 400 in the one error shape, with this code (and `details.field`, when given)."""
    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] == code
    if field:
        assert error["details"]["field"] == field


def oauth_client(user: User, app_name: str, scopes: tuple[str, ...] = (READ, WRITE)) -> tuple[APIClient, Any]:
    """An API client with a real django-oauth-toolkit token of a (new) application = agent, minted
    for the REST API."""
    application = oauth_app(app_name, user)
    token = get_access_token_model().objects.create(
        user=user,
        application=application,
        token=secrets.token_urlsafe(30),
        expires=timezone.now() + timedelta(hours=1),
        scope=" ".join(scopes),
        resource=[resource_url(REST_PATH)],
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token.token}")
    return client, application


def wait_for_job(job_id: Any, timeout: float = 60) -> Job:
    """Poll until the job has finished (succeeded or failed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = Job.objects.get(id=job_id)
        if job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} still {Job.objects.get(id=job_id).status} after {timeout}s")


def error_of(response: Any) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert {"code", "message", "retryable", "agent_action", "request_id"} <= set(error), error
    return dict(error)


_ID_OR_CLOCK = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|\b(?=[0-9a-f]*[a-f])[0-9a-f]{16,}\b"
    r"|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?",
    re.IGNORECASE,
)


def words_of(payload: Any) -> str:
    """Every string and number a response carries, as text, with its ids, hashes and timestamps blanked.

    A check that a secret such as a PIN is absent must not fail because a UUID or a timestamp's
    microseconds happen to hold the same digits (CI once saw '4821' in '...59.694821+00:00')."""
    if isinstance(payload, dict):
        return " ".join(words_of(key) + " " + words_of(value) for key, value in payload.items())
    if isinstance(payload, list | tuple):
        return " ".join(words_of(item) for item in payload)
    return _ID_OR_CLOCK.sub(" ", "" if payload is None else str(payload))


def tables_containing(text: str) -> list[str]:
    """Every `table.column` of any table whose value holds `text`: each text, JSON, array and
    full-text column (case-insensitively), and each bytea column (the bytes, exactly)."""
    hits = []
    with connection.cursor() as cur:
        cur.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'public' AND data_type IN ('text', 'character varying', 'jsonb', 'json', "
            "'ARRAY', 'tsvector', 'bytea')"
        )
        for table, column, data_type in cur.fetchall():
            # Identifiers come from information_schema, not from input.
            if data_type == "bytea":
                query = f'SELECT count(*) FROM "{table}" WHERE position(%s::bytea in "{column}") > 0'  # noqa: S608
                cur.execute(query, [text.encode()])
            else:
                query = f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE %s'  # noqa: S608
                cur.execute(query, [f"%{text}%"])
            if cur.fetchone()[0]:
                hits.append(f"{table}.{column}")
    return hits


def superuser_params() -> dict[str, Any]:
    """libpq parameters for the test database as the embedded server's superuser: for what only an
    administrator does (creating roles, changing pg_catalog's privileges). The service itself logs in
    as its own plain user."""
    from config.embedded_pg import SUPERUSER

    params = {
        key: value
        for key, value in connection.get_connection_params().items()
        if key not in ("cursor_factory", "context", "prepare_threshold", "pool")
    }
    return {**params, "user": SUPERUSER}


def link(memory: Any, *entities: Any) -> None:
    """Link `memory` to `entities`, with its owner on each link (the link table's shard key)."""
    from memories.models import MemoryEntity

    MemoryEntity.objects.bulk_create(
        [MemoryEntity(owner_id=memory.owner_id, memory_id=memory.id, entity_id=e.id) for e in entities],
        ignore_conflicts=True,
    )
