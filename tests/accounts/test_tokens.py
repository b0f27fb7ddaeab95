from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection

from accounts.authentication import pat_authenticate
from accounts.models import PersonalAccessToken
from accounts.selectors import pat_list
from accounts.services import pat_create, pat_revoke
from memories.errors import AppError

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _row_as_text(token: PersonalAccessToken) -> str:
    """Every column of the stored row, as PostgreSQL renders it."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT row_to_json(t)::text FROM accounts_personalaccesstoken t WHERE id = %s", [token.pk]
        )
        return cursor.fetchone()[0]


class TestCreate:
    def test_it_returns_the_plaintext_once_and_stores_only_its_hash(self, alice):
        token, raw = pat_create(user=alice, name="  laptop CLI  ", scopes=["memory:write", "memory:read"])
        assert raw.startswith("drp_")
        assert len(raw) == 4 + 43
        stored = _row_as_text(token)
        assert raw not in stored
        assert raw[4:] not in stored
        token.refresh_from_db()
        assert token.name == "laptop CLI"
        assert token.prefix == raw[:12]
        assert len(token.token_hash) == 64
        assert token.scopes == "memory:read memory:write"
        assert token.user == alice
        assert token.last_used_at is None and token.revoked_at is None and token.expires_at is None

    def test_it_makes_a_different_token_each_time(self, alice):
        _, first = pat_create(user=alice, name="a", scopes=["memory:read"])
        _, second = pat_create(user=alice, name="a", scopes=["memory:read"])
        assert first != second

    def test_it_accepts_a_future_expiry_and_a_name_of_100_characters(self, alice):
        expires = datetime.now(UTC) + timedelta(days=30)
        token, _ = pat_create(user=alice, name="n" * 100, scopes=["memory:read"], expires_at=expires)
        token.refresh_from_db()
        assert token.expires_at == expires
        assert token.name == "n" * 100

    @pytest.mark.parametrize(
        "scopes",
        [[], ["memory:admin"], ["memory:read", "memory:read"], ["memory:read", "openid"], "memory:read"],
    )
    def test_it_rejects_bad_scopes_and_stores_nothing(self, alice, scopes):
        with pytest.raises(AppError) as caught:
            pat_create(user=alice, name="cli", scopes=scopes)
        assert caught.value.code == "invalid_scope"
        assert caught.value.http_status == 400
        assert not PersonalAccessToken.objects.exists()

    @pytest.mark.parametrize("name", ["", "   ", "x" * 101])
    def test_it_rejects_a_bad_name_and_stores_nothing(self, alice, name):
        with pytest.raises(AppError) as caught:
            pat_create(user=alice, name=name, scopes=["memory:read"])
        assert caught.value.code == "invalid_token_name"
        assert not PersonalAccessToken.objects.exists()

    @pytest.mark.parametrize(
        "expires_at",
        [
            T0 - timedelta(seconds=1),
            T0,
            datetime(2027, 1, 1, 12, 0),  # naive: which zone would it be?
        ],
    )
    def test_it_rejects_an_expiry_that_is_not_in_the_future_and_stores_nothing(self, alice, expires_at):
        with time_machine.travel(T0, tick=False), pytest.raises(AppError) as caught:
            pat_create(user=alice, name="cli", scopes=["memory:read"], expires_at=expires_at)
        assert caught.value.code == "invalid_expiry"
        assert not PersonalAccessToken.objects.exists()


class TestRevoke:
    def test_it_revokes_the_owners_token_and_is_idempotent(self, alice):
        token, raw = pat_create(user=alice, name="cli", scopes=["memory:read"])
        with time_machine.travel(T0, tick=False):
            revoked = pat_revoke(user=alice, token_id=token.id)
        assert revoked.revoked_at == T0
        assert pat_authenticate(raw) is None
        with time_machine.travel(T0 + timedelta(hours=1), tick=False):
            again = pat_revoke(user=alice, token_id=str(token.id))
        assert again.revoked_at == T0
        assert pat_authenticate(raw) is None

    def test_it_tells_an_outsider_the_token_does_not_exist_and_leaves_it_working(self, alice, charlie):
        token, raw = pat_create(user=alice, name="cli", scopes=["memory:read"])
        with pytest.raises(AppError) as caught:
            pat_revoke(user=charlie, token_id=token.id)
        assert caught.value.code == "token_not_found"
        assert caught.value.http_status == 404
        token.refresh_from_db()
        assert token.revoked_at is None
        assert pat_authenticate(raw) == token

    @pytest.mark.parametrize("token_id", [uuid.uuid4(), "not-a-uuid", ""])
    def test_it_reports_an_unknown_token_as_not_found(self, alice, token_id):
        with pytest.raises(AppError) as caught:
            pat_revoke(user=alice, token_id=token_id)
        assert caught.value.code == "token_not_found"


class TestList:
    def test_it_lists_only_the_owners_tokens_newest_first(self, alice, bob):
        with time_machine.travel(T0, tick=False):
            older, _ = pat_create(user=alice, name="older", scopes=["memory:read"])
        with time_machine.travel(T0 + timedelta(minutes=5), tick=False):
            newer, _ = pat_create(user=alice, name="newer", scopes=["memory:write"])
            pat_create(user=bob, name="bobs", scopes=["memory:read"])
        pat_revoke(user=alice, token_id=older.id)
        assert list(pat_list(user=alice)) == [newer, older]
        assert [t.name for t in pat_list(user=bob)] == ["bobs"]


class TestAuthenticate:
    def test_it_returns_the_token_with_its_user_for_a_valid_token(self, alice):
        token, raw = pat_create(user=alice, name="cli", scopes=["memory:read"])
        found = pat_authenticate(raw)
        assert found == token
        assert found.user == alice
        assert found.scope_set == frozenset({"memory:read"})

    @pytest.mark.parametrize(
        "raw",
        ["", "drp_", "drp_nope", "Bearer drp_x", "not-a-drp-token", "drp_" + "a" * 500],
    )
    def test_it_returns_none_for_an_unknown_token(self, alice, raw):
        pat_create(user=alice, name="cli", scopes=["memory:read"])
        assert pat_authenticate(raw) is None

    def test_it_returns_none_for_a_token_with_one_character_changed(self, alice):
        _, raw = pat_create(user=alice, name="cli", scopes=["memory:read"])
        tampered = raw[:-1] + ("A" if raw[-1] != "A" else "B")
        assert pat_authenticate(tampered) is None

    def test_it_returns_none_once_the_token_has_expired(self, alice):
        with time_machine.travel(T0, tick=False):
            _, raw = pat_create(
                user=alice, name="cli", scopes=["memory:read"], expires_at=T0 + timedelta(hours=1)
            )
        with time_machine.travel(T0 + timedelta(minutes=59), tick=False):
            assert pat_authenticate(raw) is not None
        with time_machine.travel(T0 + timedelta(hours=1), tick=False):
            assert pat_authenticate(raw) is None

    def test_it_returns_none_for_a_revoked_token(self, alice):
        token, raw = pat_create(user=alice, name="cli", scopes=["memory:read"])
        pat_revoke(user=alice, token_id=token.id)
        assert pat_authenticate(raw) is None

    def test_it_returns_none_when_the_user_is_inactive(self, alice):
        _, raw = pat_create(user=alice, name="cli", scopes=["memory:read"])
        alice.is_active = False
        alice.save(update_fields=["is_active"])
        assert pat_authenticate(raw) is None

    def test_it_records_last_use_at_most_once_a_minute(self, alice, django_assert_num_queries):
        with time_machine.travel(T0, tick=False):
            token, raw = pat_create(user=alice, name="cli", scopes=["memory:read"])
            with django_assert_num_queries(2):  # the lookup and the first UPDATE
                assert pat_authenticate(raw).last_used_at == T0
        # Within the minute: the lookup only, no write per request.
        with time_machine.travel(T0 + timedelta(seconds=59), tick=False), django_assert_num_queries(1):
            assert pat_authenticate(raw).last_used_at == T0
        token.refresh_from_db()
        assert token.last_used_at == T0
        with time_machine.travel(T0 + timedelta(seconds=61), tick=False):
            pat_authenticate(raw)
        token.refresh_from_db()
        assert token.last_used_at == T0 + timedelta(seconds=61)
