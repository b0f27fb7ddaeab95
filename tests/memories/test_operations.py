"""The operations registry over REST: listing, strict validation, scopes, error shape."""

from __future__ import annotations

import pytest

from memories.errors import AppError
from memories.models import Job, Source
from memories.operations import registry
from memories.operations.validation import validate_arguments
from tests.helpers import READ, error_of, pat_client

pytestmark = pytest.mark.django_db

URL = "/api/v1/operations/remember"
SAVE_URL = "/api/v1/memories"
SESSION = "0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51"


def _nothing_stored() -> bool:
    return not Source.objects.exists() and not Job.objects.exists()


class TestListing:
    def test_it_lists_every_registered_operation_with_its_schemas(self, alice):
        response = pat_client(alice, (READ,)).get("/api/v1/operations")
        assert response.status_code == 200
        listed = {op["name"]: op for op in response.json()["operations"]}
        assert set(listed) == {op.name for op in registry.operations()}
        remember = listed["remember"]
        assert remember["scope"] == "memory:write"
        assert remember["input_schema"]["additionalProperties"] is False
        assert remember["input_schema"]["properties"]["content"]["maxLength"] == 100_000

    def test_it_refuses_anonymous_callers_in_the_error_shape(self, client):
        response = client.get("/api/v1/operations")
        assert response.status_code == 401
        assert error_of(response)["code"] == "not_authenticated"
        assert response["WWW-Authenticate"].startswith("Bearer")


class TestStrictValidation:
    @pytest.mark.parametrize(
        "body,code,field,url",
        [
            ({"content": "x" * 100_001}, "value_too_long", "content", URL),
            ({"content": "   \n\t "}, "value_too_short", "content", URL),
            ({"content": ""}, "value_too_short", "content", URL),
            ({}, "missing_field", "content", URL),
            ({"content": "hi", "agent_id": "someone-else"}, "unknown_field", None, URL),
            ({"content": 42}, "wrong_type", "content", URL),
            # remember is content only (the core contract); the REST save takes a session.
            ({"content": "hi", "session_id": SESSION}, "unknown_field", None, URL),
            ({"content": "hi", "session_id": "not-a-uuid"}, "invalid_format", "session_id", SAVE_URL),
            (
                {"content": "hi", "session_id": f"urn:uuid:{SESSION}"},
                "invalid_format",
                "session_id",
                SAVE_URL,
            ),
            ({"content": "hi", "session_id": f"{{{SESSION}}}"}, "invalid_format", "session_id", SAVE_URL),
            (
                {"content": "hi", "session_id": SESSION.replace("-", "")},
                "invalid_format",
                "session_id",
                SAVE_URL,
            ),
        ],
    )
    def test_it_rejects_bad_arguments_and_stores_nothing(self, alice, body, code, field, url):
        response = pat_client(alice).post(url, body, format="json")
        assert response.status_code == 400, response.json()
        error = error_of(response)
        assert error["code"] == code
        assert error["retryable"] is False
        if field:
            assert error["details"]["field"] == field
        assert _nothing_stored()

    def test_it_accepts_exactly_the_limit_after_trimming(self, alice, django_capture_on_commit_callbacks):
        with django_capture_on_commit_callbacks(execute=False):
            response = pat_client(alice).post(URL, {"content": "  " + "y" * 100_000 + "  "}, format="json")
        assert response.status_code == 200, response.json()
        assert Source.objects.get().content == "y" * 100_000

    def test_it_rejects_a_body_that_is_not_an_object(self, alice):
        response = pat_client(alice).post(URL, ["content"], format="json")
        assert error_of(response)["code"] == "invalid_arguments"
        assert _nothing_stored()

    def test_it_rejects_malformed_json(self, alice):
        response = pat_client(alice).post(URL, "{not json", content_type="application/json")
        assert response.status_code == 400
        assert error_of(response)["code"] == "invalid_json"

    def test_it_never_treats_booleans_as_integers(self):
        schema = {
            "type": "object",
            "additionalProperties": False,
            "properties": {"top_k": {"type": "integer", "minimum": 1}, "w": {"type": "number"}},
        }
        for value in (True, False):
            with pytest.raises(AppError) as exc:
                validate_arguments(schema, {"top_k": value})
            assert exc.value.code == "wrong_type"
            with pytest.raises(AppError):
                validate_arguments(schema, {"w": value})
        assert validate_arguments(schema, {"top_k": 3, "w": 0.5}) == {"top_k": 3, "w": 0.5}

    def test_it_rejects_a_date_time_without_offset(self):
        schema = {
            "type": "object",
            "additionalProperties": False,
            "properties": {"at": {"type": "string", "format": "date-time"}},
        }
        with pytest.raises(AppError) as exc:
            validate_arguments(schema, {"at": "2024-05-08T10:00:00"})
        assert exc.value.code == "invalid_format"
        assert validate_arguments(schema, {"at": "2024-05-08T10:00:00Z"})


class TestScopesAndAttribution:
    def test_it_refuses_a_write_with_a_read_only_token(self, alice):
        response = pat_client(alice, (READ,)).post(URL, {"content": "I like tea"}, format="json")
        assert response.status_code == 403
        error = error_of(response)
        assert error["code"] == "insufficient_scope"
        assert error["details"]["required_scope"] == "memory:write"
        assert _nothing_stored()

    def test_it_says_an_unknown_operation_is_unknown(self, alice):
        response = pat_client(alice).post("/api/v1/operations/teleport", {}, format="json")
        assert response.status_code == 404
        assert error_of(response)["code"] == "unknown_operation"

    def test_it_queues_a_job_for_the_authenticated_owner(self, alice, django_capture_on_commit_callbacks):
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            response = pat_client(alice).post(URL, {"content": "  I like tea  "}, format="json")
        assert response.status_code == 200
        body = response.json()
        assert body["status"] == "queued"
        job = Job.objects.get(id=body["job_id"])
        assert job.owner == alice and job.source is not None
        assert job.source.content == "I like tea" and job.source.owner == alice
        assert len(callbacks) == 1  # the task is sent only after the commit


class TestUnroutedApiPaths:
    def test_it_answers_a_malformed_id_in_the_error_shape(self, alice):
        response = pat_client(alice).get("/api/v1/memories/not-a-uuid")
        assert response.status_code == 404
        assert error_of(response)["code"] == "not_found"
        assert response["Content-Type"].startswith("application/json")


class TestForeignSpaces:
    def test_it_refuses_to_save_into_someone_elses_space(self, alice, charlie):
        from memories.selectors.spaces import space_default

        alices_space = space_default(owner=alice)
        assert alices_space is not None
        response = pat_client(charlie).post(
            "/api/v1/memories", {"content": "sneaky", "space": str(alices_space.id)}, format="json"
        )
        assert response.status_code == 404
        assert error_of(response)["code"] == "space_not_found"
        assert _nothing_stored()

    def test_it_refuses_to_upload_into_someone_elses_space(self, alice, charlie):
        from django.core.files.uploadedfile import SimpleUploadedFile

        from memories.selectors.spaces import space_default

        alices_space = space_default(owner=alice)
        assert alices_space is not None
        response = pat_client(charlie).post(
            "/api/v1/documents",
            {"file": SimpleUploadedFile("a.txt", b"sneaky"), "space": str(alices_space.id)},
            format="multipart",
        )
        assert response.status_code == 404
        assert error_of(response)["code"] == "space_not_found"
        assert _nothing_stored()


class TestOpenApi:
    def test_it_publishes_a_schema_with_every_endpoint(self, client):
        response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
        assert response.status_code == 200
        paths = response.json()["paths"]
        for path in (
            "/api/v1/memories",
            "/api/v1/memories/{memory_id}",
            "/api/v1/jobs/{job_id}",
            "/api/v1/documents",
            "/api/v1/export",
            "/api/v1/spaces",
            "/api/v1/operations/{name}",
        ):
            assert path in paths, path

    def test_it_serves_the_docs_page_without_a_cdn(self, client):
        response = client.get("/api/docs/")
        assert response.status_code == 200
        html = response.content.decode()
        assert "swagger-ui" in html
        assert "cdn" not in html.lower() and "unpkg" not in html.lower()


class TestUnstorableText:
    @pytest.mark.parametrize(
        "method,url,body",
        [
            ("post", "/api/v1/operations/remember", {"content": "a\x00b"}),
            ("post", "/api/v1/memories", {"content": "fine", "tags": ["x\x00"]}),
            ("post", "/api/v1/spaces", {"name": "Work\x00"}),
            ("get", "/api/v1/memories?tag=a%00b", None),
        ],
    )
    def test_it_refuses_nul_characters_as_the_callers_error(self, alice, method, url, body):
        client = pat_client(alice)
        response = client.post(url, body, format="json") if method == "post" else client.get(url)
        assert response.status_code == 400, response.json()
        assert error_of(response)["code"] == "invalid_characters"
        assert error_of(response)["retryable"] is False
        assert _nothing_stored()

    def test_it_refuses_a_lone_surrogate(self, alice):
        response = pat_client(alice).post(URL, b'{"content": "a\\ud800b"}', content_type="application/json")
        assert response.status_code == 400
        assert error_of(response)["code"] == "invalid_characters"
        assert _nothing_stored()

    def test_it_cleans_a_filename_with_control_characters(self, alice, django_capture_on_commit_callbacks):
        from django.core.files.uploadedfile import SimpleUploadedFile

        with django_capture_on_commit_callbacks(execute=False):
            response = pat_client(alice).post(
                "/api/v1/documents",
                {"file": SimpleUploadedFile("no\x00te\x07.txt", b"hello there")},
                format="multipart",
            )
        assert response.status_code == 202, response.json()
        assert Source.objects.get().filename == "note.txt"


class TestProfileTools:
    """A contract can fix a URL's tools, their order and their names (memories.operations.registry)."""

    @pytest.fixture
    def isolated(self, monkeypatch):
        monkeypatch.setattr(registry, "_REGISTRY", {})
        # Only the profiles that fix no tools of their own: the real closed ones (graph, evidence)
        # would report their real operations missing from this empty registry.
        profiles = {
            **{name: profile for name, profile in registry.PROFILES.items() if not profile.tools},
            "contract": registry.Profile(
                "contract", "/mcp/contract", "Contract", "test", tools=("b_op", "a_op")
            ),
        }
        monkeypatch.setattr(registry, "PROFILES", profiles)

        def op(name: str, tool: str = "") -> registry.Operation:
            schema = {"type": "object", "properties": {}, "additionalProperties": False}
            return registry.Operation(
                name, name, schema, {"type": "object"}, READ, lambda c, a: {}, ("core", "contract"), {}, tool
            )

        return op

    def test_a_profile_lists_its_tools_in_its_own_order_under_their_tool_names(self, isolated):
        registry.register(isolated("a_op", tool="remember"))
        registry.register(isolated("b_op", tool="recall"))
        assert [op.name for op in registry.operations("contract")] == ["b_op", "a_op"]
        assert [op.name for op in registry.operations("core")] == ["a_op", "b_op"]
        assert registry.operation_for_tool("remember", "contract").name == "a_op"
        assert registry.operation_for_tool("a_op", "contract") is None
        assert registry.profile_problems() == []

    def test_two_tools_of_one_name_on_one_profile_are_refused(self, isolated):
        registry.register(isolated("a_op", tool="remember"))
        with pytest.raises(ValueError, match="two tools named 'remember'"):
            registry.register(isolated("b_op", tool="remember"))

    def test_a_profile_and_its_operations_that_disagree_are_reported(self, isolated):
        registry.register(isolated("a_op"))
        registry.register(isolated("c_op"))
        problems = registry.profile_problems()
        assert any("b_op" in p and "no operation offers" in p for p in problems)
        assert any("c_op" in p and "does not list" in p for p in problems)
