"""GET /healthz with the real parts: database, broker, a real worker, the model."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memories import embeddings


@pytest.fixture
def model_loaded() -> None:
    embeddings.get_model()


@pytest.mark.django_db(transaction=True)
class TestHealth:
    def test_it_is_ready_when_every_part_is(self, client, celery_worker, model_loaded):
        response = client.get(reverse("healthz"))
        body = response.json()
        assert response.status_code == 200, body
        assert body["ready"] is True
        assert {name: check["ready"] for name, check in body["checks"].items()} == {
            "database": True,
            "broker": True,
            "worker": True,
            "embeddings": True,
        }
        assert body["checks"]["worker"]["workers"] == 1

    def test_it_is_not_ready_without_a_worker(self, client, no_worker_broker, model_loaded):
        response = client.get(reverse("healthz"))
        body = response.json()
        assert response.status_code == 503
        assert body["ready"] is False
        assert body["checks"]["worker"] == {"ready": False, "state": "no worker answered"}
        assert body["checks"]["database"]["ready"] is True

    def test_it_does_not_leak_database_details(self, client, settings, no_worker_broker, model_loaded):
        from django.db import connection

        def reset() -> None:
            connection.close()
            if hasattr(connection, "close_pool"):
                connection.close_pool()  # the pool holds connections to the old database

        reset()
        original = dict(connection.settings_dict)
        connection.settings_dict["NAME"] = "no_such_database_hunter2"
        try:
            response = client.get(reverse("healthz"))
        finally:
            reset()
            connection.settings_dict.clear()
            connection.settings_dict.update(original)
        assert response.status_code == 503
        text = response.content.decode()
        assert response.json()["checks"]["database"] == {
            "ready": False,
            "state": "unreachable (OperationalError)",
        }
        assert "hunter2" not in text and "/" not in text  # no names, hosts or paths
