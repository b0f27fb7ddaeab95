from __future__ import annotations

import pytest
from django.conf import global_settings

from accounts.models import User
from tests.conftest import PASSWORD


@pytest.fixture
def browser_user(alice: User, settings) -> User:
    """Alice with a password the live server (default hashers, no MD5) can check."""
    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS
    alice.set_password(PASSWORD)
    alice.save(update_fields=["password"])
    return alice
