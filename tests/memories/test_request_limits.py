"""Request limits on REST: what a parser or Django refuses is the caller's error, never a 500.

JSON nested more than 100 levels deep is `400 invalid_json`, a body over 2 MB (an upload's file
aside) is `413 payload_too_large`, and more than 1,000 query parameters or form fields (or more
than 100 files) is `400 too_many_fields`: each in the one error shape, with a personal access
token and with the session (whose CSRF check is where a body is first read), and nothing is
stored. Also: a body that is not UTF-8 or not JSON, a wrong Content-Type, a broken multipart
body, a Host that is not allowed; and the same inputs at the OAuth registration endpoint, the
API docs page and the dashboard, which answer 4xx too.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils.crypto import get_random_string
from oauth2_provider.models import get_application_model
from rest_framework.test import APIClient

from accounts.models import PersonalAccessToken
from memories.errors import CATALOGUE, Code
from memories.models import Job, Memory, Source, Space
from memories.parsing import JSON_MAX_DEPTH, JsonTooDeep, json_decode, json_depth_checked
from tests.helpers import error_of, pat_client, session_client

pytestmark = pytest.mark.django_db

MAX_BODY = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
MAX_FIELDS = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
MAX_FILES = settings.DATA_UPLOAD_MAX_NUMBER_FILES


def nested(depth: int, kind: str = "arrays") -> bytes:
    if kind == "arrays":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


def big_save(size: int) -> bytes:
    """A save whose JSON body is exactly `size` bytes."""
    frame = json.dumps({"content": ""}).encode()
    return json.dumps({"content": "x" * (size - len(frame))}).encode()


def stored() -> dict[str, int]:
    return {
        "sources": Source.objects.count(),
        "jobs": Job.objects.count(),
        "memories": Memory.objects.count(),
        "spaces": Space.objects.count(),
        "tokens": PersonalAccessToken.objects.count(),
        "applications": get_application_model().objects.count(),
    }


def refused(response: Any, status: int, code: Code) -> dict[str, Any]:
    """The one error shape, with this status and code, and its request id in the header."""
    assert response.status_code == status, response.content[:300]
    error = error_of(response)
    assert error["code"] == code.value
    assert error["retryable"] is False
    assert error["request_id"] == response["X-Request-ID"]
    return error


@pytest.fixture(params=["pat", "session"])
def client(request, alice) -> APIClient:
    return pat_client(alice) if request.param == "pat" else session_client(alice)


# POST endpoints that read a JSON body: a save, two operations (a write and a read), a space.
JSON_POSTS = [
    "/api/v1/memories",
    "/api/v1/operations/remember",
    "/api/v1/operations/recall",
    "/api/v1/spaces",
]


class TestNesting:
    @pytest.mark.parametrize("path", JSON_POSTS)
    @pytest.mark.parametrize("depth", [JSON_MAX_DEPTH + 1, 1_000, 100_000])
    @pytest.mark.parametrize("kind", ["arrays", "objects"])
    def test_it_refuses_json_nested_too_deep_with_400(self, client, path, depth, kind):
        before = stored()
        response = client.generic("POST", path, nested(depth, kind), content_type="application/json")
        error = refused(response, 400, Code.INVALID_JSON)
        assert error["details"] == {"max_depth": JSON_MAX_DEPTH}
        assert str(JSON_MAX_DEPTH) in error["agent_action"]
        assert stored() == before

    def test_it_refuses_deep_nesting_inside_a_field_and_on_any_method(self, client, alice):
        body = b'{"content": ' + nested(5_000) + b"}"
        assert refused(
            client.generic("POST", "/api/v1/memories", body, content_type="application/json"),
            400,
            Code.INVALID_JSON,
        )
        space = Space.objects.get(owner=alice)
        patch = client.generic(
            "PATCH", f"/api/v1/spaces/{space.id}", nested(5_000), content_type="application/json"
        )
        refused(patch, 400, Code.INVALID_JSON)

    def test_it_reads_json_nested_to_the_limit_and_lets_the_schema_judge_it(self, client):
        inner = nested(JSON_MAX_DEPTH - 1)  # inside the object: 100 levels in all
        response = client.generic(
            "POST", "/api/v1/memories", b'{"content": ' + inner + b"}", content_type="application/json"
        )
        assert response.status_code == 400
        assert error_of(response)["code"] == "wrong_type"


class TestBodySize:
    @pytest.mark.parametrize("path", JSON_POSTS)
    def test_it_refuses_a_body_over_two_megabytes_with_413(self, client, path):
        before = stored()
        response = client.generic("POST", path, big_save(MAX_BODY + 1), content_type="application/json")
        error = refused(response, 413, Code.PAYLOAD_TOO_LARGE)
        assert error["details"] == {"max_bytes": MAX_BODY}
        assert stored() == before

    def test_a_body_of_exactly_two_megabytes_is_read(self, client):
        response = client.generic(
            "POST", "/api/v1/memories", big_save(MAX_BODY), content_type="application/json"
        )
        assert response.status_code == 400
        assert error_of(response)["code"] == "value_too_long"

    def test_it_refuses_a_multipart_field_over_two_megabytes_but_not_a_file(self, client, no_worker_broker):
        before = stored()
        too_big = client.post(
            "/api/v1/documents",
            {"file": SimpleUploadedFile("a.txt", b"Short notes."), "source_ref": "x" * (MAX_BODY + 1)},
            format="multipart",
        )
        refused(too_big, 413, Code.PAYLOAD_TOO_LARGE)
        assert stored() == before
        big_file = b"The boiler was serviced in May.\n" * (MAX_BODY // 32 + 100)
        accepted = client.post(
            "/api/v1/documents", {"file": SimpleUploadedFile("big.txt", big_file)}, format="multipart"
        )
        assert accepted.status_code == 202, accepted.content[:300]


class TestFieldCount:
    @pytest.mark.parametrize(
        "path", ["/api/v1/memories", "/api/v1/memories/search", "/api/v1/jobs", "/api/v1/export"]
    )
    def test_it_refuses_more_than_1000_query_parameters_with_400(self, client, path):
        query = "&".join(f"f{i}=1" for i in range(MAX_FIELDS + 1))
        error = refused(client.get(f"{path}?{query}"), 400, Code.TOO_MANY_FIELDS)
        assert error["details"] == {"max_fields": MAX_FIELDS}

    def test_it_refuses_them_on_a_write_too_and_stores_nothing(self, client):
        query = "&".join(f"f{i}=1" for i in range(MAX_FIELDS + 1))
        before = stored()
        response = client.post(f"/api/v1/memories?{query}", {"content": "Tea at five."}, format="json")
        refused(response, 400, Code.TOO_MANY_FIELDS)
        assert stored() == before

    def test_1000_query_parameters_are_read_and_judged_one_by_one(self, client):
        query = "&".join(f"f{i}=1" for i in range(MAX_FIELDS))
        response = client.get(f"/api/v1/memories?{query}")
        assert response.status_code == 400
        assert error_of(response)["code"] == "unknown_parameter"

    def test_it_refuses_more_than_1000_multipart_fields_with_400(self, client):
        fields: dict[str, Any] = {f"f{i}": "1" for i in range(MAX_FIELDS + 1)}
        fields["file"] = SimpleUploadedFile("a.txt", b"Short notes.")
        before = stored()
        response = client.post("/api/v1/documents", fields, format="multipart")
        refused(response, 400, Code.TOO_MANY_FIELDS)
        assert stored() == before

    def test_it_refuses_more_than_100_files_with_400(self, client):
        files = {f"file{i}": SimpleUploadedFile(f"{i}.txt", b"notes") for i in range(MAX_FILES + 1)}
        before = stored()
        response = client.post("/api/v1/documents", files, format="multipart")
        error = refused(response, 400, Code.TOO_MANY_FIELDS)
        assert error["details"] == {"max_files": MAX_FILES}
        assert stored() == before


class TestMalformedBodies:
    def test_a_body_that_is_not_utf8_is_invalid_json(self, client):
        body = b'{"content": "caf\xe9"}'
        response = client.generic("POST", "/api/v1/memories", body, content_type="application/json")
        refused(response, 400, Code.INVALID_JSON)

    @pytest.mark.parametrize("body", [b"{", b"{nope}", b'{"content": NaN}', b"\xff\xfe", b'{"a": 1} x'])
    def test_a_body_that_is_not_json_is_invalid_json(self, client, body):
        before = stored()
        response = client.generic("POST", "/api/v1/memories", body, content_type="application/json")
        refused(response, 400, Code.INVALID_JSON)
        assert stored() == before

    @pytest.mark.parametrize(
        "content_type", ["text/plain", "application/xml", "application/x-www-form-urlencoded", "nonsense"]
    )
    def test_a_wrong_content_type_is_415_saying_what_to_send(self, client, content_type):
        body = b'{"content": "Tea at five."}'
        before = stored()
        response = client.generic("POST", "/api/v1/memories", body, content_type=content_type)
        error = refused(response, 415, Code.UNSUPPORTED_MEDIA_TYPE)
        assert "application/json" in error["agent_action"]
        assert stored() == before

    def test_a_broken_multipart_body_is_not_called_invalid_json(self, client):
        response = client.generic(
            "POST", "/api/v1/documents", b"--x\r\nnonsense", content_type="multipart/form-data"
        )
        error = refused(response, 400, Code.INVALID_ARGUMENTS)
        assert "multipart" in error["message"]

    def test_a_host_that_is_not_allowed_gets_the_error_shape(self, alice):
        response = pat_client(alice).get("/api/v1/memories", HTTP_HOST="evil.example")
        refused(response, 400, Code.INVALID_ARGUMENTS)


def asgi_get(path: str, query: bytes, content_type: bytes) -> tuple[int, bytes]:
    """One GET through the service's own ASGI handler (config/asgi.py), as uvicorn would send it."""
    from config.asgi import django_app

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", content_type)],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
    }
    sent: list[Mapping[str, Any]] = []

    async def call() -> None:
        answered = asyncio.Event()
        messages = iter([{"type": "http.request", "body": b"", "more_body": False}])

        async def receive() -> dict[str, Any]:
            message = next(messages, None)
            if message is None:
                await answered.wait()
                return {"type": "http.disconnect"}
            return message

        async def send(message: Mapping[str, Any]) -> None:
            sent.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                answered.set()

        await django_app(scope, receive, send)

    asyncio.run(call())
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


class TestTheAsgiRequest:
    # Anonymous: the query is refused before anyone is authenticated, as for everyone.
    @pytest.mark.parametrize("content_type", [b"application/json; charset=utf-8", b"application/json"])
    def test_too_many_query_parameters_with_a_charset_are_400_not_a_server_error(self, content_type):
        query = "&".join(f"f{i}=1" for i in range(MAX_FIELDS + 1)).encode()
        status, body = asgi_get("/api/v1/memories", query, content_type)
        assert status == 400, body[:300]
        assert json.loads(body)["error"]["code"] == "too_many_fields"


class TestOtherSurfaces:
    def test_oauth_registration_refuses_json_nested_too_deep(self, db):
        before = stored()
        for path in ("/o/register/", "/o/register/no-such-client/"):
            response = Client().generic("POST", path, nested(100_000), content_type="application/json")
            assert response.status_code == 400, path
            assert response.json()["error"] == "invalid_client_metadata"
        assert stored() == before

    def test_the_api_docs_page_answers_a_refused_body_with_4xx(self, alice):
        client = session_client(alice)
        for body in (nested(100_000), big_save(MAX_BODY + 1)):
            response = client.generic("POST", "/api/docs/", body, content_type="application/json")
            assert response.status_code == 405
        many = {f"f{i}": "1" for i in range(MAX_FIELDS + 1)}
        assert client.post("/api/docs/", many, format="multipart").status_code == 405
        # A page, not an endpoint: DRF's OPTIONS description had no template to render with.
        assert client.options("/api/docs/").status_code == 405
        assert client.get("/api/docs/").status_code == 200

    @pytest.mark.parametrize("path", ["/memories/new/", "/memories/upload/", "/spaces/"])
    def test_the_dashboard_answers_over_limit_forms_with_400(self, alice, path):
        # Django refuses these in the CSRF check, before the view; a guard that it stays so.
        client = Client(enforce_csrf_checks=True)
        client.force_login(alice)
        secret = get_random_string(32)
        client.cookies[settings.CSRF_COOKIE_NAME] = secret
        before = stored()
        many = {f"f{i}": "1" for i in range(MAX_FIELDS + 1)} | {"csrfmiddlewaretoken": secret}
        assert client.post(path, many).status_code == 400
        big = {"content": "x" * (MAX_BODY + 1), "csrfmiddlewaretoken": secret}
        assert client.post(path, big).status_code == 400
        assert stored() == before

    @pytest.mark.parametrize("path", ["/memories/", "/jobs/", "/relations/"])
    def test_the_dashboard_answers_too_many_query_parameters_with_400(self, alice, path):
        client = Client()
        client.force_login(alice)
        query = "&".join(f"f{i}=1" for i in range(MAX_FIELDS + 1))
        assert client.get(f"{path}?{query}").status_code == 400


class TestTheRules:
    def test_json_depth_is_counted_in_arrays_and_objects(self):
        assert json_decode(nested(JSON_MAX_DEPTH)) is not None
        assert json_decode(nested(JSON_MAX_DEPTH, "objects")) is not None
        assert json_decode(b"1") == 1 and json_decode(b'"x"') == "x"
        for body in (nested(JSON_MAX_DEPTH + 1), nested(JSON_MAX_DEPTH + 1, "objects"), nested(200_000)):
            with pytest.raises(JsonTooDeep):
                json_decode(body)
        wide = [[{"a": [1]}] for _ in range(10_000)]
        assert json_depth_checked(wide) is wide

    def test_the_catalogue_states_the_limits_the_settings_hold(self):
        assert f"{JSON_MAX_DEPTH} levels" in CATALOGUE[Code.INVALID_JSON].meaning
        assert f"{MAX_BODY // (1024 * 1024)} MB" in CATALOGUE[Code.PAYLOAD_TOO_LARGE].meaning
        meaning = CATALOGUE[Code.TOO_MANY_FIELDS].meaning
        assert f"{MAX_FIELDS:,} query parameters" in meaning and f"{MAX_FILES} files" in meaning
        assert CATALOGUE[Code.PAYLOAD_TOO_LARGE].status == 413
        assert CATALOGUE[Code.TOO_MANY_FIELDS].status == 400
