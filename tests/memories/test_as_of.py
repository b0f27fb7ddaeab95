"""The one rule of "current" and "as of T" (memories.as_of), case by case.

Every row of the table is a memory with its clocks; every column a view. The ORM form (`held_q`),
the SQL form recall runs (`held_sql`) and the Python form rendering uses (`is_current`) must give
the same answer for every cell, so no reader can drift from the others. A second copy of the rule
elsewhere in the readers is refused by the last test.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.db import connection

from memories.as_of import (
    View,
    held_q,
    held_sql,
    held_sql_params,
    is_current,
    relation_visible,
)
from memories.models import Memory, Relation, Source
from memories.services.spaces import space_create_default

ROOT = Path(__file__).resolve().parents[2]
# The world times of the stories below, and "now" (when the service is asked).
Y2020 = datetime(2020, 6, 1, tzinfo=UTC)
Y2021 = datetime(2021, 6, 1, tzinfo=UTC)
Y2022 = datetime(2022, 6, 1, tzinfo=UTC)
Y2023 = datetime(2023, 6, 1, tzinfo=UTC)
NOW = datetime(2024, 6, 1, tzinfo=UTC)
LATER = datetime(2030, 1, 1, tzinfo=UTC)

# name: the memory's clocks. recorded_at is when the service learned it (system time).
ROWS: dict[str, dict[str, datetime | None]] = {
    # "I live in Paris" said in 2020, replaced in 2022 by "I moved to Berlin".
    "paris": {"valid_from": Y2020, "valid_until": Y2022, "recorded_at": Y2020, "superseded_at": Y2022},
    "berlin": {"valid_from": Y2022, "recorded_at": Y2022},
    # An episode of 2021, learned when it happened.
    "trip": {"occurred_at": Y2021, "recorded_at": Y2021},
    # A conversation of 2021 imported today (NOW) with its real dates: known late, true back then.
    "imported": {"valid_from": Y2021, "recorded_at": NOW},
    # A plan stated in 2023 with no world time of its own: it holds from when it was said.
    "plan": {"due_at": LATER, "recorded_at": Y2023},
    # Replaced in 2023 without a stated end (a row from before valid_until was kept).
    "no_end": {"recorded_at": Y2020, "superseded_at": Y2023},
    # A fact that only starts to hold in the future ("from 2030 I will work remotely").
    "future": {"valid_from": LATER, "recorded_at": Y2023},
    # Said in 2020, ended in 2021 by its own statement, never replaced.
    "expired": {"valid_from": Y2020, "valid_until": Y2021, "recorded_at": Y2020},
}

# view -> the rows it sees.
TABLE: list[tuple[str, View, set[str]]] = [
    ("current", View(), {"berlin", "trip", "imported", "plan", "future"}),
    ("at 2019: nothing had started", View(at=datetime(2019, 1, 1, tzinfo=UTC)), set()),
    ("at mid-2020", View(at=Y2020 + timedelta(days=30)), {"paris", "no_end", "expired"}),
    (
        "at mid-2021: the imported fact holds, known late",
        View(at=Y2021 + timedelta(days=30)),
        {"paris", "trip", "imported", "no_end"},
    ),
    ("at the move", View(at=Y2022), {"berlin", "trip", "imported", "no_end"}),
    ("at now", View(at=NOW), {"berlin", "trip", "imported", "plan"}),
    (
        "at 2030: the future fact has started",
        View(at=LATER),
        {"berlin", "trip", "imported", "plan", "future"},
    ),
    (
        "as of mid-2021, as known then: the import was not known yet",
        View(at=Y2021 + timedelta(days=30), known_at=Y2021 + timedelta(days=30)),
        {"paris", "trip", "no_end"},
    ),
    (
        "as of mid-2022, as known then",
        View(at=Y2022 + timedelta(days=30), known_at=Y2022 + timedelta(days=30)),
        {"berlin", "trip", "no_end"},
    ),
]


@pytest.fixture
def rows(alice) -> dict[str, Memory]:
    space = space_create_default(owner=alice)
    source = Source.objects.create(
        owner=alice, space=space, origin=Source.Origin.REMEMBER, content="clocks", content_hash="0" * 64
    )
    made = {}
    for name, clocks in ROWS.items():
        made[name] = Memory.objects.create(
            owner=alice, space=space, source=source, kind=Memory.Kind.FACT, content=name, **clocks
        )
    return made


def _names(ids: set, rows: dict[str, Memory]) -> set[str]:
    return {name for name, memory in rows.items() if memory.id in ids}


def _sql_ids(view: View, owner_id) -> set:
    condition = held_sql(view, alias="m")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.id FROM memories_memory m WHERE m.owner_id = %(owner)s AND {condition}",  # noqa: S608
            {"owner": owner_id, **held_sql_params(view, now=NOW)},
        )
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.parametrize(("case", "view", "expected"), TABLE, ids=[case for case, _, _ in TABLE])
def test_it_answers_each_clock_case_the_same_in_the_orm_in_sql_and_in_python(
    rows, alice, case, view, expected
):
    by_orm = set(
        Memory.objects.filter(owner=alice).filter(held_q(view, now=NOW)).values_list("id", flat=True)
    )
    assert _names(by_orm, rows) == expected
    assert _names(_sql_ids(view, alice.id), rows) == expected
    if view == View():
        assert {name for name, memory in rows.items() if is_current(memory, NOW)} == expected


def test_it_refuses_a_system_time_without_a_world_time():
    with pytest.raises(ValueError, match="known_at needs at"):
        View(known_at=NOW)


def test_it_starts_a_relation_without_a_stated_time_when_it_was_recorded(alice):
    from memories.models import Entity

    space = space_create_default(owner=alice)
    ana = Entity.objects.create(owner=alice, space=space, name="Ana", normalized_name="ana", type="Person")
    acme = Entity.objects.create(
        owner=alice, space=space, name="Acme", normalized_name="acme", type="Concept"
    )
    relation = Relation.objects.create(
        owner=alice, space=space, subject=ana, object=acme, type="works_at", recorded_at=Y2022
    )
    held = Relation.objects.filter(owner=alice)
    assert not held.filter(relation_visible(View(at=Y2021))).exists()
    assert held.filter(relation_visible(View(at=Y2023))).get() == relation
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM memories_relation r WHERE r.owner_id = %(owner)s AND "  # noqa: S608
            f"{held_sql(View(at=Y2021), alias='r', with_occurred=False)}",
            {"owner": alice.id, **held_sql_params(View(at=Y2021), now=NOW)},
        )
        assert cursor.fetchone()[0] == 0


# Readers compare clocks only through memories.as_of. The writers of the pipeline and the worker
# (which rows a new fact competes with) and the model's index condition are not readers.
CLOCK_COMPARISON = re.compile(
    r"(superseded_at|valid_until|valid_from|recorded_at)__(isnull|lt|lte|gt|gte)\b"
    r"|\b(superseded_at|valid_until|valid_from)\s+(IS\s+(NOT\s+)?NULL|[<>]=?)",
)
NOT_READERS = (
    "memories/as_of.py",
    # The open query's published example SQL over the documented views (what an agent could write
    # itself, e.g. "what changed since T": a change log, not a reading as of a time).
    "memories/open_query/saved.py",
    "memories/pipeline/",
    "memories/worker/",
    "memories/models.py",
    "memories/migrations/",
)


def test_it_keeps_every_clock_comparison_of_the_readers_in_one_module():
    offenders = []
    for path in sorted((ROOT / "memories").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(NOT_READERS):
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if CLOCK_COMPARISON.search(line):
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert offenders == []


# What an agent may be shown, and what the update engine may judge, is not a forgotten memory: the
# rule is `active_q` / `active_sql` of memories.as_of (issue 40), never a status filter of
# a reader's own. A status the person chose to list (the dashboard's and REST's views of forgotten
# memories) is a parameter, not this rule.
ACTIVE_FILTER = re.compile(r"status=Memory\.Status\.ACTIVE\b|status\s*=\s*[\"']active[\"']")


def test_it_keeps_the_rule_of_what_is_forgotten_in_one_module():
    offenders = []
    for path in sorted((ROOT / "memories").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(("memories/as_of.py", "memories/migrations/")):
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if ACTIVE_FILTER.search(line):
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert offenders == []
