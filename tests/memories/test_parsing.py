"""The one parser of ids and times (memories.parsing), and the typed values validation returns."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest

from memories.errors import AppError
from memories.operations.validation import check_schema, validate_arguments
from memories.parsing import parse_datetime, parse_rest_timestamp, parse_uuid

ID = "0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51"
PLUS_TWO = timezone(timedelta(hours=2))


class TestUuid:
    @pytest.mark.parametrize("text", [ID, ID.upper(), "0B0C6C39-5d5c-4A57-8d0a-6E1F1BDE0C51"])
    def test_it_reads_the_canonical_form_in_either_case(self, text):
        assert parse_uuid(text) == uuid.UUID(ID)

    @pytest.mark.parametrize(
        "text",
        [
            f"urn:uuid:{ID}",
            f"{{{ID}}}",
            ID.replace("-", ""),
            ID[:-1],
            ID + "0",
            ID.replace("-", "", 1) + "0",
            " " + ID,
            ID + "\n",
            ID.replace("0", "g", 1),
            ID.replace("0", "\u0660", 1),  # an Arabic-Indic zero: a digit, but not a hex digit
            "",
        ],
    )
    def test_it_refuses_every_other_spelling(self, text):
        with pytest.raises(ValueError):
            parse_uuid(text)


class TestDateTime:
    @pytest.mark.parametrize(
        "text,expected",
        [
            ("2024-05-08T14:00:00+02:00", datetime(2024, 5, 8, 14, tzinfo=PLUS_TWO)),
            ("2024-05-08T12:00:00Z", datetime(2024, 5, 8, 12, tzinfo=UTC)),
            ("2024-05-08t12:00:00z", datetime(2024, 5, 8, 12, tzinfo=UTC)),
            ("2024-05-08T12:00:00-00:00", datetime(2024, 5, 8, 12, tzinfo=UTC)),
            ("2024-05-08T09:30:00-02:30", datetime(2024, 5, 8, 12, tzinfo=UTC)),
            ("2024-05-08T12:00:00.5Z", datetime(2024, 5, 8, 12, 0, 0, 500_000, tzinfo=UTC)),
            ("2024-05-08T12:00:00.123456789Z", datetime(2024, 5, 8, 12, 0, 0, 123_456, tzinfo=UTC)),
            ("2024-02-29T23:59:59+23:59", datetime(2024, 2, 29, 0, 0, 59, tzinfo=UTC)),
        ],
    )
    def test_it_reads_rfc_3339(self, text, expected):
        parsed = parse_datetime(text)
        assert parsed == expected
        assert parsed.utcoffset() is not None

    def test_it_keeps_the_offset_it_was_given(self):
        assert parse_datetime("2024-05-08T14:00:00+02:00").utcoffset() == timedelta(hours=2)

    @pytest.mark.parametrize(
        "text",
        [
            "20240508T140000+0200",  # ISO 8601 basic format
            "2024-05-08T14:00+02:00",  # no seconds
            "2024-05-08T14:00:00",  # no offset
            "2024-05-08T14:00:00+0200",  # offset without a colon
            "2024-05-08T14:00:00+02",  # offset hours only
            "2024-05-08 14:00:00+02:00",  # a space, not T
            "2024-05-08",  # a date alone
            "2024-05-08T14:00:00.Z",  # a dot without digits
            "2024-05-08T14:00:00,5Z",  # a comma fraction
            "2024-W19-3T14:00:00Z",  # a week date
            "2024-129T14:00:00Z",  # an ordinal date
            "2024-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2024-05-08T24:00:00Z",
            "2024-05-08T23:60:00Z",
            "2024-05-08T23:59:60Z",  # a leap second: datetime cannot hold it
            "2024-05-08T14:00:00+24:00",
            "2024-05-08T14:00:00+02:60",
            "+2024-05-08T14:00:00Z",
            "2024-05-08T14:00:00Z ",
            "yesterday",
            "",
        ],
    )
    def test_it_refuses_what_rfc_3339_does_not_allow(self, text):
        with pytest.raises(ValueError):
            parse_datetime(text)


class TestRestTimestamp:
    @pytest.mark.parametrize(
        "text,expected",
        [
            ("2025-03-01", datetime(2025, 3, 1, tzinfo=UTC)),
            ("2025-03-01T09:30", datetime(2025, 3, 1, 9, 30, tzinfo=UTC)),
            ("2025-03-01T09:30:00", datetime(2025, 3, 1, 9, 30, tzinfo=UTC)),
            ("2025-03-01T09:30:00Z", datetime(2025, 3, 1, 9, 30, tzinfo=UTC)),
            ("2025-03-01T11:30:00+02:00", datetime(2025, 3, 1, 9, 30, tzinfo=UTC)),
            # An unencoded "+" in a URL query arrives as a space.
            ("2025-03-01T11:30:00 02:00", datetime(2025, 3, 1, 9, 30, tzinfo=UTC)),
            ("2025-03-01T11:30:00 0200", datetime(2025, 3, 1, 9, 30, tzinfo=UTC)),
            ("20250301T113000+0200", datetime(2025, 3, 1, 9, 30, tzinfo=UTC)),
        ],
    )
    def test_it_keeps_the_looser_rest_contract(self, text, expected):
        parsed = parse_rest_timestamp(text)
        assert parsed == expected
        assert parsed.utcoffset() is not None

    @pytest.mark.parametrize("text", ["yesterday", "2025-13-01", "2025-03-01T09:30:00 2", ""])
    def test_it_still_refuses_what_is_not_a_time(self, text):
        with pytest.raises(ValueError):
            parse_rest_timestamp(text)


SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "format": "uuid"},
        "at": {"type": "string", "format": "date-time"},
        "ids": {"type": "array", "uniqueItems": True, "items": {"type": "string", "format": "uuid"}},
        "times": {"type": "array", "uniqueItems": True, "items": {"type": "string", "format": "date-time"}},
        "nested": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"id": {"type": "string", "format": "uuid"}},
        },
        "note": {"type": "string"},
    },
}


def _error(arguments: dict) -> AppError:
    with pytest.raises(AppError) as caught:
        validate_arguments(SCHEMA, arguments)
    return caught.value


class TestTypedArguments:
    def test_it_returns_uuids_and_aware_datetimes_everywhere_the_schema_says(self):
        args = validate_arguments(
            SCHEMA,
            {
                "id": ID.upper(),
                "at": " 2024-05-08T14:00:00+02:00 ",
                "ids": [ID],
                "times": ["2024-05-08T12:00:00Z"],
                "nested": {"id": ID},
                "note": ID,
            },
        )
        assert args["id"] == uuid.UUID(ID) and isinstance(args["id"], uuid.UUID)
        assert args["at"] == datetime(2024, 5, 8, 12, tzinfo=UTC) and args["at"].utcoffset() is not None
        assert args["ids"] == [uuid.UUID(ID)]
        assert args["times"] == [datetime(2024, 5, 8, 12, tzinfo=UTC)]
        assert args["nested"] == {"id": uuid.UUID(ID)}
        # A string without a format stays the text it was.
        assert args["note"] == ID

    @pytest.mark.parametrize(
        "arguments,field,form",
        [
            ({"id": f"urn:uuid:{ID}"}, "id", "uuid"),
            ({"id": f"{{{ID}}}"}, "id", "uuid"),
            ({"id": ID.replace("-", "")}, "id", "uuid"),
            ({"ids": [ID, f"urn:uuid:{ID}"]}, "ids.1", "uuid"),
            ({"nested": {"id": "42"}}, "nested.id", "uuid"),
            ({"at": "20240508T140000+0200"}, "at", "date-time"),
            ({"at": "2024-05-08T14:00+02:00"}, "at", "date-time"),
            ({"times": ["2024-05-08T14:00:00"]}, "times.0", "date-time"),
        ],
    )
    def test_it_refuses_a_loose_form_as_invalid_format_and_not_retryable(self, arguments, field, form):
        error = _error(arguments)
        assert error.code == "invalid_format"
        assert error.details == {"field": field, "format": form}
        assert error.retryable is False
        assert "e.g." in error.agent_action

    def test_it_counts_one_id_in_two_cases_as_a_duplicate(self):
        error = _error({"ids": [ID, ID.upper()]})
        assert error.code == "duplicate_items" and error.details == {"field": "ids"}

    def test_it_counts_one_instant_at_two_offsets_as_a_duplicate(self):
        error = _error({"times": ["2024-05-08T12:00:00Z", "2024-05-08T14:00:00+02:00"]})
        assert error.code == "duplicate_items" and error.details == {"field": "times"}

    def test_it_refuses_a_schema_whose_format_it_could_not_type(self):
        hidden = {
            "type": "object",
            "additionalProperties": False,
            "properties": {"at": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]}},
        }
        with pytest.raises(ValueError, match="typed"):
            check_schema(hidden)
        check_schema(SCHEMA)
