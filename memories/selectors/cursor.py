"""Opaque page cursors: a small JSON object in URL-safe base64, for every reader that pages.

Each reader keeps its own payload (the boundary row of its order) and checks it in its `parse`;
this module only wraps and unwraps it, and turns anything it cannot read into one error. A
cursor is opaque, not secret: it holds only what the page it came from already showed.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from memories.errors import AppError, Code

T = TypeVar("T")


def cursor_encode(payload: Mapping[str, Any]) -> str:
    """The cursor for a JSON-able payload, without base64 padding (it travels in URLs and JSON)."""
    raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def cursor_decode(cursor: str, *, parse: Callable[[dict[str, Any]], T]) -> T:
    """`parse` of the payload of a cursor `cursor_encode` made.

    Raises AppError `invalid_cursor` (`details.field` "cursor") for anything else: not base64, not
    a JSON object, or a payload `parse` refuses with KeyError, TypeError, ValueError or
    AttributeError (a missing key, a wrong type, a bad value).
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        payload = json.loads(raw.decode())
        if not isinstance(payload, dict):
            raise TypeError(type(payload).__name__)
        return parse(payload)
    # RecursionError: deeply nested JSON, which a forged cursor in a long URL can hold.
    except (binascii.Error, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        raise AppError(
            Code.INVALID_CURSOR,
            "cursor is not a cursor this service returned.",
            details={"field": "cursor"},
            agent_action="send the next_cursor of the previous page unchanged, or leave cursor out",
        ) from None
