"""The dashboard's pages with read replicas configured (memories/dashboard/replicas.py): the
middleware settings installs with replicas, here around the real pages; the 'replica' is the test
database itself, which is no standby, so every read falls back to the primary."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import Client, override_settings

from config import replicas


@pytest.fixture
def dashboard(standby_named_default, alice) -> Iterator[Client]:
    """Alice signed in, through the middleware stack settings builds when replicas are configured."""
    middleware = [*settings.MIDDLEWARE, "memories.dashboard.replicas.ReplicaReadsMiddleware"]
    with override_settings(MIDDLEWARE=middleware):
        client = Client()
        client.force_login(alice)
        yield client


@pytest.mark.django_db
class TestTheDashboardsPages:
    def test_it_renders_a_page_on_the_primary_when_no_replica_may_serve_it(
        self, dashboard, alice, make_memory
    ):
        make_memory(alice, "The boiler is serviced every October.")
        response = dashboard.get("/memories/")
        assert response.status_code == 200
        assert b"The boiler is serviced every October." in response.content
        # A page read records nothing: only writes (and reads of one's own writes) move the position.
        assert replicas._owner_position(alice.pk) == 0

    def test_it_records_a_signed_in_persons_write_for_them_alone(self, dashboard, alice, bob):
        from memories.services.spaces import space_create_default

        space = space_create_default(owner=alice)
        response = dashboard.post(
            "/memories/new/", {"content": "Pay the cleaner on Fridays.", "space": str(space.pk)}
        )
        assert response.status_code == 302, response.content[:500]
        assert replicas._owner_position(alice.pk) > 0
        assert replicas._owner_position(bob.pk) == 0

    def test_an_outsiders_page_shows_nothing_of_alices(self, dashboard, alice, charlie, make_memory):
        make_memory(alice, "The boiler is serviced every October.")
        dashboard.force_login(charlie)
        response = dashboard.get("/memories/")
        assert response.status_code == 200
        assert b"The boiler is serviced every October." not in response.content
