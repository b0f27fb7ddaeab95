from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import (
    database_from_url,
    env_bool,
    env_int,
    env_list,
    env_networks,
    env_rate,
    env_secret,
    env_url,
    env_uuid,
)
from tests.conftest import run_manage


class TestEnvHelpers:
    def test_it_reads_booleans_and_rejects_nonsense(self, monkeypatch):
        monkeypatch.setenv("X_FLAG", "yes")
        assert env_bool("X_FLAG", False) is True
        monkeypatch.setenv("X_FLAG", "off")
        assert env_bool("X_FLAG", True) is False
        monkeypatch.setenv("X_FLAG", "maybe")
        with pytest.raises(ImproperlyConfigured, match="X_FLAG"):
            env_bool("X_FLAG", False)

    def test_it_rejects_bad_integers_and_out_of_range(self, monkeypatch):
        monkeypatch.setenv("X_INT", "12a")
        with pytest.raises(ImproperlyConfigured, match="not a whole number"):
            env_int("X_INT", 1)
        monkeypatch.setenv("X_INT", "0")
        with pytest.raises(ImproperlyConfigured, match="below the minimum"):
            env_int("X_INT", 1, minimum=1)

    def test_it_rejects_empty_list_entries(self, monkeypatch):
        monkeypatch.setenv("X_LIST", "a.example,,b.example")
        with pytest.raises(ImproperlyConfigured, match="empty entry"):
            env_list("X_LIST", [])

    def test_it_rejects_urls_without_scheme_or_host(self, monkeypatch):
        monkeypatch.setenv("X_URL", "memory.example.com")
        with pytest.raises(ImproperlyConfigured, match="X_URL"):
            env_url("X_URL", "", schemes=("https",))
        monkeypatch.setenv("X_URL", "https://memory.example.com/")
        assert env_url("X_URL", "", schemes=("https",)) == "https://memory.example.com"

    def test_it_reads_rates_and_rejects_nonsense(self, monkeypatch):
        monkeypatch.setenv("X_RATE", "5/m")
        assert env_rate("X_RATE", "1/s") == "5/m"
        monkeypatch.setenv("X_RATE", "OFF")
        assert env_rate("X_RATE", "1/s") is None
        for bad in ("5", "0/m", "five/m", "5/minute", "5/w"):
            monkeypatch.setenv("X_RATE", bad)
            with pytest.raises(ImproperlyConfigured, match="X_RATE"):
                env_rate("X_RATE", "1/s")

    def test_it_reads_trusted_proxy_networks(self, monkeypatch):
        monkeypatch.setenv("X_PROXIES", "10.0.0.0/8, ::1")
        assert [str(n) for n in env_networks("X_PROXIES")] == ["10.0.0.0/8", "::1/128"]
        monkeypatch.setenv("X_PROXIES", "proxy.internal")
        with pytest.raises(ImproperlyConfigured, match="not an IP address"):
            env_networks("X_PROXIES")

    def test_it_reads_only_canonical_uuids(self, monkeypatch):
        monkeypatch.setenv("X_ID", "0B0C6C39-5D5C-4A57-8D0A-6E1F1BDE0C51")
        assert str(env_uuid("X_ID")) == "0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51"
        monkeypatch.delenv("X_ID")
        assert env_uuid("X_ID") is None
        for bad in (
            "0b0c6c395d5c4a578d0a6e1f1bde0c51",
            "urn:uuid:0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51",
            "abc",
        ):
            monkeypatch.setenv("X_ID", bad)
            with pytest.raises(ImproperlyConfigured, match=r"X_ID.*not a UUID"):
                env_uuid("X_ID")

    def test_it_keeps_a_development_secret_across_reads(self, tmp_path, monkeypatch):
        monkeypatch.delenv("X_SECRET", raising=False)
        first = env_secret("X_SECRET", required=False, keep_in=tmp_path / "secret")
        second = env_secret("X_SECRET", required=False, keep_in=tmp_path / "secret")
        assert first == second and len(first) >= 50
        assert oct((tmp_path / "secret").stat().st_mode)[-3:] == "600"

    def test_it_refuses_a_missing_secret_when_required(self, tmp_path, monkeypatch):
        monkeypatch.delenv("X_SECRET", raising=False)
        with pytest.raises(ImproperlyConfigured, match="X_SECRET is not set"):
            env_secret("X_SECRET", required=True, keep_in=tmp_path / "secret")
        assert not (tmp_path / "secret").exists()

    def test_it_parses_database_urls(self):
        db = database_from_url("postgresql://u%40x:p%2Fw@db.internal:6543/memory?sslmode=require")
        assert (db["USER"], db["PASSWORD"], db["HOST"], db["PORT"], db["NAME"]) == (
            "u@x",
            "p/w",
            "db.internal",
            "6543",
            "memory",
        )
        assert db["OPTIONS"] == {"sslmode": "require"}
        socket_db = database_from_url("postgresql://postgres@/memory?host=/run/pg")
        assert socket_db["HOST"] == "/run/pg"

    @pytest.mark.parametrize(
        "url,message",
        [
            ("mysql://u@h/db", "must start with postgresql://"),
            ("postgresql://u@h", "no database name"),
            ("postgresql://u@h:port/db", "port that is not a number"),
        ],
    )
    def test_it_rejects_bad_database_urls(self, url, message):
        with pytest.raises(ImproperlyConfigured, match=message):
            database_from_url(url)


def _assert_one_clear_line(result, *fragments: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("deeprecall: error: ")
    for fragment in fragments:
        assert fragment in lines[0]


class TestStartupErrors:
    def test_it_refuses_production_without_a_secret(self, tmp_path):
        result = run_manage(
            "check",
            env={
                "DEEPRECALL_ENV": "production",
                "SECRET_KEY": "",
                "DEEPRECALL_VAR_DIR": str(tmp_path),
                "DATABASE_URL": "postgresql://u@127.0.0.1:1/db",
                "CELERY_BROKER_URL": "redis://127.0.0.1:1/0",
                "PUBLIC_URL": "https://memory.example.com",
            },
        )
        _assert_one_clear_line(result, "SECRET_KEY is not set")
        assert not (tmp_path / "secret_key").exists()

    def test_it_names_a_bad_database_url(self, tmp_path):
        result = run_manage(
            "check", env={"DATABASE_URL": "mysql://u@h/db", "DEEPRECALL_VAR_DIR": str(tmp_path)}
        )
        _assert_one_clear_line(result, "DATABASE_URL", "postgresql://")

    def test_it_says_when_the_database_cannot_be_reached(self, tmp_path, unused_tcp_port):
        result = run_manage(
            "up",
            "--port",
            str(unused_tcp_port),
            env={
                "DATABASE_URL": "postgresql://nobody:secret@127.0.0.1:1/deeprecall?connect_timeout=2",
                "DEEPRECALL_VAR_DIR": str(tmp_path),
            },
        )
        _assert_one_clear_line(
            result, "cannot connect to PostgreSQL at 127.0.0.1:1/deeprecall", "DATABASE_URL"
        )
        assert "secret" not in result.stderr

    def test_it_says_when_the_port_is_busy(self, tmp_path):
        import socket

        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen()
            port = busy.getsockname()[1]
            result = run_manage("up", "--port", str(port), env={"DEEPRECALL_VAR_DIR": str(tmp_path)})
        _assert_one_clear_line(result, f"port {port}", "already in use")


class TestSharedCache:
    SHOW = "from django.conf import settings; print(settings.CACHES['default']['BACKEND'])"

    def test_it_uses_the_database_cache_by_default_and_redis_at_redis_url(self, tmp_path):
        default = run_manage(
            "shell", "-c", self.SHOW, env={"DEEPRECALL_VAR_DIR": str(tmp_path), "REDIS_URL": ""}
        )
        assert default.stdout.strip().splitlines()[-1] == "django.core.cache.backends.db.DatabaseCache", (
            default.stderr
        )
        redis = run_manage(
            "shell",
            "-c",
            self.SHOW,
            env={"DEEPRECALL_VAR_DIR": str(tmp_path), "REDIS_URL": "redis://cache.internal:6379/1"},
        )
        assert redis.stdout.strip().splitlines()[-1] == "django.core.cache.backends.redis.RedisCache", (
            redis.stderr
        )

    def test_the_cache_table_exists_after_migrating(self, db):
        from django.core.cache import cache
        from django.db import connection

        assert "deeprecall_cache" in connection.introspection.table_names()
        cache.set("probe", 1)
        assert cache.get("probe") == 1
