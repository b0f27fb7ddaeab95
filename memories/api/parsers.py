"""The REST API's body parsers: DRF's, with their failures in our words.

JSON nested deeper than `JSON_MAX_DEPTH` is refused as `invalid_json` (DRF's parser lets the
decoder's RecursionError through, which became a 500), and a multipart body that cannot be read
is not called "not valid JSON".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from memories.errors import AppError, Code
from memories.parsing import JSON_MAX_DEPTH, JsonTooDeep, json_depth_checked


class JSONParser(parsers.JSONParser):
    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        try:
            return json_depth_checked(super().parse(stream, media_type, parser_context))
        except (RecursionError, JsonTooDeep):
            raise AppError(
                Code.INVALID_JSON,
                f"The JSON body nests arrays or objects more than {JSON_MAX_DEPTH} levels deep.",
                details={"max_depth": JSON_MAX_DEPTH},
                agent_action=f"send JSON nested at most {JSON_MAX_DEPTH} levels deep",
            ) from None


class MultiPartParser(parsers.MultiPartParser):
    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except ParseError:
            raise AppError(
                Code.INVALID_ARGUMENTS,
                "The multipart/form-data body cannot be read.",
                agent_action="send a well-formed multipart/form-data body (with its boundary)",
            ) from None


class FileBodyParser(parsers.BaseParser):
    """An import's application/json body is the export itself, not the request's arguments: read
    as bytes by `body_read` and by the import's reader, never by DRF's JSON parser. That parser
    read a 200 MB export a second time, refused our JSON Lines export (not one JSON document) and
    refused an export holding a NUL before the reader could clean it (as an uploaded file's is)."""

    media_type = "application/json"

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        return {}
