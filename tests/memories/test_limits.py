"""Limits and choices have one home each, and every schema and form reads them from there.

The first tests check what the surfaces offer against the home; the last ones read the source, so
that a hand-written copy of a list or a number fails here even while its values still agree.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from accounts.models import PersonalAccessToken, User
from memories.api.documents import UPLOAD_SCHEMA
from memories.api.memories import SAVE_SCHEMA
from memories.api.query import REASON_SCHEMA
from memories.api.tokens import CREATE_SCHEMA
from memories.dashboard import forms
from memories.models import Entity, Memory, Source, Space
from memories.operations import registry

ROOT = Path(__file__).resolve().parents[2]
KINDS = Memory.Kind.values
REASONS = Memory.SuppressReason.for_callers()


def _max_length(model: Any, name: str) -> int:
    field = model._meta.get_field(name)
    return int(getattr(field, "base_field", field).max_length)


def _schemas() -> Iterator[tuple[str, dict[str, Any]]]:
    for operation in registry.operations():
        yield f"{operation.name} input", operation.input_schema
        yield f"{operation.name} output", operation.output_schema
    yield "REST save", SAVE_SCHEMA
    yield "REST suppress", REASON_SCHEMA
    yield "REST upload", UPLOAD_SCHEMA
    yield "REST token", CREATE_SCHEMA


def _nodes(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every sub-schema with its property path (items as `[]`)."""
    if isinstance(schema, dict):
        yield path, schema
        for name, spec in schema.get("properties", {}).items():
            yield from _nodes(spec, f"{path}.{name}")
        yield from _nodes(schema.get("items"), f"{path}[]")
        for key in ("anyOf", "oneOf", "allOf"):
            for index, spec in enumerate(schema.get(key, [])):
                yield from _nodes(spec, f"{path}{{{key}{index}}}")


def _enums_listing(word: str) -> list[tuple[str, list[Any]]]:
    return [
        (f"{where}{path}", list(node["enum"]))
        for where, schema in _schemas()
        for path, node in _nodes(schema)
        if word in node.get("enum", [])
    ]


class TestSchemasReadTheHome:
    def test_every_enum_of_kinds_is_the_models(self):
        found = _enums_listing("foresight")
        # recall types and hits, answer sources, graph memories, REST save kind.
        assert len(found) >= 5, found
        assert all(values == KINDS for _, values in found), found

    def test_every_enum_of_reasons_is_the_models_without_operator(self):
        found = _enums_listing("outdated")
        assert {where for where, _ in found} >= {"forget input.reason_code", "REST suppress.reason_code"}
        assert all(values == REASONS for _, values in found), found
        assert "operator" not in REASONS and "operator" in Memory.SuppressReason.values

    def test_every_content_limit_is_the_setting(self):
        remember = registry.get_operation("remember").input_schema["properties"]["content"]
        limits = [
            remember["maxLength"],
            SAVE_SCHEMA["properties"]["content"]["maxLength"],
            SAVE_SCHEMA["properties"]["source_text"]["maxLength"],
            forms.NoteForm.base_fields["content"].max_length,
        ]
        assert limits == [settings.REMEMBER_MAX_CHARS] * 4

    def test_every_length_that_protects_a_column_is_the_columns(self):
        recall = registry.get_operation("recall").input_schema["properties"]
        relate = registry.get_operation("relate").input_schema["properties"]
        ingest = registry.get_operation("ingest").input_schema["properties"]
        entity = SAVE_SCHEMA["properties"]["entities"]["items"]["properties"]["name"]
        pairs = [
            (recall["tags"]["items"]["maxLength"], _max_length(Memory, "tags")),
            (SAVE_SCHEMA["properties"]["tags"]["items"]["maxLength"], _max_length(Memory, "tags")),
            (forms.TAG_MAX_LENGTH, _max_length(Memory, "tags")),
            (relate["source"]["maxLength"], _max_length(Entity, "name")),
            (relate["target"]["maxLength"], _max_length(Entity, "name")),
            (entity["maxLength"], _max_length(Entity, "name")),
            (ingest["title"]["maxLength"], _max_length(Source, "title")),
            (ingest["source_kind"]["maxLength"], _max_length(Source, "source_kind")),
            (UPLOAD_SCHEMA["properties"]["source_kind"]["maxLength"], _max_length(Source, "source_kind")),
            (ingest["source_ref"]["maxLength"], _max_length(Source, "source_ref")),
            (UPLOAD_SCHEMA["properties"]["source_ref"]["maxLength"], _max_length(Source, "source_ref")),
            (forms.SpaceNameForm.base_fields["name"].max_length, _max_length(Space, "name")),
            (CREATE_SCHEMA["properties"]["name"]["maxLength"], _max_length(PersonalAccessToken, "name")),
            (forms.TokenCreateForm.base_fields["name"].max_length, _max_length(PersonalAccessToken, "name")),
            (forms.EmailChangeForm.base_fields["email"].max_length, _max_length(User, "email")),
        ]
        assert [schema for schema, _ in pairs] == [column for _, column in pairs]


class TestFormsReadTheHome:
    def test_the_hide_form_offers_exactly_the_reasons_with_the_dashboards_words(self):
        offered = forms.SuppressForm.base_fields["reason"].choices
        assert [value for value, _ in offered] == REASONS
        assert dict(offered)["incorrect"] == "It is wrong"

    def test_the_search_form_offers_exactly_the_kinds(self):
        offered = forms.MemorySearchForm.base_fields["kind"].choices
        assert [value for value, _ in offered if value] == KINDS


# --- no second copy in the source ------------------------------------------------------------


def _code_files() -> list[Path]:
    files = [
        path
        for app in ("accounts", "config", "mcp_gateway", "memories")
        for path in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in path.parts
    ]
    assert len(files) > 50
    return files


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def _number_literals(value: int) -> list[str]:
    found = []
    for path in _code_files():
        for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            digits = token.string.replace("_", "")
            if token.type == tokenize.NUMBER and digits.isdigit() and int(digits) == value:
                found.append(_where(path, token.start[0]))
    return found


def _collections_holding(words: set[str], *, at_least: int) -> list[str]:
    """Hand-written lists, tuples, sets and dict keys of string literals sharing `at_least` of `words`."""
    found = []
    for path in _code_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.List | ast.Tuple | ast.Set):
                elements: list[ast.expr | None] = list(node.elts)
            elif isinstance(node, ast.Dict):
                elements = list(node.keys)
            else:
                continue
            strings = {e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            if len(strings & words) >= at_least:
                found.append(_where(path, node.lineno))
    return found


class TestNoSecondCopy:
    def test_the_content_maximum_is_written_only_in_the_settings(self):
        assert _number_literals(settings.REMEMBER_MAX_CHARS) == [
            _where(ROOT / "config" / "settings.py", _setting_line("REMEMBER_MAX_CHARS"))
        ]

    def test_the_embedding_size_is_written_only_beside_the_model(self):
        found = _number_literals(384)
        assert len(found) == 1 and found[0].startswith("memories/embeddings.py:"), found

    @pytest.mark.parametrize(
        "words,at_least",
        [
            (set(KINDS), len(KINDS)),
            (set(Memory.SuppressReason.values), 2),
        ],
        ids=["kinds", "reasons"],
    )
    def test_no_list_of_kinds_or_reasons_is_written_by_hand(self, words, at_least):
        assert _collections_holding(words, at_least=at_least) == []


def _setting_line(name: str) -> int:
    lines = (ROOT / "config" / "settings.py").read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if line.startswith(f"{name} ="))
