"""Import files built in code, each in the shape its exporter's public documentation and real exports
show (memories/pipeline/import_formats.py names the fields): a ChatGPT export zip, a Claude export
zip, mem0's get_all JSON and a zip of Obsidian-style Markdown notes."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime
from typing import Any

from memories.pipeline.import_formats import ArchiveLimits

# One person's history, in the order it was said: the later move supersedes the earlier home.
STATEMENTS = [
    ("I live in Paris with my sister.", datetime(2024, 3, 1, 9, 0, tzinfo=UTC)),
    ("My favourite food is ramen.", datetime(2024, 3, 1, 9, 5, tzinfo=UTC)),
    ("I moved to Berlin last week.", datetime(2024, 6, 10, 18, 0, tzinfo=UTC)),
]


# What the format tests let a zip unpack to (the settings' caps are the service's).
LIMITS = ArchiveLimits(max_total=50 * 1024 * 1024, max_ratio=100)


def post_file(client: Any, data: bytes, name: str, **fields: Any) -> Any:
    """The file uploaded to POST /api/v1/imports as the multipart field 'file', with `fields`."""
    upload = io.BytesIO(data)
    upload.name = name
    return client.post("/api/v1/imports", {"file": upload, **fields}, format="multipart")


def stored_import(owner: Any, response: Any) -> Any:
    """The import a POST answered 202 for, run to its end by the worker's code (in this process)."""
    from memories.models import Import, Job
    from memories.worker.run import job_process

    assert response.status_code == 202, response.content[:500]
    made = Import.objects.get(owner=owner, id=response.json()["import"]["id"])
    job_process(job_id=made.job_id)
    made.refresh_from_db()
    assert made.job.status == Job.Status.SUCCEEDED, (made.job.error_code, made.job.error_message)
    return made


def zipped(files: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _chatgpt_node(node_id: str, parent: str | None, children: list[str], message: Any) -> dict[str, Any]:
    return {"id": node_id, "message": message, "parent": parent, "children": children}


def _chatgpt_message(message_id: str, role: str, text: str, at: datetime, **metadata: Any) -> dict[str, Any]:
    return {
        "id": message_id,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": at.timestamp(),
        "update_time": None,
        "content": {"content_type": "text", "parts": [text]},
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 1.0,
        "metadata": metadata,
        "recipient": "all",
    }


def chatgpt_conversations(statements: list[tuple[str, datetime]] = STATEMENTS) -> list[dict[str, Any]]:
    """One conversation: a system message, the person's statements each answered, and one edited
    statement whose first version sits on a branch the person left (not on current_node's path)."""
    mapping: dict[str, dict[str, Any]] = {"root": _chatgpt_node("root", None, ["sys"], None)}
    system = _chatgpt_message(
        "m-sys", "system", "You are ChatGPT.", statements[0][1], is_visually_hidden_from_conversation=True
    )
    mapping["sys"] = _chatgpt_node("sys", "root", [], system)
    parent = "sys"
    for index, (text, at) in enumerate(statements):
        user, answer = f"u{index}", f"a{index}"
        mapping[parent]["children"].append(user)
        mapping[user] = _chatgpt_node(user, parent, [answer], _chatgpt_message(f"m-{user}", "user", text, at))
        mapping[answer] = _chatgpt_node(
            answer, user, [], _chatgpt_message(f"m-{answer}", "assistant", "Noted.", at)
        )
        parent = answer
    # A version of the first statement the person edited away: a sibling branch, never current.
    mapping["sys"]["children"].append("u-old")
    mapping["u-old"] = _chatgpt_node(
        "u-old", "sys", [], _chatgpt_message("m-u-old", "user", "I live in Lyon.", statements[0][1])
    )
    return [
        {
            "title": "Moving",
            "create_time": statements[0][1].timestamp(),
            "update_time": statements[-1][1].timestamp(),
            "mapping": mapping,
            "current_node": parent,
            "conversation_id": "conv-chatgpt-1",
            "id": "conv-chatgpt-1",
        }
    ]


def chatgpt_zip(statements: list[tuple[str, datetime]] = STATEMENTS) -> bytes:
    return zipped(
        {
            "conversations.json": json.dumps(chatgpt_conversations(statements)),
            "user.json": json.dumps({"id": "user-1", "email": "alice@example.com"}),
            "chat.html": "<html></html>",
        }
    )


def claude_zip(statements: list[tuple[str, datetime]] = STATEMENTS) -> bytes:
    messages = []
    for index, (text, at) in enumerate(statements):
        messages.append(
            {
                "uuid": f"claude-h{index}",
                "text": text,
                "content": [{"type": "text", "text": text}],
                "sender": "human",
                "created_at": at.isoformat().replace("+00:00", "Z"),
                "updated_at": at.isoformat().replace("+00:00", "Z"),
                "attachments": [],
                "files": [],
            }
        )
        messages.append(
            {
                "uuid": f"claude-a{index}",
                "text": "",
                "content": [{"type": "text", "text": "Thanks for telling me."}],
                "sender": "assistant",
                "created_at": at.isoformat(),
                "updated_at": at.isoformat(),
                "attachments": [],
                "files": [],
            }
        )
    conversations = [
        {
            "uuid": "claude-conv-1",
            "name": "About me",
            "created_at": statements[0][1].isoformat(),
            "updated_at": statements[-1][1].isoformat(),
            "account": {"uuid": "account-1"},
            "chat_messages": messages,
        }
    ]
    return zipped(
        {"conversations.json": json.dumps(conversations), "users.json": "[]", "projects.json": "[]"}
    )


def mem0_json(
    statements: list[tuple[str, datetime]] = STATEMENTS, *, bare: bool = False, tagged: bool = True
) -> bytes:
    """mem0's get_all of the statements, in their order; `tagged`: the first with a tag in its
    metadata (as mem0's metadata carries them)."""
    results = [
        {
            "id": f"6f0c{index:04d}-0000-4000-8000-000000000000",
            "memory": text,
            "hash": f"hash{index}",
            "metadata": {"tags": ["from-mem0"]} if index == 0 and tagged else None,
            "created_at": at.isoformat(),
            "updated_at": None,
            "user_id": "alice",
        }
        for index, (text, at) in enumerate(statements)
    ]
    return json.dumps(results if bare else {"results": results}).encode()


def markdown_zip() -> bytes:
    return zipped(
        {
            "Vault/Home.md": (
                "---\ntitle: Home\ntags: [places, life]\ndate: 2024-03-01\n---\n"
                "I live in [[Paris]] with my sister. #family\n"
            ),
            "Vault/Food.md": "---\ncreated: 2024-03-02T10:00:00Z\n---\nMy favourite food is ramen.\n",
            "Vault/Empty.md": "---\ntags: draft\n---\n",
            "Vault/.obsidian/workspace.md": "not a note",
            "Vault/attachments/photo.png": b"\x89PNG\r\n",
        }
    )
