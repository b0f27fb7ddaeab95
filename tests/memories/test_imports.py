"""Imports: each format read into items from a file written here (tests/memories/import_fixtures.py),
stored through the update engine in time order, idempotent, undone with a receipt; the REST surface
with its scopes, an outsider who sees and changes nothing, and the refusals of bad files."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime
from typing import Any

import pytest
from django.test import override_settings

from accounts.caller import ALL_SCOPES, Actor, Caller
from memories.models import AuditEvent, Evidence, Import, Job, Memory, Source
from memories.pipeline.import_formats import import_parse
from memories.services.memories import remember
from memories.services.purge import memories_hard_delete_in_space
from memories.worker.run import job_process
from tests.helpers import READ, error_of, pat_client
from tests.memories import import_fixtures as fx

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("no_worker_broker")]

LIMITS = fx.LIMITS
_post_file = fx.post_file


def _run(response: Any) -> dict[str, Any]:
    """The import the response started, run to its end by the worker's own function."""
    assert response.status_code == 202, response.json()
    made = response.json()["import"]
    job_process(job_id=made["job_id"])
    return made


def _imported(client: Any, data: bytes, name: str) -> dict[str, Any]:
    made = _run(_post_file(client, data, name))
    body: dict[str, Any] = client.get(f"/api/v1/imports/{made['id']}").json()["import"]
    return body


def _current(owner: Any) -> list[str]:
    return sorted(
        Memory.objects.filter(owner=owner, superseded_at__isnull=True).values_list("content", flat=True)
    )


def _history(owner: Any) -> list[tuple[str, str]]:
    """(replaced, replacement) for every superseded memory of the owner."""
    rows = Memory.objects.filter(owner=owner, superseded_by__isnull=False).select_related("superseded_by")
    return sorted((m.content, m.superseded_by.content if m.superseded_by else "") for m in rows)


class TestFormats:
    def test_it_reads_chatgpts_branch_the_person_saw_last(self):
        parsed = import_parse(data=fx.chatgpt_zip(), filename="export.zip", limits=LIMITS)
        assert parsed.format == "chatgpt"
        users = [item.text for item in parsed.items if item.role == "user"]
        # The edited-away branch ("Lyon") and the hidden system message are not the history.
        assert users == [text for text, _ in fx.STATEMENTS]
        assert [item.at for item in parsed.items if item.role == "user"] == [at for _, at in fx.STATEMENTS]
        assert {item.group for item in parsed.items} == {"conv-chatgpt-1"}

    def test_it_reads_claudes_export(self):
        parsed = import_parse(data=fx.claude_zip(), filename="data.zip", limits=LIMITS)
        assert parsed.format == "claude"
        assert [(i.role, i.source_id) for i in parsed.items[:2]] == [
            ("user", "claude-h0"),
            ("assistant", "claude-a0"),
        ]
        # Claude's assistant turn has its words in content blocks only.
        assert parsed.items[1].text == "Thanks for telling me."

    @pytest.mark.parametrize("bare", [False, True])
    def test_it_reads_mem0s_get_all(self, bare):
        parsed = import_parse(data=fx.mem0_json(bare=bare), filename="mem0.json", limits=LIMITS)
        assert parsed.format == "mem0"
        assert [i.text for i in parsed.items] == [text for text, _ in fx.STATEMENTS]
        assert parsed.items[0].tags == ("from-mem0",)

    def test_it_reads_markdown_notes_with_front_matter_tags_and_links(self):
        parsed = import_parse(data=fx.markdown_zip(), filename="vault.zip", limits=LIMITS)
        assert parsed.format == "markdown"
        by_id = {item.source_id: item for item in parsed.items}
        assert set(by_id) == {"Vault/Home.md", "Vault/Food.md", "Vault/Empty.md"}
        home = by_id["Vault/Home.md"]
        assert "[[" not in home.text and "I live in Paris" in home.text
        assert home.tags == ("places", "life", "family")
        assert home.at == datetime(2024, 3, 1, tzinfo=UTC)
        assert by_id["Vault/Food.md"].at == datetime(2024, 3, 2, 10, tzinfo=UTC)
        assert by_id["Vault/Empty.md"].text == ""

    def test_it_names_the_field_a_changed_schema_lacks(self):
        conversations = fx.chatgpt_conversations()
        del conversations[0]["mapping"]["u1"]["message"]["author"]
        data = fx.zipped({"conversations.json": json.dumps(conversations)})
        with pytest.raises(Exception) as refused:
            import_parse(data=data, filename="export.zip", limits=LIMITS)
        error = refused.value
        assert getattr(error, "code", None) == "import_schema_changed"
        assert error.details["expected"] == "'message.author'"
        assert "node u1" in error.details["where"]


class TestImport:
    def test_it_imports_a_chatgpt_export_with_its_world_times(self, alice):
        made = _imported(pat_client(alice), fx.chatgpt_zip(), "chatgpt.zip")
        assert made["status"] == "succeeded"
        assert made["format"] == "chatgpt"
        assert made["items"]["total"] == made["items"]["read"] == 6
        assert made["items"]["stored"] + made["items"]["skipped"] + made["items"]["failed"] == 6
        berlin = Memory.objects.get(owner=alice, content__contains="Berlin")
        paris = Memory.objects.get(owner=alice, content__contains="Paris")
        # The later move supersedes the earlier home, in the world time the messages carry.
        assert paris.superseded_by_id == berlin.id
        assert berlin.stated_at == fx.STATEMENTS[2][1]
        assert berlin.source is not None and berlin.source.origin == Source.Origin.IMPORT
        assert berlin.source.refers_to == fx.STATEMENTS[2][1]
        assert not Memory.objects.filter(owner=alice, content__contains="Lyon").exists()
        assert Import.objects.get(id=made["id"]).data is None

    @pytest.mark.parametrize(
        ("build", "name", "fmt"),
        [
            (fx.claude_zip, "claude.zip", "claude"),
            (fx.mem0_json, "mem0.json", "mem0"),
            (fx.markdown_zip, "notes.zip", "markdown"),
        ],
    )
    def test_it_imports_each_format(self, alice, build, name, fmt):
        made = _imported(pat_client(alice), build(), name)
        assert (made["status"], made["format"]) == ("succeeded", fmt)
        assert made["items"]["stored"] >= 2
        assert Memory.objects.filter(owner=alice, content__contains="ramen").count() == 1

    def test_it_counts_an_empty_note_as_skipped_with_its_reason(self, alice):
        made = _imported(pat_client(alice), fx.markdown_zip(), "notes.zip")
        assert made["skipped_reasons"].get("empty") == 1
        assert made["items"]["failed"] == 0

    def test_it_stores_the_same_as_saving_one_by_one(self, alice, bob):
        statements = [
            *fx.STATEMENTS,
            ("My sister works at Siemens.", datetime(2024, 7, 1, tzinfo=UTC)),
            ("Actually I moved back to Paris in August.", datetime(2024, 9, 1, tzinfo=UTC)),
            ("I'm allergic to peanuts.", datetime(2024, 9, 2, tzinfo=UTC)),
            ("I have a peanut allergy.", datetime(2024, 9, 3, tzinfo=UTC)),
        ]
        _imported(pat_client(alice), fx.mem0_json(statements), "mem0.json")
        caller = Caller(user=bob, scopes=ALL_SCOPES)
        for text, at in statements:
            job = remember(caller=caller, content=text, occurred_at=at)
            job_process(job_id=job.id)
        assert _current(alice) == _current(bob)
        assert _history(alice) == _history(bob)
        assert _history(alice), "the fixture must exercise supersession"

    def test_importing_the_same_file_twice_adds_nothing(self, alice):
        client = pat_client(alice)
        _imported(client, fx.claude_zip(), "claude.zip")
        before = (Memory.objects.count(), Evidence.objects.count(), Source.objects.count())
        again = _imported(client, fx.claude_zip(), "claude.zip")
        assert (Memory.objects.count(), Evidence.objects.count(), Source.objects.count()) == before
        assert again["items"]["stored"] == 0
        assert again["skipped_reasons"]["already_imported"] == again["items"]["skipped"] == 6

    def test_undo_removes_what_it_stored_and_gives_a_receipt(self, alice):
        client = pat_client(alice)
        job = remember(
            caller=Caller(user=alice, scopes=ALL_SCOPES),
            content="I live in Rome.",
            occurred_at=datetime(2024, 1, 1, tzinfo=UTC),
        )
        job_process(job_id=job.id)
        made = _imported(client, fx.mem0_json(), "mem0.json")
        assert Memory.objects.get(content__contains="Rome").superseded_at is not None
        response = client.post(f"/api/v1/imports/{made['id']}/undo")
        assert response.status_code == 200, response.json()
        receipt = response.json()["receipt"]
        assert receipt["target_type"] == "import" and receipt["import_id"] == made["id"]
        assert receipt["purged"]["memories"] == made["items"]["stored"]
        assert _current(alice) == ["I live in Rome."]
        assert not Source.objects.filter(owner=alice, origin=Source.Origin.IMPORT).exists()
        assert AuditEvent.objects.filter(action="import_undone", target_id=made["id"]).exists()
        shown = client.get(f"/api/v1/imports/{made['id']}").json()["import"]
        assert (
            shown["status"] == "undone"
            and shown["undo_receipt"]["audit_event_id"] == receipt["audit_event_id"]
        )
        # A second undo answers the same receipt and removes nothing more.
        assert client.post(f"/api/v1/imports/{made['id']}/undo").json()["receipt"] == receipt

    def test_a_cancelled_import_stops_and_can_be_undone(self, alice):
        client = pat_client(alice)
        response = _post_file(client, fx.chatgpt_zip(), "chatgpt.zip")
        made = response.json()["import"]
        assert client.post(f"/api/v1/imports/{made['id']}/undo").json()["error"]["code"] == "import_running"
        cancelled = client.post(f"/api/v1/imports/{made['id']}/cancel").json()["import"]
        assert cancelled["status"] == "cancelled"
        job_process(job_id=made["job_id"])
        assert not Memory.objects.filter(owner=alice).exists()
        assert client.post(f"/api/v1/imports/{made['id']}/undo").status_code == 200

    def test_it_accepts_the_export_as_a_json_body(self, alice):
        client = pat_client(alice)
        response = client.post("/api/v1/imports", fx.mem0_json(), content_type="application/json")
        made = _run(response)
        assert Import.objects.get(id=made["id"]).format == "mem0"
        assert Memory.objects.filter(owner=alice, content__contains="ramen").exists()

    def test_a_finished_import_holds_its_owners_reads_to_a_replica_that_has_replayed_it(
        self, alice, bob, standby_named_default
    ):
        # As after a save (config/replicas.py): the owner's next recall must find what was imported,
        # so the position recorded when the import was asked for is not enough.
        from config import replicas

        response = _post_file(pat_client(alice), fx.chatgpt_zip(), "chatgpt.zip")
        asked = replicas._owner_position(alice.id)
        _run(response)
        assert replicas._owner_position(alice.id) > asked
        assert replicas._owner_position(bob.id) == 0


class TestOwnExport:
    def test_export_purge_import_gives_the_same_memories_and_history(self, alice):
        client = pat_client(alice)
        caller = Caller(user=alice, scopes=ALL_SCOPES)
        for text, at in fx.STATEMENTS:
            job_process(job_id=remember(caller=caller, content=text, occurred_at=at).id)
        current, history = _current(alice), _history(alice)
        assert history
        export = b"".join(client.get("/api/v1/export").streaming_content)
        space = Memory.objects.filter(owner=alice).select_related("space").first().space
        memories_hard_delete_in_space(actor=Actor(owner=alice, user=alice), space=space)
        assert not Memory.objects.filter(owner=alice).exists()
        made = _imported(client, export, "deeprecall-export.jsonl")
        assert made["format"] == "deeprecall"
        assert (_current(alice), _history(alice)) == (current, history)


class TestSurfaces:
    def test_an_outsider_sees_and_changes_nothing(self, alice, bob):
        made = _imported(pat_client(alice), fx.mem0_json(), "mem0.json")
        before = (Memory.objects.filter(owner=alice).count(), Import.objects.get(id=made["id"]).undone_at)
        outsider = pat_client(bob)
        for response in (
            outsider.get(f"/api/v1/imports/{made['id']}"),
            outsider.post(f"/api/v1/imports/{made['id']}/cancel"),
            outsider.post(f"/api/v1/imports/{made['id']}/undo"),
        ):
            assert response.status_code == 404 and error_of(response)["code"] == "import_not_found"
        assert outsider.get("/api/v1/imports").json()["results"] == []
        assert (
            Memory.objects.filter(owner=alice).count(),
            Import.objects.get(id=made["id"]).undone_at,
        ) == before

    def test_a_read_token_reads_imports_and_cannot_start_one(self, alice):
        made = _imported(pat_client(alice), fx.mem0_json(), "mem0.json")
        reader = pat_client(alice, scopes=(READ,))
        assert reader.get(f"/api/v1/imports/{made['id']}").status_code == 200
        for response in (
            _post_file(reader, fx.mem0_json(), "mem0.json"),
            reader.post(f"/api/v1/imports/{made['id']}/undo"),
            reader.post(f"/api/v1/imports/{made['id']}/cancel"),
        ):
            assert response.status_code == 403 and error_of(response)["code"] == "insufficient_scope"

    def test_an_import_is_one_operation_against_the_upload_budget(self, alice, settings):
        settings.RATE_LIMITS = {**settings.RATE_LIMITS, "upload": "1/m"}
        client = pat_client(alice)
        assert _post_file(client, fx.chatgpt_zip(), "a.zip").status_code == 202
        refused = _post_file(client, fx.mem0_json(), "b.json")
        assert refused.status_code == 429 and error_of(refused)["code"] == "rate_limited"


class TestBadInput:
    def _refused(self, alice: Any, data: bytes, name: str, code: str, status: int) -> dict[str, Any]:
        response = _post_file(pat_client(alice), data, name)
        assert response.status_code == status, response.json()
        error = error_of(response)
        assert error["code"] == code
        assert not Import.objects.exists() and not Job.objects.exists() and not Source.objects.exists()
        return error

    def test_a_corrupt_zip(self, alice):
        self._refused(alice, fx.chatgpt_zip()[:200], "export.zip", "import_archive_invalid", 422)

    def test_a_zip_bomb(self, alice):
        bomb = fx.zipped({"conversations.json": b"[" + b" " * (20 * 1024 * 1024) + b"]"})
        error = self._refused(alice, bomb, "export.zip", "import_archive_too_large", 413)
        assert error["details"]["max_unpacked_bytes"] < 20 * 1024 * 1024

    @override_settings(IMPORT_MAX_UNPACKED_BYTES=4096)
    def test_a_zip_over_the_total_cap(self, alice):
        notes = fx.zipped({f"n{i}.md": f"Note {i}: " + "words " * 300 for i in range(4)})
        self._refused(alice, notes, "notes.zip", "import_archive_too_large", 413)

    def test_an_unknown_format(self, alice):
        self._refused(alice, b'{"hello": "world"}', "thing.json", "import_format_unknown", 415)
        self._refused(alice, fx.zipped({"photo.png": b"\x89PNG"}), "photos.zip", "import_format_unknown", 415)

    def test_a_changed_schema(self, alice):
        conversations = [{"uuid": "c1", "chat_messages": [{"uuid": "m1", "text": "hi"}]}]
        error = self._refused(
            alice,
            fx.zipped({"conversations.json": json.dumps(conversations)}),
            "claude.zip",
            "import_schema_changed",
            422,
        )
        assert error["details"] == {
            "format": "Claude",
            "where": "conversation 0, message 0",
            "expected": "'sender'",
        }

    @override_settings(IMPORT_MAX_BYTES=2048)
    def test_an_over_size_file_is_refused_from_its_content_length(self, alice):
        client = pat_client(alice)
        # The declared length alone refuses it: the body sent is never read.
        response = client.generic(
            "POST",
            "/api/v1/imports",
            b"{}",
            content_type="application/json",
            CONTENT_LENGTH=str(2 * 1024**3),
        )
        assert response.status_code == 413 and error_of(response)["code"] == "import_too_large"
        response = _post_file(client, b"x" * 4096, "big.json")
        assert response.status_code == 413 and error_of(response)["code"] == "import_too_large"
        assert not Import.objects.exists()

    def test_a_zip_entry_that_is_damaged_inside(self, alice):
        data = bytearray(fx.zipped({"conversations.json": json.dumps(fx.chatgpt_conversations()) * 3}))
        # Flip bytes in the compressed stream: the directory opens, the member does not inflate.
        for offset in range(60, 120):
            data[offset] ^= 0xFF
        self._refused(alice, bytes(data), "export.zip", "import_archive_invalid", 422)

    def test_zipfile_reads_the_fixture(self):
        # The fixtures are real zips (the refusals above are of damage, not of the builder).
        assert zipfile.ZipFile(io.BytesIO(fx.chatgpt_zip())).testzip() is None


class TestDashboard:
    def test_the_page_imports_a_file_and_an_outsider_gets_404(self, alice, bob, client):
        client.force_login(alice)
        upload = io.BytesIO(fx.mem0_json())
        upload.name = "mem0.json"
        response = client.post("/imports/", {"file": upload, "space": str(alice.spaces.get().id)})
        assert response.status_code == 302, response.content[:2000]
        made = Import.objects.get(owner=alice)
        assert response["Location"].endswith(f"/imports/{made.id}/")
        job_process(job_id=made.job_id)
        page = client.get(f"/imports/{made.id}/")
        assert page.status_code == 200 and b"3 of 3 items read" in page.content
        client.force_login(bob)
        assert client.get(f"/imports/{made.id}/").status_code == 404
        assert client.post(f"/imports/{made.id}/undo").status_code == 404
        assert client.post(f"/imports/{made.id}/cancel").status_code == 404
        assert Import.objects.get(id=made.id).undone_at is None
        assert Memory.objects.filter(owner=alice).exists()

    def test_the_page_says_why_items_were_skipped_in_words(self, alice, client):
        client.force_login(alice)
        _imported(pat_client(alice), fx.markdown_zip(), "notes.zip")
        again = _imported(pat_client(alice), fx.markdown_zip(), "notes.zip")
        assert again["skipped_reasons"]["already_imported"] >= 1
        page = client.get(f"/imports/{again['id']}/").content.decode()
        assert "Skipped, already imported" in page
        # Words, not the codes the REST answer carries.
        assert "already_imported" not in page

    def test_the_page_says_what_is_wrong_with_a_file(self, alice, client):
        client.force_login(alice)
        upload = io.BytesIO(b'{"hello": "world"}')
        upload.name = "thing.json"
        response = client.post("/imports/", {"file": upload, "space": str(alice.spaces.get().id)})
        assert response.status_code == 400
        assert b"not a format Deep Recall imports" in response.content
        assert not Import.objects.exists()


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "deep.json"),
        (b'{"type":"account"}\n\xff\xfe not text', "export.jsonl"),
        (
            json.dumps(
                [
                    {
                        "mapping": {"n": {"message": {"author": {"role": "user"}, "metadata": []}}},
                        "current_node": "n",
                    }
                ]
            ).encode(),
            "c.json",
        ),
        (json.dumps([{"chat_messages": ["not a message"]}]).encode(), "c.json"),
        (json.dumps({"results": [{"memory": {"nested": True}, "metadata": [1]}]}).encode(), "m.json"),
        (b"---\n" + b"[" * 10_000 + b"\n---\nbody", "note.md"),
    ],
)
def test_it_answers_odd_files_without_a_server_error(alice, data, name):
    response = _post_file(pat_client(alice), data, name)
    assert response.status_code < 500, response.content[:500]
    if response.status_code >= 400:
        assert error_of(response)["code"].startswith("import_")
