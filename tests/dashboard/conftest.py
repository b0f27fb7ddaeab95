"""What the dashboard tests share: memories built in code, signed-in clients, the screenshot folder."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from accounts.models import User
from memories.models import Evidence, Memory, Source
from memories.services.spaces import space_create_default

SCREENSHOT_DIR = Path(settings.VAR_DIR) / "screenshots" / "dashboard"
_screenshots_taken: list[Path] = []


def record_screenshot(path: Path) -> None:
    _screenshots_taken.append(path)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _screenshots_taken:
        terminalreporter.write_sep("-", "dashboard screenshots")
        terminalreporter.write_line(f"{len(_screenshots_taken)} screenshots in {SCREENSHOT_DIR}:")
        for path in _screenshots_taken:
            terminalreporter.write_line(f"  {path}")


@pytest.fixture
def make_memory() -> Callable[..., Memory]:
    """Build a memory (with its source and one evidence row) for `owner` in their default space."""

    def make(owner: User, content: str, *, space: Any = None, **fields: Any) -> Memory:
        space = space or space_create_default(owner=owner)
        source = Source.objects.create(
            owner=owner,
            space=space,
            origin=Source.Origin.REMEMBER,
            content=f"Note: {content}",
            content_hash=hashlib.sha256(content.encode()).hexdigest(),
        )
        fields.setdefault("kind", Memory.Kind.FACT)
        memory = Memory.objects.create(owner=owner, space=space, source=source, content=content, **fields)
        Evidence.objects.create(owner=owner, source=source, memory=memory)
        return memory

    return make


@pytest.fixture
def alice_client(alice: User) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def charlie_client(charlie: User) -> Client:
    client = Client()
    client.force_login(charlie)
    return client
