"""What an import file holds: the formats people bring their history in, each read into one stream of
typed items (`ImportItem`), and the refusals of a file that is none of them.

The formats, each as its public documentation and real exports show it:
- ChatGPT's data export: a zip (or the bare file) with `conversations.json`, a list of
  conversations, each a tree of messages (`mapping`: node id -> {message, parent, children}) whose
  branch shown last ends at `current_node`; a message has `author.role`, `create_time` (Unix
  seconds) and `content` (`content_type`, `parts`). Only the branch the person last saw is read:
  the others are edits and regenerations they replaced.
- Claude's data export: a zip (or the bare file) with `conversations.json`, a list of
  conversations (`uuid`, `name`, `chat_messages`), each message with `uuid`, `sender`
  (`human` | `assistant`), `created_at` (ISO 8601) and its words in `text` or in `content` blocks
  of type `text`.
- mem0: what `get_all` returns, `{"results": [...]}` (or the bare list of older versions), each
  memory with `id`, `memory`, `created_at` / `updated_at` and optional `user_id`, `metadata`.
- Markdown notes: a zip (or a folder the CLI zips) of `.md` files in Obsidian's layout: optional
  YAML front matter (`tags`, `date` / `created`, `aliases`), inline `#tags`, `[[links]]`. One item
  per note; its path in the archive is its id.
- Our own export (`GET /api/v1/export`, JSON Lines): its sources are the testimony, read back space
  by space in the order they were recorded, each with the time it referred to; the memories are
  what the update engine makes of them again, and what the export carries beside them (spaces,
  states, history, relations made with `relate`) is read into an `ExportState` the worker applies.

Nothing here touches the database: the service checks a file with `import_parse` before it stores
it, and the worker reads it again with the same function.
"""

from __future__ import annotations

import dataclasses
import io
import json
import lzma
import posixpath
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import yaml

from memories.errors import AppError, Code
from memories.limits import SUPPRESS_NOTE_MAX_LENGTH, tags_cleaned
from memories.wire import MEMORY_CLOCKS, RELATION_CLOCKS

FORMATS = ("chatgpt", "claude", "mem0", "markdown", "deeprecall")


@dataclass(frozen=True)
class ImportItem:
    """One thing said, as the file has it: the unit an import stores (one source each)."""

    # Stable within its format: the message's, memory's or note's own id (the idempotency key).
    source_id: str
    # Who said it: "user" / "assistant" of a chat, a note's "note", mem0's "memory".
    role: str
    text: str
    # When it was said or written (world time); None when the file does not say.
    at: datetime | None
    # The conversation (or folder) it belongs to, and that group's title.
    group: str = ""
    title: str = ""
    tags: tuple[str, ...] = field(default=())
    # Our own export only: the name of the space it was said in ("" for the export's default space,
    # which is the space the import goes to), and when the service first recorded it.
    space: str = ""
    recorded_at: datetime | None = None

    def __post_init__(self) -> None:
        # An export is what its exporter wrote: a NUL or a lone surrogate ("\\u0000", "\\ud800" in
        # JSON) is legal there and cannot be stored by PostgreSQL or encoded as UTF-8. Cleaned here,
        # once for every format, rather than refused: nobody can edit a 200 MB export by hand.
        for name in ("source_id", "role", "text", "group", "title", "space"):
            object.__setattr__(self, name, storable(getattr(self, name)))
        object.__setattr__(self, "tags", tuple(storable(tag) for tag in self.tags))


_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """The text without NULs, a lone surrogate as U+FFFD."""
    return _SURROGATE.sub("\ufffd", text.replace("\x00", ""))


@dataclass(frozen=True)
class ArchiveLimits:
    """How much a zip may unpack to: in total, and as a multiple of its packed size (a zip bomb
    packs gigabytes of zeros into kilobytes)."""

    max_total: int
    max_ratio: int
    max_members: int = 20_000


@dataclass(frozen=True)
class ExportedMemory:
    """A memory as our export holds it: what the engine cannot read again from the words alone (the
    person's labels and states, and its history as it happened)."""

    id: str
    source_id: str
    space: str
    content: str
    kind: str
    category: str
    tags: tuple[str, ...]
    confidence: float
    pinned: bool
    suppressed: bool
    suppressed_at: datetime | None
    suppressed_reason: str
    suppressed_note: str
    # MEMORY_CLOCKS' times (memories.wire) the export's history gives, and the id of the exported
    # memory that replaced it. A clock left out (one no one could have recorded: _coherent) stays
    # as the engine made it.
    clocks: dict[str, datetime | None]
    superseded_by: str | None
    # Whether the export's replacement (superseded_at and superseded_by) is taken: not when it is the
    # memory itself, part of a cycle, or at a moment that cannot be.
    replaced_as_exported: bool = True


@dataclass(frozen=True)
class ExportedEntity:
    name: str
    type: str


@dataclass(frozen=True)
class ExportedClaim:
    """One `relate` of our export: its claim (a source of origin relate) and the relation it asserted."""

    source_id: str
    space: str
    content: str
    refers_to: datetime | None
    recorded_at: datetime
    subject: ExportedEntity
    object: ExportedEntity
    relation_type: str
    relation_id: str


@dataclass(frozen=True)
class ExportedRelation:
    id: str
    # RELATION_CLOCKS' times (memories.wire), and the id of the exported relation that replaced it;
    # as ExportedMemory's, a clock left out stays as the replayed claim made it.
    clocks: dict[str, datetime | None]
    superseded_by: str | None
    invalidated_at: datetime | None
    invalidated_note: str
    replaced_as_exported: bool = True


@dataclass(frozen=True)
class ExportState:
    """What our own export carries beside its sources: the other spaces (by name), the memories'
    states and history, and the relations made with `relate` (their claims in the order made)."""

    spaces: tuple[str, ...] = ()
    memories: tuple[ExportedMemory, ...] = ()
    claims: tuple[ExportedClaim, ...] = ()
    relations: tuple[ExportedRelation, ...] = ()


@dataclass(frozen=True)
class ParsedImport:
    format: str
    items: list[ImportItem]
    # Our own export only.
    state: ExportState | None = None


def _refuse(code: Code, message: str, **details: Any) -> AppError:
    return AppError(code, message, details=details)


def _schema(fmt: str, where: str, expected: str) -> AppError:
    # A changed schema names the field it expected and where: the person (or we) can see at once
    # what the exporter changed.
    return _refuse(
        Code.IMPORT_SCHEMA_CHANGED,
        f"This looks like a {fmt} export, but {where} has no {expected}: the format may have changed.",
        format=fmt,
        where=where,
        expected=expected,
    )


# --- archives ------------------------------------------------------------------------------------


_INFLATE_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    OSError,
    EOFError,
    ValueError,
    NotImplementedError,
    RuntimeError,
)


def _unzip(data: bytes, limits: ArchiveLimits) -> dict[str, bytes]:
    """Every file of the zip, read with the caps of `limits` counted on the bytes really unpacked
    (a member's declared size can lie)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
        raise _refuse(Code.IMPORT_ARCHIVE_INVALID, "The zip file is damaged and cannot be opened.") from exc
    members = [m for m in entries if not m.is_dir()]
    # Every entry counts, folders too: each costs the same to list as a file.
    if len(entries) > limits.max_members:
        raise _refuse(
            Code.IMPORT_ARCHIVE_TOO_LARGE,
            f"The zip holds more than {limits.max_members} files.",
            max_members=limits.max_members,
        )
    budget = min(limits.max_total, max(len(data), 1) * limits.max_ratio)
    files: dict[str, bytes] = {}
    unpacked = 0
    for member in members:
        name = member.filename
        if name.startswith("__MACOSX/") or posixpath.basename(name).startswith("._"):
            continue
        chunks: list[bytes] = []
        try:
            with archive.open(member) as stream:
                while chunk := stream.read(1 << 20):
                    unpacked += len(chunk)
                    if unpacked > budget:
                        raise _refuse(
                            Code.IMPORT_ARCHIVE_TOO_LARGE,
                            "The zip unpacks to more than this service accepts "
                            f"({budget // (1024 * 1024)} MB for this file).",
                            max_unpacked_bytes=budget,
                        )
                    chunks.append(chunk)
        except AppError:
            raise
        # RuntimeError: an encrypted entry (zipfile asks for a password); NotImplementedError: a
        # method Python lacks (Deflate64); LZMAError: a damaged LZMA entry (not an OSError).
        except _INFLATE_ERRORS as exc:
            raise _refuse(
                Code.IMPORT_ARCHIVE_INVALID, "A file in the zip is damaged and cannot be read.", member=name
            ) from exc
        files[name] = b"".join(chunks)
    return files


def _json(data: bytes, what: str) -> Any:
    try:
        return json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError) as exc:
        # ValueError: not UTF-8, not JSON, or an integer of more than 4,300 digits (Python's cap on
        # reading one). RecursionError: nesting deeper than the parser goes. No export does either.
        raise _refuse(Code.IMPORT_FORMAT_UNKNOWN, f"{what} is not valid JSON in UTF-8.") from exc


# --- times ----------------------------------------------------------------------------------------


def _time(value: object) -> datetime | None:
    """A Unix time in seconds or an ISO 8601 string, as an aware datetime in UTC; None for anything
    else, and for a time that is not between years 1 and 9999 in UTC."""
    parsed = _time_as_said(value)
    if parsed is None:
        return None
    try:
        # "9999-12-31T23:00-05:00" is year 10000 in UTC: PostgreSQL stores it and nothing reads it
        # back (psycopg refuses the row), so every read of the person's sources would fail.
        return parsed.astimezone(UTC)
    except OverflowError:
        return None


def _time_as_said(value: object) -> datetime | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(float(value), tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str) and value.strip():
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def _recorded(value: object, now: datetime) -> datetime | None:
    """A system time of our export (when the service recorded, replaced or forgot something): a time
    no later than `now`, else None. The service never records in the future, so a later one is an
    edited file, and taking it would hide the row from every view until then (or for ever: 9999)."""
    parsed = _time(value)
    return parsed if parsed is not None and parsed <= now else None


# --- ChatGPT --------------------------------------------------------------------------------------


def _chatgpt_text(content: object) -> str:
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        # Parts that are not text (an image's pointer) are left out: no words to remember.
        return "\n".join(p for p in parts if isinstance(p, str)).strip()
    text = content.get("text")
    return text.strip() if isinstance(text, str) else ""


def _chatgpt(conversations: object) -> Iterator[ImportItem]:
    if not isinstance(conversations, list):
        raise _schema("ChatGPT", "conversations.json", "list of conversations")
    for index, conversation in enumerate(conversations):
        where = f"conversation {index}"
        if not isinstance(conversation, dict) or not isinstance(conversation.get("mapping"), dict):
            raise _schema("ChatGPT", where, "'mapping' object")
        mapping: dict[str, Any] = conversation["mapping"]
        group = str(conversation.get("conversation_id") or conversation.get("id") or index)
        title = str(conversation.get("title") or "")
        # The branch the person saw last: from current_node up to the root, then in reading order.
        node_id = conversation.get("current_node")
        path: list[dict[str, Any]] = []
        seen: set[str] = set()
        while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
            seen.add(node_id)
            node = mapping[node_id]
            if not isinstance(node, dict):
                raise _schema("ChatGPT", f"{where}, node {node_id}", "node object")
            path.append(node)
            node_id = node.get("parent")
        if not path and mapping:
            raise _schema("ChatGPT", where, "'current_node' naming a node of its mapping")
        for node in reversed(path):
            message = node.get("message")
            if message is None:
                continue  # the tree's root holds no message
            if not isinstance(message, dict) or not isinstance(message.get("author"), dict):
                raise _schema("ChatGPT", f"{where}, node {node.get('id')}", "'message.author'")
            role = str(message["author"].get("role") or "")
            if role not in ("user", "assistant"):
                continue  # system prompts and tool output are not the person's history
            metadata = message.get("metadata")
            if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
                continue
            yield ImportItem(
                source_id=str(message.get("id") or node.get("id")),
                role=role,
                text=_chatgpt_text(message.get("content")),
                at=_time(message.get("create_time")) or _time(conversation.get("create_time")),
                group=group,
                title=title,
            )


# --- Claude ---------------------------------------------------------------------------------------


def _claude_text(message: dict[str, Any]) -> str:
    blocks = message.get("content")
    if isinstance(blocks, list):
        texts = [
            b["text"]
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        if texts:
            return "\n".join(texts).strip()
    text = message.get("text")
    return text.strip() if isinstance(text, str) else ""


def _claude(conversations: object) -> Iterator[ImportItem]:
    if not isinstance(conversations, list):
        raise _schema("Claude", "conversations.json", "list of conversations")
    for index, conversation in enumerate(conversations):
        where = f"conversation {index}"
        if not isinstance(conversation, dict) or not isinstance(conversation.get("chat_messages"), list):
            raise _schema("Claude", where, "'chat_messages' list")
        group = str(conversation.get("uuid") or index)
        for position, message in enumerate(conversation["chat_messages"]):
            if not isinstance(message, dict) or "sender" not in message:
                raise _schema("Claude", f"{where}, message {position}", "'sender'")
            sender = str(message["sender"])
            if sender not in ("human", "assistant"):
                continue  # as ChatGPT's system and tool turns: not the person's words, nor an answer
            yield ImportItem(
                source_id=str(message.get("uuid") or f"{group}:{position}"),
                role="user" if sender == "human" else sender,
                text=_claude_text(message),
                at=_time(message.get("created_at")) or _time(conversation.get("created_at")),
                group=group,
                title=str(conversation.get("name") or ""),
            )


# --- mem0 -----------------------------------------------------------------------------------------


def _mem0(payload: object) -> Iterator[ImportItem]:
    memories = payload.get("results") if isinstance(payload, dict) else payload
    if not isinstance(memories, list):
        raise _schema("mem0", "the file", "'results' list")
    for index, memory in enumerate(memories):
        if not isinstance(memory, dict) or "memory" not in memory:
            raise _schema("mem0", f"result {index}", "'memory'")
        metadata = memory.get("metadata")
        tags = metadata.get("tags") if isinstance(metadata, dict) else None
        yield ImportItem(
            source_id=str(memory.get("id") or index),
            role="memory",
            text=str(memory["memory"] or "").strip(),
            # When it was first known; a later edit in mem0 is the same memory.
            at=_time(memory.get("created_at")) or _time(memory.get("updated_at")),
            group=str(memory.get("run_id") or memory.get("user_id") or ""),
            tags=tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
        )


# --- Markdown notes -------------------------------------------------------------------------------

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
_INLINE_TAG = re.compile(r"(?<![\w&#/])#([A-Za-z][\w/-]*)")
# No "[" or line break inside a link, as in Obsidian: with them, "[[[[..." (or "[[" never closed)
# was tried from every "[" to the end of the note, and a 40 KB note took a minute to read.
_WIKILINK = re.compile(r"\[\[([^\[\]|#\n]{1,1000})(?:#[^\[\]|\n]{0,1000})?(?:\|([^\[\]\n]{1,1000}))?\]\]")


class _FrontMatterLoader(yaml.SafeLoader):
    """YAML's safe loader without aliases: `*a` shares one node however often it is used, and
    reading the values as text then expands it (nine levels of nine make 400 MB: "billion laughs").
    Front matter does not need them; with one it is left as the note's text."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("aliases are not read in front matter")
        return super().compose_node(parent, index)


def _note(path: str, raw: bytes) -> ImportItem:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _refuse(Code.IMPORT_FORMAT_UNKNOWN, "A note is not UTF-8 text.", member=path) from exc
    front: dict[str, Any] = {}
    match = _FRONT_MATTER.match(text)
    if match:
        try:
            loaded = yaml.load(match.group(1), Loader=_FrontMatterLoader)  # noqa: S506 - safe, no aliases
        except (yaml.YAMLError, RecursionError):
            loaded = None  # front matter that is not YAML is left as the note's text
        if isinstance(loaded, dict):
            front = loaded
            text = text[match.end() :]
    declared = front.get("tags") or front.get("tag") or []
    if isinstance(declared, str):
        declared = re.split(r"[,\s]+", declared)
    tags = [str(t).lstrip("#") for t in declared if str(t).strip()] if isinstance(declared, list) else []
    tags += _INLINE_TAG.findall(text)
    # A link reads as its shown text ("[[Berlin|the capital]]" -> "the capital").
    body = _WIKILINK.sub(lambda m: (m.group(2) or m.group(1)).strip(), text).strip()
    when = next((_time(front.get(k)) for k in ("date", "created", "updated") if _time(front.get(k))), None)
    if when is None:
        for key in ("date", "created"):
            value = front.get(key)
            # YAML reads a bare 2024-03-01 as a date, not a datetime.
            if value is not None and hasattr(value, "isoformat"):
                when = _time(value.isoformat())
                break
    title = str(front.get("title") or posixpath.splitext(posixpath.basename(path))[0])
    return ImportItem(
        source_id=path,
        role="note",
        text=f"{title}\n\n{body}".strip() if body else "",
        at=when,
        group=posixpath.dirname(path),
        title=title,
        tags=tuple(dict.fromkeys(t[:100] for t in tags)),
    )


def _markdown(files: dict[str, bytes]) -> Iterator[ImportItem]:
    for path in sorted(files):
        if path.lower().endswith((".md", ".markdown")) and "/.obsidian/" not in f"/{path}":
            yield _note(path, files[path])


# --- our own export -------------------------------------------------------------------------------

# Sources that were someone's words; a document's or a picture's text comes back with them.
_EXPORT_ORIGINS = {"remember", "rest", "import", "document", "image"}


def _export_records(data: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each line of our export as (line number, record)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _refuse(Code.IMPORT_FORMAT_UNKNOWN, "The export is not UTF-8 text.") from exc
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:  # as _json says
            raise _refuse(
                Code.IMPORT_FORMAT_UNKNOWN, f"Line {number} of the export is not JSON.", line=number
            ) from exc
        if not isinstance(record, dict) or "type" not in record:
            raise _schema("Deep Recall", f"line {number}", "'type'")
        yield number, record


def _needs(record: dict[str, Any], number: int, what: str, names: tuple[str, ...]) -> None:
    for name in names:
        if name not in record:
            raise _schema("Deep Recall", f"line {number} ({what})", f"'{name}'")


def _has(record: dict[str, Any], names: tuple[str, ...]) -> bool:
    return all(record.get(name) is not None for name in names)


def _text(value: object) -> str:
    return storable(value) if isinstance(value, str) else ""


def _times(record: object, names: tuple[str, ...]) -> dict[str, datetime | None]:
    values = record if isinstance(record, dict) else {}
    return {name: _time(values.get(name)) for name in names}


# The clocks' times (superseded_by, an id, is read on its own).
_MEMORY_TIMES = tuple(name for name in MEMORY_CLOCKS if name != "superseded_by")
_RELATION_TIMES = tuple(name for name in RELATION_CLOCKS if name != "superseded_by")


def _deeprecall(data: bytes) -> ParsedImport:
    """Our export's sources as items, each space's in the order they were recorded (the order the
    engine first read them in), and what the export carries beside them (ExportState)."""
    spaces: dict[str, str] = {}
    sources: list[dict[str, Any]] = []
    entities: dict[str, ExportedEntity] = {}
    memories: list[ExportedMemory] = []
    relations: list[tuple[dict[str, Any], ExportedRelation]] = []
    now = datetime.now(UTC)
    for number, record in _export_records(data):
        kind = record["type"]
        # The sources are the testimony and must be whole; a record of the rest that lacks what it
        # needs (an export edited by hand) is left out: its items are imported all the same.
        if kind == "source":
            _needs(record, number, "a source", ("id", "content", "origin", "recorded_at"))
            sources.append(record)
        elif kind == "space" and _has(record, ("id", "name")):
            spaces[str(record["id"])] = "" if record.get("is_default") else _text(record["name"])[:100]
        elif kind == "entity" and _has(record, ("id", "name")):
            # A type that is not one of ours (or none) takes the relation's default (restore._entity).
            entities[str(record["id"])] = ExportedEntity(
                _text(record["name"]), _text(record.get("entity_type"))
            )
        elif kind == "memory" and _has(record, ("id", "content", "provenance", "clocks")):
            memories.append(_exported_memory(record, spaces, now))
        elif kind == "relation" and _has(record, ("id", "subject_id", "object_id", "relation_type")):
            relations.append((record, _exported_relation(record, now)))
    # An id names one row: of two records with the same id (an edited file), the first is it.
    by_id: dict[str, dict[str, Any]] = {}
    for source in sources:
        by_id.setdefault(str(source["id"]), source)
    order = {name: index for index, name in enumerate(dict.fromkeys(["", *spaces.values()]))}

    def recorded(source: dict[str, Any]) -> tuple[int, str, str]:
        space = spaces.get(str(source.get("space_id")), "")
        return (order[space], str(source["recorded_at"]), str(source["id"]))

    items: list[ImportItem] = []
    for source in sorted(sources, key=recorded):
        origin = source["origin"]
        if not isinstance(origin, str) or origin not in _EXPORT_ORIGINS or source.get("purged_at"):
            continue
        items.append(
            ImportItem(
                source_id=str(source["id"]),
                role=origin,
                text=str(source.get("content") or "").strip(),
                at=_time(source.get("refers_to")) or _time(source.get("recorded_at")),
                group=str(source.get("session_id") or ""),
                title=str(source.get("title") or ""),
                space=spaces.get(str(source.get("space_id")), ""),
                recorded_at=_recorded(source.get("recorded_at"), now),
            )
        )
    claims = _claims(relations, by_id, entities, spaces, now)
    used = {claim.space for claim in claims}
    state = ExportState(
        # Only the spaces something is imported into: an empty space of the export is not made.
        spaces=tuple(name for name in order if name and name in {*(i.space for i in items), *used}),
        memories=_replacements_checked(_first_of_each_id(memories)),
        claims=tuple(sorted(claims, key=lambda claim: (claim.recorded_at, claim.source_id))),
        relations=_replacements_checked(_first_of_each_id([relation for _, relation in relations])),
    )
    return ParsedImport("deeprecall", items, state)


def _exported_memory(record: dict[str, Any], spaces: dict[str, str], now: datetime) -> ExportedMemory:
    provenance = record["provenance"] if isinstance(record["provenance"], dict) else {}
    clocks = record["clocks"] if isinstance(record["clocks"], dict) else {}
    tags = record.get("tags")
    confidence = record.get("confidence")
    source_id = provenance.get("source_id")
    times, replaced = _coherent(_times(clocks, _MEMORY_TIMES), now)
    superseded_by = str(clocks["superseded_by"]) if clocks.get("superseded_by") else None
    return ExportedMemory(
        id=str(record["id"]),
        source_id=str(source_id) if isinstance(source_id, str | int) else "",
        space=spaces.get(str(record.get("space_id")), ""),
        content=_text(record["content"]),
        kind=_text(record.get("kind")),
        category=_text(record.get("category")),
        tags=tuple(tags_cleaned(_text(tag) for tag in tags)) if isinstance(tags, list) else (),
        confidence=_confidence(confidence),
        pinned=record.get("pinned") is True,
        suppressed=record.get("status") == "suppressed",
        suppressed_at=_recorded(record.get("suppressed_at"), now),
        suppressed_reason=_text(record.get("suppressed_reason"))[:50],
        suppressed_note=_text(record.get("suppressed_note"))[:SUPPRESS_NOTE_MAX_LENGTH],
        clocks=times,
        superseded_by=superseded_by,
        replaced_as_exported=replaced and superseded_by != str(record["id"]),
    )


def _confidence(value: object) -> float:
    # A boolean is an int to Python, and NaN compares false to everything: neither is a confidence.
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        return 0.9
    return float(value)


def _coherent(times: dict[str, datetime | None], now: datetime) -> tuple[dict[str, datetime | None], bool]:
    """The clocks of a memory or relation that could have been (an edited file's others are left
    out, and stay as the engine or the replayed claim made them), and whether its replacement
    (superseded_at) is one: recorded no later than now, replaced after it was recorded and no later
    than now, and a span that does not end before it starts."""
    kept = dict(times)
    recorded_at = kept.get("recorded_at")
    if recorded_at is not None and recorded_at > now:
        del kept["recorded_at"]
        recorded_at = None
    replaced = True
    superseded_at = kept.get("superseded_at")
    if superseded_at is not None and (superseded_at > now or (recorded_at and superseded_at < recorded_at)):
        del kept["superseded_at"]
        replaced = False
    began, ended = kept.get("valid_from"), kept.get("valid_until")
    if began is not None and ended is not None and ended < began:
        del kept["valid_from"], kept["valid_until"]
    return kept, replaced


_Row = TypeVar("_Row", ExportedMemory, ExportedRelation)


def _first_of_each_id(rows: list[_Row]) -> list[_Row]:
    """An id names one row: of two records with the same id (an edited file), the first is it."""
    first: dict[str, _Row] = {}
    for row in rows:
        first.setdefault(row.id, row)
    return list(first.values())


def _replacements_checked(rows: list[_Row]) -> tuple[_Row, ...]:
    """The rows, those whose replacement leads round to themselves (A replaced by B replaced by A)
    marked as not replaced as exported: a chain of versions ends in a current one."""
    successor = {row.id: row.superseded_by for row in rows if row.replaced_as_exported}
    in_cycle: set[str] = set()
    for start in successor:
        path: list[str] = []
        at: str | None = start
        while at is not None and at in successor and at not in path and at not in in_cycle:
            path.append(at)
            at = successor[at]
        if at is not None and at in path:
            in_cycle.update(path[path.index(at) :])
    return tuple(
        dataclasses.replace(row, replaced_as_exported=False) if row.id in in_cycle else row for row in rows
    )


def _exported_relation(record: dict[str, Any], now: datetime) -> ExportedRelation:
    times, replaced = _coherent(_times(record, _RELATION_TIMES), now)
    superseded_by = str(record["superseded_by"]) if record.get("superseded_by") else None
    return ExportedRelation(
        id=str(record["id"]),
        clocks=times,
        superseded_by=superseded_by,
        invalidated_at=_recorded(record.get("invalidated_at"), now),
        invalidated_note=_text(record.get("invalidated_note"))[:500],
        replaced_as_exported=replaced and superseded_by != str(record["id"]),
    )


def _claims(
    relations: list[tuple[dict[str, Any], ExportedRelation]],
    sources: dict[str, dict[str, Any]],
    entities: dict[str, ExportedEntity],
    spaces: dict[str, str],
    now: datetime,
) -> list[ExportedClaim]:
    """Each `relate` claim of the export with the relation it asserted (a claim supports one)."""
    claims: list[ExportedClaim] = []
    for record, relation in relations:
        subject = entities.get(str(record["subject_id"]))
        obj = entities.get(str(record["object_id"]))
        evidence = record.get("evidence")
        if subject is None or obj is None or not isinstance(evidence, list):
            continue
        for item in evidence:
            source = sources.get(str(item.get("source_id"))) if isinstance(item, dict) else None
            if source is None or source.get("origin") != "relate" or item.get("stance") != "supports":
                continue
            recorded_at = _recorded(source.get("recorded_at"), now)
            if recorded_at is None or source.get("purged_at"):
                continue
            claims.append(
                ExportedClaim(
                    source_id=str(source["id"]),
                    space=spaces.get(str(record.get("space_id")), ""),
                    content=_text(source.get("content")),
                    refers_to=_time(source.get("refers_to")),
                    recorded_at=recorded_at,
                    subject=subject,
                    object=obj,
                    relation_type=_text(record["relation_type"]),
                    relation_id=relation.id,
                )
            )
    return claims


# --- detection ------------------------------------------------------------------------------------


def _detect_json(payload: object) -> tuple[str, Callable[[object], Iterator[ImportItem]]] | None:
    first = payload[0] if isinstance(payload, list) and payload else None
    if isinstance(first, dict) and "mapping" in first:
        return "chatgpt", _chatgpt
    if isinstance(first, dict) and "chat_messages" in first:
        return "claude", _claude
    if isinstance(payload, dict) and isinstance(payload.get("results"), list):
        return "mem0", _mem0
    if isinstance(first, dict) and "memory" in first and "id" in first:
        return "mem0", _mem0
    return None


def _ordered(items: Iterator[ImportItem]) -> list[ImportItem]:
    """The items in the order they were said: by their time, stably, an item without one taking the
    time of the item before it (so it stays where the file put it)."""
    listed = list(items)
    keys: list[tuple[datetime, int]] = []
    last = datetime.min.replace(tzinfo=UTC)
    for position, item in enumerate(listed):
        last = item.at or last
        keys.append((last, position))
    return [item for _, item in sorted(zip(keys, listed, strict=True), key=lambda pair: pair[0])]


def import_parse(*, data: bytes, filename: str, limits: ArchiveLimits) -> ParsedImport:
    """The format of an import file and its items in time order, or an AppError naming what is wrong
    (a damaged or oversized zip, a format we do not know, a known one whose fields moved)."""
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06" or filename.lower().endswith(".zip"):
        files = _unzip(data, limits)
        by_name = {posixpath.basename(name): name for name in files}
        if "conversations.json" in by_name:
            payload = _json(files[by_name["conversations.json"]], "conversations.json")
            found = _detect_json(payload)
            if found is None or found[0] not in ("chatgpt", "claude"):
                if isinstance(payload, list) and not payload:
                    return ParsedImport("chatgpt", [])
                raise _refuse(
                    Code.IMPORT_SCHEMA_CHANGED,
                    "conversations.json is neither ChatGPT's (conversations with a 'mapping') nor "
                    "Claude's (conversations with 'chat_messages').",
                    where="conversations.json",
                    expected="'mapping' or 'chat_messages' in each conversation",
                )
            return ParsedImport(found[0], _ordered(found[1](payload)))
        if any(name.lower().endswith((".md", ".markdown")) for name in files):
            return ParsedImport("markdown", _ordered(_markdown(files)))
        jsonl = [name for name in files if name.lower().endswith(".jsonl")]
        # Read as a file, never as a zip again: a zip inside is not unpacked (each level would get
        # a budget of its own, and a thousand levels end the parser's stack).
        if len(jsonl) == 1 and not files[jsonl[0]].startswith(b"PK"):
            return _parse_file(files[jsonl[0]], jsonl[0])
        raise _refuse(
            Code.IMPORT_FORMAT_UNKNOWN,
            "The zip holds no conversations.json (ChatGPT, Claude), no Markdown notes and no Deep "
            "Recall export.",
        )
    return _parse_file(data, filename)


def _parse_file(data: bytes, filename: str) -> ParsedImport:
    """A file that is not a zip: our export, one note, or a JSON export."""
    head = data.lstrip()[:200]
    if head.startswith(b'{"type":"account"') or head.startswith(b'{"type": "account"'):
        return _deeprecall(data)
    if filename.lower().endswith((".md", ".markdown")):
        return ParsedImport("markdown", [_note(posixpath.basename(filename), data)])
    if head[:1] in (b"{", b"["):
        payload = _json(data, "The file")
        found = _detect_json(payload)
        if found is not None:
            return ParsedImport(found[0], _ordered(found[1](payload)))
        if isinstance(payload, list) and not payload:
            raise _refuse(Code.IMPORT_EMPTY, "The file holds no conversations, memories or notes.")
    raise _refuse(
        Code.IMPORT_FORMAT_UNKNOWN,
        "This is not a format Deep Recall imports: a ChatGPT or Claude data export (zip or "
        "conversations.json), a mem0 get_all JSON, a zip of Markdown notes, or a Deep Recall export.",
    )
