"""The one cursor codec: it reads back what it made, and calls anything else `invalid_cursor`."""

from __future__ import annotations

import base64
import string

import pytest

from memories.errors import AppError
from memories.selectors.cursor import cursor_decode, cursor_encode


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode()


def test_it_reads_back_what_it_made_in_url_safe_characters():
    payload = {"n": "Zoë / Müller + Co?", "i": "6f1c2a7e-0000-4000-8000-000000000000", "k": [1, None]}
    cursor = cursor_encode(payload)
    assert set(cursor) <= set(string.ascii_letters + string.digits + "-_")
    assert cursor_decode(cursor, parse=dict) == payload


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "not-a-cursor",
        "%%%",
        "Zoë",
        _b64(b"\xff\xfe"),
        _b64(b'"a string"'),
        _b64(b"[1, 2]"),
        _b64(b"[" * 2000),
    ],
)
def test_it_refuses_what_it_did_not_make(cursor):
    with pytest.raises(AppError) as caught:
        cursor_decode(cursor, parse=dict)
    assert caught.value.code == "invalid_cursor"
    assert caught.value.details == {"field": "cursor"}
    assert caught.value.http_status == 400


def test_it_refuses_a_payload_its_reader_refuses():
    cursor = cursor_encode({"n": "Ada"})
    with pytest.raises(AppError) as caught:
        cursor_decode(cursor, parse=lambda data: data["i"])
    assert caught.value.code == "invalid_cursor"
