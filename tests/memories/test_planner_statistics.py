"""The planner knows a space belongs to one owner (migration 0021's extended statistics).

Recall filters on owner and space together. Estimated as independent columns, the two filters
made the planner expect a fraction of a space's rows and sort the whole space exactly instead of
walking the vector index; with the dependency recorded, its estimate is the space's size.
"""

from __future__ import annotations

import json

import pytest
from django.db import connection

from accounts.models import User
from memories.models import Memory, Space
from memories.services.spaces import space_create_default

pytestmark = pytest.mark.django_db


def _fill(owner: User, count: int) -> Space:
    space = space_create_default(owner=owner)
    Memory.objects.bulk_create(
        Memory(owner=owner, space=space, content=f"note {owner.email} {i}", kind="fact") for i in range(count)
    )
    return space


def _estimated_rows(owner: User, space: Space) -> float:
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN (FORMAT JSON) SELECT id FROM memories_memory WHERE owner_id = %s AND space_id = %s",
            [owner.pk, space.pk],
        )
        plan = cursor.fetchone()[0]
    if isinstance(plan, str):
        plan = json.loads(plan)
    return float(plan[0]["Plan"]["Plan Rows"])


def test_the_estimate_of_a_spaces_rows_is_its_size(django_user_model):
    owners = [django_user_model.objects.create_user(email=f"stats-{i}@example.com") for i in range(4)]
    spaces = [_fill(owner, 300) for owner in owners]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    for owner, space in zip(owners, spaces, strict=True):
        # Independent columns would give 1,200 x 1/4 x 1/4 = 75 rows.
        assert _estimated_rows(owner, space) >= 240
