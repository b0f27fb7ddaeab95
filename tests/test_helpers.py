"""The tests' own helpers that decide whether a check can fail."""

from __future__ import annotations

from tests.helpers import words_of


def test_words_of_keeps_what_a_response_says_and_blanks_its_ids_hashes_and_clocks() -> None:
    payload = {
        "answer": "Your bank PIN is 4821.",
        "sources": [{"id": "6f1c4821-0a2b-4c3d-8e4f-a1b2c3d44821", "content_sha256": "ab4821" * 8}],
        "created_at": "2026-12-07T19:59:59.694821+00:00",
        "count": 4821,
    }
    said = words_of(payload)
    assert said.count("4821") == 2  # the answer's words and the number, nothing else
    quiet = {key: value for key, value in payload.items() if key not in ("answer", "count")}
    assert "4821" not in words_of(quiet)
    # A long run of digits is a value someone said (a card number), never blanked as a hash.
    assert "4111111111111111" in words_of({"note": "card 4111111111111111"})
