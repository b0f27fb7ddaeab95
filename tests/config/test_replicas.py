"""The read replicas' rules, without a replica (tests/faults/test_replicas.py runs a real one)."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import OperationalError, transaction

from accounts.models import User
from config import replicas
from config.replicas import ReplicaRouter, lag_seconds, lsn_value
from memories.health import health_report
from memories.models import Memory
from tests.conftest import ROOT


@pytest.fixture
def routed() -> Iterator[str]:
    """This context's memory-store reads routed to a replica alias, as `route_enter` leaves them."""
    token = replicas._route.set("replica_1")
    yield "replica_1"
    replicas._route.reset(token)


class TestPositions:
    def test_it_orders_lsns_as_the_wal_does(self):
        assert lsn_value("0/0") == 0
        assert lsn_value("0/16B3748") == 0x16B3748
        assert lsn_value("0/FFFFFFFF") < lsn_value("1/0") < lsn_value("1/1") < lsn_value("A/0")

    def test_it_measures_lag_as_the_age_of_the_oldest_position_not_replayed(self):
        positions = [(100.0, 10), (101.0, 20), (102.0, 30)]
        assert lag_seconds(positions, 30, 105.0, replay_age=50.0) == 0.0
        assert lag_seconds(positions, 25, 105.0, replay_age=50.0) == 3.0
        assert lag_seconds(positions, 10, 105.0, replay_age=50.0) == 4.0

    def test_it_takes_the_replicas_own_age_when_it_is_behind_everything_this_process_saw(self):
        # A process that started a moment ago must not take a replica an hour behind for a current one.
        positions = [(100.0, 10), (101.0, 20)]
        assert lag_seconds(positions, 5, 102.0, replay_age=3600.0) == 3600.0
        assert lag_seconds(positions, 5, 102.0, replay_age=None) == 2.0


class TestRouter:
    def test_it_reads_on_the_primary_outside_a_route(self):
        assert ReplicaRouter().db_for_read(Memory) is None
        assert replicas.read_alias() == "default"

    def test_it_sends_memory_store_reads_of_a_route_to_its_replica(self, routed):
        assert ReplicaRouter().db_for_read(Memory) == routed
        assert replicas.read_alias() == routed

    def test_it_keeps_users_sessions_and_tokens_on_the_primary(self, routed):
        # A session or token made a moment ago is read at once: never from a replica.
        assert ReplicaRouter().db_for_read(User) is None

    @pytest.mark.django_db
    def test_it_reads_on_the_primary_inside_a_transaction(self, routed):
        # A read-modify-write reads what it then writes: the primary's rows.
        with transaction.atomic():
            assert ReplicaRouter().db_for_read(Memory) is None
            assert replicas.read_alias() == "default"

    def test_it_writes_and_migrates_on_the_primary_only(self, routed):
        router = ReplicaRouter()
        assert router.db_for_write(Memory) == "default"
        assert router.allow_migrate("default", "memories") is True
        assert router.allow_migrate("replica_1", "memories") is False

    def test_it_moves_a_route_to_the_primary_after_a_connection_failure_only(self, routed):
        assert replicas.route_failed(ValueError("a bug, not the replica")) is False
        assert replicas.read_alias() == routed
        assert replicas.route_failed(OperationalError("server closed the connection")) is True
        assert replicas.read_alias() == "default"
        assert replicas._replicas[routed].state == "down"


class TestWithoutReplicas:
    """The single-machine deployment: no router, nothing recorded, nothing probed."""

    def test_it_installs_no_router(self):
        assert settings.DATABASE_REPLICA_ALIASES == []
        assert settings.DATABASE_ROUTERS == []
        assert not any("Replica" in m for m in settings.MIDDLEWARE)

    @pytest.mark.django_db
    def test_it_calls_straight_through_and_records_nothing(self):
        owner = uuid.uuid4()
        assert replicas.replica_reads(owner, lambda: replicas.read_alias()) == "default"
        assert replicas.route_enter(owner) is None
        replicas.writes_seen(owner)
        assert replicas._owner_position(owner) == 0
        assert "replicas" not in health_report()["checks"]


@pytest.mark.django_db
class TestAServerThatIsNoStandby:
    def test_it_never_serves_reads_and_the_health_check_names_it(self, standby_named_default):
        owner = uuid.uuid4()
        assert replicas.choose(owner) is None
        assert replicas.replica_reads(owner, lambda: replicas.read_alias()) == "default"
        report = health_report()["checks"]["replicas"]
        assert report["replicas"] == [{"alias": "default", "state": "down", "lag_seconds": None}]
        assert report["serving"] == [] and "default (down)" in report["state"]

    def test_it_records_each_owners_write_position_for_that_owner_alone(self, standby_named_default):
        alice, bob = uuid.uuid4(), uuid.uuid4()
        replicas.writes_seen(alice)
        assert replicas._owner_position(alice) > 0
        assert replicas._owner_position(bob) == 0


class TestSettings:
    def _settings(self, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
        code = (
            "import django; django.setup(); from django.conf import settings as s; "
            "r = s.DATABASES['replica_2']; "
            "print(s.DATABASE_REPLICA_ALIASES, s.DATABASE_ROUTERS, r['PORT'],"
            " r['OPTIONS']['pool']['timeout'],"
            " r['TEST']['MIRROR'])"
        )
        return subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
            env={"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "config.settings", "HOME": str(home),
                 **env},
        )  # fmt: skip

    def test_it_makes_one_alias_per_replica_url_and_installs_the_router(self, tmp_path):
        done = self._settings(
            tmp_path,
            DEEPRECALL_VAR_DIR=str(tmp_path),
            DATABASE_REPLICA_URLS="postgresql://u@r1:5433/deeprecall,postgresql://u@r2:5434/deeprecall",
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == (
            "['replica_1', 'replica_2'] ['config.replicas.ReplicaRouter'] 5434 2 default"
        )

    def test_it_names_the_variable_of_a_bad_replica_url(self, tmp_path):
        done = self._settings(
            tmp_path, DEEPRECALL_VAR_DIR=str(tmp_path), DATABASE_REPLICA_URLS="mysql://r1/deeprecall"
        )
        assert done.returncode != 0
        assert "DATABASE_REPLICA_URLS must start with postgresql://" in done.stderr
