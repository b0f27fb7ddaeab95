"""The dynamic client registration budget is a sliding hour per address, not a clock-hour bucket.

A bucket keyed on the clock hour lets a client spend its budget at 09:59 and again at 10:00;
the live test in test_tenancy.py once straddled 10:00 that way and got 31 registrations.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.cache import cache
from django.test import Client

from tests.helpers import READ, WRITE

pytestmark = pytest.mark.django_db

HOUR_EDGE = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)
REGISTRATIONS_PER_HOUR = 30


def _register(client: Client, address: str = "203.0.113.7") -> int:
    response = client.post(
        "/o/register/",
        {
            "client_name": "Registered Agent",
            "redirect_uris": ["http://127.0.0.1:9999/callback"],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "scope": f"{READ} {WRITE}",
        },
        content_type="application/json",
        REMOTE_ADDR=address,
    )
    return response.status_code


@pytest.fixture(autouse=True)
def _fresh_budget(settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "register": f"{REGISTRATIONS_PER_HOUR}/h"}
    cache.clear()
    yield
    cache.clear()


def test_the_budget_does_not_refill_when_the_clock_hour_turns():
    client = Client()
    with time_machine.travel(HOUR_EDGE - timedelta(seconds=1), tick=False):
        before = [_register(client) for _ in range(REGISTRATIONS_PER_HOUR - 1)]
    with time_machine.travel(HOUR_EDGE + timedelta(seconds=1), tick=False):
        after = [_register(client) for _ in range(2)]
    assert before + after == [201] * REGISTRATIONS_PER_HOUR + [429]


def test_the_budget_comes_back_an_hour_after_the_registrations_and_stays_per_address():
    client = Client()
    with time_machine.travel(HOUR_EDGE, tick=False):
        spent = [_register(client) for _ in range(REGISTRATIONS_PER_HOUR + 1)]
        other_address = _register(client, address="198.51.100.9")
        refused = client.post("/o/register/", {}, content_type="application/json", REMOTE_ADDR="203.0.113.7")
    assert spent == [201] * REGISTRATIONS_PER_HOUR + [429]
    assert other_address == 201
    assert refused.status_code == 429
    assert 3500 <= int(refused["Retry-After"]) <= 3600
    with time_machine.travel(HOUR_EDGE + timedelta(hours=1, seconds=1), tick=False):
        assert _register(client) == 201
